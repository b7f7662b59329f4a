//! A sweep that learns (`early_stop:` or `tpe:`) as a Katib Experiment
//! (`kubeflow.org/v1beta1`): an Indexed Job runs every trial to its end with trials fixed
//! up front, so such a sweep goes to Kubernetes' own tuning engine instead. Pure: the
//! sweep (and its file's text, for the places of what cannot be expressed) in, YAML and
//! notes out.
//!
//! What maps to what (Katib's names from its API types and its services' settings):
//! - `tpe:` → algorithm `tpe` (hyperopt's TPE), `random_state` its seed; `random:` →
//!   `random` (hyperopt), `params:` → `grid` (Optuna's grid sampler). A `trials:` list has
//!   no Katib algorithm and is refused.
//! - `early_stop:` → early stopping `medianstop`: `start_step` from `grace`,
//!   `min_trials_required` from `min_trials` (ASHA, which Katib lacks, from `reduction`),
//!   with what differs said in the YAML's header and the notes.
//! - `objective` → `type`, `objectiveMetricName` and a metric strategy from `use:`
//!   (`last`: latest, `best`: max or min); `count` → `maxTrialCount`, the slots →
//!   `parallelTrialCount`, `max_failed` → `maxFailedTrialCount`.
//! - params → `parameters`: `uniform` a double, `loguniform` a double with Katib's
//!   `logUniform`, `int` an int, `choice` and grid axes a list (`discrete` for numbers,
//!   else `categorical`).
//! - The trial: a Job whose container (`trial`) runs the sweep's image as the Job export's
//!   does (the same limits, GPUs, securityContext, shm and variables), its command
//!   through `sh -c` as one line: Katib's pod webhook joins the primary container's words
//!   with spaces into `sh -c "... || <early stop> && <mark completed>"`, so every word is
//!   quoted here, and the params are `${trialParameters.NAME}` (Katib substitutes their
//!   values in the template's text; a value that would break that text or the quoting is
//!   refused at its place). Every other `$` is doubled: the kubelet expands `$(NAME)` in
//!   commands and env and makes `$$` one `$`, which Katib's own wrapper relies on.
//! - Metrics: Katib's File collector reads `$TFIMG_TRIAL_DIR/metrics.jsonl`, where Katib
//!   mounts an empty folder shared with its collector. Its `TEXT` format with a filter
//!   that reads each `"name": number` of a line, not its `JSON` format: that one takes only
//!   string values (`parseLogsInJsonFormat`: `jsonObj[m].(string)`), and tfimg's trials
//!   write numbers.

use serde_json::{json, Value};

use crate::input::source::SpecError;
use crate::labels;
use crate::sweep::early_stop::Rule;
use crate::sweep::read::Places;
use crate::sweep::search::{Distribution, Search};
use crate::sweep::template::Piece;
use crate::sweep::trials::{self, PARAMS_FILE};
use crate::sweep::value::ParamValue;
use crate::sweep::{Mode, Pick, Sweep, TRIAL_DIR};
use crate::team::k8s::{container_security, pod_security, render, shm};

use super::{cluster_slots, image_notes, limits, mount_notes, pulled_image, K8sOptions};
use super::{POD_GID, POD_UID};

/// The trial's container, Katib's `primaryContainerName`.
pub const CONTAINER: &str = "trial";

/// The trial parameter that gives `TFIMG_TRIAL` the Katib trial's name (`${trialSpec.Name}`):
/// a hyphen, which no param name has.
pub const TRIAL_NAME_PARAMETER: &str = "tfimg-trial";

/// What Katib's File collector (format `TEXT`) reads of each line of `metrics.jsonl`:
/// every `"name": number`, the name first and the value second, as its filters must.
pub const METRICS_FILTER: &str =
    r#""([A-Za-z_][A-Za-z0-9_./-]*)"\s*:\s*(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"#;

/// A Job's trial is done or failed as Katib's defaults for `batch/v1` Jobs say
/// (`DefaultJobSuccessCondition`, `DefaultJobFailureCondition`); the validator asks for them.
const SUCCESS_CONDITION: &str = r#"status.conditions.#(type=="Complete")#|#(status=="True")#"#;
const FAILURE_CONDITION: &str = r#"status.conditions.#(type=="Failed")#|#(status=="True")#"#;

