//! `tfimg ps`, `logs`, `exec`, `stop`, `rm`: the containers tfimg started (those with an
//! `io.tfimg.spec` label), named by their names or, for a serving container, by its model's
//! (`app::containers`); other containers are refused, never touched.

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::app::{containers, gpu_use};
use crate::cli::{ExecArgs, LogsArgs, NamesArgs, PsArgs, RemoveArgs};
use crate::engine::prelude::*;
use crate::engine::ContainerFacts;
use crate::engine::Docker;
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

pub fn logs(args: &LogsArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let container = containers::find(&engine, &args.name).await?;
        engine
            .stream_output(
                &container.id,
                args.follow,
                args.tail.as_deref(),
                crate::output::pass_through,
            )
            .await?;
        if args.follow {
            // A follow stream also ends when the daemon goes away (a restart, a crash):
            // that is not the container stopping, and the user must hear so.
            engine.container(&container.id).await?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn exec(args: &ExecArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let container = containers::find(&engine, &args.name).await?;
        let user = containers::exec_user(&container)?;
        let code = engine
            .exec(
                &container.id,
                &args.command,
                &user,
                crate::output::pass_through,
            )
            .await?;
        Ok(ExitCode::from(
            u8::try_from(code.clamp(0, 255)).unwrap_or(1),
        ))
    })
}

pub fn stop(args: &NamesArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    for_each(settings, &args.names, |engine, container| async move {
        containers::stop(super::session(&engine, host), &container).await?;
        outln!("{}", container.name);
        Ok(())
    })
}

pub fn remove(
    args: &RemoveArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let force = args.force;
    for_each(settings, &args.names, move |engine, container| async move {
        containers::remove(super::session(&engine, host), &container, force).await?;
        outln!("{}", container.name);
        Ok(())
    })
}

/// Applies `action` to every named container; a failure on one is reported and the
/// others still run (exit 1 at the end).
fn for_each<F, Fut>(settings: &Settings, names: &[String], action: F) -> anyhow::Result<ExitCode>
where
    F: Fn(Docker, ContainerFacts) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let mut failed = false;
        for name in names {
            let outcome = match containers::find(&engine, name).await {
                Ok(container) => action(engine.clone(), container).await,
                Err(error) => Err(error),
            };
            if let Err(error) = outcome {
                failed = true;
                crate::output::exit::report(&error);
            }
        }
        Ok(if failed {
            ExitCode::from(EXIT_BAD_INPUT)
        } else {
            ExitCode::SUCCESS
        })
    })
}
