//! `tfimg ps`, `logs`, `exec`, `stop`, `rm`: the containers tfimg started (those with an
//! `io.tfimg.spec` label), named by their names or, for a serving container, by its model's
//! (`app::containers`); other containers are refused, never touched.

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde::Serialize;

use crate::app::settings::Settings;
use crate::app::{containers, tunnels};
use crate::cli::{ExecArgs, LogsArgs, NamesArgs, PsArgs, RemoveArgs};
use crate::engine::prelude::*;
use crate::engine::ContainerFacts;
use crate::engine::Docker;
use crate::host::Host;
use crate::input::InputError;
use crate::labels;
use crate::output::exit::EXIT_BAD_INPUT;
use crate::plan;
use crate::plan::tunnels::Forward;
use crate::spec::resolved::SERVING_PORT_NAME;

#[derive(Debug, Serialize)]
struct PsEntry {
    name: String,
    id: String,
    spec: String,
    service: String,
    state: String,
    status: String,
    gpus: String,
    ports: String,
    urls: BTreeMap<String, String>,
    team: Option<String>,
    member: Option<String>,
    /// On a remote engine: whether the tunnel to its ports is `open` or `closed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    tunnel: Option<&'static str>,
}

pub fn ps(args: &PsArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let label = match &args.team {
            Some(team) => labels::team_filter(team),
            None => labels::SPEC.to_string(),
        };
        let mut containers = engine.containers_with_label(&label).await?;
        containers.sort_by(|a, b| a.name.cmp(&b.name));
        let mut entries = Vec::new();
        tunnels::tidy(&engine, host).await?;
        for container in containers {
            let tunnel = tunnel_of(&engine, host, &container);
            entries.push(PsEntry {
                tunnel: tunnel.as_ref().map(|forwards| match forwards {
                    Some(_) => "open",
                    None => "closed",
                }),
                ..entry(container, tunnel.flatten())
            });
        }
        let mut hidden = false;
        for entry in &mut entries {
            let Some(url) = entry.urls.get("jupyter").cloned() else {
                continue;
            };
            if !args.show_tokens {
                hidden = true;
                continue;
            }
            // Only asked for: the token lives in the container's environment, not a label.
            let facts = engine.container(&entry.name).await?;
            if let Some(token) = facts.as_ref().and_then(jupyter_token) {
                entry.urls.insert("jupyter".to_string(), plan::with_token(&url, &token));
            }
        }
        if args.json {
            crate::output::print_json(&entries)?;
        } else {
            let rows: Vec<Vec<String>> = entries
                .iter()
                .map(|entry| {
                    let address = ["jupyter", "ssh", SERVING_PORT_NAME, "tensorboard", "gateway"]
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
                eprintln!("note: Jupyter tokens are hidden; `tfimg ps --show-tokens` prints the full URLs");
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The Jupyter token a container was started with.
pub(crate) fn jupyter_token(container: &ContainerFacts) -> Option<String> {
    labels::jupyter_token(&container.env)
}

/// A running container's tunnel on a remote engine: `Some(Some(forwards))` while it is
/// open, `Some(None)` when it is closed; `None` on a local engine or without ports.
fn tunnel_of(
    engine: &Docker,
    host: &impl Host,
    container: &ContainerFacts,
) -> Option<Option<Vec<Forward>>> {
    let tunneled = engine.tunnels_ports()
        && container.state == "running"
        && container.labels.contains_key(labels::PORTS);
    if !tunneled {
        return None;
    }
    Some(tunnels::live(engine, host, &container.id).map(|record| record.forwards))
}

/// A container as `ps` shows it; its addresses with the local ends of `forwards` (a
/// tunnel's), else as it was started.
fn entry(container: ContainerFacts, forwards: Option<Vec<Forward>>) -> PsEntry {
    let label = |key: &str| container.labels.get(key).cloned();
    let urls = match forwards {
        Some(forwards) => {
            crate::plan::tunnels::container_endpoints(&container.labels, None, &forwards)
                .into_iter()
                .collect()
        }
        None => container
            .labels
            .iter()
            .filter_map(|(key, value)| {
                Some((
                    key.strip_prefix(labels::URL_PREFIX)?.to_string(),
                    value.clone(),
                ))
            })
            .collect(),
    };
    PsEntry {
        spec: label(labels::SPEC).unwrap_or_default(),
        service: label(labels::SERVICE).unwrap_or_default(),
        gpus: label(labels::GPUS).unwrap_or_else(|| "none".to_string()),
        ports: label(labels::PORTS).unwrap_or_default(),
        team: label(labels::TEAM),
        member: label(labels::MEMBER),
        urls,
        name: container.name,
        id: container.id.chars().take(12).collect(),
        state: container.state,
        status: container.status,
        tunnel: None,
    }
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
        if container.state != "running" {
            return Err(InputError::new(
                format!("`{}` is not running ({})", container.name, container.state),
                format!("start it with `docker start {}`", container.name),
            )
            .into());
        }
        // As the user the container runs as, so files it writes keep their owner.
        let user = container
            .labels
            .get(labels::UID)
            .cloned()
            .unwrap_or_else(|| "0:0".to_string());
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
        engine.stop(&container.id, 10).await?;
        tunnels::close(&engine, host, &container.id).await;
        println!("{}", container.name);
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
        if container.state == "running" && !force {
            return Err(InputError::new(
                format!("`{}` is running", container.name),
                format!(
                    "stop it first (`tfimg stop {}`), or use `tfimg rm -f`",
                    container.name
                ),
            )
            .into());
        }
        engine.remove_container(&container.id, force).await?;
        tunnels::close(&engine, host, &container.id).await;
        println!("{}", container.name);
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
