//! Command-line definitions (clap) and nothing else: raw flags as the user typed them.
//! Each subcommand resolves its `…Args` into options in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::engine::ArgValueCompleter;

use crate::plan::serving::flags as serving_flags;
use crate::plan::{self, gpus::GpuSelection, ports::PortRequest, RestartPolicy};

mod bundle;
pub mod complete;
mod engine;
mod examples;
mod files;
pub mod reference;
pub mod suggest;
mod sweep;
mod team;
pub use bundle::*;
pub use engine::{EngineArgs, ForwardArgs};
pub use files::*;
pub use sweep::*;
pub use team::*;

/// Reproducible TensorFlow images and containers, GPU and CPU, from declarative specs.
#[derive(Debug, Parser)]
#[command(name = "tfimg", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(flatten)]
    pub engine: EngineArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the built-in and local specs with their TensorFlow, Python, CUDA and cuDNN.
    List(ListArgs),
    /// Print a spec fully resolved (defaults, versions, pins) as YAML.
    #[command(after_help = examples::SHOW)]
    Show(ShowArgs),
    /// Print the Dockerfile a spec renders to, or write it with its context to a folder.
    Render(RenderArgs),
    /// Build a spec's image through the Docker API, verify it, and tag it.
    #[command(after_help = examples::BUILD)]
    Build(BuildArgs),
    /// Resolve a spec once and write SPEC.lock beside it (every pip distribution with its
    /// sha256, every apt package with its version), or check that the lock still fits.
    Lock(LockArgs),
    /// Base images without a registry.
    #[command(subcommand)]
    Base(BaseCommand),
    /// Start a container from a spec (built first when its image is missing or stale) or
    /// an image: GPUs, mounts, ports, Jupyter token, SSH key, the host user's uid/gid.
    #[command(after_help = examples::RUN)]
    Run(Box<RunArgs>),
    /// List tfimg's containers with their URLs and GPUs.
    #[command(after_help = examples::PS)]
    Ps(PsArgs),
    /// Print a container's output.
    #[command(after_help = examples::LOGS)]
    Logs(LogsArgs),
    /// Run a command in a running container, as its user.
    #[command(after_help = examples::EXEC)]
    Exec(ExecArgs),
    /// Stop containers (they can be started again with `docker start`).
    #[command(after_help = examples::STOP)]
    Stop(NamesArgs),
    /// Remove stopped containers (`-f` also running ones). Mounts and volumes stay.
    #[command(after_help = examples::RM)]
    Rm(RemoveArgs),
    /// Copy files out of a container (running or stopped) into a local folder: new and
    /// changed files only; nothing local is deleted.
    PullFiles(PullFilesArgs),
    /// Reach the ports of a detached container on a remote engine from this machine
    /// again: opens its ssh tunnel (or prints the open one's addresses); `--close` closes it.
    Forward(ForwardArgs),
    /// Check Docker, the NVIDIA driver and toolkit, and a spec against them, with fixes.
    #[command(after_help = examples::DOCTOR)]
    Doctor(DoctorArgs),
    /// Bring up every member of a team file (new and changed ones; unchanged stay).
    #[command(after_help = examples::UP)]
    Up(TeamArgs),
    /// Remove a team's containers (never the data on their mounts).
    #[command(after_help = examples::DOWN)]
    Down(DownArgs),
    /// A team's JupyterHub (`hub:` in its file): set a member's password.
    #[command(subcommand)]
    Hub(HubCommand),
    /// Write a team as a Compose file (secrets in env files beside it).
    Compose(ComposeArgs),
    /// Push an image to a registry (so a cluster can pull it) and print it by digest.
    Push(PushArgs),
    /// Write specs' images (and the spec files and locks) and images into one bundle, to
    /// carry to a machine without a registry.
    Save(SaveArgs),
    /// Load a bundle from `tfimg save`: every part checked against its sha256 first, then
    /// the images into Docker and the specs into `./images`.
    Load(LoadArgs),
    /// Write a team as Kubernetes manifests (Deployments, Services, Secrets, claims, and
    /// indexed Jobs with TF_CONFIG for multi-worker training).
    K8s(K8sArgs),
    /// Run a sweep file: many trials of one command over a grid, a seeded random search or
    /// a list of params, queued onto the GPUs (or CPU slots) of this host, resumable; or
    /// look at a sweep with `status`, `results`, `stop` and `report`.
    #[command(after_help = examples::SWEEP)]
    Sweep(SweepArgs),
    /// Serve a SavedModel folder (numbered versions, `MODEL_DIR/1/saved_model.pb`), or the
    /// models of a model config file, over TensorFlow Serving's REST and gRPC APIs: waits
    /// until the models answer and prints a request to try; new versions copied into the
    /// folder are served without a restart.
    #[command(after_help = examples::SERVE)]
    Serve(ServeArgs),
    /// Print the completion script for a shell (`tfimg completions bash >
    /// /etc/bash_completion.d/tfimg`; zsh: into a folder of `$fpath` as `_tfimg`).
    Completions {
        #[arg(value_enum)]
        shell: reference::Shell,
    },
    /// Print a man page: tfimg's, or a command's (`tfimg man run > tfimg-run.1`).
    Man {
        /// The command (`run`, `base bootstrap`); none: tfimg's own page.
        command: Vec<String>,
    },
    /// Internal: drop superseded builds of a spec (started by `build` in the background).
    #[command(hide = true)]
    PruneSuperseded { name: String, key: String },
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The spec to check against the host [default: gpu-jupyter].
    #[arg(add = ArgValueCompleter::new(complete::spec))]
    pub spec: Option<String>,

    /// Print JSON: one object per check with its verdict and fix.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A spec name, a spec file, or an image reference [default: gpu-jupyter].
    #[arg(add = ArgValueCompleter::new(complete::spec))]
    pub target: Option<String>,

    /// GPUs: `all`, a count (`2`), indices (`0,1`), UUIDs (`GPU-...`), or `none`
    /// [default: the GPUs no other tfimg container holds, for GPU images where the host's
    /// driver and the NVIDIA container toolkit can give them, else `none` with a note].
    /// A count takes the least-loaded free GPUs.
    #[arg(long, value_name = "GPUS", allow_hyphen_values = true, value_parser = GpuSelection::parse)]
    pub gpus: Option<GpuSelection>,

    /// Allow GPUs other tfimg containers hold (refused otherwise, naming who holds them);
    /// the container is labelled as sharing.
    #[arg(long)]
    pub share_gpus: bool,

    /// Shut down Jupyter kernels that ran nothing for this long (`1h`, `30m`), with
    /// Jupyter's own culling, so an idle notebook lets go of its GPU memory.
    #[arg(long, value_name = "DURATION", value_parser = |text: &str| plan::parse_idle(text, "--idle-kernels"))]
    pub idle_kernels: Option<u64>,

    /// Stop the container when nobody used it for this long (`12h`): no Jupyter kernel or
    /// terminal, no SSH or exec session, no process left running, no GPU in use.
    #[arg(long, value_name = "DURATION", value_parser = |text: &str| plan::parse_idle(text, "--idle-containers"))]
    pub idle_containers: Option<u64>,

    /// How GPUs reach the container: `devices` (Docker's nvidia driver), `cdi`, or
    /// `runtime` (hosts that only register the nvidia runtime).
    #[arg(long, value_enum, default_value = "auto")]
    pub gpu_mode: GpuModeArg,

    /// Mount a host folder: `SRC[:DST][:ro]`; DST defaults to `<workdir>/<name of SRC>`, a
    /// missing SRC folder is created.
    #[arg(long = "mount", short = 'm', value_name = "SRC[:DST][:ro]")]
    pub mounts: Vec<String>,

    #[command(flatten)]
    pub files: FilesArgs,

    /// Publish a container port: `CONTAINER` or `HOST:CONTAINER` (on 127.0.0.1).
    #[arg(
        short = 'p',
        long = "publish",
        value_name = "[HOST:]CONTAINER",
        allow_hyphen_values = true,
        value_parser = PortRequest::parse
    )]
    pub ports: Vec<PortRequest>,

    /// Bind published ports on every interface (0.0.0.0) instead of 127.0.0.1.
    #[arg(long)]
    pub public: bool,

    /// Run in the background and print how to reach the service.
    #[arg(short, long)]
    pub detach: bool,

    /// The container's name [default: <spec>-<6 hex>].
    #[arg(long)]
    pub name: Option<String>,

    /// Set an environment variable (`KEY=value`).
    #[arg(short, long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,

    /// Memory limit (`16g`).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = |text: &str| plan::parse_size(text, "--memory"))]
    pub memory: Option<i64>,

    /// CPU limit (`4`, `1.5`).
    #[arg(long, value_name = "CPUS", allow_hyphen_values = true, value_parser = |text: &str| plan::parse_cpus(text, "--cpus"))]
    pub cpus: Option<i64>,

    /// Size of /dev/shm, used by tf.data and multi-worker loaders.
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "2g",
        allow_hyphen_values = true,
        value_parser = |text: &str| plan::parse_size(text, "--shm-size")
    )]
    pub shm_size: i64,

    /// Restart policy: `no`, `always`, `unless-stopped`, `on-failure[:N]`.
    #[arg(long, value_name = "POLICY", value_parser = RestartPolicy::parse)]
    pub restart: Option<RestartPolicy>,

    /// The public key an SSH image admits [default: ~/.ssh/id_ed25519.pub, ~/.ssh/id_rsa.pub,
    /// else a key pair tfimg makes in its data folder].
    #[arg(long, value_name = "PATH")]
    pub ssh_key: Option<PathBuf>,

    /// Do not wait for Jupyter or SSH to answer before printing.
    #[arg(long)]
    pub no_wait: bool,

    /// Never build: fail when the spec's image is missing.
    #[arg(long)]
    pub no_build: bool,

    /// Create the container but do not start it (prints its name).
    #[arg(long)]
    pub no_start: bool,

    /// Keep a foreground container after it exits (it is removed by default).
    #[arg(long)]
    pub keep: bool,

    /// `root` runs the container as root instead of the host user (an explicit opt-out).
    #[arg(long, value_name = "root")]
    pub user: Option<String>,

    /// Run as this uid instead of the invoking user's (with --gid).
    #[arg(long, allow_negative_numbers = true, value_parser = container_id)]
    pub uid: Option<u32>,

    /// Run as this gid instead of the invoking user's.
    #[arg(long, allow_negative_numbers = true, value_parser = container_id)]
    pub gid: Option<u32>,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,

    #[command(flatten)]
    pub network: NetworkArgs,

    /// The command to run instead of the image's service.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The model's folder: numbered SavedModel versions (`1/`, `2/`, ...), mounted
    /// read-only at `/models/NAME`.
    #[arg(required_unless_present = "model_config", value_hint = clap::ValueHint::DirPath)]
    pub model_dir: Option<String>,

    /// Serve the models of a TensorFlow Serving model config file instead (its
    /// `model_config_list`: names, absolute `base_path`s mounted read-only, version
    /// policies and labels); the server rereads it when it changes.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["model_dir", "name"], value_hint = clap::ValueHint::FilePath)]
    pub model_config: Option<String>,

    /// The model's name in the API's URLs [default: the folder's name].
    #[arg(long)]
    pub name: Option<String>,

    /// The serving spec to run [default: the serving line that loads the model, by the
    /// TensorFlow that wrote it: `cpu-serving`/`gpu-serving` (TensorFlow 2.9) for 2.9 or
    /// older, `tf218-cpu-serving`/`tf218-gpu-serving` for 2.10 to 2.18].
    #[arg(long, value_name = "SPEC")]
    pub spec: Option<String>,

    /// GPUs: `all`, a count, indices, UUIDs, or `none` [default: the line's GPU spec
    /// (`gpu-serving`) with every GPU no other tfimg container holds where the host can
    /// give them, else its CPU spec (`cpu-serving`)].
    #[arg(long, value_name = "GPUS", allow_hyphen_values = true, value_parser = GpuSelection::parse)]
    pub gpus: Option<GpuSelection>,

    /// Allow GPUs other tfimg containers hold (refused otherwise, naming who holds them).
    #[arg(long)]
    pub share_gpus: bool,

    /// The host port of the REST API (container port 8501) [default: 8501 when free].
    #[arg(
        short = 'p',
        long = "port",
        value_name = "PORT",
        allow_hyphen_values = true
    )]
    pub port: Option<String>,

    /// The host port of the gRPC API (container port 8500) [default: 8500 when free].
    #[arg(long, value_name = "PORT", allow_hyphen_values = true)]
    pub grpc_port: Option<String>,

    /// Bind the ports on every interface (0.0.0.0) instead of 127.0.0.1.
    #[arg(long)]
    pub public: bool,

    /// Run in the background once the model answers.
    #[arg(short, long)]
    pub detach: bool,

    /// At most this many rows in one model call when concurrent requests are merged; 1
    /// runs every request alone [default: 256].
    #[arg(long, value_name = "ROWS", allow_hyphen_values = true, value_parser = serving_flags::max_batch)]
    pub max_batch: Option<u32>,

    /// Batch as TensorFlow Serving's `--enable_batching` does: requests wait up to
    /// `batch_timeout_micros` for others, a request over `max_batch_size` rows or a full
    /// queue is refused, batches are padded to `allowed_batch_sizes` [default: its
    /// defaults: 1000 rows, no wait, 10 batches queued, a thread per core].
    #[arg(long, conflicts_with = "max_batch")]
    pub enable_batching: bool,

    /// TensorFlow Serving's batching parameters file (`max_batch_size { value: 32 }`, ...),
    /// read before anything starts; implies `--enable-batching`.
    #[arg(long, value_name = "FILE", conflicts_with = "max_batch", value_hint = clap::ValueHint::FilePath)]
    pub batching_parameters: Option<String>,

    /// The server's memory limit (`16g`) [default: 8g].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = |text: &str| plan::parse_size(text, "--memory"))]
    pub memory: Option<i64>,

    /// Answer gRPC's `HandleReloadConfigRequest` (with `--model-config`), which replaces
    /// the model config in force. Its risk: anyone who reaches the gRPC port can then
    /// change the models served (an empty list unloads them all), as there is no login.
    /// Without it the call is refused (UNIMPLEMENTED).
    #[arg(long)]
    pub allow_reload_config: bool,

    /// Reread the model config file every SECONDS, as TensorFlow Serving's
    /// `--model_config_file_poll_wait_seconds`; 0 reads it once, at start [default: 1].
    #[arg(long, value_name = "SECONDS", requires = "model_config", allow_hyphen_values = true, value_parser = serving_flags::model_config_poll)]
    pub model_config_poll: Option<u32>,

    /// gRPC channel arguments for the gRPC port, as TensorFlow Serving's
    /// `--grpc_channel_arguments`: `key=value` pairs separated by commas
    /// (`grpc.max_connection_age_ms=2000`); whole numbers are given as numbers. They come
    /// after the server's own, so `grpc.max_receive_message_length` raises its 64 MiB.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true, value_parser = serving_flags::grpc_channel_arguments)]
    pub grpc_channel_arguments: Option<String>,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,

    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Args)]
