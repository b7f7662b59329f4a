use std::path::Path;

use serde_json::{json, Value};

use super::*;
use crate::sweep::parse;

use super::rules_tests as katib_rules;

/// An Experiment as Katib's own examples write one (`median-stop.yaml` with a File
/// collector): what the checks must pass.
fn katib_example() -> Value {
    json!({
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Experiment",
        "metadata": {"name": "median-stop"},
        "spec": {
            "objective": {"type": "maximize", "objectiveMetricName": "accuracy"},
            "algorithm": {"algorithmName": "random"},
            "earlyStopping": {
                "algorithmName": "medianstop",
                "algorithmSettings": [
                    {"name": "min_trials_required", "value": "2"},
                    {"name": "start_step", "value": "4"},
                ],
            },
            "parallelTrialCount": 2,
            "maxTrialCount": 15,
            "maxFailedTrialCount": 3,
            "metricsCollectorSpec": {
                "collector": {"kind": "File"},
                "source": {"fileSystemPath": {"path": "/katib/mnist.log", "kind": "File", "format": "TEXT"}},
            },
            "parameters": [
                {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.01", "max": "0.5"}},
            ],
            "trialTemplate": {
                "primaryContainerName": "training-container",
                "successCondition": "status.conditions.#(type==\"Complete\")#|#(status==\"True\")#",
                "failureCondition": "status.conditions.#(type==\"Failed\")#|#(status==\"True\")#",
                "trialParameters": [{"name": "learningRate", "reference": "lr"}],
                "trialSpec": {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "spec": {"template": {"spec": {
                        "restartPolicy": "Never",
                        "containers": [{
                            "name": "training-container",
                            "image": "ghcr.io/kubeflow/katib/pytorch-mnist-cpu:latest",
                            "command": ["python3", "/opt/pytorch-mnist/mnist.py", "--lr=${trialParameters.learningRate}"],
                        }],
                    }}},
                },
            },
        },
    })
}

/// `experiment` with the value at `pointer` replaced (or removed with `None`), or a new
/// key added to the object at `pointer` (`pointer` ending in `/+key`; on a list, `/+` adds
/// an item).
fn broken(mut experiment: Value, pointer: &str, value: Option<Value>) -> Value {
    if let Some((parent, key)) = pointer.rsplit_once("/+") {
        let parent = experiment.pointer_mut(parent).unwrap();
        match parent.as_array_mut() {
            Some(list) => list.push(value.unwrap()),
            None => parent[key] = value.unwrap(),
        }
        return experiment;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = experiment.pointer_mut(parent).unwrap();
    match value {
        Some(value) => parent[key] = value,
        None => {
            parent.as_object_mut().unwrap().remove(key);
        }
    }
    experiment
}

#[test]
fn the_checks_know_every_keyword_of_katib_s_definitions() {
    assert_eq!(katib_rules::unknown_keywords(), Vec::<String>::new());
}

#[test]
fn katib_s_own_example_passes_the_checks() {
    assert_eq!(
        katib_rules::problems(&katib_example()),
        Vec::<String>::new()
    );
}

#[test]
fn a_hand_broken_experiment_fails_the_checks() {
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "a misspelled field",
            broken(katib_example(), "/spec/+parallelTrialCont", Some(json!(2))),
            ".spec.parallelTrialCont: unknown field",
        ),
        (
            "a misspelled field deep down",
            broken(
                katib_example(),
                "/spec/metricsCollectorSpec/source/fileSystemPath/+fromat",
                Some(json!("JSON")),
            ),
            ".spec.metricsCollectorSpec.source.fileSystemPath.fromat: unknown field",
        ),
        (
            "a count as a string",
            broken(katib_example(), "/spec/maxTrialCount", Some(json!("15"))),
            ".spec.maxTrialCount: must be a whole number (int32), not \"15\"",
        ),
        (
            "no objectiveMetricName",
            broken(katib_example(), "/spec/objective/objectiveMetricName", None),
            "spec.objective.objectiveMetricName: must be specified",
        ),
        (
            "medianstop with an unknown setting",
            broken(
                katib_example(),
                "/spec/earlyStopping/algorithmSettings/1/name",
                Some(json!("grace")),
            ),
            "spec.earlyStopping: unknown setting grace for algorithm medianstop",
        ),
        (
            "medianstop's start_step at 0",
            broken(
                katib_example(),
                "/spec/earlyStopping/algorithmSettings/1/value",
                Some(json!("0")),
            ),
            "spec.earlyStopping: start_step `0` is out of range",
        ),
        (
            "a parameter reference missing from the trial template",
            broken(
                katib_example(),
                "/spec/trialTemplate/trialParameters/0/name",
                Some(json!("rate")),
            ),
            "spec.trialTemplate.trialParameters[0].name: `rate` is not found in spec.trialTemplate",
        ),
        (
            "a trial parameter whose reference is no parameter",
            broken(
                katib_example(),
                "/spec/trialTemplate/trialParameters/0/reference",
                Some(json!("learning_rate")),
            ),
            "spec.trialTemplate.trialParameters[0].reference: `learning_rate` does not exist in spec.parameters",
        ),
        (
            "an unknown TPE setting",
            broken(
                katib_example(),
                "/spec/algorithm",
                Some(json!({"algorithmName": "tpe", "algorithmSettings": [{"name": "n_startup_jobs", "value": "5"}]})),
            ),
            "spec.algorithm: unknown setting n_startup_jobs for algorithm tpe",
        ),
        (
            "an algorithm Katib does not install",
            broken(katib_example(), "/spec/algorithm/algorithmName", Some(json!("asha"))),
            "spec.algorithm.algorithmName: no suggestion config for `asha`",
        ),
        (
            "a double with a list",
            broken(
                katib_example(),
                "/spec/parameters/0/feasibleSpace/+list",
                Some(json!(["0.1"])),
            ),
            "spec.parameters[0].feasibleSpace.list: not supported for double",
        ),
        (
            "a distribution Katib does not have",
            broken(
                katib_example(),
                "/spec/parameters/0/feasibleSpace/+distribution",
                Some(json!("loguniform")),
            ),
            "spec.parameters[0].feasibleSpace.distribution: `loguniform` is not supported",
        ),
        (
            "a JSON file with a filter",
            broken(
                broken(
                    katib_example(),
                    "/spec/metricsCollectorSpec/source/fileSystemPath/format",
                    Some(json!("JSON")),
                ),
                "/spec/metricsCollectorSpec/source/+filter",
                Some(json!({"metricsFormat": ["(\\w+)=(\\d+)"]})),
            ),
            "spec.metricsCollectorSpec.source.filter: filter must be nil when format of metrics file is json",
        ),
        (
            "a parameter listed twice",
            broken(
                katib_example(),
                "/spec/parameters/+1",
                Some(json!({"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.1", "max": "0.2"}})),
            ),
            ".spec.parameters: [\"\\\"lr\\\"\"] is listed twice",
        ),
    ];
    for (what, experiment, expected) in cases {
        let problems = katib_rules::problems(&experiment);
        assert!(
            problems.iter().any(|problem| problem == expected),
            "{what}: expected `{expected}` among {problems:#?}"
        );
    }
}

