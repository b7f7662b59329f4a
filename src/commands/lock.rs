//! `tfimg lock SPEC [--check] [-o FILE]`: the spec resolved once into `SPEC.lock` beside
//! its file (the story is `app::lock`), or, with `--check`, its lock compared with it.

use std::process::ExitCode;

use crate::app::lock;
use crate::app::settings::Settings;
use crate::cli::LockArgs;
use crate::host::Host;
use crate::output::progress::{Report, Reporter};

pub fn run(args: &LockArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let resolved =
        crate::app::catalog::resolve_unlocked(host, &super::catalog(settings, host), &args.spec)?;
    if args.check {
        let locked = lock::check(host, &resolved, args.output.as_deref())?;
        let (file, spec) = (&locked.display, &resolved.name);
        errln!("lock up to date: `{file}` fits spec `{spec}`");
        return Ok(ExitCode::SUCCESS);
    }
    let path = lock::destination(&resolved, args.output.as_deref())?;
    let network = settings.network(&args.network.choices(), host)?;
    let reporter = Reporter::new(args.progress);
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::reported(&engine, host, &reporter);
        let made = lock::make(session, &resolved, &network, &path, args.fresh);
        let made = made.await?;
        reporter.status(&lock::locked_line(&resolved, &made, reporter.elapsed()));
        reporter.clear();
        outln!("{}", path.display());
        Ok(ExitCode::SUCCESS)
    })
}
