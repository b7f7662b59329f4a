//! The NVIDIA facts of the host the engine runs on, which every GPU decision is made on:
//! `run`'s and `up`'s GPUs, a sweep's GPU pool, the doctor's checks. For an engine on this
//! machine (a `unix://` socket) they are this machine's, as `Host::nvidia` reads them.
//! For an engine elsewhere (ssh, tcp) they are asked there: a short container gets every
//! GPU (`--gpus all`, as `docker run` asks) and runs nvidia-smi instead of its entrypoint
//! (the toolkit puts it in), with the questions and the reading of `host::nvidia`. It
//! runs an image the engine already has, carries tfimg's label and is removed by the
//! daemon as it exits. A daemon that refuses the GPUs has no NVIDIA toolkit; over ssh,
//! nvidia-smi then runs on the host itself, for the driver alone.

use std::collections::HashMap;
use std::time::Duration;

use crate::app::session::Session;
use crate::engine::prelude::{Containers, Daemon, Images};
use crate::engine::{EngineError, OneOff};
use crate::host::nvidia::{
    parse_use, read_answer, EngineProbe, ProbeOutcome, SmiAnswer, SMI_QUERIES, USE_QUERY,
};
use crate::host::prelude::{Gpus, Secrets};
use crate::host::NvidiaFacts;
use crate::labels;

/// One nvidia-smi container may take this long (a wedged GPU can hang nvidia-smi).
const PROBE_DEADLINE: Duration = Duration::from_secs(30);
/// nvidia-smi run over ssh, likewise.
const SSH_DEADLINE: Duration = Duration::from_secs(15);

/// Where the facts were read, as messages name it: `source` of the facts.
pub const IN_CONTAINER: &str = "nvidia-smi in a `--gpus all` container";
pub const OVER_SSH: &str = "nvidia-smi over ssh";

/// The NVIDIA facts of the engine's host. `images` are what the probe may run, in order
/// of preference (the launch's own image; for the doctor the spec's image, then its
/// base): the first the engine has, else any image tfimg built there.
pub async fn engine_nvidia(
    session: Session<'_, impl Images + Containers + Daemon, impl Gpus + Secrets>,
    images: &[String],
) -> NvidiaFacts {
    let Session { engine, host, .. } = session;
    if engine.on_this_machine() {
        return host.nvidia();
    }
    let mut facts = NvidiaFacts::default();
    let (image, outcome) = match probe_image(engine, images).await {
        Ok(Some(image)) => {
            let marker = host.random_hex(6).unwrap_or_default();
            let outcome = ask_in_container(engine, &image, &marker, &mut facts).await;
            (Some(image), outcome)
        }
        Ok(None) => (None, ProbeOutcome::NoImage),
        Err(error) => (
            None,
            ProbeOutcome::Failed(format!("its images could not be listed: {error}")),
        ),
    };
    if let ProbeOutcome::Refused(_) = outcome {
        // No toolkit there; the driver may still be (what to install next depends on it).
        ask_over_ssh(engine, &mut facts).await;
    }
    facts.probe = Some(EngineProbe {
        engine: engine.endpoint().to_string(),
        image,
        outcome,
    });
    facts
}

/// What each GPU of the engine's host has in use now (`ps --gpus`), into `facts`: on this
/// machine `Host::nvidia` read it already; elsewhere one more short `--gpus all` container
/// of the probe's image asks nvidia-smi (memory and utilisation are the GPUs', the same
/// from any container; processes are not: a container sees only its own), or, where the
/// daemon refused GPUs, nvidia-smi on an ssh engine's host itself.
pub async fn engine_gpu_use(
    session: Session<'_, impl Containers + Daemon, impl Secrets>,
    facts: &mut NvidiaFacts,
) {
    let Session { engine, host, .. } = session;
    if engine.on_this_machine() || !facts.usage.is_empty() {
        return;
    }
    let Some(probe) = &facts.probe else {
        return;
    };
    let stdout = match (&probe.outcome, &probe.image) {
        (ProbeOutcome::Ran, Some(image)) => {
            let marker = host.random_hex(6).unwrap_or_default();
            run_smi(engine, image, &USE_QUERY, &marker).await.ok()
        }
        (ProbeOutcome::Refused(_), _) if facts.driver.is_some() => {
            let program: Vec<&str> = std::iter::once("nvidia-smi")
                .chain(USE_QUERY.iter().copied())
                .collect();
            engine.run_on_host(&program, SSH_DEADLINE).await
        }
        _ => None,
    };
    if let Some(stdout) = stdout {
        facts.usage = parse_use(&stdout);
    }
}

