//! Tunnels to containers on a remote (`ssh://`) engine, as tfimg keeps track of them. A
//! tunneled container has a record in tfimg's data folder (`tunnels/<container id>.json`,
//! readable by its owner only): the engine, the container, its tunnel (the ssh process
//! and its control socket) and its forwards. `rm`, `stop` and `down` close a detached
//! container's tunnel; `ps` shows the live local addresses; `tfimg forward NAME` opens a
//! closed one again; a record whose tunnel ended (the container stopped, the session's
//! tfimg exited) is dropped when next seen. `TunnelStore` keeps the records; `carry`,
//! `forward` and `reopen` are the stories that make tunnels.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers, Daemon, Tunnels};
use crate::engine::{ContainerFacts, ForwardFailure, Tunnel};
use crate::host::prelude::{FileWrites, Files, Ports, Secrets, State};
use crate::input::InputError;
use crate::labels;
use crate::plan::ports::PORT_ATTEMPTS;
use crate::plan::tunnels::{self as plan_tunnels, Forward};

/// One tunneled container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelRecord {
    /// The engine's URL (records of other engines are left alone).
    pub endpoint: String,
    pub container_id: String,
    pub container: String,
    pub tunnel: Tunnel,
    pub forwards: Vec<Forward>,
}

impl TunnelRecord {
    /// Ends its tunnel: a detached one is closed, a session's forwards are cancelled (the
    /// session itself is its tfimg's).
    pub async fn end(&self, engine: &impl Tunnels) {
        undo(engine, &self.tunnel, &self.forwards).await;
    }
}

/// tfimg's records of the tunnels to one engine's containers: a file per container in its
/// data folder, written for its owner only. Records of other engines are left alone.
#[derive(Clone, Copy)]
pub struct TunnelStore<'a, E: ?Sized, H: ?Sized> {
    session: Session<'a, E, H>,
}

impl<'a, E, H> TunnelStore<'a, E, H>
where
    E: Daemon + Containers + Tunnels,
    H: State + Files + FileWrites + ?Sized,
{
    /// The records of the session's engine, on its host.
    pub fn of(session: Session<'a, E, H>) -> Self {
        TunnelStore { session }
    }

    fn folder(&self) -> Result<PathBuf, InputError> {
        Ok(self.session.host.data_folder()?.join("tunnels"))
    }

    fn path(&self, container_id: &str) -> Result<PathBuf, InputError> {
        Ok(self.folder()?.join(format!("{container_id}.json")))
    }

    /// Keeps `record` (replacing the container's earlier one).
    pub fn save(&self, record: &TunnelRecord) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(record)?;
        let path = self.path(&record.container_id)?;
        self.session
            .host
            .write_private_file(&path, &json)
            .map_err(|error| {
                anyhow::anyhow!(
                    "cannot write the tunnel record `{}`: {error}",
                    path.display()
                )
            })
    }

    fn load(&self, container_id: &str) -> Option<TunnelRecord> {
        let host = self.session.host;
        let bytes = host.read_file(&self.path(container_id).ok()?).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    fn forget(&self, container_id: &str) {
        if let Ok(path) = self.path(container_id) {
            let _ = self.session.host.remove_file(&path);
        }
    }

    /// Every record of the engine's containers.
    fn all(&self) -> Vec<TunnelRecord> {
        let Session { engine, host, .. } = self.session;
        let Ok(folder) = self.folder() else {
            return Vec::new();
        };
        host.files_with_extension(&folder, "json")
            .iter()
            .filter_map(|path| serde_json::from_slice(&host.read_file(path).ok()?).ok())
            .filter(|record: &TunnelRecord| record.endpoint == engine.endpoint())
            .collect()
    }

    /// The record of container `id` while its tunnel runs; a record whose tunnel ended is
    /// dropped.
    pub fn live(&self, id: &str) -> Option<TunnelRecord> {
        let record = self.load(id)?;
        if self.session.engine.tunnel_alive(&record.tunnel) {
            return Some(record);
        }
        self.forget(id);
        None
    }

    /// Ends the tunnel of container `id` (`TunnelRecord::end`) and drops its record.
    /// Whether one ran.
    pub async fn close(&self, id: &str) -> bool {
        let engine = self.session.engine;
        let Some(record) = self.load(id) else {
            return false;
        };
        let alive = engine.tunnel_alive(&record.tunnel);
        if alive {
            record.end(engine).await;
        }
        self.forget(id);
        alive
    }

    /// Drops the records whose tunnel ended, and closes those whose container is no longer
    /// among `existing` (container ids).
    pub async fn collect_stale(&self, existing: &[String]) {
        for record in self.all() {
            if !existing.contains(&record.container_id) {
                self.close(&record.container_id).await;
            } else {
                self.live(&record.container_id);
            }
        }
    }

    /// `collect_stale` over every tfimg container of the engine (after `up` replaced
    /// some).
    pub async fn tidy(&self) -> anyhow::Result<()> {
        let engine = self.session.engine;
        if !engine.tunnels_ports() {
            return Ok(());
        }
        let ids: Vec<String> = engine
            .containers_with_label(labels::SPEC)
            .await?
            .into_iter()
            .map(|container| container.id)
            .collect();
        self.collect_stale(&ids).await;
        Ok(())
    }
}

