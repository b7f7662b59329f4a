//! A sweep's results: one row per trial (params, the objective's value as `objective.use`
//! picks it, epochs, time, GPUs, status, the attempt shown and its exit code), sorted by
//! the objective, best first, trials without the metric last; as table rows (for
//! `output::print_table`), JSON and CSV (the csv crate quotes what needs quoting: a param
//! value with a comma or a quote). The best trial is the best value whatever order the
//! rows are in. Pure: the caller replays the journal, reads each trial's metrics and
//! passes the time.

use std::collections::BTreeMap;
use std::fmt;

use super::early_stop::Judgement;
use super::journal::{Replay, TrialStatus};
pub use super::metrics::number_text;
use super::metrics::{MetricsSummary, Picked};
use super::trials::{command_line, Trial};
use super::{Objective, Param, Pick};
use crate::notice::Notice;

/// Where a trial stands, as the table says it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowStatus {
    Done {
        attempt: u32,
    },
    /// Done, but the value it is ranked by is not finite (NaN, an infinity): its
    /// training diverged, and it ranks after every trial with a finite value.
    Diverged {
        attempt: u32,
    },
    Failed,
    Running,
    Queued,
    Stopped,
    /// The `early_stop` rule stopped it, with why.
    StoppedEarly(Judgement),
    /// Failed for good, its last attempt stopped by the `timeout` after this long (ms).
    TimedOut(u64),
}

impl RowStatus {
    /// `done`, `failed`, `running`, `queued`, `stopped`, `stopped early`: the status
    /// without its details, as tallies count it.
    pub fn word(&self) -> &'static str {
        match self {
            RowStatus::Done { .. } => "done",
            RowStatus::Diverged { .. } => "diverged",
            RowStatus::Failed => "failed",
            RowStatus::Running => "running",
            RowStatus::Queued => "queued",
            RowStatus::Stopped => "stopped",
            RowStatus::StoppedEarly(_) => "stopped early",
            RowStatus::TimedOut(_) => "failed",
        }
    }
}

impl fmt::Display for RowStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowStatus::Done { attempt: 1 } => f.write_str("done"),
            RowStatus::Done { attempt } => write!(f, "done (attempt {attempt})"),
            RowStatus::Diverged { attempt: 1 } => f.write_str("diverged"),
            RowStatus::Diverged { attempt } => write!(f, "diverged (attempt {attempt})"),
            RowStatus::Failed => f.write_str("failed"),
            RowStatus::Running => f.write_str("running"),
            RowStatus::Queued => f.write_str("queued"),
            RowStatus::Stopped => f.write_str("stopped"),
            RowStatus::StoppedEarly(judgement) => {
                write!(f, "stopped early ({})", judgement.reason())
            }
            RowStatus::TimedOut(after_ms) => {
                write!(f, "failed (timed out after {})", duration_text(*after_ms))
            }
        }
    }
}

/// One trial's row.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    pub trial: String,
    pub params: Vec<Param>,
    /// The value the trial is ranked by (`objective.use`), and where it was reported.
    pub value: Option<Picked>,
    /// The objective's best value.
    pub best: Option<f64>,
    /// The objective's last value.
    pub last: Option<f64>,
    pub epochs: Option<usize>,
    pub points: usize,
    /// Of the attempt shown (the one that succeeded, else the last one).
    pub duration_ms: Option<u64>,
    pub gpus: Vec<String>,
    pub status: RowStatus,
    /// The number of the attempt shown (none for a trial that never started).
    pub attempt: Option<u32>,
    /// That attempt's exit code, once it ended with one.
    pub exit_code: Option<i64>,
    pub command: Vec<String>,
}

impl ResultRow {
    /// The value the trial is ranked by.
    pub fn ranked(&self) -> Option<f64> {
        self.value.map(|picked| picked.value)
    }
}

/// Every trial's row, sorted.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    pub objective: Option<Objective>,
    pub param_names: Vec<String>,
    pub rows: Vec<ResultRow>,
}

