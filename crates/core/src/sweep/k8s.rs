//! A sweep as Kubernetes manifests, for a cluster with the NVIDIA device plugin and a
//! storage class that offers ReadWriteMany: a PersistentVolumeClaim for the sweep's
//! folder, a ConfigMap holding every trial by its completion index, and one Indexed Job
//! (a completion per trial, as many pods at once as the sweep has slots, each with its
//! trial's GPUs by count). Pure: the sweep and its trials in, YAML and notes out.
//!
//! How a pod becomes its trial: Kubernetes gives each pod of an Indexed Job its index in
//! `JOB_COMPLETION_INDEX`. The container runs `sh /tfimg/trials/launch.sh` (through the
//! image's entrypoint, as locally), which reads `<index>.sh` from the ConfigMap: the
//! trial's `TFIMG_*` variables and its arguments as `set -- ...`, every word quoted for
//! POSIX sh by `shlex` (single quotes, which sh reads byte for byte, newlines included),
//! then makes the trial's folder `<claim>/<trial>/`, links it at `TFIMG_TRIAL_DIR`
//! (`/tfimg/trial`, as locally), copies `<index>.json` there as `params.json` and execs
//! the arguments. What every trial shares (the sweep's `env:`, `TFIMG_SWEEP`,
//! `TFIMG_TRIAL_DIR`) is in the Job's `env`, with each `$` doubled: Kubernetes expands
//! `$(NAME)` in `env` values and turns `$$` into `$`. Nothing else in the pod spec holds a
//! `$`: the launcher is a file of the ConfigMap, whose files Kubernetes leaves as written.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::input::source::SpecError;
use crate::input::InputError;
use crate::labels;
use crate::plan::mounts;
use crate::team::k8s::{container_security, pod_security, render, shm};

use super::schedule;
use super::trials::{Trial, MEMORY_GROWTH_VARIABLE, PARAMS_FILE};
use super::{GpuPool, Sweep, TRIAL_DIR};

/// The uid and gid the pods run as (the images' own user), owning the claim's files.
pub const POD_UID: u32 = 1000;
pub const POD_GID: u32 = 1000;

/// The claim's size unless `--volume-size` says otherwise.
pub const DEFAULT_VOLUME_SIZE: &str = "10Gi";

/// An empty folder of the pod's own (an emptyDir), holding the three below and the link
/// `TFIMG_TRIAL_DIR` to the trial's folder: `/tfimg`, the parent of `TRIAL_DIR`.
pub const POD_FOLDER: &str = "/tfimg";
/// Where the ConfigMap's files are.
pub const TRIALS_FOLDER: &str = "/tfimg/trials";
/// Where the claim is: the sweep's folder, one folder per trial (`t001/`, ...).
pub const RUNS_FOLDER: &str = "/tfimg/runs";
/// The launcher's key in the ConfigMap.
pub const LAUNCHER: &str = "launch.sh";

/// Kubernetes refuses a ConfigMap whose data is larger.
const MAX_CONFIG_MAP_BYTES: usize = 1024 * 1024;

/// What the export needs beyond the sweep.
#[derive(Debug, Clone)]
pub struct K8sOptions {
    /// The sweep file as the user named it, for messages.
    pub file: String,
    /// The image as `tfimg build` tags it (`tfimg/cpu-headless:2.9.3`) or `image:` names it.
    pub image: String,
    /// `--registry`: the prefix the cluster pulls the image with (checked by `check_flags`).
    pub registry: Option<String>,
    /// `--volume-size`: the claim's size (checked by `check_flags`).
    pub volume_size: String,
}

/// The manifests and what the user should know about them.
#[derive(Debug, Clone, PartialEq)]
pub struct K8sExport {
    /// PersistentVolumeClaim, ConfigMap and Job as one multi-document YAML text.
    pub manifests: String,
    /// Said on stderr as `note: ...`.
    pub notes: Vec<String>,
    /// The image the pods pull.
    pub image: String,
    pub job: String,
    pub config_map: String,
    pub claim: String,
    pub completions: usize,
    pub parallelism: usize,
}