pub struct PsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Only the containers of this team.
    #[arg(long, add = ArgValueCompleter::new(complete::team))]
    pub team: Option<String>,

    /// Show Jupyter URLs with their tokens (hidden by default: anyone reading the screen or
    /// a log could use them).
    #[arg(long)]
    pub show_tokens: bool,

    /// Show the GPUs instead: per GPU its memory and utilisation now and who holds it,
    /// per container its GPUs and the GPU memory its processes use.
    #[arg(long, conflicts_with = "show_tokens")]
    pub gpus: bool,

    /// With `--gpus`: show it again every 2 seconds, in place, until Ctrl-C (exit 130).
    #[arg(long, requires = "gpus", conflicts_with = "json")]
    pub watch: bool,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    #[arg(add = ArgValueCompleter::new(complete::container))]
    pub name: String,

    /// Keep printing new output until the container stops.
    #[arg(short, long)]
    pub follow: bool,

    /// Only the last N lines.
    #[arg(long, value_name = "N")]
    pub tail: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    #[arg(add = ArgValueCompleter::new(complete::container))]
    pub name: String,

    /// The command.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct NamesArgs {
    #[arg(required = true, add = ArgValueCompleter::new(complete::container))]
    pub names: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    #[arg(required = true, add = ArgValueCompleter::new(complete::container))]
    pub names: Vec<String>,

    /// Stop running containers first.
    #[arg(short, long)]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum BaseCommand {
    /// Build a Debian or Ubuntu base image from an apt mirror with debootstrap and import
    /// it under REF (for machines where Docker Hub is unreachable).
    Bootstrap(BootstrapArgs),
}

