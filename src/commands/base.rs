//! `tfimg base bootstrap REF`: a registry-free base image, debootstrapped from an apt
//! mirror and imported (the story is `app::base`).

use std::process::ExitCode;

use crate::app::base::{bootstrap, short_id};
use crate::app::settings::Settings;
use crate::cli::{BootstrapArgs, Progress};
use crate::engine::prelude::*;
use crate::host::Host;
use crate::output::progress::Reporter;
use crate::plan::base::BootstrapTarget;

pub fn run(
    args: &BootstrapArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let target = BootstrapTarget::parse(&args.reference)?;
    let config = settings.config(host)?;
    let mirror = args
        .mirror
        .clone()
        .or(config.apt_mirror)
        .unwrap_or_else(|| target.default_mirror.to_string());
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        if let Some(existing) = engine.image(&target.reference).await? {
            if !args.force {
                eprintln!(
                    "`{}` already exists ({}); `--force` replaces it",
                    target.reference,
                    short_id(&existing.id)
                );
                println!("{}", target.reference);
                return Ok(ExitCode::SUCCESS);
            }
        }
        let reporter = Reporter::new(Progress::Auto);
        let id = bootstrap(&engine, &target, &mirror, &reporter).await?;
        reporter.clear();
        eprintln!(
            "bootstrapped `{}` ({}) in {:.0} s",
            target.reference,
            short_id(&id),
            reporter.elapsed().as_secs_f64()
        );
        println!("{}", target.reference);
        Ok(ExitCode::SUCCESS)
    })
}
