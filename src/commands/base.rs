//! `tfimg base bootstrap REF`: a registry-free base image, debootstrapped from an apt
//! mirror and imported (the story is `app::base`).

use std::process::ExitCode;

use crate::app::base::{bootstrap_unless_present, short_id, Bootstrapped};
use crate::app::settings::Settings;
use crate::cli::{BootstrapArgs, Progress};
use crate::host::Host;
use crate::output::progress::{Report, Reporter};
use crate::plan::base::BootstrapTarget;

pub fn run(
    args: &BootstrapArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let target = BootstrapTarget::parse(&args.reference)?;
    let mirror = args.mirror.clone().or(settings.config(host)?.apt_mirror);
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let reporter = Reporter::new(Progress::Auto);
        let done = bootstrap_unless_present(&engine, &target, mirror, args.force, &reporter);
        match done.await? {
            Bootstrapped::Existing(id) => errln!(
                "`{}` already exists ({}); `--force` replaces it",
                target.reference,
                short_id(&id)
            ),
            Bootstrapped::Made(id) => {
                reporter.clear();
                errln!(
                    "bootstrapped `{}` ({}) in {:.0} s",
                    target.reference,
                    short_id(&id),
                    reporter.elapsed().as_secs_f64()
                );
            }
        }
        outln!("{}", target.reference);
        Ok(ExitCode::SUCCESS)
    })
}
