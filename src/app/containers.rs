//! The tfimg container a command names (`logs`, `exec`, `stop`, `rm`, `pull-files`,
//! `forward`): the container of that name, or else the one serving the model of that name
//! (`tfimg serve --name fraud` names the model `fraud` and its container
//! `serve-fraud-<hash>`; a user who named the model types the model's name). Only
//! containers tfimg started (an `io.tfimg.spec` label) are ever found; others are refused.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers, Daemon, Tunnels};
use crate::engine::{ContainerFacts, OutputChunk};
use crate::host::prelude::{FileWrites, Files, State};
use crate::input::InputError;
use crate::labels;
use crate::plan;
use crate::plan::tunnels::Forward;

pub mod find;

pub use find::find;

/// A container as `tfimg ps` shows it (its `--json` too).
#[derive(Debug, Serialize)]
pub struct PsEntry {
    pub name: String,
    pub id: String,
    pub spec: String,
    pub service: String,
    pub state: String,
    pub status: String,
    pub gpus: String,
    pub ports: String,
    pub urls: BTreeMap<String, String>,
    pub team: Option<String>,
    pub member: Option<String>,
    /// On a remote engine: whether the tunnel to its ports is `open` or `closed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tunnel: Option<&'static str>,
}

/// `tfimg ps`: tfimg's containers (a team's with `team`), by name, with the tunnels of
/// containers gone tidied away first. Jupyter URLs carry their token only with
/// `show_tokens` (it lives in the container's environment, not a label); the flag says
/// whether a token was left out.
pub async fn ps(
    session: Session<
        '_,
        impl Containers + Tunnels + ContainerIo + Daemon,
        impl State + Files + FileWrites,
    >,
    team: Option<&str>,
    show_tokens: bool,
) -> anyhow::Result<(Vec<PsEntry>, bool)> {
    let Session { engine, .. } = session;
    let label = match team {
        Some(team) => labels::team_filter(team),
        None => labels::SPEC.to_string(),
    };
    let mut containers = engine.containers_with_label(&label).await?;
    containers.sort_by(|a, b| a.name.cmp(&b.name));
    let mut entries = Vec::new();
    crate::app::tunnels::TunnelStore::of(session).tidy().await?;
    let gateways = running_gateways(&containers);
    for mut container in containers {
        drop_dead_gateway_urls(&mut container, &gateways);
        if let Some(seconds) = stopped_idle(engine, &container).await {
            container.status = idle_status(&container.status, seconds);
        }
        let tunnel = tunnel_of(session, &container);
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
        if !show_tokens {
            hidden = true;
            continue;
        }
        let facts = engine.container(&entry.name).await?;
        if let Some(token) = facts.and_then(|facts| labels::jupyter_token(&facts.env)) {
            entry
                .urls
                .insert("jupyter".to_string(), plan::with_token(&url, &token));
        }
    }
    Ok((entries, hidden))
}

/// The host ports each team's running gateway publishes, by team.
fn running_gateways(containers: &[ContainerFacts]) -> BTreeMap<String, Vec<u16>> {
    containers
        .iter()
        .filter(|container| container.state == "running")
        .filter_map(|container| {
            let team = container.labels.get(labels::GATEWAY)?;
            Some((team.clone(), published_ports(container)))
        })
        .collect()
}

fn published_ports(container: &ContainerFacts) -> Vec<u16> {
    container
        .labels
        .get(labels::PORTS)
        .map(|ports| {
            labels::decode_ports(ports)
                .iter()
                .map(|port| port.host)
                .collect()
        })
        .unwrap_or_default()
}

/// A team's addresses through its gateway (the `https://` ones of its members and of the
/// gateway itself) are shown only while that team's own gateway runs and publishes that
/// port: otherwise the port is nobody's, or another team's gateway (a second team's `up`
/// that stopped half-way once showed its member at the first team's gateway).
fn drop_dead_gateway_urls(container: &mut ContainerFacts, gateways: &BTreeMap<String, Vec<u16>>) {
    let Some(team) = container.labels.get(labels::TEAM).cloned() else {
        return;
    };
    let served = gateways.get(&team);
    container.labels.retain(|key, url| {
        if !key.starts_with(labels::URL_PREFIX) || !url.starts_with("https://") {
            return true;
        }
        url_port(url).is_some_and(|port| served.is_some_and(|ports| ports.contains(&port)))
    });
}

/// The port of `https://host:PORT/...`.
fn url_port(url: &str) -> Option<u16> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    authority.rsplit_once(':')?.1.parse().ok()
}

/// A running container's tunnel on a remote engine: `Some(Some(forwards))` while it is
/// open, `Some(None)` when it is closed; `None` on a local engine or without ports.
fn tunnel_of(
    session: Session<'_, impl Tunnels + Containers + Daemon, impl State + FileWrites + Files>,
    container: &ContainerFacts,
) -> Option<Option<Vec<Forward>>> {
    let Session { engine, .. } = session;
    let tunneled = engine.tunnels_ports()
        && container.state == "running"
        && container.labels.contains_key(labels::PORTS);
    if !tunneled {
        return None;
    }
    Some(
        crate::app::tunnels::TunnelStore::of(session)
            .live(&container.id)
            .map(|record| record.forwards),
    )
}

