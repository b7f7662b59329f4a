//! `tfimg lock SPEC [--check] [-o FILE]`: the spec resolved once into `SPEC.lock` beside
//! its file (the story is `app::lock`), or, with `--check`, its lock compared with it.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::app::lock;
use crate::app::settings::Settings;
use crate::cli::LockArgs;
use crate::host::Host;
use crate::input::InputError;
use crate::output::progress::Reporter;
use crate::spec::ResolvedSpec;

pub fn run(args: &LockArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let resolved = crate::app::catalog::resolve_unlocked(&super::catalog(), &args.spec)?;
    let path = args.output.clone().or_else(|| lock::lock_path(&resolved));
    if args.check {
        return check(host, &resolved, path);
    }
    let Some(path) = path else {
        return Err(no_file(&resolved).into());
    };
    let network = settings.network(&args.network.choices(), host)?;
    let reporter = Reporter::new(args.progress);
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let shared = match args.fresh {
            true => None,
            false => lock::shared_lock(host, &resolved, &path),
        };
        let made = lock::resolve(
            &engine,
            host,
            &resolved,
            &network,
            shared.as_ref(),
            &reporter,
        )
        .await?;
        lock::write(host, &path, &made)?;
        reporter.status(&format!(
            "locked `{}` in {:.0} s: {} apt packages, {} pip distributions",
            resolved.name,
            reporter.elapsed().as_secs_f64(),
            made.apt.system.len() + made.apt.variant.len(),
            made.pip
                .in_order()
                .iter()
                .map(|(_, group)| group.len())
                .sum::<usize>()
        ));
        reporter.clear();
        println!("{}", path.display());
        Ok(ExitCode::SUCCESS)
    })
}

/// `--check`: the lock (the file, or a built-in's embedded one) against the spec.
fn check(
    host: &impl Host,
    resolved: &ResolvedSpec,
    path: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let locked = match &path {
        Some(path) => lock::read(host, path, &resolved.name)?.ok_or_else(|| {
            InputError::new(
                format!(
                    "`{}` has no lock: `{}` does not exist",
                    resolved.name,
                    path.display()
                ),
                format!("make it with `tfimg lock {}`", resolved.name),
            )
        })?,
        None => match lock::builtin(&resolved.name) {
            Some(locked) => locked?,
            None => return Err(no_file(resolved).into()),
        },
    };
    if let Some(error) = lock::disagreement(resolved, &locked) {
        return Err(error.into());
    }
    eprintln!(
        "lock up to date: `{}` fits spec `{}`",
        locked.display, resolved.name
    );
    Ok(ExitCode::SUCCESS)
}

/// A built-in has no file to put a lock beside.
fn no_file(resolved: &ResolvedSpec) -> InputError {
    let name = &resolved.name;
    InputError::new(
        format!("`{name}` is a built-in spec: it has no file to put a lock beside"),
        format!(
            "to lock your own copy, write `images/{name}.yaml` with `extends: builtin:{name}` and run `tfimg lock {name}`; or give the lock's path with `-o FILE`"
        ),
    )
}
