use super::*;

fn cc(text: &str) -> ComputeCapability {
    ComputeCapability::parse(text).unwrap()
}

#[test]
fn capabilities_parse_and_order() {
    assert_eq!(cc("9.0"), ComputeCapability { major: 9, minor: 0 });
    assert_eq!(cc(" 12.0 ").to_string(), "12.0");
    assert!(cc("8.9") < cc("9.0") && cc("7.5") < cc("8.0") && cc("9.0") < cc("10.0"));
    for bad in ["", "[N/A]", "9", "9.", ".0", "a.b", "9.0.1", "1234.0"] {
        assert_eq!(ComputeCapability::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn sass_runs_within_its_major_and_ptx_compiles_upwards() {
    let fit = |kernels: &Kernels, gpu: &str| kernels.fit(cc(gpu));
    // TensorFlow 2.9 (CUDA 11): T4 and V100 have machine code; A100, RTX 3090, H100
    // only PTX; a Kepler K20 has sm_35; a Maxwell GTX 970 takes sm_50.
    assert_eq!(fit(&KERNELS_CUDA_11, "7.5"), KernelFit::Sass(cc("7.5")));
    assert_eq!(fit(&KERNELS_CUDA_11, "7.0"), KernelFit::Sass(cc("7.0")));
    assert_eq!(fit(&KERNELS_CUDA_11, "5.2"), KernelFit::Sass(cc("5.0")));
    assert_eq!(fit(&KERNELS_CUDA_11, "3.7"), KernelFit::Sass(cc("3.5")));
    assert_eq!(fit(&KERNELS_CUDA_11, "8.0"), KernelFit::Ptx(cc("8.0")));
    assert_eq!(fit(&KERNELS_CUDA_11, "8.6"), KernelFit::Ptx(cc("8.0")));
    assert_eq!(fit(&KERNELS_CUDA_11, "9.0"), KernelFit::Ptx(cc("8.0")));
    assert_eq!(fit(&KERNELS_CUDA_11, "3.0"), KernelFit::Unsupported);
    // 2.16: sm_80 covers an L40 (8.9) and an RTX 3090 (8.6); H100 compiles compute_90.
    assert_eq!(fit(&KERNELS_CUDA_12, "8.9"), KernelFit::Sass(cc("8.0")));
    assert_eq!(fit(&KERNELS_CUDA_12, "9.0"), KernelFit::Ptx(cc("9.0")));
    assert_eq!(fit(&KERNELS_CUDA_12, "3.7"), KernelFit::Unsupported);
    // 2.18: Blackwell compiles compute_90; Maxwell is gone.
    assert_eq!(fit(&KERNELS_CUDA_12_5, "8.9"), KernelFit::Sass(cc("8.9")));
    assert_eq!(fit(&KERNELS_CUDA_12_5, "12.0"), KernelFit::Ptx(cc("9.0")));
    assert_eq!(fit(&KERNELS_CUDA_12_5, "5.2"), KernelFit::Unsupported);
    assert_eq!(KERNELS_CUDA_11.sass_range(), "3.5 to 7.5");
}

#[test]
fn names_from_real_nvidia_smi_outputs_map_to_their_capability() {
    // The names in tests/fixtures/nvidia/ (truncated ones included) and common others.
    let cases = [
        ("Tesla K20Xm", Some("3.5")),
        ("Tesla V100-SXM2...", Some("7.0")),
        ("Tesla V100-PCIE...", Some("7.0")),
        ("A100-PCIE-40GB", Some("8.0")),
        ("NVIDIA A100-SXM4-40GB", Some("8.0")),
        ("Quadro RTX 4000", Some("7.5")),
        ("GeForce GTX 1060 6GB", Some("6.1")),
        ("GeForce GTX 1080 Ti", Some("6.1")),
        ("Tesla T4", Some("7.5")),
        ("Tesla K80", Some("3.7")),
        ("NVIDIA H100 80GB HBM3", Some("9.0")),
        ("NVIDIA H100 PCIe", Some("9.0")),
        ("NVIDIA GeForce RTX 3090", Some("8.6")),
        ("NVIDIA GeForce RTX 4090", Some("8.9")),
        ("NVIDIA GeForce RTX 5090", Some("12.0")),
        ("NVIDIA GeForce GTX 970", Some("5.2")),
        ("NVIDIA L4", Some("8.9")),
        ("NVIDIA L40S", Some("8.9")),
        ("NVIDIA A10G", Some("8.6")),
        ("NVIDIA RTX A6000", Some("8.6")),
        ("NVIDIA RTX 6000 Ada Generation", Some("8.9")),
        ("TITAN V", Some("7.0")),
        ("NVIDIA B200", Some("10.0")),
        ("NVIDIA GeForce ...", None),
        ("Some Future GPU", None),
        ("", None),
    ];
    for (name, expected) in cases {
        assert_eq!(
            capability_by_name(name).map(|cc| cc.to_string()),
            expected.map(str::to_string),
            "{name}"
        );
    }
}
