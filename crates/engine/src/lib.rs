//! The container engine seam: what tfimg's use cases need from Docker, as six traits
//! (`Daemon`, `Images`, `Containers`, `Builds`, `Tunnels`, `Networks`; an `Engine` is all six), the facts and
//! requests that cross the seam (`facts`), and what goes wrong (`EngineError`).
//! `docker` is the real engine and the only module that imports bollard; `fake` is a
//! recording stand-in for the use cases' unit tests.
//!
//! The traits use `async fn`: their futures are awaited on tfimg's own runtime (never
//! spawned onto other threads), so they need no `Send` bound.
#![allow(async_fn_in_trait)]

pub mod docker;
pub mod endpoint;
mod error;
pub mod facts;
// The fakes the stories' unit tests run on: in this crate's tests, and in the binary's
// through the `fake` feature its dev-dependencies turn on.
#[cfg(any(test, feature = "fake"))]
pub mod fake;

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;

pub use docker::{Connection, Docker};
pub use error::EngineError;
pub use facts::{
    BuildEvent, BuildFailure, BuildRequest, ContainerFacts, EngineInfo, EngineVersion, Finished,
    ForwardFailure, ImageFacts, OneOff, OutputChunk, StartFailure, Tunnel,
};

use tfimg_core::plan::tunnels::Forward;
use tfimg_core::plan::LaunchPlan;

/// A build context or a root filesystem, streamed as tar chunks.
pub trait TarStream: Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {}
impl<T: Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static> TarStream for T {}

/// The daemon itself.
pub trait Daemon {
    /// Where it is reached (`unix:///var/run/docker.sock`), for messages.
    fn endpoint(&self) -> &str;
    /// Whether the daemon runs on this machine (a `unix://` socket): its GPUs and driver
    /// are this machine's.
    fn on_this_machine(&self) -> bool;
    /// Runs `program` (a program and its arguments) on the daemon's host through the
    /// engine's ssh connection; its stdout when it ran and succeeded within `deadline`.
    /// `None` on an engine not reached through ssh.
    async fn run_on_host(&self, program: &[&str], deadline: Duration) -> Option<String>;
    async fn version(&self) -> Result<EngineVersion, EngineError>;
    async fn info(&self) -> Result<EngineInfo, EngineError>;
    /// Whether GPUs can be requested as CDI devices.
    async fn cdi_supported(&self) -> bool;
    /// Whether it still answers (a daemon going away is the failure to report).
    async fn still_there(&self) -> Result<(), EngineError>;
}

pub trait Images {
    /// The image called `reference` (a tag or an id), or `None` when it is not local.
    async fn image(&self, reference: &str) -> Result<Option<ImageFacts>, EngineError>;
    /// Local images carrying `label` (`key` or `key=value`).
    async fn images_with_label(&self, label: &str) -> Result<Vec<ImageFacts>, EngineError>;
    async fn tag(&self, image: &str, reference: &str) -> Result<(), EngineError>;
    /// Removes a tag (or, by id, the image); a missing one is not an error.
    async fn remove_image(&self, reference: &str, force: bool) -> Result<(), EngineError>;
    /// The `created_by` line of every layer.
    async fn history(&self, reference: &str) -> Result<Vec<String>, EngineError>;
    async fn pull(&self, reference: &str, progress: impl FnMut(&str)) -> Result<(), EngineError>;
    /// Pushes a tag; the digest the registry gave it.
    async fn push(
        &self,
        reference: &str,
        progress: impl FnMut(&str),
    ) -> Result<String, EngineError>;
    /// Docker's image tarball of `references` (what `docker save` writes; layers the
    /// images share are in it once), handed to `sink` chunk by chunk as the daemon sends
    /// it. The sink returns `ControlFlow::Break` to stop early (its own failure).
    async fn export_images(
        &self,
        references: &[String],
        sink: impl FnMut(Bytes) -> std::ops::ControlFlow<()>,
    ) -> Result<(), EngineError>;
    /// Loads an image tarball (what `docker load` does); `progress` gets the daemon's
    /// lines (`Loaded image: ...`).
    async fn load_images(
        &self,
        tarball: impl TarStream,
        progress: impl FnMut(&str),
    ) -> Result<(), EngineError>;
    /// Imports a root filesystem tarball as `reference` (what `docker import` does).
    async fn import_rootfs(
        &self,
        reference: &str,
        changes: &[String],
        tarball: impl TarStream,
    ) -> Result<String, EngineError>;
}

pub trait Containers {
    /// Creates (does not start) the planned container; its id.
    async fn create(&self, plan: &LaunchPlan) -> Result<String, EngineError>;
    async fn start(&self, id: &str) -> Result<(), StartFailure>;
    /// The container called `name` (or with that id), or `None`.
    async fn container(&self, name: &str) -> Result<Option<ContainerFacts>, EngineError>;
    /// Every container (running or not) carrying `label` (`key` or `key=value`).
    async fn containers_with_label(&self, label: &str) -> Result<Vec<ContainerFacts>, EngineError>;
    /// Waits for the container to stop; its exit code.
    async fn wait(&self, id: &str) -> Result<i64, EngineError>;
    async fn stop(&self, id: &str, seconds: i32) -> Result<(), EngineError>;
    /// Removes it; one that is already gone is not an error.
    async fn remove_container(&self, id: &str, force: bool) -> Result<(), EngineError>;
    /// Runs a one-off container to completion (killed after `deadline`) and always removes
    /// it.
    async fn run_once(&self, spec: &OneOff, deadline: Duration) -> Result<Finished, EngineError>;
}