/// Adds `wanted` to `tunnel`; a local port another program took in the meantime moves
/// to a free one (up to `PORT_ATTEMPTS` times), kept in `reserved`. The forwards made;
/// on a failure none is left (and a detached tunnel is closed).
pub async fn carry(
    session: Session<'_, impl Tunnels, impl Ports>,
    tunnel: &Tunnel,
    wanted: Vec<Forward>,
    reserved: &RefCell<BTreeSet<u16>>,
) -> anyhow::Result<Vec<Forward>> {
    let Session { engine, .. } = session;
    let mut made = Vec::new();
    for forward in wanted {
        match carry_one(session, tunnel, forward, reserved).await {
            Ok(forward) => made.push(forward),
            Err(error) => {
                undo(engine, tunnel, &made).await;
                return Err(error);
            }
        }
    }
    Ok(made)
}

async fn carry_one(
    session: Session<'_, impl Tunnels, impl Ports>,
    tunnel: &Tunnel,
    mut forward: Forward,
    reserved: &RefCell<BTreeSet<u16>>,
) -> anyhow::Result<Forward> {
    let Session { engine, host, .. } = session;
    for _ in 1..PORT_ATTEMPTS {
        match engine.forward(tunnel, &forward).await {
            Ok(()) => return Ok(forward),
            Err(ForwardFailure::LocalPortTaken(_)) => {
                let held = reserved.borrow().clone();
                let free = (0..64)
                    .filter_map(|_| host.any_free_port("127.0.0.1"))
                    .find(|port| !held.contains(port))
                    .ok_or_else(|| anyhow::anyhow!("no free local port is left"))?;
                let mut reserved = reserved.borrow_mut();
                reserved.remove(&forward.local);
                reserved.insert(free);
                forward.local = free;
            }
            Err(ForwardFailure::Engine(error)) => return Err(error.into()),
        }
    }
    match engine.forward(tunnel, &forward).await {
        Ok(()) => Ok(forward),
        Err(ForwardFailure::LocalPortTaken(message)) => Err(anyhow::anyhow!(
            "no local port for the tunnel of `{}` could be listened on: {message}",
            forward.name
        )),
        Err(ForwardFailure::Engine(error)) => Err(error.into()),
    }
}

async fn undo(engine: &impl Tunnels, tunnel: &Tunnel, made: &[Forward]) {
    if tunnel.detached {
        engine.close_tunnel(tunnel).await;
        return;
    }
    for forward in made {
        let _ = engine.cancel(tunnel, forward).await;
    }
}

