//! `tfimg sweep FILE [--dry-run] [-d]` and `tfimg sweep status|results|stop|report SWEEP`.
//! The sweep file is read and checked (every error at its file:line:column, exit 1) and
//! its spec resolved before anything else; its slots are then laid out on the GPUs of the
//! engine's host (`app::sweep::plan_slots`: a GPU pool connects first, a CPU pool asks no
//! host); `--dry-run` then prints the trials and the slot plan and creates nothing;
//! `--k8s` writes the sweep for a cluster instead (`k8s`). Otherwise the image is built
//! once and `app::sweep` runs the trials (in the background with `-d`); every sweep ends
//! with its results table and its best trial.

use std::path::Path;
use std::process::ExitCode;

use crate::app;
use crate::app::run::{image_target, spec_target};
use crate::app::settings::Settings;
use crate::app::sweep::{Note, Stopped, SweepRun};
use crate::cli::{Progress, SweepArgs, SweepCommand, SweepRunArgs, SweepTarget};
use crate::engine::{Daemon, Docker};
use crate::host::{Host, NvidiaFacts};
use crate::input::paths::lexical;
use crate::input::InputError;
use crate::output;
use crate::output::progress::Reporter;
use crate::spec::load::looks_like_path;
use crate::spec::{ResolvedSpec, SpecError};
use crate::sweep::schedule::{self, Slot};
use crate::sweep::{GpuPool, ImageSource, Sweep};

mod report;
mod show;

/// The detached run's output, in the sweep's folder.
const LOG_FILE: &str = "sweep.log";

mod k8s;

pub fn run(args: &SweepArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    match &args.command {
        Some(SweepCommand::Status(status)) => show::status(status, settings, host),
        Some(SweepCommand::Results(results)) => show::results(results, settings, host),
        Some(SweepCommand::Stop(target)) => stop(target, settings, host),
        Some(SweepCommand::Report(args)) => report::run(args, settings, host),
        None => file(&args.run, settings, host),
    }
}

/// A sweep file checked and planned: the sweep, its spec (when it names one), its slots
/// and the NVIDIA facts of the engine's host they were laid out on.
pub(crate) struct Planned {
    pub sweep: Sweep,
    pub spec: Option<ResolvedSpec>,
    pub slots: Vec<Slot>,
    pub nvidia: Option<NvidiaFacts>,
}

