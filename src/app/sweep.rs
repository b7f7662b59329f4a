//! `tfimg sweep FILE`: many trials of one command, queued first in first out onto the
//! slots of a GPU pool (or CPU slots; `plan` lays them out on the GPUs of the engine's
//! host), each trial a container started by THE launcher
//! from one image, its GPUs given by device id. Every start and end goes to the sweep's
//! journal first, so running the sweep again after Ctrl-C, a killed terminal, a daemon
//! restart or a reboot reattaches to trials still running, keeps finished ones and reruns
//! the rest. Ctrl-C (and `tfimg sweep stop`) stops and removes every trial container and
//! keeps every result. `folder` reads a sweep's folder back for status, results and the
//! report. `file` tells `tfimg sweep FILE`'s story around the run (the file loaded, the
//! slots planned, the dry run, the image built once, `-d`); `export` writes the sweep's
//! Kubernetes manifests and its HTML report through the host.
//!
//! The story of one run: take the sweep's lock; read its journal (refusing a changed
//! file); keep a copy of the file; learn what became of trials that ran while tfimg was
//! away; then start trials while slots are free, and on each end write its status, keep
//! its logs, remove its container and let the scheduler decide (done, retry, failed).

pub mod folder;
pub mod unwatched;

mod attempt;
mod export;
mod file;
mod learn;
mod plan;
mod remote;
mod resume;
mod stop;

pub use attempt::now_ms;
pub use export::{k8s_export, report, K8sRequest};
pub use file::{dry_run, load, start, Ended, Planned, StartOptions, Started};
pub use plan::{check_pool, images_to_probe, plan_slots};
pub use remote::check_engine;
pub use resume::lock_name;
pub use stop::{stop, Stopped};
pub use unwatched::look_named;
// The run's notes and end are plain data of the pure core, told as text there.
pub use crate::sweep::progress::{Counts, Finished, Note};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use futures_util::stream::FuturesUnordered;
use futures_util::{Future, StreamExt};

use crate::app::launch::Target;
use crate::app::session::Session;
use crate::app::Interrupted;
use crate::engine::{Engine, EngineError};
use crate::host::{Host, NvidiaFacts};
use crate::sweep::early_stop::{Judge, Judgement};
use crate::sweep::journal::{Event, StopReason};
use crate::sweep::metrics::{self, FirstReports};
use crate::sweep::schedule::{Exit, Halt, Scheduler, Slot};
use crate::sweep::{Sweep, Trial, FILE_COPY};

/// How long a trial gets to stop after SIGTERM before it is killed.
pub const STOP_SECONDS: i32 = 5;

/// How often the live view is brought up to date, timeouts and `sweep stop` looked for.
const TICK: Duration = Duration::from_secs(1);

/// How often running trials' reports are looked at (a file's length, read again only
/// when it grew): each new report is judged (`early_stop`) within this of its writing,
/// so a trial with short epochs is not let run several past its stop.
const REPORT_TICK: Duration = Duration::from_millis(100);

/// The file that asks a running sweep to stop (`tfimg sweep stop`), in its folder.
pub const STOP_REQUEST: &str = "stop-requested";

/// One run of a sweep: what the command checked and built.
#[derive(Debug, Clone)]
pub struct SweepRun {
    pub sweep: Sweep,
    /// The sweep file as the user named it (for hints).
    pub file: String,
    /// The sweep file's bytes, kept in the sweep's folder (`FILE_COPY`).
    pub file_bytes: Vec<u8>,
    /// The image every trial runs (built once).
    pub target: Target,
    pub slots: Vec<Slot>,
    /// The NVIDIA facts of the engine's host the slots were planned on (`plan_slots`):
    /// every trial's launch checks its GPUs against them instead of asking again.
    pub nvidia: Option<NvidiaFacts>,
    /// Host uid/gid the trials run as.
    pub ids: Option<(u32, u32)>,
    /// `--resume`: only go on with a sweep its journal records.
    pub resume_only: bool,
}

/// A trial container this run watches.
#[derive(Debug, Clone)]
struct Watched {
    attempt: u32,
    container: String,
    container_id: String,
    gpus: Vec<String>,
    started_ms: u64,
    /// tfimg stopped it: its end is not the trial's failure.
    stopping: bool,
    /// The `early_stop` rule stopped it, with why.
    early: Option<Judgement>,
    /// The sweep's `timeout` stopped it: its end is a failure.
    timed_out: bool,
}

