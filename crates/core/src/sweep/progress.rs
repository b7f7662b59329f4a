//! What a sweep tells the user, as text and JSON: each note of a running sweep (a trial
//! started or ended, where the whole sweep stands), how a run ended, the dry run's trials
//! and slots, and `tfimg sweep status`. Plain data in, strings and JSON values out: the
//! caller prints them (`app::sweep` and `commands::sweep`); nothing here prints.

use std::collections::BTreeMap;

use super::journal::StopReason;
use super::results::{duration_text, number_text, Results, RowStatus};
use super::schedule::{Outcome, Slot};
use super::unwatched::{unwatched_json, Unwatched};
use super::{Sweep, Trial};
use crate::notice::Notice;

/// What happened, for the live view, the plain lines and `--json`.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The journal had this much already.
    Resumed {
        done: usize,
        failed: usize,
        reattached: usize,
        /// Stopped by the `early_stop` rule: over, as done ones are.
        stopped_early: usize,
    },
    Started {
        trial: String,
        attempt: u32,
        gpus: Vec<String>,
        container: String,
    },
    Ended {
        trial: String,
        attempt: u32,
        outcome: Outcome,
        exit_code: Option<i64>,
        seconds: f64,
        /// What ranks the trial (`last val_accuracy`) and its value.
        metric: Option<(String, f64)>,
        /// It ended while no tfimg watched it (learned on resume).
        away: bool,
    },
    /// A running attempt passed the sweep's `timeout` and is stopped (its end, a
    /// failure, follows).
    TimedOut { trial: String, after_ms: u64 },
    /// The `early_stop` rule stopped a running trial (its end follows).
    StoppedEarly { trial: String, reason: String },
    /// A trial's first report has no value of the objective's metric (misspelled in the
    /// file or the script): said once per run, at that report, with what it did report.
    ObjectiveUnreported {
        trial: String,
        metric: String,
        reported: Vec<String>,
    },
    /// `tpe:` proposed a trial's params from `learned_from` ended trials (0: a random
    /// draw).
    Proposed {
        trial: String,
        params: Vec<super::Param>,
        learned_from: usize,
    },
    /// Where the whole sweep stands (each second, when it changed).
    Progress(Counts),
    /// Something the user should know (a container of this sweep removed, a kill while away).
    Said(String),
    /// Something that may go wrong (a trial's folder it could not give away).
    Warned(String),
}

/// Trials by where they stand, and the time left as far as the finished ones tell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    pub total: usize,
    pub queued: usize,
    pub running: usize,
    pub done: usize,
    pub failed: usize,
    /// Stopped by the `early_stop` rule.
    pub stopped_early: usize,
    pub eta_seconds: Option<u64>,
    /// Each running trial's last objective value, when it reported one.
    pub running_metrics: Vec<(String, Option<f64>)>,
}

/// How a run of the sweep ended (Ctrl-C is the `Interrupted` error instead).
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub reason: StopReason,
    pub counts: Counts,
    /// `tfimg sweep stop` stopped it: who asked, and when (`root (uid 0) at ...`).
    pub stopped_by: Option<String>,
    /// The sweep file as the user named it, for how to go on.
    pub file: String,
}

/// A note as the user sees it: a line (the live summary's, when `live`, which only a
/// terminal shows) and the JSON event of that kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Described {
    pub line: Notice,
    pub live: bool,
    pub event: &'static str,
    pub json: serde_json::Value,
}