/// numpy's `RandomState`, which takes hyperopt's `random_state`, takes seeds below 2^32.
const MAX_KATIB_SEED: u64 = u32::MAX as u64;

/// The Experiment and what the user should know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct KatibExport {
    /// The Experiment as one YAML document after a header of comments.
    pub manifests: String,
    /// What differs from `tfimg sweep`, then the notes the Job export also gives; said on
    /// stderr as `note: ...`.
    pub notes: Vec<String>,
    pub image: String,
    pub experiment: String,
    /// Katib's algorithm: `tpe`, `random` or `grid`.
    pub algorithm: &'static str,
    /// `medianstop`, when the sweep stops trials early.
    pub early_stopping: Option<&'static str>,
    pub max_trials: usize,
    pub parallel: usize,
}

/// The sweep (whose file reads `text`) as a Katib Experiment, or what cannot be expressed.
pub fn export(sweep: &Sweep, text: &str, options: &K8sOptions) -> Result<KatibExport, SpecError> {
    let places = Places::new(text, &options.file);
    let Some(objective) = &sweep.objective else {
        return Err(places.bad_key(
            "sweep",
            "a Katib Experiment needs an `objective`".into(),
            "add the metric the trials report, such as `objective: {metric: val_accuracy, mode: max}`",
        ));
    };
    let (algorithm, settings) = algorithm(&sweep.search, &places)?;
    let parameters = parameters(&sweep.search, &places)?;
    let max_trials = sweep.search.count();
    let parallel = cluster_slots(sweep)?.min(max_trials).max(1);
    let differences = differences(sweep, parallel);
    let mut notes = differences.clone();
    notes.extend(mount_notes(sweep)?);
    let image = pulled_image(options);
    notes.extend(image_notes(sweep, options, &image));
    let labels = json!({
        "app.kubernetes.io/name": sweep.name,
        "app.kubernetes.io/managed-by": "tfimg",
        labels::SWEEP: sweep.name,
    });
    let strategy = match (objective.pick, objective.mode) {
        (Pick::Last, _) => "latest",
        (Pick::Best, Mode::Max) => "max",
        (Pick::Best, Mode::Min) => "min",
    };
    let mut algorithm_spec = json!({"algorithmName": algorithm});
    if !settings.is_empty() {
        algorithm_spec["algorithmSettings"] = Value::from(settings);
    }
    let mut spec = json!({
        "objective": {
            "type": match objective.mode { Mode::Max => "maximize", Mode::Min => "minimize" },
            "objectiveMetricName": objective.metric,
            "metricStrategies": [{"name": objective.metric, "value": strategy}],
        },
        "algorithm": algorithm_spec,
        "parallelTrialCount": parallel,
        "maxTrialCount": max_trials,
        "parameters": parameters.iter().map(|parameter| parameter.spec.clone()).collect::<Vec<_>>(),
        "metricsCollectorSpec": {
            "collector": {"kind": "File"},
            "source": {
                "fileSystemPath": {
                    "path": format!("{TRIAL_DIR}/{}", trials::METRICS_FILE),
                    "kind": "File",
                    "format": "TEXT",
                },
                "filter": {"metricsFormat": [METRICS_FILTER]},
            },
        },
        "trialTemplate": trial_template(sweep, &parameters, &image, &labels),
    });
    let early_stopping = sweep.early_stop.as_ref().map(|early_stop| {
        let (start_step, min_trials) = match early_stop.rule {
            Rule::Median {
                grace, min_trials, ..
            } => (grace, min_trials),
            Rule::Asha {
                grace, reduction, ..
            } => (grace, reduction),
        };
        spec["earlyStopping"] = json!({
            "algorithmName": "medianstop",
            "algorithmSettings": [
                {"name": "min_trials_required", "value": min_trials.max(1).to_string()},
                {"name": "start_step", "value": start_step.max(1).to_string()},
            ],
        });
        "medianstop"
    });
    // `max_failed: n` ends the sweep at its n-th failed trial, as Katib's Experiment fails
    // once that many failed; never above the trials (the validator refuses it).
    if let Some(failed) = sweep
        .max_failed
        .filter(|failed| *failed as usize <= max_trials)
    {
        spec["maxFailedTrialCount"] = json!(failed);
    }
    let experiment = json!({
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Experiment",
        "metadata": {"name": sweep.name, "labels": labels},
        "spec": spec,
    });
    let mut header = format!(
        "# Generated by tfimg from sweep `{}`: a Katib Experiment (kubeflow.org/v1beta1, {algorithm}{}, {max_trials} trials,\n# {parallel} at once) for a cluster with Katib and the NVIDIA device plugin.\n",
        sweep.name,
        early_stopping.map_or(String::new(), |name| format!(" with {name} early stopping")),
    );
    header.push_str("# What differs from `tfimg sweep`:\n");
    for difference in &differences {
        header.push_str(&format!("#   - {difference}\n"));
    }
    Ok(KatibExport {
        manifests: render(&header, &[experiment]),
        notes,
        image,
        experiment: sweep.name.clone(),
        algorithm,
        early_stopping,
        max_trials,
        parallel,
    })
}

