//! Going on with a sweep: one run at a time (a lock per sweep folder), the journal read
//! back (a torn last line cut, a changed sweep file refused with what changed), and what
//! became of each trial that was running when the last run ended: still running (watch
//! it again), ended while no tfimg watched (keep its logs and learn its exit code; a
//! kill by signal, as a daemon restart or a reboot gives, is not the trial's failure),
//! or gone. Containers of the sweep that no journal line owns are removed.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::{folder, Note, Runner, Watched, Watching};
use crate::engine::Engine;
use crate::host::{Host, LockAttempt};
use crate::input::InputError;
use crate::sweep::journal::{self, Repair, Replay, TrialHistory};
use crate::sweep::schedule::{Exit, Restored};
use crate::sweep::Sweep;

/// The name of the lock that keeps one run per sweep folder (in tfimg's data folder).
pub fn lock_name(output: &Path) -> String {
    let digest = Sha256::digest(output.to_string_lossy().as_bytes());
    let hex: String = digest
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sweep-{hex}")
}

/// Takes the sweep's lock: held until dropped; another run of it is refused.
pub(super) fn lock(
    host: &impl Host,
    sweep: &Sweep,
) -> Result<Option<Box<dyn std::any::Any + Send>>, InputError> {
    match host.try_lock(&lock_name(&sweep.output), false) {
        LockAttempt::Held(lock) => Ok(Some(lock)),
        LockAttempt::Unavailable => Ok(None),
        LockAttempt::Busy => Err(InputError::new(
            format!(
                "sweep `{}` is already running (its folder is `{}`)",
                sweep.name,
                sweep.output.display()
            ),
            format!(
                "follow it with `tfimg sweep status {0}`, or stop it with `tfimg sweep stop {0}`",
                sweep.output.display()
            ),
        )),
    }
}

/// The sweep's journal replayed (empty for a new sweep), its torn end repaired; a sweep
/// file that changed since the journal began is refused.
pub(super) fn open_journal(
    host: &impl Host,
    sweep: &Sweep,
    resume_only: bool,
) -> anyhow::Result<Replay> {
    let path = sweep.journal_path();
    let bytes = match host.read_file(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            if resume_only {
                return Err(InputError::new(
                    format!(
                        "`--resume`: sweep `{}` has not run yet (no journal at `{}`)",
                        sweep.name,
                        path.display()
                    ),
                    "drop `--resume` to start it",
                )
                .into());
            }
            return Ok(Replay::default());
        }
        Err(error) => return Err(folder_error(sweep, &error).into()),
    };
    let text = String::from_utf8_lossy(&bytes);
    let parsed = journal::parse(&text).map_err(|error| folder::journal_error(&path, &error))?;
    match parsed.repair {
        Some(Repair::TruncateTo(length)) => host.write_file(&path, &bytes[..length])?,
        Some(Repair::AddNewline) => host.append_file(&path, b"\n", true)?,
        None => {}
    }
    let replay = journal::replay(&parsed.events);
    if let Some(began) = &replay.fingerprint {
        let changes = began.changes(&sweep.fingerprint());
        if !changes.is_empty() {
            return Err(journal::changed_error(&path.display().to_string(), &changes).into());
        }
    }
    Ok(replay)
}

/// The sweep's folder cannot be read or written.
pub(super) fn folder_error(sweep: &Sweep, error: &std::io::Error) -> InputError {
    InputError::new(
        format!(
            "cannot write the sweep's folder `{}`: {error}",
            sweep.output.display()
        ),
        "choose a folder you can write with `output:` in the sweep file",
    )
}