#[derive(Debug, Args)]
pub struct BootstrapArgs {
    /// The image reference to create: `debian:bullseye-slim`, `debian:bookworm`,
    /// `debian:11`, `ubuntu:22.04`, ...
    pub reference: String,

    /// The apt mirror debootstrap downloads from (default: the distribution's own).
    #[arg(long, value_name = "URL", env = crate::labels::APT_MIRROR_VARIABLE)]
    pub mirror: Option<String>,

    /// Replace an existing image of that name.
    #[arg(long)]
    pub force: bool,
}

/// Settings for restricted networks, shared by `render` and `build`. Each can also come
/// from the environment or `~/.config/tfimg/config.yaml`.
#[derive(Debug, Clone, Default, Args)]
pub struct NetworkArgs {
    /// A PEM file with extra CA certificates (a TLS-inspecting proxy's), trusted by apt,
    /// pip and curl during the build and inside the image.
    #[arg(long, value_name = "PATH", env = crate::labels::CA_CERT_VARIABLE)]
    pub ca_cert: Option<PathBuf>,

    /// pip's package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI.
    #[arg(long, value_name = "URL", env = crate::labels::PIP_INDEX_URL_VARIABLE)]
    pub pip_index_url: Option<String>,

    /// An apt mirror replacing http://deb.debian.org/debian (or Ubuntu's archive).
    #[arg(long, value_name = "URL", env = crate::labels::APT_MIRROR_VARIABLE)]
    pub apt_mirror: Option<String>,

