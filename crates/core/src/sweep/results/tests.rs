use std::path::Path;

use super::*;
use crate::notice::Notice;
use crate::sweep::journal::{replay, Event};
use crate::sweep::metrics::{parse_jsonl, MetricsSummary};
use crate::sweep::parse;

/// Five trials of a 5-value grid: t001 done with 0.7, t002 done on its second attempt
/// with 0.9, t003 failed (no metric), t004 running with 0.8 so far, t005 never started.
fn fixture(
    objective: &str,
) -> (
    Vec<Trial>,
    Replay,
    BTreeMap<String, MetricsSummary>,
    Option<Objective>,
) {
    let text = format!(
        "sweep: lab\nspec: x\ncommand: [python, train.py, --aug, \"{{aug}}\"]\nparams: {{aug: [\"a,b\", \"q\\\"q\", low, mid, high]}}\n{objective}"
    );
    let sweep = parse(&text, "sweep.yaml", Path::new("/lab")).unwrap();
    let start = |trial: &str, attempt: u32, gpus: &[&str], time_ms: u64| Event::TrialStarted {
        trial: trial.into(),
        attempt,
        container: format!("lab-{trial}"),
        container_id: "id".into(),
        gpus: gpus.iter().map(|gpu| gpu.to_string()).collect(),
        image: "sha256:1".into(),
        time_ms,
    };
    let end = |trial: &str, attempt: u32, exit_code: i64, time_ms: u64| Event::TrialFinished {
        trial: trial.into(),
        attempt,
        exit_code: Some(exit_code),
        stopped: false,
        time_ms,
    };
    let events = vec![
        start("t001", 1, &["0"], 0),
        end("t001", 1, 0, 65_000),
        start("t002", 1, &["1"], 0),
        end("t002", 1, 137, 1_000),
        start("t002", 2, &["1"], 2_000),
        end("t002", 2, 0, 14_000),
        start("t003", 1, &["0"], 65_000),
        end("t003", 1, 1, 66_000),
        start("t004", 1, &["0", "1"], 66_000),
    ];
    let metrics = BTreeMap::from([
        (
            "t001".to_string(),
            MetricsSummary::of(&parse_jsonl(
                "{\"epoch\": 0, \"val_accuracy\": 0.7}\n{\"epoch\": 1, \"val_accuracy\": 0.6}\n",
            )),
        ),
        (
            "t002".to_string(),
            MetricsSummary::of(&parse_jsonl("{\"epoch\": 0, \"val_accuracy\": 0.9}\n")),
        ),
        (
            "t004".to_string(),
            MetricsSummary::of(&parse_jsonl("{\"val_accuracy\": 0.8}\n")),
        ),
    ]);
    let objective = sweep.objective.clone();
    (sweep.trials(), replay(&events), metrics, objective)
}

#[test]
fn rows_are_sorted_by_the_objective_best_first_trials_without_it_last() {
    let (trials, replay, metrics, objective) =
        fixture("objective: {metric: val_accuracy, mode: max}\n");
    let results = results(
        &trials,
        &replay,
        &metrics,
        objective.as_ref(),
        Some(3_666_000),
    );
    assert_eq!(
        results.header(),
        [
            "TRIAL",
            "AUG",
            "LAST VAL_ACCURACY",
            "EPOCHS",
            "TIME",
            "GPUS",
            "STATUS"
        ]
    );
    assert_eq!(
        results.table_rows(),
        [
            ["t002", "q\"q", "0.9", "1", "12s", "1", "done (attempt 2)"],
            ["t004", "mid", "0.8", "1", "1h00m", "0,1", "running"],
            // Its last report, not its best (0.7 at epoch 0).
            ["t001", "a,b", "0.6", "2", "1m05s", "0", "done"],
            ["t003", "low", "-", "-", "1s", "0", "failed"],
            ["t005", "high", "-", "-", "-", "-", "queued"],
        ]
    );
    assert_eq!(results.best().unwrap().trial, "t002");
    assert_eq!(
        results.best_line().unwrap(),
        "best: t002 last val_accuracy=0.9 (aug=q\"q): python train.py --aug 'q\"q'"
    );

    let (trials, replay, metrics, _) = fixture("");
    let min = Objective {
        metric: "val_accuracy".into(),
        mode: crate::sweep::Mode::Min,
        pick: crate::sweep::Pick::Last,
    };
    let order: Vec<String> = results_order(&super::results(
        &trials,
        &replay,
        &metrics,
        Some(&min),
        None,
    ));
    assert_eq!(order, ["t001", "t004", "t002", "t003", "t005"]);
    let plain = super::results(&trials, &replay, &metrics, None, None);
    assert_eq!(
        results_order(&plain),
        ["t001", "t002", "t003", "t004", "t005"]
    );
    assert_eq!(
        plain.header(),
        ["TRIAL", "AUG", "EPOCHS", "TIME", "GPUS", "STATUS"]
    );
    assert_eq!(plain.best_line(), None);
}