/// The end of a watched attempt: the trial's index and its exit code (or why none).
type Ending = (usize, Result<i64, EngineError>);
type Watching<'a> = FuturesUnordered<Pin<Box<dyn Future<Output = Ending> + 'a>>>;

/// One run's state between the engine, the host, the scheduler and the journal.
struct Runner<'a, E: Engine, H: Host> {
    /// The session the sweep runs in (its engine and host are below, for short).
    session: Session<'a, E, H>,
    engine: &'a E,
    host: &'a H,
    run: &'a SweepRun,
    trials: Vec<Trial>,
    scheduler: Scheduler,
    watched: BTreeMap<usize, Watched>,
    /// The image's id, for status files.
    image_id: String,
    /// How long each finished attempt took, for the ETA.
    durations_ms: Vec<u64>,
    /// The last progress told (it is told again only when it changed).
    last_progress: Option<Counts>,
    notify: &'a dyn Fn(Note),
    /// The engine runs on another host: trial folders are copied, not mounted (`remote`).
    remote: bool,
    /// When running trials' metrics were last fetched from a remote engine.
    metrics_fetched_ms: u64,
    /// The `early_stop` rule's judge, when the sweep has one.
    judge: Option<Judge>,
    /// The objective value of each ended trial `tpe:` learns from (`None`: it reported
    /// none), by trial index: read once (`learn`).
    ended_values: BTreeMap<usize, Option<f64>>,
    /// Who asked the run to stop (`tfimg sweep stop`), as the request says.
    stopped_by: Option<String>,
    /// When the work of each `TICK` was last done.
    ticked_ms: u64,
    /// Each running trial's reports so far, read on as its files grow, by trial index.
    reports: BTreeMap<usize, folder::Reports>,
    /// A trial's first report lacked the objective's metric but had one named like it,
    /// and that was said; or a trial reported the metric. Either way, nothing more to say.
    names_checked: bool,
}

/// Runs (or goes on with) the sweep until every trial ended, it was stopped, or
/// `max_failed` trials failed; Ctrl-C stops and removes its containers and returns
/// `Interrupted`.
pub async fn run<E: Engine, H: Host>(
    session: Session<'_, E, H>,
    run: &SweepRun,
    notify: &dyn Fn(Note),
) -> anyhow::Result<Finished> {
    let Session { engine, host, .. } = session;
    let sweep = &run.sweep;
    folder::trusted(host, &sweep.output, true)?;
    let _lock = resume::lock(host, sweep)?;
    let replay = resume::open_journal(host, sweep, run.resume_only)?;
    host.write_file(&sweep.output.join(FILE_COPY), &run.file_bytes)
        .map_err(|error| resume::folder_error(sweep, &error))?;
    folder::remember(host, &sweep.name, &sweep.output);
    host.remove_file(&sweep.output.join(STOP_REQUEST))?;
    let image_id = match engine.image(&run.target.image).await? {
        Some(image) => image.id,
        None => run.target.image.clone(),
    };
    let trials = sweep.trials_known(&replay);
    let count = sweep.search.count();
    let mut runner = Runner {
        session,
        engine,
        host,
        run,
        scheduler: Scheduler::new(&run.slots, count, sweep.retries, sweep.max_failed),
        trials,
        watched: BTreeMap::new(),
        image_id,
        durations_ms: Vec::new(),
        last_progress: None,
        notify,
        remote: engine.tunnels_ports(),
        metrics_fetched_ms: 0,
        judge: sweep
            .early_stop
            .as_ref()
            .zip(sweep.objective.as_ref())
            .map(|(early_stop, objective)| Judge::new(early_stop.rule, objective)),
        ended_values: BTreeMap::new(),
        stopped_by: None,
        ticked_ms: 0,
        reports: BTreeMap::new(),
        names_checked: false,
    };
    runner.journal(&Event::SweepStarted {
        sweep: sweep.name.clone(),
        trials: count,
        fingerprint: sweep.fingerprint(),
        time_ms: runner.now_ms(),
    })?;
    let mut watching: Watching<'_> = FuturesUnordered::new();
    runner.restore(&replay, &mut watching).await?;
    let reason = runner.drive(&mut watching).await?;
    runner.journal(&Event::SweepStopped {
        reason,
        time_ms: runner.now_ms(),
    })?;
    let counts = runner.counts();
    if reason == StopReason::Interrupted {
        return Err(Interrupted {
            what: format!(
                "sweep `{}` was stopped and its trial containers removed; {} of {} trials are done, and `tfimg sweep {}` goes on with the rest",
                sweep.name,
                counts.done,
                counts.total,
                run.file
            ),
        }
        .into());
    }
    Ok(Finished {
        reason,
        counts,
        stopped_by: runner.stopped_by.take(),
        file: run.file.clone(),
    })
}

