//! Sweeps: many training runs of one command over a space of params, queued onto the GPUs
//! (or CPU slots) of one server, resumable, compared. This is the pure core: the caller
//! reads files, asks the clock and the host, launches containers, and passes text, times
//! and facts in. Nothing here touches the file system, the environment, a clock, a
//! process or the terminal.
//!
//! The story, file by file:
//! - `parse` reads a sweep file (`read`, `model`) and checks it (`checks`, `search`,
//!   `template`), every error at its file:line:column with a hint; `Sweep` is the result.
//! - `trials` expands a sweep into its ordered trials (`t001`, ...): params, the rendered
//!   command and the environment of each.
//! - `schedule` turns the GPU pool into slots and hands trials to free slots, first in
//!   first out, with retries and `max_failed`.
//! - `journal` is the append-only record of a sweep's run (JSON lines) and its replay
//!   into what each trial did, plus what changed in a sweep file since it started.
//! - `k8s` writes the sweep as a Kubernetes Indexed Job, a ConfigMap of its trials and a
//!   claim for their folders (`tfimg sweep FILE --k8s`).
//! - `early_stop` judges running trials on what they report (ASHA, the median rule).
//! - `metrics` reads what trials report; `results` makes the table sorted by the objective
//!   (text, JSON, CSV).
//! - `report` draws the results and the metrics' curves as one self-contained HTML page.

pub mod early_stop;
pub mod journal;
pub mod k8s;
pub mod metrics;
pub mod progress;
pub mod report;
pub mod results;
pub mod schedule;
pub mod search;
pub mod template;
pub mod trials;
pub mod unwatched;
pub mod value;

pub mod checks;
mod model;
mod read;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::input::source::{Location, SpecError};
use crate::input::yaml;

pub use search::{Distribution, Search};
pub use template::CommandTemplate;
pub use trials::Trial;
pub use value::{Param, ParamValue};

/// Where a trial's own folder is mounted inside its container (`TFIMG_TRIAL_DIR`).
pub const TRIAL_DIR: &str = "/tfimg/trial";

/// The sweep file as it was when its sweep last ran, in the sweep's folder: what `tfimg
/// sweep status|results|report DIR` read the trials from.
pub const FILE_COPY: &str = "sweep.yaml";

/// A sweep file, checked: what to run, over which params, on which slots.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// `sweep:`: a name fit for containers and Kubernetes objects.
    pub name: String,
    /// The sweep file's folder: relative mounts and `output` start there.
    pub folder: PathBuf,
    pub source: ImageSource,
    pub command: CommandTemplate,
    /// `mounts:` as written (checked); `plan::mounts::parse_request(text, &folder)` reads them.
    pub mounts: Vec<String>,
    /// Where each of `mounts` is in the file, for errors found later (`--k8s`).
    pub mount_locations: Vec<Location>,
    /// `env:`, in file order.
    pub env: Vec<(String, String)>,
    pub search: Search,
    pub pool: Pool,
    pub limits: TrialLimits,
    /// Failed attempts a trial may retry (0: none).
    pub retries: u32,
    /// Stop starting trials once this many have failed for good.
    pub max_failed: Option<u32>,
    pub objective: Option<Objective>,
    /// `timeout:`: an attempt running longer is stopped and counts as failed.
    pub timeout: Option<std::time::Duration>,
    /// `early_stop:`: the rule that stops losing trials, if any.
    pub early_stop: Option<early_stop::EarlyStop>,
    /// `<folder>/<output>/<name>`: the journal and one folder per trial.
    pub output: PathBuf,
    /// Things that work but are likely mistakes, each at its place.
    pub warnings: Vec<Warning>,
}

/// What the trials run: a spec (built once) or an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    /// A spec name or file, resolved by the caller; `location` is where `spec:` is.
    Spec { name: String, location: Location },
    Image {
        reference: String,
        location: Location,
    },
}

impl ImageSource {
    /// `spec gpu-headless`, `image tfimg/cpu-headless:2.9.3`.
    pub fn describe(&self) -> String {
        match self {
            ImageSource::Spec { name, .. } => format!("spec {name}"),
            ImageSource::Image { reference, .. } => format!("image {reference}"),
        }
    }
}

/// The GPUs trials may use and how they are shared out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    pub gpus: GpuPool,
    /// GPUs each trial gets (by DeviceIDs).
    pub gpus_per_trial: u32,
    /// Trials that share one GPU (1: none share).
    pub trials_per_gpu: u32,
    /// At most this many trials at once (the whole pool on CPU-only sweeps).
    pub max_parallel: Option<u32>,
    /// Where `gpus:` is (else the `sweep:` key), for errors found once the host is known.
    pub location: Location,
}

/// `gpus:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuPool {
    /// No `gpus:` (or `none`): trials run on the CPU, `max_parallel` at a time.
    Cpu,
    /// Every GPU of the host no other container holds, known once the host is asked.
    All,
    /// Indices or UUIDs, as written.
    Devices(Vec<String>),
    /// This many GPUs, the least-loaded of those no other container holds, chosen when
    /// the sweep starts (`gpus: 2`, as a team member's `gpus: 1`).
    Count(u32),
}

/// Per-trial container limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialLimits {
    pub nano_cpus: Option<i64>,
    /// Bytes.
    pub memory: Option<i64>,
    /// Bytes.
    pub shm_size: i64,
}