fn options() -> K8sOptions {
    K8sOptions {
        file: "sweep.yaml".into(),
        image: "tfimg/cpu-headless:2.9.3".into(),
        registry: None,
        volume_size: super::super::DEFAULT_VOLUME_SIZE.into(),
    }
}

fn sweep(text: &str) -> Sweep {
    parse(text, "sweep.yaml", Path::new("/lab")).unwrap()
}

fn exported(text: &str) -> KatibExport {
    export(&sweep(text), text, &options()).unwrap()
}

fn refused(text: &str) -> SpecError {
    export(&sweep(text), text, &options()).unwrap_err()
}

/// The Experiment of the manifests, as JSON (as Kubernetes reads YAML).
fn experiment(export: &KatibExport) -> Value {
    let documents: Vec<&str> = export.manifests.split("---\n").skip(1).collect();
    assert_eq!(documents.len(), 1, "{}", export.manifests);
    let yaml: serde_yaml::Value = serde_yaml::from_str(documents[0]).unwrap();
    serde_json::to_value(yaml).unwrap()
}

fn conforms(export: &KatibExport) -> Value {
    let experiment = experiment(export);
    assert_eq!(
        katib_rules::problems(&experiment),
        Vec::<String>::new(),
        "{}",
        export.manifests
    );
    experiment
}

