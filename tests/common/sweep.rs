//! What the sweep tests check on the daemon: the containers of sweep `name`, found and
//! removed by the `io.tfimg.sweep` label every trial carries.

use super::{docker, DockerGuard};

/// Removes every container of sweep `name`, also when the test fails.
pub fn sweep_guard(name: &str) -> DockerGuard {
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.sweep={name}"));
    guard
}

/// The ids of sweep `name`'s containers on the machine's daemon, one a line (empty: none).
pub fn sweep_containers(name: &str) -> String {
    docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=io.tfimg.sweep={name}"),
    ])
}
