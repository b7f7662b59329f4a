use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

const FILE: &str = "sweep.yaml";

fn parse_text(text: &str) -> Result<Sweep, SpecError> {
    parse(text, FILE, Path::new("/lab"))
}

/// `error` as printed, then its hint.
fn error(text: &str) -> (String, String) {
    let error = parse_text(text).expect_err("the file is refused");
    (error.to_string(), error.hint)
}

/// A valid head: name, spec and command using `{lr}`.
fn head(rest: &str) -> String {
    format!("sweep: lab\nspec: cpu-headless\ncommand: [python, train.py, \"{{lr}}\"]\n{rest}")
}

#[test]
fn the_examples_parse_into_27_trials() {
    // The repository's examples, embedded: the core's tests read no files. The folder
    // they are read from is only where their runs go.
    let examples = Path::new("/lab/examples/sweep");
    for (file, text, gpus) in [
        (
            "sweep.yaml",
            include_str!("../../../../examples/sweep/sweep.yaml"),
            GpuPool::Cpu,
        ),
        (
            "sweep-gpu.yaml",
            include_str!("../../../../examples/sweep/sweep-gpu.yaml"),
            GpuPool::Devices(vec!["0".into(), "1".into(), "2".into()]),
        ),
    ] {
        let sweep = parse(text, file, examples).unwrap();
        assert_eq!(sweep.search.count(), 27, "{file}");
        assert_eq!(sweep.search.describe(), "grid 3 × 3 × 3");
        assert_eq!(sweep.param_names(), ["lr", "wd", "aug"]);
        assert_eq!(sweep.pool.gpus, gpus);
        assert_eq!(sweep.retries, 1);
        assert_eq!(
            sweep.objective,
            Some(Objective {
                metric: "val_accuracy".into(),
                mode: Mode::Max,
                pick: Pick::Last,
            })
        );
        assert!(sweep.warnings.is_empty(), "{:?}", sweep.warnings);
        assert_eq!(sweep.output, examples.join("runs").join(&sweep.name));
    }
}

#[test]
fn defaults_and_every_field() {
    let sweep = parse_text(&head(concat!("image: x\n", "params: {lr: [0.1]}\n",))).unwrap_err();
    assert_eq!(
        sweep.to_string(),
        "`sweep.yaml`:4:1: the sweep names both a `spec` and an `image`"
    );

    let sweep = parse_text(concat!(
        "sweep: lab-2\n",
        "image: tfimg/cpu-headless:2.9.3\n",
        "command: [python, train.py, --lr, \"{lr}\", 5]\n",
        "mounts: [./code:/tf/code:ro]\n",
        "env: {MODE: fast, LEVEL: 3, ON: true}\n",
        "params: {lr: [0.1, 0.01]}\n",
        "gpus: all\n",
        "gpus_per_trial: 2\n",
        "cpus_per_trial: 1.5\n",
        "memory: 8g\n",
        "shm_size: 1g\n",
        "max_parallel: 4\n",
        "retries: 2\n",
        "max_failed: 3\n",
        "objective: {metric: loss, mode: min}\n",
        "output: ../results\n",
    ))
    .unwrap();
    assert_eq!(
        sweep.source,
        ImageSource::Image {
            reference: "tfimg/cpu-headless:2.9.3".into(),
            location: yaml::location(FILE, (2, 8)),
        }
    );
    assert_eq!(sweep.command.written[4], "5");
    assert_eq!(sweep.mounts, ["./code:/tf/code:ro"]);
    assert_eq!(
        sweep.env,
        [
            ("MODE".into(), "fast".into()),
            ("LEVEL".into(), "3".into()),
            ("ON".into(), "true".into())
        ]
    );
    assert_eq!(sweep.pool.gpus, GpuPool::All);
    assert_eq!(
        (
            sweep.pool.gpus_per_trial,
            sweep.pool.trials_per_gpu,
            sweep.pool.max_parallel
        ),
        (2, 1, Some(4))
    );
    assert_eq!(sweep.limits.nano_cpus, Some(1_500_000_000));
    assert_eq!(sweep.limits.memory, Some(8 << 30));
    assert_eq!(sweep.limits.shm_size, 1 << 30);
    assert_eq!((sweep.retries, sweep.max_failed), (2, Some(3)));
    assert_eq!(sweep.output, PathBuf::from("/results/lab-2"));
    assert_eq!(
        sweep.journal_path(),
        PathBuf::from("/results/lab-2/journal.jsonl")
    );
    assert_eq!(
        sweep.trial_dir("t001"),
        PathBuf::from("/results/lab-2/t001")
    );

    let sweep = parse_text(&head("params: {lr: [0.1]}\n")).unwrap();
    assert_eq!(sweep.pool.gpus, GpuPool::Cpu);
    assert_eq!(sweep.pool.max_parallel, None);
    assert_eq!(
        (sweep.retries, sweep.max_failed, sweep.objective),
        (0, None, None)
    );
    assert_eq!(sweep.limits.shm_size, crate::plan::DEFAULT_SHM);
    assert_eq!(sweep.output, PathBuf::from("/lab/runs/lab"));
}

