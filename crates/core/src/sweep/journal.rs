//! The journal: an append-only file of JSON lines in the sweep's folder, one event per
//! line, so a sweep survives Ctrl-C, a killed terminal, a daemon restart or a reboot.
//! Here are the events, how they are written and read back (a torn last line, from a
//! process killed mid-write, is dropped and reported so the caller can cut it before
//! appending), the replay of the events into what each trial did, and the fingerprint
//! of what decides the trials, with the human list of what changed in a sweep file since
//! its journal began. Times are milliseconds since the Unix epoch, passed in. Pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::input::InputError;

use super::early_stop::Judgement;
use super::value::list_text;
use super::{ParamValue, Sweep};

/// The journal's file name in the sweep's folder.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The most of a journal tfimg reads (a sweep of 100 000 trials writes a few tens of MB).
pub const JOURNAL_READ_LIMIT: u64 = 512 * 1024 * 1024;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A run of `tfimg sweep` began (again, when it resumes).
    SweepStarted {
        sweep: String,
        trials: usize,
        fingerprint: Fingerprint,
        time_ms: u64,
    },
    /// `tpe:` proposed a trial's params (before its first start); they are the trial's
    /// from then on. Params as JSON values, by name.
    TrialProposed {
        trial: String,
        params: serde_json::Map<String, serde_json::Value>,
        time_ms: u64,
    },
    /// An attempt's container was created and started.
    TrialStarted {
        trial: String,
        /// From 1; a retry or a rerun after a stop takes the next number.
        attempt: u32,
        container: String,
        container_id: String,
        /// The GPU ids of its slot (DeviceIDs); empty on the CPU.
        gpus: Vec<String>,
        /// The image's id (`sha256:...`).
        image: String,
        time_ms: u64,
    },
    /// An attempt ended: its exit code, none when it is unknown (the container vanished),
    /// `stopped` when tfimg stopped it (Ctrl-C, `sweep stop`, `max_failed`): a stopped
    /// attempt is not the trial's failure and uses none of its retries.
    TrialFinished {
        trial: String,
        attempt: u32,
        exit_code: Option<i64>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        stopped: bool,
        time_ms: u64,
    },
    /// A running attempt was judged by the sweep's `early_stop` rule; written before
    /// the runner acts on it (a stop: then its container is stopped).
    TrialJudged {
        trial: String,
        attempt: u32,
        judgement: Judgement,
        time_ms: u64,
    },
    /// A running attempt passed the sweep's `timeout` (after `after_ms`); written before
    /// its container is stopped. Its end counts as a failure.
    TrialTimedOut {
        trial: String,
        attempt: u32,
        after_ms: u64,
        time_ms: u64,
    },
    /// A run of `tfimg sweep` ended.
    SweepStopped { reason: StopReason, time_ms: u64 },
}

/// Why a run of `tfimg sweep` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every trial ended.
    Finished,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// `max_failed` trials failed for good.
    MaxFailed,
    /// `tfimg sweep stop`.
    Stopped,
}

impl Event {
    /// The event as one journal line, newline included.
    pub fn line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("events serialize");
        line.push('\n');
        line
    }
}

/// What to do to the file before appending to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repair {
    /// The last line was torn (killed mid-write): cut the file to this many bytes.
    TruncateTo(usize),
    /// The last line is whole but has no newline: append one first.
    AddNewline,
}

/// A journal read back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Journal {
    pub events: Vec<Event>,
    pub repair: Option<Repair>,
}

/// A line in the middle of the journal that is not an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct JournalError {
    pub line: usize,
    pub message: String,
}

/// The events of a journal's text. Blank lines are skipped; a last line without its
/// newline that does not parse was torn by a kill and is dropped; any other line that
/// does not parse is an error (the file was edited or is not a journal).
pub fn parse(text: &str) -> Result<Journal, JournalError> {
    let mut journal = Journal::default();
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let whole = line.ends_with('\n');
        let content = line.trim_end_matches(['\n', '\r']);
        if content.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Event>(content) {
            Ok(event) => {
                journal.events.push(event);
                if !whole {
                    journal.repair = Some(Repair::AddNewline);
                }
            }
            Err(_) if !whole => journal.repair = Some(Repair::TruncateTo(start)),
            Err(error) => {
                return Err(JournalError {
                    line: index + 1,
                    message: format!("not a journal event: {error}"),
                })
            }
        }
    }
    Ok(journal)
}

/// What decides a sweep's trials, as `path → text` entries: the image, the command, the
/// search (every axis, distribution or listed set), `env` and `mounts`. Resources,
/// retries, the pool and the objective are not in it: changing them between runs is fine.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(pub BTreeMap<String, String>);

