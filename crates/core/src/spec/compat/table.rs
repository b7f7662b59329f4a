//! The data of the compatibility table: TensorFlow 2.4 to 2.18 with their Python range,
//! CUDA and cuDNN, pins and pip CUDA wheels, and the driver minimums per CUDA minor.
//! Sources: TensorFlow's "tested build configurations" table, the wheels' metadata and
//! NVIDIA's CUDA release notes. Data only: the lookups live in `compat`.

use super::{CudaRow, PipCuda, TensorflowRow};

const CU11_LIBRARIES: &[&str] = &[
    "cublas",
    "cuda_cupti",
    "cuda_nvrtc",
    "cuda_runtime",
    "cudnn",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
];

const CU12_LIBRARIES: &[&str] = &[
    "cublas",
    "cuda_cupti",
    "cuda_nvcc",
    "cuda_nvrtc",
    "cuda_runtime",
    "cudnn",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
    "nccl",
    "nvjitlink",
];

/// CUDA 11.8 runtime wheels with cuDNN 8.6: the sonames TensorFlow 2.5–2.13 load
/// (libcudart.so.11.0, libcublas(Lt).so.11, libcufft.so.10, libcurand.so.10,
/// libcusolver.so.11, libcusparse.so.11, libcudnn.so.8), plus CUPTI for the profiler and
/// nvcc's ptxas and libdevice for XLA. Every wheel pip installs for them is listed, each
/// exactly: cuDNN and cuSOLVER require `nvidia-cublas-cu11` without a version.
const CU11_CUDNN86: PipCuda = PipCuda::Wheels {
    cuda: "11.8",
    cudnn: "8.6",
    library_folders: CU11_LIBRARIES,
    requirements: &[
        "nvidia-cublas-cu11==11.11.3.6",
        "nvidia-cuda-cupti-cu11==11.8.87",
        "nvidia-cuda-nvcc-cu11==11.8.89",
        "nvidia-cuda-nvrtc-cu11==11.8.89",
        "nvidia-cuda-runtime-cu11==11.8.89",
        "nvidia-cudnn-cu11==8.6.0.163",
        "nvidia-cufft-cu11==10.9.0.58",
        "nvidia-curand-cu11==10.3.0.86",
        "nvidia-cusolver-cu11==11.4.1.48",
        "nvidia-cusparse-cu11==11.7.5.86",
    ],
};

/// TensorFlow 2.14 was built against cuDNN 8.7 and refuses an older minor.
const CU11_CUDNN87: PipCuda = PipCuda::Wheels {
    cuda: "11.8",
    cudnn: "8.7",
    library_folders: CU11_LIBRARIES,
    requirements: &[
        "nvidia-cublas-cu11==11.11.3.6",
        "nvidia-cuda-cupti-cu11==11.8.87",
        "nvidia-cuda-nvcc-cu11==11.8.89",
        "nvidia-cuda-nvrtc-cu11==11.8.89",
        "nvidia-cuda-runtime-cu11==11.8.89",
        "nvidia-cudnn-cu11==8.7.0.84",
        "nvidia-cufft-cu11==10.9.0.58",
        "nvidia-curand-cu11==10.3.0.86",
        "nvidia-cusolver-cu11==11.4.1.48",
        "nvidia-cusparse-cu11==11.7.5.86",
    ],
};

/// What `tensorflow[and-cuda]==2.15.1` pins (from its wheel's metadata; every patch of a
/// row pins the same nvidia-* versions, and pip's resolution of the extra installs exactly
/// these, nothing more).
const AND_CUDA_215: PipCuda = PipCuda::AndCudaExtra {
    library_folders: CU12_LIBRARIES,
    pins: &[
        "nvidia-cublas-cu12==12.2.5.6",
        "nvidia-cuda-cupti-cu12==12.2.142",
        "nvidia-cuda-nvcc-cu12==12.2.140",
        "nvidia-cuda-nvrtc-cu12==12.2.140",
        "nvidia-cuda-runtime-cu12==12.2.140",
        "nvidia-cudnn-cu12==8.9.4.25",
        "nvidia-cufft-cu12==11.0.8.103",
        "nvidia-curand-cu12==10.3.3.141",
        "nvidia-cusolver-cu12==11.5.2.141",
        "nvidia-cusparse-cu12==12.1.2.141",
        "nvidia-nccl-cu12==2.16.5",
        "nvidia-nvjitlink-cu12==12.2.140",
    ],
};