/// `note` of a run of `sweep`, as the user sees it.
pub fn describe(note: &Note, sweep: &Sweep) -> Described {
    let said = |line: Notice, event, json| Described {
        line,
        live: false,
        event,
        json,
    };
    let status = |line: String, event, json| said(Notice::Status(line), event, json);
    match note {
        Note::Started {
            trial,
            attempt,
            gpus,
            container,
        } => {
            let on = if gpus.is_empty() {
                "the CPU".to_string()
            } else {
                format!("GPU {}", gpus.join(","))
            };
            let again = if *attempt > 1 {
                format!(" (attempt {attempt})")
            } else {
                String::new()
            };
            status(
                format!("{trial} started on {on}{again}"),
                "trial_started",
                serde_json::json!({
                    "trial": trial, "attempt": attempt, "gpus": gpus, "container": container,
                }),
            )
        }
        Note::Ended {
            trial,
            attempt,
            outcome,
            exit_code,
            seconds,
            metric,
            away,
        } => status(
            ended_line(
                trial,
                *attempt,
                End {
                    outcome: *outcome,
                    exit_code: *exit_code,
                    seconds: *seconds,
                    metric: metric.as_ref(),
                    away: *away,
                },
                sweep,
            ),
            "trial_ended",
            serde_json::json!({
                "trial": trial, "attempt": attempt, "outcome": outcome_text(*outcome),
                "exit_code": exit_code, "seconds": seconds,
                "metric": metric.as_ref().zip(sweep.objective.as_ref()).map(|((_, value), objective)| {
                    serde_json::json!({&objective.metric: value, "use": objective.pick.as_str()})
                }),
            }),
        ),
        Note::Progress(counts) => Described {
            line: Notice::Status(progress_line(counts)),
            live: true,
            event: "progress",
            json: counts_json(counts),
        },
        Note::Resumed {
            done,
            failed,
            reattached,
            stopped_early,
        } => {
            let early = match stopped_early {
                0 => String::new(),
                n => format!(", {n} stopped early"),
            };
            status(
                format!(
                    "going on with sweep `{}`: {done} trial(s) done, {failed} failed for good{early}, {reattached} still running",
                    sweep.name
                ),
                "resumed",
                serde_json::json!({
                    "done": done, "failed": failed, "reattached": reattached,
                    "stopped_early": stopped_early,
                }),
            )
        }
        Note::TimedOut { trial, after_ms } => status(
            format!(
                "{trial} timed out after {} (`timeout: {}`): stopped, it counts as failed",
                duration_text(*after_ms),
                sweep
                    .timeout
                    .map_or(String::new(), |timeout| humantime::format_duration(timeout)
                        .to_string())
            ),
            "trial_timed_out",
            serde_json::json!({"trial": trial, "seconds": *after_ms as f64 / 1000.0}),
        ),
        Note::Proposed {
            trial,
            params,
            learned_from,
        } => status(
            match learned_from {
                0 => format!(
                    "{trial} is a random draw: {}",
                    super::value::set_text(params)
                ),
                n => format!(
                    "{trial} is proposed by TPE from {n} ended trial(s): {}",
                    super::value::set_text(params)
                ),
            },
            "trial_proposed",
            serde_json::json!({
                "trial": trial,
                "params": super::value::params_object(params),
                "learned_from": learned_from,
            }),
        ),
        Note::StoppedEarly { trial, reason } => status(
            format!("{trial} is stopped early ({reason})"),
            "trial_stopped_early",
            serde_json::json!({"trial": trial, "reason": reason}),
        ),
        Note::ObjectiveUnreported {
            trial,
            metric,
            reported,
        } => {
            let names: Vec<String> = reported.iter().map(|name| format!("`{name}`")).collect();
            let guess = crate::input::did_you_mean(metric, reported.iter().map(String::as_str));
            said(
                Notice::warning(format!(
                    "{trial} reported {} but not `{metric}`, the objective's metric: no trial can be ranked{} on it; {guess}set `objective.metric` to what the script reports, or have it report `{metric}`",
                    names.join(", "),
                    match sweep.early_stop.is_some() || sweep.search.learns() {
                        true => ", stopped early or learned from",
                        false => "",
                    }
                )),
                "objective_unreported",
                serde_json::json!({"trial": trial, "metric": metric, "reported": reported}),
            )
        }
        Note::Said(message) => said(
            Notice::note(message.clone()),
            "note",
            serde_json::json!({"message": message}),
        ),
        Note::Warned(message) => said(
            Notice::warning(message.clone()),
            "warning",
            serde_json::json!({"message": message}),
        ),
    }
}

