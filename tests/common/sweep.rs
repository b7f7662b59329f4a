//! What the sweep tests check on the daemon: the containers of sweep `name`, found and
//! removed by the `io.tfimg.sweep` label every trial carries.

use std::collections::BTreeMap;
use std::path::Path;

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

/// The journal's events in sweep folder `dir`, as JSON values.
pub fn journal(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a journal line"))
        .collect()
}

/// How many attempts of each trial started, by trial id.
pub fn starts(dir: &Path) -> BTreeMap<String, usize> {
    let mut starts = BTreeMap::new();
    for event in journal(dir) {
        if event["event"] == "trial_started" {
            *starts
                .entry(event["trial"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    starts
}
