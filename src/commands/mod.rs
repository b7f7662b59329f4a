//! One module per subcommand: turn its arguments into options, call the pure core, talk
//! to the engine if needed, print. Thin by design.

pub mod base;
pub mod build;
pub mod bundle;
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

use std::path::PathBuf;

use crate::app::settings::Settings;
use crate::host::Host;
use crate::spec::Catalog;

/// The specs visible from the current directory: built-ins plus `./images/*.yaml`.
pub(crate) fn catalog(settings: &Settings, host: &impl Host) -> Catalog {
    let current_dir = settings
        .current_dir()
        .unwrap_or_else(|_| PathBuf::from("/"));
    crate::app::catalog::load(host, &current_dir)
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

/// The session of a command whose progress is plain lines: its words on the terminal.
fn session<'a, E, H: ?Sized>(engine: &'a E, host: &'a H) -> crate::app::Session<'a, E, H> {
    crate::app::Session::new(engine, host, crate::output::sinks::Sinks::plain())
}

/// The session of a command with progress of its own, on `reporter`.
fn reported<'a, E, H: ?Sized>(
    engine: &'a E,
    host: &'a H,
    reporter: &'a crate::output::progress::Reporter,
) -> crate::app::Session<'a, E, H> {
    crate::app::Session::new(
        engine,
        host,
        crate::output::sinks::Sinks::terminal(reporter),
    )
}