/// How an attempt ended, as its line says it.
struct End<'a> {
    outcome: Outcome,
    exit_code: Option<i64>,
    seconds: f64,
    metric: Option<&'a (String, f64)>,
    away: bool,
}

fn ended_line(trial: &str, attempt: u32, end: End<'_>, sweep: &Sweep) -> String {
    let End {
        outcome,
        exit_code,
        seconds,
        metric,
        away,
    } = end;
    let exit = exit_code.map_or("its container vanished".to_string(), |code| {
        format!("exit {code}")
    });
    let time = duration_text((seconds * 1000.0) as u64);
    // A trial whose value is NaN or infinite diverged: said as such.
    let diverged = metric.is_some_and(|(_, value)| !value.is_finite());
    let metric = metric.map_or(String::new(), |(name, value)| {
        format!(": {name} {}", number_text(*value))
    });
    let away = if away { " while tfimg was away" } else { "" };
    let metric = match diverged {
        true => format!("{metric} (diverged)"),
        false => metric,
    };
    match outcome {
        Outcome::Done if attempt > 1 => {
            format!("{trial} done (attempt {attempt}) in {time}{away}{metric}")
        }
        Outcome::Done => format!("{trial} done in {time}{away}{metric}"),
        Outcome::Retry { retry } => format!(
            "{trial} failed ({exit}) after {time}{away}; queued again (retry {retry} of {})",
            sweep.retries
        ),
        Outcome::Failed => format!(
            "{trial} failed ({exit}) after {time}{away}: see `{}`",
            sweep
                .trial_dir(trial)
                .join(super::trials::STDERR_FILE)
                .display()
        ),
        Outcome::Stopped => format!("{trial} stopped after {time}{away}"),
        Outcome::StoppedEarly => format!("{trial} stopped early after {time}{away}{metric}"),
    }
}

fn outcome_text(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Done => "done",
        Outcome::Retry { .. } => "retry",
        Outcome::Failed => "failed",
        Outcome::Stopped => "stopped",
        Outcome::StoppedEarly => "stopped_early",
    }
}

/// `12/27 done · 3 running · 12 queued · 0 failed · ETA 1m20s · t013 0.9100`.
fn progress_line(counts: &Counts) -> String {
    let mut line = format!(
        "{}/{} done · {} running · {} queued · {} failed",
        counts.done, counts.total, counts.running, counts.queued, counts.failed
    );
    if counts.stopped_early > 0 {
        line.push_str(&format!(" · {} stopped early", counts.stopped_early));
    }
    if let Some(eta) = counts.eta_seconds {
        line.push_str(&format!(" · ETA {}", duration_text(eta * 1000)));
    }
    for (trial, metric) in &counts.running_metrics {
        line.push_str(&format!(
            " · {trial} {}",
            metric.map_or("…".to_string(), number_text)
        ));
    }
    line
}

fn counts_json(counts: &Counts) -> serde_json::Value {
    serde_json::json!({
        "total": counts.total, "queued": counts.queued, "running": counts.running,
        "done": counts.done, "failed": counts.failed, "stopped_early": counts.stopped_early,
        "eta_seconds": counts.eta_seconds,
    })
}

impl Finished {
    /// The run's result with `--json`: the results, why it ended and the counts.
    pub fn json(&self, results: &Results) -> serde_json::Value {
        let mut value = results.to_json();
        value["reason"] = serde_json::json!(self.reason);
        value["counts"] = counts_json(&self.counts);
        value["stopped_by"] = serde_json::json!(self.stopped_by);
        value
    }

