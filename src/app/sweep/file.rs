//! `tfimg sweep FILE`'s story around the runner: the file read and checked and its spec
//! resolved (`load`), the slots laid out on the GPUs of the engine's host (`plan`: a GPU
//! pool connects first, a CPU pool asks no host), then either the dry run (nothing is
//! created) or the image built or found once and the sweep run here (`app::sweep::run`),
//! or started again in the background (`detach`); a run here ends with its folder read
//! back for the results.

use std::path::{Path, PathBuf};

use super::{Finished, Note, SweepRun};
use crate::app::build::Network;
use crate::app::run::{image_target, spec_target};
use crate::app::session::{Session, Sinks};
use crate::engine::prelude::{Builds, ContainerIo, Containers, Daemon, Images, Networks, Tunnels};
use crate::host::prelude::{Files, Gpus, Processes, Secrets, State};
use crate::host::{Host, LockAttempt, NvidiaFacts};
use crate::input::paths::lexical;
use crate::input::InputError;
use crate::notice::Notice;
use crate::output::progress::{Progress, Report, Reporter};
use crate::output::ui::Ui;
use crate::spec::load::looks_like_path;
use crate::spec::{Catalog, ResolvedSpec, SpecError};
use crate::sweep::progress;
use crate::sweep::results::Results;
use crate::sweep::schedule::{self, Slot};
use crate::sweep::{GpuPool, ImageSource, Sweep};

/// The detached run's output, in the sweep's folder.
pub const LOG_FILE: &str = "sweep.log";

/// A sweep file checked, and its spec (when it names one) resolved.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub sweep: Sweep,
    pub spec: Option<ResolvedSpec>,
}

impl Loaded {
    /// The sweep file's warnings, and the image's against the pool, as said on stderr.
    pub fn warnings(&self) -> Vec<Notice> {
        let spec = self.spec.as_ref();
        let image_warning = spec.and_then(|spec| self.sweep.image_warning(spec.gpu.is_some()));
        self.sweep
            .warnings
            .iter()
            .chain(&image_warning)
            .map(|warning| Notice::warning(warning.to_string()))
            .collect()
    }
}

/// Reads and checks `file` (its pool as far as it goes without a host) and resolves its
/// spec (a relative spec file starts at the sweep file's folder), asking nothing of any
/// host.
pub fn load(host: &impl Files, catalog: &Catalog, file: &Path) -> anyhow::Result<Loaded> {
    let sweep = crate::app::catalog::load_sweep(host, file)?;
    let spec = match &sweep.source {
        ImageSource::Spec { name, location } => {
            let wanted = match looks_like_path(name) && Path::new(name).is_relative() {
                true => lexical(&sweep.folder.join(name)).display().to_string(),
                false => name.clone(),
            };
            let resolved =
                crate::app::catalog::resolve(host, catalog, &wanted).map_err(|error| {
                    // `no spec named ...` has no place of its own: the sweep's `spec:`.
                    SpecError::new(
                        error.location.clone().or_else(|| Some(location.clone())),
                        error.message.clone(),
                        error.hint.clone(),
                    )
                })?;
            Some(resolved)
        }
        ImageSource::Image { .. } => None,
    };
    super::check_pool(&sweep.pool)?;
    Ok(Loaded { sweep, spec })
}

/// A sweep file checked and planned: the sweep, its spec (when it names one), its slots
/// and the NVIDIA facts of the engine's host they were laid out on.
#[derive(Debug, Clone)]
pub struct Planned {
    pub sweep: Sweep,
    pub spec: Option<ResolvedSpec>,
    pub slots: Vec<Slot>,
    pub nvidia: Option<NvidiaFacts>,
}

/// Lays the slots out on the GPUs of the session's engine's host; without one (the dry
/// run of a CPU pool, which needs no daemon) a CPU pool's.
async fn plan(
    session: Option<Session<'_, impl Containers + Images + Daemon, impl Gpus + Secrets>>,
    loaded: Loaded,
) -> anyhow::Result<Planned> {
    let Loaded { sweep, spec } = loaded;
    let (slots, nvidia) = match session {
        Some(session) => {
            let images = super::images_to_probe(&sweep.source, spec.as_ref());
            super::plan_slots(session, &sweep.pool, &images, &sweep.name).await?
        }
        None => (schedule::slots(&sweep.pool, &[], None)?, None),
    };
    Ok(Planned {
        sweep,
        spec,
        slots,
        nvidia,
    })
}

/// `--dry-run`: the slots planned and nothing created. A CPU pool asks no host, so its
/// dry run needs no daemon (`connect` is not called).
pub async fn dry_run<E: Daemon + Containers + Images>(
    connect: impl AsyncFnOnce() -> anyhow::Result<E>,
    host: &(impl Gpus + Secrets),
    loaded: Loaded,
    sinks: Sinks<'_>,
) -> anyhow::Result<Planned> {
    let engine = match loaded.sweep.pool.gpus {
        GpuPool::Cpu => None,
        _ => Some(connect().await?),
    };
    plan(
        engine
            .as_ref()
            .map(|engine| Session::new(engine, host, sinks)),
        loaded,
    )
    .await
}

/// How `tfimg sweep FILE` runs its sweep.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// The sweep file as the user named it.
    pub file: PathBuf,
    /// `-d`: started again in the background once the image is there.
    pub detach: bool,
    /// `--resume`: only go on with a sweep its journal records.
    pub resume: bool,
    /// How the build and the run show their progress (`--json`: JSON events).
    pub progress: Progress,
    /// The command line tfimg was started with (`-d` starts it again without `-d`).
    pub argv: Vec<String>,
}