/// Katib's algorithm for the search and its settings.
fn algorithm(search: &Search, places: &Places) -> Result<(&'static str, Vec<Value>), SpecError> {
    let (name, section, seed) = match search {
        Search::Grid(_) => return Ok(("grid", Vec::new())),
        Search::Random { seed, .. } => ("random", "random", *seed),
        Search::Tpe(tpe) => ("tpe", "tpe", tpe.seed),
        Search::List(_) => {
            return Err(places.bad_key(
                "trials",
                "a `trials:` list cannot go to Katib, which has no algorithm that runs given param sets".into(),
                "for `--k8s`, write the params as `params:` (a grid) or `random:`; or run the sweep with `tfimg sweep FILE`",
            ))
        }
    };
    if seed > MAX_KATIB_SEED {
        return Err(places.bad(
            &format!("{section}.seed"),
            format!("`{section}.seed: {seed}` is more than Katib takes ({MAX_KATIB_SEED}): its `random_state` seeds numpy, which takes 32 bits"),
            "use a smaller seed for `--k8s`, such as `seed: 7`",
        ));
    }
    Ok((
        name,
        vec![json!({"name": "random_state", "value": seed.to_string()})],
    ))
}

/// A Katib parameter and how its value is written in `params.json`.
struct Parameter {
    name: String,
    spec: Value,
    /// Its values are numbers or booleans: written bare in JSON, else as a string.
    bare: bool,
}

fn parameters(search: &Search, places: &Places) -> Result<Vec<Parameter>, SpecError> {
    match search {
        Search::Grid(axes) => axes
            .iter()
            .map(|(name, values)| listed(name, values, &format!("params.{name}"), places))
            .collect(),
        Search::Random { params, .. } | Search::Tpe(crate::sweep::search::Tpe { params, .. }) => {
            let section = match search {
                Search::Tpe(_) => "tpe",
                _ => "random",
            };
            params
                .iter()
                .map(|(name, distribution)| {
                    let number = |value: f64| ParamValue::Float(value).text();
                    let (kind, space) = match distribution {
                        Distribution::Uniform(low, high) => (
                            "double",
                            json!({"min": number(*low), "max": number(*high), "distribution": "uniform"}),
                        ),
                        Distribution::LogUniform(low, high) => (
                            "double",
                            json!({"min": number(*low), "max": number(*high), "distribution": "logUniform"}),
                        ),
                        Distribution::Int(low, high) => (
                            "int",
                            json!({"min": low.to_string(), "max": high.to_string(), "distribution": "uniform"}),
                        ),
                        Distribution::Choice(values) => {
                            let path = format!("{section}.{name}.choice");
                            return listed(name, values, &path, places);
                        }
                    };
                    Ok(Parameter {
                        name: name.clone(),
                        spec: json!({"name": name, "parameterType": kind, "feasibleSpace": space}),
                        bare: true,
                    })
                })
                .collect()
        }
        Search::List(_) => Ok(Vec::new()),
    }
}

