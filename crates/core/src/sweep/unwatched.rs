//! Attempts no tfimg watched (the run was killed while their containers ran on), as
//! their containers say they stand, and what that means: how such an end counts (`exit_of`,
//! `end_of`, `Seen::end`) and what `tfimg sweep status|results|report` say of them. Plain
//! data: `app::sweep::unwatched` asks the engine and the host.

use super::journal::AttemptEnd;
use super::schedule::Exit;

/// What an attempt's container says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Still running (or restarting, or paused).
    Running,
    /// It ended by itself with `code`, at `finished_ms` when the daemon says.
    Ended { code: i64, finished_ms: Option<u64> },
    /// Made but never started (the run was killed between the two).
    NeverStarted,
    /// There is no such container (removed by hand, or by an older tfimg's `stop`).
    Gone,
}

impl Seen {
    /// What a container in Docker's `state`, with its `exit_code` and `finished_ms` as the
    /// daemon keeps them, says about its attempt.
    pub fn of_state(state: &str, exit_code: Option<i64>, finished_ms: Option<u64>) -> Seen {
        match state {
            "running" | "restarting" | "paused" => Seen::Running,
            "created" => Seen::NeverStarted,
            "removing" => Seen::Gone,
            // `exited`, `dead`: Docker keeps the exit code (-1 when it has none).
            _ => Seen::Ended {
                code: exit_code.unwrap_or(-1),
                finished_ms,
            },
        }
    }
}

/// How an attempt that ended while no tfimg watched it counts: exit 0 is done; a kill by
/// a signal (128 and above: a daemon restart, a reboot, the OOM killer, `docker kill`) is
/// not the trial's failure, so it runs again without using a retry; any other exit code
/// is a failure.
pub fn exit_of(code: i64) -> Exit {
    match code {
        code if code >= 128 => Exit::Stopped,
        code => Exit::Code(code),
    }
}

/// The end an attempt that ended unwatched gets in the journal: its exit code, and
/// `stopped` for a kill by a signal.
pub fn end_of(code: i64, finished_ms: u64) -> AttemptEnd {
    AttemptEnd {
        exit_code: Some(code),
        stopped: exit_of(code) == Exit::Stopped,
        finished_ms,
    }
}

/// An attempt that is open in the journal but that no tfimg watches, and what its
/// container says (for `status` and `results`, which record nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwatched {
    pub trial: String,
    pub attempt: u32,
    pub container: String,
    pub seen: Seen,
    /// Its start was not in the journal: its container was adopted here.
    pub adopted: bool,
}

impl Seen {
    /// The end this tells, as the next run or `stop` records it: `None` while the
    /// container runs on. A container that never started ends the attempt as stopped (it
    /// runs again); a gone one as `status.json` recorded it (`recorded`), else as a
    /// failure without an exit code. Ends at `now_ms` where the daemon does not say.
    pub fn end(self, recorded: Option<AttemptEnd>, now_ms: u64) -> Option<AttemptEnd> {
        match self {
            Seen::Running => None,
            Seen::Ended { code, finished_ms } => Some(end_of(code, finished_ms.unwrap_or(now_ms))),
            Seen::NeverStarted => Some(AttemptEnd {
                exit_code: None,
                stopped: true,
                finished_ms: now_ms,
            }),
            Seen::Gone => Some(recorded.unwrap_or(AttemptEnd {
                exit_code: None,
                stopped: false,
                finished_ms: now_ms,
            })),
        }
    }
}

/// What `status`, `results` and `report` say of the trials no tfimg watched in sweep
/// `name`: those whose containers run on, those that ended (shown as they ended, not
/// recorded yet), and why the engine could not say (`unreached`).
pub fn unwatched_lines(
    name: &str,
    unwatched: &[Unwatched],
    unreached: Option<&str>,
) -> Vec<String> {
    let mut lines = Vec::new();
    let ended: Vec<String> = unwatched
        .iter()
        .filter_map(|unwatched| match unwatched.seen {
            Seen::Running => None,
            Seen::Ended { code, .. } => Some(format!("{} (exit {code})", unwatched.trial)),
            Seen::NeverStarted => Some(format!("{} (never started)", unwatched.trial)),
            Seen::Gone => Some(format!("{} (container gone)", unwatched.trial)),
        })
        .collect();
    if !ended.is_empty() {
        lines.push(format!(
            "ended while no tfimg watched: {}; shown as they ended, recorded by `tfimg sweep FILE` (which goes on with the sweep) or `tfimg sweep stop {name}`",
            ended.join(", ")
        ));
    }
    let running: Vec<&str> = unwatched
        .iter()
        .filter(|unwatched| unwatched.seen == Seen::Running)
        .map(|unwatched| unwatched.trial.as_str())
        .collect();
    if !running.is_empty() {
        lines.push(format!(
            "running while no tfimg watches them: {}; `tfimg sweep FILE` watches them again, `tfimg sweep stop {name}` stops them",
            running.join(", ")
        ));
    }
    if let Some(error) = unreached {
        lines.push(format!(
            "the engine could not say how the trials no tfimg watched are doing ({error}); shown as the journal has them"
        ));
    }
    lines
}

/// One unwatched attempt in `tfimg sweep status --json`.
pub fn unwatched_json(unwatched: &Unwatched) -> serde_json::Value {
    let (state, exit_code) = match unwatched.seen {
        Seen::Running => ("running", None),
        Seen::Ended { code, .. } => ("exited", Some(code)),
        Seen::NeverStarted => ("created", None),
        Seen::Gone => ("gone", None),
    };
    serde_json::json!({
        "trial": unwatched.trial,
        "attempt": unwatched.attempt,
        "container": unwatched.container,
        "state": state,
        "exit_code": exit_code,
        "adopted": unwatched.adopted,
    })
}
