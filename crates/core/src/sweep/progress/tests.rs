//! What a sweep tells the user, as the user reads it: each note's line and JSON event,
//! the end of a run, the dry run's last words and `status`'s text.

use std::path::Path;

use super::*;
use crate::notice::Notice;
use crate::sweep::journal::Replay;
use crate::sweep::parse;
use crate::sweep::unwatched::{unwatched_lines, Seen};

fn sweep(rest: &str) -> Sweep {
    let text = format!(
        "sweep: lab\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"echo acc={{n}}\"]\nparams: {{n: [1, 2, 3]}}\nobjective: {{metric: acc, mode: max}}\n{rest}"
    );
    parse(&text, "sweep.yaml", Path::new("/lab")).unwrap()
}

fn ended(outcome: Outcome, attempt: u32, exit_code: Option<i64>, away: bool) -> Note {
    Note::Ended {
        trial: "t002".into(),
        attempt,
        outcome,
        exit_code,
        seconds: 83.0,
        metric: Some(("last acc".into(), 0.91)),
        away,
    }
}

#[test]
fn a_start_says_where_the_trial_runs_and_which_attempt_it_is() {
    let sweep = sweep("");
    let note = |gpus: &[&str], attempt| Note::Started {
        trial: "t001".into(),
        attempt,
        gpus: gpus.iter().map(|gpu| gpu.to_string()).collect(),
        container: "lab-t001".into(),
    };

    let told_cpu = describe(&note(&[], 1), &sweep);
    let told_gpus = describe(&note(&["0", "2"], 2), &sweep);

    assert_eq!(told_cpu.line, Notice::status("t001 started on the CPU"));
    assert_eq!(
        told_gpus.line,
        Notice::status("t001 started on GPU 0,2 (attempt 2)")
    );
    assert!(!told_gpus.live);
    assert_eq!(told_gpus.event, "trial_started");
    assert_eq!(
        told_gpus.json,
        serde_json::json!({"trial": "t001", "attempt": 2, "gpus": ["0", "2"], "container": "lab-t001"})
    );
}

#[test]
fn an_end_says_how_it_ended_and_what_ranks_it() {
    let sweep = sweep("retries: 2\n");
    let line = |note: Note| describe(&note, &sweep).line.text().to_string();

    assert_eq!(
        line(ended(Outcome::Done, 1, Some(0), false)),
        "t002 done in 1m23s: last acc 0.91"
    );
    assert_eq!(
        line(ended(Outcome::Done, 2, Some(0), true)),
        "t002 done (attempt 2) in 1m23s while tfimg was away: last acc 0.91"
    );
    assert_eq!(
        line(ended(Outcome::Retry { retry: 1 }, 1, Some(3), false)),
        "t002 failed (exit 3) after 1m23s; queued again (retry 1 of 2)"
    );
    assert_eq!(
        line(ended(Outcome::Failed, 3, None, false)),
        "t002 failed (its container vanished) after 1m23s: see `/lab/runs/lab/t002/stderr.log`"
    );
    assert_eq!(
        line(ended(Outcome::Stopped, 1, Some(143), false)),
        "t002 stopped after 1m23s"
    );
    let event = describe(
        &ended(Outcome::Retry { retry: 1 }, 1, Some(3), false),
        &sweep,
    );
    assert_eq!(event.event, "trial_ended");
    assert_eq!(event.json["outcome"], "retry");
    assert_eq!(
        event.json["metric"],
        serde_json::json!({"acc": 0.91, "use": "last"})
    );
}

#[test]
fn progress_is_the_live_line_with_the_eta_and_the_running_trials_metrics() {
    let counts = Counts {
        total: 27,
        queued: 12,
        running: 3,
        done: 12,
        failed: 0,
        stopped_early: 0,
        eta_seconds: Some(80),
        running_metrics: vec![("t013".into(), Some(0.91)), ("t014".into(), None)],
    };

    let told = describe(&Note::Progress(counts), &sweep(""));

    assert!(told.live);
    assert_eq!(
        told.line,
        Notice::status(
            "12/27 done · 3 running · 12 queued · 0 failed · ETA 1m20s · t013 0.91 · t014 …"
        )
    );
    assert_eq!(told.event, "progress");
    assert_eq!(
        told.json,
        serde_json::json!({"total": 27, "queued": 12, "running": 3, "done": 12, "failed": 0, "stopped_early": 0, "eta_seconds": 80})
    );
}

#[test]
fn a_run_that_hit_max_failed_or_had_a_failure_fails() {
    let sweep = sweep("");
    let finished = |reason, failed| Finished {
        reason,
        counts: Counts {
            total: 3,
            done: 3 - failed,
            failed,
            ..Counts::default()
        },
        stopped_by: None,
        file: "lab.yaml".into(),
    };

    let clean = finished(StopReason::Finished, 0);
    let one_failed = finished(StopReason::Finished, 1);
    let early = finished(StopReason::MaxFailed, 2);

    assert!(!clean.failed());
    assert!(one_failed.failed());
    assert!(early.failed());
    assert_eq!(
        clean.closing_lines(&sweep, &no_results()),
        ["sweep `lab`: 3 of 3 trials done, 0 failed; results in `/lab/runs/lab`"]
    );
    assert_eq!(
        early.closing_lines(&sweep, &no_results()),
        [
            "sweep `lab`: 1 of 3 trials done, 2 failed; results in `/lab/runs/lab`",
            "error: the sweep stopped early: `max_failed` trials failed",
        ]
    );
}

