//! One attempt of a trial: its folder made ready (an earlier attempt's set aside, its
//! params written), its launch request (the slot's GPUs by device id, its folder at
//! `TFIMG_TRIAL_DIR`, the sweep's labels), the container started by the launcher and
//! watched (its output into `stdout.log` and `stderr.log` as it comes, then its exit
//! code), and its end recorded: journal, `status.json`, container removed.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{folder, Counts, Ending, Note, Runner, SweepRun, Watched};
use crate::app::gpu_ledger::GpuLedger;
use crate::app::launch::{self, LaunchRequest};
use crate::app::session::Session;
use crate::engine::prelude::ContainerIo;
use crate::engine::{Engine, EngineError, OutputChunk};
use crate::host::prelude::{Clock, Confined, FileWrites, Files};
use crate::host::{Host, HostError};
use crate::input::InputError;
use crate::plan::gpus::{share, GpuMode, GpuSelection};
use crate::plan::mounts::{self, MountRequest};
use crate::plan::sync::SyncRequest;
use crate::plan::Resources;
use crate::sweep::journal::{Attempt, AttemptEnd, Event};
use crate::sweep::metrics::MetricsSummary;
use crate::sweep::schedule::{Exit, Outcome, Progress, Slot, Start};
use crate::sweep::trials::{self, PARAMS_FILE, STATUS_FILE, STDERR_FILE, STDOUT_FILE};
use crate::sweep::{Trial, TRIAL_DIR};

/// Output is written to the trial's logs at least this often (milliseconds) ...
const LOG_FLUSH_MS: u64 = 250;
/// ... or once this much is waiting.
const LOG_FLUSH_BYTES: usize = 64 * 1024;

