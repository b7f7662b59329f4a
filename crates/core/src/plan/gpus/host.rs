//! The GPUs a run gets when `--gpus` is not given (the host's facts decide), and the check
//! of an explicit selection against the GPUs the host reports. Pure: the caller gathers
//! the facts.

use super::share::{self, Sharing};
use super::GpuSelection;
use crate::input::source::printable;
use crate::input::InputError;
use crate::notice::Notice;

/// What the host offers GPU containers: the facts the default `--gpus` is decided on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuHost {
    /// The NVIDIA driver's version, when one answered (nvidia-smi or /proc).
    pub driver: Option<String>,
    /// GPUs nvidia-smi lists.
    pub gpus: usize,
    /// Whether Docker can hand GPUs to containers: the NVIDIA container toolkit's hook,
    /// the `nvidia` runtime registered with the daemon, or CDI spec folders.
    pub toolkit: bool,
    /// Why the driver cannot run the image's CUDA (too old), when it cannot.
    pub driver_problem: Option<String>,
    /// The engine's URL when these are the facts of another host, the engine's (messages
    /// name it); `None`: this host.
    pub engine_host: Option<String>,
}

/// How messages name the host GPU facts are about: `this host`, or the engine's.
pub fn host_name(engine_host: Option<&str>) -> String {
    match engine_host {
        None => "this host".to_string(),
        Some(url) => format!("the engine's host `{url}`"),
    }
}

/// The GPUs a run gets, and what to tell the user about it (one line for stderr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuChoice {
    pub selection: GpuSelection,
    pub note: Option<Notice>,
}

/// The GPUs of a run: what `--gpus` says when given (`none` opts out, silently); for a
/// GPU image without `--gpus`, all GPUs when the host has them and Docker can hand them
/// over (as `docker run --gpus all` in every guide), else the CPU with a note saying why
/// and how to get them; never any for other images. `host` is read only for that
/// default (the caller gathers it only then: see [`needs_host_facts`]).
///
/// With `sharing` (the GPUs tfimg's containers hold), the default takes only the free
/// GPUs, and the CPU when none is free (naming who holds them), unless the launch shares.
pub fn choose(
    requested: Option<&GpuSelection>,
    gpu_image: bool,
    image: &str,
    host: Option<&GpuHost>,
    sharing: Option<&Sharing>,
) -> GpuChoice {
    let chosen = |selection: GpuSelection, note: Option<Notice>| GpuChoice { selection, note };
    if let Some(requested) = requested {
        return chosen(requested.clone(), None);
    }
    let Some(host) = host.filter(|_| gpu_image) else {
        return chosen(GpuSelection::None, None);
    };
    let name = host_name(host.engine_host.as_deref());
    let on_the_cpu = |why: String, fix: &str| {
        chosen(
            GpuSelection::None,
            Some(Notice::note(format!(
                "`{image}` runs on the CPU: {why}; {fix} (`tfimg doctor` checks the host; `--gpus none` skips this note)"
            ))),
        )
    };
    match &host.driver {
        None => on_the_cpu(
            format!("no NVIDIA driver answers on {name} (no working `nvidia-smi`)"),
            "where a GPU, its driver and the NVIDIA Container Toolkit are installed, GPU images get all GPUs",
        ),
        Some(driver) if host.gpus == 0 => on_the_cpu(
            format!("the NVIDIA driver {driver} lists no GPU (`nvidia-smi`)"),
            "check `nvidia-smi`, or pick GPUs with `--gpus`",
        ),
        Some(_) if !host.toolkit => on_the_cpu(
            format!(
                "{name} has {} but Docker cannot hand GPUs to containers (the NVIDIA Container Toolkit is missing)",
                gpu_count(host.gpus)
            ),
            "install it and restart Docker to get them",
        ),
        Some(_) => match &host.driver_problem {
            Some(problem) => on_the_cpu(
                problem.clone(),
                "upgrade the driver to use the GPUs",
            ),
            None => {
                let held = sharing
                    .filter(|sharing| !sharing.share)
                    .map(|sharing| (sharing, sharing.held()))
                    .filter(|(_, held)| !held.is_empty());
                match held {
                    None => chosen(
                        GpuSelection::All,
                        Some(Notice::note(format!(
                            "`{image}` gets all {} of {name} (the default for GPU images; `--gpus none` runs it on the CPU, `--gpus 0` picks one)",
                            gpu_count(host.gpus)
                        ))),
                    ),
                    Some((sharing, held)) => {
                        let free = sharing.free();
                        if free.is_empty() {
                            return on_the_cpu(
                                format!(
                                    "every GPU of {name} is held by another container ({})",
                                    sharing.held_text(&held)
                                ),
                                "`--share-gpus` shares them, or stop a holder (`tfimg ps` shows them)",
                            );
                        }
                        chosen(
                            GpuSelection::Devices(free.iter().map(u32::to_string).collect()),
                            Some(Notice::note(format!(
                                "`{image}` gets the free {} of {name} ({} held: {}; `--share-gpus` takes them too)",
                                share::plural_gpus(&free),
                                share::plural_gpus(&held),
                                sharing.held_text(&held)
                            ))),
                        )
                    }
                }
            }
        },
    }
}