#[test]
fn a_run_stopped_by_sweep_stop_fails_and_says_who_stopped_it_and_how_to_go_on() {
    let sweep = sweep("");
    let stopped = Finished {
        reason: StopReason::Stopped,
        counts: Counts {
            total: 5,
            done: 1,
            stopped_early: 1,
            ..Counts::default()
        },
        stopped_by: Some("ada (uid 1000) at 2026-11-28 13:04:05 UTC".into()),
        file: "lab.yaml".into(),
    };

    assert!(stopped.failed());
    assert_eq!(
        stopped.closing_lines(&sweep, &no_results()),
        [
            "sweep `lab`: 1 of 5 trials done, 0 failed, 1 stopped early; results in `/lab/runs/lab`",
            "error: sweep `lab` was stopped by `tfimg sweep stop`, asked by ada (uid 1000) at 2026-11-28 13:04:05 UTC: its trial containers are removed and its results kept",
            "hint: `tfimg sweep lab.yaml` goes on with the 3 trial(s) not done",
        ]
    );
    assert_eq!(
        stopped.json(&no_results())["stopped_by"],
        "ada (uid 1000) at 2026-11-28 13:04:05 UTC"
    );
}

#[test]
fn the_dry_run_says_what_would_run_where_and_that_nothing_was_created() {
    let sweep = sweep("");

    let lines = dry_run_lines(&sweep, 3, 2);

    assert_eq!(
        lines,
        [
            "dry run of sweep `lab`: 3 trial(s) (grid 3) on 2 slot(s), the CPU, from image tfimg/cpu-headless:2.9.3; nothing was created",
            "results would go to `/lab/runs/lab`",
        ]
    );
}

#[test]
fn status_says_how_to_go_on_only_when_nothing_else_is_said() {
    let sweep = sweep("");
    let results = crate::sweep::results::results(
        &sweep.trials(),
        &Replay::default(),
        &BTreeMap::new(),
        sweep.objective.as_ref(),
        None,
    );
    let unwatched = [Unwatched {
        trial: "t001".into(),
        attempt: 1,
        container: "lab-t001".into(),
        seen: Seen::Running,
        adopted: false,
    }];
    let lines = unwatched_lines("lab", &unwatched, None);

    let quiet = status_text(&results, "lab", "runs/lab", (false, 0), &[]);
    let watched = status_text(&results, "lab", "runs/lab", (true, 0), &[]);
    let with_lines = status_text(&results, "lab", "runs/lab", (false, 0), &lines);

    assert_eq!(
        quiet,
        "\nsweep `lab` in `runs/lab`: 3 queued; no tfimg is running it\n`tfimg sweep FILE` goes on with it\n"
    );
    assert_eq!(
        watched,
        "\nsweep `lab` in `runs/lab`: 3 queued; its tfimg is running it\n"
    );
    assert_eq!(
        with_lines,
        "\nsweep `lab` in `runs/lab`: 3 queued; no tfimg is running it\nrunning while no tfimg watches them: t001; `tfimg sweep FILE` watches them again, `tfimg sweep stop lab` stops them\n"
    );
    let json = status_json(&results, "lab", (false, 0), &unwatched, Some("no daemon"));
    assert_eq!(json["tally"], serde_json::json!({"queued": 3}));
    assert_eq!(json["unwatched"][0]["state"], "running");
    assert_eq!(json["unreached"], "no daemon");
    // `tpe:` trials not proposed yet are counted, and the sweep is not over.
    assert_eq!(
        status_text(&no_results(), "lab", "runs/lab", (false, 5), &[]),
        "\nsweep `lab` in `runs/lab`: 5 to propose; no tfimg is running it\n`tfimg sweep FILE` goes on with it\n"
    );
    let json = status_json(&results, "lab", (false, 2), &[], None);
    assert_eq!(
        json["tally"],
        serde_json::json!({"queued": 3, "to propose": 2})
    );
}

fn no_results() -> Results {
    Results {
        objective: None,
        param_names: Vec::new(),
        rows: Vec::new(),
    }
}

#[test]
fn a_tpe_dry_run_shows_its_random_draws_and_says_the_rest_are_proposed_as_it_runs() {
    let text = "sweep: lab\nimage: tfimg/cpu-headless:2.9.3\ncommand: [python, \"{lr}\"]\ntpe: {count: 12, seed: 7, lr: {loguniform: [1e-5, 1e-2]}}\nobjective: {metric: acc, mode: max}\n";
    let sweep = crate::sweep::parse(text, "sweep.yaml", std::path::Path::new("/lab")).unwrap();
    let trials = sweep.trials();
    assert_eq!(trials.len(), 4);

    let lines = dry_run_lines(&sweep, trials.len(), 1);

    assert_eq!(
        lines,
        [
            "dry run of sweep `lab`: 12 trial(s) (tpe 12 (seed 7)) on 1 slot(s), the CPU, from image tfimg/cpu-headless:2.9.3; nothing was created",
            "the 4 above are random draws; t005 to t012 are proposed by TPE from the trials that ended, as slots free up",
            "results would go to `/lab/runs/lab`",
        ]
    );
}
