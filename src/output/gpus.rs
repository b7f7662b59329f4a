//! `tfimg ps --gpus`: the view of the GPUs of the engine's host (built from what
//! `app::gpu_use` gathers) and how the terminal shows it: a table of the GPUs, then one of
//! the containers holding them, and where the use was read; or the view as JSON.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::engine::ContainerFacts;
use crate::host::nvidia::{GpuProcess, GpuUse};
use crate::labels;
use crate::plan::gpus::share::Holder;
use crate::plan::gpus::HostGpu;

/// What `ps --gpus` shows (and prints as JSON with `--json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuView {
    pub gpus: Vec<GpuLine>,
    pub containers: Vec<ContainerGpus>,
    /// Where the use was read: `nvidia-smi` on this machine, or why it was not.
    pub source: String,
}

/// One GPU of the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuLine {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub memory_used_mib: Option<u64>,
    pub memory_total_mib: Option<u64>,
    /// Percent of the last sample period a kernel ran.
    pub utilization: Option<u32>,
    /// The tfimg containers holding it.
    pub held_by: Vec<String>,
}

/// One tfimg container holding GPUs, or running processes on one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerGpus {
    pub name: String,
    pub state: String,
    /// The host user who started it.
    pub owner: Option<String>,
    pub team: Option<String>,
    pub member: Option<String>,
    /// The host indices of the GPUs it holds.
    pub gpus: Vec<u32>,
    pub sharing: bool,
    /// The GPU memory its processes use, MiB (`None` when the use is unknown).
    pub memory_used_mib: Option<u64>,
    pub processes: usize,
    /// The highest utilisation among its GPUs (they may be shared: it is the GPU's).
    pub utilization: Option<u32>,
    /// Seconds since someone last used it, for a container under the idle watch
    /// (`--idle-containers`, a team's `idle: {containers: ...}`); `None` otherwise.
    pub idle_seconds: Option<u64>,
}

/// The view from what was gathered. Pure.
pub fn build(
    gpus: &[HostGpu],
    usage: &[GpuUse],
    processes: &[GpuProcess],
    containers: &[ContainerFacts],
    holders: &[Holder],
    source: String,
) -> GpuView {
    let use_of = |index: u32| usage.iter().find(|gpu| gpu.index == index);
    let mut lines: Vec<GpuLine> = gpus
        .iter()
        .map(|gpu| GpuLine {
            index: gpu.index,
            uuid: gpu.uuid.clone(),
            name: gpu.name.clone(),
            memory_used_mib: use_of(gpu.index).and_then(|used| used.memory_used_mib),
            memory_total_mib: use_of(gpu.index)
                .and_then(|used| used.memory_total_mib)
                .or(gpu.memory_mib),
            utilization: use_of(gpu.index).and_then(|used| used.utilization_gpu),
            held_by: holders
                .iter()
                .filter(|holder| holder.gpus.contains(&gpu.index))
                .map(|holder| holder.container.clone())
                .collect(),
        })
        .collect();
    lines.sort_by_key(|line| line.index);
    let known_use = !usage.is_empty();
    let mut shown: Vec<ContainerGpus> = containers
        .iter()
        .filter_map(|container| {
            let own: Vec<&GpuProcess> = processes
                .iter()
                .filter(|process| process.container.as_deref() == Some(container.id.as_str()))
                .collect();
            let holder = holders
                .iter()
                .find(|holder| holder.container == container.name);
            let mut held: BTreeSet<u32> = holder.map(|h| h.gpus.clone()).unwrap_or_default();
            // A process on a GPU it does not hold (`--gpus all` before sharing was asked).
            held.extend(own.iter().filter_map(|process| {
                gpus.iter()
                    .find(|gpu| gpu.uuid == process.gpu_uuid)
                    .map(|gpu| gpu.index)
            }));
            if held.is_empty() {
                return None;
            }
            let label = |key: &str| container.labels.get(key).cloned();
            Some(ContainerGpus {
                name: container.name.clone(),
                state: container.state.clone(),
                owner: label(labels::OWNER),
                team: label(labels::TEAM),
                member: label(labels::MEMBER),
                gpus: held.iter().copied().collect(),
                sharing: label(labels::GPUS_SHARED).as_deref() == Some("true"),
                memory_used_mib: known_use
                    .then(|| own.iter().filter_map(|process| process.used_mib).sum()),
                processes: own.len(),
                utilization: held
                    .iter()
                    .filter_map(|index| use_of(*index).and_then(|used| used.utilization_gpu))
                    .max(),
                idle_seconds: None,
            })
        })
        .collect();
    shown.sort_by(|a, b| a.name.cmp(&b.name));
    GpuView {
        gpus: lines,
        containers: shown,
        source,
    }
}