/// A parameter of listed values (a grid axis, a `choice`) at `path`. Katib writes a value
/// into the template's JSON text and tfimg's `sh -c` line as it is: one holding a quote,
/// a backslash or a `$` cannot be, and a list holds each value once.
fn listed(
    name: &str,
    values: &[ParamValue],
    path: &str,
    places: &Places,
) -> Result<Parameter, SpecError> {
    let mut texts: Vec<String> = Vec::new();
    for (index, value) in values.iter().enumerate() {
        let text = value.text();
        if text.contains(['\'', '"', '\\', '$']) {
            return Err(places.bad(
                &format!("{path}[{index}]"),
                format!("`{text}` cannot go to Katib: it writes a param's value into the trial's template and command as it is, where a quote, a backslash or a `$` breaks them"),
                "for `--k8s`, use values of letters, digits and `-_.:/,;=+@% ` (the trial can map a plain name to what it needs)",
            ));
        }
        if texts.contains(&text) {
            return Err(places.bad(
                &format!("{path}[{index}]"),
                format!(
                    "`{text}` is listed twice for `{name}`: Katib's list holds each value once"
                ),
                "list each value once",
            ));
        }
        texts.push(text);
    }
    let numbers = values
        .iter()
        .all(|value| matches!(value, ParamValue::Int(_) | ParamValue::Float(_)));
    let bare = values
        .iter()
        .all(|value| !matches!(value, ParamValue::Text(_)));
    Ok(Parameter {
        name: name.to_string(),
        spec: json!({
            "name": name,
            "parameterType": if numbers { "discrete" } else { "categorical" },
            "feasibleSpace": {"list": texts},
        }),
        bare,
    })
}

fn placeholder(name: &str) -> String {
    format!("${{trialParameters.{name}}}")
}

/// What of the sweep Katib does differently, one line each.
fn differences(sweep: &Sweep, parallel: usize) -> Vec<String> {
    let mut lines = Vec::new();
    match &sweep.search {
        Search::Tpe(tpe) => lines.push(format!(
            "Katib's `tpe` is hyperopt's TPE: it starts from as many random trials as it is first asked for (`parallelTrialCount`, {parallel}), not `startup: {}`, and it draws other values than tfimg's TPE for the same seed",
            tpe.startup
        )),
        Search::Random { .. } => lines.push(
            "Katib's `random` is hyperopt's: it draws other values than tfimg for the same seed, unrounded".into(),
        ),
        Search::Grid(_) => lines.push(
            "Katib's `grid` (Optuna's grid sampler) runs the grid's trials in an order of its own, not the file's".into(),
        ),
        Search::List(_) => {}
    }
    if let Some(early_stop) = &sweep.early_stop {
        if let Rule::Asha {
            max_epochs,
            grace,
            reduction,
            brackets,
            ..
        } = early_stop.rule
        {
            let brackets = match brackets {
                1 => String::new(),
                n => format!(" nor brackets ({n})"),
            };
            lines.push(format!(
                "`early_stop: {{rule: asha}}` has no Katib equivalent: written as Katib's `medianstop`, the nearest it has (`start_step` {} from `grace`, `min_trials_required` {} from `reduction`); no rungs{brackets}, and `max_epochs: {max_epochs}` has no setting",
                grace.max(1),
                reduction.max(1)
            ));
        }
        if let Rule::Median {
            max_epochs: Some(max_epochs),
            ..
        } = early_stop.rule
        {
            lines.push(format!(
                "Katib judges every report from `start_step` on: `max_epochs: {max_epochs}` has no setting"
            ));
        }
        lines.push("Katib's `medianstop` is not tfimg's median rule: when Katib creates a trial it takes the mean, over the trials that succeeded so far (once `min_trials_required` have), of each one's average over its first `start_step` reports, and stops the trial the first time its best value so far, from its `start_step`-th report on, is worse; tfimg compares a trial's best value so far with the median of the other trials' running averages up to the same epoch, at every epoch, counting the running ones".into());
    }
    lines.push(format!(
        "Katib mounts an empty folder of the pod's own at `{TRIAL_DIR}` (`$TFIMG_TRIAL_DIR`) to read `{}`: what a trial writes there goes with its pod; Katib keeps the metrics, and what a trial must keep goes to storage of its own",
        trials::METRICS_FILE
    ));
    lines
}

