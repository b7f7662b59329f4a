//! Trials that ran on while no tfimg watched (its run killed with `kill -9`), against the
//! fake engine and host: `tfimg sweep stop`, `status`/`results` and going on with the
//! sweep each keep a result that finished, stop only what still runs, and take over a
//! container made just before the kill instead of running its trial again.

use crate::app::session::Session;
use crate::host::prelude::*;
use std::path::Path;

use super::tests::{engine, go, sweep_run, sweep_text};
use super::unwatched::{self, Seen};
use super::*;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::sweep::journal::{self, Event, TrialStatus};
use crate::sweep::schedule::Outcome;

const DIR: &str = "/lab/runs/lab";

fn events(host: &FakeHost) -> Vec<Event> {
    let bytes = host.files.borrow()[&Path::new(DIR).join("journal.jsonl")].clone();
    journal::parse(&String::from_utf8(bytes).unwrap())
        .unwrap()
        .events
}

fn file(host: &FakeHost, path: &str) -> Option<String> {
    let files = host.files.borrow();
    let bytes = files.get(&Path::new(DIR).join(path))?;
    Some(String::from_utf8(bytes.clone()).unwrap())
}

/// A trial container as the killed run left it: `state`, its exit code once it exited.
fn container(
    engine: &FakeEngine,
    trial: &str,
    attempt: u32,
    state: &str,
    code: Option<i64>,
) -> String {
    let labels = [
        ("io.tfimg.sweep", "lab".to_string()),
        ("io.tfimg.trial", trial.to_string()),
        ("io.tfimg.attempt", attempt.to_string()),
    ];
    let id = engine.add_container(&format!("lab-{trial}"), state, &labels);
    let mut state = engine.state.borrow_mut();
    let facts = state.containers.get_mut(&id).unwrap();
    facts.exit_code = code;
    facts.finished_ms = code.map(|_| 1_800_000_050_000);
    facts.started_ms = Some(1_800_000_010_000);
    id
}