impl<'a, E: Engine, H: Host> Runner<'a, E, H> {
    /// Starts an attempt the scheduler chose; the future that ends with it.
    pub(super) async fn start(
        &mut self,
        start: Start,
    ) -> anyhow::Result<std::pin::Pin<Box<dyn std::future::Future<Output = Ending> + 'a>>> {
        self.propose(start.trial)?;
        let (mut slot, mut claim) = self.free_slot(start.slot).await?;
        let trial = &self.trials[start.trial];
        let dir = self.trial_dir(start.trial);
        set_aside(self.host, &dir, start.attempt)?;
        // The trial's folder belongs to the user its container runs as (root's only when
        // asked), and is the container's to write: tfimg works in it only through the
        // confined mechanism, and what it writes there takes the folder's owner.
        if let Some(warning) = self.host.make_folder(&dir, true, self.run.ids)? {
            (self.notify)(Note::Warned(warning.text().to_string()));
        }
        self.host
            .write_confined(&dir, PARAMS_FILE, trial.params_json().as_bytes())?;
        let mut placings = 0;
        let launched = loop {
            let trial = &self.trials[start.trial];
            let mut request = request(self.run, trial, &slot, start.attempt, &dir, self.remote)?;
            if claim {
                let sweep = self.run.sweep.name.clone();
                request.claim_beside = Some((crate::labels::SWEEP.to_string(), sweep));
            }
            let session = self.session;
            let prepared = launch::Launcher::of(session)
                .prepare(request, self.run.nvidia.clone())
                .await?;
            let reserved = RefCell::new(BTreeSet::new());
            match launch::Launcher::of(self.session)
                .start(prepared, &reserved, false, |_| {})
                .await
            {
                // Another command claimed the slot's GPUs in the same instant (and has
                // started by now): the slot is placed again, on GPUs nobody holds.
                Err(error)
                    if error.downcast_ref::<launch::GpusClaimed>().is_some()
                        && placings < launch::GPU_ROUNDS =>
                {
                    placings += 1;
                    (slot, claim) = self.free_slot(start.slot).await?;
                }
                launched => break launched.map_err(|error| gpu_refusal(error, &self.run.sweep))?,
            }
        };
        let trial = &self.trials[start.trial];
        let watched = Watched {
            attempt: start.attempt,
            container: launched.name.clone(),
            container_id: launched.id.clone(),
            gpus: slot.gpus.clone(),
            started_ms: self.now_ms(),
            stopping: false,
            early: None,
            timed_out: false,
        };
        self.journal(&Event::TrialStarted {
            trial: trial.id.clone(),
            attempt: start.attempt,
            container: watched.container.clone(),
            container_id: watched.container_id.clone(),
            gpus: watched.gpus.clone(),
            image: self.image_id.clone(),
            time_ms: watched.started_ms,
        })?;
        (self.notify)(Note::Started {
            trial: trial.id.clone(),
            attempt: start.attempt,
            gpus: watched.gpus.clone(),
            container: watched.container.clone(),
        });
        self.watched.insert(start.trial, watched);
        self.write_status(start.trial, None)?;
        Ok(self.watch(start.trial, launched.id))
    }

    /// The slot a trial starts on, its GPUs checked against the holders now: when another
    /// container (a member `up` started, a `run`) took one of them since the sweep began,
    /// the slot moves to GPUs nobody holds (this sweep's other slots included), the
    /// least-loaded first, and says so; when none is free the trial shares them, said too.
    /// Also whether the trial claims them (`LaunchRequest::claim_beside`): not when it
    /// shares GPUs others hold, or has none.
    async fn free_slot(&mut self, index: usize) -> anyhow::Result<(Slot, bool)> {
        let slot = self.scheduler.slot(index).clone();
        let Some(nvidia) = self.run.nvidia.as_ref().filter(|_| !slot.gpus.is_empty()) else {
            return Ok((slot, false));
        };
        let sweep = self.run.sweep.name.as_str();
        let mut ledger = GpuLedger::read(self.engine, nvidia, |container| {
            container
                .labels
                .get(crate::labels::SWEEP)
                .map(String::as_str)
                == Some(sweep)
        })
        .await?;
        let (taken, held) = {
            let now = ledger.sharing(false);
            let taken = now.taken(&slot.gpus);
            let held = now.held_text(&taken);
            (taken, held)
        };
        if taken.is_empty() {
            return Ok((slot, true));
        }
        // This sweep's slots hold their GPUs too, for the choice of new ones.
        ledger.hold(share::Holder {
            container: sweep.to_string(),
            who: None,
            gpus: self
                .scheduler
                .slots()
                .iter()
                .flat_map(|other| other.gpus.iter())
                .filter_map(|device| share::index_of(device, &nvidia.gpus))
                .collect(),
            sharing: false,
        });
        let said = format!(
            "{} of slot {} {} held by another container now ({held})",
            share::plural_gpus(&taken),
            slot.index,
            share::is_are(taken.len()),
        );
        let count = GpuSelection::Count(slot.gpus.len() as u32);
        let (said, claim) = match ledger.sharing(false).allocate(&count) {
            Ok(GpuSelection::Devices(moved)) => {
                let said = format!("{said}: its trials run on {} from now on", moved.join(","));
                self.scheduler.move_slot(index, moved);
                (said, true)
            }
            _ => (
                format!(
                    "{said} and no other GPU is free: its trial shares {}",
                    if taken.len() == 1 { "it" } else { "them" }
                ),
                false,
            ),
        };
        (self.notify)(Note::Said(said));
        Ok((self.scheduler.slot(index).clone(), claim))
    }

    /// The future that follows a started (or reattached) container: its output into the
    /// trial's logs from the beginning, then its exit code.
    pub(super) fn watch(
        &self,
        trial: usize,
        id: String,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Ending> + 'a>> {
        let engine = self.engine;
        let host = self.host;
        let dir = self.trial_dir(trial);
        Box::pin(async move {
            let logs = Logs::new(host, dir);
            let stream = engine.stream_output(&id, true, None, |chunk| logs.add(chunk));
            let watched = futures_util::future::join(stream, engine.wait(&id));
            // Output that came just before a quiet spell (a first report, then a long
            // epoch) reaches the log within LOG_FLUSH_MS all the same.
            let flushing = async {
                loop {
                    host.sleep(std::time::Duration::from_millis(LOG_FLUSH_MS))
                        .await;
                    logs.flush();
                }
            };
            futures_util::pin_mut!(watched, flushing);
            let code = match futures_util::future::select(watched, flushing).await {
                futures_util::future::Either::Left(((_, code), _)) => code,
                // The flushing never ends by itself.
                futures_util::future::Either::Right(((), watched)) => watched.await.1,
            };
            logs.flush();
            (trial, code)
        })
    }

    /// An attempt ended with `exit` (`code` when one is known): the scheduler decides, the
    /// journal and `status.json` record it, its container goes. `away`: it ended while
    /// no tfimg watched it, at `ended_ms` when the daemon says (else it ends now).
    pub(super) async fn finish(
        &mut self,
        trial: usize,
        exit: Exit,
        code: Option<i64>,
        away: bool,
        ended_ms: Option<u64>,
    ) -> anyhow::Result<()> {
        let Some(watched) = self.watched.get(&trial).cloned() else {
            return Ok(());
        };
        let outcome = self.scheduler.finished(trial, exit);
        let finished_ms = ended_ms.unwrap_or_else(|| self.now_ms());
        let stopped = matches!(exit, Exit::Stopped | Exit::StoppedEarly);
        self.journal(&Event::TrialFinished {
            trial: self.trials[trial].id.clone(),
            attempt: watched.attempt,
            exit_code: code,
            stopped,
            time_ms: finished_ms,
        })?;
        self.write_status(
            trial,
            Some(AttemptEnd {
                exit_code: code,
                stopped,
                finished_ms,
            }),
        )?;
        self.bring_back(trial, &watched.container_id).await;
        if code == Some(137) {
            self.said_out_of_memory(trial, &watched.container_id).await;
        }
        self.watched.remove(&trial);
        self.reports.remove(&trial);
        if let Some(judge) = self.judge.as_mut() {
            // Its whole curve, for the median rule's comparisons with the trials to come.
            let points =
                folder::trial_points(self.host, &self.run.sweep.trial_dir(&self.trials[trial].id));
            judge.seen(&self.trials[trial].id, &points);
        }
        let _ = self
            .engine
            .remove_container(&watched.container_id, true)
            .await;
        let duration_ms = finished_ms.saturating_sub(watched.started_ms);
        if outcome == Outcome::Done {
            self.durations_ms.push(duration_ms);
        }
        (self.notify)(Note::Ended {
            trial: self.trials[trial].id.clone(),
            attempt: watched.attempt,
            outcome,
            exit_code: code,
            seconds: duration_ms as f64 / 1000.0,
            metric: self.metric(trial),
            away,
        });
        Ok(())
    }

    /// A trial the kernel killed for memory (the daemon says so: exit 137 alone is any
    /// SIGKILL) is said as such, with the sweep file's setting that raises the limit.
    async fn said_out_of_memory(&self, trial: usize, id: &str) {
        let Ok(Some(facts)) = self.engine.container(id).await else {
            return;
        };
        if facts.oom_killed {
            let limit = self.run.sweep.limits.memory;
            let setting = "`memory: VALUE` in the sweep file";
            let (why, fix) = crate::plan::out_of_memory(limit, setting);
            let said = format!("trial {}: {why}; {fix}", self.trials[trial].id);
            (self.notify)(Note::Said(said));
        }
    }

    /// `status.json` of a watched attempt (`end` once it ended).
    fn write_status(&self, trial: usize, end: Option<AttemptEnd>) -> anyhow::Result<()> {
        let watched = &self.watched[&trial];
        let attempt = Attempt {
            number: watched.attempt,
            container: watched.container.clone(),
            container_id: watched.container_id.clone(),
            gpus: watched.gpus.clone(),
            image: self.image_id.clone(),
            started_ms: watched.started_ms,
            end,
        };
        write_status(
            self.host,
            &self.trial_dir(trial),
            &self.trials[trial].id,
            &attempt,
        )
    }

    /// The objective's value so far of a running trial, for the live view: from its reports
    /// as last read (`reports`, each read taking only what the files gained).
    fn running_metric(&self, trial: usize) -> Option<f64> {
        self.reports.get(&trial)?.value()
    }

    /// The objective's value in the trial's metrics, as `objective.use` picks it, with
    /// what it is (`last val_accuracy`): its files read whole (a trial that ended).
    pub(super) fn metric(&self, trial: usize) -> Option<(String, f64)> {
        let objective = self.run.sweep.objective.as_ref()?;
        let points = folder::trial_points(self.host, &self.trial_dir(trial));
        let picked = MetricsSummary::of(&points).pick(objective)?;
        Some((objective.label(), picked.value))
    }
}