/// `--registry` and `--volume-size`, refused before anything is read or written.
pub fn check_flags(registry: Option<&str>, volume_size: &str) -> Result<(), InputError> {
    if let Some(registry) = registry {
        if !crate::spec::syntax::valid_registry_host(registry.trim_end_matches('/')) {
            return Err(InputError::new(
                format!("`--registry {registry}` is not a registry host"),
                "give a host and port such as `127.0.0.1:5000` or `registry.example.com`",
            ));
        }
    }
    if !is_quantity(volume_size) {
        return Err(InputError::new(
            format!("`--volume-size {volume_size}` is not a Kubernetes size"),
            "write a size with a binary unit, such as `10Gi` or `500Mi`",
        ));
    }
    Ok(())
}

/// A storage quantity above zero: digits, an optional fraction, an optional unit.
fn is_quantity(text: &str) -> bool {
    const UNITS: [&str; 13] = [
        "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "k", "M", "G", "T", "P", "E", "",
    ];
    let number = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[number.len()..];
    let (whole, fraction) = number.split_once('.').unwrap_or((number, "0"));
    let digits = |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit());
    UNITS.contains(&unit)
        && digits(whole)
        && digits(fraction)
        && number.chars().any(|c| c.is_ascii_digit() && c != '0')
}

/// The sweep as an Indexed Job's manifests, or why it cannot run as one (a sweep that
/// `learns` goes to `katib::export`).
pub fn export(
    sweep: &Sweep,
    trials: &[Trial],
    options: &K8sOptions,
) -> Result<K8sExport, SpecError> {
    if let Some(early_stop) = &sweep.early_stop {
        return Err(SpecError::new(
            Some(early_stop.location.clone()),
            format!(
                "`early_stop: {{rule: {}}}` cannot go to Kubernetes: an Indexed Job runs every trial to its end, and nothing there watches the trials to stop the losing ones",
                early_stop.rule.name()
            ),
            "`tfimg sweep FILE --k8s` writes such a sweep as a Katib Experiment (`katib::export`), whose early stopping watches the trials",
        ));
    }
    if let crate::sweep::Search::Tpe(tpe) = &sweep.search {
        return Err(SpecError::new(
            Some(tpe.location.clone()),
            "`tpe:` cannot go to Kubernetes: an Indexed Job's trials are fixed when it is created, and TPE proposes each trial from the ones that ended",
            "`tfimg sweep FILE --k8s` writes such a sweep as a Katib Experiment (`katib::export`), whose TPE proposes trials as they end",
        ));
    }
    let parallelism = cluster_slots(sweep)?.min(trials.len()).max(1);
    let mut notes = mount_notes(sweep)?;
    let names = Names::of(&sweep.name);
    let labels = json!({
        "app.kubernetes.io/name": sweep.name,
        "app.kubernetes.io/managed-by": "tfimg",
        labels::SWEEP: sweep.name,
    });
    let (shared, own) = split_env(trials);
    let data = config_map_data(&sweep.name, trials, &own);
    let bytes: usize = data
        .iter()
        .map(|(key, value)| key.len() + value.as_str().map_or(0, str::len))
        .sum();
    if bytes > MAX_CONFIG_MAP_BYTES {
        return Err(SpecError::new(
            None,
            format!(
                "sweep file `{}`: its {} trials need a ConfigMap of {} KiB, more than the 1024 KiB Kubernetes allows",
                options.file,
                trials.len(),
                bytes.div_ceil(1024)
            ),
            "split the sweep into smaller ones for `--k8s` (fewer trials each)",
        ));
    }
    let image = pulled_image(options);
    notes.extend(image_notes(sweep, options, &image));
    let job = job(
        sweep,
        trials.len(),
        parallelism,
        &image,
        &shared,
        &names,
        &labels,
    );
    let claim = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": names.claim, "labels": labels},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": options.volume_size}},
        },
    });
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": names.config_map, "labels": labels},
        "data": data,
    });
    let header = format!(
        "# Generated by tfimg from sweep `{}`: {} trials as an Indexed Job (Kubernetes 1.29 or later) for a\n# cluster with the NVIDIA device plugin and a ReadWriteMany storage class. Pod index i runs trial i + 1.\n",
        sweep.name,
        trials.len()
    );
    Ok(K8sExport {
        manifests: render(&header, &[claim, config_map, job]),
        notes,
        image,
        job: names.job,
        config_map: names.config_map,
        claim: names.claim,
        completions: trials.len(),
        parallelism,
    })
}

