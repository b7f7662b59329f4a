//! `tfimg build SPEC`: the spec's image, up to date or built, verified and tagged (the
//! story is `app::build`); prints the image reference, or the JSON result.

use std::process::ExitCode;

use serde_json::json;

use crate::app::build::{self, build_spec, BuildOptions, Built};
use crate::app::settings::Settings;
use crate::cli::BuildArgs;
use crate::host::Host;
use crate::output::progress::{Report, Reporter};

pub fn run(args: &BuildArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let resolved = crate::app::catalog::resolve(host, &super::catalog(settings, host), &args.spec)?;
    let network = settings.network(&args.network.choices(), host)?;
    build::check_tags(&args.tag)?;
    let reporter = Reporter::new(args.progress);
    let options = BuildOptions {
        tags: &args.tag,
        no_cache: args.no_cache,
        pull: args.pull,
        bootstrap_base: args.bootstrap_base,
        no_verify: args.no_verify,
        only_check: false,
        announce_up_to_date: true,
    };
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::reported(&engine, host, &reporter);
        let built = build_spec(session, &resolved, &network, &options)
            .await?
            .expect("a build that is not only a check always answers");
        finish(&reporter, &built);
        Ok(ExitCode::SUCCESS)
    })
}

/// The hidden `tfimg prune-superseded NAME KEY` that a build starts in the background.
pub fn prune_command(
    name: &str,
    key: &str,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        build::prune_after_builds(session, name, key).await?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Data on stdout: the image reference, or the JSON result event.
fn finish(reporter: &(impl Report + ?Sized), built: &Built) {
    let plan = &built.plan;
    if reporter.is_json() {
        reporter.result(json!({
            "image": plan.tag,
            "id": built.image_id,
            "tags": plan.all_tags(),
            "key": plan.key,
            "up_to_date": built.up_to_date,
        }));
    } else {
        reporter.clear();
        outln!("{}", plan.tag);
    }
}