/// Lays the slots out on the GPUs of `engine`'s host; without an engine (the dry run of a
/// CPU pool, which needs no daemon) a CPU pool's.
async fn plan(
    engine: Option<&Docker>,
    host: &impl Host,
    sweep: Sweep,
    spec: Option<ResolvedSpec>,
) -> anyhow::Result<Planned> {
    let (slots, nvidia) = match engine {
        Some(engine) => {
            let images = app::sweep::images_to_probe(&sweep.source, spec.as_ref());
            app::sweep::plan_slots(engine, host, &sweep.pool, &images).await?
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

/// Reads and checks `file` (its pool as far as it goes without a host) and resolves its
/// spec (a relative spec file starts at the sweep file's folder), asking nothing of any
/// host.
pub(crate) fn load(file: &Path) -> anyhow::Result<(Sweep, Option<ResolvedSpec>)> {
    let sweep = crate::app::catalog::load_sweep(file)?;
    let spec = match &sweep.source {
        ImageSource::Spec { name, location } => {
            let wanted = match looks_like_path(name) && Path::new(name).is_relative() {
                true => lexical(&sweep.folder.join(name)).display().to_string(),
                false => name.clone(),
            };
            let resolved =
                crate::app::catalog::resolve(&super::catalog(), &wanted).map_err(|error| {
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
    app::sweep::check_pool(&sweep.pool)?;
    Ok((sweep, spec))
}

/// The sweep file's warnings, and the image's against the pool.
fn print_warnings(sweep: &Sweep, spec: Option<&ResolvedSpec>) {
    let image_warning = spec.and_then(|spec| sweep.image_warning(spec.gpu.is_some()));
    for warning in sweep.warnings.iter().chain(&image_warning) {
        eprintln!("warning: {warning}");
    }
}

fn file(args: &SweepRunArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let file = args
        .file
        .as_deref()
        .expect("clap requires FILE without a subcommand");
    if args.k8s {
        return k8s::export(args, file, host);
    }
    let (sweep, spec) = load(file)?;
    print_warnings(&sweep, spec.as_ref());
    if !args.dry_run {
        return run_file(settings, host, args, file, sweep, spec);
    }
    let planned = super::runtime()?.block_on(async {
        // A CPU pool asks no host: its dry run needs no daemon.
        let engine = match sweep.pool.gpus {
            GpuPool::Cpu => None,
            _ => Some(settings.connect().await?),
        };
        plan(engine.as_ref(), host, sweep, spec).await
    })?;
    let trials = planned.sweep.trials();
    if args.json {
        output::print_json(&show::dry_run_json(&planned, &trials))?;
    } else {
        show::print_dry_run(&planned.sweep, &trials, &planned.slots)?;
    }
    let sweep = &planned.sweep;
    let on = match &sweep.pool.gpus {
        GpuPool::Cpu => "the CPU".to_string(),
        _ => format!("{} GPU(s) each", sweep.pool.gpus_per_trial),
    };
    eprintln!(
        "dry run of sweep `{}`: {} trial(s) ({}) on {} slot(s), {on}, from {}; nothing was created",
        sweep.name,
        trials.len(),
        sweep.search.describe(),
        planned.slots.len(),
        sweep.source.describe()
    );
    eprintln!("results would go to `{}`", sweep.output.display());
    Ok(ExitCode::SUCCESS)
}

/// Lays the slots out on the engine's host, builds the image once, then runs the sweep
/// here (or, with `-d`, in the background).
fn run_file(
    settings: &Settings,
    host: &impl Host,
    args: &SweepRunArgs,
    file: &Path,
    sweep: Sweep,
    spec: Option<ResolvedSpec>,
) -> anyhow::Result<ExitCode> {
    let network = settings.network(&args.network.choices(), host)?;
    let file_bytes = host.read_file(file).map_err(|error| {
        InputError::new(
            format!("cannot read sweep file `{}`: {error}", file.display()),
            "give the path of a sweep YAML file",
        )
    })?;
    let progress = if args.json {
        Progress::Json
    } else {
        Progress::Auto
    };
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        // Before any probe or build: `mounts:` name folders of this machine.
        app::sweep::check_engine(&engine, &sweep)?;
        let planned = plan(Some(&engine), host, sweep, spec).await?;
        let target = {
            let reporter = Reporter::new(progress);
            match (&planned.spec, &planned.sweep.source) {
                (Some(spec), _) => {
                    spec_target(&engine, host, spec, &network, false, &reporter).await?
                }
                (None, ImageSource::Image { reference, .. }) => {
                    image_target(&engine, reference).await?
                }
                (None, ImageSource::Spec { name, .. }) => {
                    anyhow::bail!("the spec `{name}` was not resolved")
                }
            }
        };
        if args.detach {
            return detach(settings, host, &planned.sweep, engine.endpoint());
        }
        // Whose ids the trials take (`plan::user`), said once: their folders are mounted.
        let chosen = host.container_ids();
        let run = SweepRun {
            file: file.display().to_string(),
            file_bytes,
            target,
            slots: planned.slots,
            nvidia: planned.nvidia,
            ids: Some(chosen.ids),
            resume_only: args.resume,
            sweep: planned.sweep,
        };
        let reporter = Reporter::new(progress);
        let notify = |note: Note| show::note(&reporter, &run.sweep, &note);
        super::say(chosen.note);
        let finished = app::sweep::run(&engine, host, &run, &notify).await?;
        reporter.clear();
        show::finished(host, &reporter, &run, &finished)
    })
}

/// Starts this same command again in the background (its output in the sweep's folder)
/// once the image is there; the lock refuses a second run before anything starts.
fn detach(
    settings: &Settings,
    host: &impl Host,
    sweep: &Sweep,
    engine: &str,
) -> anyhow::Result<ExitCode> {
    if let crate::host::LockAttempt::Busy =
        host.try_lock(&app::sweep::lock_name(&sweep.output), false)
    {
        return Err(InputError::new(
            format!("sweep `{}` is already running", sweep.name),
            format!(
                "follow it with `tfimg sweep status {}`",
                sweep.output.display()
            ),
        )
        .into());
    }
    let args: Vec<String> = settings
        .argv()
        .iter()
        .skip(1)
        .filter(|arg| *arg != "-d" && *arg != "--detach")
        .cloned()
        .collect();
    let log = sweep.output.join(LOG_FILE);
    let pid = host.spawn_detached(&args, &log, engine)?;
    eprintln!(
        "sweep `{}` runs in the background (pid {pid}); its output goes to `{}`",
        sweep.name,
        log.display()
    );
    eprintln!(
        "follow it: `tfimg sweep status {0}`; stop it: `tfimg sweep stop {0}`",
        sweep.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The folder of the sweep the user named (its name under `./runs`, or its folder).
pub(super) fn sweep_dir(
    settings: &Settings,
    host: &impl Host,
    target: &str,
) -> anyhow::Result<std::path::PathBuf> {
    let current = settings.current_dir()?;
    Ok(app::sweep::folder::locate(host, &current, target)?)
}

/// `path` as the user would write it from here: relative when it is under the current
/// folder.
pub(super) fn shown(settings: &Settings, path: &Path) -> String {
    let current = settings.current_dir().unwrap_or_default();
    path.strip_prefix(&current)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `tfimg sweep stop SWEEP`.
fn stop(target: &SweepTarget, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let dir = sweep_dir(settings, host, &target.sweep)?;
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        match app::sweep::stop(&engine, host, &dir).await? {
            Stopped::ByItsRun => eprintln!(
                "stopped the sweep in `{}`: its trial containers are removed, its results kept",
                shown(settings, &dir)
            ),
            Stopped::Here { containers, notes } => {
                for note in notes {
                    eprintln!("{note}");
                }
                eprintln!(
                    "no tfimg was running the sweep in `{}`; removed {} trial container(s), results kept",
                    shown(settings, &dir),
                    containers.len()
                )
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}
