//! Sweeps that learn, on the real Engine.
//!
//! `early_stop:`: a sweep where half the configurations diverge (they
//! report a low `acc` from their first epoch) has those trials stopped by ASHA at the
//! first rung: their containers are gone, the next trials take their slots, their
//! folders and curves are kept, and the journal and the results say why. Then the same
//! sweep interrupted with Ctrl-C right after its first stop and run again: the stopped
//! trial is never restarted and the decisions are those of the uninterrupted run.
//!
//! `tpe:`: a seeded sweep run one trial at a time proposes each trial from the ones that
//! ended, and proposes the same trials when the same file runs again from scratch.

mod common;

use std::path::Path;
use std::time::Duration;

use common::sweep::{journal, starts, sweep_containers, sweep_guard};
use common::{spawn_tfimg, tfimg, unique, wait_for};

const HANG: Duration = Duration::from_secs(600);

/// Six trials, two at a time, six epochs of a second each. The good ones (t001, t003,
/// t005) report acc 0.9 from their first second; the diverging ones (t002, t004, t006)
/// report 0.1, two seconds late, so the good one beside them is always at the rung
/// first. ASHA's rungs: epochs 1, 2 and 4 of 6, each keeping the top half.
fn diverging_sweep(name: &str) -> tempfile::TempDir {
    let trials: Vec<String> = (1..=6)
        .map(|i| {
            let (delay, acc) = if i % 2 == 1 { (0, 0.9) } else { (2, 0.1) };
            format!("  - {{i: {i}, delay: {delay}, acc: {acc}}}\n")
        })
        .collect();
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\n\
         command: [sh, -c, \"sleep {{delay}}; for e in 1 2 3 4 5 6; do echo epoch=$e acc={{acc}}; sleep 1; done # {{i}}\"]\n\
         trials:\n{}max_parallel: 2\nobjective: {{metric: acc, mode: max}}\n\
         early_stop: {{rule: asha, max_epochs: 6, grace: 1, reduction: 2, brackets: 1}}\n",
        trials.concat()
    );
    common::scratch(&[("sweep.yaml", &text)])
}

/// The trials the journal says were stopped early, with their value and the cutoff, by
/// trial.
fn stops(dir: &Path) -> Vec<(String, f64, f64)> {
    let mut stops: Vec<(String, f64, f64)> = journal(dir)
        .iter()
        .filter(|event| event["event"] == "trial_judged" && event["judgement"]["stop"] == true)
        .map(|event| {
            let judgement = &event["judgement"];
            (
                event["trial"].as_str().unwrap().to_string(),
                judgement["value"].as_f64().unwrap(),
                judgement["cutoff"].as_f64().unwrap(),
            )
        })
        .collect();
    stops.sort_by(|a, b| a.0.cmp(&b.0));
    stops
}

/// Where in the journal the first `event` of `trial` is.
fn position(events: &[serde_json::Value], event: &str, trial: &str) -> usize {
    events
        .iter()
        .position(|e| e["event"] == event && e["trial"] == trial)
        .unwrap_or_else(|| panic!("no {event} of {trial}"))
}

/// How many attempts of `trial` started.
fn started(dir: &Path, trial: &str) -> usize {
    starts(dir).get(trial).copied().unwrap_or(0)
}

#[test]
fn the_diverging_half_is_stopped_at_the_first_rung_and_its_slots_go_to_the_next_trials() {
    let name = unique("t-asha").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = diverging_sweep(&name);
    let dir = folder.path().join("runs").join(&name);
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let stopped: Vec<String> = stops(&dir).into_iter().map(|(trial, ..)| trial).collect();
    assert_eq!(stopped, ["t002", "t004", "t006"], "{}", run.tail());
    for trial in ["t002", "t004", "t006"] {
        // The results say why, and the line the run printed when it stopped it.
        let row = run
            .stdout
            .lines()
            .find(|line| line.starts_with(trial))
            .unwrap();
        assert!(
            row.ends_with("stopped early (epoch 1: 0.1 < rung 0.9)"),
            "{}",
            run.stdout
        );
        assert!(
            run.stderr.contains(&format!(
                "{trial} is stopped early (epoch 1: 0.1 < rung 0.9)"
            )),
            "{}",
            run.stderr
        );
        // Its folder and its curve are kept; it ran far less than its six epochs.
        let log = std::fs::read_to_string(dir.join(trial).join("stdout.log")).unwrap();
        assert!(log.starts_with("epoch=1 acc=0.1\n"), "{log}");
        assert!(!log.contains("epoch=6"), "{log}");
        assert_eq!(started(&dir, trial), 1);
    }
    for trial in ["t001", "t003", "t005"] {
        let row = run
            .stdout
            .lines()
            .find(|line| line.starts_with(trial))
            .unwrap();
        assert!(row.ends_with("done"), "{}", run.stdout);
    }
    // t003 took t002's slot while t001 still ran: the stop gave the slot on at once.
    let events = journal(&dir);
    assert!(
        position(&events, "trial_finished", "t002") < position(&events, "trial_started", "t003")
    );
    assert!(
        position(&events, "trial_started", "t003") < position(&events, "trial_finished", "t001")
    );
    assert!(
        run.stderr
            .contains("3 of 6 trials done, 0 failed, 3 stopped early"),
        "{}",
        run.stderr
    );
    assert_eq!(sweep_containers(&name).trim(), "", "no container is left");
    // `status` tallies them apart from the trials stopped by Ctrl-C.
    let status = tfimg(folder.path(), &["sweep", "status", &format!("runs/{name}")]);
    assert_eq!(status.code, 0, "{}", status.tail());
    assert!(
        status.stdout.contains("3 done, 3 stopped early"),
        "{}",
        status.stdout
    );
}

