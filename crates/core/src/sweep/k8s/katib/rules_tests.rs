//! Katib's own rules for an Experiment, as the tests hold tfimg's Katib export to them
//! (`tests.rs` beside this file, and `tests/sweep_k8s.rs` on what the binary writes).
//!
//! Two checks, each a list of problems (empty: the Experiment passes):
//! - `schema_problems`: the Experiment against the v1beta1 definitions of Katib's
//!   `pkg/apis/v1beta1/swagger.json` (tests/fixtures/katib/), `$ref`s followed. A small
//!   walker, not the `jsonschema` crate: the document is Swagger 2.0 whose `$ref`s name six
//!   Kubernetes types it does not define (`v1.ObjectMeta`, `v1.Container`, ...), which a
//!   JSON Schema validator refuses to compile, and what matters here is no JSON Schema
//!   keyword: an unknown property (the Go types drop it silently: a misspelled field is
//!   ignored by Katib, and the CRD's schema is open), `int32` ranges, and the uniqueness
//!   that `x-kubernetes-list-type: map|set` asks of a list. The walker knows every keyword
//!   the document uses and fails on any other, so a newer document cannot be half-read.
//! - `validator_problems`: the rules of Katib's experiment validating webhook
//!   (`pkg/webhook/v1beta1/experiment/validator/validator.go`, each function named where
//!   its rules are), of the suggestion and early-stopping services it asks to validate
//!   the settings (`ValidateAlgorithmSettings` of hyperopt's and optuna's services,
//!   `validate_medianstop_setting`), of the algorithms the standalone install's
//!   `katib-config.yaml` offers, and of the pod webhook that wraps the trial's container.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

/// Katib's v1beta1 definitions, vendored.
pub const SWAGGER: &str = include_str!("../../../../../../tests/fixtures/katib/swagger.json");

/// Every keyword the walker reads; any other in the document is a failure.
const KNOWN_KEYWORDS: [&str; 10] = [
    "$ref",
    "additionalProperties",
    "default",
    "description",
    "format",
    "items",
    "properties",
    "required",
    "type",
    "x-kubernetes-list-map-keys",
];

/// Kubernetes types the document names but does not define, and what is checked of them.
/// `v1.unstructured.Unstructured` is the trial's Job: `validator_problems` checks it as
/// Katib does, and `tests/sweep_k8s.rs` against Kubernetes' own schema.
const EXTERNAL: [(&str, &[&str]); 6] = [
    (
        "v1.ObjectMeta",
        &["name", "namespace", "labels", "annotations"],
    ),
    ("v1.unstructured.Unstructured", &[]),
    ("v1.Container", &[]),
    ("v1.HTTPGetAction", &[]),
    ("v1.ListMeta", &[]),
    ("v1.Time", &[]),
];

/// The suggestion algorithms of Katib's standalone install (`katib-config.yaml`,
/// `runtime.suggestions`): `validateAlgorithm` refuses any other (GetSuggestionConfigData).
const ALGORITHMS: [&str; 11] = [
    "random",
    "tpe",
    "grid",
    "hyperband",
    "bayesianoptimization",
    "cmaes",
    "sobol",
    "multivariate-tpe",
    "enas",
    "darts",
    "pbt",
];

/// `runtime.earlyStoppings` of the same file (GetEarlyStoppingConfigData).
const EARLY_STOPPINGS: [&str; 1] = ["medianstop"];

/// The metrics collectors of the same file (GetMetricsCollectorConfigData), and the kinds
/// that need none.
const COLLECTORS: [&str; 6] = [
    "StdOut",
    "File",
    "TensorFlowEvent",
    "PrometheusMetric",
    "Custom",
    "Push",
];

fn definitions() -> Value {
    let document: Value = serde_json::from_str(SWAGGER).expect("swagger.json is JSON");
    assert_eq!(document["swagger"], "2.0");
    document["definitions"].clone()
}

