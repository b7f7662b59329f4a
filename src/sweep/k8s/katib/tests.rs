use serde_json::{json, Value};

#[path = "../../../../tests/katib/mod.rs"]
mod katib_rules;

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
