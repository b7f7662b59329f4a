//! `tfimg save TARGET... -o FILE` and `tfimg load FILE [-o DIR] [--force]`: each target
//! taken as a spec or an image, the use cases of `app::bundle` called, and what the bundle
//! holds (or what was loaded) printed on stdout as a table; progress and times on stderr.

use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use crate::app::bundle::{self, LoadOptions, SaveOptions};
use crate::app::settings::Settings;
use crate::bundle::text;
use crate::cli::{LoadArgs, SaveArgs};
use crate::host::Host;
use crate::output::progress::{Report, Reporter};

pub fn save(args: &SaveArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let catalog = super::catalog(settings, host);
    let network = settings.network(&args.network.choices(), host)?;
    let targets = bundle::save_targets(host, &catalog, &args.targets)?;
    bundle::check_output(host, &args.output)?;
    let reporter = Reporter::new(args.progress);
    let options = SaveOptions {
        output: &args.output,
        network: &network,
        tfimg_version: env!("CARGO_PKG_VERSION"),
    };
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::reported(&engine, host, &reporter);
        let saved = bundle::save(session, &targets, &options).await?;
        let elapsed = reporter.elapsed();
        let summary = text::saved_line(&args.output, saved.bytes, &saved.manifest, elapsed);
        if reporter.is_json() {
            reporter.result(json!({
                "bundle": args.output,
                "bytes": saved.bytes,
                "manifest": saved.manifest,
            }));
            return Ok(ExitCode::SUCCESS);
        }
        reporter.clear();
        print_contents(text::saved_rows(&saved.manifest))?;
        reporter.status(&summary);
        Ok(ExitCode::SUCCESS)
    })
}

pub fn load(args: &LoadArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let reporter = Reporter::new(args.progress);
    let options = LoadOptions {
        bundle: &args.bundle,
        folder: &args.output,
        force: args.force,
    };
    let checked = bundle::check(host, &super::catalog(settings, host), &options, &reporter)?;
    let manifest = &checked.verified.manifest;
    reporter.status(&text::checked_line(
        &args.bundle,
        manifest,
        reporter.elapsed(),
    ));
    let checked_at = Instant::now();
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::reported(&engine, host, &reporter);
        let loaded = bundle::load(session, &checked, &options).await?;
        if reporter.is_json() {
            reporter.result(json!({
                "images": loaded.images,
                "written": loaded.written,
                "unchanged": loaded.unchanged,
            }));
            return Ok(ExitCode::SUCCESS);
        }
        reporter.clear();
        print_contents(text::loaded_rows(manifest, &args.output, &loaded.unchanged))?;
        for name in &checked.differing_builtins {
            reporter.notice(&text::differing_builtin_note(name, &args.bundle));
        }
        reporter.status(&format!(
            "loaded {} image(s) in {:.1} s",
            loaded.images.len(),
            checked_at.elapsed().as_secs_f64()
        ));
        Ok(ExitCode::SUCCESS)
    })
}

/// The bundle's contents as a table on stdout.
fn print_contents(rows: Vec<Vec<String>>) -> anyhow::Result<()> {
    Ok(crate::output::print_table(
        &["KIND", "NAME", "DETAIL"],
        &rows,
    )?)
}