#[test]
fn names_images_and_commands_are_checked_at_their_place() {
    let cases: Vec<(String, &str, &str)> = vec![
        (
            "sweep: Lab\nspec: x\ncommand: [a]\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:1:8: sweep name `Lab` is not valid",
            "use lowercase letters, digits and `-`, starting with a letter and ending with a letter or digit (it names the trials' containers)",
        ),
        (
            "sweep: lab-\nspec: x\ncommand: [a]\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:1:8: sweep name `lab-` ends with `-`",
            "use lowercase letters, digits and `-`, starting with a letter and ending with a letter or digit (it names the trials' containers)",
        ),
        (
            format!("sweep: {}\nspec: x\ncommand: [a]\nparams: {{lr: [1]}}\n", "a".repeat(41)),
            "`sweep.yaml`:1:8: sweep name `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` is too long (41 characters, at most 40)",
            "trial containers are `<sweep>-t001` and Kubernetes names at most 63 characters: use a shorter name",
        ),
        (
            "sweep: lab\ncommand: [a]\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:1:1: the sweep names no image to run",
            "add `spec: cpu-headless` (a spec name or file) or `image: REFERENCE`",
        ),
        (
            "sweep: lab\nimage: \"a b\"\ncommand: [a]\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:2:8: image reference `a b` is not valid",
            "write an image reference such as `tfimg/cpu-headless:2.9.3`",
        ),
        (
            "sweep: lab\nspec: x\ncommand: []\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:3:10: `command` is empty",
            "write the trial's command with `{name}` for params: `command: [python, train.py, --lr, \"{lr}\"]`",
        ),
        (
            "sweep: lab\nspec: x\ncommand: [python, train.py, --lr, \"{lr}\", --wd, \"{wd}\"]\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:3:49: `{wd}` in the command is not a param",
            "the params are `lr`; write `{{` and `}}` for literal braces",
        ),
        (
            "sweep: lab\nspec: x\ncommand: [python, \"{lr_rate}\"]\nparams: {lr_rte: [1]}\n".into(),
            "`sweep.yaml`:3:19: `{lr_rate}` in the command is not a param",
            "did you mean `{lr_rte}`? The params are `lr_rte`",
        ),
        (
            "sweep: lab\nspec: x\ncommand: [python, \"{lr\"]\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:3:19: `{` in `{lr` is never closed",
            "write `{name}` for a param's value, `{{` and `}}` for literal braces",
        ),
        (
            "sweep: lab\nspec: x\ncommand: [a]\n".into(),
            "`sweep.yaml`:1:1: the sweep defines no trials",
            "add `params:` (a grid: `lr: [0.001, 0.0001]`), `random:` (`count`, `seed` and a distribution per param), `tpe:` (the same, proposed from the trials that ended) or `trials:` (a list of param sets)",
        ),
        (
            "sweep: lab\nspec: x\ncommand: [a]\ncolour: blue\nparams: {lr: [1]}\n".into(),
            "`sweep.yaml`:4:1: unknown field `colour`, expected one of `sweep`, `spec`, `image`, `command`, `mounts`, `env`, `params`, `random`, `tpe`, `trials`, `gpus`, `gpus_per_trial`, `trials_per_gpu`, `cpus_per_trial`, `memory`, `shm_size`, `max_parallel`, `retries`, `max_failed`, `objective`, `early_stop`, `timeout`, `output`",
            yaml::SWEEP.hint,
        ),
    ];
    for (text, message, hint) in cases {
        assert_eq!(
            error(&text),
            (message.to_string(), hint.to_string()),
            "{text}"
        );
    }
}