impl Fingerprint {
    pub fn of(sweep: &Sweep) -> Fingerprint {
        let mut entries = sweep.search.fingerprint();
        entries.insert("image".into(), sweep.source.describe());
        let command: Vec<ParamValue> = sweep
            .command
            .written
            .iter()
            .map(|argument| ParamValue::Text(argument.clone()))
            .collect();
        entries.insert("command".into(), list_text(&command));
        if super::trials::shuffled_grid(sweep) {
            // The grid's trials run shuffled: adding `early_stop` reorders them.
            entries.insert(
                "order".into(),
                "the grid shuffled, as `early_stop` judges it".into(),
            );
        }
        for (name, value) in &sweep.env {
            entries.insert(format!("env.{name}"), value.clone());
        }
        if !sweep.mounts.is_empty() {
            let mounts: Vec<ParamValue> = sweep
                .mounts
                .iter()
                .map(|m| ParamValue::Text(m.clone()))
                .collect();
            entries.insert("mounts".into(), list_text(&mounts));
        }
        Fingerprint(entries)
    }

    /// What differs from `self` (the journal's) in `now` (the file's), one line per path:
    /// `` `params.lr`: [0.001, 0.0005] → [0.001, 0.0002] ``.
    pub fn changes(&self, now: &Fingerprint) -> Vec<String> {
        let mut paths: Vec<&String> = self.0.keys().chain(now.0.keys()).collect();
        paths.sort();
        paths.dedup();
        paths
            .into_iter()
            .filter_map(|path| match (self.0.get(path), now.0.get(path)) {
                (Some(old), Some(new)) if old == new => None,
                (Some(old), Some(new)) => Some(format!("`{path}`: {old} → {new}")),
                (Some(old), None) => Some(format!("`{path}`: {old} → (removed)")),
                (None, Some(new)) => Some(format!("`{path}`: (none) → {new}")),
                (None, None) => None,
            })
            .collect()
    }
}

/// The refusal of a sweep file that changed since its journal (`journal` as shown)
/// began: what changed, on one line (at most five changes, then how many more).
pub fn changed_error(journal: &str, changes: &[String]) -> InputError {
    let mut shown: Vec<String> = changes.iter().take(5).cloned().collect();
    if changes.len() > 5 {
        shown.push(format!("and {} more", changes.len() - 5));
    }
    InputError::new(
        format!(
            "the sweep file changed since the sweep in `{journal}` began: {}",
            shown.join("; ")
        ),
        "put the file back as it was to go on with this sweep, or start another: give it a new `sweep:` name (or remove its folder)",
    )
}

/// One attempt of a trial, as the journal tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    pub number: u32,
    pub container: String,
    pub container_id: String,
    pub gpus: Vec<String>,
    pub image: String,
    pub started_ms: u64,
    /// `None` while it runs (or when tfimg was killed before it saw the end).
    pub end: Option<AttemptEnd>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AttemptEnd {
    pub exit_code: Option<i64>,
    pub stopped: bool,
    pub finished_ms: u64,
}

impl AttemptEnd {
    pub fn succeeded(&self) -> bool {
        !self.stopped && self.exit_code == Some(0)
    }

    /// Failed by itself (not stopped by tfimg): a non-zero or unknown exit.
    pub fn failed(&self) -> bool {
        !self.stopped && self.exit_code != Some(0)
    }
}

impl Attempt {
    /// How long it ran, when it ended.
    pub fn duration_ms(&self) -> Option<u64> {
        self.end
            .map(|end| end.finished_ms.saturating_sub(self.started_ms))
    }

    /// `status.json` of the trial's folder for this attempt.
    pub fn status_json(&self, trial: &str) -> String {
        let status = serde_json::json!({
            "trial": trial,
            "attempt": self.number,
            "container": self.container,
            "gpus": self.gpus,
            "image": self.image,
            "started_ms": self.started_ms,
            "finished_ms": self.end.map(|end| end.finished_ms),
            "exit_code": self.end.and_then(|end| end.exit_code),
            "stopped": self.end.is_some_and(|end| end.stopped),
        });
        let mut text = serde_json::to_string_pretty(&status).expect("JSON values serialize");
        text.push('\n');
        text
    }
}

/// Where a trial stands by its journal alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialStatus {
    NeverStarted,
    /// Its last attempt has no end: reattach to its container, or learn how it ended.
    Running,
    /// An attempt exited 0.
    Done {
        attempt: u32,
    },
    /// Its last attempt failed (retries may remain: the scheduler decides).
    Failed,
    /// Its last attempt was stopped by tfimg.
    Stopped,
    /// The `early_stop` rule stopped it: it is over, and never runs again.
    StoppedEarly,
}

/// The attempts of one trial, in journal order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrialHistory {
    pub attempts: Vec<Attempt>,
    /// The `early_stop` rule's judgements, with the attempt each was made on.
    pub judgements: Vec<(u32, Judgement)>,
    /// Attempts stopped for passing the `timeout`, with how long they had run.
    pub timed_out: Vec<(u32, u64)>,
}