/// Where every trial stands, with the time left as the finished attempts tell it.
pub(super) fn counts<E: Engine, H: Host>(runner: &Runner<'_, E, H>) -> Counts {
    // `tpe:` trials not proposed yet are queued.
    let mut counts = Counts {
        total: runner.run.sweep.search.count(),
        ..Counts::default()
    };
    for trial in 0..counts.total {
        match runner.scheduler.progress(trial) {
            Progress::Queued | Progress::Stopped { .. } => counts.queued += 1,
            Progress::Running { .. } => {
                counts.running += 1;
                let id = runner.trials[trial].id.clone();
                counts
                    .running_metrics
                    .push((id, runner.running_metric(trial)));
            }
            Progress::Done { .. } => counts.done += 1,
            Progress::Failed { .. } => counts.failed += 1,
            Progress::StoppedEarly { .. } => counts.stopped_early += 1,
        }
    }
    if !runner.durations_ms.is_empty() && !runner.run.slots.is_empty() {
        let mean = runner.durations_ms.iter().sum::<u64>() / runner.durations_ms.len() as u64;
        let waiting = counts.queued as u64 + counts.running as u64;
        let slots = runner.run.slots.len() as u64;
        counts.eta_seconds = Some(mean * waiting.div_ceil(slots) / 1000);
    }
    counts
}

