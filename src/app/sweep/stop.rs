//! `tfimg sweep stop`: a running sweep is asked to stop (it stops and removes its trial
//! containers itself and records that in its journal); a sweep whose tfimg is gone has
//! what its trials did while no tfimg watched recorded here (a finished result is kept,
//! never marked stopped), what still runs stopped, logs kept and containers removed.

use std::path::Path;
use std::time::Duration;

use super::unwatched::{self, Seen};
use super::{folder, STOP_REQUEST, STOP_SECONDS};
use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers, Tunnels};
use crate::host::prelude::{Clock, Identity};
use crate::host::{Host, LockAttempt};
use crate::input::InputError;
use crate::sweep::journal::{Attempt, AttemptEnd, Event, StopReason};

/// How long a running sweep gets to stop its trials.
const STOP_WAIT: Duration = Duration::from_secs(90);

/// What `stop` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// The running tfimg stopped its sweep.
    ByItsRun,
    /// No tfimg ran it; these trial containers were removed here, and `notes` say what
    /// each trial no tfimg watched was found doing and how it was recorded.
    Here {
        containers: Vec<String>,
        notes: Vec<String>,
    },
}

/// Stops the sweep in `dir`.
pub async fn stop(
    session: Session<'_, impl Containers + ContainerIo + Tunnels, impl Host>,
    dir: &Path,
) -> anyhow::Result<Stopped> {
    let Session { host, .. } = session;
    let found = folder::read(host, dir)?;
    let sweep = &found.sweep;
    let lock = super::resume::lock_name(&sweep.output);
    let request = dir.join(STOP_REQUEST);
    let started = host.now();
    loop {
        match host.try_lock(&lock, false) {
            LockAttempt::Busy => {}
            LockAttempt::Held(_) | LockAttempt::Unavailable => break,
        }
        // Asked once, saying who asks; the run looks for the request every second.
        if !host.exists(&request) {
            host.write_file(&request, asker(host).as_bytes())?;
        }
        if host.now().duration_since(started).unwrap_or_default() > STOP_WAIT {
            return Err(InputError::new(
                format!(
                    "sweep `{}` did not stop within {} s",
                    sweep.name,
                    STOP_WAIT.as_secs()
                ),
                "its tfimg may be stuck: see its output, or stop its containers with `tfimg rm -f`",
            )
            .into());
        }
        host.sleep(Duration::from_millis(200)).await;
    }
    if host.exists(&request) {
        host.remove_file(&request)?;
        return Ok(Stopped::ByItsRun);
    }
    stop_here(session, dir, &found).await
}

/// Who asks a sweep to stop, as the run tells it: `ada (uid 1000) at 2026-11-28
/// 13:04:05 UTC`.
fn asker(host: &(impl Clock + Identity)) -> String {
    let uid = host
        .ids()
        .map_or(String::new(), |(uid, _)| format!(" (uid {uid})"));
    let name = host
        .user_name()
        .unwrap_or_else(|| "an unnamed account".to_string());
    let at = crate::sweep::report::utc_text(super::attempt::now_ms(host));
    format!("{name}{uid} at {at}")
}

