//! A sweep across a restart of the machine's dockerd: tfimg ends clearly (exit 2, the
//! daemon named) when the daemon goes away mid-sweep, and `tfimg sweep FILE` afterwards
//! completes the sweep, with nothing run twice that had finished; the trials the restart
//! killed run again without using a retry.
//!
//! This restarts the machine's dockerd, so it is its own test binary with one test (cargo
//! runs test binaries one after another); a guard starts the daemon again even when the
//! test fails.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::daemon::{Daemon, Restarter, HANG};
use common::{docker, scratch, spawn_tfimg, tfimg, unique, wait_for, DockerGuard};

fn events(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Finished attempts by trial: (attempt, exit code, stopped).
fn ends(dir: &Path) -> BTreeMap<String, Vec<(u64, Option<i64>, bool)>> {
    let mut ends: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for event in events(dir) {
        if event["event"] == "trial_finished" {
            ends.entry(event["trial"].as_str().unwrap().to_string())
                .or_default()
                .push((
                    event["attempt"].as_u64().unwrap(),
                    event["exit_code"].as_i64(),
                    event["stopped"].as_bool().unwrap_or(false),
                ));
        }
    }
    ends
}

#[tokio::test]
async fn a_daemon_restart_mid_sweep_then_running_again_completes_it_without_rerunning_finished_trials(
) {
    let Some(_engine) = common::engine().await else { return };
    let daemon = Daemon::current();
    let name = unique("t-sweep-restart").to_lowercase();
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.sweep={name}"));
    // No retries: a trial killed by the restart must not count as a failure.
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"for e in 1 2 3 4 5 6; do echo epoch=$e acc={{n}}; sleep 1; done\"]\nparams: {{n: [1, 2, 3, 4, 5, 6]}}\nmax_parallel: 2\nretries: 0\nobjective: {{metric: acc, mode: max}}\n"
    );
    let folder = scratch(&[("sweep.yaml", &text)]);
    let dir = folder.path().join("runs").join(&name);
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]);
    wait_for("two trials done and two running", HANG, || {
        let ends = ends(&dir);
        let started = events(&dir)
            .iter()
            .filter(|event| event["event"] == "trial_started")
            .count();
        ends.len() >= 2 && started >= 4
    });
    let finished_before: Vec<String> = ends(&dir)
        .into_iter()
        .filter(|(_, ends)| {
            ends.iter()
                .any(|(_, code, stopped)| *code == Some(0) && !stopped)
        })
        .map(|(trial, _)| trial)
        .collect();
    {
        let _restarter = Restarter(&daemon);
        daemon.stop();
        let run = running.finish(HANG);
        assert_eq!(run.code, 2, "{}", run.tail());
        assert!(
            run.stderr.contains("cannot reach the Docker daemon"),
            "{}",
            run.stderr
        );
    }
    // The daemon is back: the sweep goes on and completes.
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("killed while no tfimg watched it"),
        "{}",
        run.stderr
    );
    let ends = ends(&dir);
    assert_eq!(ends.len(), 6, "{ends:?}");
    for trial in &finished_before {
        assert_eq!(ends[trial].len(), 1, "{trial} ran again: {ends:?}");
    }
    for (trial, attempts) in &ends {
        let (_, code, stopped) = attempts.last().unwrap();
        assert!(*code == Some(0) && !stopped, "{trial}: {attempts:?}");
    }
    let status = tfimg(folder.path(), &["sweep", "status", &name, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["tally"]["done"], 6, "{status}");
    let left = docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=io.tfimg.sweep={name}"),
    ]);
    assert_eq!(left.trim(), "");
    drop(guard);
}