/// The table rows of the view: GPUs, then containers.
pub fn gpu_rows(view: &GpuView) -> Vec<Vec<String>> {
    view.gpus
        .iter()
        .map(|gpu| {
            vec![
                gpu.index.to_string(),
                gpu.name.clone(),
                mib_of(gpu.memory_used_mib, gpu.memory_total_mib),
                percent(gpu.utilization),
                if gpu.held_by.is_empty() {
                    "free".to_string()
                } else {
                    gpu.held_by.join(", ")
                },
            ]
        })
        .collect()
}

pub fn container_rows(view: &GpuView) -> Vec<Vec<String>> {
    view.containers
        .iter()
        .map(|container| {
            let gpus = container
                .gpus
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",");
            vec![
                container.name.clone(),
                container.owner.clone().unwrap_or_else(|| "-".to_string()),
                match (&container.team, &container.member) {
                    (Some(team), Some(member)) => format!("{team}/{member}"),
                    _ => "-".to_string(),
                },
                if container.sharing {
                    format!("{gpus} (shared)")
                } else {
                    gpus
                },
                container
                    .memory_used_mib
                    .map(|used| format!("{used} MiB"))
                    .unwrap_or_else(|| "-".to_string()),
                percent(container.utilization),
                container
                    .idle_seconds
                    .map(idle_text)
                    .unwrap_or_else(|| "-".to_string()),
                container.state.clone(),
            ]
        })
        .collect()
}

/// `45s`, `2h 5m` (whole minutes from a minute on).
fn idle_text(seconds: u64) -> String {
    let shown = if seconds < 60 {
        seconds
    } else {
        seconds - seconds % 60
    };
    humantime::format_duration(std::time::Duration::from_secs(shown)).to_string()
}

fn mib_of(used: Option<u64>, total: Option<u64>) -> String {
    match (used, total) {
        (Some(used), Some(total)) => format!("{used} / {total} MiB"),
        (None, Some(total)) => format!("- / {total} MiB"),
        _ => "-".to_string(),
    }
}

fn percent(value: Option<u32>) -> String {
    value
        .map(|value| format!("{value}%"))
        .unwrap_or_else(|| "-".to_string())
}

/// One screen of `ps --gpus --watch`: the terminal cleared, what it is and where the use
/// came from first (on stdout, so the screen holds it), then the tables.
pub fn print_watched(view: &GpuView, every: std::time::Duration) -> anyhow::Result<()> {
    super::streams::out(b"\x1b[H\x1b[2J")?;
    outln!(
        "tfimg ps --gpus: every {}s, Ctrl-C ends; use from {}",
        every.as_secs(),
        view.source
    );
    outln!();
    print_tables(view)?;
    Ok(())
}

pub fn print_view(view: &GpuView, json: bool) -> anyhow::Result<()> {
    if json {
        return super::print_json(view);
    }
    print_tables(view)?;
    errln!("note: use from {}", view.source);
    Ok(())
}

/// The GPUs' table, then the containers' (when there are any).
fn print_tables(view: &GpuView) -> anyhow::Result<()> {
    super::print_table(
        &["GPU", "NAME", "MEMORY", "UTIL", "HELD BY"],
        &gpu_rows(view),
    )?;
    if !view.containers.is_empty() {
        outln!();
        let header = [
            "CONTAINER",
            "OWNER",
            "TEAM/MEMBER",
            "GPUS",
            "GPU MEMORY",
            "UTIL",
            "IDLE",
            "STATE",
        ];
        super::print_table(&header, &container_rows(view))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