#[test]
fn ctrl_c_after_the_first_stop_and_running_again_makes_the_same_decisions() {
    let name = unique("t-asha-resume").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = diverging_sweep(&name);
    let dir = folder.path().join("runs").join(&name);
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]);
    wait_for("t002 stopped early and t003 running", HANG, || {
        stops(&dir).iter().any(|(trial, ..)| trial == "t002") && started(&dir, "t003") == 1
    });
    running.signal(libc::SIGINT);
    let interrupted = running.finish(HANG);
    assert_eq!(interrupted.code, 130, "{}", interrupted.tail());
    assert_eq!(sweep_containers(&name).trim(), "");

    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        started(&dir, "t002"),
        1,
        "a trial stopped early never runs again"
    );
    let stopped = stops(&dir);
    assert_eq!(
        stopped,
        [
            ("t002".to_string(), 0.1, 0.9),
            ("t004".to_string(), 0.1, 0.9),
            ("t006".to_string(), 0.1, 0.9)
        ]
    );
    let row = run
        .stdout
        .lines()
        .find(|line| line.starts_with("t002"))
        .unwrap();
    assert!(
        row.ends_with("stopped early (epoch 1: 0.1 < rung 0.9)"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("going on with sweep"), "{}", run.tail());
    assert_eq!(sweep_containers(&name).trim(), "");
}

/// Six TPE trials one at a time over `x` and `aug`; each reports `acc`, best at `x` =
/// 0.8 with `aug: high`.
fn tpe_sweep(name: &str) -> tempfile::TempDir {
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\n\
         command: [python3, -c, \"x = {{x}}; aug = '{{aug}}'; print('acc=%s' % (1 - (x - 0.8) ** 2 - (0.3 if aug == 'low' else 0)))\"]\n\
         tpe: {{count: 6, seed: 7, startup: 2, x: {{uniform: [0, 1]}}, aug: {{choice: [low, high]}}}}\n\
         max_parallel: 1\nobjective: {{metric: acc, mode: max}}\n"
    );
    common::scratch(&[("sweep.yaml", &text)])
}

/// The params each `trial_proposed` event gave, in journal order, as `t001 {...}`.
fn proposed(dir: &Path) -> Vec<String> {
    journal(dir)
        .iter()
        .filter(|event| event["event"] == "trial_proposed")
        .map(|event| format!("{} {}", event["trial"].as_str().unwrap(), event["params"]))
        .collect()
}

