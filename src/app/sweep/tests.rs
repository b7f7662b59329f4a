//! The sweep runner against the fake engine and host: slots never overbooked and each
//! trial on its own GPUs by device id, retries, `max_failed`, Ctrl-C, and going on from
//! a journal (finished trials kept, running ones reattached or their end learned).

use crate::app::session::Session;
use crate::host::prelude::*;
use std::cell::RefCell;
use std::path::Path;

use super::*;
use crate::app::run::target_of_image;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::plan::gpus::GpuPlan;
use crate::plan::gpus::HostGpu;
use crate::sweep::journal;
use crate::sweep::schedule;

const IMAGE: &str = "tfimg/cpu-headless:2.9.3";

/// A sweep of `trials` trials of `sh -c` over `n`, with `rest` after the params.
pub(super) fn sweep_text(trials: usize, rest: &str) -> String {
    let values: Vec<String> = (1..=trials).map(|n| n.to_string()).collect();
    format!(
        "sweep: lab\nimage: {IMAGE}\ncommand: [sh, -c, \"echo acc={{n}}\"]\nparams: {{n: [{}]}}\nobjective: {{metric: acc, mode: max}}\n{rest}",
        values.join(", ")
    )
}

fn gpu_host(count: u32) -> FakeHost {
    let host = FakeHost::new();
    let mut host = host;
    host.nvidia.driver = Some("535.104.05".to_string());
    host.nvidia.gpus = (0..count)
        .map(|index| HostGpu {
            index,
            uuid: format!("GPU-{index}"),
            name: "NVIDIA A100".into(),
            memory_mib: Some(40960),
            compute_capability: None,
        })
        .collect();
    host.nvidia.toolkit_programs = vec!["nvidia-container-runtime-hook".to_string()];
    host
}

pub(super) fn engine() -> FakeEngine {
    let engine = FakeEngine::new();
    engine.add_image(&[IMAGE], &[]);
    engine.state.borrow_mut().info.runtimes = vec!["runc".into()];
    engine
}

pub(super) fn sweep_run(text: &str, host: &FakeHost) -> SweepRun {
    let sweep = crate::sweep::parse(text, "sweep.yaml", Path::new("/lab")).unwrap();
    let indices: Vec<String> = host
        .nvidia
        .gpus
        .iter()
        .map(|gpu| gpu.index.to_string())
        .collect();
    let slots = schedule::slots(&sweep.pool, &indices, None).unwrap();
    let mut run = image_run(sweep, slots, None);
    run.file_bytes = text.as_bytes().to_vec();
    run
}

/// The run of `sweep` in `IMAGE` (a sweep file's image target) on `slots`, decided on
/// `nvidia`, as the host user 1000.
pub(super) fn image_run(
    sweep: crate::sweep::Sweep,
    slots: Vec<schedule::Slot>,
    nvidia: Option<crate::host::NvidiaFacts>,
) -> SweepRun {
    let image = crate::engine::ImageFacts {
        id: "sha256:abc".into(),
        tags: vec![IMAGE.into()],
        working_dir: "/tf".into(),
        ..Default::default()
    };
    SweepRun {
        sweep,
        file: "sweep.yaml".into(),
        file_bytes: Vec::new(),
        target: target_of_image(IMAGE, &image),
        slots,
        nvidia,
        ids: Some((1000, 1000)),
        resume_only: false,
    }
}

/// Runs the sweep, collecting what it notes.
pub(super) fn go(
    session: Session<'_, FakeEngine, FakeHost>,
    run: &SweepRun,
) -> (anyhow::Result<Finished>, Vec<Note>) {
    let notes = RefCell::new(Vec::new());
    let finished = go_beside(session, run, &notes, async {});
    (finished, notes.into_inner())
}

/// Runs the sweep beside `driver` (which plays the trials' part and may read `notes`),
/// collecting what it notes into `notes`.
fn go_beside(
    session: Session<'_, FakeEngine, FakeHost>,
    run: &SweepRun,
    notes: &RefCell<Vec<Note>>,
    driver: impl std::future::Future<Output = ()>,
) -> anyhow::Result<Finished> {
    let notify = |note: Note| notes.borrow_mut().push(note);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (finished, ()) =
        runtime.block_on(async { futures_util::join!(super::run(session, run, &notify), driver) });
    finished
}

/// The journal's events.
fn events(host: &FakeHost) -> Vec<journal::Event> {
    let bytes = host.files.borrow()[Path::new("/lab/runs/lab/journal.jsonl")].clone();
    journal::parse(&String::from_utf8(bytes).unwrap())
        .unwrap()
        .events
}