    /// What closes a run of `sweep`: the counts and where the results are, what early
    /// stopping saved (when it stopped a trial), then, when
    /// `max_failed` trials failed, the error.
    pub fn closing_lines(&self, sweep: &Sweep, results: &Results) -> Vec<String> {
        let counts = &self.counts;
        let diverged = results
            .rows
            .iter()
            .filter(|row| matches!(row.status, RowStatus::Diverged { .. }))
            .count();
        let early = match counts.stopped_early {
            0 => String::new(),
            n => format!(", {n} stopped early"),
        };
        let diverged = match (diverged, &results.objective) {
            (0, _) | (_, None) => String::new(),
            (n, Some(objective)) => {
                format!(" ({n} diverged: NaN or infinite `{}`)", objective.metric)
            }
        };
        let mut lines = vec![format!(
            "sweep `{}`: {} of {} trials done{diverged}, {} failed{early}; results in `{}`",
            sweep.name,
            counts.done,
            counts.total,
            counts.failed,
            sweep.output.display()
        )];
        if let Some(savings) = results.savings() {
            lines.push(savings.line());
        }
        if self.reason == StopReason::MaxFailed {
            lines.push("error: the sweep stopped early: `max_failed` trials failed".to_string());
        }
        if self.reason == StopReason::Stopped {
            let by = self
                .stopped_by
                .as_deref()
                .map_or(String::new(), |by| format!(", asked by {by}"));
            let left = counts
                .total
                .saturating_sub(counts.done + counts.failed + counts.stopped_early);
            lines.push(format!(
                "error: sweep `{}` was stopped by `tfimg sweep stop`{by}: its trial containers are removed and its results kept",
                sweep.name
            ));
            lines.push(format!(
                "hint: `tfimg sweep {}` goes on with the {left} trial(s) not done",
                self.file
            ));
        }
        lines
    }

    /// Whether the run failed (exit 1): it was stopped (`tfimg sweep stop`) or stopped
    /// early by `max_failed`, or a trial failed for good.
    pub fn failed(&self) -> bool {
        matches!(self.reason, StopReason::MaxFailed | StopReason::Stopped) || self.counts.failed > 0
    }
}

/// The dry run's trials table: the trial, each param, the command.
pub fn trials_table(sweep: &Sweep, trials: &[Trial]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["TRIAL".to_string()];
    header.extend(
        sweep
            .param_names()
            .iter()
            .map(|name| name.to_ascii_uppercase()),
    );
    header.push("COMMAND".to_string());
    let rows = trials
        .iter()
        .map(|trial| {
            let mut row = vec![trial.id.clone()];
            row.extend(trial.params.iter().map(|(_, value)| value.text()));
            row.push(trial.command_line());
            row
        })
        .collect();
    (header, rows)
}

/// The dry run's slots table's rows (`SLOT`, `GPUS`).
pub fn slot_rows(slots: &[Slot]) -> Vec<Vec<String>> {
    slots
        .iter()
        .map(|slot| vec![(slot.index + 1).to_string(), slot.describe()])
        .collect()
}

/// The dry run with `--json`.
pub fn dry_run_json(sweep: &Sweep, trials: &[Trial], slots: &[Slot]) -> serde_json::Value {
    let trials: Vec<serde_json::Value> = trials
        .iter()
        .map(|trial| {
            let params: serde_json::Map<String, serde_json::Value> = trial
                .params
                .iter()
                .map(|(name, value)| (name.clone(), value.to_json()))
                .collect();
            serde_json::json!({"trial": trial.id, "params": params, "command": trial.command})
        })
        .collect();
    let slots: Vec<serde_json::Value> = slots
        .iter()
        .map(|slot| serde_json::json!({"slot": slot.index + 1, "gpus": slot.gpus}))
        .collect();
    serde_json::json!({
        "sweep": sweep.name,
        "image": sweep.source.describe(),
        "search": sweep.search.describe(),
        "output": sweep.output,
        "objective": sweep.objective,
        "early_stop": sweep.early_stop.as_ref().map(|early_stop| early_stop.rule.describe()),
        "trials": trials,
        "slots": slots,
    })
}