/// What `tfimg forward` did to the tunnel of the container `name` (its real name).
#[derive(Debug, PartialEq, Eq)]
pub enum Forwarded {
    /// `--close`: whether a tunnel was open to close.
    Closed { name: String, was_open: bool },
    /// The tunnel open: each service and its local address.
    Open {
        name: String,
        endpoints: Vec<(String, String)>,
    },
}

/// `tfimg forward NAME [--close]`'s story: only on a remote engine; the container found,
/// its tunnel closed, or opened again (`reopen`).
pub async fn forward(
    session: Session<
        '_,
        impl Tunnels + Containers + ContainerIo + Daemon,
        impl Files + FileWrites + Ports + Secrets,
    >,
    name: &str,
    close: bool,
) -> anyhow::Result<Forwarded> {
    let Session { engine, .. } = session;
    if !engine.tunnels_ports() {
        return Err(InputError::new(
            format!("`forward` is for remote engines: the ports of `{name}` are already on this machine"),
            "`tfimg ps` shows its addresses; `tfimg forward` applies when the engine is `ssh://` (`--host`, DOCKER_HOST or a Docker context)",
        )
        .into());
    }
    let container = crate::app::containers::find::find(engine, name).await?;
    let name = container.name.clone();
    if close {
        let was_open = TunnelStore::of(session).close(&container.id).await;
        return Ok(Forwarded::Closed { name, was_open });
    }
    let endpoints = reopen(session, &container).await?;
    Ok(Forwarded::Open { name, endpoints })
}

/// `tfimg forward NAME`: a running detached container's tunnel, opened again when it
/// is closed (on the local ports it was launched with, where they are still free). What
/// to print: its Jupyter URL (with the token), ssh line and TensorBoard URL.
pub async fn reopen(
    session: Session<
        '_,
        impl Tunnels + Containers + ContainerIo + Daemon,
        impl Files + FileWrites + Ports + Secrets,
    >,
    container: &ContainerFacts,
) -> anyhow::Result<Vec<(String, String)>> {
    let Session { engine, host, .. } = session;
    let name = &container.name;
    if container.state != "running" {
        return Err(InputError::new(
            format!("`{name}` is not running ({})", container.state),
            format!("its ports are published only while it runs; `tfimg logs {name}` shows why it stopped"),
        )
        .into());
    }
    let token = labels::jupyter_token(&container.env);
    let endpoints = |forwards: &[Forward]| {
        plan_tunnels::container_endpoints(&container.labels, token.as_deref(), forwards)
    };
    let store = TunnelStore::of(session);
    if let Some(record) = store.live(&container.id) {
        return Ok(endpoints(&record.forwards));
    }
    let mut wanted = plan_tunnels::forwards_of_container(&container.labels, &container.published);
    if wanted.is_empty() {
        return Err(InputError::new(
            format!("`{name}` publishes no ports"),
            "only containers started with a service (Jupyter, SSH, TensorBoard) or `-p` have ports to forward",
        )
        .into());
    }
    let reserved = RefCell::new(BTreeSet::new());
    for forward in &mut wanted {
        if !host.port_is_free("127.0.0.1", forward.local) {
            forward.local = host
                .any_free_port("127.0.0.1")
                .ok_or_else(|| anyhow::anyhow!("no free local port is left"))?;
        }
        reserved.borrow_mut().insert(forward.local);
    }
    let tunnel = engine
        .open_tunnel(&container.id, !container.restarts)
        .await?;
    let forwards = carry(session, &tunnel, wanted, &reserved).await?;
    let record = TunnelRecord {
        endpoint: engine.endpoint().to_string(),
        container_id: container.id.clone(),
        container: name.clone(),
        tunnel,
        forwards,
    };
    if let Err(error) = store.save(&record) {
        engine.close_tunnel(&record.tunnel).await;
        return Err(error);
    }
    if let Some(ssh) = record.forwards.iter().find(|forward| forward.name == "ssh") {
        crate::app::ready::pin_ssh_host_key(session, &container.id, ssh.local).await?;
    }
    Ok(endpoints(&record.forwards))
}

#[cfg(test)]
mod tests;