/// The most containers that ran at once (from the engine's starts and removals).
fn most_at_once(engine: &FakeEngine) -> usize {
    let (mut now, mut most) = (0usize, 0usize);
    for call in engine.calls() {
        if call.starts_with("start ") {
            now += 1;
            most = most.max(now);
        } else if call.starts_with("remove-container ") {
            now = now.saturating_sub(1);
        }
    }
    most
}

fn device_ids(plan: &crate::plan::LaunchPlan) -> Vec<String> {
    match &plan.gpu {
        GpuPlan::Request(request) => {
            assert_eq!(request.count, None, "devices by id, never a count");
            request.device_ids.clone()
        }
        other => panic!("{} has no device request: {other:?}", plan.name),
    }
}

#[test]
fn trials_fill_the_gpu_slots_first_in_first_out_each_on_its_own_gpu() {
    let host = gpu_host(3);
    let engine = engine();
    let run = sweep_run(&sweep_text(7, "gpus: [0, 1, 2]\n"), &host);
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    let finished = finished.unwrap();
    assert_eq!(finished.reason, StopReason::Finished);
    assert_eq!((finished.counts.done, finished.counts.failed), (7, 0));
    assert!(most_at_once(&engine) <= 3, "{:?}", engine.calls());
    let created = engine.state.borrow().created.clone();
    let names: Vec<&str> = created.iter().map(|plan| plan.name.as_str()).collect();
    assert_eq!(
        names,
        ["lab-t1", "lab-t2", "lab-t3", "lab-t4", "lab-t5", "lab-t6", "lab-t7"]
            .map(|n| n.replace("t", "t00"))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
    );
    // The first three on GPUs 0, 1 and 2; each later one on the GPU its slot freed.
    let gpus: Vec<Vec<String>> = created.iter().map(device_ids).collect();
    assert_eq!(
        gpus[..3],
        [vec!["0".to_string()], vec!["1".into()], vec!["2".into()]]
    );
    assert!(gpus.iter().all(|ids| ids.len() == 1));
    for plan in &created {
        assert_eq!(plan.labels["io.tfimg.sweep"], "lab");
        assert!(plan
            .env
            .contains(&"TFIMG_TRIAL_DIR=/tfimg/trial".to_string()));
        assert!(plan
            .mounts
            .iter()
            .any(|mount| mount.target == "/tfimg/trial"
                && mount.source.starts_with("/lab/runs/lab")
                && !mount.read_only));
    }
    let started = notes
        .iter()
        .filter(|note| matches!(note, Note::Started { .. }))
        .count();
    assert_eq!(started, 7);
    // Every container is gone, every trial has its params and status.
    assert!(engine.container_names().is_empty());
    let files = host.files.borrow();
    let status =
        String::from_utf8(files[Path::new("/lab/runs/lab/t007/status.json")].clone()).unwrap();
    assert!(status.contains("\"exit_code\": 0"), "{status}");
    assert_eq!(
        files[Path::new("/lab/runs/lab/t003/params.json")],
        b"{\"n\": 3}\n"
    );
    assert!(files.contains_key(Path::new("/lab/runs/lab/sweep.yaml")));
}

/// A sweep run from the top of a project (its results beside its file) is found by its
/// name from anywhere, as `tfimg sweep status|results|report NAME` take it.
#[test]
fn a_sweep_is_found_by_its_name_from_any_folder_once_it_ran() {
    let host = gpu_host(1);
    let engine = engine();
    let elsewhere = Path::new("/home/me");
    let missing = folder::locate(&host, elsewhere, "lab").unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("tfimg ran no sweep of that name"),
        "{missing}"
    );
    let run = sweep_run(&sweep_text(1, "gpus: all\n"), &host);
    go(Session::quiet(&engine, &host), &run).0.unwrap();
    // The fake's files are not its folders: the journal's folder is there as on a disk.
    host.paths
        .borrow_mut()
        .insert(Path::new("/lab/runs/lab/journal.jsonl").into());
    assert_eq!(
        folder::locate(&host, elsewhere, "lab").unwrap(),
        Path::new("/lab/runs/lab")
    );
    // Not a name: a path is only ever taken as written.
    assert!(folder::locate(&host, elsewhere, "../lab").is_err());
}

#[test]
fn a_trial_that_fails_once_is_retried_and_ends_done_on_attempt_2() {
    let host = gpu_host(2);
    let engine = engine();
    engine
        .state
        .borrow_mut()
        .exits
        .insert("lab-t002".into(), [1, 0].into());
    let run = sweep_run(&sweep_text(3, "gpus: all\nretries: 1\n"), &host);
    let (finished, _) = go(Session::quiet(&engine, &host), &run);
    assert_eq!(finished.unwrap().counts.done, 3);
    let replay = journal::replay(&events(&host));
    assert_eq!(
        replay.trial("t002").status(),
        journal::TrialStatus::Done { attempt: 2 }
    );
    assert_eq!(replay.trial("t002").attempts.len(), 2);
    assert_eq!(replay.trial("t001").attempts.len(), 1);
}