    /// A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`).
    #[arg(long, value_name = "HOST", env = crate::labels::REGISTRY_MIRROR_VARIABLE)]
    pub registry_mirror: Option<String>,
}

impl NetworkArgs {
    /// What the flags (or their variables) chose, for `app::settings`.
    pub fn choices(&self) -> crate::render::network::NetworkChoices {
        crate::render::network::NetworkChoices {
            ca_cert: self.ca_cert.clone(),
            pip_index_url: self.pip_index_url.clone(),
            apt_mirror: self.apt_mirror.clone(),
            registry_mirror: self.registry_mirror.clone(),
        }
    }
}

/// `--progress`: output's own type (output sits below the command line).
pub use crate::output::progress::Progress;

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// A spec name (`tfimg list`) or the path of a spec file.
    #[arg(add = ArgValueCompleter::new(complete::spec))]
    pub spec: String,

    /// An extra tag for the image (`team/lab:1`), besides `tfimg/<name>:<tensorflow>`.
    #[arg(long, short, value_name = "TAG")]
    pub tag: Vec<String>,

    /// Rebuild every layer, even when an image with the same build key exists.
    #[arg(long)]
    pub no_cache: bool,

    /// Pull the base image first (from Docker Hub or `--registry-mirror`).
    #[arg(long)]
    pub pull: bool,

    /// Make a missing Debian/Ubuntu base with `tfimg base bootstrap` instead of failing.
    #[arg(long)]
    pub bootstrap_base: bool,

    /// Skip the check that TensorFlow imports and its CUDA libraries resolve.
    #[arg(long)]
    pub no_verify: bool,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,

    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Args)]