/// Whether the sweep learns as it runs (`early_stop:` or `tpe:`): then `--k8s` writes a
/// Katib Experiment (`katib::export`), else an Indexed Job (`export`).
pub fn learns(sweep: &Sweep) -> bool {
    sweep.early_stop.is_some() || sweep.search.learns()
}

/// The image as the cluster pulls it: `--registry`'s prefix, then the image.
fn pulled_image(options: &K8sOptions) -> String {
    match &options.registry {
        Some(registry) => format!("{}/{}", registry.trim_end_matches('/'), options.image),
        None => options.image.clone(),
    }
}

/// The names of the sweep's objects.
struct Names {
    job: String,
    config_map: String,
    claim: String,
}

impl Names {
    fn of(sweep: &str) -> Names {
        Names {
            job: sweep.to_string(),
            config_map: format!("{sweep}-trials"),
            claim: format!("{sweep}-runs"),
        }
    }
}

/// How many trials run at once: the sweep's slots, which need no host for a listed pool
/// or the CPU. `gpus: all` means this host's GPUs, which a cluster does not have.
fn cluster_slots(sweep: &Sweep) -> Result<usize, SpecError> {
    if sweep.pool.gpus == GpuPool::All {
        return Err(SpecError::new(
            Some(sweep.pool.location.clone()),
            "`gpus: all` means this host's GPUs, which a cluster does not have",
            "list the pool for `--k8s`: `gpus: [0, 1, 2]` runs three trials at once, `gpus_per_trial` GPUs each, wherever the cluster has them",
        ));
    }
    Ok(schedule::slots(&sweep.pool, &[], None)?.len())
}

/// Host folders do not exist on a cluster. A read-only one (code, data) becomes a note:
/// bake it into the image. A writable one is refused: what trials wrote there would stay
/// in their pods and be lost.
fn mount_notes(sweep: &Sweep) -> Result<Vec<String>, SpecError> {
    let mut notes = Vec::new();
    for (index, text) in sweep.mounts.iter().enumerate() {
        let location = sweep.mount_locations.get(index).cloned();
        let request = mounts::parse_request(text, &sweep.folder)
            .map_err(|error| SpecError::new(location.clone(), error.message, error.hint))?;
        if !request.read_only {
            return Err(SpecError::new(
                location,
                format!("`{text}` is a writable mount: on a cluster the trials would write into their pods, and what they wrote would be lost"),
                "write results under `$TFIMG_TRIAL_DIR` (on the sweep's claim); a folder the trials only read can be `:ro` and baked into the image",
            ));
        }
        notes.push(format!(
            "mount `{text}` is not exported: a cluster has no `{}`; bake what the trials read into the image (a spec's `files:` copies folders into it) or give the sweep an `image:` that holds it",
            request.source.display()
        ));
    }
    Ok(notes)
}