impl<'a, E: Engine, H: Host> Runner<'a, E, H> {
    /// Starts trials while slots are free and handles each end, until nothing runs and
    /// nothing more will start; why it ended.
    async fn drive(&mut self, watching: &mut Watching<'a>) -> anyhow::Result<StopReason> {
        let interrupted = self.host.interrupted();
        tokio::pin!(interrupted);
        let mut reason = None;
        let mut failure: Option<anyhow::Error> = None;
        loop {
            while let Some(start) = self.scheduler.next_start() {
                match self.start(start).await {
                    Ok(watch) => watching.push(watch),
                    Err(error) => {
                        // Nothing more starts; what runs is stopped, then the error ends it.
                        self.scheduler.stop();
                        self.stop_all().await;
                        failure.get_or_insert(error);
                    }
                }
            }
            // After an error, attempts the daemon never reported stay open in the journal
            // (the next run learns how they ended).
            if watching.is_empty() && (self.scheduler.is_finished() || failure.is_some()) {
                break;
            }
            tokio::select! {
                biased;
                Some((trial, ended)) = watching.next() => {
                    if let Err(error) = self.ended(trial, ended).await {
                        self.scheduler.stop();
                        self.stop_all().await;
                        failure.get_or_insert(error);
                    }
                    if self.scheduler.halted() == Some(Halt::MaxFailed) && reason.is_none() {
                        reason = Some(StopReason::MaxFailed);
                        self.stop_all().await;
                    }
                }
                () = &mut interrupted, if reason.is_none() => {
                    reason = Some(StopReason::Interrupted);
                    self.scheduler.stop();
                    self.stop_all().await;
                }
                () = self.host.sleep(REPORT_TICK) => {
                    let now = self.now_ms();
                    let tick = now.saturating_sub(self.ticked_ms) >= TICK.as_millis() as u64;
                    if tick {
                        self.ticked_ms = now;
                        if reason.is_none() && self.stop_requested() {
                            reason = Some(StopReason::Stopped);
                            self.stopped_by = self.stop_asker();
                            self.scheduler.stop();
                            self.stop_all().await;
                        }
                        self.fetch_metrics().await;
                    }
                    let checked = match tick {
                        true => self.time_out_running().await,
                        false => Ok(()),
                    };
                    let checked = match checked {
                        Ok(()) => self.judge_running().await,
                        Err(error) => Err(error),
                    };
                    if let Err(error) = checked {
                        self.scheduler.stop();
                        self.stop_all().await;
                        failure.get_or_insert(error);
                    }
                    if tick {
                        if !self.looks() {
                            // The live view's values: read on here when nothing judges.
                            self.reported_more();
                        }
                        let counts = self.counts();
                        if self.last_progress.as_ref() != Some(&counts) {
                            (self.notify)(Note::Progress(counts.clone()));
                            self.last_progress = Some(counts);
                        }
                    }
                }
            }
        }
        if let Some(error) = failure {
            return Err(error);
        }
        Ok(reason.unwrap_or(StopReason::Finished))
    }

    /// Asks every watched trial to stop (its end then comes as usual, marked stopped).
    async fn stop_all(&mut self) {
        let stopping: Vec<String> = self
            .watched
            .values_mut()
            .filter(|watched| !watched.stopping)
            .map(|watched| {
                watched.stopping = true;
                watched.container_id.clone()
            })
            .collect();
        let stops = stopping.iter().map(|id| self.engine.stop(id, STOP_SECONDS));
        let _ = futures_util::future::join_all(stops).await;
    }