#[test]
fn params_the_command_never_uses_are_a_warning_at_the_param() {
    let sweep = parse_text(&head("params:\n  lr: [1]\n  seed: [1, 2]\n")).unwrap();
    assert_eq!(
        sweep.warnings.iter().map(Warning::to_string).collect::<Vec<_>>(),
        ["`sweep.yaml`:6:3: the command never uses `{seed}`: the trial gets it only as `TFIMG_PARAM_SEED` and in params.json"]
    );
    let sweep = parse_text(&head("trials:\n  - {lr: 1, seed: 1}\n")).unwrap();
    assert_eq!(sweep.warnings[0].location, yaml::location(FILE, (5, 13)));
}

#[test]
fn mounts_env_limits_and_objective_are_checked_at_their_place() {
    let cases = [
        ("mounts: [\"./a:relative\"]\n", "`sweep.yaml`:4:10: `./a:relative`: the destination `relative` must be an absolute path inside the container"),
        ("mounts: [./a, \"./b:/tfimg/trial/x\"]\n", "`sweep.yaml`:4:15: `./b:/tfimg/trial/x`: `/tfimg/trial/x` is where each trial's own folder is mounted"),
        ("env: {TFIMG_UID: 0}\n", "`sweep.yaml`:4:7: `TFIMG_UID`: `TFIMG_*` variables are set by tfimg"),
        ("env: {\"A B\": 0}\n", "`sweep.yaml`:4:7: `A B` is not a valid variable name"),
        ("env: {A: [1]}\n", "`sweep.yaml`:4:10: `env.A` must be a string, number or boolean"),
        ("cpus_per_trial: 0\n", "`sweep.yaml`:4:17: `cpus_per_trial: 0` is out of range"),
        ("memory: lots\n", "`sweep.yaml`:4:9: `memory: lots` is not a size"),
        ("retries: 1000\n", "`sweep.yaml`:4:10: `retries: 1000` is more than 100"),
        ("retries: -1\n", "`sweep.yaml`:4:10: retries: invalid type: integer `-1`, expected u32"),
        ("max_failed: 0\n", "`sweep.yaml`:4:13: `max_failed: 0` would stop the sweep before any trial fails"),
        ("objective: {metric: \"val acc\", mode: max}\n", "`sweep.yaml`:4:21: metric name `val acc` is not valid"),
        ("objective: {metric: acc, mode: highest}\n", "`sweep.yaml`:4:32: objective.mode: unknown variant `highest`, expected `max` or `min`"),
        ("objective: {metric: acc}\n", "`sweep.yaml`:4:12: objective: missing field `mode`"),
        ("objective: {metric: acc, mode: max, use: final}\n", "`sweep.yaml`:4:42: `objective.use: final` is neither `last` nor `best`"),
        ("objective: {metric: acc, mode: max, use: 2}\n", "`sweep.yaml`:4:42: `objective.use: 2` is neither `last` nor `best`"),
        ("objective: {metric: acc, mode: max, usage: best}\n", "`sweep.yaml`:4:37: objective: unknown field `usage`, expected one of `metric`, `mode`, `use`"),
        ("output: \"\"\n", "`sweep.yaml`:4:9: `output: ` is not a folder"),
    ];
    for (rest, message) in cases {
        let text = head(&format!("{rest}params: {{lr: [1]}}\n"));
        assert_eq!(error(&text).0, message, "{rest}");
    }
}

