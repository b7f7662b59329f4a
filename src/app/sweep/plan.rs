//! A sweep's slots, laid out on the GPUs of the engine's host (`gpu_host`): the pool's
//! devices checked against them, `gpus: all` made into their indices. A CPU pool asks
//! nothing of any host.

use crate::app::gpu_host;
use crate::engine::Engine;
use crate::host::{Host, NvidiaFacts};
use crate::input::source::SpecError;
use crate::spec::ResolvedSpec;
use crate::sweep::schedule::{self, Slot};
use crate::sweep::{GpuPool, ImageSource, Pool};

/// The slots of `pool` on the engine's host, and the facts they were planned on (for the
/// trials' launches; `None` for a CPU pool). `images`: what a probe of another host may
/// run ([`images_to_probe`]).
pub async fn plan_slots(
    engine: &impl Engine,
    host: &impl Host,
    pool: &Pool,
    images: &[String],
) -> anyhow::Result<(Vec<Slot>, Option<NvidiaFacts>)> {
    if pool.gpus == GpuPool::Cpu {
        return Ok((schedule::slots(pool, &[], None)?, None));
    }
    let nvidia = gpu_host::engine_nvidia(engine, host, images).await;
    let engine_host = nvidia.probe.as_ref().map(|probe| probe.engine.as_str());
    schedule::check_pool_against_host(pool, &nvidia.gpus, engine_host)?;
    let indices: Vec<String> = nvidia
        .gpus
        .iter()
        .map(|gpu| gpu.index.to_string())
        .collect();
    let slots = schedule::slots(pool, &indices, engine_host)?;
    Ok((slots, Some(nvidia)))
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
#[path = "plan_tests.rs"]
mod tests;