/// What goes into and out of containers: their output, commands run in them, files
/// copied in and out, and the volumes they mount.
pub trait ContainerIo {
    /// Output so far (not following).
    async fn output(&self, id: &str) -> Result<String, EngineError>;
    /// Hands output to `sink` until the container stops (or, with `follow` false, until
    /// the output so far is handed over).
    async fn stream_output(
        &self,
        id: &str,
        follow: bool,
        tail: Option<&str>,
        sink: impl FnMut(OutputChunk),
    ) -> Result<(), EngineError>;
    /// Runs `command` in a running container as `user`, output to `sink`; the exit code.
    async fn exec(
        &self,
        id: &str,
        command: &[String],
        user: &str,
        sink: impl FnMut(OutputChunk),
    ) -> Result<i64, EngineError>;
    /// Unpacks the tar `archive` into the folder `folder` of a container (created or
    /// running), keeping the owners and modes its entries carry (what `docker cp` does
    /// without `-a`); `Ok(false)` when the container has no folder `folder`.
    async fn upload(
        &self,
        id: &str,
        folder: &str,
        archive: impl TarStream,
    ) -> Result<bool, EngineError>;
    /// Hands `sink` a tar of `path` in a container (running or stopped; the top entry is
    /// named after the path's last part) chunk by chunk; `Ok(false)` when nothing is at
    /// `path`. The sink returns `ControlFlow::Break` to stop early.
    async fn download(
        &self,
        id: &str,
        path: &str,
        sink: impl FnMut(Bytes) -> std::ops::ControlFlow<()>,
    ) -> Result<bool, EngineError>;
    /// Whether a volume called `name` exists (Docker makes a missing one when a container
    /// that mounts it is created).
    async fn volume_exists(&self, name: &str) -> Result<bool, EngineError>;
}

pub trait Builds {
    /// Builds the context; `on_event` sees every step and output line as it arrives.
    /// `Ok(Err(failure))` is a build that ran and failed (bad input, exit 1); `Err(..)` is
    /// the engine failing (exit 2). Nothing is tagged.
    async fn build(
        &self,
        request: &BuildRequest,
        context: impl TarStream,
        on_event: impl FnMut(&BuildEvent),
    ) -> Result<Result<String, BuildFailure>, EngineError>;
}

/// Ports of containers on another host (an `ssh://` engine), carried to this machine's
/// 127.0.0.1 through ssh: the engine connection's own tunnel for a session, or a detached
/// one per container that outlives tfimg. A local engine has none.
pub trait Tunnels {
    /// Whether containers' ports are on another host and reached through tunnels.
    fn tunnels_ports(&self) -> bool;
    /// The engine's URL when it runs on another host (reached through ssh): folders of
    /// this machine cannot be mounted there.
    fn remote_endpoint(&self) -> Option<&str>
    where
        Self: Daemon,
    {
        self.tunnels_ports().then(|| self.endpoint())
    }
    /// This connection's tunnel (it ends with this tfimg); `None` on a local engine.
    fn session_tunnel(&self) -> Option<Tunnel>;
    /// A tunnel of its own that outlives tfimg and closes itself when the container `id`
    /// stops (`until_stopped`; a container that restarts keeps it until it is closed).
    async fn open_tunnel(&self, id: &str, until_stopped: bool) -> Result<Tunnel, EngineError>;
    /// Carries `forward.local` on this machine's 127.0.0.1 to `forward.remote` on the
    /// engine host's, through `tunnel`.
    async fn forward(&self, tunnel: &Tunnel, forward: &Forward) -> Result<(), ForwardFailure>;
    /// Stops carrying a forward (its local port is free again).
    async fn cancel(&self, tunnel: &Tunnel, forward: &Forward) -> Result<(), EngineError>;
    /// Ends a detached tunnel (this tfimg's or an earlier one's); one that is gone is fine.
    async fn close_tunnel(&self, tunnel: &Tunnel);
    /// Whether the tunnel's ssh process still runs.
    fn tunnel_alive(&self, tunnel: &Tunnel) -> bool;
}

/// User-defined networks, where containers find each other by name: a team's gateway and
/// the one member on each member's network.
pub trait Networks {
    /// Makes the bridge network `name` with `labels`, unless it exists.
    async fn ensure_network(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), EngineError>;
    /// Joins the container (`id` or name) to the network, created or running; one already
    /// on it stays as it is.
    async fn connect_network(&self, name: &str, container: &str) -> Result<(), EngineError>;
    /// The names of the networks carrying `label` (`key=value`).
    async fn networks_with_label(&self, label: &str) -> Result<Vec<String>, EngineError>;
    /// Removes it, first taking off the containers still on it; one that is gone is not an
    /// error.
    async fn remove_network(&self, name: &str) -> Result<(), EngineError>;
}

/// The traits, for calling an engine's methods: `use crate::prelude::*`.
pub mod prelude {
    pub use super::{Builds, ContainerIo, Containers, Daemon, Engine, Images, Networks, Tunnels};
}

/// Everything tfimg asks of a container engine.
pub trait Engine: Daemon + Images + Containers + ContainerIo + Builds + Tunnels + Networks {}

impl<T: Daemon + Images + Containers + ContainerIo + Builds + Tunnels + Networks> Engine for T {}