fn results_order(results: &Results) -> Vec<String> {
    results.rows.iter().map(|row| row.trial.clone()).collect()
}

#[test]
fn json_and_csv_carry_the_same_rows() {
    let (trials, replay, metrics, objective) =
        fixture("objective: {metric: val_accuracy, mode: max}\n");
    let results = results(&trials, &replay, &metrics, objective.as_ref(), None);
    let json = results.to_json();
    assert_eq!(json["best"], "t002");
    assert_eq!(
        json["objective"],
        serde_json::json!({"metric": "val_accuracy", "mode": "max", "use": "last"})
    );
    assert_eq!(
        json["trials"][0],
        serde_json::json!({
            "trial": "t002", "params": {"aug": "q\"q"}, "value": 0.9, "epoch": 0.0, "step": null,
            "best": 0.9, "last": 0.9, "epochs": 1, "points": 1, "seconds": 12.0, "gpus": ["1"],
            "status": "done (attempt 2)", "stopped_early": null, "attempt": 2, "exit_code": 0,
            "command": ["python", "train.py", "--aug", "q\"q"],
        })
    );
    assert_eq!(
        json["trials"][1]["seconds"],
        serde_json::Value::Null,
        "running, no time given"
    );
    assert_eq!(
        results.to_csv(),
        concat!(
            "trial,aug,last val_accuracy,epochs,seconds,gpus,status\n",
            "t002,\"q\"\"q\",0.9,1,12,1,done (attempt 2)\n",
            "t004,mid,0.8,1,,\"0,1\",running\n",
            "t001,\"a,b\",0.6,2,65,0,done\n",
            "t003,low,,0,1,0,failed\n",
            "t005,high,,0,,,queued\n",
        )
    );
}

#[test]
fn use_best_ranks_by_each_trial_s_best_report_and_says_its_epoch() {
    let (trials, replay, metrics, objective) =
        fixture("objective: {metric: val_accuracy, mode: max, use: best}\n");
    let results = results(&trials, &replay, &metrics, objective.as_ref(), None);
    assert_eq!(results.header()[2], "BEST VAL_ACCURACY");
    let cells: Vec<(String, String)> = results
        .table_rows()
        .into_iter()
        .map(|row| (row[0].clone(), row[2].clone()))
        .collect();
    assert_eq!(
        cells,
        [
            ("t002", "0.9 (epoch 0)"),
            ("t004", "0.8"),
            ("t001", "0.7 (epoch 0)"),
            ("t003", "-"),
            ("t005", "-"),
        ]
        .map(|(trial, cell)| (trial.to_string(), cell.to_string()))
    );
    assert_eq!(
        results.best_line().unwrap(),
        "best: t002 best val_accuracy=0.9 (epoch 0) (aug=q\"q): python train.py --aug 'q\"q'"
    );
    assert!(results.to_csv().starts_with("trial,aug,best val_accuracy,"));
}

#[test]
fn the_best_trial_is_the_best_value_in_any_row_order() {
    let (trials, replay, metrics, objective) =
        fixture("objective: {metric: val_accuracy, mode: max}\n");
    let mut results = results(&trials, &replay, &metrics, objective.as_ref(), None);
    // As `sweep status` lists them: in trial order, t001 first.
    results.rows.sort_by(|a, b| a.trial.cmp(&b.trial));
    assert_eq!(results.best().unwrap().trial, "t002");
    assert_eq!(results.to_json()["best"], "t002");
    results.rows.reverse();
    assert_eq!(results.best().unwrap().trial, "t002");
    let min = Objective {
        metric: "val_accuracy".into(),
        mode: crate::sweep::Mode::Min,
        pick: crate::sweep::Pick::Last,
    };
    results.objective = Some(min);
    assert_eq!(results.best().unwrap().trial, "t001");
    for row in &mut results.rows {
        row.value = None;
    }
    assert_eq!(results.best(), None);
    assert_eq!(results.to_json()["best"], serde_json::Value::Null);
}

