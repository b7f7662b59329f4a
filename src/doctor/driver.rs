//! What the NVIDIA verdicts of this machine (`nvidia`) and of an engine's host
//! (`engine_host`) both say: the driver's summary, the GPUs it lists, the toolkit's fix.

use super::{check, Check, Verdict};
use crate::host::nvidia::NvidiaFacts;

/// How to install the container toolkit (a remote host's fix says where).
pub(super) const TOOLKIT_FIX: &str = "install the NVIDIA Container Toolkit (`sudo apt-get install nvidia-container-toolkit` from NVIDIA's repository), then `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker";

/// `driver 580.65.06[ on `ENGINE`], supports CUDA up to 13.0 (from SOURCE)`: a driver that
/// answered, on this machine or (`engine`) the engine's host.
pub(super) fn driver_summary(nvidia: &NvidiaFacts, driver: &str, engine: Option<&str>) -> String {
    let on = engine
        .map(|engine| format!(" on `{engine}`"))
        .unwrap_or_default();
    let cuda = nvidia
        .driver_cuda
        .as_ref()
        .map(|cuda| format!(", supports CUDA up to {cuda}"))
        .unwrap_or_default();
    let source = nvidia.source.as_deref().unwrap_or_default();
    format!("driver {driver}{on}{cuda} (from {source})")
}

/// The GPUs the driver lists, with their UUIDs and memory.
pub(super) fn gpus_check(nvidia: &NvidiaFacts) -> Check {
    let on = nvidia
        .probe
        .as_ref()
        .map(|probe| format!(" on `{}`", probe.engine))
        .unwrap_or_default();
    if nvidia.gpus.is_empty() {
        return check(
            "gpus",
            Verdict::Warn,
            format!("the driver{on} lists no GPU"),
            Some(
                "check `nvidia-smi`; a GPU may be in use by another driver or disabled".to_string(),
            ),
        );
    }
    let listed: Vec<String> = nvidia
        .gpus
        .iter()
        .map(|gpu| {
            let mut text = format!("{}: {}", gpu.index, gpu.name);
            if !gpu.uuid.is_empty() {
                text.push_str(&format!(" {}", gpu.uuid));
            }
            if let Some(memory) = gpu.memory_mib {
                text.push_str(&format!(" {memory} MiB"));
            }
            text
        })
        .collect();
    check("gpus", Verdict::Pass, listed.join("; "), None)
}