#[test]
fn objective_use_is_last_unless_the_file_says_best_and_its_error_has_a_hint() {
    let objective = |rest: &str| {
        parse_text(&head(&format!("params: {{lr: [1]}}\n{rest}")))
            .unwrap()
            .objective
            .unwrap()
    };
    assert_eq!(
        objective("objective: {metric: acc, mode: max}\n").pick,
        Pick::Last
    );
    assert_eq!(
        objective("objective: {metric: acc, mode: max, use: last}\n").pick,
        Pick::Last
    );
    assert_eq!(
        objective("objective: {metric: acc, mode: max, use: best}\n").pick,
        Pick::Best
    );
    let (_, hint) = error(&head(
        "params: {lr: [1]}\nobjective: {metric: acc, mode: max, use: final}\n",
    ));
    assert!(hint.contains("`use: last` (the default)"), "{hint}");
}

#[test]
fn the_gpu_pool_and_how_it_is_shared() {
    let cases = [
        ("gpus: 2\ngpus_per_trial: 3\n", "`sweep.yaml`:6:17: `gpus_per_trial: 3` is more than the 2 GPU(s) of the pool"),
        ("gpus: 1001\n", "`sweep.yaml`:5:7: `gpus: 1001` is not valid: the count is above 1000"),
        ("gpus: []\n", "`sweep.yaml`:5:7: `gpus` is an empty list"),
        ("gpus: [0, 0]\n", "`sweep.yaml`:5:7: `gpus: 0,0` is not valid: `0` is listed twice"),
        ("gpus: [0, x]\n", "`sweep.yaml`:5:7: `gpus: 0,x` is not valid: `x` is neither a GPU index nor a GPU-/MIG- UUID"),
        ("gpus: [0, [1]]\n", "`sweep.yaml`:5:11: a GPU must be an index or a UUID"),
        ("gpus: [0, 1]\ngpus_per_trial: 3\n", "`sweep.yaml`:6:17: `gpus_per_trial: 3` is more than the 2 GPU(s) of the pool"),
        ("gpus: [0]\ngpus_per_trial: 0\n", "`sweep.yaml`:6:17: `gpus_per_trial: 0` is out of range"),
        ("gpus_per_trial: 1\n", "`sweep.yaml`:5:17: `gpus_per_trial` is set but the sweep has no `gpus`"),
        ("gpus: none\ntrials_per_gpu: 2\n", "`sweep.yaml`:6:17: `trials_per_gpu` is set but the sweep has no `gpus`"),
        ("gpus: [0, 1]\ngpus_per_trial: 2\ntrials_per_gpu: 2\n", "`sweep.yaml`:7:17: `trials_per_gpu: 2` with `gpus_per_trial: 2`"),
        ("gpus: [0]\ntrials_per_gpu: 0\n", "`sweep.yaml`:6:17: `trials_per_gpu: 0` is out of range (1 to 64)"),
        ("max_parallel: 0\n", "`sweep.yaml`:5:15: `max_parallel: 0` is out of range (1 to 1000)"),
    ];
    for (rest, message) in cases {
        let text = head(&format!("params: {{lr: [1]}}\n{rest}"));
        assert_eq!(error(&text).0, message, "{rest}");
    }
    let sweep = parse_text(&head(
        "params: {lr: [1]}\ngpus: [0, 1, 2]\ngpus_per_trial: 2\n",
    ))
    .unwrap();
    assert_eq!(
        sweep
            .warnings
            .iter()
            .map(Warning::to_string)
            .collect::<Vec<_>>(),
        ["`sweep.yaml`:6:17: 1 GPU(s) of the pool stay idle: 3 GPUs, 2 per trial"]
    );
    // A number is how many GPUs (the least-loaded free ones, chosen at the start), as a
    // team member's `gpus: 1`; `0` is GPU 0, as `--gpus 0`.
    let sweep = parse_text(&head("params: {lr: [1]}\ngpus: 2\n")).unwrap();
    assert_eq!(sweep.pool.gpus, GpuPool::Count(2));
    let sweep = parse_text(&head("params: {lr: [1]}\ngpus: 0\n")).unwrap();
    assert_eq!(sweep.pool.gpus, GpuPool::Devices(vec!["0".into()]));
    let sweep = parse_text(&head("params: {lr: [1]}\ngpus: \"GPU-3f2a, 1\"\n")).unwrap();
    assert_eq!(
        sweep.pool.gpus,
        GpuPool::Devices(vec!["GPU-3f2a".into(), "1".into()])
    );
}

