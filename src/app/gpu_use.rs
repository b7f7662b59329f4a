//! `tfimg ps --gpus`: what the GPUs of the engine's host are used for. Per GPU its memory
//! and utilisation now (nvidia-smi) and the tfimg containers holding it; per tfimg
//! container its GPUs, the GPU memory its processes use (nvidia-smi's compute processes,
//! mapped to containers through their cgroups) and the utilisation of its GPUs. The
//! processes are this machine's: on an engine elsewhere the GPUs' use is asked there (a
//! short container, as the doctor does), not its processes.

use crate::app::gpu_host;
use crate::app::gpu_ledger::GpuLedger;
use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers, Daemon, Images};
use crate::host::prelude::{Clock, Gpus, Secrets};
use crate::labels;
use crate::output::gpus::{build, GpuView};

/// How often `ps --gpus --watch` looks again.
pub const WATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// `ps --gpus --watch`: the view handed to `show` every [`WATCH_EVERY`], until Ctrl-C
/// ends tfimg (exit 130, as for any command that leaves nothing to clean up) or reading
/// a view fails.
pub async fn watch(
    session: Session<
        '_,
        impl Containers + ContainerIo + Images + Daemon,
        impl Gpus + Secrets + Clock,
    >,
    team: Option<&str>,
    mut show: impl FnMut(&GpuView) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    loop {
        show(&view(session, team).await?)?;
        tokio::time::sleep(WATCH_EVERY).await;
    }
}

/// The view of the engine's host's GPUs and tfimg's containers (a team's with `team`).
pub async fn view(
    session: Session<
        '_,
        impl Containers + ContainerIo + Images + Daemon,
        impl Gpus + Secrets + Clock,
    >,
    team: Option<&str>,
) -> anyhow::Result<GpuView> {
    let Session { engine, host, .. } = session;
    let mut nvidia = gpu_host::engine_nvidia(session, &[]).await;
    gpu_host::engine_gpu_use(session, &mut nvidia).await;
    // Every launch labels its spec and its GPUs: one listing gives both the holders (of
    // every team) and the containers shown.
    let mut containers = engine.containers_with_label(labels::SPEC).await?;
    let ledger = GpuLedger::among(&containers, &nvidia, |_| false);
    let holders = ledger.holders();
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
    let mut view = build(
        &nvidia.gpus,
        &nvidia.usage,
        &processes,
        &containers,
        holders,
        source,
    );
    let now = host
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    for shown in &mut view.containers {
        let watched = containers.iter().find(|container| {
            container.name == shown.name
                && container.state == "running"
                && container.labels.contains_key(labels::IDLE_CONTAINERS)
        });
        if let Some(container) = watched {
            shown.idle_seconds = idle_seconds(engine, &container.id, now).await;
        }
    }
    Ok(view)
}

/// The most of the idle watch's file tfimg reads: its tar (a header, a block of data and
/// the end) is 2 KiB.
const LAST_USED_TAR_MAX: usize = 16 * 1024;

/// How long nobody has used a container its idle watch follows, from the file the watch
/// keeps ([`labels::IDLE_LAST_USED`]). The file is the container's to write: at most
/// 16 KiB of its tar are read, only a plain file of a few bytes is taken (a link, a
/// folder or anything larger is no answer), and so is anything but a time not after now.
pub async fn idle_seconds(engine: &impl ContainerIo, id: &str, now: u64) -> Option<u64> {
    use std::io::Read;
    use std::ops::ControlFlow;
    let mut tar = Vec::new();
    let found = engine
        .download(id, labels::IDLE_LAST_USED, |chunk| {
            tar.extend_from_slice(&chunk);
            match tar.len() > LAST_USED_TAR_MAX {
                true => ControlFlow::Break(()),
                false => ControlFlow::Continue(()),
            }
        })
        .await
        .ok()?;
    if !found || tar.len() > LAST_USED_TAR_MAX {
        return None;
    }
    let mut archive = tar::Archive::new(tar.as_slice());
    let mut entry = archive.entries().ok()?.next()?.ok()?;
    if !entry.header().entry_type().is_file() || entry.size() > 32 {
        return None;
    }
    let mut text = String::new();
    entry.read_to_string(&mut text).ok()?;
    let last_used: u64 = text.trim().parse().ok()?;
    now.checked_sub(last_used)
}

#[cfg(test)]
mod tests;
