use std::path::{Path, PathBuf};

use super::*;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;

#[test]
fn the_specs_are_the_built_ins_and_the_local_ones_but_no_abstract_base() {
    let host = FakeHost::new();
    host.files.borrow_mut().insert(
        PathBuf::from("images/vision.yaml"),
        b"name: vision\nextends: cpu-jupyter\n".to_vec(),
    );
    let names = specs(&host, Path::new("/project"));
    for wanted in ["cpu-jupyter", "gpu-headless", "tf218-cpu-ssh", "vision"] {
        assert!(
            names.iter().any(|name| name == wanted),
            "{wanted}: {names:?}"
        );
    }
    assert!(!names.iter().any(|name| name == "cpu-base"), "{names:?}");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn the_containers_are_tfimg_s_only_each_with_its_spec_and_status() {
    let engine = FakeEngine::new();
    engine.add_container("web", "running", &[]);
    engine.add_container(
        "lab-2f0c1a",
        "running",
        &[(labels::SPEC, "cpu-jupyter".to_string())],
    );
    engine.add_container(
        "alice-team",
        "exited",
        &[
            (labels::SPEC, "cpu-headless".to_string()),
            (labels::TEAM, "vision".to_string()),
        ],
    );
    let found = block_on(containers(&engine)).unwrap();
    let names: Vec<&str> = found.iter().map(|named| named.name.as_str()).collect();
    assert_eq!(names, ["alice-team", "lab-2f0c1a"]);
    assert!(found[1].about.starts_with("cpu-jupyter, "), "{found:?}");
}

#[test]
fn the_teams_are_named_once_each() {
    let engine = FakeEngine::new();
    for (name, team) in [("a", "vision"), ("b", "vision"), ("c", "nlp")] {
        engine.add_container(
            name,
            "running",
            &[
                (labels::SPEC, "cpu-jupyter".to_string()),
                (labels::TEAM, team.to_string()),
            ],
        );
    }
    engine.add_container("d", "running", &[(labels::SPEC, "cpu-ssh".to_string())]);
    assert_eq!(block_on(teams(&engine)).unwrap(), ["nlp", "vision"]);
}

#[test]
fn the_sweeps_are_those_under_runs_and_those_tfimg_remembers() {
    let host = FakeHost::new();
    let mut paths = host.paths.borrow_mut();
    paths.insert(PathBuf::from("/project/runs/lr-grid/journal.jsonl"));
    paths.insert(PathBuf::from("/project/runs/copied/sweep.yaml"));
    // A folder under runs/ that holds no sweep.
    paths.insert(PathBuf::from("/project/runs/notes/readme.txt"));
    paths.insert(PathBuf::from("/data/sweeps/elsewhere"));
    paths.insert(PathBuf::from("/data/sweeps/lr-grid"));
    drop(paths);
    assert_eq!(
        sweeps(
            &host,
            Path::new("/project"),
            Some(Path::new("/data/sweeps"))
        ),
        ["copied", "elsewhere", "lr-grid"]
    );
    assert_eq!(
        sweeps(&host, Path::new("/project"), None),
        ["copied", "lr-grid"]
    );
}
