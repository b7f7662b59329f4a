//! One module per subcommand: turn its arguments into options, call the pure core, talk
//! to the engine if needed, print. Thin by design.

pub mod base;
pub mod build;
pub mod containers;
pub mod doctor;
pub mod list;
pub mod push;
pub mod render;
pub mod run;
pub mod show;
pub mod team;

use std::path::Path;

use crate::spec::Catalog;

/// The specs visible from the current directory: built-ins plus `./images/*.yaml`.
pub(crate) fn catalog() -> Catalog {
    Catalog::load(Path::new("images"))
}

/// A runtime for the commands that talk to the engine.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Resolves when the user interrupts (Ctrl-C) or the session ends (SIGTERM, SIGHUP), so a
/// command can clean up what it started before exiting.
pub(crate) async fn interrupted() {
    use tokio::signal::unix::{signal, SignalKind};
    async fn on(kind: SignalKind) {
        match signal(kind) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = on(SignalKind::terminate()) => {}
        _ = on(SignalKind::hangup()) => {}
    }
}
