//! The facts and requests that cross the engine seam: what tfimg reads back from
//! images, containers and the daemon, and what it asks a build or a one-off container to
//! do. Plain data.

use std::collections::HashMap;

use super::EngineError;

/// What the daemon says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineVersion {
    pub version: String,
    pub api_version: String,
    /// The API version this client negotiated down to.
    pub negotiated_api: String,
    pub os: String,
    pub arch: String,
}

/// What `tfimg doctor` reads from the daemon's info.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineInfo {
    pub storage_driver: String,
    pub root_dir: String,
    pub runtimes: Vec<String>,
    pub default_runtime: String,
    pub cdi_spec_dirs: Vec<String>,
}

/// What tfimg needs to know of a local image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageFacts {
    pub id: String,
    pub tags: Vec<String>,
    pub labels: HashMap<String, String>,
    /// WORKDIR and EXPOSEd TCP ports (only filled by `image`, not by listings).
    pub working_dir: String,
    pub exposed_ports: Vec<u16>,
}

/// What tfimg reads back from a container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerFacts {
    pub id: String,
    pub name: String,
    pub image: String,
    /// `created`, `running`, `exited`, ...
    pub state: String,
    pub status: String,
    pub exit_code: Option<i64>,
    pub labels: HashMap<String, String>,
    pub device_requests: Vec<tfimg_core::plan::gpus::DeviceRequestPlan>,
    pub runtime: Option<String>,
    pub user: String,
    pub env: Vec<String>,
    /// (source, target, read-only)
    pub mounts: Vec<(String, String, bool)>,
    pub shm_size: Option<i64>,
    pub cap_drop: Vec<String>,
    pub cap_add: Vec<String>,
    pub privileged: bool,
    /// Whether Docker restarts it when it exits (filled by `container`).
    pub restarts: bool,
    /// The ports the daemon published (filled by `container`, not by listings).
    pub published: Vec<tfimg_core::plan::tunnels::Published>,
    /// When it last started and ended, in milliseconds since the Unix epoch (filled by
    /// `container`; `None` while it never did).
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    /// When the daemon created it, in seconds since the Unix epoch by the daemon's clock
    /// (listings and `container` both fill it).
    pub created_s: Option<i64>,
    /// The kernel killed it for memory (its limit, or the host's) when it last ended
    /// (filled by `container`).
    pub oom_killed: bool,
}

/// An ssh connection that carries port forwards from this machine's 127.0.0.1 to the
/// engine host's: the engine connection's own (it ends with this tfimg), or a detached
/// one that outlives tfimg and ends with the container it serves.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tunnel {
    /// Its control socket (where forwards are added and cancelled).
    pub control: std::path::PathBuf,
    /// Its ssh process.
    pub pid: u32,
    pub detached: bool,
}

/// Why a forward was not made.
#[derive(Debug)]
pub enum ForwardFailure {
    /// The local port is taken (another program bound it since it was chosen).
    LocalPortTaken(String),
    Engine(EngineError),
}

/// Why a start failed, as far as tfimg acts on it.
#[derive(Debug)]
pub enum StartFailure {
    /// "could not select device driver": the NVIDIA container toolkit is missing.
    GpuDriver(String),
    /// A host port went to someone else between planning and starting.
    PortTaken(String),
    Engine(EngineError),
}

impl StartFailure {
    /// The failure as an error to report, where the caller has nothing better to do with
    /// it (its Debug text is never for the user).
    pub fn into_engine_error(self) -> EngineError {
        match self {
            StartFailure::GpuDriver(message) => EngineError::GpuToolkitMissing { message },
            StartFailure::PortTaken(message) => EngineError::Failed {
                what: "start container".to_string(),
                message,
            },
            StartFailure::Engine(error) => error,
        }
    }
}

/// A finished one-off container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finished {
    /// `None` for an `auto_remove` one: the daemon removes it as it exits, so what it
    /// printed is all there is to go on.
    pub exit_code: Option<i64>,
    /// stdout and stderr, interleaved as the daemon stored them.
    pub output: String,
    /// stdout alone.
    pub stdout: String,
}

impl Finished {
    /// The exit code for messages (`unknown` when the daemon removed it first).
    pub fn exit_text(&self) -> String {
        self.exit_code
            .map_or_else(|| "unknown".to_string(), |code| code.to_string())
    }
}

/// What a one-off container runs.
#[derive(Debug, Clone, Default)]
pub struct OneOff {
    pub image: String,
    pub command: Vec<String>,
    /// Replaces the image's entrypoint (`command` is then its arguments, and the image's
    /// own command is not used).
    pub entrypoint: Option<Vec<String>>,
    pub env: Vec<String>,
    pub labels: HashMap<String, String>,
    /// No network at all: verification must not depend on (or reach) anything outside.
    pub network_disabled: bool,
    /// Every GPU, as `docker run --gpus all` asks for them (Docker's `nvidia` device
    /// driver). A daemon without one refuses the start: `EngineError::GpuToolkitMissing`.
    pub all_gpus: bool,
    /// The daemon removes it once it exits, whatever becomes of tfimg (a killed tfimg
    /// leaves nothing behind); tfimg still removes it when the deadline passes.
    pub auto_remove: bool,
}

/// What a build needs besides its context.
#[derive(Debug, Clone, Default)]
pub struct BuildRequest {
    /// Passed as build args. Docker's predefined proxy args (HTTP_PROXY, ...) never reach
    /// `docker history` as long as the Dockerfile does not declare them.
    pub build_args: HashMap<String, String>,
    pub no_cache: bool,
}

/// One thing the daemon reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildEvent {
    /// `Step 3/18 : RUN ...`
    Step {
        index: usize,
        total: usize,
        instruction: String,
    },
    /// A line of a step's output.
    Output(String),
    /// The daemon started a step's container (`---> Running in 0123abcd`): the one to
    /// remove when the build is interrupted.
    Container(String),
}

/// A build that the daemon refused or whose step failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildFailure {
    /// The step that failed (`Step 7/18 : RUN ...`), when one had started.
    pub step: Option<(usize, usize, String)>,
    pub message: String,
    /// The last lines the failing step printed.
    pub output: Vec<String>,
}

/// A piece of a container's output, and which stream it came on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputChunk {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
}
