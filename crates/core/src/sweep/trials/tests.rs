use std::path::Path;

use super::*;
use crate::sweep::parse;

fn sweep(text: &str) -> Sweep {
    parse(text, "sweep.yaml", Path::new("/lab")).unwrap()
}

#[test]
fn a_grid_varies_its_last_param_fastest_with_stable_ids() {
    let sweep = sweep(concat!(
        "sweep: lab\nspec: x\n",
        "command: [python, train.py, --lr, \"{lr}\", \"--aug={aug}\"]\n",
        "params:\n  lr: [1e-3, 1e-4]\n  aug: [low, high, \"a b\"]\n",
    ));
    let trials = sweep.trials();
    let summary: Vec<String> = trials
        .iter()
        .map(|trial| format!("{} {}", trial.id, trial.command_line()))
        .collect();
    assert_eq!(
        summary,
        [
            "t001 python train.py --lr 0.001 '--aug=low'",
            "t002 python train.py --lr 0.001 '--aug=high'",
            "t003 python train.py --lr 0.001 '--aug=a b'",
            "t004 python train.py --lr 0.0001 '--aug=low'",
            "t005 python train.py --lr 0.0001 '--aug=high'",
            "t006 python train.py --lr 0.0001 '--aug=a b'",
        ]
    );
    assert_eq!(trials[2].command[4], "--aug=a b");
    assert_eq!(trials[5].index, 5);
    assert_eq!(trials[5].param("lr"), Some(&ParamValue::Float(1e-4)));
    assert_eq!(
        trials[2].env,
        [
            ("TFIMG_SWEEP".to_string(), "lab".to_string()),
            ("TFIMG_TRIAL".into(), "t003".into()),
            ("TFIMG_TRIAL_DIR".into(), "/tfimg/trial".into()),
            ("TFIMG_PARAM_LR".into(), "0.001".into()),
            ("TFIMG_PARAM_AUG".into(), "a b".into()),
        ]
    );
    assert_eq!(
        trials[2].params_json(),
        "{\"lr\": 0.001, \"aug\": \"a b\"}\n"
    );
}

#[test]
fn ids_grow_past_999_trials() {
    assert_eq!(trial_id(0, 27), "t001");
    assert_eq!(trial_id(26, 27), "t027");
    assert_eq!(trial_id(0, 1000), "t0001");
    assert_eq!(trial_id(999, 1000), "t1000");
    assert_eq!(container_name("lab", "t001"), "lab-t001");
    assert_eq!(
        container_labels("lab", "t001", 2),
        [
            ("io.tfimg.sweep".to_string(), "lab".to_string()),
            ("io.tfimg.trial".into(), "t001".into()),
            ("io.tfimg.attempt".into(), "2".into()),
        ]
    );
}

#[test]
fn shared_gpus_force_memory_growth_and_the_sweep_env_comes_first() {
    let sweep = sweep(concat!(
        "sweep: lab\nspec: x\ncommand: [\"{n}\"]\n",
        "trials: [{n: 1}, {n: 2}]\n",
        "env: {MODE: fast, TF_FORCE_GPU_ALLOW_GROWTH: \"false\"}\n",
        "gpus: [0]\ntrials_per_gpu: 2\n",
    ));
    let trials = sweep.trials();
    assert_eq!(trials.len(), 2);
    let names: Vec<&str> = trials[1]
        .env
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "MODE",
            "TF_FORCE_GPU_ALLOW_GROWTH",
            "TFIMG_SWEEP",
            "TFIMG_TRIAL",
            "TFIMG_TRIAL_DIR",
            "TFIMG_PARAM_N"
        ]
    );
    assert_eq!(trials[1].env[1].1, "true");
    assert_eq!(trials[1].command, ["2"]);
}

#[test]
fn command_lines_quote_what_a_shell_would_split() {
    let args: Vec<String> = ["python", "-c", "print('hi')", "$HOME", ""]
        .map(String::from)
        .to_vec();
    assert_eq!(command_line(&args), "python -c \"print('hi')\" '$HOME' ''");
}

#[test]
fn a_grid_that_stops_early_runs_shuffled_the_same_every_run_and_a_list_as_listed() {
    let text = |search: &str, early: &str| {
        format!(
            "sweep: lab\nspec: x\ncommand: [python, train.py, \"{{width}}\", \"{{lr}}\"]\n{search}objective: {{metric: acc, mode: max}}\n{early}"
        )
    };
    let grid = "params:\n  width: [32, 128, 512]\n  lr: [1, 2, 3]\n";
    let params = |sweep: &Sweep| -> Vec<String> {
        sweep
            .trials()
            .iter()
            .map(|trial| format!("{} {}", trial.id, trial.params_json().trim()))
            .collect()
    };
    let in_order = sweep(&text(grid, ""));
    let shuffled = sweep(&text(grid, "early_stop: {max_epochs: 9}\n"));
    assert!(!shuffled_grid(&in_order));
    assert!(shuffled_grid(&shuffled));
    let (ordered, drawn) = (params(&in_order), params(&shuffled));
    assert_eq!(ordered[0], r#"t001 {"width": 32, "lr": 1}"#);
    assert_ne!(ordered, drawn);
    // The same combinations, each once, ids in the new order.
    let sets = |lines: &[String]| {
        let mut sets: Vec<String> = lines.iter().map(|line| line[5..].to_string()).collect();
        sets.sort();
        sets
    };
    assert_eq!(sets(&ordered), sets(&drawn));
    let ids: Vec<&str> = drawn.iter().map(|line| &line[..4]).collect();
    assert_eq!(
        ids,
        ["t001", "t002", "t003", "t004", "t005", "t006", "t007", "t008", "t009"]
    );
    // The first three widths are not the file's first three (32, 32, 32): the narrow
    // nets do not come together.
    assert!(
        !drawn[..3]
            .iter()
            .all(|line| line.contains(r#""width": 32"#)),
        "{drawn:?}"
    );
    // Fixed by the sweep's name: the same order every run and in every build (SHA-256,
    // then ChaCha8's specified output).
    assert_eq!(
        params(&sweep(&text(grid, "early_stop: {max_epochs: 9}\n"))),
        drawn
    );
    assert_eq!(
        drawn[..3],
        [
            r#"t001 {"width": 128, "lr": 2}"#.to_string(),
            r#"t002 {"width": 32, "lr": 1}"#.to_string(),
            r#"t003 {"width": 512, "lr": 2}"#.to_string(),
        ]
    );
    // Another sweep over a grid of the same shape runs in an order of its own.
    let other = text(grid, "early_stop: {max_epochs: 9}\n").replace("sweep: lab", "sweep: lab2");
    assert_ne!(params(&sweep(&other))[..3], drawn[..3]);
    // The journal's fingerprint says so: adding `early_stop` to a half-run grid is a
    // change that refuses to resume (its ids would name other params).
    let changes = in_order.fingerprint().changes(&shuffled.fingerprint());
    assert_eq!(
        changes,
        ["`order`: (none) → the grid shuffled, as `early_stop` judges it"]
    );
    // A list runs as listed, with early stopping or not.
    let list =
        "trials:\n  - {width: 512, lr: 1}\n  - {width: 32, lr: 1}\n  - {width: 128, lr: 1}\n";
    let listed = sweep(&text(list, "early_stop: {max_epochs: 9}\n"));
    assert!(!shuffled_grid(&listed));
    assert_eq!(params(&listed)[0], r#"t001 {"width": 512, "lr": 1}"#);
}