    /// Stops every running attempt past the sweep's `timeout`; each is journaled first.
    async fn time_out_running(&mut self) -> anyhow::Result<()> {
        let Some(timeout) = self.run.sweep.timeout else {
            return Ok(());
        };
        let now = self.now_ms();
        let limit = timeout.as_millis() as u64;
        let due: Vec<(usize, u32, u64, String)> = self
            .watched
            .iter()
            .filter(|(_, watched)| !watched.stopping)
            .filter(|(_, watched)| now.saturating_sub(watched.started_ms) > limit)
            .map(|(trial, watched)| {
                let ran = now.saturating_sub(watched.started_ms);
                (*trial, watched.attempt, ran, watched.container_id.clone())
            })
            .collect();
        for (trial, attempt, after_ms, container) in due {
            let id = self.trials[trial].id.clone();
            self.journal(&Event::TrialTimedOut {
                trial: id.clone(),
                attempt,
                after_ms,
                time_ms: now,
            })?;
            if let Some(watched) = self.watched.get_mut(&trial) {
                watched.stopping = true;
                watched.timed_out = true;
            }
            (self.notify)(Note::TimedOut {
                trial: id,
                after_ms,
            });
            let _ = self.engine.stop(&container, STOP_SECONDS).await;
        }
        Ok(())
    }

    /// Looks at what each running trial reported since it was last looked at: its first
    /// report is checked for the objective's metric, and every report judged
    /// (`early_stop`). Each judgement is journaled before anything is done about it; a
    /// stop then stops the trial's container, whose end comes as usual and counts as
    /// stopped early.
    async fn judge_running(&mut self) -> anyhow::Result<()> {
        if !self.looks() {
            return Ok(());
        }
        let mut judge = self.judge.take();
        let judged = self.judge_with(judge.as_mut()).await;
        self.judge = judge;
        judged
    }

    /// Whether each report tick looks at the running trials' reports: to judge them, or to
    /// check a first report's metric names.
    fn looks(&self) -> bool {
        self.run.sweep.objective.is_some() && (self.judge.is_some() || !self.names_checked)
    }

    /// The running trials' reports that came since they were last read (each read takes
    /// only what its files gained), by trial index.
    fn reported_more(&mut self) -> Vec<(usize, folder::NewReports)> {
        let running: Vec<usize> = self
            .watched
            .iter()
            .filter(|(_, watched)| !watched.stopping)
            .map(|(trial, _)| *trial)
            .collect();
        self.reports.retain(|trial, _| running.contains(trial));
        let objective = self.run.sweep.objective.as_ref();
        running
            .into_iter()
            .filter_map(|trial| {
                let dir = self.trial_dir(trial);
                let reports = self.reports.entry(trial).or_default();
                Some((trial, reports.read_more(self.host, &dir, objective)?))
            })
            .collect()
    }

    /// Says, once, a trial whose first report has no value of the objective's metric but
    /// one named like it (`val_acc` for `val_accuracy`): a misspelling, in the file or
    /// the script (`points`: the reports that came since the last look). A report of
    /// other metrics only (a training loss each step, the objective each epoch) is not
    /// one; a sweep whose trials never report the metric at all is told so when it ends
    /// (`SweepFolder::objective_warning`).
    fn check_reported_names(&mut self, trial: usize, points: &[crate::sweep::metrics::Point]) {
        let Some(objective) = &self.run.sweep.objective else {
            return;
        };
        if self.names_checked || points.is_empty() {
            return;
        }
        match metrics::first_reports(&objective.metric, points) {
            FirstReports::Objective => self.names_checked = true,
            FirstReports::Misspelled(reported) => {
                self.names_checked = true;
                (self.notify)(Note::ObjectiveUnreported {
                    trial: self.trials[trial].id.clone(),
                    metric: objective.metric.clone(),
                    reported,
                });
            }
            FirstReports::Other => {}
        }
    }

    async fn judge_with(&mut self, mut judge: Option<&mut Judge>) -> anyhow::Result<()> {
        for (trial, new) in self.reported_more() {
            self.judge_trial(trial, &new, judge.as_deref_mut()).await?;
        }
        Ok(())
    }

