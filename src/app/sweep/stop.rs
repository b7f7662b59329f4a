//! `tfimg sweep stop`: a running sweep is asked to stop (it stops and removes its trial
//! containers itself and records that in its journal); a sweep whose tfimg is gone has
//! its containers stopped and removed here, their logs kept and their ends recorded.

use std::path::Path;
use std::time::Duration;

use super::{folder, STOP_REQUEST, STOP_SECONDS};
use crate::engine::Engine;
use crate::host::{Host, LockAttempt};
use crate::input::InputError;
use crate::sweep::journal::{Event, StopReason};

/// How long a running sweep gets to stop its trials.
const STOP_WAIT: Duration = Duration::from_secs(90);

/// What `stop` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// The running tfimg stopped its sweep.
    ByItsRun,
    /// No tfimg ran it; these trial containers were stopped and removed here.
    Here { containers: Vec<String> },
}

/// Stops the sweep in `dir`.
pub async fn stop(engine: &impl Engine, host: &impl Host, dir: &Path) -> anyhow::Result<Stopped> {
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
        // Asked once; the run looks for the request every second.
        if !host.exists(&request) {
            host.write_file(&request, b"")?;
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
    stop_here(engine, host, dir, &found).await
}

/// No tfimg runs the sweep: its containers stopped and removed, logs kept, ends recorded.
async fn stop_here(
    engine: &impl Engine,
    host: &impl Host,
    dir: &Path,
    found: &folder::SweepFolder,
) -> anyhow::Result<Stopped> {
    let now_ms = || super::attempt::now_ms(host);
    let journal = dir.join(crate::sweep::journal::JOURNAL_FILE);
    let mut containers = Vec::new();
    for container in engine
        .containers_with_label(&found.sweep.container_filter())
        .await?
    {
        let _ = engine.stop(&container.id, STOP_SECONDS).await;
        let open = found.trials.iter().find_map(|trial| {
            let history = found.replay.trial(&trial.id);
            let last = history.last()?;
            (last.end.is_none() && last.container_id == container.id)
                .then(|| (trial.id.clone(), last.number))
        });
        if let Some((trial, attempt)) = open {
            super::attempt::keep_logs(engine, host, &dir.join(&trial), &container.id).await;
            let exit_code = engine.wait(&container.id).await.ok();
            let event = Event::TrialFinished {
                trial,
                attempt,
                exit_code,
                stopped: true,
                time_ms: now_ms(),
            };
            host.append_file(&journal, event.line().as_bytes(), true)?;
        }
        engine.remove_container(&container.id, true).await?;
        containers.push(container.name);
    }
    let event = Event::SweepStopped {
        reason: StopReason::Stopped,
        time_ms: now_ms(),
    };
    host.append_file(&journal, event.line().as_bytes(), true)?;
    Ok(Stopped::Here { containers })
}