#[test]
fn broken_yaml_is_refused_like_specs_and_team_files() {
    assert_eq!(error("").0, "`sweep.yaml`:1:1: the sweep file is empty");
    assert_eq!(
        error("# nothing\n").0,
        "`sweep.yaml`:1:1: the sweep file is empty"
    );
    assert_eq!(
        error("sweep: a\n---\nsweep: b\n").0,
        "`sweep.yaml`:2:1: the file holds more than one YAML document"
    );
    assert_eq!(
        error("sweep: a\nsweep: b\n").0,
        "`sweep.yaml`:2:1: duplicate field `sweep`"
    );
    assert_eq!(
        error("sweep: a\nmounts:\n\t- x\n").0,
        "`sweep.yaml`:3:1: a tab indents this line; YAML indents with spaces only"
    );
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(
        error(&head(&format!("params: {{lr: {deep}}}\n"))).0,
        "`sweep.yaml`:4:140: the YAML nests too deeply (more than 128 levels)"
    );
    let error = parse_file(
        "x.yaml",
        Err("No such file or directory (os error 2)".into()),
        Path::new("/"),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot read sweep file `x.yaml`: No such file or directory (os error 2)"
    );
    let error = parse_file("x.yaml", Ok(b"sweep: caf\xe9\n".to_vec()), Path::new("/")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`x.yaml`:1:11: the file is not valid UTF-8"
    );
}

#[test]
fn the_fingerprint_names_what_decides_the_trials() {
    let sweep = parse_text(&head(
        "params: {lr: [1e-3, 1e-4]}\nenv: {A: 1}\nmounts: [./code]\nretries: 1\n",
    ))
    .unwrap();
    let fingerprint = sweep.fingerprint();
    assert_eq!(
        fingerprint
            .0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>(),
        [
            "command=[python, train.py, \"{lr}\"]",
            "env.A=1",
            "image=spec cpu-headless",
            "mounts=[./code]",
            "params.lr=[0.001, 0.0001] (axis 1)",
        ]
    );
    // Retries, the pool and the objective may change between runs.
    let other = parse_text(&head(
        "params: {lr: [1e-3, 1e-4]}\nenv: {A: 1}\nmounts: [./code]\nretries: 3\ngpus: [0]\n",
    ))
    .unwrap();
    assert!(fingerprint.changes(&other.fingerprint()).is_empty());
    let changed = parse_text("sweep: lab\nimage: x\ncommand: [python, t.py, \"{lr}\"]\nparams: {lr: [1e-3, 2e-4]}\nmounts: [./code]\n").unwrap();
    assert_eq!(
        fingerprint.changes(&changed.fingerprint()),
        [
            "`command`: [python, train.py, \"{lr}\"] → [python, t.py, \"{lr}\"]",
            "`env.A`: 1 → (removed)",
            "`image`: spec cpu-headless → image x",
            "`params.lr`: [0.001, 0.0001] (axis 1) → [0.001, 0.0002] (axis 1)",
        ]
    );
    assert_eq!(sweep.container_filter(), "io.tfimg.sweep=lab");
}

#[test]
fn images_that_do_not_fit_the_pool_are_a_warning_at_the_image() {
    let cpu = parse_text(&head("params: {lr: [1]}\n")).unwrap();
    assert_eq!(cpu.image_warning(false), None);
    assert_eq!(
        cpu.image_warning(true).unwrap().to_string(),
        "`sweep.yaml`:2:7: `cpu-headless` is a GPU image but the sweep has no `gpus`: its trials run on the CPU"
    );
    let gpus = parse_text(&head("params: {lr: [1]}\ngpus: [0]\n")).unwrap();
    assert_eq!(gpus.image_warning(true), None);
    assert_eq!(
        gpus.image_warning(false).unwrap().message,
        "`cpu-headless` has no CUDA: its trials get GPUs they cannot use (a `gpu-*` spec can)"
    );
}

