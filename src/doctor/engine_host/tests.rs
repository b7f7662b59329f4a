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
        usage: Vec::new(),
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
    for ((name, verdict, summary), (expected_name, expected_summary)) in checks.iter().zip(expected)
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