impl TrialHistory {
    pub fn status(&self) -> TrialStatus {
        if let Some(done) = self.done() {
            return TrialStatus::Done {
                attempt: done.number,
            };
        }
        if self.stopped_early().is_some() {
            return TrialStatus::StoppedEarly;
        }
        match self.attempts.last().map(|attempt| attempt.end) {
            None => TrialStatus::NeverStarted,
            Some(None) => TrialStatus::Running,
            Some(Some(end)) if end.stopped => TrialStatus::Stopped,
            Some(Some(_)) => TrialStatus::Failed,
        }
    }

    /// The judgement that stopped the trial early, if one did.
    pub fn stopped_early(&self) -> Option<&Judgement> {
        self.judgements
            .iter()
            .map(|(_, judgement)| judgement)
            .find(|judgement| judgement.stop)
    }

    /// How long `attempt` had run when its `timeout` stopped it, if it did.
    pub fn timed_out(&self, attempt: u32) -> Option<u64> {
        self.timed_out
            .iter()
            .find(|(number, _)| *number == attempt)
            .map(|(_, after_ms)| *after_ms)
    }

    /// The attempt that exited 0, if one did.
    pub fn done(&self) -> Option<&Attempt> {
        self.attempts
            .iter()
            .find(|attempt| attempt.end.is_some_and(|end| end.succeeded()))
    }

    pub fn last(&self) -> Option<&Attempt> {
        self.attempts.last()
    }

    /// Attempts that failed by themselves (retries spent).
    pub fn failures(&self) -> u32 {
        self.attempts
            .iter()
            .filter(|attempt| attempt.end.is_some_and(|end| end.failed()))
            .count() as u32
    }

    /// The number the next attempt takes.
    pub fn next_attempt(&self) -> u32 {
        self.attempts
            .iter()
            .map(|attempt| attempt.number)
            .max()
            .unwrap_or(0)
            + 1
    }
}

/// A journal replayed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    /// The fingerprint of the first run (every run must have had the same).
    pub fingerprint: Option<Fingerprint>,
    /// When the first run began.
    pub started_ms: Option<u64>,
    /// Runs of `tfimg sweep` (`sweep_started` events).
    pub runs: usize,
    /// How the last run ended, if it said.
    pub last_stop: Option<StopReason>,
    /// By trial id.
    pub trials: BTreeMap<String, TrialHistory>,
    /// The params `tpe:` proposed, by trial id (the first proposal of each).
    pub proposed: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
}

impl Replay {
    /// The history of `trial` (empty when it never started).
    pub fn trial(&self, trial: &str) -> TrialHistory {
        self.trials.get(trial).cloned().unwrap_or_default()
    }
}

/// What the events say each trial did. An end without its start, or a second end of one
/// attempt, is ignored.
pub fn replay(events: &[Event]) -> Replay {
    let mut replay = Replay::default();
    for event in events {
        replay.apply(event);
    }
    replay
}

impl Replay {
    /// One more event, as `replay` reads it.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::SweepStarted {
                fingerprint,
                time_ms,
                ..
            } => {
                self.runs += 1;
                self.fingerprint.get_or_insert_with(|| fingerprint.clone());
                self.started_ms.get_or_insert(*time_ms);
                self.last_stop = None;
            }
            Event::TrialStarted {
                trial,
                attempt,
                container,
                container_id,
                gpus,
                image,
                time_ms,
            } => {
                self.trials
                    .entry(trial.clone())
                    .or_default()
                    .attempts
                    .push(Attempt {
                        number: *attempt,
                        container: container.clone(),
                        container_id: container_id.clone(),
                        gpus: gpus.clone(),
                        image: image.clone(),
                        started_ms: *time_ms,
                        end: None,
                    });
            }
            Event::TrialFinished {
                trial,
                attempt,
                exit_code,
                stopped,
                time_ms,
            } => {
                let started = self
                    .trials
                    .get_mut(trial)
                    .and_then(|history| history.attempts.iter_mut().find(|a| a.number == *attempt));
                if let Some(started) = started.filter(|started| started.end.is_none()) {
                    started.end = Some(AttemptEnd {
                        exit_code: *exit_code,
                        stopped: *stopped,
                        finished_ms: *time_ms,
                    });
                }
            }
            Event::TrialJudged {
                trial,
                attempt,
                judgement,
                ..
            } => self
                .trials
                .entry(trial.clone())
                .or_default()
                .judgements
                .push((*attempt, *judgement)),
            Event::TrialTimedOut {
                trial,
                attempt,
                after_ms,
                ..
            } => self
                .trials
                .entry(trial.clone())
                .or_default()
                .timed_out
                .push((*attempt, *after_ms)),
            Event::TrialProposed { trial, params, .. } => {
                self.proposed
                    .entry(trial.clone())
                    .or_insert_with(|| params.clone());
            }
            Event::SweepStopped { reason, .. } => self.last_stop = Some(*reason),
        }
    }
}

#[cfg(test)]
mod tests;
