use super::*;

fn gpu(index: u32, name: &str, capability: Option<&str>) -> HostGpu {
    HostGpu {
        index,
        uuid: format!("GPU-{index}"),
        name: name.to_string(),
        memory_mib: None,
        compute_capability: capability.and_then(ComputeCapability::parse),
    }
}

#[test]
fn an_h100_under_tensorflow_2_9_warns_about_ptx_and_names_the_cache() {
    let h100s: Vec<HostGpu> = (0..4)
        .map(|index| gpu(index, "NVIDIA H100 80GB HBM3", Some("9.0")))
        .collect();
    let check = kernels_check("2.9.3", &h100s, "tfimg-cuda-cache-1000").unwrap();
    assert_eq!(check.verdict, Verdict::Warn);
    assert_eq!(
            check.summary,
            "TensorFlow 2.9's wheels carry machine code (SASS) for compute capability 3.5 to 7.5 and PTX for 8.0: GPUs 0, 1, 2, 3 (NVIDIA H100 80GB HBM3, 9.0) are newer, so the first start of each process JIT-compiles TensorFlow's GPU kernels from PTX, which takes minutes; tfimg's CUDA cache (volume `tfimg-cuda-cache-1000` at `/var/cache/tfimg/cuda`, mounted into every GPU container it starts) keeps that to once per user and driver"
        );
    // No line in the table has SASS for 9.0: no newer line is suggested.
    assert_eq!(
            check.fix.as_deref(),
            Some("expect the first start to be slow, then fast: keep the volume (`docker volume rm tfimg-cuda-cache-1000` frees its space and starts over; CUDA_CACHE_MAXSIZE is 4 GiB)")
        );
}

#[test]
fn an_a100_by_name_on_an_old_driver_warns_and_names_the_first_line_with_its_sass() {
    // 455 drivers cannot report compute_cap: the name says 8.0.
    let a100 = [gpu(0, "A100-PCIE-40GB", None)];
    let check = kernels_check("2.9", &a100, "tfimg-cuda-cache-0").unwrap();
    assert_eq!(check.verdict, Verdict::Warn);
    assert!(
        check
            .summary
            .contains(": GPU 0 (A100-PCIE-40GB, 8.0) is newer, so"),
        "{}",
        check.summary
    );
    assert!(check
        .fix
        .unwrap()
        .ends_with("; TensorFlow 2.15 or later has machine code for these GPUs"));
    assert_eq!(
        kernels_check("2.16", &a100, "v").unwrap().verdict,
        Verdict::Pass
    );
}

#[test]
fn machine_code_passes_too_old_gpus_and_unknown_ones_warn() {
    let t4 = [gpu(0, "Tesla T4", Some("7.5"))];
    let check = kernels_check("2.9.3", &t4, "v").unwrap();
    assert_eq!(check.verdict, Verdict::Pass);
    assert!(check
        .summary
        .ends_with(": machine code for GPU 0 (Tesla T4, 7.5)"));
    // A K80 (3.7) under 2.16 (SASS from 5.0): unused; 2.14 still runs it.
    let k80 = [gpu(0, "Tesla K80", None)];
    let check = kernels_check("2.16", &k80, "v").unwrap();
    assert_eq!(check.verdict, Verdict::Warn);
    assert!(check
        .summary
        .contains("GPU 0 (Tesla K80, 3.7) is older than all of it"));
    assert_eq!(
        check.fix.as_deref(),
        Some("TensorFlow 2.14 still has machine code for it (`tensorflow: \"2.14\"` in the spec)")
    );
    let unknown = [gpu(0, "Mystery Board", None)];
    let check = kernels_check("2.9", &unknown, "v").unwrap();
    assert_eq!(check.verdict, Verdict::Warn);
    assert!(check.summary.contains("GPU 0 (Mystery Board, unknown)"));
    assert_eq!(kernels_check("2.9", &[], "v"), None);
    assert_eq!(kernels_check("1.15", &t4, "v"), None);
}