#[test]
fn a_seeded_tpe_sweep_one_at_a_time_proposes_the_same_trials_on_a_second_run() {
    let name = unique("t-tpe").to_lowercase();
    let _guard = sweep_guard(&name);
    let first = tpe_sweep(&name);
    let run = tfimg(first.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let dir = first.path().join("runs").join(&name);
    let once = proposed(&dir);
    assert_eq!(once.len(), 6, "{once:?}");
    // Two random draws, then each proposal learned from every trial that ended before it.
    assert!(
        run.stderr.contains("t002 is a random draw: {x: "),
        "{}",
        run.stderr
    );
    for (trial, ended) in [("t003", 2), ("t006", 5)] {
        let said = format!("{trial} is proposed by TPE from {ended} ended trial(s): {{x: ");
        assert!(run.stderr.contains(&said), "{said}\n{}", run.stderr);
    }
    // Each trial ran the params proposed for it: its params.json and its acc.
    for line in &once {
        let (trial, params) = line.split_once(' ').unwrap();
        let params: serde_json::Value = serde_json::from_str(params).unwrap();
        let written = std::fs::read_to_string(dir.join(trial).join("params.json")).unwrap();
        let written: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(written, params, "{trial}");
        let x = params["x"].as_f64().unwrap();
        let low = if params["aug"] == "low" { 0.3 } else { 0.0 };
        let stdout = std::fs::read_to_string(dir.join(trial).join("stdout.log")).unwrap();
        let acc: f64 = stdout.trim().strip_prefix("acc=").unwrap().parse().unwrap();
        assert!(
            (acc - (1.0 - (x - 0.8).powi(2) - low)).abs() < 1e-9,
            "{trial}: {stdout}"
        );
    }
    // The results have every proposed trial, in trial order, all done.
    let results = tfimg(
        first.path(),
        &["sweep", "results", &format!("runs/{name}"), "--json"],
    );
    assert_eq!(results.code, 0, "{}", results.tail());
    let results: serde_json::Value = serde_json::from_str(&results.stdout).unwrap();
    let rows = results["trials"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "{results}");
    assert!(rows.iter().all(|row| row["status"] == "done"), "{results}");

    // The same file from scratch in another folder: the same six trials.
    let second = tpe_sweep(&name);
    let run = tfimg(second.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(proposed(&second.path().join("runs").join(&name)), once);
    assert_eq!(sweep_containers(&name).trim(), "", "no container is left");
}

/// Three trials writing `metrics.jsonl` with Python's `json.dumps`, one line per epoch of
/// `losses`: t002's `val_loss` is the lowest until it turns NaN at its last epoch (its
/// saved model is NaN), written bare, as `json.dumps` writes it.
fn nan_sweep(name: &str) -> tempfile::TempDir {
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\n\
         command: [python3, -c, \"import json, os; path = os.path.join(os.environ['TFIMG_TRIAL_DIR'], 'metrics.jsonl'); out = open(path, 'a'); [out.write(json.dumps({{{{'epoch': e + 1, 'val_loss': float(v)}}}}) + chr(10)) for e, v in enumerate('{{losses}}'.split(':'))]\"]\n\
         params:\n  losses: ['0.5:0.4:0.3', '0.2:0.025:nan', '0.9:0.8:0.7']\n\
         max_parallel: 2\nobjective: {{metric: val_loss, mode: min}}\n"
    );
    common::scratch(&[("sweep.yaml", &text)])
}

#[test]
fn a_trial_whose_metric_turns_nan_is_diverged_ranked_last_and_never_best() {
    let name = unique("t-nan").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = nan_sweep(&name);
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The table: t001 (0.3) best, t003 (0.7), then t002, diverged.
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .collect();
    let order: Vec<&str> = rows
        .iter()
        .map(|row| row.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(order, ["t001", "t003", "t002"], "{}", run.stdout);
    assert!(
        rows[2].contains("NaN") && rows[2].trim_end().ends_with("diverged"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("best: t001 last val_loss=0.3 "),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("3 of 3 trials done (1 diverged: NaN or infinite `val_loss`), 0 failed"),
        "{}",
        run.stderr
    );
    let results = tfimg(folder.path(), &["sweep", "results", &name, "--json"]);
    assert_eq!(results.code, 0, "{}", results.tail());
    let results: serde_json::Value = serde_json::from_str(&results.stdout).unwrap();
    assert_eq!(results["best"], "t001", "{results}");
    let t002 = &results["trials"][2];
    assert_eq!(t002["trial"], "t002", "{results}");
    assert_eq!(t002["status"], "diverged", "{results}");
    let status = tfimg(folder.path(), &["sweep", "status", &name]);
    assert_eq!(status.code, 0, "{}", status.tail());
    assert!(
        status.stdout.contains("1 diverged, 2 done"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_misspelled_objective_metric_is_warned_about_at_the_first_report_while_the_trial_runs() {
    let name = unique("t-misspelt").to_lowercase();
    let _guard = sweep_guard(&name);
    // The script reports `val_acc`; the file's objective is `val_accuracy`.
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\n\
         command: [sh, -c, \"echo epoch=1 val_acc=0.5 loss=1.2; sleep 300 # {{n}}\"]\n\
         params: {{n: [1, 2]}}\nmax_parallel: 1\nobjective: {{metric: val_accuracy, mode: max}}\n"
    );
    let folder = common::scratch(&[("sweep.yaml", &text)]);
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml", "--json"], &[]);
    let mut said = Vec::new();
    let warned = loop {
        let line = running
            .stdout_lines
            .recv_timeout(HANG)
            .expect("a warning while t001 runs, before it ends");
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        if event["event"] == "objective_unreported" {
            break event;
        }
        if event["event"] == "status" {
            said.push(event["message"].as_str().unwrap().to_string());
        }
    };
    let line = said.last().map(String::as_str).unwrap_or_default();
    assert!(
        line.starts_with(
            "warning: t001 reported `loss`, `val_acc` but not `val_accuracy`, the objective's metric"
        ) && line.contains("did you mean `val_acc`?"),
        "{said:?}"
    );
    assert_eq!(warned["trial"], "t001", "{warned}");
    assert_eq!(warned["metric"], "val_accuracy", "{warned}");
    assert_eq!(
        warned["reported"],
        serde_json::json!(["loss", "val_acc"]),
        "{warned}"
    );
    // Said at t001's first report: t001 is still running (it sleeps 300 s after it).
    let dir = folder.path().join("runs").join(&name);
    assert_eq!(starts(&dir).len(), 1, "only t001 started");
    assert_eq!(sweep_containers(&name).lines().count(), 1);
    running.signal(libc::SIGINT);
    let run = running.finish(HANG);
    assert_eq!(run.code, 130, "{}", run.tail());
    assert_eq!(sweep_containers(&name).trim(), "");
}