fn setting(list: &Value, name: &str) -> String {
    list.as_array()
        .unwrap()
        .iter()
        .find(|setting| setting["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"))["value"]
        .as_str()
        .unwrap()
        .to_string()
}

const TPE: &str = concat!(
    "sweep: lab\nspec: cpu-headless\n",
    "command: [python, train.py, --lr, \"{lr}\", --opt, \"{opt}\", --layers, \"{layers}\"]\n",
    "env: {GREETING: \"it's $(HOME) and $$\"}\n",
    "objective: {metric: val_accuracy, mode: max}\n",
    "tpe: {count: 20, seed: 7, startup: 4, lr: {loguniform: [1e-5, 1e-2]}, opt: {choice: [adam, sgd]}, layers: {int: [1, 4]}}\n",
    "max_parallel: 2\nmax_failed: 3\nretries: 1\n",
);

const GRID_MEDIAN: &str = concat!(
    "sweep: grid\nspec: cpu-headless\n",
    "command: [python, train.py, \"--lr={lr}\", --width, \"{width}\", --aug, \"{aug}\"]\n",
    "objective: {metric: val_loss, mode: min, use: best}\n",
    "params:\n  lr: [1e-3, 1e-4]\n  width: [64, 128]\n  aug: [none, \"flip and crop\"]\n",
    "early_stop: {rule: median, grace: 2, min_trials: 3}\n",
    "max_parallel: 3\n",
);

const RANDOM_ASHA: &str = concat!(
    "sweep: rand\nimage: tfimg/cpu-headless:2.9.3\n",
    "command: [python, train.py, --lr, \"{lr}\", --dropout, \"{dropout}\"]\n",
    "objective: {metric: val_accuracy, mode: max}\n",
    "random: {count: 12, seed: 3, lr: {loguniform: [1e-5, 1e-1]}, dropout: {uniform: [0, 0.5]}}\n",
    "early_stop: {rule: asha, max_epochs: 9, grace: 1, reduction: 3}\n",
    "max_parallel: 4\n",
);

const TPE_MEDIAN_GPUS: &str = concat!(
    "sweep: gpus\nspec: gpu-headless\n",
    "command: [python, train.py, --lr, \"{lr}\"]\n",
    "objective: {metric: val_accuracy, mode: max}\n",
    "tpe: {count: 30, seed: 1, lr: {loguniform: [1e-5, 1e-2]}}\n",
    "early_stop: {rule: median, grace: 3, min_trials: 4, max_epochs: 12}\n",
    "gpus: [0, 1, 2, 3]\ngpus_per_trial: 2\ncpus_per_trial: 4\nmemory: 16g\ntimeout: 2h\n",
);

#[test]
fn tpe_alone_becomes_katib_s_tpe_with_its_seed() {
    let export = exported(TPE);
    let experiment = conforms(&export);
    let spec = &experiment["spec"];
    assert_eq!(spec["algorithm"]["algorithmName"], "tpe");
    assert_eq!(
        setting(&spec["algorithm"]["algorithmSettings"], "random_state"),
        "7"
    );
    assert!(spec.get("earlyStopping").is_none());
    assert_eq!(
        (
            &spec["maxTrialCount"],
            &spec["parallelTrialCount"],
            &spec["maxFailedTrialCount"]
        ),
        (&json!(20), &json!(2), &json!(3))
    );
    assert_eq!(spec["objective"]["type"], "maximize");
    assert_eq!(spec["objective"]["objectiveMetricName"], "val_accuracy");
    assert_eq!(spec["objective"]["metricStrategies"][0]["value"], "latest");
    assert_eq!(
        spec["parameters"],
        json!([
            {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "1e-5", "max": "0.01", "distribution": "logUniform"}},
            {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["adam", "sgd"]}},
            {"name": "layers", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "4", "distribution": "uniform"}},
        ])
    );
    assert!(
        export.notes[0].contains("not `startup: 4`"),
        "{:?}",
        export.notes
    );
    insta::assert_snapshot!("katib_tpe", export.manifests);
}