#[test]
fn early_stop_takes_its_defaults_and_each_bad_value_is_refused_at_its_place() {
    use super::early_stop::{Cutoff, Rule};
    let rule = |rest: &str| {
        parse_text(&head(&format!(
            "params: {{lr: [1]}}\nobjective: {{metric: acc, mode: max}}\n{rest}"
        )))
        .unwrap()
        .early_stop
        .map(|stop| stop.rule)
    };
    assert_eq!(rule(""), None);
    // ASHA's defaults: grace a quarter of `max_epochs` (at least 1), reduction 3, one
    // bracket.
    assert_eq!(
        rule("early_stop: {rule: asha, max_epochs: 9}\n"),
        Some(Rule::Asha {
            max_epochs: 9,
            grace: 2,
            reduction: 3,
            brackets: 1,
            cutoff: Cutoff::Quantile,
        })
    );
    assert_eq!(
        rule("early_stop: {rule: asha, max_epochs: 3}\n"),
        Some(Rule::Asha {
            max_epochs: 3,
            grace: 1,
            reduction: 3,
            brackets: 1,
            cutoff: Cutoff::Quantile,
        })
    );
    // `max_epochs` alone: the default rule, with its settings.
    assert_eq!(
        rule("early_stop: {max_epochs: 12}\n"),
        rule("early_stop: {rule: asha, max_epochs: 12, grace: 3, reduction: 3, brackets: 1}\n"),
    );
    assert_eq!(
        rule("early_stop: {rule: asha, max_epochs: 100, grace: 2, reduction: 4, brackets: 3}\n"),
        Some(Rule::Asha {
            max_epochs: 100,
            grace: 2,
            reduction: 4,
            brackets: 3,
            cutoff: Cutoff::Quantile,
        })
    );
    assert_eq!(
        rule("early_stop: {max_epochs: 12, grace: 1, cutoff: rank}\n"),
        Some(Rule::Asha {
            max_epochs: 12,
            grace: 1,
            reduction: 3,
            brackets: 1,
            cutoff: Cutoff::Rank,
        })
    );
    assert_eq!(
        rule("early_stop: {max_epochs: 12, cutoff: quantile}\n"),
        rule("early_stop: {max_epochs: 12}\n"),
    );
    assert_eq!(
        rule("early_stop: {rule: asha, max_epochs: 12, grace: 1, brackets: 2}\n"),
        Some(Rule::Asha {
            max_epochs: 12,
            grace: 1,
            reduction: 3,
            brackets: 2,
            cutoff: Cutoff::Quantile,
        })
    );
    assert_eq!(
        rule("early_stop: {rule: median}\n"),
        Some(Rule::Median {
            grace: 1,
            min_trials: 3,
            max_epochs: None
        })
    );
    assert_eq!(
        rule("early_stop: {rule: median, grace: 2, min_trials: 5, max_epochs: 9}\n"),
        Some(Rule::Median {
            grace: 2,
            min_trials: 5,
            max_epochs: Some(9)
        })
    );

    let objective = "objective: {metric: acc, mode: max}\n";
    let cases = [
        ("early_stop: {rule: asha, max_epochs: 9}\n", "", "`sweep.yaml`:5:1: `early_stop` needs an `objective`: it stops the trials whose objective is losing"),
        ("early_stop: {rule: asha}\n", objective, "`sweep.yaml`:6:13: `early_stop: {rule: asha}` needs `max_epochs`: its rungs follow from the epochs (or steps) a full trial reports"),
        ("early_stop: {rule: asha, max_epochs: 9, grace: 9}\n", objective, "`sweep.yaml`:6:48: `grace: 9` is not below `max_epochs: 9`: no trial would ever be judged"),
        ("early_stop: {rule: asha, max_epochs: 9, grace: 12}\n", objective, "`sweep.yaml`:6:48: `grace: 12` is not below `max_epochs: 9`: no trial would ever be judged"),
        ("early_stop: {rule: asha, max_epochs: 9, brackets: 3}\n", objective, "`sweep.yaml`:6:51: `brackets: 3`: bracket 3 would first judge at epoch 18, not below `max_epochs: 9`, so its trials would never be judged"),
        ("early_stop: {max_epochs: 9, brackets: 4294967295}\n", objective, "`sweep.yaml`:6:39: `brackets: 4294967295`: bracket 3 would first judge at epoch 18, not below `max_epochs: 9`, so its trials would never be judged"),
        ("early_stop: {max_epochs: 9, brackets: 0}\n", objective, "`sweep.yaml`:6:39: `brackets: 0` is less than 1"),
        ("early_stop: {rule: median, brackets: 2}\n", objective, "`sweep.yaml`:6:28: `brackets` is a setting of the asha rule, not of `median`"),
        ("early_stop: {rule: asha, max_epochs: 9, reduction: 1}\n", objective, "`sweep.yaml`:6:52: `reduction: 1` is less than 2"),
        ("early_stop: {rule: asha, max_epochs: 0}\n", objective, "`sweep.yaml`:6:38: `max_epochs: 0` is less than 1"),
        ("early_stop: {rule: asha, max_epochs: 9, grace: 0}\n", objective, "`sweep.yaml`:6:48: `grace: 0` is less than 1"),
        ("early_stop: {rule: asha, max_epochs: 9, min_trials: 3}\n", objective, "`sweep.yaml`:6:41: `min_trials` is a setting of the median rule, not of `asha`"),
        ("early_stop: {rule: median, cutoff: rank}\n", objective, "`sweep.yaml`:6:28: `cutoff` is a setting of the asha rule, not of `median`"),
        ("early_stop: {max_epochs: 9, cutoff: top}\n", objective, "`sweep.yaml`:6:37: early_stop.cutoff: unknown variant `top`, expected `quantile` or `rank`"),
        ("early_stop: {rule: median, reduction: 3}\n", objective, "`sweep.yaml`:6:28: `reduction` is a setting of the asha rule, not of `median`"),
        ("early_stop: {rule: median, min_trials: 0}\n", objective, "`sweep.yaml`:6:40: `min_trials: 0` is less than 1"),
        ("early_stop: {rule: hyperband}\n", objective, "`sweep.yaml`:6:20: early_stop.rule: unknown variant `hyperband`, expected `asha` or `median`"),
        ("early_stop: {grace: 2}\n", objective, "`sweep.yaml`:6:13: `early_stop` needs `max_epochs`: the epochs (or steps) a full trial reports"),
        ("early_stop: {rule: asha, max_epoch: 9}\n", objective, "`sweep.yaml`:6:26: early_stop: unknown field `max_epoch`, expected one of `rule`, `max_epochs`, `grace`, `reduction`, `brackets`, `cutoff`, `min_trials`"),
    ];
    for (rest, objective, message) in cases {
        let text = head(&format!("params: {{lr: [1]}}\n{objective}{rest}"));
        let (error, hint) = error(&text);
        assert_eq!(error, message, "{rest}");
        assert!(!hint.is_empty(), "{rest}");
    }
}