/// A trial's launch: the sweep's image, mounts, env and limits, its own folder at
/// `TFIMG_TRIAL_DIR` (mounted; on a `remote` engine copied in, and back at its end), its
/// slot's GPUs by device id (never a count), its labels.
pub(super) fn request(
    run: &SweepRun,
    trial: &Trial,
    slot: &Slot,
    attempt: u32,
    dir: &Path,
    remote: bool,
) -> Result<LaunchRequest, InputError> {
    let sweep = &run.sweep;
    let mut mounts = sweep
        .mounts
        .iter()
        .map(|text| mounts::parse_request(text, &sweep.folder))
        .collect::<Result<Vec<_>, InputError>>()?;
    let text = format!("{}:{TRIAL_DIR}", dir.display());
    let mut syncs = Vec::new();
    match remote {
        true => syncs.push(SyncRequest {
            text,
            source: dir.to_path_buf(),
            target: Some(TRIAL_DIR.to_string()),
            whole: true,
        }),
        false => mounts.push(MountRequest {
            text,
            source: dir.to_path_buf(),
            target: Some(TRIAL_DIR.to_string()),
            read_only: false,
        }),
    }
    let gpus = match slot.gpus.is_empty() {
        true => GpuSelection::None,
        false => GpuSelection::Devices(slot.gpus.clone()),
    };
    Ok(LaunchRequest {
        command: trial.command.clone(),
        env: trial.env.clone(),
        mounts,
        syncs,
        make_sync_parents: true,
        gpus: Some(gpus),
        gpu_mode: GpuMode::Devices,
        // The sweep's slots place its trials (`trials_per_gpu` puts several on one GPU);
        // what others hold is not checked per trial yet.
        share_gpus: true,
        resources: Resources {
            memory: sweep.limits.memory,
            nano_cpus: sweep.limits.nano_cpus,
            shm_size: sweep.limits.shm_size,
            ..Resources::default()
        },
        extra_labels: trials::container_labels(&sweep.name, &trial.id, attempt)
            .into_iter()
            .collect::<BTreeMap<_, _>>(),
        ..LaunchRequest::new(
            run.target.clone(),
            trials::container_name(&sweep.name, &trial.id),
            run.ids,
        )
    })
}

/// `status.json` of `attempt` of `trial` into its folder `dir`.
pub(super) fn write_status(
    host: &impl Confined,
    dir: &Path,
    trial: &str,
    attempt: &Attempt,
) -> anyhow::Result<()> {
    host.write_confined(dir, STATUS_FILE, attempt.status_json(trial).as_bytes())?;
    Ok(())
}