/// The trial template: a Job running the sweep's image with the trial's command.
fn trial_template(sweep: &Sweep, parameters: &[Parameter], image: &str, labels: &Value) -> Value {
    // A trial whose params are Katib's placeholders: its variables in the order a local
    // trial has them, `TFIMG_TRIAL` from Katib's trial name.
    let params = parameters
        .iter()
        .map(|parameter| {
            let value = ParamValue::Text(placeholder(&parameter.name));
            (parameter.name.clone(), value)
        })
        .collect();
    let trial = trials::trial(sweep, 0, params);
    let placeholders: Vec<String> = parameters
        .iter()
        .map(|parameter| labels::param_variable(&parameter.name))
        .collect();
    let env: Vec<Value> = trial
        .env
        .iter()
        .map(|(name, value)| {
            let value = if name == labels::TRIAL_VARIABLE {
                placeholder(TRIAL_NAME_PARAMETER)
            } else if placeholders.contains(name) {
                value.clone()
            } else {
                value.replace('$', "$$")
            };
            json!({"name": name, "value": value})
        })
        .collect();
    let (shm, shm_mount) = shm(sweep.limits.shm_size);
    let mut container = json!({
        "name": CONTAINER,
        "image": image,
        "command": ["sh", "-c", command_line(sweep, parameters)],
        "env": env,
        "volumeMounts": [shm_mount],
        "securityContext": container_security(),
    });
    let limits = limits(sweep);
    if !limits.is_empty() {
        container["resources"] = json!({"limits": limits});
    }
    let mut pod = json!({
        "restartPolicy": "Never",
        "automountServiceAccountToken": false,
        "securityContext": pod_security(POD_UID, POD_GID),
        "containers": [container],
        "volumes": [shm],
    });
    // `timeout:` is each attempt's deadline, as in the Job export.
    if let Some(timeout) = sweep.timeout {
        pod["activeDeadlineSeconds"] = json!(timeout.as_secs().max(1));
    }
    let mut trial_parameters: Vec<Value> = parameters
        .iter()
        .map(|parameter| {
            json!({
                "name": parameter.name,
                "reference": parameter.name,
                "description": format!("param `{}` of the sweep", parameter.name),
            })
        })
        .collect();
    trial_parameters.push(json!({
        "name": TRIAL_NAME_PARAMETER,
        "reference": "${trialSpec.Name}",
        "description": "the trial's name, as TFIMG_TRIAL",
    }));
    json!({
        "primaryContainerName": CONTAINER,
        "successCondition": SUCCESS_CONDITION,
        "failureCondition": FAILURE_CONDITION,
        "trialParameters": trial_parameters,
        "trialSpec": {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"labels": labels},
            "spec": {
                // Each trial's own retries.
                "backoffLimit": sweep.retries,
                "template": {"metadata": {"labels": labels}, "spec": pod},
            },
        },
    })
}

/// The trial's `sh -c` line: its `params.json` into its folder, then its command, every
/// word quoted and every `$` but the placeholders' doubled (see the module's header).
fn command_line(sweep: &Sweep, parameters: &[Parameter]) -> String {
    let fields: Vec<String> = parameters
        .iter()
        .map(|parameter| {
            let key = Value::String(parameter.name.clone()).to_string();
            match parameter.bare {
                true => format!("{key}: {}", placeholder(&parameter.name)),
                false => format!("{key}: \"{}\"", placeholder(&parameter.name)),
            }
        })
        .collect();
    let words: Vec<String> = sweep
        .command
        .arguments
        .iter()
        .map(|pieces| word(pieces))
        .collect();
    format!(
        "printf '%s\\n' '{{{}}}' >\"$$TFIMG_TRIAL_DIR/{PARAMS_FILE}\" && {}",
        fields.join(", "),
        words.join(" ")
    )
}

/// One word of the command for sh: quoted by `shlex` when it has no param, else in single
/// quotes around Katib's placeholders (whose values hold no quote: `listed`).
fn word(pieces: &[Piece]) -> String {
    if pieces.iter().all(|piece| matches!(piece, Piece::Text(_))) {
        let text: String = pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => text.as_str(),
                Piece::Param(_) => "",
            })
            .collect();
        return super::quote(&text).replace('$', "$$");
    }
    let mut quoted = String::from("'");
    for piece in pieces {
        match piece {
            Piece::Text(text) => quoted.push_str(&text.replace('\'', "'\\''").replace('$', "$$")),
            Piece::Param(name) => quoted.push_str(&placeholder(name)),
        }
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod rules_tests;
#[cfg(test)]
mod tests;