pub struct LockArgs {
    /// A spec name (`tfimg list`) or the path of a spec file.
    #[arg(add = ArgValueCompleter::new(complete::spec))]
    pub spec: String,

    /// Only compare the spec with its lock: exit 0 when they agree, 1 naming each
    /// difference. Needs no Docker.
    #[arg(long)]
    pub check: bool,

    /// Write (or, with --check, read) the lock here instead of beside the spec file; a
    /// built-in spec has no file, so locking one needs it.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,

    /// Resolve every layer anew, rather than taking the layers up to TensorFlow's from a
    /// lock beside it (or a built-in's) that was made from the same inputs.
    #[arg(long, conflicts_with = "check")]
    pub fresh: bool,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,

    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A spec name (`tfimg list`) or the path of a spec file.
    #[arg(add = ArgValueCompleter::new(complete::spec))]
    pub spec: String,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// A spec name (`tfimg list`) or the path of a spec file.
    #[arg(add = ArgValueCompleter::new(complete::spec))]
    pub spec: String,

    /// Write the Dockerfile and every context file into this folder instead of printing.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub network: NetworkArgs,
}

/// The largest uid or gid a container may run as. Above it ids are negative to the kernel's
/// signed interfaces, and 4294967295 is `(uid_t)-1`, which setuid and setpriv read as "leave
/// unchanged": the process would keep root with every capability.
pub const MAX_CONTAINER_ID: u32 = i32::MAX as u32;

