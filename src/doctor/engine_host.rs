//! The NVIDIA verdicts for an engine on another host, judged on what a short `--gpus all`
//! container found there (`app::gpu_host`): the driver and the GPUs it listed, or why
//! none were seen (no image to run, the daemon refusing the GPUs, the container
//! failing), and whether Docker there hands GPUs over: the container having run is the
//! proof (programs on this machine's PATH say nothing about that host). Every summary
//! names the engine.

use super::nvidia::{driver_summary, gpus_check, TOOLKIT_FIX};
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
mod tests {
    use super::*;
    use crate::doctor::{gpu_host, nvidia_checks};
    use crate::plan::gpus::HostGpu;

    const URL: &str = "ssh://me@gpu-box";

    fn facts(driver: Option<&str>, outcome: ProbeOutcome) -> NvidiaFacts {
        NvidiaFacts {
            driver: driver.map(str::to_string),
            driver_cuda: driver.map(|_| "13.0".to_string()),
            gpus: driver
                .map(|_| {
                    vec![HostGpu {
                        index: 0,
                        uuid: "GPU-5a1d".into(),
                        name: "NVIDIA H100 80GB HBM3".into(),
                        memory_mib: Some(81559),
                        compute_capability: None,
                    }]
                })
                .unwrap_or_default(),
            source: driver.map(|_| "nvidia-smi in a `--gpus all` container".to_string()),
            // This machine's PATH is never consulted for another host.
            toolkit_programs: vec!["nvidia-container-runtime-hook".into()],
            probe: Some(EngineProbe {
                engine: URL.into(),
                image: Some("lab:1".into()),
                outcome,
            }),
        }
    }

    fn verdicts(nvidia: &NvidiaFacts, info: &EngineInfo) -> Vec<(String, Verdict, String)> {
        nvidia_checks(nvidia, Some(info))
            .into_iter()
            .map(|check| (check.check, check.verdict, check.summary))
            .collect()
    }

    #[test]
    fn a_container_that_ran_there_passes_and_every_summary_names_the_engine() {
        let info = EngineInfo {
            default_runtime: "runc".into(),
            ..EngineInfo::default()
        };
        let checks = verdicts(&facts(Some("580.65.06"), ProbeOutcome::Ran), &info);
        let expected = [
            ("nvidia-driver", "driver 580.65.06 on `ssh://me@gpu-box`, supports CUDA up to 13.0 (from nvidia-smi in a `--gpus all` container)"),
            ("gpus", "0: NVIDIA H100 80GB HBM3 GPU-5a1d 81559 MiB"),
            ("container-toolkit", "a `--gpus all` container ran nvidia-smi on `ssh://me@gpu-box` (image `lab:1`)"),
            ("default-runtime", "default runtime `runc`: containers get GPUs only when asked"),
        ];
        assert_eq!(checks.len(), expected.len(), "{checks:#?}");
        for ((name, verdict, summary), (expected_name, expected_summary)) in
            checks.iter().zip(expected)
        {
            assert_eq!((name.as_str(), *verdict), (expected_name, Verdict::Pass));
            assert_eq!(summary, expected_summary);
        }
        let host = gpu_host(&facts(Some("580.65.06"), ProbeOutcome::Ran), &info, None);
        assert!(host.toolkit);
        assert_eq!(host.engine_host.as_deref(), Some(URL));
    }

    #[test]
    fn a_refused_gpu_request_is_the_missing_toolkit_a_failure_only_with_a_driver() {
        let refused = || ProbeOutcome::Refused("could not select device driver".into());
        let info = EngineInfo::default();
        let toolkit = |nvidia: &NvidiaFacts, info: &EngineInfo| {
            let checks = verdicts(nvidia, info);
            let (_, verdict, summary) = checks
                .into_iter()
                .find(|(name, _, _)| name == "container-toolkit")
                .unwrap();
            (verdict, summary)
        };
        let (verdict, summary) = toolkit(&facts(Some("580.65.06"), refused()), &info);
        assert_eq!(verdict, Verdict::Fail);
        assert_eq!(summary, "the NVIDIA container toolkit is missing on `ssh://me@gpu-box`: Docker there refused a `--gpus all` container (could not select device driver)");
        assert_eq!(toolkit(&facts(None, refused()), &info).0, Verdict::Warn);
        assert!(!gpu_host(&facts(Some("580.65.06"), refused()), &info, None).toolkit);
        // The `nvidia` runtime there is another way in.
        let runtime = EngineInfo {
            runtimes: vec!["nvidia".into()],
            ..EngineInfo::default()
        };
        assert_eq!(toolkit(&facts(None, refused()), &runtime).0, Verdict::Pass);
        let driver = &verdicts(&facts(None, refused()), &info)[0];
        assert_eq!(driver.2, "no NVIDIA driver found on `ssh://me@gpu-box` (Docker there cannot hand GPUs over, and no nvidia-smi answered over ssh): GPU images will run on the CPU only");
    }

    #[test]
    fn an_engine_that_did_not_answer_is_one_warning_pointing_at_the_docker_check() {
        let checks = nvidia_checks(&facts(None, ProbeOutcome::Unreached), None);
        assert_eq!(checks.len(), 1, "{checks:#?}");
        assert_eq!(
            (
                checks[0].check.as_str(),
                checks[0].verdict,
                checks[0].summary.as_str()
            ),
            (
                "nvidia-driver",
                Verdict::Warn,
                "cannot check the GPUs of `ssh://me@gpu-box`: its Docker engine did not answer"
            )
        );
    }

    #[test]
    fn no_image_or_a_failing_container_leaves_it_unknown_never_failing() {
        let info = EngineInfo::default();
        for outcome in [
            ProbeOutcome::NoImage,
            ProbeOutcome::Failed("exec: \"nvidia-smi\": executable file not found".into()),
        ] {
            let checks = verdicts(&facts(None, outcome.clone()), &info);
            assert!(
                checks
                    .iter()
                    .all(|(_, verdict, _)| *verdict != Verdict::Fail),
                "{checks:#?}"
            );
            assert!(checks[0]
                .2
                .starts_with("cannot tell whether `ssh://me@gpu-box` has an NVIDIA driver"));
        }
        let no_image = nvidia_checks(&facts(None, ProbeOutcome::NoImage), Some(&info));
        assert!(no_image[0]
            .fix
            .as_deref()
            .is_some_and(|fix| fix.contains("tfimg build cpu-headless")));
    }
}
