//! A sweep on a remote engine (the fake made remote): each trial's folder copied in
//! instead of mounted, its metrics and then its whole folder brought back before its
//! container goes; the sweep file's `mounts:` refused; nothing of it on a local engine.

use std::path::Path;

use super::tests::{engine, go, sweep_run};
use super::*;
use crate::host::fake::FakeHost;
use crate::host::SyncArchive;

/// What a trial leaves in its folder in the container (the fake hands it to every one).
fn trial_output(engine: &FakeEngine) {
    let files = [
        ("metrics.jsonl".to_string(), b"{\"acc\": 0.5}\n".to_vec()),
        ("model.txt".to_string(), b"weights".to_vec()),
    ];
    let tar = SyncArchive::from_files("trial", &files, (1000, 1000))
        .to_bytes()
        .unwrap();
    engine
        .state
        .borrow_mut()
        .archives
        .insert(TRIAL_DIR.to_string(), tar);
}

use crate::engine::fake::FakeEngine;
use crate::engine::Daemon;
use crate::sweep::TRIAL_DIR;

#[test]
fn on_a_remote_engine_each_trial_folder_is_copied_in_and_back_never_mounted() {
    let host = FakeHost::new();
    let engine = engine();
    engine.tunnels.borrow_mut().remote = true;
    trial_output(&engine);
    let run = sweep_run(&super::tests::sweep_text(2, "gpus: none\n"), &host);
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    let finished = finished.unwrap();
    assert_eq!((finished.counts.done, finished.counts.failed), (2, 0));
    let state = engine.state.borrow();
    for plan in &state.created {
        assert!(plan.mounts.is_empty(), "{plan:?}");
    }
    let uploads: Vec<(String, Vec<String>)> = state
        .uploads
        .iter()
        .map(|(_, folder, entries)| (folder.clone(), entries.clone()))
        .collect();
    let copied = (
        "/tfimg".to_string(),
        vec![
            "trial 1000:1000 755".to_string(),
            "trial/params.json 1000:1000 644".to_string(),
        ],
    );
    assert_eq!(uploads, [copied.clone(), copied]);
    drop(state);
    for trial in ["t001", "t002"] {
        let dir = Path::new("/lab/runs/lab").join(trial);
        let files = host.files.borrow();
        assert_eq!(files[&dir.join("model.txt")], b"weights");
        assert_eq!(files[&dir.join("metrics.jsonl")], b"{\"acc\": 0.5}\n");
        assert!(files.contains_key(&dir.join("params.json")));
    }
    // Back before the container goes, for every trial.
    let calls = engine.calls();
    let removed: Vec<&str> = calls
        .iter()
        .filter_map(|call| call.strip_prefix("remove-container "))
        .collect();
    assert_eq!(removed.len(), 2, "{calls:?}");
    for id in removed {
        let back = calls
            .iter()
            .position(|call| call == &format!("download {id} {TRIAL_DIR}"));
        let removed = calls
            .iter()
            .position(|call| call == &format!("remove-container {id}"));
        assert!(back.is_some() && back < removed, "{calls:?}");
    }
    let ended_metric = notes.iter().find_map(|note| match note {
        Note::Ended { metric, .. } => metric.clone(),
        _ => None,
    });
    assert_eq!(ended_metric, Some(("last acc".to_string(), 0.5)));
}

#[test]
fn on_a_local_engine_the_trial_folder_is_still_mounted_and_nothing_is_copied() {
    let host = FakeHost::new();
    let engine = engine();
    trial_output(&engine);
    let run = sweep_run(&super::tests::sweep_text(2, "gpus: none\n"), &host);
    let (finished, _) = go(Session::quiet(&engine, &host), &run);
    assert_eq!(finished.unwrap().counts.done, 2);
    let state = engine.state.borrow();
    assert!(state.uploads.is_empty(), "{:?}", state.uploads);
    for plan in &state.created {
        let targets: Vec<&str> = plan
            .mounts
            .iter()
            .map(|mount| mount.target.as_str())
            .collect();
        assert_eq!(targets, [TRIAL_DIR]);
    }
    drop(state);
    assert!(!engine
        .calls()
        .iter()
        .any(|call| call.starts_with("download ")));
    assert!(!host
        .files
        .borrow()
        .contains_key(Path::new("/lab/runs/lab/t001/model.txt")));
}

#[test]
fn the_sweep_files_mounts_are_refused_on_a_remote_engine_at_their_place() {
    let host = FakeHost::new();
    let engine = engine();
    let run = sweep_run(
        &super::tests::sweep_text(1, "gpus: none\nmounts: [./code]\n"),
        &host,
    );
    check_engine(&engine, &run.sweep).unwrap();
    engine.tunnels.borrow_mut().remote = true;
    let error = check_engine(&engine, &run.sweep).unwrap_err();
    let endpoint = engine.endpoint().to_string();
    assert_eq!(
        error.to_string(),
        format!("`sweep.yaml`:7:10: `mounts: ./code` names a folder on this machine, but the engine `{endpoint}` runs on another host")
    );
    assert!(
        error.hint.contains("a sweep trial's own folder"),
        "{}",
        error.hint
    );
    assert!(engine.calls().is_empty(), "{:?}", engine.calls());
}