#[test]
fn a_grid_with_the_median_rule_becomes_katib_s_grid_with_medianstop() {
    let export = exported(GRID_MEDIAN);
    let experiment = conforms(&export);
    let spec = &experiment["spec"];
    assert_eq!(spec["algorithm"], json!({"algorithmName": "grid"}));
    assert_eq!(spec["maxTrialCount"], 8, "the whole grid");
    assert_eq!(spec["earlyStopping"]["algorithmName"], "medianstop");
    let settings = &spec["earlyStopping"]["algorithmSettings"];
    assert_eq!(setting(settings, "start_step"), "2");
    assert_eq!(setting(settings, "min_trials_required"), "3");
    assert_eq!(spec["objective"]["type"], "minimize");
    assert_eq!(
        spec["objective"]["metricStrategies"][0]["value"], "min",
        "`use: best` of a loss"
    );
    assert_eq!(spec["parameters"][0]["parameterType"], "discrete");
    assert_eq!(
        spec["parameters"][0]["feasibleSpace"]["list"],
        json!(["0.001", "0.0001"])
    );
    assert_eq!(spec["parameters"][2]["parameterType"], "categorical");
    assert!(export
        .manifests
        .contains("#   - Katib's `medianstop` is not tfimg's median rule"));
    insta::assert_snapshot!("katib_grid_median", export.manifests);
}

