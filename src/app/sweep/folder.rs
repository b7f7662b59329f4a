//! A sweep's folder read back: the copy of its sweep file (the trials), its journal
//! (what each trial did) and each trial's metrics (`metrics.jsonl`, else `name=value`
//! lines of its `stdout.log`). What `tfimg sweep status|results|stop|report` and the
//! end of every sweep show.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::host::prelude::{Confined, FileWrites, Files, State, Trust};
use crate::input::paths::lexical;
use crate::input::InputError;
use crate::notice::Notice;
use crate::sweep::journal::{self, Replay};
use crate::sweep::metrics::{self, MetricsSummary, Point, Tail};
use crate::sweep::results::{self, Results};
use crate::sweep::trials::{METRICS_FILE, METRICS_READ_LIMIT, STDOUT_FILE};
use crate::sweep::{self, Objective, Sweep, Trial, FILE_COPY};

/// Everything a sweep's folder says.
#[derive(Debug, Clone)]
pub struct SweepFolder {
    pub dir: PathBuf,
    pub sweep: Sweep,
    pub trials: Vec<Trial>,
    pub replay: Replay,
    /// Each trial's metric points, by trial id (trials that reported nothing are absent).
    pub points: BTreeMap<String, Vec<Point>>,
}

impl SweepFolder {
    /// Each trial's metrics summed up, by trial id.
    pub fn summaries(&self) -> BTreeMap<String, MetricsSummary> {
        self.points
            .iter()
            .map(|(trial, points)| (trial.clone(), MetricsSummary::of(points)))
            .collect()
    }

    /// The `tpe:` trials not proposed yet (0 for other searches).
    pub fn unproposed(&self) -> usize {
        self.sweep.search.count().saturating_sub(self.trials.len())
    }

    /// The warning when no ended trial of `results` (this folder's) reports the
    /// objective's metric (`results::unreported_objective`).
    pub fn objective_warning(&self, results: &Results) -> Option<Notice> {
        results::unreported_objective(
            self.sweep.objective.as_ref(),
            &results.rows,
            &self.summaries(),
        )
    }

    /// The results table, sorted by the objective; running trials' time up to `now_ms`.
    pub fn results(&self, now_ms: Option<u64>) -> Results {
        results::results(
            &self.trials,
            &self.replay,
            &self.summaries(),
            self.sweep.objective.as_ref(),
            now_ms,
        )
    }
}

/// `path` as the user would write it from the folder `current`: relative when it is
/// under it.
pub fn shown(current: &Path, path: &Path) -> String {
    path.strip_prefix(current)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Where tfimg remembers the folder of each sweep it ran, by name: a sweep run from the
/// top of a project (`tfimg sweep examples/sweep/sweep.yaml`) writes its results beside
/// its file, which `runs/<name>` from the current folder would not find.
fn remembered(host: &impl State, name: &str) -> Result<PathBuf, InputError> {
    Ok(host.data_folder()?.join("sweeps").join(name))
}

/// Remembers `dir` as the folder of sweep `name` (best effort: a sweep runs without it).
pub fn remember(host: &(impl FileWrites + State), name: &str, dir: &Path) {
    if let Ok(record) = remembered(host, name) {
        let _ = host.write_file(&record, dir.to_string_lossy().as_bytes());
    }
}

/// Trust boundary **another local account → tfimg** (`host::trusted`): a sweep's folder
/// holds its journal, which names the containers `stop` stops and the folders results are
/// copied into, so it is used only when no other account owns or can write it or a folder
/// above it (made first, with `make`, when missing). Refused naming the owner and the mode.
pub fn trusted(host: &impl Trust, dir: &Path, make: bool) -> Result<(), InputError> {
    host.trusted_folder(dir, make.then_some(0o755), None)
        .map_err(|error| crate::host::trusted::explained(error, "a sweep's folder", dir))
}

/// The folder of sweep `target` (relative to `current`, an absolute folder): a folder
/// holding a sweep (`runs/lr-grid`), else the sweep of that name under `./runs`, else the
/// folder the last sweep of that name ran in; refused when another account could have
/// made or changed it (`trusted`).
pub fn locate(
    host: &(impl Files + State + Trust),
    current: &Path,
    target: &str,
) -> Result<PathBuf, InputError> {
    let dir = find(host, current, target)?;
    trusted(host, &dir, false)?;
    Ok(dir)
}

fn find(host: &(impl Files + State), current: &Path, target: &str) -> Result<PathBuf, InputError> {
    let given = lexical(&current.join(target));
    let by_name = lexical(&current.join("runs").join(target));
    let last_run = crate::sweep::checks::is_sweep_name(target)
        .then(|| {
            host.read_at_most(&remembered(host, target).ok()?, 4096)
                .ok()
        })
        .flatten()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute());
    for dir in [Some(given), Some(by_name), last_run].into_iter().flatten() {
        if host.exists(&dir.join(journal::JOURNAL_FILE)) || host.exists(&dir.join(FILE_COPY)) {
            return Ok(dir);
        }
    }
    Err(InputError::new(
        format!("no sweep at `{target}`: neither it nor `runs/{target}` holds a sweep's journal, and tfimg ran no sweep of that name"),
        "give a sweep's folder (`runs/<sweep>` beside its sweep file, where `tfimg sweep FILE` put it) or the name of a sweep tfimg ran",
    ))
}

