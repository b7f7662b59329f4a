//! A sweep's slots, laid out on the GPUs of the engine's host (`gpu_host`): the pool
//! checked against them (GPUs the host lacks, a host without a driver, a toolkit that
//! would refuse every trial, each said at `gpus:` before anything is built, in the dry
//! run too), `gpus: all` made into their indices. A CPU pool asks nothing of any host.

use crate::app::gpu_host;
use crate::app::gpu_ledger::GpuLedger;
use crate::app::session::Session;
use crate::engine::prelude::{Containers, Daemon, Images};
use crate::engine::ContainerFacts;
use crate::host::nvidia::ProbeOutcome;
use crate::host::prelude::{Gpus, Secrets};
use crate::host::{HostError, NvidiaFacts};
use crate::input::source::SpecError;
use crate::labels;
use crate::plan::gpus::host_name;
use crate::plan::gpus::share;
use crate::plan::gpus::GpuSelection;
use crate::spec::ResolvedSpec;
use crate::sweep::schedule::{self, KnownGpus, Slot};
use crate::sweep::{GpuPool, ImageSource, Pool};

/// The slots of `pool` on the engine's host, and the facts they were planned on (for the
/// trials' launches; `None` for a CPU pool). `images`: what a probe of another host may
/// run ([`images_to_probe`]). The GPUs other tfimg containers hold (but the trials of
/// the sweep named `sweep`, from an earlier run of it) are not the pool's: `gpus: all`
/// is every free GPU, and a listed GPU another container holds is refused, naming it.
pub async fn plan_slots(
    session: Session<'_, impl Containers + Images + Daemon, impl Gpus + Secrets>,
    pool: &Pool,
    images: &[String],
    sweep: &str,
) -> anyhow::Result<(Vec<Slot>, Option<NvidiaFacts>)> {
    let Session { engine, .. } = session;
    if pool.gpus == GpuPool::Cpu {
        return Ok((schedule::slots(pool, &[], None)?, None));
    }
    let nvidia = gpu_host::engine_nvidia(session, images).await;
    let engine_host = nvidia.probe.as_ref().map(|probe| probe.engine.as_str());
    schedule::check_pool_against_host(pool, known_gpus(&nvidia), engine_host)?;
    // What would stop every trial's launch (the toolkit missing where a driver is), said
    // now, at `gpus:`, rather than by the first trial.
    let info = engine.info().await?;
    if let Some(problem) = crate::doctor::gpu_launch_problem(&nvidia, &info, None) {
        let fix = problem
            .fix
            .unwrap_or_else(|| "run `tfimg doctor` for details".to_string());
        return Err(HostError {
            message: format!(
                "{}: the trials cannot get the GPUs of `gpus:`: {}",
                pool.location, problem.summary
            ),
            hint: format!(
                "{fix}; or leave `gpus:` out of the sweep file to run the trials on the CPU"
            ),
        }
        .into());
    }
    let own_trial = |container: &ContainerFacts| {
        container.labels.get(labels::SWEEP).map(String::as_str) == Some(sweep)
    };
    let others = GpuLedger::read(engine, &nvidia, own_trial).await?;
    let sharing = others.sharing(false);
    let free = sharing.free();
    let held = sharing.held();
    match &pool.gpus {
        GpuPool::All if free.is_empty() && !held.is_empty() => {
            return Err(SpecError::new(
                Some(pool.location.clone()),
                format!(
                    "`gpus: all`, but every GPU of {} is held by another container: {}",
                    host_name(engine_host),
                    sharing.held_text(&held)
                ),
                "wait for one to be let go (`tfimg ps --gpus` shows who holds them), or leave `gpus:` out to run the trials on the CPU",
            )
            .into());
        }
        GpuPool::Count(count) if !nvidia.gpus.is_empty() && free.len() < *count as usize => {
            return Err(SpecError::new(
                Some(pool.location.clone()),
                format!(
                    "`gpus: {count}`, but {} of the {} GPUs of {} {} free: {}",
                    free.len(),
                    nvidia.gpus.len(),
                    host_name(engine_host),
                    share::is_are(free.len()),
                    sharing.held_text(&held)
                ),
                if free.is_empty() {
                    "wait for one to be let go (`tfimg ps --gpus` shows who holds them), or leave `gpus:` out to run the trials on the CPU".to_string()
                } else {
                    format!("ask for fewer (`gpus: {}`), or wait for more to be let go (`tfimg ps --gpus` shows who holds them)", free.len())
                },
            )
            .into());
        }
        GpuPool::Devices(devices) => {
            let taken = sharing.taken(devices);
            if !taken.is_empty() {
                return Err(SpecError::new(
                    Some(pool.location.clone()),
                    format!(
                        "{} of {} {} held by another container: {}",
                        share::plural_gpus(&taken),
                        host_name(engine_host),
                        share::is_are(taken.len()),
                        sharing.held_text(&taken)
                    ),
                    if free.is_empty() {
                        "no GPU is free now (`tfimg ps --gpus` shows who holds them): wait, or leave `gpus:` out to run the trials on the CPU".to_string()
                    } else {
                        format!("list free ones ({}), or write `gpus: all` for every free GPU", share::free_text(&free))
                    },
                )
                .into());
            }
        }
        _ => {}
    }
    let indices: Vec<String> = match pool.gpus {
        GpuPool::All => free.iter().map(u32::to_string).collect(),
        // Unknown GPUs (nvidia-smi listed none): the first ones, as Docker would.
        GpuPool::Count(_) if nvidia.gpus.is_empty() => Vec::new(),
        GpuPool::Count(count) => match sharing.allocate(&GpuSelection::Count(count))? {
            GpuSelection::Devices(chosen) => chosen,
            _ => Vec::new(),
        },
        _ => nvidia
            .gpus
            .iter()
            .map(|gpu| gpu.index.to_string())
            .collect(),
    };
    let slots = schedule::slots(pool, &indices, engine_host)?;
    Ok((slots, Some(nvidia)))
}

/// What the facts say of the host's GPUs: listed by nvidia-smi; none, where no NVIDIA
/// driver answered on this machine, or nvidia-smi ran in a `--gpus all` container on the
/// engine's host and found none; else unknown (nothing is refused on it).
fn known_gpus(nvidia: &NvidiaFacts) -> KnownGpus<'_> {
    if !nvidia.gpus.is_empty() {
        return KnownGpus::Listed(&nvidia.gpus);
    }
    match (&nvidia.driver, &nvidia.probe) {
        (None, None) => KnownGpus::NoDriver {
            why: "no working nvidia-smi, no /proc/driver/nvidia/version",
        },
        (None, Some(probe)) if probe.outcome == ProbeOutcome::Ran => KnownGpus::NoDriver {
            why: "nvidia-smi in a `--gpus all` container there found no driver",
        },
        _ => KnownGpus::Unknown,
    }
}

/// What the pool says on its own (enough GPUs listed for `gpus_per_trial`), checked
/// before any host is asked.
pub fn check_pool(pool: &Pool) -> Result<(), SpecError> {
    match pool.gpus {
        GpuPool::All => Ok(()),
        _ => schedule::slots(pool, &[], None).map(|_| ()),
    }
}

/// The images a probe of another host may run for a sweep: its image, else (not built yet)
/// its spec's base.
pub fn images_to_probe(source: &ImageSource, spec: Option<&ResolvedSpec>) -> Vec<String> {
    match (spec, source) {
        (Some(spec), _) => vec![spec.image_reference(), spec.base.clone()],
        (None, ImageSource::Image { reference, .. }) => vec![reference.clone()],
        (None, ImageSource::Spec { .. }) => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
