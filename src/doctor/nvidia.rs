//! The NVIDIA host's verdicts: driver, GPUs, container toolkit, default runtime, and the
//! driver against an image's CUDA; also the facts `tfimg run` decides GPUs on and the
//! failure it must not start a GPU container past.

use super::driver::{driver_summary, gpus_check, TOOLKIT_FIX};
use super::{check, engine_host, Check, Verdict};
use crate::engine::EngineInfo;
use crate::host::nvidia::{NvidiaFacts, ProbeOutcome};
use crate::plan::gpus::GpuHost;
use crate::spec::compat::{self, DriverVerdict, Version};
use crate::spec::resolved::GpuStack;

/// The driver, the GPUs it lists, the container toolkit and Docker's default runtime: of
/// this machine, or of the engine's host when the facts are another host's
/// (`engine_host`).
pub fn nvidia_checks(nvidia: &NvidiaFacts, info: Option<&EngineInfo>) -> Vec<Check> {
    if let Some(probe) = &nvidia.probe {
        let mut checks = engine_host::driver_checks(nvidia, probe);
        if probe.outcome == ProbeOutcome::Unreached {
            return checks;
        }
        checks.push(engine_host::toolkit_check(nvidia, probe, info));
        checks.extend(info.map(default_runtime_check));
        return checks;
    }
    let mut checks = match &nvidia.driver {
        None => vec![check(
            "nvidia-driver",
            Verdict::Warn,
            "no NVIDIA driver found (no working nvidia-smi, no /proc/driver/nvidia/version): GPU images will run on the CPU only",
            Some("to use GPUs, install the NVIDIA driver for your GPU (Debian/Ubuntu: `sudo apt-get install nvidia-driver` or `ubuntu-drivers install`) and reboot; CPU images need nothing".to_string()),
        )],
        Some(driver) => vec![
            check("nvidia-driver", Verdict::Pass, driver_summary(nvidia, driver, None), None),
            gpus_check(nvidia),
        ],
    };
    checks.push(toolkit_check(nvidia, info));
    if let Some(info) = info {
        checks.push(default_runtime_check(info));
    }
    checks
}

/// Whether Docker can hand GPUs over, and each way it can: a failure where a driver is
/// installed, a warning where none is (the toolkit is only needed for GPUs).
fn toolkit_check(nvidia: &NvidiaFacts, info: Option<&EngineInfo>) -> Check {
    let runtime_registered =
        info.is_some_and(|info| info.runtimes.iter().any(|runtime| runtime == "nvidia"));
    let cdi = info.is_some_and(|info| !info.cdi_spec_dirs.is_empty());
    let mut ways: Vec<String> = nvidia
        .toolkit_programs
        .iter()
        .map(|program| format!("{program} on PATH"))
        .collect();
    if runtime_registered {
        ways.push("`nvidia` runtime registered with Docker".to_string());
    }
    if cdi {
        ways.push("CDI spec folders reported by Docker".to_string());
    }
    let toolkit_fix = TOOLKIT_FIX.to_string();
    let usable = toolkit_usable(nvidia, info);
    match (usable, nvidia.driver.is_some()) {
        (true, _) => check("container-toolkit", Verdict::Pass, ways.join("; "), None),
        (false, true) => check(
            "container-toolkit",
            Verdict::Fail,
            "the NVIDIA container toolkit is missing: containers cannot use the GPUs (`--gpus` fails with \"could not select device driver\")",
            Some(toolkit_fix),
        ),
        (false, false) => check(
            "container-toolkit",
            Verdict::Warn,
            "the NVIDIA container toolkit is not installed (only needed for GPUs)",
            Some(toolkit_fix),
        ),
    }
}

/// `nvidia` as Docker's default runtime hands every GPU to images that ask for all in
/// their environment, without `--gpus`.
pub(super) fn default_runtime_check(info: &EngineInfo) -> Check {
    if info.default_runtime == "nvidia" {
        check(
            "default-runtime",
            Verdict::Warn,
            "`nvidia` is Docker's default runtime: containers of images that set NVIDIA_VISIBLE_DEVICES=all see every GPU without asking",
            Some("remove \"default-runtime\": \"nvidia\" from /etc/docker/daemon.json and restart Docker; tfimg requests GPUs explicitly with --gpus".to_string()),
        )
    } else {
        check(
            "default-runtime",
            Verdict::Pass,
            format!(
                "default runtime `{}`: containers get GPUs only when asked",
                info.default_runtime
            ),
            None,
        )
    }
}