/// The daemon's refusal of a trial's GPUs (no NVIDIA device driver registered: the
/// toolkit missing, or Docker not restarted since) said for a sweep: at `gpus:`, with a
/// hint that names the sweep file's key, not `run`'s `--gpus`. Other errors pass.
fn gpu_refusal(error: anyhow::Error, sweep: &crate::sweep::Sweep) -> anyhow::Error {
    let Some(EngineError::GpuToolkitMissing { message }) = error.downcast_ref::<EngineError>()
    else {
        return error;
    };
    HostError {
        message: format!(
            "{}: the trials cannot get the GPUs of `gpus:`: Docker has no NVIDIA device driver ({})",
            sweep.pool.location,
            message.trim()
        ),
        hint: "install the NVIDIA Container Toolkit (`sudo apt-get install nvidia-container-toolkit` from NVIDIA's repository), then `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker; `tfimg doctor` checks the result. Without GPUs: leave `gpus:` out of the sweep file".to_string(),
    }
    .into()
}

/// The whole output of a container that ended unwatched, into the trial's folder `dir`.
pub(super) async fn keep_logs(
    session: Session<'_, impl ContainerIo, impl Host>,
    dir: &Path,
    id: &str,
) {
    let Session { engine, host, .. } = session;
    let logs = Logs::new(host, dir.to_path_buf());
    let _ = engine
        .stream_output(id, false, None, |chunk| logs.add(chunk))
        .await;
    logs.flush();
}

/// An earlier attempt's folder is kept beside the trial's as `<trial>.before-attempt-N`,
/// so each attempt starts with an empty folder and nothing of the last one is lost.
fn set_aside(host: &(impl Files + FileWrites), dir: &Path, attempt: u32) -> anyhow::Result<()> {
    if !host.exists(dir) {
        return Ok(());
    }
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let aside = dir.with_file_name(format!("{name}.before-attempt-{attempt}"));
    host.rename(dir, &aside).map_err(|error| {
        InputError::new(
            format!(
                "cannot set the earlier attempt's folder `{}` aside: {error}",
                dir.display()
            ),
            "check the sweep folder's permissions",
        )
    })?;
    Ok(())
}

/// A trial's output on its way into `stdout.log` and `stderr.log`: kept a moment and
/// appended in pieces, so a chatty trial costs few writes and `tail -f` still follows.
pub(super) struct Logs<'h, H: Host> {
    host: &'h H,
    dir: PathBuf,
    waiting: RefCell<(Vec<u8>, Vec<u8>, u64)>,
}

impl<'h, H: Host> Logs<'h, H> {
    /// Starts both logs afresh (the daemon hands the whole output over again).
    pub(super) fn new(host: &'h H, dir: PathBuf) -> Logs<'h, H> {
        for file in [STDOUT_FILE, STDERR_FILE] {
            let _ = host.write_confined(&dir, file, b"");
        }
        Logs {
            host,
            dir,
            waiting: RefCell::new((Vec::new(), Vec::new(), now_ms(host))),
        }
    }

    pub(super) fn add(&self, chunk: OutputChunk) {
        let due = {
            let mut waiting = self.waiting.borrow_mut();
            match chunk {
                OutputChunk::Stdout(bytes) => waiting.0.extend_from_slice(&bytes),
                OutputChunk::Stderr(bytes) => waiting.1.extend_from_slice(&bytes),
            }
            waiting.0.len() + waiting.1.len() >= LOG_FLUSH_BYTES
                || now_ms(self.host).saturating_sub(waiting.2) >= LOG_FLUSH_MS
        };
        if due {
            self.flush();
        }
    }

    pub(super) fn flush(&self) {
        let mut waiting = self.waiting.borrow_mut();
        let (stdout, stderr, _) = &mut *waiting;
        for (file, bytes) in [(STDOUT_FILE, stdout), (STDERR_FILE, stderr)] {
            if !bytes.is_empty() {
                // The trial may have put a link, FIFO or folder where its log was: the
                // append refuses it, and the log takes its place again from here on.
                if self.host.append_confined(&self.dir, file, bytes).is_err() {
                    let _ = self.host.write_confined(&self.dir, file, bytes);
                }
                bytes.clear();
            }
        }
        waiting.2 = now_ms(self.host);
    }
}

/// The host's clock in milliseconds since the Unix epoch (journal times).
pub fn now_ms(host: &impl Clock) -> u64 {
    host.now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}