/// How `start` left the sweep.
pub enum Started {
    /// It runs in the background (`detach`).
    Detached,
    /// It ran here until it ended.
    Ended(Box<Ended>),
}

/// A sweep that ran here: how it ended and its results as its folder has them.
pub struct Ended {
    pub sweep: Sweep,
    pub finished: Finished,
    pub results: Results,
    /// No ended trial reported the objective's metric (`SweepFolder::objective_warning`).
    pub objective_warning: Option<Notice>,
    /// The run's progress, for the result (with `--json`, its last event).
    pub reporter: Reporter,
}

/// `tfimg sweep FILE`: the file's bytes kept, the engine connected (`connect`) and
/// checked against the sweep's mounts before any probe or build, the slots laid out on its
/// host, the image built or found once, then the sweep run here (every note told on the
/// run's reporter) or started again in the background.
pub async fn start<E: Daemon + Tunnels + Images + Containers + Builds + ContainerIo + Networks>(
    connect: impl AsyncFnOnce() -> anyhow::Result<E>,
    host: &impl Host,
    options: &StartOptions,
    loaded: Loaded,
    network: &Network,
    ui: &dyn Ui,
) -> anyhow::Result<Started> {
    let file = &options.file;
    let file_bytes = host.read_file(file).map_err(|error| {
        InputError::new(
            format!("cannot read sweep file `{}`: {error}", file.display()),
            "give the path of a sweep YAML file",
        )
    })?;
    // Its folder holds the journal and the trials' results: one no other account can
    // change. Checked here when it is there (nothing is made before the sweep file's
    // checks); the run makes a missing one and checks it then.
    if host.exists(&loaded.sweep.output) {
        super::folder::trusted(host, &loaded.sweep.output, false)?;
    }
    let engine = connect().await?;
    // Before any probe or build: `mounts:` name folders of this machine.
    super::check_engine(&engine, &loaded.sweep)?;
    let reporter = Reporter::new(options.progress);
    let session = Session::new(&engine, host, Sinks::new(ui, &reporter));
    let planned = plan(Some(session), loaded).await?;
    let target = {
        match (&planned.spec, &planned.sweep.source) {
            (Some(spec), _) => spec_target(session, spec, network, false).await?,
            (None, ImageSource::Image { reference, .. }) => {
                image_target(&engine, reference).await?
            }
            (None, ImageSource::Spec { name, .. }) => {
                anyhow::bail!("the spec `{name}` was not resolved")
            }
        }
    };
    // The build's display ends here (the run has one of its own).
    drop(reporter);
    if options.detach {
        detach(host, &planned.sweep, &options.argv, engine.endpoint(), ui)?;
        return Ok(Started::Detached);
    }
    // Whose ids the trials take (`plan::user`): never root's; their folders are made for them.
    let ids = crate::plan::user::unattended(host.container_ids());
    let run = SweepRun {
        file: file.display().to_string(),
        file_bytes,
        target,
        slots: planned.slots,
        nvidia: planned.nvidia,
        ids: Some(ids),
        resume_only: options.resume,
        sweep: planned.sweep,
    };
    let reporter = Reporter::new(options.progress);
    let notify = |note: Note| show_note(&reporter, &run.sweep, &note);
    let session = Session::new(&engine, host, Sinks::new(ui, &reporter));
    let finished = super::run(session, &run, &notify).await?;
    reporter.clear();
    let folder = super::folder::read(host, &run.sweep.output)?;
    let results = folder.results(None);
    Ok(Started::Ended(Box::new(Ended {
        sweep: run.sweep,
        finished,
        objective_warning: folder.objective_warning(&results),
        results,
        reporter,
    })))
}

/// One note of a running sweep, on the reporter: a line (the live summary's for the
/// progress) and its JSON event.
fn show_note(reporter: &(impl Report + ?Sized), sweep: &Sweep, note: &Note) {
    let described = progress::describe(note, sweep);
    match described.live {
        true => reporter.live(described.line.text()),
        false => reporter.notice(&described.line),
    }
    reporter.event(described.event, described.json);
}

/// Starts this same command (`argv`, without `-d`) again in the background, on the
/// engine at `endpoint`, its output in the sweep's folder; the sweep's lock refuses a
/// second run before anything starts.
fn detach(
    host: &(impl State + Processes),
    sweep: &Sweep,
    argv: &[String],
    endpoint: &str,
    ui: &(impl Ui + ?Sized),
) -> anyhow::Result<()> {
    if let LockAttempt::Busy = host.try_lock(&super::lock_name(&sweep.output), false) {
        return Err(InputError::new(
            format!("sweep `{}` is already running", sweep.name),
            format!(
                "follow it with `tfimg sweep status {}`",
                sweep.output.display()
            ),
        )
        .into());
    }
    let args: Vec<String> = argv
        .iter()
        .skip(1)
        .filter(|arg| *arg != "-d" && *arg != "--detach")
        .cloned()
        .collect();
    let log = sweep.output.join(LOG_FILE);
    let pid = host.spawn_detached(&args, &log, endpoint)?;
    ui.note(&format!(
        "sweep `{}` runs in the background (pid {pid}); its output goes to `{}`",
        sweep.name,
        log.display()
    ));
    ui.note(&format!(
        "follow it: `tfimg sweep status {0}`; stop it: `tfimg sweep stop {0}`",
        sweep.output.display()
    ));
    Ok(())
}

#[cfg(test)]
mod tests;
