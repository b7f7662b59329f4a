//! Going on with a sweep: one run at a time (a lock per sweep folder), the journal read
//! back (a torn last line cut, a changed sweep file refused with what changed), and what
//! became of each trial that was running when the last run ended (`unwatched`): still
//! running (watch it again), ended while no tfimg watched (keep its logs and its result;
//! a kill by signal, as a daemon restart or a reboot gives, is not the trial's failure),
//! never started, or gone. A container the last run made just before it was killed,
//! before its start reached the journal, is adopted; other containers of the sweep that
//! no journal line owns are removed.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::unwatched::{self, Named, Seen};
use super::{folder, Note, Runner, Watched, Watching};
use crate::engine::Engine;
use crate::host::prelude::{Confined, FileWrites, State};
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
    host: &impl State,
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
    host: &(impl FileWrites + Confined),
    sweep: &Sweep,
    resume_only: bool,
) -> anyhow::Result<Replay> {
    let path = sweep.journal_path();
    let bytes = match folder::journal_bytes(host, &sweep.output) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
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
    /// or their end learned, containers no journal line owns are adopted or removed.
    pub(super) async fn restore(
        &mut self,
        replay: &Replay,
        watching: &mut Watching<'a>,
    ) -> anyhow::Result<()> {
        let replay = &self.adopt(replay).await?;
        let (mut done, mut failed, mut reattached, mut stopped_early) = (0, 0, 0, 0);
        for trial in 0..self.trials.len() {
            let history = replay.trial(&self.trials[trial].id);
            self.restore_judgements(trial, &history);
            match self.scheduler.restore(trial, &history) {
                Restored::Done => done += 1,
                Restored::Failed => failed += 1,
                Restored::StoppedEarly => {
                    stopped_early += 1;
                    self.end_stopped_early(trial, &history).await?;
                }
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
                stopped_early,
            });
        }
        Ok(())
    }

    /// Containers the last run made just before it was killed, before their start reached
    /// the journal: their start is written now, so they are watched again or their result
    /// kept like any other attempt's. The journal's `replay` with them.
    async fn adopt(&self, replay: &Replay) -> anyhow::Result<Replay> {
        let mut replay = replay.clone();
        let events = unwatched::adoptions(
            self.engine,
            &self.run.sweep.name,
            &self.trials,
            &replay,
            Some(&self.image_id),
            self.now_ms(),
        )
        .await?;
        for event in events {
            self.journal(&event)?;
            if let journal::Event::TrialStarted {
                trial, container, ..
            } = &event
            {
                (self.notify)(Note::Said(format!(
                    "{trial}: its container `{container}` was made just before the last run ended, before the journal had it; it is taken over"
                )));
            }
            replay.apply(&event);
        }
        Ok(replay)
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
                early: None,
                timed_out: false,
            },
        );
        let id = &self.trials[trial].id;
        let named =
            unwatched::named(self.engine, &self.run.sweep.name, id, &attempt.container_id).await?;
        if let Some(note) = named.stranger_note(id) {
            (self.notify)(Note::Said(note));
        }
        match unwatched::seen(named.facts()) {
            Seen::Running => {
                let facts = named.facts().expect("a running container was found");
                watching.push(self.watch(trial, facts.id.clone()));
                return Ok(true);
            }
            Seen::Ended { code, finished_ms } => {
                let dir = self.trial_dir(trial);
                super::attempt::keep_logs(self.session, &dir, &attempt.container_id).await;
                let exit = unwatched::exit_of(code);
                if exit == Exit::Stopped {
                    (self.notify)(Note::Said(format!(
                        "{id}: killed while no tfimg watched it (exit {code}); it runs again without using a retry"
                    )));
                }
                self.finish(trial, exit, Some(code), true, finished_ms)
                    .await?;
            }
            Seen::NeverStarted => {
                (self.notify)(Note::Said(format!(
                    "{id}: its container `{}` was made but never started; it runs again",
                    attempt.container
                )));
                self.finish(trial, Exit::Stopped, None, true, None).await?;
            }
            Seen::Gone => {
                let recorded = unwatched::recorded_end(self.host, &self.trial_dir(trial), attempt);
                match recorded {
                    Some(end) => {
                        let exit = match (end.stopped, end.exit_code) {
                            (true, _) => Exit::Stopped,
                            (false, Some(code)) => Exit::Code(code),
                            (false, None) => Exit::Unknown,
                        };
                        self.finish(trial, exit, end.exit_code, true, Some(end.finished_ms))
                            .await?;
                    }
                    None => {
                        (self.notify)(Note::Said(format!(
                            "{id}: its container `{}` is gone; it counts as failed",
                            attempt.container
                        )));
                        self.finish(trial, Exit::Unknown, None, true, None).await?;
                    }
                }
            }
        }
        Ok(false)
    }

    /// What the `early_stop` rule judged of `trial` in earlier runs, and what it reported:
    /// nothing is judged twice, and the median rule compares with it.
    fn restore_judgements(&mut self, trial: usize, history: &TrialHistory) {
        let Some(judge) = self.judge.as_mut() else {
            return;
        };
        let id = &self.trials[trial].id;
        for (_, judgement) in &history.judgements {
            judge.recorded(id, judgement);
        }
        if !history.attempts.is_empty() {
            let points = super::folder::trial_points(self.host, &self.run.sweep.trial_dir(id));
            judge.seen(id, &points);
        }
    }

    /// A trial the `early_stop` rule stopped, whose last run was killed before its end
    /// reached the journal: its container is stopped and removed, its end recorded.
    async fn end_stopped_early(
        &mut self,
        trial: usize,
        history: &TrialHistory,
    ) -> anyhow::Result<()> {
        let Some(attempt) = history.last().filter(|attempt| attempt.end.is_none()) else {
            return Ok(());
        };
        // Its logs are taken from the container while it is there (they were written
        // live only while a tfimg watched).
        let id = &self.trials[trial].id;
        let named = unwatched::named(self.engine, &self.run.sweep.name, id, &attempt.container_id);
        if let Ok(Named::Trial(_)) = named.await {
            let _ = self
                .engine
                .stop(&attempt.container_id, super::STOP_SECONDS)
                .await;
            let dir = self.trial_dir(trial);
            super::attempt::keep_logs(self.session, &dir, &attempt.container_id).await;
            let _ = self
                .engine
                .remove_container(&attempt.container_id, true)
                .await;
        }
        self.journal_stopped(trial, attempt.number)?;
        Ok(())
    }

    /// Records that tfimg stopped `attempt` of `trial` (no exit code: it never saw one).
    fn journal_stopped(&self, trial: usize, attempt: u32) -> anyhow::Result<()> {
        self.journal(&journal::Event::TrialFinished {
            trial: self.trials[trial].id.clone(),
            attempt,
            exit_code: None,
            stopped: true,
            time_ms: self.now_ms(),
        })
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
        self.journal_stopped(trial, attempt.number)?;
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
