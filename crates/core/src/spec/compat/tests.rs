use super::*;

fn v(text: &str) -> Version {
    Version::parse(text).unwrap()
}

#[test]
fn patch_versions_resolve_to_their_minor_row() {
    for text in ["2.9", "2.9.1", "2.9.3"] {
        let row = tensorflow_row(&v(text)).unwrap();
        assert_eq!(row.minor, "2.9");
        assert_eq!(row.latest_patch, "2.9.3");
    }
    assert_eq!(tensorflow_row(&v("2.16.1")).unwrap().cuda, "12.3");
    assert!(tensorflow_row(&v("2.3")).is_none());
    assert!(tensorflow_row(&v("2")).is_none());
    assert!(tensorflow_row(&v("3.0")).is_none());
}

#[test]
fn table_covers_2_4_to_2_16_in_order_and_every_cuda_has_a_driver_row() {
    let minors: Vec<_> = TENSORFLOW.iter().map(|row| v(row.minor)).collect();
    assert!(minors.windows(2).all(|pair| pair[0] < pair[1]));
    for minor in 4..=16 {
        assert!(
            tensorflow_row(&v(&format!("2.{minor}"))).is_some(),
            "2.{minor}"
        );
    }
    for row in TENSORFLOW {
        assert!(cuda_row_for(&v(row.cuda)).is_some(), "{}", row.cuda);
        assert!(row.python_range().0 <= row.python_range().1);
        assert!(v(row.latest_patch).major_minor() == v(row.minor).major_minor());
        if let PipCuda::Wheels { cuda, cudnn, .. } = row.pip_cuda {
            assert!(row.accepts(&v(cuda), &v(cudnn)), "{} wheels", row.minor);
            assert!(cuda_row_for(&v(cuda)).is_some());
        }
    }
}

#[test]
fn tensorflow_2_9_facts() {
    let row = tensorflow_row(&v("2.9.3")).unwrap();
    assert!(row.supports_python(&v("3.7")));
    assert!(row.supports_python(&v("3.10")));
    assert!(row.supports_python(&v("3.9.2")));
    assert!(!row.supports_python(&v("3.11")));
    assert!(!row.supports_python(&v("3.6")));
    assert_eq!(row.pins, &["numpy<1.24", "protobuf<3.20"]);
    assert!(row.accepts(&v("11.8"), &v("8.6")));
    assert!(row.accepts(&v("11.0"), &v("8.1")));
    assert!(!row.accepts(&v("12.2"), &v("8.9")));
    assert!(!row.accepts(&v("11.2"), &v("8.0")));
    assert!(!row.accepts(&v("11.2"), &v("9.1")));
}

#[test]
fn driver_verdicts_for_cuda_11_2_and_12() {
    let cuda_11_2 = cuda_row_for(&v("11.2.2")).unwrap();
    assert_eq!(
        driver_verdict(cuda_11_2, &v("418.87.01")),
        DriverVerdict::TooOld
    );
    assert_eq!(
        driver_verdict(cuda_11_2, &v("455.32.00")),
        DriverVerdict::MinorVersionCompatibility
    );
    assert_eq!(
        driver_verdict(cuda_11_2, &v("460.32.03")),
        DriverVerdict::Supported
    );
    assert_eq!(
        driver_verdict(cuda_11_2, &v("470.82.01")),
        DriverVerdict::Supported
    );
    let cuda_12_3 = cuda_row_for(&v("12.3")).unwrap();
    assert_eq!(
        driver_verdict(cuda_12_3, &v("470.82.01")),
        DriverVerdict::TooOld
    );
    assert_eq!(
        driver_verdict(cuda_12_3, &v("535.104.05")),
        DriverVerdict::MinorVersionCompatibility
    );
    assert_eq!(
        driver_verdict(cuda_12_3, &v("550.54.15")),
        DriverVerdict::Supported
    );
}