/// What `tensorflow[and-cuda]` 2.16.x and 2.17.x pin (the same set).
const AND_CUDA_216: PipCuda = PipCuda::AndCudaExtra {
    library_folders: CU12_LIBRARIES,
    pins: &[
        "nvidia-cublas-cu12==12.3.4.1",
        "nvidia-cuda-cupti-cu12==12.3.101",
        "nvidia-cuda-nvcc-cu12==12.3.107",
        "nvidia-cuda-nvrtc-cu12==12.3.107",
        "nvidia-cuda-runtime-cu12==12.3.101",
        "nvidia-cudnn-cu12==8.9.7.29",
        "nvidia-cufft-cu12==11.0.12.1",
        "nvidia-curand-cu12==10.3.4.107",
        "nvidia-cusolver-cu12==11.5.4.101",
        "nvidia-cusparse-cu12==12.2.0.103",
        "nvidia-nccl-cu12==2.19.3",
        "nvidia-nvjitlink-cu12==12.3.101",
    ],
};

/// What `tensorflow[and-cuda]` 2.18.x pins.
const AND_CUDA_218: PipCuda = PipCuda::AndCudaExtra {
    library_folders: CU12_LIBRARIES,
    pins: &[
        "nvidia-cublas-cu12==12.5.3.2",
        "nvidia-cuda-cupti-cu12==12.5.82",
        "nvidia-cuda-nvcc-cu12==12.5.82",
        "nvidia-cuda-nvrtc-cu12==12.5.82",
        "nvidia-cuda-runtime-cu12==12.5.82",
        "nvidia-cudnn-cu12==9.3.0.75",
        "nvidia-cufft-cu12==11.2.3.61",
        "nvidia-curand-cu12==10.3.6.82",
        "nvidia-cusolver-cu12==11.6.3.83",
        "nvidia-cusparse-cu12==12.5.1.3",
        "nvidia-nccl-cu12==2.21.5",
        "nvidia-nvjitlink-cu12==12.5.82",
    ],
};

/// numpy 2 breaks every release before 2.18 at import; protobuf 4 breaks 2.4–2.11.
const PINS_NUMPY_119: &[&str] = &["numpy<1.20", "protobuf<3.20"];
const PINS_KERAS_26: &[&str] = &["keras<2.7", "numpy<1.20", "protobuf<3.20"];
const PINS_KERAS_27: &[&str] = &["keras<2.8", "numpy<1.24", "protobuf<3.20"];
const PINS_KERAS_28: &[&str] = &["keras<2.9", "numpy<1.24", "protobuf<3.20"];
const PINS_NUMPY_124: &[&str] = &["numpy<1.24", "protobuf<3.20"];
const PINS_NUMPY_124_ONLY: &[&str] = &["numpy<1.24"];
const PINS_NUMPY_125: &[&str] = &["numpy<1.25", "typing-extensions<4.6"];
const PINS_NUMPY_2: &[&str] = &["numpy<2"];
const PINS_NUMPY_21: &[&str] = &["numpy<2.1"];

const fn row(
    minor: &'static str,
    latest_patch: &'static str,
    python: (&'static str, &'static str),
    cuda: &'static str,
    cudnn: &'static str,
    pins: &'static [&'static str],
    pip_cuda: PipCuda,
) -> TensorflowRow {
    TensorflowRow {
        minor,
        latest_patch,
        python_min: python.0,
        python_max: python.1,
        cuda,
        cudnn,
        pins,
        pip_cuda,
    }
}

