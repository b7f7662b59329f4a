//! What goes wrong talking to the engine, each with the fix to print.

use tfimg_core::input::{Exit, Failure};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot reach the Docker daemon at `{endpoint}`: {reason}")]
    Unreachable { endpoint: String, reason: String },
    #[error("permission denied on the Docker socket `{endpoint}`")]
    PermissionDenied { endpoint: String },
    #[error("the Docker daemon at `{endpoint}` did not answer within {seconds} s")]
    Timeout { endpoint: String, seconds: u64 },
    #[error("unsupported DOCKER_HOST `{endpoint}`")]
    UnsupportedHost { endpoint: String },
    #[error("the Docker daemon answered with an error: {message}")]
    Daemon { message: String },
    #[error("{what} failed: {message}")]
    Failed { what: String, message: String },
    /// Through ssh: what ssh, the remote shell or the remote docker CLI said, and the fix.
    /// `origin` is empty or ` (context `NAME`)`.
    #[error("cannot reach the Docker daemon at `{endpoint}`{origin}: {cause}")]
    Ssh {
        endpoint: String,
        origin: String,
        cause: String,
        hint: String,
    },
    #[error("the container asked for GPUs, but Docker has no NVIDIA device driver: {message}")]
    GpuToolkitMissing { message: String },
    /// Docker lets several networks share a name (two `tfimg up` of one team at once made
    /// them before `up` took a lock); tfimg removes the empty extras it made and names the
    /// rest here. `hint` says how to clear them (the caller knows the team file).
    #[error("{} networks are named `{name}` ({}): {why}", ids.len(), ids.join(", "))]
    DuplicateNetworks {
        name: String,
        ids: Vec<String>,
        why: String,
        hint: String,
    },
}

impl Failure for EngineError {
    fn exit(&self) -> Exit {
        Exit::Failed
    }

    fn hint(&self) -> Option<&str> {
        Some(match self {
            EngineError::Ssh { hint, .. } | EngineError::DuplicateNetworks { hint, .. } => hint,
            EngineError::Unreachable { .. } | EngineError::Timeout { .. } => {
                "start the daemon (`sudo systemctl start docker`, or `sudo dockerd &` where there is no systemd), or point DOCKER_HOST at a running one"
            }
            EngineError::PermissionDenied { .. } => {
                "add your user to the `docker` group (`sudo usermod -aG docker $USER`, then log in again), or run with sudo"
            }
            EngineError::UnsupportedHost { .. } => {
                "use `unix:///path/to/docker.sock`, `tcp://host:2375` or `ssh://user@host`"
            }
            EngineError::GpuToolkitMissing { .. } => {
                "install the NVIDIA Container Toolkit (`sudo apt-get install nvidia-container-toolkit` from NVIDIA's repository, see https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html), then `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker; `tfimg doctor` checks the result. Without GPUs: drop `--gpus`"
            }
            EngineError::Daemon { .. } | EngineError::Failed { .. } => return None,
        })
    }
}