#[test]
fn max_failed_stops_the_sweep_early() {
    let host = gpu_host(1);
    let engine = engine();
    for trial in ["lab-t001", "lab-t002", "lab-t003"] {
        engine
            .state
            .borrow_mut()
            .exits
            .insert(trial.into(), [3].into());
    }
    let run = sweep_run(&sweep_text(6, "gpus: [0]\nmax_failed: 2\n"), &host);
    let (finished, _) = go(Session::quiet(&engine, &host), &run);
    let finished = finished.unwrap();
    assert_eq!(finished.reason, StopReason::MaxFailed);
    assert_eq!(finished.counts.failed, 2);
    assert_eq!(engine.calls_to("create").len(), 2);
    assert!(engine.container_names().is_empty());
}

#[test]
fn ctrl_c_stops_and_removes_every_trial_and_keeps_what_finished() {
    let host = gpu_host(2);
    let engine = engine();
    // t001 ends by itself; t002 and t003 run until stopped.
    engine.state.borrow_mut().held = ["lab-t002", "lab-t003"].map(String::from).into();
    let run = sweep_run(&sweep_text(5, "gpus: [0, 1]\nmax_parallel: 2\n"), &host);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let notify = |_: Note| {};
    let (finished, ()) = runtime.block_on(async {
        let press = async {
            while engine.calls_to("start").len() < 3 {
                tokio::task::yield_now().await;
            }
            host.interrupt.set(true);
        };
        futures_util::join!(
            super::run(Session::quiet(&engine, &host), &run, &notify),
            press
        )
    });
    let error = finished.unwrap_err();
    assert!(error.downcast_ref::<Interrupted>().is_some(), "{error:#}");
    assert!(
        error.to_string().contains("1 of 5 trials are done"),
        "{error}"
    );
    assert!(engine.container_names().is_empty());
    let replay = journal::replay(&events(&host));
    assert_eq!(
        replay.trial("t001").status(),
        journal::TrialStatus::Done { attempt: 1 }
    );
    assert_eq!(replay.trial("t002").status(), journal::TrialStatus::Stopped);
    assert_eq!(replay.last_stop, Some(StopReason::Interrupted));
    assert_eq!(
        replay.trial("t004").status(),
        journal::TrialStatus::NeverStarted
    );
}

#[test]
fn running_again_keeps_finished_trials_and_learns_what_ended_while_away() {
    let host = gpu_host(2);
    let engine = engine();
    let run = sweep_run(&sweep_text(5, "gpus: [0, 1]\nretries: 0\n"), &host);
    // The last run: t001 done; t002 ran on GPU 0 and exited 0 while tfimg was away;
    // t003 ran on GPU 1 and was killed by a daemon restart.
    let t002 = engine.add_container(
        "lab-t002",
        "exited",
        &[
            ("io.tfimg.sweep", "lab".into()),
            ("io.tfimg.trial", "t002".into()),
        ],
    );
    let t003 = engine.add_container(
        "lab-t003",
        "exited",
        &[
            ("io.tfimg.sweep", "lab".into()),
            ("io.tfimg.trial", "t003".into()),
        ],
    );
    engine
        .state
        .borrow_mut()
        .containers
        .get_mut(&t002)
        .unwrap()
        .exit_code = Some(0);
    engine
        .state
        .borrow_mut()
        .containers
        .get_mut(&t003)
        .unwrap()
        .exit_code = Some(137);
    let stray = engine.add_container("lab-t004", "created", &[("io.tfimg.sweep", "lab".into())]);
    let fingerprint = run.sweep.fingerprint();
    let started = |trial: &str, id: &str, gpu: &str, time_ms| journal::Event::TrialStarted {
        trial: trial.into(),
        attempt: 1,
        container: format!("lab-{trial}"),
        container_id: id.into(),
        gpus: vec![gpu.into()],
        image: "sha256:abc".into(),
        time_ms,
    };
    let lines = [
        journal::Event::SweepStarted {
            sweep: "lab".into(),
            trials: 5,
            fingerprint,
            time_ms: 1,
        },
        started("t001", "c-old", "0", 2),
        journal::Event::TrialFinished {
            trial: "t001".into(),
            attempt: 1,
            exit_code: Some(0),
            stopped: false,
            time_ms: 3,
        },
        started("t002", &t002, "0", 4),
        started("t003", &t003, "1", 5),
    ];
    let text: String = lines.iter().map(journal::Event::line).collect();
    // Killed mid-write: a torn last line.
    let text = format!("{text}{{\"event\":\"trial_sta");
    host.write_file(&run.sweep.journal_path(), text.as_bytes())
        .unwrap();
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    let finished = finished.unwrap();
    assert_eq!((finished.counts.done, finished.counts.failed), (5, 0));
    let created = engine.created_names();
    assert_eq!(
        created,
        ["lab-t003", "lab-t004", "lab-t005"],
        "t001 and t002 never ran again"
    );
    assert!(notes.contains(&Note::Resumed {
        done: 1,
        failed: 0,
        reattached: 0,
        stopped_early: 0,
    }));
    assert!(notes.iter().any(|note| matches!(note, Note::Said(said) if said.contains("t003: killed while no tfimg watched it (exit 137)"))));
    assert!(!engine
        .calls()
        .iter()
        .any(|call| call == &format!("start {stray}")));
    let replay = journal::replay(&events(&host));
    assert_eq!(
        replay.trial("t003").status(),
        journal::TrialStatus::Done { attempt: 2 }
    );
    assert_eq!(replay.runs, 2);
}