/// No tfimg runs the sweep: what became of each attempt no tfimg watched is recorded from
/// its container (`unwatched`): one that ended by itself keeps its result (exit 0 is
/// done), one still running is stopped (it runs again when the sweep goes on), one made
/// just before the kill is adopted first. Logs are kept, `status.json` written, every
/// container of the sweep removed.
async fn stop_here(
    session: Session<'_, impl Containers + ContainerIo + Tunnels, impl Host>,
    dir: &Path,
    found: &folder::SweepFolder,
) -> anyhow::Result<Stopped> {
    let Session { engine, host, .. } = session;
    let now_ms = || super::attempt::now_ms(host);
    let journal = dir.join(crate::sweep::journal::JOURNAL_FILE);
    let append = |event: &Event| host.append_file(&journal, event.line().as_bytes(), true);
    let sweep = &found.sweep;
    let mut replay = found.replay.clone();
    let mut notes = Vec::new();
    let adopted =
        unwatched::adoptions(engine, &sweep.name, &found.trials, &replay, None, now_ms()).await?;
    for event in adopted {
        append(&event)?;
        if let Event::TrialStarted {
            trial, container, ..
        } = &event
        {
            notes.push(format!(
                "{trial}: its container `{container}` was made just before its run ended, before the journal had it; it is taken over"
            ));
        }
        replay.apply(&event);
    }
    // What each open attempt's container says, before any is stopped: a trial that ended
    // by itself is not one tfimg stopped.
    let mut open = Vec::new();
    for trial in &found.trials {
        let history = replay.trial(&trial.id);
        let Some(attempt) = history.last().filter(|attempt| attempt.end.is_none()) else {
            continue;
        };
        let named = unwatched::named(engine, &sweep.name, &trial.id, &attempt.container_id).await?;
        notes.extend(named.stranger_note(&trial.id));
        open.push((
            trial.id.clone(),
            attempt.clone(),
            unwatched::seen(named.facts()),
        ));
    }
    let running = open
        .iter()
        .filter(|(_, _, seen)| *seen == Seen::Running)
        .map(|(_, attempt, _)| engine.stop(&attempt.container_id, STOP_SECONDS));
    let _ = futures_util::future::join_all(running).await;
    for (trial, attempt, seen) in open {
        let trial_dir = dir.join(&trial);
        let recorded = match seen {
            Seen::Gone => unwatched::recorded_end(host, &trial_dir, &attempt),
            _ => None,
        };
        let end = match seen.end(recorded, now_ms()) {
            Some(end) => end,
            // Still running: stopped here (its exit code is the stop's, not its own).
            None => AttemptEnd {
                exit_code: engine.wait(&attempt.container_id).await.ok(),
                stopped: true,
                finished_ms: now_ms(),
            },
        };
        notes.push(match seen {
            Seen::Running => format!("{trial}: stopped; it runs again when the sweep goes on"),
            Seen::Ended { code: 0, .. } => {
                format!("{trial}: done while no tfimg watched it (exit 0); its result is kept")
            }
            Seen::Ended { code, .. } if end.stopped => format!(
                "{trial}: killed while no tfimg watched it (exit {code}); it runs again without using a retry"
            ),
            Seen::Ended { code, .. } => {
                format!("{trial}: failed while no tfimg watched it (exit {code})")
            }
            Seen::NeverStarted => {
                format!("{trial}: its container was made but never started; it runs again")
            }
            Seen::Gone if recorded.is_some() => format!(
                "{trial}: its container `{}` is gone; its end is kept as its `status.json` recorded it",
                attempt.container
            ),
            Seen::Gone => format!(
                "{trial}: its container `{}` is gone; it counts as failed",
                attempt.container
            ),
        });
        if matches!(seen, Seen::Running | Seen::Ended { .. }) {
            let id = &attempt.container_id;
            super::attempt::keep_logs(session, &trial_dir, id).await;
            if engine.tunnels_ports() {
                let back = super::remote::bring_back_folder(session, id, &trial_dir, &trial);
                notes.extend(back.await);
            }
        }
        append(&Event::TrialFinished {
            trial: trial.clone(),
            attempt: attempt.number,
            exit_code: end.exit_code,
            stopped: end.stopped,
            time_ms: end.finished_ms,
        })?;
        let ended = Attempt {
            end: Some(end),
            ..attempt
        };
        super::attempt::write_status(host, &trial_dir, &trial, &ended)?;
    }
    // Every container of the sweep goes: the ones just recorded, and any no attempt owns.
    let mut containers = Vec::new();
    for container in engine
        .containers_with_label(&sweep.container_filter())
        .await?
    {
        engine.remove_container(&container.id, true).await?;
        containers.push(container.name);
    }
    let event = Event::SweepStopped {
        reason: StopReason::Stopped,
        time_ms: now_ms(),
    };
    append(&event)?;
    Ok(Stopped::Here { containers, notes })
}
