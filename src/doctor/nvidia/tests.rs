use super::*;
use crate::spec::CudaProvider;

fn stack(cuda: &str) -> GpuStack {
    GpuStack {
        provider: CudaProvider::Pip,
        cuda: cuda.to_string(),
        cudnn: "8.6".to_string(),
        tensorflow_built_with_cuda: "11.2".to_string(),
        tensorflow_built_with_cudnn: "8.1".to_string(),
        driver_min: String::new(),
        driver_compat_min: String::new(),
        cuda_requirements: Vec::new(),
        library_path: Vec::new(),
        cuda_data_dir: None,
        cupti_library: None,
        cuda_libraries: Vec::new(),
    }
}

#[test]
fn driver_verdicts_for_cuda_11_2_11_8_and_12() {
    let verdict = |cuda: &str, driver: &str| driver_check(&stack(cuda), driver).verdict;
    assert_eq!(verdict("11.2", "418.87.01"), Verdict::Fail);
    assert_eq!(verdict("11.2", "455.32.00"), Verdict::Warn);
    assert_eq!(verdict("11.2", "470.82.01"), Verdict::Pass);
    assert_eq!(verdict("11.8", "455.32.00"), Verdict::Warn);
    assert_eq!(verdict("11.8", "535.104.05"), Verdict::Pass);
    assert_eq!(verdict("12.3", "470.57.02"), Verdict::Fail);
    assert_eq!(verdict("12.3", "535.104.05"), Verdict::Warn);
    assert_eq!(verdict("12.3", "550.54.15"), Verdict::Pass);
    let warn = driver_check(&stack("11.8"), "455.32.00");
    assert_eq!(
            warn.summary,
            "driver 455.32.00 runs CUDA 11.8 only through minor-version compatibility (450.80.02 or later; full support from 520.61.05): PTX from newer toolkits cannot be JIT-compiled"
        );
}

#[test]
fn no_driver_warns_and_a_driver_without_toolkit_fails() {
    let none = NvidiaFacts::default();
    let checks = nvidia_checks(
        &none,
        Some(&EngineInfo {
            default_runtime: "runc".into(),
            ..Default::default()
        }),
    );
    let verdicts: Vec<(&str, Verdict)> = checks
        .iter()
        .map(|c| (c.check.as_str(), c.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("nvidia-driver", Verdict::Warn),
            ("container-toolkit", Verdict::Warn),
            ("default-runtime", Verdict::Pass)
        ]
    );
    let driver = NvidiaFacts {
        driver: Some("470.57.02".into()),
        ..Default::default()
    };
    let info = EngineInfo::default();
    let problem =
        gpu_launch_problem(&driver, &info, None).expect("no toolkit is a failure with a driver");
    assert_eq!(problem.check, "container-toolkit");
    let trap = EngineInfo {
        runtimes: vec!["nvidia".into(), "runc".into()],
        default_runtime: "nvidia".into(),
        ..Default::default()
    };
    let checks = nvidia_checks(&driver, Some(&trap));
    assert_eq!(checks.last().unwrap().verdict, Verdict::Warn);
    assert!(gpu_launch_problem(&driver, &trap, Some(&stack("11.8"))).is_none());
    let old = NvidiaFacts {
        driver: Some("418.87.01".into()),
        ..Default::default()
    };
    assert_eq!(
        gpu_launch_problem(&old, &trap, Some(&stack("11.8")))
            .unwrap()
            .check,
        "driver-vs-cuda"
    );
}

#[test]
fn the_default_gpus_are_decided_on_the_same_driver_and_toolkit_checks() {
    let gpu = |index| crate::plan::gpus::HostGpu {
        index,
        uuid: format!("GPU-{index}"),
        name: "Tesla T4".into(),
        memory_mib: None,
        compute_capability: None,
    };
    let driver = NvidiaFacts {
        driver: Some("535.104.05".into()),
        gpus: vec![gpu(0), gpu(1)],
        source: Some("nvidia-smi".into()),
        ..Default::default()
    };
    let plain = EngineInfo::default();
    let host = gpu_host(&driver, &plain, Some(&stack("11.8")));
    assert_eq!(
        (host.gpus, host.toolkit, host.driver_problem),
        (2, false, None)
    );
    // Each way Docker can hand GPUs over counts: the hook, the runtime, CDI.
    let hook = NvidiaFacts {
        toolkit_programs: vec!["nvidia-container-runtime-hook".into()],
        ..driver.clone()
    };
    assert!(gpu_host(&hook, &plain, None).toolkit);
    let ctk_only = NvidiaFacts {
        toolkit_programs: vec!["nvidia-ctk".into()],
        ..driver.clone()
    };
    assert!(!gpu_host(&ctk_only, &plain, None).toolkit);
    let runtime = EngineInfo {
        runtimes: vec!["nvidia".into(), "runc".into()],
        ..Default::default()
    };
    assert!(gpu_host(&driver, &runtime, None).toolkit);
    let cdi = EngineInfo {
        cdi_spec_dirs: vec!["/etc/cdi".into()],
        ..Default::default()
    };
    assert!(gpu_host(&driver, &cdi, None).toolkit);
    let old = NvidiaFacts {
        driver: Some("418.87.01".into()),
        ..driver.clone()
    };
    let problem = gpu_host(&old, &runtime, Some(&stack("11.8"))).driver_problem;
    assert!(
        problem
            .as_deref()
            .is_some_and(|text| text.contains("418.87.01")),
        "{problem:?}"
    );
    assert_eq!(
        gpu_host(&NvidiaFacts::default(), &plain, Some(&stack("11.8"))),
        GpuHost::default()
    );
}