fn image_notes(sweep: &Sweep, options: &K8sOptions, image: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if sweep.pool.trials_per_gpu > 1 {
        notes.push(format!(
            "`trials_per_gpu: {}` does not share GPUs on Kubernetes: the device plugin gives each pod whole GPUs (unless the cluster enables time-slicing), so each pod asks for its own ({MEMORY_GROWTH_VARIABLE} stays set, as locally)",
            sweep.pool.trials_per_gpu
        ));
    }
    let registry = options.registry.as_deref().unwrap_or("HOST");
    let push = format!("`tfimg push {} --registry {registry}`", options.image);
    notes.push(match &options.registry {
        None => format!("the image is `{image}`, without a registry: push it ({push}) and pass `--registry {registry}`"),
        Some(_) => format!("the pods pull `{image}`: push it first ({push})"),
    });
    notes
}

/// Variables, in order.
type Env = Vec<(String, String)>;

/// The trials' variables split in two: what every trial has alike (into the Job's `env`)
/// and, per trial, the rest (into its `<index>.sh`), each in the order the trial has it.
fn split_env(trials: &[Trial]) -> (Env, Vec<Env>) {
    let Some(first) = trials.first() else {
        return (Vec::new(), Vec::new());
    };
    let alike = |entry: &(String, String)| trials.iter().all(|trial| trial.env.contains(entry));
    let shared: Env = first.env.iter().filter(|e| alike(e)).cloned().collect();
    let own = trials
        .iter()
        .map(|trial| {
            trial
                .env
                .iter()
                .filter(|entry| !shared.contains(entry))
                .cloned()
                .collect()
        })
        .collect();
    (shared, own)
}

/// The ConfigMap's files: the launcher, and per completion index `<index>.sh` (the trial's
/// own variables and its arguments) and `<index>.json` (its params.json).
fn config_map_data(
    sweep: &str,
    trials: &[Trial],
    own: &[Vec<(String, String)>],
) -> Map<String, Value> {
    let mut data = Map::new();
    data.insert(LAUNCHER.to_string(), Value::from(launcher(sweep)));
    for (trial, env) in trials.iter().zip(own) {
        data.insert(
            format!("{}.sh", trial.index),
            Value::from(trial_script(trial, env)),
        );
        data.insert(
            format!("{}.json", trial.index),
            Value::from(trial.params_json()),
        );
    }
    data
}

/// `<index>.sh`: `export NAME=value` for the trial's own variables, then `set -- ARGS`.
pub fn trial_script(trial: &Trial, env: &[(String, String)]) -> String {
    let mut script = String::new();
    for (name, value) in env {
        script.push_str(&format!("export {name}={}\n", quote(value)));
    }
    let words: Vec<String> = trial.command.iter().map(|word| quote(word)).collect();
    script.push_str(&format!("set -- {}\n", words.join(" ")));
    script
}

/// One word for POSIX sh, read back byte for byte. The sweep's checks refuse NUL in
/// commands, values and variables, the one thing no quoting carries.
fn quote(word: &str) -> String {
    shlex::Quoter::new()
        .allow_nul(true)
        .quote(word)
        .map(|quoted| quoted.into_owned())
        .unwrap_or_else(|_| String::from("''"))
}

/// The launcher every pod runs: its index's trial, its folder on the claim at
/// `TFIMG_TRIAL_DIR`, params.json in it, then the trial's command in place of the shell.
pub fn launcher(sweep: &str) -> String {
    debug_assert_eq!(Path::new(TRIAL_DIR).parent(), Some(Path::new(POD_FOLDER)));
    format!(
        r#"# tfimg: the launcher of sweep `{sweep}`'s trials. Kubernetes gives each pod of the Indexed
# Job its index in JOB_COMPLETION_INDEX; <index>.sh beside this file sets that trial's
# variables and its arguments, <index>.json is its params.json.
set -eu
index=${{JOB_COMPLETION_INDEX:-}}
case $index in
    '' | *[!0-9]*)
        echo "tfimg: JOB_COMPLETION_INDEX is '$index', not an index: run this as a pod of the sweep's Indexed Job" >&2
        exit 64
        ;;
esac
if [ ! -r "{TRIALS_FOLDER}/$index.sh" ]; then
    echo "tfimg: no trial has index $index in {TRIALS_FOLDER}" >&2
    exit 64
fi
. "{TRIALS_FOLDER}/$index.sh"
mkdir -p "{RUNS_FOLDER}/$TFIMG_TRIAL"
ln -s "{RUNS_FOLDER}/$TFIMG_TRIAL" "{TRIAL_DIR}"
cp "{TRIALS_FOLDER}/$index.json" "{TRIAL_DIR}/{PARAMS_FILE}"
exec "$@"
"#
    )
}