/// nvidia-smi's answers from `--gpus all` containers of `image` into `facts`; whether
/// they ran.
async fn ask_in_container(
    engine: &impl Containers,
    image: &str,
    marker: &str,
    facts: &mut NvidiaFacts,
) -> ProbeOutcome {
    let asked = smi_answer(async |args: &[&str]| run_smi(engine, image, args, marker).await).await;
    match asked {
        Ok(answer) => {
            if let Some(answer) = answer {
                answer.fill(facts, IN_CONTAINER);
            }
            ProbeOutcome::Ran
        }
        Err(stop) => stop,
    }
}

/// nvidia-smi's answers on an ssh engine's host itself into `facts` (nothing on other
/// engines, or where it does not answer).
async fn ask_over_ssh(engine: &impl Daemon, facts: &mut NvidiaFacts) {
    let asked = smi_answer(async |args: &[&str]| {
        let program: Vec<&str> = std::iter::once("nvidia-smi")
            .chain(args.iter().copied())
            .collect();
        let stdout = engine.run_on_host(&program, SSH_DEADLINE).await;
        Ok::<_, ()>(stdout.unwrap_or_default())
    })
    .await;
    if let Ok(Some(answer)) = asked {
        answer.fill(facts, OVER_SSH);
    }
}

/// The first of `images` the engine has, else the first (by name) of the images tfimg
/// built there: they all have a shell and a C library, which nvidia-smi needs.
async fn probe_image(
    engine: &impl Images,
    images: &[String],
) -> Result<Option<String>, EngineError> {
    for image in images {
        if engine.image(image).await?.is_some() {
            return Ok(Some(image.clone()));
        }
    }
    let mut built: Vec<String> = engine
        .images_with_label(labels::SPEC)
        .await?
        .into_iter()
        .map(|image| image.tags.into_iter().min().unwrap_or(image.id))
        .collect();
    built.sort();
    Ok(built.into_iter().next())
}

/// nvidia-smi's questions in order through `ask` (each answered with nvidia-smi's
/// stdout), read as `host::nvidia::facts` reads them: the first answer naming a driver,
/// then the table for the CUDA version the driver supports. An `Err` ends the questions.
async fn smi_answer<E>(
    ask: impl AsyncFn(&[&str]) -> Result<String, E>,
) -> Result<Option<SmiAnswer>, E> {
    for query in SMI_QUERIES {
        let Some(mut answer) = read_answer(&ask(query).await?) else {
            continue;
        };
        if answer.wants_table {
            if let Ok(table) = ask(&[]).await {
                answer.add_table(&table);
            }
        }
        return Ok(Some(answer));
    }
    Ok(None)
}

/// One short `--gpus all` container running `nvidia-smi ARGS`: its stdout, or why there
/// is none (the daemon refused the GPUs, or something else failed).
async fn run_smi(
    engine: &impl Containers,
    image: &str,
    args: &[&str],
    marker: &str,
) -> Result<String, ProbeOutcome> {
    let one_off = OneOff {
        image: image.to_string(),
        entrypoint: Some(vec!["nvidia-smi".to_string()]),
        command: args.iter().map(|arg| arg.to_string()).collect(),
        labels: HashMap::from([(labels::GPU_PROBE.to_string(), marker.to_string())]),
        network_disabled: true,
        all_gpus: true,
        auto_remove: true,
        ..OneOff::default()
    };
    match engine.run_once(&one_off, PROBE_DEADLINE).await {
        Ok(finished) => Ok(finished.stdout),
        Err(EngineError::GpuToolkitMissing { message }) => Err(ProbeOutcome::Refused(message)),
        Err(error) => Err(ProbeOutcome::Failed(format!(
            "a `--gpus all` container failed: {error}"
        ))),
    }
}

#[cfg(test)]
mod tests;