#[test]
fn every_row_says_its_attempt_and_exit_code_in_json() {
    let (trials, replay, metrics, objective) =
        fixture("objective: {metric: val_accuracy, mode: max}\n");
    let json = results(&trials, &replay, &metrics, objective.as_ref(), None).to_json();
    let by_trial = |trial: &str| {
        json["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["trial"] == trial)
            .unwrap()
            .clone()
    };
    let pick = |row: serde_json::Value| {
        (
            row["status"].clone(),
            row["attempt"].clone(),
            row["exit_code"].clone(),
        )
    };
    let json_of = |status: &str, attempt: serde_json::Value, code: serde_json::Value| {
        (serde_json::json!(status), attempt, code)
    };
    use serde_json::{json as j, Value::Null};
    assert_eq!(pick(by_trial("t003")), json_of("failed", j!(1), j!(1)));
    assert_eq!(pick(by_trial("t001")), json_of("done", j!(1), j!(0)));
    assert_eq!(pick(by_trial("t004")), json_of("running", j!(1), Null));
    assert_eq!(pick(by_trial("t005")), json_of("queued", Null, Null));
}

#[test]
fn numbers_and_durations_read_well() {
    assert_eq!(number_text(0.93124), "0.9312");
    assert_eq!(number_text(0.0), "0");
    assert_eq!(number_text(12.5), "12.5");
    assert_eq!(number_text(1.234e-5), "1.234e-5");
    assert_eq!(number_text(-3.0), "-3");
    assert_eq!(duration_text(999), "0s");
    assert_eq!(duration_text(3_599_000), "59m59s");
    assert_eq!(duration_text(7_380_000), "2h03m");
}

#[test]
fn savings_count_the_epochs_the_stopped_trials_did_not_run() {
    use crate::sweep::early_stop::Judgement;
    let row = |trial: &str, epochs: usize, seconds: u64, status: RowStatus| ResultRow {
        trial: trial.into(),
        params: Vec::new(),
        value: None,
        best: None,
        last: None,
        epochs: Some(epochs),
        points: epochs,
        duration_ms: Some(seconds * 1000),
        gpus: vec!["0".into()],
        status,
        attempt: Some(1),
        exit_code: Some(0),
        command: Vec::new(),
    };
    let stopped = RowStatus::StoppedEarly(Judgement::asha_stop(1, 0.1, 0.9));
    let done = RowStatus::Done { attempt: 1 };
    let results = |rows| Results {
        objective: None,
        param_names: Vec::new(),
        rows,
    };
    assert_eq!(results(vec![row("t001", 9, 90, done)]).savings(), None);
    let savings = results(vec![
        row("t001", 9, 90, done),
        row("t002", 1, 10, stopped),
        row("t003", 3, 30, stopped),
        row("t004", 9, 110, done),
        row("t005", 0, 0, RowStatus::Queued),
    ])
    .savings()
    .unwrap();
    assert_eq!(
        (savings.stopped, savings.ended, savings.run, savings.full),
        (2, 4, 22, 36)
    );
    // The done ones took 100 s on average: 90 s and 70 s not spent, one GPU each.
    assert_eq!(savings.seconds_saved, Some(160.0));
    assert_eq!(
        savings.line(),
        "early stopping stopped 2 of 4 trials: 22 of 36 trial-epochs run (39% fewer), about 0.04 GPU-hours saved"
    );
}

/// The trap a new user falls into: the script says `val_acc`, the objective asks for
/// `val_accuracy`; the sweep says so, naming what the trials did report.
#[test]
fn an_objective_no_ended_trial_reports_is_named_with_what_they_did_report() {
    let (trials, replay, metrics, _) = fixture("objective: {metric: val_accuracy, mode: max}\n");
    let named = |objective: &str| {
        let (_, _, _, objective) = fixture(objective);
        let rows = results(&trials, &replay, &metrics, objective.as_ref(), None).rows;
        unreported_objective(objective.as_ref(), &rows, &metrics)
    };
    assert_eq!(
        named("objective: {metric: val_accuracy, mode: max}\n"),
        None
    );
    let warning = named("objective: {metric: val_acc, mode: max}\n").unwrap();
    assert!(matches!(warning, Notice::Warning(_)), "{warning:?}");
    let warning = warning.text();
    assert!(
        warning.starts_with("no trial reported `val_acc`, the objective's metric (they reported `val_accuracy`), so no trial is ranked"),
        "{warning}"
    );
    assert_eq!(named(""), None, "no objective, nothing to warn about");
    let silent = BTreeMap::new();
    let (_, _, _, objective) = fixture("objective: {metric: loss, mode: min}\n");
    let rows = results(&trials, &replay, &silent, objective.as_ref(), None).rows;
    let warning = unreported_objective(objective.as_ref(), &rows, &silent).unwrap();
    let warning = warning.text();
    assert!(
        warning.contains("(they reported no metric at all)"),
        "{warning}"
    );
    // While nothing has ended there is nothing to say yet.
    let queued = replay_of_nothing();
    let rows = results(&trials, &queued, &silent, objective.as_ref(), None).rows;
    assert_eq!(
        unreported_objective(objective.as_ref(), &rows, &silent),
        None
    );
}

fn replay_of_nothing() -> Replay {
    replay(&[])
}