impl<'a, E: Engine, H: Host> Runner<'a, E, H> {
    /// Applies the journal: finished trials stay finished, running ones are watched again
    /// or their end learned, containers no journal line owns are removed.
    pub(super) async fn restore(
        &mut self,
        replay: &Replay,
        watching: &mut Watching<'a>,
    ) -> anyhow::Result<()> {
        let (mut done, mut failed, mut reattached) = (0, 0, 0);
        for trial in 0..self.trials.len() {
            let history = replay.trial(&self.trials[trial].id);
            match self.scheduler.restore(trial, &history) {
                Restored::Done => done += 1,
                Restored::Failed => failed += 1,
                Restored::Reattach { .. } => {
                    if self.reattach(trial, &history, watching).await? {
                        reattached += 1;
                    }
                }
                Restored::NoSlot => self.stop_off_pool(trial, &history).await?,
                Restored::Queued => {}
            }
        }
        self.remove_strays().await?;
        if replay.runs > 0 {
            (self.notify)(Note::Resumed {
                done,
                failed,
                reattached,
            });
        }
        Ok(())
    }

    /// A trial the journal says is running: watched again when its container still runs
    /// (true), else its end recorded as it happened while no tfimg watched.
    async fn reattach(
        &mut self,
        trial: usize,
        history: &TrialHistory,
        watching: &mut Watching<'a>,
    ) -> anyhow::Result<bool> {
        let attempt = history.last().expect("a running trial has an attempt");
        self.watched.insert(
            trial,
            Watched {
                attempt: attempt.number,
                container: attempt.container.clone(),
                container_id: attempt.container_id.clone(),
                gpus: attempt.gpus.clone(),
                started_ms: attempt.started_ms,
                stopping: false,
            },
        );
        let facts = self.engine.container(&attempt.container_id).await?;
        let id = &self.trials[trial].id;
        let Some(facts) = facts else {
            (self.notify)(Note::Said(format!(
                "{id}: its container `{}` is gone; it counts as failed",
                attempt.container
            )));
            self.finish(trial, Exit::Unknown, None, true).await?;
            return Ok(false);
        };
        if facts.state == "running" || facts.state == "restarting" {
            watching.push(self.watch(trial, facts.id));
            return Ok(true);
        }
        super::attempt::keep_logs(self.engine, self.host, &self.trial_dir(trial), &facts.id).await;
        let code = facts.exit_code.unwrap_or(-1);
        let exit = match code {
            0 => Exit::Code(0),
            // Killed by a signal (a daemon restart, a reboot, the OOM killer, `docker
            // kill`) while no tfimg watched: run again, using none of its retries.
            code if code >= 128 => {
                (self.notify)(Note::Said(format!(
                    "{id}: killed while no tfimg watched it (exit {code}); it runs again without using a retry"
                )));
                Exit::Stopped
            }
            code => Exit::Code(code),
        };
        self.finish(trial, exit, Some(code), true).await?;
        Ok(false)
    }

    /// A running trial whose GPUs no slot of the pool has any more (the pool changed):
    /// stopped, and queued again.
    async fn stop_off_pool(&mut self, trial: usize, history: &TrialHistory) -> anyhow::Result<()> {
        let attempt = history.last().expect("a running trial has an attempt");
        let _ = self
            .engine
            .stop(&attempt.container_id, super::STOP_SECONDS)
            .await;
        let _ = self
            .engine
            .remove_container(&attempt.container_id, true)
            .await;
        self.journal(&journal::Event::TrialFinished {
            trial: self.trials[trial].id.clone(),
            attempt: attempt.number,
            exit_code: None,
            stopped: true,
            time_ms: self.now_ms(),
        })?;
        (self.notify)(Note::Said(format!(
            "{}: its GPUs ({}) are no longer in the pool; stopped, it runs again",
            self.trials[trial].id,
            attempt.gpus.join(",")
        )));
        Ok(())
    }

    /// Containers of this sweep that no running attempt owns (created by a run killed
    /// before its journal line, or left by a failed removal): removed.
    async fn remove_strays(&self) -> anyhow::Result<()> {
        let filter = self.run.sweep.container_filter();
        for container in self.engine.containers_with_label(&filter).await? {
            let owned = self
                .watched
                .values()
                .any(|watched| watched.container_id == container.id);
            if !owned {
                self.engine.remove_container(&container.id, true).await?;
                (self.notify)(Note::Said(format!(
                    "removed `{}`, a container of this sweep no trial owns",
                    container.name
                )));
            }
        }
        Ok(())
    }
}
