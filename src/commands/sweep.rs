//! `tfimg sweep FILE [--dry-run]` and `tfimg sweep status|results|stop|report SWEEP`.
//! The sweep file is read and checked (every error at its file:line:column, exit 1), its
//! spec resolved and its slots planned against this host's GPUs before anything else;
//! `--dry-run` then prints the trials and the slot plan and creates nothing; `--k8s`
//! writes the sweep for a cluster instead (`k8s`). Running the trials and the
//! subcommands are not built yet: they exit 2 saying so.

use std::path::Path;
use std::process::ExitCode;

use crate::cli::{SweepArgs, SweepCommand, SweepRunArgs};
use crate::host::{Host, Machine};
use crate::input::paths::lexical;
use crate::output;
use crate::spec::load::looks_like_path;
use crate::spec::{ResolvedSpec, SpecError};
use crate::sweep::schedule::{self, Slot};
use crate::sweep::{GpuPool, ImageSource, Sweep, Trial};

mod k8s;

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        Some(SweepCommand::Status(_)) => not_built("status"),
        Some(SweepCommand::Results(_)) => not_built("results"),
        Some(SweepCommand::Stop(_)) => not_built("stop"),
        Some(SweepCommand::Report(_)) => not_built("report"),
        None => file(&args.run),
    }
}

fn not_built(what: &str) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tfimg sweep {what}` is not built yet")
}

/// A sweep file checked and planned: the sweep, its spec (when it names one) and its slots.
pub(crate) struct Planned {
    pub sweep: Sweep,
    pub spec: Option<ResolvedSpec>,
    pub slots: Vec<Slot>,
}

/// Reads and checks `file`, resolves its spec (a relative spec file starts at the sweep
/// file's folder) and plans its slots against this host's GPUs.
pub(crate) fn plan(file: &Path) -> anyhow::Result<Planned> {
    let (sweep, spec) = load(file)?;
    let host_gpus = match sweep.pool.gpus {
        GpuPool::Cpu => Vec::new(),
        _ => Machine.nvidia().gpus,
    };
    schedule::check_pool_against_host(&sweep.pool, &host_gpus)?;
    let indices: Vec<String> = host_gpus.iter().map(|gpu| gpu.index.to_string()).collect();
    let slots = schedule::slots(&sweep.pool, &indices)?;
    Ok(Planned { sweep, spec, slots })
}

/// Reads and checks `file` and resolves its spec (a relative spec file starts at the
/// sweep file's folder), asking nothing of this host.
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
    Ok((sweep, spec))
}

/// The sweep file's warnings, and the image's against the pool.
fn print_warnings(sweep: &Sweep, spec: Option<&ResolvedSpec>) {
    let image_warning = spec.and_then(|spec| sweep.image_warning(spec.gpu.is_some()));
    for warning in sweep.warnings.iter().chain(&image_warning) {
        eprintln!("warning: {warning}");
    }
}

fn file(args: &SweepRunArgs) -> anyhow::Result<ExitCode> {
    let file = args
        .file
        .as_deref()
        .expect("clap requires FILE without a subcommand");
    if args.k8s {
        return k8s::export(args, file);
    }
    let planned = plan(file)?;
    print_warnings(&planned.sweep, planned.spec.as_ref());
    if !args.dry_run {
        return not_built("FILE");
    }
    let trials = planned.sweep.trials();
    if args.json {
        output::print_json(&dry_run_json(&planned, &trials))?;
    } else {
        print_dry_run(&planned.sweep, &trials, &planned.slots)?;
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

/// The trials (id, each param, the command) and the slots (slot → GPU ids).
fn print_dry_run(sweep: &Sweep, trials: &[Trial], slots: &[Slot]) -> anyhow::Result<()> {
    let mut header = vec!["TRIAL".to_string()];
    header.extend(
        sweep
            .param_names()
            .iter()
            .map(|name| name.to_ascii_uppercase()),
    );
    header.push("COMMAND".to_string());
    let rows: Vec<Vec<String>> = trials
        .iter()
        .map(|trial| {
            let mut row = vec![trial.id.clone()];
            row.extend(trial.params.iter().map(|(_, value)| value.text()));
            row.push(trial.command_line());
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    output::print_table(&header, &rows)?;
    output::print_text("\n")?;
    let rows: Vec<Vec<String>> = slots
        .iter()
        .map(|slot| vec![(slot.index + 1).to_string(), slot.describe()])
        .collect();
    output::print_table(&["SLOT", "GPUS"], &rows)?;
    Ok(())
}

fn dry_run_json(planned: &Planned, trials: &[Trial]) -> serde_json::Value {
    let sweep = &planned.sweep;
    let trials: Vec<serde_json::Value> = trials
        .iter()
        .map(|trial| {
            let params: serde_json::Map<String, serde_json::Value> = trial
                .params
                .iter()
                .map(|(name, value)| (name.clone(), value.to_json()))
                .collect();
            serde_json::json!({"trial": trial.id, "params": params, "command": trial.command})
        })
        .collect();
    let slots: Vec<serde_json::Value> = planned
        .slots
        .iter()
        .map(|slot| serde_json::json!({"slot": slot.index + 1, "gpus": slot.gpus}))
        .collect();
    serde_json::json!({
        "sweep": sweep.name,
        "image": sweep.source.describe(),
        "search": sweep.search.describe(),
        "output": sweep.output,
        "objective": sweep.objective,
        "trials": trials,
        "slots": slots,
    })
}
