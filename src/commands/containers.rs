//! `tfimg ps`, `logs`, `exec`, `stop`, `rm`: the containers tfimg started (those with an
//! `io.tfimg.spec` label), named by their names or, for a serving container, by its model's
//! (`app::containers`); other containers are refused, never touched.

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::app::{containers, gpu_use};
use crate::cli::{ExecArgs, LogsArgs, NamesArgs, PsArgs, RemoveArgs};
use crate::host::Host;
use crate::output::exit::EXIT_BAD_INPUT;
use crate::spec::resolved::SERVING_PORT_NAME;

pub fn ps(args: &PsArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        let team = args.team.as_deref();
        if args.watch {
            let show = |view: &_| crate::output::gpus::print_watched(view, gpu_use::WATCH_EVERY);
            gpu_use::watch(session, team, show).await?;
        }
        if args.gpus {
            let view = gpu_use::view(session, team).await?;
            crate::output::gpus::print_view(&view, args.json)?;
            return Ok(ExitCode::SUCCESS);
        }
        let (entries, hidden) = containers::ps(session, team, args.show_tokens).await?;
        if args.json {
            crate::output::print_json(&entries)?;
            return Ok(ExitCode::SUCCESS);
        }
        let rows: Vec<Vec<String>> = entries
            .iter()
            .map(|entry| {
                let address = [
                    "jupyter",
                    "ssh",
                    SERVING_PORT_NAME,
                    "tensorboard",
                    "gateway",
                ]
                .iter()
                .find_map(|service| entry.urls.get(*service).cloned())
                .unwrap_or_else(|| "-".to_string());
                let address = match entry.tunnel {
                    Some("closed") => format!("closed: tfimg forward {}", entry.name),
                    _ => address,
                };
                vec![
                    entry.name.clone(),
                    entry.spec.clone(),
                    entry.status.clone(),
                    entry.gpus.clone(),
                    address,
                ]
            })
            .collect();
        crate::output::print_table(&["NAME", "SPEC", "STATUS", "GPUS", "URL"], &rows)?;
        if hidden {
            crate::output::note(
                "Jupyter tokens are hidden; `tfimg ps --show-tokens` prints the full URLs",
            );
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn logs(args: &LogsArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        containers::logs(session, &args.name, args.follow, args.tail.as_deref()).await?;
        Ok(ExitCode::SUCCESS)
    })
}

pub fn exec(args: &ExecArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        let code = containers::exec(session, &args.name, &args.command).await?;
        Ok(ExitCode::from(
            u8::try_from(code.clamp(0, 255)).unwrap_or(1),
        ))
    })
}

pub fn stop(args: &NamesArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        let mut failed = false;
        for name in &args.names {
            failed |= !said(containers::stop(session, name).await);
        }
        Ok(ended(failed))
    })
}

pub fn remove(
    args: &RemoveArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        let mut failed = false;
        for name in &args.names {
            failed |= !said(containers::remove(session, name, args.force).await);
        }
        Ok(ended(failed))
    })
}

/// What `stop` or `rm` did to one named container, said at once: its name, or its error
/// (the others still run); whether it went well.
fn said(outcome: anyhow::Result<String>) -> bool {
    match outcome {
        Ok(name) => {
            outln!("{name}");
            true
        }
        Err(error) => {
            crate::output::exit::report(&error);
            false
        }
    }
}

/// Exit 1 when any named container failed.
fn ended(failed: bool) -> ExitCode {
    match failed {
        true => ExitCode::from(EXIT_BAD_INPUT),
        false => ExitCode::SUCCESS,
    }
}