    /// The running `trial`'s new reports checked and judged; a judgement that stops it is
    /// journaled, then acted on.
    async fn judge_trial(
        &mut self,
        trial: usize,
        new: &folder::NewReports,
        judge: Option<&mut Judge>,
    ) -> anyhow::Result<()> {
        self.check_reported_names(trial, &new.points);
        let Some(judge) = judge else {
            return Ok(());
        };
        let (id, index) = (self.trials[trial].id.clone(), self.trials[trial].index);
        let attempt = self.watched[&trial].attempt;
        for judgement in judge.judge_reports(&id, index, new.first, &new.points) {
            self.journal(&Event::TrialJudged {
                trial: id.clone(),
                attempt,
                judgement,
                time_ms: self.now_ms(),
            })?;
            if !judgement.stop {
                continue;
            }
            let Some(watched) = self.watched.get_mut(&trial) else {
                continue;
            };
            watched.stopping = true;
            watched.early = Some(judgement);
            let container = watched.container_id.clone();
            (self.notify)(Note::StoppedEarly {
                trial: id.clone(),
                reason: judgement.reason(),
            });
            let _ = self.engine.stop(&container, STOP_SECONDS).await;
        }
        Ok(())
    }

    /// Whether `tfimg sweep stop` asked this run to stop.
    fn stop_requested(&self) -> bool {
        self.host.exists(&self.run.sweep.output.join(STOP_REQUEST))
    }

    /// Who the stop request says asked (`ada (uid 1000) at ...`): its first line, at
    /// most 200 printable characters of it (anyone who can write the sweep's folder
    /// wrote it; it is only ever shown).
    fn stop_asker(&self) -> Option<String> {
        let bytes = self
            .host
            .read_at_most(&self.run.sweep.output.join(STOP_REQUEST), 1024)
            .ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let line = text.lines().next().unwrap_or_default().trim();
        let line: String = crate::input::printable(line).chars().take(200).collect();
        (!line.is_empty()).then_some(line)
    }

    /// A watched attempt ended: decides what its end means and records it.
    async fn ended(&mut self, trial: usize, ended: Result<i64, EngineError>) -> anyhow::Result<()> {
        let Some(watched) = self.watched.get(&trial) else {
            return Ok(());
        };
        let (exit, code) = match ended {
            Ok(code) if watched.early.is_some() => (Exit::StoppedEarly, Some(code)),
            // Past its timeout: a failure (retried under `retries`), unless it ended well.
            Ok(code) if watched.timed_out => (Exit::Code(code), Some(code)),
            Ok(code) if watched.stopping => (Exit::Stopped, Some(code)),
            // Killed by a signal: by the daemon on its way down (a restart), which is not
            // the trial's failure; the sweep ends and the next run reruns it.
            Ok(code) if code >= 128 => {
                self.host.sleep(Duration::from_secs(2)).await;
                self.engine.still_there().await?;
                (Exit::Code(code), Some(code))
            }
            Ok(code) => (Exit::Code(code), Some(code)),
            Err(error @ (EngineError::Unreachable { .. } | EngineError::Timeout { .. })) => {
                return Err(error.into())
            }
            // A stream cut by a daemon going away: the sweep waits for it to come back
            // (`tfimg sweep FILE` again) instead of failing the trial.
            Err(error) => match self.engine.still_there().await {
                Err(gone) => return Err(anyhow::Error::from(gone).context(error.to_string())),
                // The container went away under it (removed by hand).
                Ok(()) => (Exit::Unknown, None),
            },
        };
        self.finish(trial, exit, code, false, None).await
    }

    /// Where every trial stands now.
    fn counts(&self) -> Counts {
        attempt::counts(self)
    }

    fn now_ms(&self) -> u64 {
        attempt::now_ms(self.host)
    }

    /// Appends `event` to the journal, flushed to the disk.
    fn journal(&self, event: &Event) -> anyhow::Result<()> {
        let path = self.run.sweep.journal_path();
        self.host
            .append_file(&path, event.line().as_bytes(), true)
            .map_err(|error| resume::folder_error(&self.run.sweep, &error).into())
    }

    fn trial_dir(&self, trial: usize) -> PathBuf {
        self.run.sweep.trial_dir(&self.trials[trial].id)
    }
}

#[cfg(test)]
mod remote_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod unwatched_tests;
