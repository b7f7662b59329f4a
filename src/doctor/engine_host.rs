//! The NVIDIA verdicts for an engine on another host, judged on what a short `--gpus all`
//! container found there (`app::gpu_host`): the driver and the GPUs it listed, or why
//! none were seen (no image to run, the daemon refusing the GPUs, the container
//! failing), and whether Docker there hands GPUs over: the container having run is the
//! proof (programs on this machine's PATH say nothing about that host). Every summary
//! names the engine.

use super::driver::{driver_summary, gpus_check, TOOLKIT_FIX};
use super::{check, Check, Verdict};
use crate::engine::EngineInfo;
use crate::host::nvidia::{EngineProbe, NvidiaFacts, ProbeOutcome};

/// The driver and its GPUs on the engine's host, or why it is not known.
pub fn driver_checks(nvidia: &NvidiaFacts, probe: &EngineProbe) -> Vec<Check> {
    let engine = &probe.engine;
    if let Some(driver) = &nvidia.driver {
        let summary = driver_summary(nvidia, driver, Some(engine));
        return vec![
            check("nvidia-driver", Verdict::Pass, summary, None),
            gpus_check(nvidia),
        ];
    }
    let install = format!("to use GPUs there, install the NVIDIA driver for its GPU on `{engine}` (Debian/Ubuntu: `sudo apt-get install nvidia-driver` or `ubuntu-drivers install`) and reboot; CPU images need nothing");
    let (summary, fix) = match &probe.outcome {
        ProbeOutcome::Ran => (
            format!("no NVIDIA driver answered on `{engine}`: nvidia-smi in a `--gpus all` container listed nothing: GPU images will run on the CPU only"),
            install,
        ),
        ProbeOutcome::Refused(_) => (
            format!("no NVIDIA driver found on `{engine}` (Docker there cannot hand GPUs over, and no nvidia-smi answered over ssh): GPU images will run on the CPU only"),
            install,
        ),
        ProbeOutcome::NoImage => (
            format!("cannot tell whether `{engine}` has an NVIDIA driver: the engine has no image to run a `--gpus all` container with"),
            build_first(),
        ),
        ProbeOutcome::Failed(message) => (
            format!("cannot tell whether `{engine}` has an NVIDIA driver: {message}"),
            format!("on `{engine}`, `docker run --rm --gpus all IMAGE nvidia-smi` shows what fails (a driver that is not loaded, a broken toolkit)"),
        ),
        ProbeOutcome::Unreached => (
            format!("cannot check the GPUs of `{engine}`: its Docker engine did not answer"),
            "see the `docker` check; once the engine answers, `tfimg doctor` asks its host".to_string(),
        ),
    };
    vec![check("nvidia-driver", Verdict::Warn, summary, Some(fix))]
}

/// Whether Docker on the engine's host hands GPUs to containers: a failure where a
/// driver is known, a warning where none is.
pub fn toolkit_check(
    nvidia: &NvidiaFacts,
    probe: &EngineProbe,
    info: Option<&EngineInfo>,
) -> Check {
    let engine = &probe.engine;
    let image = probe
        .image
        .as_ref()
        .map(|image| format!(" (image `{image}`)"))
        .unwrap_or_default();
    let mut other_ways = Vec::new();
    if info.is_some_and(|info| info.runtimes.iter().any(|runtime| runtime == "nvidia")) {
        other_ways.push("`nvidia` runtime registered with Docker");
    }
    if info.is_some_and(|info| !info.cdi_spec_dirs.is_empty()) {
        other_ways.push("CDI spec folders reported by Docker");
    }
    let others = other_ways
        .iter()
        .map(|way| format!("; {way}"))
        .collect::<String>();
    let toolkit_fix = format!("on `{engine}`: {TOOLKIT_FIX}");
    match &probe.outcome {
        ProbeOutcome::Ran => check(
            "container-toolkit",
            Verdict::Pass,
            format!("a `--gpus all` container ran nvidia-smi on `{engine}`{image}{others}"),
            None,
        ),
        ProbeOutcome::Refused(message) if other_ways.is_empty() => check(
            "container-toolkit",
            if nvidia.driver.is_some() {
                Verdict::Fail
            } else {
                Verdict::Warn
            },
            format!("the NVIDIA container toolkit is missing on `{engine}`: Docker there refused a `--gpus all` container ({})", message.trim()),
            Some(toolkit_fix),
        ),
        ProbeOutcome::Refused(_) => check(
            "container-toolkit",
            Verdict::Pass,
            format!("Docker on `{engine}` refused a `--gpus all` container, but has {}", other_ways.join(" and ")),
            None,
        ),
        ProbeOutcome::NoImage => check(
            "container-toolkit",
            Verdict::Warn,
            format!("cannot tell whether Docker on `{engine}` hands GPUs to containers: it has no image to run a `--gpus all` container with"),
            Some(build_first()),
        ),
        ProbeOutcome::Failed(message) => check(
            "container-toolkit",
            Verdict::Warn,
            format!("cannot tell whether Docker on `{engine}` hands GPUs to containers{image}: {message}"),
            Some(toolkit_fix),
        ),
        ProbeOutcome::Unreached => check(
            "container-toolkit",
            Verdict::Warn,
            format!("cannot tell whether Docker on `{engine}` hands GPUs to containers: it did not answer"),
            None,
        ),
    }
}

fn build_first() -> String {
    "build or load an image there first (`tfimg build cpu-headless` with the same engine), then run `tfimg doctor` again".to_string()
}

#[cfg(test)]
mod tests;