#[test]
fn timeout_is_a_duration_with_its_unit_checked_at_its_place() {
    let timeout = |rest: &str| {
        parse_text(&head(&format!("params: {{lr: [1]}}\n{rest}")))
            .unwrap()
            .timeout
    };
    assert_eq!(timeout(""), None);
    assert_eq!(timeout("timeout: 30m\n"), Some(Duration::from_secs(1800)));
    assert_eq!(
        timeout("timeout: 2h 30m\n"),
        Some(Duration::from_secs(9000))
    );
    assert_eq!(timeout("timeout: 90s\n"), Some(Duration::from_secs(90)));
    let cases = [
        ("timeout: 3600\n", "`sweep.yaml`:5:10: `timeout: 3600` is not a duration: time unit needed, for example 3600sec or 3600ms"),
        ("timeout: soon\n", "`sweep.yaml`:5:10: `timeout: soon` is not a duration: expected number at 0"),
        ("timeout: 0s\n", "`sweep.yaml`:5:10: `timeout: 0s` is out of range"),
        ("timeout: 500ms\n", "`sweep.yaml`:5:10: `timeout: 500ms` is out of range"),
        ("timeout: 400days\n", "`sweep.yaml`:5:10: `timeout: 400days` is out of range"),
    ];
    for (rest, message) in cases {
        let (error, hint) = error(&head(&format!("params: {{lr: [1]}}\n{rest}")));
        assert_eq!(error, message, "{rest}");
        assert!(!hint.is_empty());
    }
}