/// TensorFlow 2.4 to 2.18, oldest first.
pub const TENSORFLOW: &[TensorflowRow] = &[
    row(
        "2.4",
        "2.4.4",
        ("3.6", "3.8"),
        "11.0",
        "8.0",
        PINS_NUMPY_119,
        PipCuda::Unavailable,
    ),
    row(
        "2.5",
        "2.5.3",
        ("3.6", "3.9"),
        "11.2",
        "8.1",
        PINS_NUMPY_119,
        CU11_CUDNN86,
    ),
    row(
        "2.6",
        "2.6.5",
        ("3.6", "3.9"),
        "11.2",
        "8.1",
        PINS_KERAS_26,
        CU11_CUDNN86,
    ),
    row(
        "2.7",
        "2.7.4",
        ("3.7", "3.9"),
        "11.2",
        "8.1",
        PINS_KERAS_27,
        CU11_CUDNN86,
    ),
    row(
        "2.8",
        "2.8.4",
        ("3.7", "3.10"),
        "11.2",
        "8.1",
        PINS_KERAS_28,
        CU11_CUDNN86,
    ),
    row(
        "2.9",
        "2.9.3",
        ("3.7", "3.10"),
        "11.2",
        "8.1",
        PINS_NUMPY_124,
        CU11_CUDNN86,
    ),
    row(
        "2.10",
        "2.10.1",
        ("3.7", "3.10"),
        "11.2",
        "8.1",
        PINS_NUMPY_124,
        CU11_CUDNN86,
    ),
    row(
        "2.11",
        "2.11.1",
        ("3.7", "3.10"),
        "11.2",
        "8.1",
        PINS_NUMPY_124,
        CU11_CUDNN86,
    ),
    row(
        "2.12",
        "2.12.1",
        ("3.8", "3.11"),
        "11.8",
        "8.6",
        PINS_NUMPY_124_ONLY,
        CU11_CUDNN86,
    ),
    row(
        "2.13",
        "2.13.1",
        ("3.8", "3.11"),
        "11.8",
        "8.6",
        PINS_NUMPY_125,
        CU11_CUDNN86,
    ),
    row(
        "2.14",
        "2.14.1",
        ("3.9", "3.11"),
        "11.8",
        "8.7",
        PINS_NUMPY_2,
        CU11_CUDNN87,
    ),
    row(
        "2.15",
        "2.15.1",
        ("3.9", "3.11"),
        "12.2",
        "8.9",
        PINS_NUMPY_2,
        AND_CUDA_215,
    ),
    row(
        "2.16",
        "2.16.2",
        ("3.9", "3.12"),
        "12.3",
        "8.9",
        PINS_NUMPY_2,
        AND_CUDA_216,
    ),
    row(
        "2.17",
        "2.17.1",
        ("3.9", "3.12"),
        "12.3",
        "8.9",
        PINS_NUMPY_2,
        AND_CUDA_216,
    ),
    row(
        "2.18",
        "2.18.1",
        ("3.9", "3.12"),
        "12.5",
        "9.3",
        PINS_NUMPY_21,
        AND_CUDA_218,
    ),
];

/// Driver minimums per CUDA minor, from NVIDIA's CUDA release notes.
pub const CUDA: &[CudaRow] = &[
    cuda_row("11.0", "11.0.3", "450.51.06", "450.51.06"),
    cuda_row("11.2", "11.2.2", "460.32.03", "450.80.02"),
    cuda_row("11.8", "11.8.0", "520.61.05", "450.80.02"),
    cuda_row("12.2", "12.2.2", "535.54.03", "525.60.13"),
    cuda_row("12.3", "12.3.2", "545.23.06", "525.60.13"),
    cuda_row("12.5", "12.5.1", "555.42.02", "525.60.13"),
];

const fn cuda_row(
    cuda: &'static str,
    latest_patch: &'static str,
    driver_min: &'static str,
    driver_compat_min: &'static str,
) -> CudaRow {
    CudaRow {
        cuda,
        latest_patch,
        driver_min,
        driver_compat_min,
    }
}