/// The metric that ranks trials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Objective {
    pub metric: String,
    pub mode: Mode,
    /// `use:`: which of a trial's reports of the metric ranks it.
    #[serde(rename = "use")]
    pub pick: Pick,
}

/// `objective.use`: which report of the objective's metric stands for a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pick {
    /// Its best report (the best epoch's): right when the trial keeps its best
    /// checkpoint (Keras's `ModelCheckpoint(save_best_only=True)`).
    Best,
    /// Its last report: the model a trial saves when it ends. The default, so the value a
    /// trial is ranked by is the value of the model it leaves.
    #[default]
    Last,
}

impl Pick {
    pub fn as_str(self) -> &'static str {
        match self {
            Pick::Best => "best",
            Pick::Last => "last",
        }
    }
}

impl Objective {
    /// `best val_accuracy`, `last loss`: what the value a trial is ranked by is.
    pub fn label(&self) -> String {
        format!("{} {}", self.pick.as_str(), self.metric)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Max,
    Min,
}

impl Mode {
    /// `value` when it is better than `best`, else `best` (the first of equal ones stays).
    pub fn better_of(self, best: f64, value: f64) -> f64 {
        if self.better(value, best) {
            value
        } else {
            best
        }
    }

    /// Whether `a` is better than `b`.
    pub fn better(self, a: f64, b: f64) -> bool {
        // A value that is not finite (NaN, an infinity) diverged: any finite one is
        // better, and none of those is better than another.
        match (a.is_finite(), b.is_finite()) {
            (true, false) => true,
            (false, _) => false,
            (true, true) => match self {
                Mode::Max => a > b,
                Mode::Min => a < b,
            },
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Max => "max",
            Mode::Min => "min",
        }
    }
}

/// Something that works but is likely a mistake: printed as `warning: <place>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub location: Location,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl Sweep {
    /// The param names, in the order trials list them.
    pub fn param_names(&self) -> Vec<String> {
        self.search.names()
    }

    /// The trials known before the sweep runs, in order (see `trials::expand`): all of
    /// them, but for `tpe:` only its random draws.
    pub fn trials(&self) -> Vec<Trial> {
        trials::expand(self)
    }

    /// The trials as far as its journal (`replay`) knows them, in order: `trials()`, or
    /// for `tpe:` those proposed so far (up to the first the journal lacks).
    pub fn trials_known(&self, replay: &journal::Replay) -> Vec<Trial> {
        if !self.search.learns() {
            return self.trials();
        }
        let names = self.param_names();
        let count = self.search.count();
        (0..count)
            .map_while(|index| {
                let proposed = replay.proposed.get(&trials::trial_id(index, count))?;
                let params = value::params_from_object(&names, proposed)?;
                Some(trials::trial(self, index, params))
            })
            .collect()
    }

    /// A trial's folder on the host: `<output>/<trial id>`.
    pub fn trial_dir(&self, trial: &str) -> PathBuf {
        self.output.join(trial)
    }

    /// The journal's path: `<output>/journal.jsonl`.
    pub fn journal_path(&self) -> PathBuf {
        self.output.join(journal::JOURNAL_FILE)
    }

    /// A warning when the image and the pool do not fit: a CUDA image (`gpu_image`) whose
    /// trials get no GPU, or GPUs for an image without CUDA. Placed on `spec:`/`image:`.
    pub fn image_warning(&self, gpu_image: bool) -> Option<Warning> {
        let (location, name) = match &self.source {
            ImageSource::Spec { name, location } => (location, name),
            ImageSource::Image {
                reference,
                location,
            } => (location, reference),
        };
        let message = match (&self.pool.gpus, gpu_image) {
            (GpuPool::Cpu, true) => format!(
                "`{name}` is a GPU image but the sweep has no `gpus`: its trials run on the CPU"
            ),
            (GpuPool::All | GpuPool::Devices(_) | GpuPool::Count(_), false) => format!(
                "`{name}` has no CUDA: its trials get GPUs they cannot use (a `gpu-*` spec can)"
            ),
            _ => return None,
        };
        Some(Warning {
            location: location.clone(),
            message,
        })
    }

    /// `io.tfimg.sweep=<name>`: the filter for this sweep's trial containers.
    pub fn container_filter(&self) -> String {
        crate::labels::sweep_filter(&self.name)
    }

    /// What decides the trials, for the journal (see `journal::Fingerprint`).
    pub fn fingerprint(&self) -> journal::Fingerprint {
        journal::Fingerprint::of(self)
    }
}

/// A sweep file (shown as `display`) with what reading it gave; relative paths start at
/// `folder` (absolute).
pub fn parse_file(
    display: &str,
    read: Result<Vec<u8>, String>,
    folder: &Path,
) -> Result<Sweep, SpecError> {
    let bytes = read.map_err(|error| {
        SpecError::new(
            None,
            format!("cannot read sweep file `{display}`: {error}"),
            format!("give the path of a sweep YAML file; {}", yaml::SWEEP_HINT),
        )
    })?;
    let text = yaml::decode(bytes)
        .map_err(|problem| problem.error(display, problem.place(), &yaml::SWEEP))?;
    parse(&text, display, folder)
}

/// A sweep from the text of its file (shown as `display`); relative paths start at
/// `folder` (absolute).
pub fn parse(text: &str, display: &str, folder: &Path) -> Result<Sweep, SpecError> {
    let places = read::Places::new(text, display);
    let file = read::sweep_file(&places)?;
    checks::sweep(&file, &places, folder)
}

#[cfg(test)]
mod tests;