#[test]
fn versions_compare_numerically_and_reject_junk() {
    assert!(v("460.32.03") > v("460.27.4"));
    assert!(v("2.10") > v("2.9"));
    assert_eq!(v("11.2"), v("11.2"));
    assert_eq!(v("11.2"), v("11.2.0"));
    for junk in ["", "2.", ".9", "2.x", "v2.9", "1.2.3.4.5", "99999999999"] {
        assert!(Version::parse(junk).is_none(), "{junk}");
    }
}

#[test]
fn cuda_libraries_follow_the_build_and_never_include_the_driver() {
    let row_2_9 = tensorflow_row(&v("2.9")).unwrap();
    let sonames = cuda_sonames(row_2_9);
    assert!(sonames.contains(&"libcudart.so.11.0"));
    assert!(sonames.contains(&"libcusolver.so.11"));
    assert!(sonames.contains(&"libcudnn_cnn_infer.so.8"));
    assert!(cuda_sonames(tensorflow_row(&v("2.4")).unwrap()).contains(&"libcusolver.so.10"));
    assert!(cuda_sonames(tensorflow_row(&v("2.16")).unwrap()).contains(&"libcudnn.so.8"));
    assert!(cuda_sonames(tensorflow_row(&v("2.18")).unwrap()).contains(&"libcudnn.so.9"));
    for row in TENSORFLOW {
        assert!(!cuda_sonames(row)
            .iter()
            .any(|name| name.starts_with("libcuda.so")));
    }
}

#[test]
fn distribution_pythons() {
    assert_eq!(distribution_python("debian:bullseye-slim"), Some("3.9"));
    assert_eq!(
        distribution_python("docker.io/library/debian:bookworm"),
        Some("3.11")
    );
    assert_eq!(distribution_python("ubuntu:22.04"), Some("3.10"));
    assert_eq!(
        distribution_python("nvidia/cuda:11.2.2-cudnn8-runtime-ubuntu20.04"),
        Some("3.8")
    );
    assert_eq!(
        distribution_python("registry:5000/debian:11.6-slim"),
        Some("3.9")
    );
    assert_eq!(distribution_python("python:3.9"), None);
    assert_eq!(distribution_python("debian"), None);
}

#[test]
fn every_line_knows_its_kernels_and_2_9_runs_only_ptx_on_a100_and_h100() {
    let kernels = |minor: &str| tensorflow_row(&v(minor)).unwrap().kernels();
    let fit = |minor: &str, gpu: &str| kernels(minor).fit(ComputeCapability::parse(gpu).unwrap());
    for minor in ["2.4", "2.9", "2.14"] {
        assert_eq!(kernels(minor).ptx, "8.0", "{minor}");
        assert_eq!(kernels(minor).sass.last(), Some(&"7.5"), "{minor}");
    }
    for minor in ["2.15", "2.16", "2.17", "2.18"] {
        assert_eq!(kernels(minor).ptx, "9.0", "{minor}");
    }
    assert_eq!(kernels("2.18").sass.last(), Some(&"8.9"));
    assert!(matches!(fit("2.9", "8.0"), KernelFit::Ptx(_)));
    assert!(matches!(fit("2.9", "9.0"), KernelFit::Ptx(_)));
    assert!(matches!(fit("2.9", "7.5"), KernelFit::Sass(_)));
    assert!(matches!(fit("2.15", "8.0"), KernelFit::Sass(_)));
    assert!(matches!(fit("2.18", "9.0"), KernelFit::Ptx(_)));
    // Every line's SASS is ascending and below its PTX.
    for row in TENSORFLOW {
        let kernels = row.kernels();
        let sass: Vec<_> = kernels
            .sass
            .iter()
            .map(|text| ComputeCapability::parse(text).unwrap())
            .collect();
        assert!(
            sass.windows(2).all(|pair| pair[0] < pair[1]),
            "{}",
            row.minor
        );
        assert!(*sass.last().unwrap() < ComputeCapability::parse(kernels.ptx).unwrap());
    }
}
