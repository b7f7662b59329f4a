//! One module per subcommand: turn its arguments into options, call the pure core, talk
//! to the engine if needed, print. Thin by design.

pub mod base;
pub mod build;
pub mod bundle;
pub mod config;
pub mod containers;
pub mod doctor;
pub mod export;
pub mod files;
pub mod forward;
pub mod list;
pub mod lock;
pub mod push;
pub mod render;
pub mod run;
pub mod serve;
pub mod show;
pub mod sweep;
pub mod team;

use std::sync::OnceLock;

use crate::cli::EngineArgs;
use crate::engine::docker::ssh::SshCommand;
use crate::engine::endpoint::docker_config::{self, DockerConfig};
use crate::engine::endpoint::{self, Endpoint, EndpointInputs};
use crate::engine::{Connection, Docker, EngineError};
use crate::labels;
use crate::spec::Catalog;

/// The specs visible from the current directory: built-ins plus `./images/*.yaml`.
/// A note, when there is one, on stderr.
pub(crate) fn say(note: Option<String>) {
    if let Some(note) = note {
        eprintln!("{note}");
    }
}

pub(crate) fn catalog() -> Catalog {
    crate::app::catalog::load()
}

/// A runtime for the commands that talk to the engine; an interrupt exits (130).
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    runtime_with(false)
}

/// A runtime for the commands that clean up what they started when interrupted: the
/// signal handlers are in place before anything is created.
pub(crate) fn runtime_handling_interrupts() -> anyhow::Result<tokio::runtime::Runtime> {
    runtime_with(true)
}

fn runtime_with(handled: bool) -> anyhow::Result<tokio::runtime::Runtime> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async { crate::host::machine::listen_for_interrupts(handled) });
    Ok(runtime)
}

/// `--host` and `--context`, as given on the command line.
static ENGINE_FLAGS: OnceLock<EngineArgs> = OnceLock::new();

/// Keeps the engine flags for `connect`; both at once is bad input, refused at once.
pub(crate) fn choose_engine(args: &EngineArgs) -> anyhow::Result<()> {
    endpoint::check_flags(args.host.as_deref(), args.context.as_deref())?;
    let _ = ENGINE_FLAGS.set(args.clone());
    Ok(())
}

/// The engine the flags, the environment and the Docker config choose, connected and
/// version-negotiated. Bad flags, variables or contexts are bad input (exit 1) before
/// anything is asked of any daemon.
pub(crate) async fn connect() -> anyhow::Result<Docker> {
    Ok(try_connect().await??)
}

/// `connect`, with the engine's failure apart from bad input: for the commands that go on
/// without a daemon (`doctor`, `compose`).
pub(crate) async fn try_connect() -> anyhow::Result<Result<Docker, EngineError>> {
    let connection = connection()?;
    Ok(Docker::open(connection).await)
}

/// The URL of the engine the flags, the environment and the Docker config choose, without
/// connecting.
pub(crate) fn engine_url() -> anyhow::Result<String> {
    Ok(connection()?.resolved.url)
}

fn connection() -> anyhow::Result<Connection> {
    let flags = ENGINE_FLAGS.get().cloned().unwrap_or_default();
    let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let (docker_host, docker_context) = (variable("DOCKER_HOST"), variable("DOCKER_CONTEXT"));
    let config = DockerConfig::from_env();
    // The config file is read only when nothing before it decides, as the docker CLI does.
    let decided = flags.host.is_some()
        || flags.context.is_some()
        || docker_host.is_some()
        || docker_context.is_some();
    let current_context = if decided {
        None
    } else {
        config.current_context()
    };
    let config_file = config.config_file().display().to_string();
    let inputs = EndpointInputs {
        host_flag: flags.host.as_deref(),
        context_flag: flags.context.as_deref(),
        docker_host: docker_host.as_deref(),
        docker_context: docker_context.as_deref(),
        current_context: current_context.as_deref(),
        config_file: &config_file,
    };
    let resolved = endpoint::resolve(&inputs, &mut |name| config.lookup(name))?;
    let ssh = match &resolved.endpoint {
        Endpoint::Ssh(_) => Some((
            SshCommand::parse(variable(labels::SSH_COMMAND_VARIABLE).as_deref())?,
            docker_config::control_dir()?,
        )),
        _ => None,
    };
    Ok(Connection { resolved, ssh })
}