/// A container as `ps` shows it; its addresses with the local ends of `forwards` (a
/// tunnel's), else as it was started.
fn entry(container: ContainerFacts, forwards: Option<Vec<Forward>>) -> PsEntry {
    let label = |key: &str| container.labels.get(key).cloned();
    let urls = match forwards {
        Some(forwards) => plan::tunnels::container_endpoints(&container.labels, None, &forwards)
            .into_iter()
            .collect(),
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

/// How long nobody had used the container when its idle watch stopped it, if that is how
/// it stopped (the last line of its output says so): `ps` shows `stopped (idle 12h)`, and
/// `up` starts such a member again.
pub async fn stopped_idle(engine: &impl ContainerIo, container: &ContainerFacts) -> Option<u64> {
    let seconds = container
        .labels
        .get(labels::IDLE_CONTAINERS)?
        .parse()
        .ok()?;
    if container.state != "exited" {
        return None;
    }
    // What the container printed is its own: three lines may be any size, so only their
    // last 4 KiB are kept (the watch's line is short).
    const KEPT: usize = 4096;
    let mut tail = Vec::new();
    engine
        .stream_output(&container.id, false, Some("3"), |chunk| {
            let (OutputChunk::Stdout(bytes) | OutputChunk::Stderr(bytes)) = chunk;
            tail.extend(bytes);
            if tail.len() > KEPT {
                tail.drain(..tail.len() - KEPT);
            }
        })
        .await
        .ok()?;
    let tail = String::from_utf8_lossy(&tail);
    let last = tail.lines().rev().find(|line| !line.trim().is_empty())?;
    last.starts_with(labels::IDLE_STOPPED).then_some(seconds)
}

/// What `ps` says of a container its idle watch stopped: Docker's `Exited (0) 2 hours ago`
/// as `stopped (idle 12h) 2 hours ago`.
fn idle_status(status: &str, seconds: u64) -> String {
    let idle = humantime::format_duration(std::time::Duration::from_secs(seconds));
    let ago = status
        .strip_prefix("Exited (0)")
        .map(str::trim)
        .filter(|ago| !ago.is_empty());
    match ago {
        Some(ago) => format!("stopped (idle {idle}) {ago}"),
        None => format!("stopped (idle {idle})"),
    }
}

/// `tfimg exec`: the user to run as (the one the container runs as, so files it writes
/// keep their owner); a container that is not running is refused.
pub fn exec_user(container: &ContainerFacts) -> Result<String, InputError> {
    if container.state != "running" {
        return Err(InputError::new(
            format!("`{}` is not running ({})", container.name, container.state),
            format!("start it with `docker start {}`", container.name),
        ));
    }
    Ok(container
        .labels
        .get(labels::UID)
        .cloned()
        .unwrap_or_else(|| "0:0".to_string()))
}

/// `tfimg logs NAME`: its output on the session's UI as it comes (to the end, or, with
/// `follow`, until it stops; `tail`: only the last lines). A follow that ends because the
/// daemon went away (a restart, a crash) is an error: the container did not stop.
pub async fn logs<H: ?Sized>(
    session: Session<'_, impl Containers + ContainerIo, H>,
    name: &str,
    follow: bool,
    tail: Option<&str>,
) -> anyhow::Result<()> {
    let Session { engine, ui, .. } = session;
    let container = find(engine, name).await?;
    let shown = |chunk| ui.output(chunk);
    engine
        .stream_output(&container.id, follow, tail, shown)
        .await?;
    if follow {
        engine.container(&container.id).await?;
    }
    Ok(())
}

/// `tfimg exec NAME -- CMD...`: the command run in the running container as its user
/// (`exec_user`), its output on the session's UI; its exit code.
pub async fn exec<H: ?Sized>(
    session: Session<'_, impl Containers + ContainerIo, H>,
    name: &str,
    command: &[String],
) -> anyhow::Result<i64> {
    let Session { engine, ui, .. } = session;
    let container = find(engine, name).await?;
    let user = exec_user(&container)?;
    let shown = |chunk| ui.output(chunk);
    Ok(engine.exec(&container.id, command, &user, shown).await?)
}

/// `tfimg stop NAME`: stopped (ten seconds to end), its tunnel closed; its name.
pub async fn stop(
    session: Session<'_, impl Containers + Tunnels + Daemon, impl State + Files + FileWrites>,
    name: &str,
) -> anyhow::Result<String> {
    let Session { engine, .. } = session;
    let container = find(engine, name).await?;
    engine.stop(&container.id, 10).await?;
    crate::app::tunnels::TunnelStore::of(session)
        .close(&container.id)
        .await;
    Ok(container.name)
}

/// `tfimg rm NAME`: removed, its tunnel closed; a running one only with `force`; its
/// name.
pub async fn remove(
    session: Session<'_, impl Containers + Tunnels + Daemon, impl State + Files + FileWrites>,
    name: &str,
    force: bool,
) -> anyhow::Result<String> {
    let Session { engine, .. } = session;
    let container = find(engine, name).await?;
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
    crate::app::tunnels::TunnelStore::of(session)
        .close(&container.id)
        .await;
    Ok(container.name)
}

#[cfg(test)]
mod tests;