/// The note when the daemon refused the GPUs [`choose`] picked by default (its `nvidia`
/// device driver is missing: the toolkit was installed but Docker not restarted, or its
/// hook is on tfimg's PATH only); the run goes on on the CPU.
pub fn daemon_refused_note(image: &str, daemon_message: &str) -> Notice {
    Notice::note(format!(
        "`{image}` runs on the CPU: Docker could not hand it the GPUs ({}); install the NVIDIA Container Toolkit and restart Docker to get them (`tfimg doctor` checks the host; `--gpus none` skips this note)",
        printable(daemon_message.trim())
    ))
}

/// Whether [`choose`] reads the host: only for a GPU image started without `--gpus`
/// (asking nvidia-smi and the daemon costs time nothing else needs).
pub fn needs_host_facts(requested: Option<&GpuSelection>, gpu_image: bool) -> bool {
    requested.is_none() && gpu_image
}

fn gpu_count(gpus: usize) -> String {
    if gpus == 1 {
        "1 GPU".to_string()
    } else {
        format!("{gpus} GPUs")
    }
}

/// A GPU the host reports (nvidia-smi).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostGpu {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub memory_mib: Option<u64>,
    /// nvidia-smi's `compute_cap` (drivers of the 470 branch and older cannot report it).
    pub compute_capability: Option<crate::spec::compat::ComputeCapability>,
}

/// Refuses indices, UUIDs or counts the host does not have (when its GPUs are known);
/// `engine_host` as in [`GpuHost`].
pub fn check_against_host(
    selection: &GpuSelection,
    host: &[HostGpu],
    engine_host: Option<&str>,
) -> Result<(), InputError> {
    let name = host_name(engine_host);
    let known = || {
        host.iter()
            .map(|gpu| format!("{} ({}, {})", gpu.index, gpu.uuid, gpu.name))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match selection {
        GpuSelection::Count(count) if *count as usize > host.len() => Err(InputError::new(
            format!(
                "`--gpus {count}` asks for more GPUs than {name} has ({})",
                host.len()
            ),
            format!("{name} has: {}", known()),
        )),
        GpuSelection::Devices(devices) => {
            for device in devices {
                let found = host.iter().any(|gpu| {
                    gpu.index.to_string() == *device
                        || gpu.uuid == *device
                        || device.starts_with("MIG-")
                });
                if !found {
                    return Err(InputError::new(
                        format!("GPU `{device}` does not exist on {name}"),
                        if host.is_empty() {
                            format!("nvidia-smi lists no GPU on {name}; run `tfimg doctor`")
                        } else {
                            format!("{name} has: {}", known())
                        },
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