/// The keywords of the document the walker does not know (none, or the walker is stale).
pub fn unknown_keywords() -> Vec<String> {
    fn keywords(schema: &Value, found: &mut HashSet<String>) {
        let Some(object) = schema.as_object() else {
            return;
        };
        for (key, value) in object {
            if key.starts_with("x-kubernetes-list-type") {
                continue;
            }
            found.insert(key.clone());
            match key.as_str() {
                "properties" => value
                    .as_object()
                    .unwrap()
                    .values()
                    .for_each(|property| keywords(property, found)),
                "items" | "additionalProperties" => keywords(value, found),
                _ => {}
            }
        }
    }
    let mut found = HashSet::new();
    for schema in definitions().as_object().unwrap().values() {
        keywords(schema, &mut found);
    }
    let mut unknown: Vec<String> = found
        .into_iter()
        .filter(|keyword| !KNOWN_KEYWORDS.contains(&keyword.as_str()))
        .collect();
    unknown.sort();
    unknown
}

/// What of `experiment` the definitions refuse: `v1beta1.Experiment`, then every `$ref`.
pub fn schema_problems(experiment: &Value) -> Vec<String> {
    let definitions = definitions();
    let mut problems = Vec::new();
    let root = serde_json::json!({"$ref": "#/definitions/v1beta1.Experiment"});
    walk(&definitions, &root, experiment, "", &mut problems);
    problems
}

fn walk(definitions: &Value, schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let at = if path.is_empty() { "." } else { path };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference
            .strip_prefix("#/definitions/")
            .expect("local references only");
        if let Some(defined) = definitions.get(name) {
            return walk(definitions, defined, value, path, out);
        }
        let (_, fields) = EXTERNAL
            .iter()
            .find(|(external, _)| *external == name)
            .unwrap_or_else(|| panic!("`{name}` is neither defined nor known"));
        match value.as_object() {
            None => out.push(format!("{at}: `{name}` must be an object")),
            Some(object) if !fields.is_empty() => {
                for key in object.keys() {
                    if !fields.contains(&key.as_str()) {
                        out.push(format!("{path}.{key}: unknown field of `{name}`"));
                    }
                }
            }
            Some(_) => {}
        }
        return;
    }
    let object = schema.as_object().expect("a schema is an object");
    for key in object.keys() {
        assert!(
            KNOWN_KEYWORDS.contains(&key.as_str()) || key.starts_with("x-kubernetes-list-type"),
            "the walker does not know `{key}`"
        );
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let Some(fields) = value.as_object() else {
                return out.push(format!("{at}: must be an object, not {value}"));
            };
            for required in schema["required"].as_array().into_iter().flatten() {
                let required = required.as_str().unwrap();
                if !fields.contains_key(required) {
                    out.push(format!("{at}: `{required}` is required"));
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (key, field) in fields {
                let inner = format!("{path}.{key}");
                match (properties.and_then(|known| known.get(key)), additional) {
                    (Some(property), _) => walk(definitions, property, field, &inner, out),
                    (None, Some(additional)) => walk(definitions, additional, field, &inner, out),
                    (None, None) => out.push(format!("{inner}: unknown field")),
                }
            }
        }
        Some("array") => {
            let Some(items) = value.as_array() else {
                return out.push(format!("{at}: must be a list, not {value}"));
            };
            for (index, item) in items.iter().enumerate() {
                walk(
                    definitions,
                    &schema["items"],
                    item,
                    &format!("{path}[{index}]"),
                    out,
                );
            }
            match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("map") => {
                    let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|key| key.as_str().unwrap())
                        .collect();
                    let mut seen = HashSet::new();
                    for item in items {
                        let key: Vec<String> =
                            keys.iter().map(|key| item[key].to_string()).collect();
                        if keys.iter().any(|key| item.get(key).is_none()) {
                            out.push(format!("{at}: an item lacks its key {keys:?}"));
                        } else if !seen.insert(key.clone()) {
                            out.push(format!("{at}: {key:?} is listed twice"));
                        }
                    }
                }
                Some("set") => {
                    let mut seen = HashSet::new();
                    for item in items {
                        if !seen.insert(item.to_string()) {
                            out.push(format!("{at}: {item} is listed twice"));
                        }
                    }
                }
                _ => {}
            }
        }
        Some("string") if !value.is_string() => {
            out.push(format!("{at}: must be a string, not {value}"))
        }
        Some("boolean") if !value.is_boolean() => {
            out.push(format!("{at}: must be true or false, not {value}"))
        }
        Some("number") if !value.is_number() => {
            out.push(format!("{at}: must be a number, not {value}"))
        }
        Some("integer") => {
            let whole = value.as_i64();
            let in_range = match schema.get("format").and_then(Value::as_str) {
                Some("int32") => whole.is_some_and(|n| i32::try_from(n).is_ok()),
                _ => whole.is_some(),
            };
            if !in_range {
                out.push(format!("{at}: must be a whole number (int32), not {value}"));
            }
        }
        Some("string" | "boolean" | "number") => {}
        other => panic!("the walker does not know type {other:?} at {at}"),
    }
}