/// `--uid`/`--gid`: a number from 0 to [`MAX_CONTAINER_ID`].
/// The refusal of tfimg's own parser behind clap's error for a flag's value (`--gpus -1`,
/// `--memory lots`), when that is what clap stopped at.
pub fn refused_value(error: &clap::Error) -> Option<crate::input::InputError> {
    let source = std::error::Error::source(error)?;
    let input = source.downcast_ref::<crate::input::InputError>()?;
    Some(crate::input::InputError::new(
        input.message.clone(),
        input.hint.clone(),
    ))
}

fn container_id(text: &str) -> Result<u32, String> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!("`{}` is not a number", text.escape_debug()));
    }
    match text.parse::<u32>() {
        Ok(id) if id <= MAX_CONTAINER_ID => Ok(id),
        _ => Err(format!(
            "{text} is not in 0..={MAX_CONTAINER_ID} (larger ids are not valid in a container; 4294967295 would leave it running as root)"
        )),
    }
}

/// `--gpu-mode`, as clap reads it (the core's `GpuMode` knows nothing of clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GpuModeArg {
    /// CDI where the daemon supports it, else the `nvidia` device driver.
    Auto,
    /// A DeviceRequest for Docker's `nvidia` driver (the NVIDIA container toolkit's hook).
    Devices,
    /// A DeviceRequest for CDI devices (`nvidia.com/gpu=0`), Docker API 1.44 and later.
    Cdi,
    /// The `nvidia` runtime plus NVIDIA_VISIBLE_DEVICES, for hosts that only register it.
    Runtime,
}

impl From<GpuModeArg> for crate::plan::gpus::GpuMode {
    fn from(mode: GpuModeArg) -> Self {
        use crate::plan::gpus::GpuMode;
        match mode {
            GpuModeArg::Auto => GpuMode::Auto,
            GpuModeArg::Devices => GpuMode::Devices,
            GpuModeArg::Cdi => GpuMode::Cdi,
            GpuModeArg::Runtime => GpuMode::Runtime,
        }
    }
}

#[cfg(test)]
mod tests;