/// The Indexed Job running every trial.
fn job(
    sweep: &Sweep,
    completions: usize,
    parallelism: usize,
    image: &str,
    shared: &[(String, String)],
    names: &Names,
    labels: &Value,
) -> Value {
    let env: Vec<Value> = shared
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value.replace('$', "$$")}))
        .collect();
    let (shm, shm_mount) = shm(sweep.limits.shm_size);
    let mut container = json!({
        "name": "trial",
        "image": image,
        "args": ["sh", format!("{TRIALS_FOLDER}/{LAUNCHER}")],
        "env": env,
        "volumeMounts": [
            {"name": "tfimg", "mountPath": POD_FOLDER},
            {"name": "trials", "mountPath": TRIALS_FOLDER, "readOnly": true},
            {"name": "runs", "mountPath": RUNS_FOLDER},
            shm_mount,
        ],
        "securityContext": container_security(),
    });
    let limits = limits(sweep);
    if !limits.is_empty() {
        container["resources"] = json!({"limits": limits});
    }
    let mut spec = json!({
        "completionMode": "Indexed",
        "completions": completions,
        "parallelism": parallelism,
        // Each trial's own retries (Kubernetes 1.29+); one trial's failures never stop others.
        "backoffLimitPerIndex": sweep.retries,
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "restartPolicy": "Never",
                "automountServiceAccountToken": false,
                "securityContext": pod_security(POD_UID, POD_GID),
                "containers": [container],
                "volumes": [
                    {"name": "tfimg", "emptyDir": {}},
                    {"name": "trials", "configMap": {"name": names.config_map}},
                    {"name": "runs", "persistentVolumeClaim": {"claimName": names.claim}},
                    shm,
                ],
            },
        },
    });
    // `timeout:` is each pod's deadline: a pod past it fails, and counts as a failed
    // attempt of its index (retried under `backoffLimitPerIndex`), as a timed-out trial
    // does under `tfimg sweep`.
    if let Some(timeout) = sweep.timeout {
        spec["template"]["spec"]["activeDeadlineSeconds"] = json!(timeout.as_secs().max(1));
    }
    // `max_failed: n` stops at the n-th failed trial; the Job fails once more than
    // `maxFailedIndexes` have, which may not exceed the completions.
    if let Some(failed) = sweep.max_failed {
        if (failed as usize) <= completions {
            spec["maxFailedIndexes"] = json!(failed - 1);
        }
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": names.job, "labels": labels},
        "spec": spec,
    })
}

/// The container's limits: the trial's GPUs (by count: the device plugin picks them),
/// CPUs and memory.
fn limits(sweep: &Sweep) -> Map<String, Value> {
    let mut limits = Map::new();
    if sweep.pool.gpus != GpuPool::Cpu {
        limits.insert("nvidia.com/gpu".into(), json!(sweep.pool.gpus_per_trial));
    }
    if let Some(nano) = sweep.limits.nano_cpus {
        let millis = (nano + 999_999) / 1_000_000;
        limits.insert("cpu".into(), json!(format!("{millis}m")));
    }
    if let Some(bytes) = sweep.limits.memory {
        let mebibytes = 1024 * 1024;
        let quantity = match bytes % mebibytes {
            0 => format!("{}Mi", bytes / mebibytes),
            _ => bytes.to_string(),
        };
        limits.insert("memory".into(), json!(quantity));
    }
    limits
}

pub mod katib;

#[cfg(test)]
mod tests;