/// The field of a Katib setting list (`algorithmSettings`) as name → value.
fn settings(list: &Value) -> BTreeMap<String, String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|setting| {
            (
                setting["name"].as_str().unwrap_or_default().to_string(),
                setting["value"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Python's `int(text)` (what the services apply to a setting's value).
fn python_int(value: &str) -> Option<i64> {
    value.trim().replace('_', "").parse().ok()
}

/// Python's `float(text)`.
fn python_float(value: &str) -> Option<f64> {
    value.trim().parse().ok()
}

/// What Katib's webhook and services would refuse of `experiment`.
pub fn validator_problems(experiment: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let spec = &experiment["spec"];
    // ValidateExperiment: the name, then the counts.
    let name = text(&experiment["metadata"], "name");
    let naming = regex::Regex::new("^[a-z]([-a-z0-9]*[a-z0-9])?").unwrap();
    if !naming.is_match(name) || name.len() > 40 {
        out.push(format!(
            "metadata.name `{name}`: lower case, at most 40 characters"
        ));
    }
    let count = |key: &str| spec.get(key).and_then(Value::as_i64);
    let (max_trials, parallel, max_failed) = (
        count("maxTrialCount"),
        count("parallelTrialCount"),
        count("maxFailedTrialCount"),
    );
    if max_failed.is_some_and(|n| n < 0) {
        out.push("spec.maxFailedTrialCount: should not be less than 0".into());
    }
    if max_trials.is_some_and(|n| n <= 0) {
        out.push("spec.maxTrialCount: must be greater than 0".into());
    }
    if parallel.is_some_and(|n| n <= 0) {
        out.push("spec.parallelTrialCount: must be greater than 0".into());
    }
    if let (Some(failed), Some(max)) = (max_failed, max_trials) {
        if failed > max {
            out.push(
                "spec.maxFailedTrialCount: should be less than or equal to spec.maxTrialCount"
                    .into(),
            );
        }
    }
    if let (Some(parallel), Some(max)) = (parallel, max_trials) {
        if parallel > max {
            out.push(
                "spec.parallelTrialCount: should be less than or equal to spec.maxTrialCount"
                    .into(),
            );
        }
    }
    // validateObjective (a failure here ends the validation, as in ValidateExperiment).
    let objective = &spec["objective"];
    if objective.is_null() {
        out.push("spec.objective: must be specified".into());
        return out;
    }
    if !matches!(text(objective, "type"), "minimize" | "maximize") {
        out.push("spec.objective.type: must be minimize or maximize".into());
    }
    let metric = text(objective, "objectiveMetricName");
    if metric.is_empty() {
        out.push("spec.objective.objectiveMetricName: must be specified".into());
    }
    if objective["additionalMetricNames"]
        .as_array()
        .is_some_and(|names| names.iter().any(|name| name == metric))
    {
        out.push("spec.objective.additionalMetricNames: should not contain the objective".into());
    }
    for strategy in objective["metricStrategies"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if !matches!(text(strategy, "value"), "min" | "max" | "latest") {
            out.push(format!(
                "spec.objective.metricStrategies: {strategy} is not min, max or latest"
            ));
        }
    }
    algorithm_problems(spec, &mut out);
    early_stopping_problems(spec, &mut out);
    // validateResumePolicy.
    if !matches!(
        text(spec, "resumePolicy"),
        "" | "Never" | "LongRunning" | "FromVolume"
    ) {
        out.push("spec.resumePolicy: invalid ResumePolicyType".into());
    }
    trial_template_problems(spec, &mut out);
    // ValidateExperiment: parameters (no nasConfig), then validateParameters.
    let parameters = spec["parameters"].as_array().cloned().unwrap_or_default();
    if parameters.is_empty() {
        out.push("spec: spec.parameters or spec.nasConfig must be specified".into());
    }
    for (index, parameter) in parameters.iter().enumerate() {
        parameter_problems(index, parameter, &mut out);
    }
    metrics_collector_problems(spec, &mut out);
    out
}

/// validateAlgorithm, and the suggestion service's ValidateAlgorithmSettings:
/// `pkg/suggestion/v1beta1/hyperopt/service.py` for `tpe` and `random`,
/// `pkg/suggestion/v1beta1/optuna/service.py` for `grid`.
fn algorithm_problems(spec: &Value, out: &mut Vec<String>) {
    let algorithm = &spec["algorithm"];
    if algorithm.is_null() {
        return out.push("spec.algorithm: must be specified".into());
    }
    let name = text(algorithm, "algorithmName");
    if !ALGORITHMS.contains(&name) {
        return out.push(format!(
            "spec.algorithm.algorithmName: no suggestion config for `{name}`"
        ));
    }
    let settings = settings(&algorithm["algorithmSettings"]);
    // numpy's RandomState (hyperopt's) takes seeds below 2^32.
    let random_state = |value: &str| python_int(value).is_some_and(|n| (0..1 << 32).contains(&n));
    for (setting, value) in &settings {
        let valid = match (name, setting.as_str()) {
            ("tpe", "gamma") => python_float(value).is_some_and(|x| 0.0 < x && x < 1.0),
            ("tpe", "prior_weight") => python_float(value).is_some_and(|x| x > 0.0),
            ("tpe", "n_EI_candidates") => python_int(value).is_some_and(|n| n > 0),
            ("tpe" | "random" | "grid", "random_state") => random_state(value),
            _ => {
                out.push(format!(
                    "spec.algorithm: unknown setting {setting} for algorithm {name}"
                ));
                continue;
            }
        };
        if !valid {
            out.push(format!(
                "spec.algorithm: {setting} `{value}` is out of range"
            ));
        }
    }
    // _validate_grid_setting: no more trials than the grid has combinations (and every
    // double a step).
    if name == "grid" {
        let mut combinations: u128 = 1;
        for parameter in spec["parameters"].as_array().into_iter().flatten() {
            let space = &parameter["feasibleSpace"];
            let size = match text(parameter, "parameterType") {
                "categorical" | "discrete" => space["list"].as_array().map_or(0, Vec::len) as u128,
                "int" => {
                    let (min, max) = (
                        python_int(text(space, "min")),
                        python_int(text(space, "max")),
                    );
                    let step = python_int(text(space, "step")).unwrap_or(1).max(1);
                    match (min, max) {
                        (Some(min), Some(max)) => ((max - min) / step + 1).max(0) as u128,
                        _ => 0,
                    }
                }
                _ => {
                    out.push(format!(
                        "spec.parameters: grid needs a step for `{}`",
                        text(parameter, "name")
                    ));
                    0
                }
            };
            combinations *= size;
        }
        if spec["maxTrialCount"]
            .as_i64()
            .is_some_and(|max| max as u128 > combinations)
        {
            out.push(format!(
                "spec.maxTrialCount: more than the grid's {combinations} combinations"
            ));
        }
    }
}

/// validateEarlyStopping, and the medianstop service's `validate_medianstop_setting`
/// (`pkg/earlystopping/v1beta1/medianstop/service.py`).
fn early_stopping_problems(spec: &Value, out: &mut Vec<String>) {
    let early = &spec["earlyStopping"];
    if early.is_null() {
        return;
    }
    let name = text(early, "algorithmName");
    if !EARLY_STOPPINGS.contains(&name) {
        return out.push(format!(
            "spec.earlyStopping.algorithmName: no early stopping config for `{name}`"
        ));
    }
    for (setting, value) in settings(&early["algorithmSettings"]) {
        let valid = match setting.as_str() {
            "min_trials_required" => python_int(&value).is_some_and(|n| n > 0),
            "start_step" => python_int(&value).is_some_and(|n| n >= 1),
            _ => {
                out.push(format!(
                    "spec.earlyStopping: unknown setting {setting} for algorithm medianstop"
                ));
                continue;
            }
        };
        if !valid {
            out.push(format!(
                "spec.earlyStopping: {setting} `{value}` is out of range"
            ));
        }
    }
}

/// validateParameters.
fn parameter_problems(index: usize, parameter: &Value, out: &mut Vec<String>) {
    let at = format!("spec.parameters[{index}]");
    let kind = text(parameter, "parameterType");
    if !matches!(
        kind,
        "int" | "double" | "categorical" | "discrete" | "unknown"
    ) {
        out.push(format!("{at}.parameterType: `{kind}` is not supported"));
    }
    let space = &parameter["feasibleSpace"];
    let distribution = text(space, "distribution");
    if !matches!(
        distribution,
        "" | "uniform" | "logUniform" | "normal" | "logNormal" | "unknown"
    ) {
        out.push(format!(
            "{at}.feasibleSpace.distribution: `{distribution}` is not supported"
        ));
    }
    if space.as_object().is_none_or(|fields| fields.is_empty()) {
        return out.push(format!("{at}.feasibleSpace: must be specified"));
    }
    let (min, max, step) = (text(space, "min"), text(space, "max"), text(space, "step"));
    match kind {
        "int" | "double" => {
            if space["list"]
                .as_array()
                .is_some_and(|list| !list.is_empty())
            {
                out.push(format!("{at}.feasibleSpace.list: not supported for {kind}"));
            }
            if min.is_empty() || max.is_empty() {
                out.push(format!(
                    "{at}.feasibleSpace.max: min and max must be specified for {kind}"
                ));
            }
        }
        "categorical" | "discrete" if !(min.is_empty() && max.is_empty() && step.is_empty()) => out
            .push(format!(
                "{at}.feasibleSpace: min, max and step are not supported for {kind}"
            )),
        _ => {}
    }
}

/// validateTrialTemplate (with validateTrialJob's conversion, approximated: the Job
/// must be one; `tests/sweep_k8s.rs` checks it against Kubernetes' schema), and the pod
/// webhook's need of the primary container (`getPrimaryContainerIndex`).
fn trial_template_problems(spec: &Value, out: &mut Vec<String>) {
    let template = &spec["trialTemplate"];
    if template.is_null() {
        return out.push("spec.trialTemplate: must be specified".into());
    }
    let primary = text(template, "primaryContainerName");
    if primary.is_empty() {
        out.push("spec.trialTemplate.primaryContainerName: must be specified".into());
    }
    if text(template, "successCondition").is_empty()
        || text(template, "failureCondition").is_empty()
    {
        out.push(
            "spec.trialTemplate: successCondition and failureCondition must be specified".into(),
        );
    }
    let Some(trial_parameters) = template["trialParameters"].as_array() else {
        return out.push("spec.trialTemplate.trialParameters: must be specified".into());
    };
    let trial_spec = &template["trialSpec"];
    match (trial_spec.is_null(), template["configMap"].is_null()) {
        (true, true) => {
            return out.push("spec.trialTemplate: trialSpec or configMap must be specified".into())
        }
        (false, false) => {
            return out.push("spec.trialTemplate: only one of trialSpec or configMap".into())
        }
        _ => {}
    }
    if trial_spec.is_null() {
        return;
    }
    // GetTrialTemplate: the trialSpec as JSON text, in which Katib substitutes.
    let mut template_text = trial_spec.to_string();
    let parameter_names: HashSet<&str> = spec["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|parameter| text(parameter, "name"))
        .collect();
    let meta = regex::Regex::new(r"\$\{trialSpec\.(.+?)\}").unwrap();
    let (mut names, mut references) = (HashSet::new(), HashSet::new());
    for (index, parameter) in trial_parameters.iter().enumerate() {
        let at = format!("spec.trialTemplate.trialParameters[{index}]");
        let (name, reference) = (text(parameter, "name"), text(parameter, "reference"));
        if name.is_empty() || reference.is_empty() || name.contains(['{', '}']) {
            out.push(format!(
                "{at}: name and reference must be specified and name must not contain '{{' or '}}'"
            ));
            continue;
        }
        if !names.insert(name) {
            out.push(format!("{at}.name: `{name}` is duplicated"));
            continue;
        }
        if !references.insert(reference) {
            out.push(format!("{at}.reference: `{reference}` is duplicated"));
            continue;
        }
        // isMetaKey: `${trialSpec.Name}` and its kin need no parameter.
        let is_meta = meta.captures(reference).is_some_and(|found| {
            let key = &found[1];
            let base = key.split('[').next().unwrap_or(key);
            [
                "Name",
                "Namespace",
                "Kind",
                "APIVersion",
                "Annotations",
                "Labels",
            ]
            .contains(&base)
        });
        if !parameter_names.is_empty() && !is_meta && !parameter_names.contains(reference) {
            out.push(format!(
                "{at}.reference: `{reference}` does not exist in spec.parameters"
            ));
        }
        let placeholder = format!("${{trialParameters.{name}}}");
        if !template_text.contains(&placeholder) {
            out.push(format!(
                "{at}.name: `{name}` is not found in spec.trialTemplate"
            ));
            return;
        }
        template_text = template_text.replace(&placeholder, "test-value");
    }
    let left = regex::Regex::new(r"\$\{trialParameters\..+?\}").unwrap();
    let unreplaced: Vec<&str> = left
        .find_iter(&template_text)
        .map(|found| found.as_str())
        .collect();
    if !unreplaced.is_empty() {
        out.push(format!(
            "spec.trialTemplate: parameters {unreplaced:?} not found in spec.trialParameters"
        ));
    }
    let Ok(run_spec) = serde_json::from_str::<Value>(&template_text) else {
        return out.push("spec.trialTemplate: unable to convert to unstructured".into());
    };
    if !text(&run_spec["metadata"], "name").is_empty()
        || !text(&run_spec["metadata"], "namespace").is_empty()
    {
        out.push("spec.trialTemplate: metadata.name and metadata.namespace must be omitted".into());
    }
    if text(&run_spec, "apiVersion").is_empty() || text(&run_spec, "kind").is_empty() {
        out.push("spec.trialTemplate: APIVersion and Kind must be specified".into());
    }
    if text(&run_spec, "apiVersion") == "batch/v1" && text(&run_spec, "kind") == "Job" {
        let containers = &run_spec["spec"]["template"]["spec"]["containers"];
        if !containers.as_array().is_some_and(|list| {
            list.iter()
                .any(|container| text(container, "name") == primary)
        }) {
            out.push(format!(
                "spec.trialTemplate: no container `{primary}` in the Job's pod"
            ));
        }
    }
}

/// validateMetricsCollector.
fn metrics_collector_problems(spec: &Value, out: &mut Vec<String>) {
    let collector = &spec["metricsCollectorSpec"];
    let kind = match text(&collector["collector"], "kind") {
        "" => "StdOut", // setDefaultMetricsCollector
        kind => kind,
    };
    if !COLLECTORS.contains(&kind) {
        return out.push(format!(
            "spec.metricsCollectorSpec.collector.kind: invalid kind `{kind}`"
        ));
    }
    let source = &collector["source"];
    if kind == "File" {
        let path = &source["fileSystemPath"];
        if text(path, "kind") != "File" || !text(path, "path").starts_with('/') {
            out.push("spec.metricsCollectorSpec.source.fileSystemPath.path: file path where metrics file exists is required".into());
        }
        let format = text(path, "format");
        if !matches!(format, "TEXT" | "JSON") {
            out.push("spec.metricsCollectorSpec.source.fileSystemPath.format: format of metrics file is required".into());
        }
        if format == "JSON" && !source["filter"].is_null() {
            out.push("spec.metricsCollectorSpec.source.filter: filter must be nil when format of metrics file is json".into());
        }
    }
    let two_groups = regex::Regex::new(r".*\(.*\).*\(.*\).*").unwrap();
    for format in source["filter"]["metricsFormat"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let format = format.as_str().unwrap_or_default();
        match regex::Regex::new(format) {
            Err(error) => out.push(format!("spec.metricsCollectorSpec.source.filter.metricsFormat: invalid filter: {error}")),
            Ok(_) if !two_groups.is_match(format) => out.push(
                "spec.metricsCollectorSpec.source.filter.metricsFormat: two top subexpressions are required".into(),
            ),
            Ok(_) => {}
        }
    }
}

/// Both checks' problems.
pub fn problems(experiment: &Value) -> Vec<String> {
    let mut found = schema_problems(experiment);
    found.extend(validator_problems(experiment));
    found
}