/// The warning for a sweep whose objective no ended trial has a value for: the script
/// reports its metric under another name (`val_acc` for `val_accuracy`), or reports
/// nothing readable, so nothing can be ranked, learned from or stopped early. Names what
/// the trials did report, from `metrics` (each trial's, by id); `None` while no trial has
/// ended, or once one has a value.
pub fn unreported_objective(
    objective: Option<&Objective>,
    rows: &[ResultRow],
    metrics: &BTreeMap<String, MetricsSummary>,
) -> Option<Notice> {
    let objective = objective?;
    let ended = |row: &&ResultRow| {
        matches!(
            row.status,
            RowStatus::Done { .. }
                | RowStatus::Diverged { .. }
                | RowStatus::Failed
                | RowStatus::TimedOut(_)
        )
    };
    if rows.iter().any(|row| row.value.is_some()) || !rows.iter().any(|row| ended(&row)) {
        return None;
    }
    let reported: std::collections::BTreeSet<&str> = metrics
        .values()
        .flat_map(|summary| summary.curves.keys().map(String::as_str))
        .collect();
    let metric = &objective.metric;
    let what = match reported.is_empty() {
        true => "they reported no metric at all".to_string(),
        false => format!(
            "they reported {}",
            reported
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(Notice::warning(format!(
        "no trial reported `{metric}`, the objective's metric ({what}), so no trial is ranked; set `objective.metric` to what the script reports, or have it append `{{\"epoch\": N, \"{metric}\": VALUE}}` lines to $TFIMG_TRIAL_DIR/metrics.jsonl (docs/reference/sweep.md says what a line holds)"
    )))
}

/// The results of `trials` from the journal's `replay` and each trial's metrics (by trial
/// id); `now_ms` gives running trials their time so far.
pub fn results(
    trials: &[Trial],
    replay: &Replay,
    metrics: &BTreeMap<String, MetricsSummary>,
    objective: Option<&Objective>,
    now_ms: Option<u64>,
) -> Results {
    let mut rows: Vec<ResultRow> = trials
        .iter()
        .map(|trial| {
            let history = replay.trial(&trial.id);
            let status = match history.status() {
                TrialStatus::NeverStarted => RowStatus::Queued,
                TrialStatus::Running => RowStatus::Running,
                TrialStatus::Done { attempt } => RowStatus::Done { attempt },
                TrialStatus::Failed => match history
                    .last()
                    .and_then(|attempt| history.timed_out(attempt.number))
                {
                    Some(after_ms) => RowStatus::TimedOut(after_ms),
                    None => RowStatus::Failed,
                },
                TrialStatus::Stopped => RowStatus::Stopped,
                TrialStatus::StoppedEarly => match history.stopped_early() {
                    Some(judgement) => RowStatus::StoppedEarly(*judgement),
                    None => RowStatus::Stopped,
                },
            };
            let shown = history.done().or(history.last());
            let duration_ms = shown.and_then(|attempt| {
                attempt
                    .duration_ms()
                    .or_else(|| now_ms.map(|now| now.saturating_sub(attempt.started_ms)))
            });
            let summary = metrics.get(&trial.id).cloned().unwrap_or_default();
            let value = objective.and_then(|objective| summary.pick(objective));
            let status = match status {
                RowStatus::Done { attempt }
                    if value.is_some_and(|picked| !picked.value.is_finite()) =>
                {
                    RowStatus::Diverged { attempt }
                }
                status => status,
            };
            ResultRow {
                trial: trial.id.clone(),
                params: trial.params.clone(),
                value,
                best: objective.and_then(|objective| summary.best(objective)),
                last: objective.and_then(|objective| summary.last(&objective.metric)),
                epochs: summary.epochs,
                points: summary.points,
                duration_ms,
                gpus: shown
                    .map(|attempt| attempt.gpus.clone())
                    .unwrap_or_default(),
                status,
                attempt: shown.map(|attempt| attempt.number),
                exit_code: shown.and_then(|attempt| attempt.end?.exit_code),
                command: trial.command.clone(),
            }
        })
        .collect();
    if let Some(objective) = objective {
        // Stable: equal values and trials without the metric keep trial order; a value
        // that is not finite ranks after every finite one (`Mode::better`).
        rows.sort_by(|a, b| match (a.ranked(), b.ranked()) {
            (Some(x), Some(y)) if objective.mode.better(x, y) => std::cmp::Ordering::Less,
            (Some(x), Some(y)) if objective.mode.better(y, x) => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            _ => std::cmp::Ordering::Equal,
        });
    }
    Results {
        objective: objective.cloned(),
        param_names: trials
            .first()
            .map(|trial| trial.params.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default(),
        rows,
    }
}

/// `12s`, `1m05s`, `2h03m`.
pub fn duration_text(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

/// What early stopping saved the trials it stopped, as far as the finished ones tell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Savings {
    /// Trials stopped early.
    pub stopped: usize,
    /// Trials that ended (done or stopped early).
    pub ended: usize,
    /// Epochs (or reports) those trials ran.
    pub run: usize,
    /// What they would have run in full: each the most a done trial ran.
    pub full: usize,
    /// Slot-seconds not spent, estimated: for each stopped trial, the mean time of the
    /// done ones less its own, times its GPUs (at least one); none before a trial is done.
    pub seconds_saved: Option<f64>,
    /// The trials ran on GPUs (the seconds are GPU-seconds).
    pub on_gpus: bool,
}

impl Savings {
    /// `early stopping stopped 3 of 6 trials: 21 of 36 trial-epochs run (42% fewer),
    /// about 0.02 GPU-hours saved`.
    pub fn line(&self) -> String {
        let fewer = match self.full {
            0 => 0.0,
            full => 100.0 * (1.0 - self.run as f64 / full as f64),
        };
        let mut line = format!(
            "early stopping stopped {} of {} trials: {} of {} trial-epochs run ({fewer:.0}% fewer)",
            self.stopped, self.ended, self.run, self.full
        );
        if let Some(seconds) = self.seconds_saved {
            let unit = if self.on_gpus {
                "GPU-hours"
            } else {
                "slot-hours"
            };
            line.push_str(&format!(", about {:.2} {unit} saved", seconds / 3600.0));
        }
        line
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "stopped": self.stopped, "ended": self.ended,
            "trial_epochs_run": self.run, "trial_epochs_full": self.full,
            "seconds_saved": self.seconds_saved, "on_gpus": self.on_gpus,
        })
    }
}

impl Results {
    /// What early stopping saved, when it stopped a trial.
    pub fn savings(&self) -> Option<Savings> {
        let ran = |row: &ResultRow| row.epochs.unwrap_or(row.points);
        let stopped: Vec<&ResultRow> = self
            .rows
            .iter()
            .filter(|row| matches!(row.status, RowStatus::StoppedEarly(_)))
            .collect();
        if stopped.is_empty() {
            return None;
        }
        let done: Vec<&ResultRow> = self
            .rows
            .iter()
            .filter(|row| {
                matches!(
                    row.status,
                    RowStatus::Done { .. } | RowStatus::Diverged { .. }
                )
            })
            .collect();
        let per_trial = done
            .iter()
            .chain(&stopped)
            .map(|row| ran(row))
            .max()
            .unwrap_or(0);
        let ended = done.len() + stopped.len();
        let durations: Vec<u64> = done.iter().filter_map(|row| row.duration_ms).collect();
        let seconds_saved = (!durations.is_empty()).then(|| {
            let mean = durations.iter().sum::<u64>() as f64 / durations.len() as f64 / 1000.0;
            stopped
                .iter()
                .map(|row| {
                    let own = row.duration_ms.unwrap_or(0) as f64 / 1000.0;
                    (mean - own).max(0.0) * row.gpus.len().max(1) as f64
                })
                .sum()
        });
        Some(Savings {
            stopped: stopped.len(),
            ended,
            run: done.iter().chain(&stopped).map(|row| ran(row)).sum(),
            full: per_trial * ended,
            seconds_saved,
            on_gpus: stopped.iter().any(|row| !row.gpus.is_empty()),
        })
    }

    /// The best trial: the row with the best finite value of the objective (the first of
    /// equal ones), in whatever order the rows are, among the trials that ran to their
    /// end (a failed or stopped trial's value is of a model never finished); among the
    /// others only while none did. A diverged trial is never best.
    pub fn best(&self) -> Option<&ResultRow> {
        let objective = self.objective.as_ref()?;
        let best_of = |done: bool| {
            self.rows
                .iter()
                .filter(|row| row.ranked().is_some_and(f64::is_finite))
                .filter(|row| !done || matches!(row.status, RowStatus::Done { .. }))
                .reduce(|best, row| match (row.ranked(), best.ranked()) {
                    (Some(value), Some(so_far)) if objective.mode.better(value, so_far) => row,
                    _ => best,
                })
        };
        best_of(true).or_else(|| best_of(false))
    }

    /// `best: t014 last val_accuracy=0.9312 (lr=0.001 wd=1e-5): python train.py ...`; with
    /// `use: best`, where the value was reported: `best val_accuracy=0.9312 (epoch 2)`.
    pub fn best_line(&self) -> Option<String> {
        let (row, objective) = (self.best()?, self.objective.as_ref()?);
        let params: Vec<String> = row
            .params
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        Some(format!(
            "best: {} {}={}{} ({}): {}",
            row.trial,
            objective.label(),
            number_text(row.ranked()?),
            self.place_text(row),
            params.join(" "),
            command_line(&row.command)
        ))
    }

    /// Where a `use: best` value was reported (` (epoch 2)`); nothing for `use: last`,
    /// whose value is the trial's last report (its `EPOCHS`).
    fn place_text(&self, row: &ResultRow) -> String {
        let best = self
            .objective
            .as_ref()
            .is_some_and(|objective| objective.pick == Pick::Best);
        match row.value.and_then(|picked| picked.place.describe()) {
            Some(place) if best => format!(" ({place})"),
            _ => String::new(),
        }
    }

    /// The table's header: `TRIAL`, each param, what ranks the trials (`LAST
    /// VAL_ACCURACY`, `BEST VAL_ACCURACY`), `EPOCHS`, `TIME`, `GPUS`, `STATUS`.
    pub fn header(&self) -> Vec<String> {
        let mut header = vec!["TRIAL".to_string()];
        header.extend(
            self.param_names
                .iter()
                .map(|name| name.to_ascii_uppercase()),
        );
        if let Some(objective) = &self.objective {
            header.push(objective.label().to_ascii_uppercase());
        }
        header.extend(["EPOCHS", "TIME", "GPUS", "STATUS"].map(String::from));
        header
    }

    /// The table's rows, cells in `header` order.
    pub fn table_rows(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|row| {
                let mut cells = vec![row.trial.clone()];
                cells.extend(row.params.iter().map(|(_, value)| value.text()));
                if self.objective.is_some() {
                    cells.push(row.ranked().map_or("-".to_string(), |value| {
                        format!("{}{}", number_text(value), self.place_text(row))
                    }));
                }
                let epochs = row.epochs.unwrap_or(row.points);
                cells.push(if epochs == 0 {
                    "-".into()
                } else {
                    epochs.to_string()
                });
                cells.push(row.duration_ms.map_or("-".to_string(), duration_text));
                cells.push(if row.gpus.is_empty() {
                    "-".into()
                } else {
                    row.gpus.join(",")
                });
                cells.push(row.status.to_string());
                cells
            })
            .collect()
    }

    /// The results as JSON: the objective (with its `use`), the best trial's id, and every
    /// row with its params as an object (numbers as numbers), the value it is ranked by
    /// (`value`, and the `epoch` and `step` it was reported at), the attempt shown and its
    /// exit code.
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|row| {
                let params: serde_json::Map<String, serde_json::Value> = row
                    .params
                    .iter()
                    .map(|(name, value)| (name.clone(), value.to_json()))
                    .collect();
                serde_json::json!({
                    "trial": row.trial,
                    "params": params,
                    "value": row.ranked(),
                    "epoch": row.value.and_then(|picked| picked.place.epoch),
                    "step": row.value.and_then(|picked| picked.place.step),
                    "best": row.best,
                    "last": row.last,
                    "epochs": row.epochs,
                    "points": row.points,
                    "seconds": row.duration_ms.map(|ms| ms as f64 / 1000.0),
                    "gpus": row.gpus,
                    "status": row.status.to_string(),
                    "stopped_early": match row.status {
                        RowStatus::StoppedEarly(judgement) => serde_json::json!(judgement),
                        _ => serde_json::Value::Null,
                    },
                    "attempt": row.attempt,
                    "exit_code": row.exit_code,
                    "command": row.command,
                })
            })
            .collect();
        serde_json::json!({
            "objective": self.objective,
            "best": self.best().map(|row| row.trial.clone()),
            "early_stop_savings": self.savings().map(|savings| savings.to_json()),
            "trials": rows,
        })
    }

    /// The results as CSV: a header line, then one line per row, in table order.
    pub fn to_csv(&self) -> String {
        let mut header = vec!["trial".to_string()];
        header.extend(self.param_names.iter().cloned());
        if let Some(objective) = &self.objective {
            header.push(objective.label());
        }
        header.extend(["epochs", "seconds", "gpus", "status"].map(String::from));
        let mut writer = csv::Writer::from_writer(Vec::new());
        // Writing to memory cannot fail.
        let _ = writer.write_record(&header);
        for row in &self.rows {
            let mut record = vec![row.trial.clone()];
            record.extend(row.params.iter().map(|(_, value)| value.text()));
            if self.objective.is_some() {
                record.push(
                    row.ranked()
                        .map(|value| value.to_string())
                        .unwrap_or_default(),
                );
            }
            record.push(row.epochs.unwrap_or(row.points).to_string());
            record.push(
                row.duration_ms
                    .map(|ms| (ms as f64 / 1000.0).to_string())
                    .unwrap_or_default(),
            );
            record.push(row.gpus.join(","));
            record.push(row.status.to_string());
            let _ = writer.write_record(&record);
        }
        String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