/// The folder of a five-trial sweep whose tfimg was killed: t001 done and recorded; t002
/// exited 0 and t003 still runs, both started in the journal; t004 exited 0 in a
/// container made just before the kill (no journal line); t005 never started. Each
/// trial that ran wrote its metrics.
fn killed_run(session: Session<'_, FakeEngine, FakeHost>) -> SweepRun {
    let Session { engine, host, .. } = session;
    let run = sweep_run(&sweep_text(5, "max_parallel: 3\n"), host);
    let t002 = container(engine, "t002", 1, "exited", Some(0));
    let t003 = container(engine, "t003", 1, "running", None);
    container(engine, "t004", 1, "exited", Some(0));
    let started = |trial: &str, id: &str, time_ms| Event::TrialStarted {
        trial: trial.into(),
        attempt: 1,
        container: format!("lab-{trial}"),
        container_id: id.into(),
        gpus: vec![],
        image: "sha256:abc".into(),
        time_ms,
    };
    let lines = [
        Event::SweepStarted {
            sweep: "lab".into(),
            trials: 5,
            fingerprint: run.sweep.fingerprint(),
            time_ms: 1_800_000_000_000,
        },
        started("t001", "c-old", 1_800_000_001_000),
        Event::TrialFinished {
            trial: "t001".into(),
            attempt: 1,
            exit_code: Some(0),
            stopped: false,
            time_ms: 1_800_000_009_000,
        },
        started("t002", &t002, 1_800_000_010_000),
        started("t003", &t003, 1_800_000_010_000),
    ];
    let text: String = lines.iter().map(Event::line).collect();
    host.write_file(&run.sweep.journal_path(), text.as_bytes())
        .unwrap();
    host.write_file(&Path::new(DIR).join("sweep.yaml"), &run.file_bytes)
        .unwrap();
    for (trial, acc) in [("t001", 1), ("t002", 2), ("t003", 3), ("t004", 4)] {
        let dir = Path::new(DIR).join(trial);
        host.make_folder(&dir, true, None).unwrap();
        let metrics = format!("{{\"epoch\": 1, \"acc\": {acc}}}\n");
        host.write_file(&dir.join("metrics.jsonl"), metrics.as_bytes())
            .unwrap();
    }
    run
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn stop_keeps_results_that_finished_unwatched_and_stops_only_what_runs() {
    let host = FakeHost::new();
    let engine = engine();
    let run = killed_run(Session::quiet(&engine, &host));
    let Stopped::Here { containers, notes } =
        block_on(stop(Session::quiet(&engine, &host), Path::new(DIR))).unwrap()
    else {
        panic!("no tfimg ran it");
    };
    assert_eq!(containers.len(), 3, "{containers:?}");
    assert!(engine.container_names().is_empty());
    assert_eq!(
        notes,
        [
            "t004: its container `lab-t004` was made just before its run ended, before the journal had it; it is taken over",
            "t002: done while no tfimg watched it (exit 0); its result is kept",
            "t003: stopped; it runs again when the sweep goes on",
            "t004: done while no tfimg watched it (exit 0); its result is kept",
        ]
    );
    let replay = journal::replay(&events(&host));
    assert_eq!(
        replay.trial("t002").status(),
        TrialStatus::Done { attempt: 1 }
    );
    assert_eq!(replay.trial("t003").status(), TrialStatus::Stopped);
    assert_eq!(
        replay.trial("t004").status(),
        TrialStatus::Done { attempt: 1 }
    );
    // When the daemon says it ended, not when `stop` learned it.
    assert_eq!(replay.trial("t002").attempts[0].duration_ms(), Some(40_000));
    let status = file(&host, "t004/status.json").unwrap();
    assert!(
        status.contains("\"exit_code\": 0") && status.contains("\"stopped\": false"),
        "{status}"
    );
    // Going on runs only what did not finish, and sets no finished folder aside.
    let (finished, _) = go(Session::quiet(&engine, &host), &run);
    assert_eq!(finished.unwrap().counts.done, 5);
    let created = engine.created_names();
    assert_eq!(created, ["lab-t003", "lab-t005"]);
    assert!(file(&host, "t004.before-attempt-2/metrics.jsonl").is_none());
    assert_eq!(
        file(&host, "t004/metrics.jsonl").unwrap(),
        "{\"epoch\": 1, \"acc\": 4}\n"
    );
}

#[test]
fn going_on_takes_over_a_container_made_just_before_the_kill() {
    let host = FakeHost::new();
    let engine = engine();
    let run = killed_run(Session::quiet(&engine, &host));
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    assert_eq!(finished.unwrap().counts.done, 5);
    let created = engine.created_names();
    // t003 is watched again, t002 and t004 keep their results: only t005 is new.
    assert_eq!(created, ["lab-t005"]);
    assert!(notes.iter().any(|note| matches!(note, Note::Said(said) if said.starts_with("t004: its container `lab-t004` was made just before the last run ended"))));
    assert!(notes.iter().any(|note| matches!(note, Note::Ended { trial, outcome: Outcome::Done, away: true, .. } if trial == "t004")));
    let replay = journal::replay(&events(&host));
    assert_eq!(
        replay.trial("t004").status(),
        TrialStatus::Done { attempt: 1 }
    );
    assert_eq!(replay.trial("t004").attempts.len(), 1);
}

#[test]
fn status_learns_what_ended_unwatched_and_records_nothing() {
    let host = FakeHost::new();
    let engine = engine();
    killed_run(Session::quiet(&engine, &host));
    let journal_before = events(&host);
    let mut looked = unwatched::look(&host, Path::new(DIR)).unwrap();
    assert!(!looked.running && looked.asks_engine());
    block_on(looked.learn(Ok(&engine), &host, crate::app::session::Sinks::silent()));
    let seen: Vec<(String, Seen, bool)> = looked
        .unwatched
        .iter()
        .map(|unwatched| (unwatched.trial.clone(), unwatched.seen, unwatched.adopted))
        .collect();
    let ended = Seen::Ended {
        code: 0,
        finished_ms: Some(1_800_000_050_000),
    };
    assert_eq!(
        seen,
        [
            ("t002".to_string(), ended, false),
            ("t003".to_string(), Seen::Running, false),
            ("t004".to_string(), ended, true),
        ]
    );
    let mut results = looked.found.results(None);
    results.rows.sort_by(|a, b| a.trial.cmp(&b.trial));
    let statuses: Vec<String> = results
        .rows
        .iter()
        .map(|row| row.status.to_string())
        .collect();
    assert_eq!(statuses, ["done", "done", "running", "done", "queued"]);
    // The best trial by value, not the first in trial order.
    assert_eq!(results.best().unwrap().trial, "t004");
    assert_eq!(events(&host), journal_before, "status writes nothing");
    assert_eq!(engine.container_names().len(), 3, "status removes nothing");

    let mut unreached = unwatched::look(&host, Path::new(DIR)).unwrap();
    let away: anyhow::Result<&FakeEngine> = Err(anyhow::anyhow!("the daemon is away"));
    block_on(unreached.learn(away, &host, crate::app::session::Sinks::silent()));
    assert_eq!(unreached.unreached.as_deref(), Some("the daemon is away"));
    assert!(unreached.unwatched.is_empty());
}

#[test]
fn a_failure_after_a_stopped_attempt_is_its_first_retry() {
    let host = FakeHost::new();
    let engine = engine();
    let run = sweep_run(&sweep_text(1, "retries: 1\n"), &host);
    let lines = [
        Event::SweepStarted {
            sweep: "lab".into(),
            trials: 1,
            fingerprint: run.sweep.fingerprint(),
            time_ms: 1,
        },
        Event::TrialStarted {
            trial: "t001".into(),
            attempt: 1,
            container: "lab-t001".into(),
            container_id: "c-gone".into(),
            gpus: vec![],
            image: "sha256:abc".into(),
            time_ms: 2,
        },
        Event::TrialFinished {
            trial: "t001".into(),
            attempt: 1,
            exit_code: Some(130),
            stopped: true,
            time_ms: 3,
        },
    ];
    let text: String = lines.iter().map(Event::line).collect();
    host.write_file(&run.sweep.journal_path(), text.as_bytes())
        .unwrap();
    engine
        .state
        .borrow_mut()
        .exits
        .insert("lab-t001".into(), [1, 1].into());
    let (_, notes) = go(Session::quiet(&engine, &host), &run);
    let ends: Vec<(u32, Outcome)> = notes
        .iter()
        .filter_map(|note| match note {
            Note::Ended {
                attempt, outcome, ..
            } => Some((*attempt, *outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        [(2, Outcome::Retry { retry: 1 }), (3, Outcome::Failed)]
    );
}

/// A journal can name any container (one another account wrote, or one edited by hand):
/// `stop` and going on act only on a container whose own labels make it that trial. A
/// Jupyter the journal names for t003 keeps running, and the trial counts as gone.
#[test]
fn a_container_the_journal_names_is_stopped_only_when_its_labels_make_it_the_trial() {
    let host = FakeHost::new();
    let engine = engine();
    let run = killed_run(Session::quiet(&engine, &host));
    let jupyter = engine.add_container("alice-jupyter", "running", &[]);
    let other_sweep = engine.add_container(
        "other-t002",
        "running",
        &[
            ("io.tfimg.sweep", "other".into()),
            ("io.tfimg.trial", "t002".into()),
        ],
    );
    let started = |trial: &str, id: &str| Event::TrialStarted {
        trial: trial.into(),
        attempt: 2,
        container: "lab-x".into(),
        container_id: id.into(),
        gpus: vec![],
        image: "sha256:abc".into(),
        time_ms: 1_800_000_020_000,
    };
    let finished = |trial: &str| Event::TrialFinished {
        trial: trial.into(),
        attempt: 1,
        exit_code: None,
        stopped: true,
        time_ms: 1_800_000_019_000,
    };
    let mut text = String::new();
    for event in [
        finished("t002"),
        started("t002", &other_sweep),
        finished("t003"),
        started("t003", &jupyter),
    ] {
        text.push_str(&event.line());
    }
    host.append_file(&run.sweep.journal_path(), text.as_bytes(), true)
        .unwrap();
    let Stopped::Here { notes, .. } =
        block_on(stop(Session::quiet(&engine, &host), Path::new(DIR))).unwrap()
    else {
        panic!("no tfimg ran it");
    };
    for (trial, name) in [("t002", "other-t002"), ("t003", "alice-jupyter")] {
        let note = format!("{trial}: the journal names container `{name}`, whose labels do not make it this trial's; it is left alone and the trial counts as gone");
        assert!(notes.contains(&note), "{notes:?}");
    }
    let state = engine.state.borrow();
    assert_eq!(state.containers[&jupyter].state, "running");
    assert_eq!(state.containers[&other_sweep].state, "running");
    assert!(!engine
        .calls()
        .iter()
        .any(|call| call.contains(&jupyter)
            && (call.starts_with("stop") || call.starts_with("remove"))));
}

/// A sweep folder another account owns (or can write) is refused by name and by path
/// before anything is read from it, naming the owner and the mode.
#[test]
fn a_sweep_folder_another_account_controls_is_refused_by_name_and_by_path() {
    let host = FakeHost::new();
    let engine = engine();
    killed_run(Session::quiet(&engine, &host));
    host.paths
        .borrow_mut()
        .insert(Path::new(DIR).join("journal.jsonl"));
    host.untrusted.borrow_mut().insert(
        Path::new("/lab/runs").to_path_buf(),
        crate::host::Untrusted {
            path: Path::new("/lab/runs").to_path_buf(),
            uid: 1001,
            owner: "mallory".into(),
            mode: 0o755,
            finding: crate::host::trusted::Finding::Owner,
        },
    );
    for target in ["lab", "runs/lab", DIR] {
        let error = folder::locate(&host, Path::new("/lab"), target).unwrap_err();
        assert_eq!(
            error.message,
            "`/lab/runs` belongs to `mallory` (uid 1001, mode 0755), not to you or root: tfimg uses a sweep's folder only where no other account can change it",
            "{target}"
        );
        assert!(
            error.hint.contains("another account made it"),
            "{}",
            error.hint
        );
    }
    assert!(engine.calls().is_empty(), "nothing asked of the engine");
}