#[test]
fn random_with_asha_becomes_medianstop_and_says_so() {
    let export = exported(RANDOM_ASHA);
    let experiment = conforms(&export);
    let spec = &experiment["spec"];
    assert_eq!(spec["algorithm"]["algorithmName"], "random");
    assert_eq!(
        setting(&spec["algorithm"]["algorithmSettings"], "random_state"),
        "3"
    );
    assert_eq!(
        spec["parameters"][0]["feasibleSpace"],
        json!({"min": "1e-5", "max": "0.1", "distribution": "logUniform"})
    );
    assert_eq!(
        spec["parameters"][1]["feasibleSpace"]["distribution"],
        "uniform"
    );
    let settings = &spec["earlyStopping"]["algorithmSettings"];
    assert_eq!(setting(settings, "start_step"), "1");
    assert_eq!(setting(settings, "min_trials_required"), "3");
    let said = "`early_stop: {rule: asha}` has no Katib equivalent: written as Katib's `medianstop`, the nearest it has";
    assert!(
        export.notes.iter().any(|note| note.starts_with(said)),
        "{:?}",
        export.notes
    );
    let header: String = export
        .manifests
        .lines()
        .take_while(|line| line.starts_with('#'))
        .collect();
    assert!(header.contains(said), "{header}");
    let container =
        &spec["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "tfimg/cpu-headless:2.9.3");
}

#[test]
fn tpe_with_early_stopping_on_gpus_asks_each_trial_for_its_gpus() {
    let export = exported(TPE_MEDIAN_GPUS);
    let experiment = conforms(&export);
    let spec = &experiment["spec"];
    assert_eq!(spec["algorithm"]["algorithmName"], "tpe");
    assert_eq!(spec["earlyStopping"]["algorithmName"], "medianstop");
    assert_eq!(spec["parallelTrialCount"], 2, "four GPUs, two per trial");
    let pod = &spec["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(
        container["resources"]["limits"],
        json!({"nvidia.com/gpu": 2, "cpu": "4000m", "memory": "16384Mi"})
    );
    assert_eq!(pod["activeDeadlineSeconds"], 7200);
    assert!(export
        .notes
        .iter()
        .any(|note| note.contains("`max_epochs: 12` has no setting")));
    insta::assert_snapshot!("katib_tpe_median_gpus", export.manifests);
}

#[test]
fn trial_pods_are_unprivileged_as_the_job_export_s() {
    let experiment = conforms(&exported(TPE));
    let template = &experiment["spec"]["trialTemplate"];
    assert_eq!(template["primaryContainerName"], CONTAINER);
    let pod = &template["trialSpec"]["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["securityContext"], pod_security(POD_UID, POD_GID));
    assert_eq!(pod["securityContext"]["runAsUser"], 1000);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let container = &pod["containers"][0];
    assert_eq!(container["securityContext"], container_security());
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    assert_eq!(
        template["trialSpec"]["spec"]["backoffLimit"], 1,
        "`retries: 1`"
    );
    // The variables of a local trial, in its order: the params' and the trial's name
    // from Katib, the rest with each `$` doubled for the kubelet.
    let env: Vec<(String, String)> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["name"].as_str().unwrap().to_string(),
                entry["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        env,
        pairs(&[
            ("GREETING", "it's $$(HOME) and $$$$"),
            ("TFIMG_SWEEP", "lab"),
            ("TFIMG_TRIAL", "${trialParameters.tfimg-trial}"),
            ("TFIMG_TRIAL_DIR", "/tfimg/trial"),
            ("TFIMG_PARAM_LR", "${trialParameters.lr}"),
            ("TFIMG_PARAM_OPT", "${trialParameters.opt}"),
            ("TFIMG_PARAM_LAYERS", "${trialParameters.layers}"),
        ])
    );
    let collector = &experiment["spec"]["metricsCollectorSpec"];
    assert_eq!(
        collector["source"]["fileSystemPath"]["path"],
        "/tfimg/trial/metrics.jsonl"
    );
}

/// What Kubernetes and Katib make of the trial's `sh -c` line for one param set: Katib
/// substitutes the values, wraps the line (`wrapWorkerContainer`), the kubelet turns `$$`
/// into `$`; sh's words read back with shlex's POSIX rules. The params.json it writes and
/// the command it runs must be the local trial's.
#[test]
fn each_trial_s_command_and_params_arrive_whole() {
    let notes = ["plain", "two  spaces ", "*", "-n", "", "naïve ☃", "a,b;c=d"];
    let list: Vec<String> = notes.iter().map(|note| format!("{note:?}")).collect();
    let text = format!(
        "sweep: echo\nspec: cpu-headless\ncommand: [sh, -c, \"echo \\\"$0\\\" '$HOME' $(id)\\nprintf '%s' \\\"$1\\\"\", x, \"note={{note}}!\", \"{{lr}}\", \"{{{{literal}}}}\"]\nobjective: {{metric: acc, mode: max}}\nearly_stop: {{rule: median}}\nparams:\n  note: [{}]\n  lr: [1e-3, 0.5]\n",
        list.join(", ")
    );
    let sweep = sweep(&text);
    let export = export(&sweep, &text, &options()).unwrap();
    let experiment = conforms(&export);
    let container = &experiment["spec"]["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]
        ["containers"][0];
    assert_eq!(container["command"][0], "sh");
    assert_eq!(container["command"][1], "-c");
    let line = container["command"][2].as_str().unwrap();
    for trial in sweep.trials() {
        let mut substituted = line.to_string();
        for (name, value) in &trial.params {
            substituted = substituted.replace(&placeholder(name), &value.text());
        }
        let wrapped =
            format!("{substituted} || echo failed && echo completed > /tfimg/trial/$$$$.pid");
        let expanded = wrapped.replace("$$", "$");
        let words = shlex::split(&expanded).expect("sh reads the line");
        let and = words.iter().position(|word| word == "&&").unwrap();
        assert_eq!(words[..2], ["printf", "%s\\n"]);
        let params: Value = serde_json::from_str(&words[2]).unwrap();
        let expected: Value = serde_json::from_str(&trial.params_json()).unwrap();
        assert_eq!(params, expected, "{expanded}");
        assert_eq!(words[3], ">$TFIMG_TRIAL_DIR/params.json");
        let end = words.iter().rposition(|word| word == "||").unwrap();
        assert_eq!(words[and + 1..end], trial.command[..], "{expanded}");
    }
}

/// Katib's File collector with the filter reads of each line what tfimg reads of it.
#[test]
fn the_metrics_filter_reads_what_tfimg_reads() {
    let filter = regex::Regex::new(METRICS_FILTER).unwrap();
    let lines = [
        r#"{"epoch": 1, "val_accuracy": 0.5, "loss": 1.25}"#,
        r#"{"epoch": 2, "val_accuracy": 0.75, "loss": 1e-05, "lr": -3.5E+2}"#,
        r#"{"step": 7, "train/loss": 0.125, "note": "a \"b\": 3 c"}"#,
        r#"{"epoch": 3, "val_accuracy": NaN, "loss": 0.5}"#,
        r#"{"epoch":4,"val_accuracy":0.875}"#,
    ];
    for line in lines {
        let point = &crate::sweep::metrics::parse_jsonl(line)[0];
        let mut read: Vec<(String, f64)> = filter
            .captures_iter(line)
            .map(|found| (found[1].to_string(), found[2].parse().unwrap()))
            .filter(|(name, _)| name != "epoch" && name != "step")
            .collect();
        read.sort_by(|a, b| a.0.cmp(&b.0));
        // tfimg keeps a NaN (its trial is diverged); Katib's filter reads no number there
        // and the report is missing for Katib, as the docs say.
        let expected: Vec<(String, f64)> = point
            .values
            .iter()
            .filter(|(_, value)| value.is_finite())
            .map(|(name, value)| (name.clone(), *value))
            .collect();
        assert_eq!(read, expected, "{line}");
    }
}

#[test]
fn what_katib_cannot_express_is_refused_at_its_place() {
    let head = "sweep: lab\nspec: x\ncommand: [\"{a}\"]\nobjective: {metric: acc, mode: max}\nearly_stop: {rule: median}\n";
    let error = refused(&format!("{head}trials:\n  - {{a: 1}}\n  - {{a: 2}}\n"));
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:6:1: a `trials:` list cannot go to Katib, which has no algorithm that runs given param sets"
    );
    assert!(error.hint.contains("`params:`"), "{}", error.hint);
    let error = refused(&format!("{head}params:\n  a: [plain, \"it's\"]\n"));
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:7:14: `it's` cannot go to Katib: it writes a param's value into the trial's template and command as it is, where a quote, a backslash or a `$` breaks them"
    );
    let error = refused(&format!(
        "{head}random: {{count: 3, seed: 1, a: {{choice: [x, \"$HOME\"]}}}}\n"
    ));
    assert!(error.to_string().starts_with("`sweep.yaml`:6:"), "{error}");
    let error = refused(concat!(
        "sweep: lab\nspec: x\ncommand: [\"{a}\"]\nobjective: {metric: acc, mode: max}\n",
        "tpe: {count: 9, seed: 4294967296, a: {uniform: [0, 1]}}\n",
    ));
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:5:23: `tpe.seed: 4294967296` is more than Katib takes (4294967295): its `random_state` seeds numpy, which takes 32 bits"
    );
    let error = refused(&format!("{head}params: {{a: [1]}}\ngpus: all\n"));
    assert!(
        error
            .to_string()
            .ends_with("`gpus: all` means this host's GPUs, which a cluster does not have"),
        "{error}"
    );
}

#[test]
fn the_job_export_stays_for_plain_sweeps() {
    let plain = sweep("sweep: lab\nspec: x\ncommand: [\"{a}\"]\nparams: {a: [1, 2]}\n");
    assert!(!super::super::learns(&plain));
    assert!(super::super::learns(&sweep(TPE)));
    assert!(super::super::learns(&sweep(GRID_MEDIAN)));
}