/// Reads the sweep folder `dir`.
pub fn read(host: &(impl Files + Confined), dir: &Path) -> anyhow::Result<SweepFolder> {
    let copy = dir.join(FILE_COPY);
    let display = copy.display().to_string();
    let bytes = host.read_file(&copy).map_err(|error| error.to_string());
    // Relative paths in the copy would start at the sweep file's own folder; nothing read
    // here uses them.
    let mut sweep = sweep::parse_file(&display, bytes, dir)?;
    // The folder it was found in, whatever the copy says about where it was written.
    sweep.output = dir.to_path_buf();
    let replay = read_journal(host, dir)?;
    let trials = sweep.trials_known(&replay);
    let points = trials
        .iter()
        .filter_map(|trial| {
            let points = trial_points(host, &dir.join(&trial.id));
            (!points.is_empty()).then(|| (trial.id.clone(), points))
        })
        .collect();
    Ok(SweepFolder {
        dir: dir.to_path_buf(),
        sweep,
        trials,
        replay,
        points,
    })
}

/// The bytes of the journal in `dir` (`None`: it has none yet), read without following a
/// link, a FIFO or a device at its name (`confined`) and refused past
/// `JOURNAL_READ_LIMIT`.
pub fn journal_bytes(host: &impl Confined, dir: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match host.read_confined(dir, journal::JOURNAL_FILE, 0, journal::JOURNAL_READ_LIMIT) {
        Ok(read) if read.cut => Err(std::io::Error::other(format!(
            "it is larger than {} MiB",
            journal::JOURNAL_READ_LIMIT >> 20
        ))),
        Ok(read) => Ok(Some(read.bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// The journal of the sweep in `dir`, replayed (empty when it has none yet).
pub fn read_journal(host: &impl Confined, dir: &Path) -> anyhow::Result<Replay> {
    let path = dir.join(journal::JOURNAL_FILE);
    let text = match journal_bytes(host, dir) {
        Ok(bytes) => String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned(),
        Err(error) => {
            return Err(InputError::new(
                format!(
                    "cannot read the sweep journal `{}`: {error}",
                    path.display()
                ),
                "check the folder's permissions",
            )
            .into())
        }
    };
    let parsed = journal::parse(&text).map_err(|error| journal_error(&path, &error))?;
    Ok(journal::replay(&parsed.events))
}

/// A journal line that is not an event: the file was edited or is not a journal.
pub fn journal_error(path: &Path, error: &journal::JournalError) -> InputError {
    InputError::new(
        format!("`{}`:{}: {}", path.display(), error.line, error.message),
        "the journal is tfimg's own record: put back what was edited, or remove the sweep's folder to start over",
    )
}

/// A running trial's reports as they grow: its `metrics.jsonl`, else the `name=value`
/// lines of its stdout, as `trial_points` reads them, but each look reads only what the
/// files gained since the last (`Tail`), through the same confined mechanism, and hands
/// the new points on: what is kept is the objective's value so far (the live view's).
#[derive(Debug, Clone)]
pub struct Reports {
    metrics: Tail,
    stdout: Tail,
    /// The objective's value so far, as `objective.use` picks it.
    value: Option<f64>,
}

/// The reports a look found: the trial's reports from number `first` (from 0) on. A
/// `first` of 0 after earlier looks: its reports started over (its `metrics.jsonl`
/// written anew, or written at last after `name=value` lines on its stdout).
#[derive(Debug, Clone)]
pub struct NewReports {
    pub first: usize,
    pub points: Vec<Point>,
}

impl Default for Reports {
    fn default() -> Reports {
        Reports {
            metrics: Tail::new(METRICS_READ_LIMIT),
            stdout: Tail::new(METRICS_READ_LIMIT),
            value: None,
        }
    }
}

impl Reports {
    /// Reads what the trial's files in `trial_dir` gained: the new reports, if any. Its
    /// stdout is read only while `metrics.jsonl` has none (it is not looked at after).
    pub fn read_more(
        &mut self,
        host: &impl Confined,
        trial_dir: &Path,
        objective: Option<&Objective>,
    ) -> Option<NewReports> {
        let mut points = read_tail(
            host,
            trial_dir,
            METRICS_FILE,
            &mut self.metrics,
            metrics::parse_jsonl,
        );
        let mut first = self.metrics.count() - points.len();
        if self.metrics.count() == 0 {
            points = read_tail(
                host,
                trial_dir,
                STDOUT_FILE,
                &mut self.stdout,
                metrics::parse_stdout,
            );
            first = self.stdout.count() - points.len();
        }
        if points.is_empty() {
            return None;
        }
        if first == 0 {
            self.value = None;
        }
        if let Some(objective) = objective {
            let values = points
                .iter()
                .filter_map(|point| point.values.get(&objective.metric).copied());
            self.value = metrics::pick_on(objective, self.value, values);
        }
        Some(NewReports { first, points })
    }

    /// The objective's value in the reports read so far, as `objective.use` picks it.
    pub fn value(&self) -> Option<f64> {
        self.value
    }
}

/// Takes into `tail` what the file `name` in `trial_dir` gained: the points of its new
/// whole lines (none when it is missing or cannot be read).
fn read_tail(
    host: &impl Confined,
    trial_dir: &Path,
    name: &str,
    tail: &mut Tail,
    parse: fn(&str) -> Vec<Point>,
) -> Vec<Point> {
    let Some(length) = host.confined_len(trial_dir, name) else {
        return Vec::new();
    };
    let Some((offset, limit)) = tail.next_read(length) else {
        return Vec::new();
    };
    match host.read_confined(trial_dir, name, offset, limit) {
        Ok(read) => tail.take(&read.bytes, parse),
        Err(_) => Vec::new(),
    }
}

/// A trial's points: its `metrics.jsonl`, else the `name=value` lines of its stdout. Its
/// container wrote both: they are read through the confined mechanism (no link, FIFO or
/// device followed) and at most `METRICS_READ_LIMIT` of each (whole lines only).
pub fn trial_points(host: &impl Confined, trial_dir: &Path) -> Vec<Point> {
    let read = |name: &str| {
        host.read_confined(trial_dir, name, 0, METRICS_READ_LIMIT)
            .map(|mut read| {
                if read.cut {
                    let whole = read.bytes.iter().rposition(|&byte| byte == b'\n');
                    read.bytes.truncate(whole.map_or(0, |end| end + 1));
                }
                String::from_utf8_lossy(&read.bytes).into_owned()
            })
            .unwrap_or_default()
    };
    let points = metrics::parse_jsonl(&read(METRICS_FILE));
    if points.is_empty() {
        metrics::parse_stdout(&read(STDOUT_FILE))
    } else {
        points
    }
}
