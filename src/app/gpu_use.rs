//! `tfimg ps --gpus`: what the GPUs of the engine's host are used for. Per GPU its memory
//! and utilisation now (nvidia-smi) and the tfimg containers holding it; per tfimg
//! container its GPUs, the GPU memory its processes use (nvidia-smi's compute processes,
//! mapped to containers through their cgroups) and the utilisation of its GPUs. The
//! processes are this machine's: on an engine elsewhere the GPUs' use is asked there (a
//! short container, as the doctor does), not its processes.

use crate::app::{gpu_host, launch};
use crate::engine::Engine;
use crate::host::Host;
use crate::labels;
use crate::output::gpus::{build, GpuView};

/// How often `ps --gpus --watch` looks again.
pub const WATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// `ps --gpus --watch`: the view handed to `show` every [`WATCH_EVERY`], until Ctrl-C
/// ends tfimg (exit 130, as for any command that leaves nothing to clean up) or reading
/// a view fails.
pub async fn watch(
    engine: &impl Engine,
    host: &impl Host,
    team: Option<&str>,
    mut show: impl FnMut(&GpuView) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    loop {
        show(&view(engine, host, team).await?)?;
        tokio::time::sleep(WATCH_EVERY).await;
    }
}

/// The view of the engine's host's GPUs and tfimg's containers (a team's with `team`).
pub async fn view(
    engine: &impl Engine,
    host: &impl Host,
    team: Option<&str>,
) -> anyhow::Result<GpuView> {
    let mut nvidia = gpu_host::engine_nvidia(engine, host, &[]).await;
    gpu_host::engine_gpu_use(engine, host, &mut nvidia).await;
    // Every launch labels its spec and its GPUs: one listing gives both the holders (of
    // every team) and the containers shown.
    let mut containers = engine.containers_with_label(labels::SPEC).await?;
    let holders = launch::holders_among(&containers, &nvidia, |_| false);
    if let Some(team) = team {
        containers.retain(|container| {
            container.labels.get(labels::TEAM).map(String::as_str) == Some(team)
        });
    }
    let (processes, source) = match (engine.on_this_machine(), &nvidia.driver) {
        (_, None) => (Vec::new(), "no NVIDIA driver answered".to_string()),
        (true, Some(_)) => (
            host.gpu_processes(),
            "nvidia-smi on this machine".to_string(),
        ),
        (false, Some(_)) => (
            Vec::new(),
            format!(
                "the GPUs of `{}`; the GPU memory of each container's processes is shown for an engine on this machine only",
                engine.endpoint()
            ),
        ),
    };
    Ok(build(
        &nvidia.gpus,
        &nvidia.usage,
        &processes,
        &containers,
        &holders,
        source,
    ))
}