/// The image's CUDA against the host driver: pass at or above the toolkit's driver, warn
/// between the minor-version-compatibility minimum and it, fail below.
pub fn driver_check(gpu: &GpuStack, driver: &str) -> Check {
    let (Some(cuda), Some(version)) = (Version::parse(&gpu.cuda), Version::parse(driver)) else {
        return check(
            "driver-vs-cuda",
            Verdict::Warn,
            format!("cannot compare driver `{driver}` with CUDA {}", gpu.cuda),
            None,
        );
    };
    let Some(row) = compat::cuda_row_for(&cuda) else {
        return check(
            "driver-vs-cuda",
            Verdict::Warn,
            format!("no driver table for CUDA {}", gpu.cuda),
            None,
        );
    };
    match compat::driver_verdict(row, &version) {
        DriverVerdict::Supported => check(
            "driver-vs-cuda",
            Verdict::Pass,
            format!("driver {driver} fully supports CUDA {} (needs {} or later)", gpu.cuda, row.driver_min),
            None,
        ),
        DriverVerdict::MinorVersionCompatibility => check(
            "driver-vs-cuda",
            Verdict::Warn,
            format!(
                "driver {driver} runs CUDA {} only through minor-version compatibility ({} or later; full support from {}): PTX from newer toolkits cannot be JIT-compiled",
                gpu.cuda, row.driver_compat_min, row.driver_min
            ),
            Some(format!("upgrade the NVIDIA driver to {} or later for full support", row.driver_min)),
        ),
        DriverVerdict::TooOld => check(
            "driver-vs-cuda",
            Verdict::Fail,
            format!(
                "driver {driver} is too old for CUDA {}: it needs {} or later ({} with minor-version compatibility)",
                gpu.cuda, row.driver_min, row.driver_compat_min
            ),
            Some(format!(
                "upgrade the NVIDIA driver to {} or later (at least {}), or use a spec with an older TensorFlow and CUDA",
                row.driver_min, row.driver_compat_min
            )),
        ),
    }
}

/// Whether Docker can hand GPUs to containers: the toolkit's hook on PATH (dockerd
/// registers its `nvidia` device driver from it; on another host, a `--gpus all`
/// container that ran there is the proof), the `nvidia` runtime registered with the
/// daemon, or CDI spec folders the daemon reports.
pub fn toolkit_usable(nvidia: &NvidiaFacts, info: Option<&EngineInfo>) -> bool {
    let device_driver = match &nvidia.probe {
        Some(probe) => probe.outcome == ProbeOutcome::Ran,
        None => nvidia
            .toolkit_programs
            .iter()
            .any(|program| program == "nvidia-container-runtime-hook"),
    };
    device_driver
        || info.is_some_and(|info| {
            info.runtimes.iter().any(|runtime| runtime == "nvidia")
                || !info.cdi_spec_dirs.is_empty()
        })
}

/// The host facts `tfimg run` decides a GPU image's default GPUs on
/// (`plan::gpus::choose`): the same driver and toolkit checks as `--gpus`.
pub fn gpu_host(nvidia: &NvidiaFacts, info: &EngineInfo, gpu: Option<&GpuStack>) -> GpuHost {
    let driver_problem = match (gpu, &nvidia.driver) {
        (Some(gpu), Some(driver)) => {
            Some(driver_check(gpu, driver)).filter(|check| check.verdict == Verdict::Fail)
        }
        _ => None,
    };
    GpuHost {
        driver: nvidia.driver.clone(),
        gpus: nvidia.gpus.len(),
        toolkit: toolkit_usable(nvidia, Some(info)),
        driver_problem: driver_problem.map(|check| check.summary),
        engine_host: nvidia.probe.as_ref().map(|probe| probe.engine.clone()),
    }
}

/// What `tfimg run --gpus` must not start past: a failing driver or toolkit check.
pub fn gpu_launch_problem(
    nvidia: &NvidiaFacts,
    info: &EngineInfo,
    gpu: Option<&GpuStack>,
) -> Option<Check> {
    let mut checks = nvidia_checks(nvidia, Some(info));
    if let (Some(gpu), Some(driver)) = (gpu, &nvidia.driver) {
        checks.push(driver_check(gpu, driver));
    }
    checks
        .into_iter()
        .find(|check| check.verdict == Verdict::Fail)
}

#[cfg(test)]
mod tests;