/// What the dry run says last: what would run where, and that nothing was created.
pub fn dry_run_lines(sweep: &Sweep, trials: usize, slots: usize) -> Vec<String> {
    let on = match &sweep.pool.gpus {
        super::GpuPool::Cpu => "the CPU".to_string(),
        _ => format!("{} GPU(s) each", sweep.pool.gpus_per_trial),
    };
    let early = sweep
        .early_stop
        .as_ref()
        .map_or(String::new(), |early_stop| {
            format!(", stopped early by {}", early_stop.rule.describe())
        });
    let total = sweep.search.count();
    let mut lines = vec![format!(
        "dry run of sweep `{}`: {total} trial(s) ({}) on {slots} slot(s), {on}, from {}{early}; nothing was created",
        sweep.name,
        sweep.search.describe(),
        sweep.source.describe()
    )];
    if super::trials::shuffled_grid(sweep) {
        lines.push(
            "the grid's trials run in the shuffled order above, the same every run: early stopping compares each trial with those before it, so a grid in the file's order (one axis's values together) would set its bar from whichever values come first".to_string(),
        );
    }
    if sweep.search.learns() && trials < total {
        lines.push(format!(
            "the {trials} above are random draws; {} to {} are proposed by TPE from the trials that ended, as slots free up",
            super::trials::trial_id(trials, total),
            super::trials::trial_id(total - 1, total),
        ));
    }
    lines.push(format!("results would go to `{}`", sweep.output.display()));
    lines
}

/// `tfimg sweep status`: each trial's state word, counted (`done`, `running`, ...).
/// `unproposed`: the `tpe:` trials not proposed yet (`to propose`).
pub fn status_tally(results: &Results, unproposed: usize) -> BTreeMap<String, usize> {
    let mut tally = BTreeMap::<String, usize>::new();
    for row in &results.rows {
        *tally.entry(row.status.word().to_string()).or_default() += 1;
    }
    if unproposed > 0 {
        tally.insert("to propose".to_string(), unproposed);
    }
    tally
}

/// `tfimg sweep status --json`: the results, the sweep's name, whether a tfimg runs it,
/// the tally (with `unproposed`, the `tpe:` trials not proposed yet), the trials no
/// tfimg watched and why the engine could not say.
pub fn status_json(
    results: &Results,
    name: &str,
    (running, unproposed): (bool, usize),
    unwatched: &[Unwatched],
    unreached: Option<&str>,
) -> serde_json::Value {
    let mut value = results.to_json();
    value["sweep"] = serde_json::json!(name);
    value["running"] = serde_json::json!(running);
    value["tally"] = serde_json::json!(status_tally(results, unproposed));
    value["unwatched"] = unwatched
        .iter()
        .map(unwatched_json)
        .collect::<serde_json::Value>();
    value["unreached"] = serde_json::json!(unreached);
    value
}

/// The text under `tfimg sweep status`'s table: the tally, whether a tfimg runs the sweep
/// in `dir` (as the user would write it), how to go on with it, and `lines` (what the
/// trials no tfimg watched did). `unproposed`: the `tpe:` trials not proposed yet.
pub fn status_text(
    results: &Results,
    name: &str,
    dir: &str,
    (running, unproposed): (bool, usize),
    lines: &[String],
) -> String {
    let tally: Vec<String> = status_tally(results, unproposed)
        .iter()
        .map(|(word, count)| format!("{count} {word}"))
        .collect();
    let state = match running {
        true => "its tfimg is running it",
        false => "no tfimg is running it",
    };
    let mut text = format!(
        "\nsweep `{name}` in `{dir}`: {}; {state}\n",
        tally.join(", ")
    );
    let unfinished = results.rows.iter().any(|row| {
        !matches!(
            row.status,
            RowStatus::Done { .. }
                | RowStatus::Diverged { .. }
                | RowStatus::Failed
                | RowStatus::TimedOut(_)
                | RowStatus::StoppedEarly(_)
        )
    });
    if !running && lines.is_empty() && (unfinished || unproposed > 0) {
        text.push_str("`tfimg sweep FILE` goes on with it\n");
    }
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests;