#[test]
fn a_changed_sweep_file_is_refused_with_what_changed() {
    let host = gpu_host(1);
    let engine = engine();
    let run = sweep_run(&sweep_text(2, "gpus: [0]\n"), &host);
    go(Session::quiet(&engine, &host), &run).0.unwrap();
    let changed = sweep_run(&sweep_text(3, "gpus: [0]\n"), &host);
    let error = go(Session::quiet(&engine, &host), &changed).0.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the sweep file changed since the sweep"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("`params.n`: [1, 2] (axis 1) → [1, 2, 3] (axis 1)"),
        "{error}"
    );
    assert_eq!(
        engine.calls_to("create").len(),
        2,
        "nothing more was created"
    );
}

/// Runs the sweep while the trials report: the `k`-th trial started writes
/// `{"epoch": 1, "acc": acc[k]}` to its metrics, and Ctrl-C comes once `stops` trials
/// ended stopped early. What it noted, with how it ended.
fn go_reporting(
    session: Session<'_, FakeEngine, FakeHost>,
    run: &SweepRun,
    acc: &[f64],
    stops: usize,
) -> (anyhow::Result<Finished>, Vec<Note>) {
    let Session { engine, host, .. } = session;
    let notes = RefCell::new(Vec::new());
    let trials = async {
        let mut reported = 0;
        loop {
            let started = engine.calls_to("start").len();
            while reported < started.min(acc.len()) {
                let path = format!("/lab/runs/lab/t{:03}/metrics.jsonl", reported + 1);
                let line = format!("{{\"epoch\": 1, \"acc\": {}}}\n", acc[reported]);
                host.files
                    .borrow_mut()
                    .insert(path.into(), line.into_bytes());
                reported += 1;
            }
            let stopped_early = notes
                .borrow()
                .iter()
                .filter(|note| {
                    matches!(
                        note,
                        Note::Ended {
                            outcome: schedule::Outcome::StoppedEarly,
                            ..
                        }
                    )
                })
                .count();
            if stopped_early >= stops {
                host.interrupt.set(true);
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    let finished = go_beside(session, run, &notes, trials);
    (finished, notes.into_inner())
}

#[test]
fn asha_stops_the_losing_trials_gives_their_slots_on_and_a_resumed_run_never_restarts_them() {
    let host = FakeHost::new();
    let engine = engine();
    // Every trial runs until it is stopped.
    engine.state.borrow_mut().held = (1..=4).map(|n| format!("lab-t{n:03}")).collect();
    let early_stop =
        "max_parallel: 3\nearly_stop: {rule: asha, max_epochs: 3, grace: 1, reduction: 2, brackets: 1}\n";
    let run = sweep_run(&sweep_text(4, early_stop), &host);
    // t001 is the first at rung 1; t002 (0.2) is below 0.9, the median of what is there;
    // t003 (0.8) is above 0.55; t004, started in t002's slot, is below 0.8.
    let (finished, notes) = go_reporting(
        Session::quiet(&engine, &host),
        &run,
        &[0.9, 0.2, 0.8, 0.1],
        2,
    );
    let error = finished.unwrap_err();
    assert!(error.downcast_ref::<Interrupted>().is_some(), "{error:#}");
    let said: Vec<(String, String)> = notes
        .iter()
        .filter_map(|note| match note {
            Note::StoppedEarly { trial, reason } => Some((trial.clone(), reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        [
            ("t002".to_string(), "epoch 1: 0.2 < rung 0.9".to_string()),
            ("t004".to_string(), "epoch 1: 0.1 < rung 0.8".to_string()),
        ]
    );
    let replay = journal::replay(&events(&host));
    for (trial, status) in [
        ("t001", journal::TrialStatus::Stopped),
        ("t002", journal::TrialStatus::StoppedEarly),
        ("t003", journal::TrialStatus::Stopped),
        ("t004", journal::TrialStatus::StoppedEarly),
    ] {
        assert_eq!(replay.trial(trial).status(), status, "{trial}");
    }
    // The judgement went to the journal before its container was stopped.
    let events = events(&host);
    let judged = events
        .iter()
        .position(|event| matches!(event, journal::Event::TrialJudged { trial, judgement, .. } if trial == "t002" && judgement.stop))
        .unwrap();
    let ended = events
        .iter()
        .position(|event| matches!(event, journal::Event::TrialFinished { trial, stopped: true, .. } if trial == "t002"))
        .unwrap();
    assert!(judged < ended);
    // t004 took the slot t002's removal freed; every container is gone, folders stay.
    let t002 = events
        .iter()
        .find_map(|event| match event {
            journal::Event::TrialStarted {
                trial,
                container_id,
                ..
            } if trial == "t002" => Some(container_id.clone()),
            _ => None,
        })
        .unwrap();
    let calls = engine.calls();
    let removed = calls
        .iter()
        .position(|call| *call == format!("remove-container {t002}"));
    let created = calls.iter().position(|call| call == "create lab-t004");
    assert!(removed.unwrap() < created.unwrap(), "{calls:?}");
    assert!(engine.container_names().is_empty());
    assert!(host
        .files
        .borrow()
        .contains_key(Path::new("/lab/runs/lab/t002/metrics.jsonl")));

    // Resumed with every trial ending by itself: the two stopped early are not run again.
    engine.state.borrow_mut().held.clear();
    let before = engine.calls_to("create").len();
    let (finished, _) = go(Session::quiet(&engine, &host), &run);
    let finished = finished.unwrap();
    let created: Vec<String> = engine.state.borrow().created[before..]
        .iter()
        .map(|plan| plan.name.clone())
        .collect();
    assert_eq!(created, ["lab-t001", "lab-t003"]);
    assert_eq!(
        (finished.counts.done, finished.counts.stopped_early),
        (2, 2)
    );
    let judged_again = journal::parse(
        &String::from_utf8(host.files.borrow()[Path::new("/lab/runs/lab/journal.jsonl")].clone())
            .unwrap(),
    )
    .unwrap()
    .events
    .iter()
    .filter(|event| matches!(event, journal::Event::TrialJudged { .. }))
    .count();
    assert_eq!(
        judged_again, 4,
        "each trial judged once at rung 1, over both runs"
    );
}

#[test]
fn a_trial_past_its_timeout_is_stopped_counts_as_failed_and_is_retried() {
    let host = FakeHost::new();
    let engine = engine();
    // t002 hangs on every attempt; t001 ends by itself.
    engine.state.borrow_mut().held = ["lab-t002".to_string()].into();
    let run = sweep_run(&sweep_text(2, "timeout: 30s\nretries: 1\n"), &host);
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    let finished = finished.unwrap();
    assert_eq!((finished.counts.done, finished.counts.failed), (1, 1));
    let timed_out: Vec<&String> = notes
        .iter()
        .filter_map(|note| match note {
            Note::TimedOut { trial, after_ms } => {
                assert!(*after_ms > 30_000, "{after_ms}");
                Some(trial)
            }
            _ => None,
        })
        .collect();
    assert_eq!(timed_out, ["t002", "t002"], "each attempt, the retry too");
    let replay = journal::replay(&events(&host));
    let history = replay.trial("t002");
    assert_eq!(history.status(), journal::TrialStatus::Failed);
    assert_eq!(
        history.failures(),
        2,
        "both attempts failed, none was 'stopped'"
    );
    assert!(history.timed_out(2).is_some());
    let results = crate::sweep::results::results(
        &run.sweep.trials(),
        &replay,
        &Default::default(),
        None,
        None,
    );
    let row = results.rows.iter().find(|row| row.trial == "t002").unwrap();
    assert!(
        row.status
            .to_string()
            .starts_with("failed (timed out after "),
        "{}",
        row.status
    );
    assert_eq!(row.status.word(), "failed");
    assert!(engine.container_names().is_empty());
}

/// A `tpe:` sweep of 8 trials over `x` and `aug`, one at a time.
fn tpe_text(rest: &str) -> String {
    format!(
        "sweep: lab\nimage: {IMAGE}\ncommand: [sh, -c, \"echo {{x}} {{aug}}\"]\ntpe: {{count: 8, seed: 7, startup: 3, x: {{uniform: [0, 1]}}, aug: {{choice: [low, high]}}}}\nobjective: {{metric: acc, mode: max}}\nmax_parallel: 1\n{rest}"
    )
}

/// Runs the sweep with every trial held until it has reported `acc` = `score(params)`
/// (its params.json read back), then ended by itself; Ctrl-C comes once `interrupt_after`
/// trials ended.
fn go_scoring(
    session: Session<'_, FakeEngine, FakeHost>,
    run: &SweepRun,
    score: impl Fn(&serde_json::Value) -> f64,
    interrupt_after: Option<usize>,
) -> (anyhow::Result<Finished>, Vec<Note>) {
    let Session { engine, host, .. } = session;
    engine.state.borrow_mut().held = (1..=8).map(|n| format!("lab-t{n:03}")).collect();
    let notes = RefCell::new(Vec::new());
    let trials = async {
        let mut ended = 0;
        loop {
            let created: Vec<String> = engine
                .state
                .borrow()
                .created
                .iter()
                .map(|plan| plan.name.clone())
                .collect();
            for name in created {
                if !engine.state.borrow().held.contains(&name) {
                    continue;
                }
                let dir = format!("/lab/runs/{}", name.replacen('-', "/", 1));
                let params = host.files.borrow()[Path::new(&format!("{dir}/params.json"))].clone();
                let params: serde_json::Value = serde_json::from_slice(&params).unwrap();
                let line = format!("{{\"epoch\": 1, \"acc\": {}}}\n", score(&params));
                host.files
                    .borrow_mut()
                    .insert(format!("{dir}/metrics.jsonl").into(), line.into_bytes());
                engine.state.borrow_mut().held.remove(&name);
                ended += 1;
            }
            if interrupt_after.is_some_and(|after| ended >= after) {
                host.interrupt.set(true);
                return;
            }
            if engine.state.borrow().held.is_empty() {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    let finished = go_beside(session, run, &notes, trials);
    (finished, notes.into_inner())
}

/// The params `tpe:` proposed, in journal order, as `t001 {x: 0.5, aug: low}`.
fn proposals(host: &FakeHost) -> Vec<String> {
    events(host)
        .iter()
        .filter_map(|event| match event {
            journal::Event::TrialProposed { trial, params, .. } => Some(format!(
                "{trial} {}",
                serde_json::Value::Object(params.clone())
            )),
            _ => None,
        })
        .collect()
}

/// Best near `x` = 0.8 with `aug: high`.
fn peak(params: &serde_json::Value) -> f64 {
    let x = params["x"].as_f64().unwrap();
    let aug = if params["aug"] == "high" { 0.0 } else { 0.3 };
    1.0 - (x - 0.8).powi(2) - aug
}

#[test]
fn tpe_proposes_each_trial_from_the_ended_ones_journals_it_first_and_a_seed_repeats_it() {
    let host = FakeHost::new();
    let engine = engine();
    let run = sweep_run(&tpe_text(""), &host);
    let (finished, notes) = go_scoring(Session::quiet(&engine, &host), &run, peak, None);
    let finished = finished.unwrap();
    assert_eq!((finished.counts.total, finished.counts.done), (8, 8));
    // The first three are random draws; each later one learned from all that ended before.
    let learned: Vec<usize> = notes
        .iter()
        .filter_map(|note| match note {
            Note::Proposed { learned_from, .. } => Some(*learned_from),
            _ => None,
        })
        .collect();
    assert_eq!(learned, [0, 0, 0, 3, 4, 5, 6, 7]);
    // Each proposal is in the journal before its trial starts, and its params are the
    // trial's (its params.json and its command).
    let events = events(&host);
    for n in 1..=8 {
        let trial = format!("t{n:03}");
        let proposed = events.iter().position(
            |event| matches!(event, journal::Event::TrialProposed { trial: t, .. } if *t == trial),
        );
        let started = events.iter().position(
            |event| matches!(event, journal::Event::TrialStarted { trial: t, .. } if *t == trial),
        );
        assert!(proposed.unwrap() < started.unwrap(), "{trial}");
    }
    let first = proposals(&host);
    assert_eq!(first.len(), 8);
    let t004 = host.files.borrow()[Path::new("/lab/runs/lab/t004/params.json")].clone();
    let t004: serde_json::Value = serde_json::from_slice(&t004).unwrap();
    assert!(
        first[3].ends_with(&t004.to_string().replace(", ", ",")),
        "{first:?} {t004}"
    );
    let plan = &engine.state.borrow().created[3];
    let command = plan.command.join(" ");
    assert!(command.contains(t004["aug"].as_str().unwrap()), "{command}");

    // The same file with the same seed on a fresh host proposes the same trials.
    let (host2, engine2) = (FakeHost::new(), self::engine());
    let (finished, _) = go_scoring(Session::quiet(&engine2, &host2), &run, peak, None);
    finished.unwrap();
    assert_eq!(proposals(&host2), first);
    // And the results know every proposed trial.
    let folder = folder::read(&host2, Path::new("/lab/runs/lab")).unwrap();
    assert_eq!(folder.trials.len(), 8);
    assert_eq!(folder.results(None).rows.len(), 8);
}

#[test]
fn a_tpe_sweep_stopped_and_resumed_runs_what_it_proposed_and_proposes_only_the_rest() {
    // Uninterrupted, for comparison.
    let (host, engine) = (FakeHost::new(), engine());
    let run = sweep_run(&tpe_text(""), &host);
    go_scoring(Session::quiet(&engine, &host), &run, peak, None)
        .0
        .unwrap();
    let whole = proposals(&host);

    let (host, engine) = (FakeHost::new(), self::engine());
    let (finished, _) = go_scoring(Session::quiet(&engine, &host), &run, peak, Some(4));
    let error = finished.unwrap_err();
    assert!(error.downcast_ref::<Interrupted>().is_some(), "{error:#}");
    let before = proposals(&host);
    assert!((4..8).contains(&before.len()), "{before:?}");
    host.interrupt.set(false);
    let created_before = engine.state.borrow().created.len();
    let (finished, _) = go_scoring(Session::quiet(&engine, &host), &run, peak, None);
    let finished = finished.unwrap();
    assert_eq!((finished.counts.total, finished.counts.done), (8, 8));
    // Nothing proposed twice, nothing done run again, and with one slot the same trials
    // as the run that was never stopped.
    assert_eq!(proposals(&host), whole);
    let rerun: Vec<String> = engine.state.borrow().created[created_before..]
        .iter()
        .map(|plan| plan.name.clone())
        .collect();
    assert!(!rerun.contains(&"lab-t001".to_string()), "{rerun:?}");
    assert_eq!(rerun.last().map(String::as_str), Some("lab-t008"));
}

/// Issue 32: each trial's GPUs are checked when it starts. A GPU of the sweep's pool that
/// another container took since the sweep began (a member `up` started) is left alone: the
/// slot moves to a GPU nobody holds, not one of the sweep's own, and says so; with none
/// free the trial shares it, said too.
#[test]
fn a_slot_whose_gpu_another_container_took_moves_to_a_free_one() {
    let host = gpu_host(4);
    let engine = engine();
    engine.add_container(
        "lab-ana",
        "running",
        &[
            (crate::labels::GPUS, "device=1".to_string()),
            (crate::labels::TEAM, "lab".to_string()),
            (crate::labels::MEMBER, "ana".to_string()),
        ],
    );
    let mut run = sweep_run(&sweep_text(2, "gpus: [0, 1, 2]\n"), &host);
    run.nvidia = Some(host.nvidia.clone());
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    assert_eq!(finished.unwrap().counts.done, 2);
    let gpus_of = |trial: &str| {
        engine
            .state
            .borrow()
            .created
            .iter()
            .find(|plan| plan.name == trial)
            .and_then(|plan| match &plan.gpu {
                crate::plan::gpus::GpuPlan::Request(request) => Some(request.device_ids.join(",")),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(gpus_of("lab-t001"), "0");
    assert_eq!(gpus_of("lab-t002"), "3");
    let said = |text: &str| {
        notes
            .iter()
            .any(|note| matches!(note, Note::Said(said) if said.contains(text)))
    };
    assert!(
        said("GPU 1 of slot 1 is held by another container now (GPU 1 by `lab-ana` (team lab, member ana)): its trials run on 3 from now on"),
        "{notes:?}"
    );

    // Every other GPU held: the trial shares GPU 1, and says so.
    let host = gpu_host(4);
    let engine = super::tests::engine();
    engine.add_container(
        "lab-ana",
        "running",
        &[(crate::labels::GPUS, "device=1,3".to_string())],
    );
    let mut run = sweep_run(&sweep_text(2, "gpus: [0, 1, 2]\n"), &host);
    run.nvidia = Some(host.nvidia.clone());
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    assert_eq!(finished.unwrap().counts.done, 2);
    assert!(
        notes.iter().any(|note| matches!(note, Note::Said(said) if said.contains("no other GPU is free: its trial shares it"))),
        "{notes:?}"
    );
}

/// Issue 45: a trial of another sweep (or any container) that claimed the slot's GPU in
/// the same instant as this trial's create keeps it: this trial lets it go, and its slot
/// moves to a GPU nobody holds, said as when the GPU was taken earlier.
#[test]
fn a_gpu_another_command_claimed_in_the_same_instant_moves_the_slot() {
    let host = gpu_host(4);
    let engine = engine();
    engine
        .state
        .borrow_mut()
        .created_beside
        .push_back(crate::engine::ContainerFacts {
            name: "other-t001".to_string(),
            state: "running".to_string(),
            labels: [
                (crate::labels::GPUS.to_string(), "device=0".to_string()),
                (crate::labels::SWEEP.to_string(), "other".to_string()),
                (crate::labels::TRIAL.to_string(), "t001".to_string()),
            ]
            .into(),
            ..Default::default()
        });
    let mut run = sweep_run(&sweep_text(1, "gpus: [0, 1, 2]\n"), &host);
    run.nvidia = Some(host.nvidia.clone());
    let (finished, notes) = go(Session::quiet(&engine, &host), &run);
    assert_eq!(finished.unwrap().counts.done, 1);
    let created: Vec<(String, String)> = engine
        .state
        .borrow()
        .created
        .iter()
        .map(|plan| {
            let gpus = match &plan.gpu {
                crate::plan::gpus::GpuPlan::Request(request) => request.device_ids.join(","),
                other => format!("{other:?}"),
            };
            (plan.name.clone(), gpus)
        })
        .collect();
    assert_eq!(
        created,
        [
            ("lab-t001".to_string(), "0".to_string()),
            ("lab-t001".to_string(), "3".to_string())
        ]
    );
    assert!(
        notes.iter().any(|note| matches!(note, Note::Said(said) if said == "GPU 0 of slot 0 is held by another container now (GPU 0 by `other-t001` (sweep other, trial t001)): its trials run on 3 from now on")),
        "{notes:?}"
    );
}

/// Issue 45: a trial the kernel killed for memory is said as such, with the sweep file's
/// setting that raises its limit; one killed otherwise (137 alone) says nothing of memory.
#[test]
fn a_trial_killed_for_memory_names_the_limit_to_raise() {
    for (oom, said) in [(true, true), (false, false)] {
        let host = gpu_host(1);
        let engine = engine();
        {
            let mut state = engine.state.borrow_mut();
            state.exits.insert("lab-t001".into(), [137].into());
            state.out_of_memory = oom;
        }
        let run = sweep_run(&sweep_text(1, "memory: 512m\n"), &host);
        let (finished, notes) = go(Session::quiet(&engine, &host), &run);
        assert_eq!(finished.unwrap().counts.failed, 1);
        let expected = "trial t001: the kernel killed it for using more than its memory limit (512 MiB); raise the limit (`memory: 1g` in the sweep file), or have the job use less (a smaller batch)";
        assert_eq!(
            notes
                .iter()
                .any(|note| matches!(note, Note::Said(text) if text == expected)),
            said,
            "{notes:?}"
        );
    }
}

#[test]
fn a_running_trial_s_reports_are_read_on_as_they_grow_and_its_value_is_the_summary_s() {
    let host = FakeHost::new();
    let dir = Path::new("/runs/lab/t001");
    let lines = [
        "{\"epoch\": 1, \"val_loss\": 0.5}\n",
        "{\"step\": 10, \"loss\": 0.9}\n",
        "{\"epoch\": 2, \"val_loss\": 0.3}\n",
        "{\"epoch\": 3, \"val_loss\": 0.3}\n",
        "{\"epoch\": 4, \"val_loss\": 0.4}\n",
    ];
    for mode in [crate::sweep::Mode::Min, crate::sweep::Mode::Max] {
        for pick in [crate::sweep::Pick::Last, crate::sweep::Pick::Best] {
            let objective = crate::sweep::Objective {
                metric: "val_loss".into(),
                mode,
                pick,
            };
            host.write_file(&dir.join("metrics.jsonl"), b"").unwrap();
            // Before metrics.jsonl has a report, stdout's `name=value` lines are the reports.
            host.write_file(&dir.join("stdout.log"), b"val_loss=0.7\n")
                .unwrap();
            let mut reports = folder::Reports::default();
            let early = reports.read_more(&host, dir, Some(&objective)).unwrap();
            assert_eq!(
                (early.first, early.points.len(), reports.value()),
                (0, 1, Some(0.7))
            );
            let mut all = Vec::new();
            for (number, line) in lines.iter().enumerate() {
                host.append_file(&dir.join("metrics.jsonl"), line.as_bytes(), false)
                    .unwrap();
                let new = reports.read_more(&host, dir, Some(&objective)).unwrap();
                // metrics.jsonl's first report starts the reports over.
                assert_eq!((new.first, new.points.len()), (number, 1));
                all.extend(new.points);
                let summary = crate::sweep::metrics::MetricsSummary::of(&all)
                    .pick(&objective)
                    .map(|picked| picked.value);
                assert_eq!(reports.value(), summary, "{mode:?} {pick:?} after {number}");
            }
            assert!(reports.read_more(&host, dir, Some(&objective)).is_none());
            // Written anew: read from its start, the value with it.
            host.write_file(&dir.join("metrics.jsonl"), lines[4].as_bytes())
                .unwrap();
            let new = reports.read_more(&host, dir, Some(&objective)).unwrap();
            assert_eq!((new.first, reports.value()), (0, Some(0.4)));
        }
    }
}
