//! The TensorFlow compatibility table: which Python, CUDA and cuDNN each TensorFlow minor
//! release was built and tested with, the NVIDIA driver those CUDA versions need, the
//! package pins that keep each release importable, and where a GPU image gets its CUDA
//! user-space libraries from.
//!
//! Pure data and lookups: no I/O, no knowledge of specs or files. Sources: TensorFlow's
//! "tested build configurations" table and NVIDIA's CUDA release notes (driver table).

use std::cmp::Ordering;
use std::fmt;

/// A dotted numeric version (`2.9`, `2.9.3`, `460.32.03`). Missing trailing parts compare
/// as zero, so `11.2` == `11.2.0`.
#[derive(Debug, Clone)]
pub struct Version {
    parts: Vec<u32>,
    text: String,
}

impl Version {
    /// Parses `1`, `1.2`, `1.2.3` (up to four numeric parts); `None` on anything else.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let parts = text
            .split('.')
            .map(|part| {
                if part.is_empty() || part.len() > 9 || !part.bytes().all(|b| b.is_ascii_digit()) {
                    None
                } else {
                    part.parse::<u32>().ok()
                }
            })
            .collect::<Option<Vec<u32>>>()?;
        if parts.is_empty() || parts.len() > 4 {
            return None;
        }
        Some(Version {
            parts,
            text: text.to_string(),
        })
    }

    pub fn major(&self) -> u32 {
        self.parts[0]
    }

    pub fn minor(&self) -> Option<u32> {
        self.parts.get(1).copied()
    }

    pub fn patch(&self) -> Option<u32> {
        self.parts.get(2).copied()
    }

    /// Number of dotted parts the user wrote (`2.9` → 2).
    pub fn precision(&self) -> usize {
        self.parts.len()
    }

    /// `major.minor`, the key of compatibility rows.
    pub fn major_minor(&self) -> (u32, u32) {
        (self.major(), self.minor().unwrap_or(0))
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let length = self.parts.len().max(other.parts.len());
        for index in 0..length {
            let left = self.parts.get(index).copied().unwrap_or(0);
            let right = other.parts.get(index).copied().unwrap_or(0);
            match left.cmp(&right) {
                Ordering::Equal => continue,
                unequal => return unequal,
            }
        }
        Ordering::Equal
    }
}

/// How a GPU image gets CUDA/cuDNN user-space libraries from pip for one TensorFlow row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipCuda {
    /// NVIDIA's per-library wheels, pinned by tfimg: the runtime they carry, and the list
    /// (the nvcc wheel included: XLA needs its `ptxas` and `libdevice`).
    Wheels {
        cuda: &'static str,
        cudnn: &'static str,
        /// Folders under `site-packages/nvidia/` whose `lib/` holds the shared objects.
        library_folders: &'static [&'static str],
        requirements: &'static [&'static str],
    },
    /// TensorFlow's own `tensorflow[and-cuda]` extra, which pins the wheels itself (nvcc
    /// and CUPTI included).
    AndCudaExtra {
        library_folders: &'static [&'static str],
        /// The exact versions the extra pins, repeated in the constraints file so a later
        /// `pip install` cannot move them.
        pins: &'static [&'static str],
    },
    /// No wheel set carries the sonames this TensorFlow release loads.
    Unavailable,
}

impl PipCuda {
    /// Every nvidia-* wheel pip installs for this row, each pinned exactly (`==`): they go
    /// into the constraints file, so no later install can move a CUDA library.
    pub fn pins(&self) -> &'static [&'static str] {
        match self {
            PipCuda::Wheels { requirements, .. } => requirements,
            PipCuda::AndCudaExtra { pins, .. } => pins,
            PipCuda::Unavailable => &[],
        }
    }

    /// The versioned CUPTI the wheels carry (`libcupti.so.11.8`, `libcupti.so.12`).
    /// TensorFlow asks for `libcupti.so.<the CUDA it was built with>` and then for plain
    /// `libcupti.so`, which the image links to this one.
    pub fn cupti_soname(&self) -> Option<String> {
        match self {
            PipCuda::Wheels { cuda, .. } => Some(format!("libcupti.so.{cuda}")),
            PipCuda::AndCudaExtra { .. } => Some("libcupti.so.12".to_string()),
            PipCuda::Unavailable => None,
        }
    }
}

/// One TensorFlow minor release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorflowRow {
    /// `2.9`
    pub minor: &'static str,
    /// The newest patch release, used when a spec names only the minor (`2.9` → `2.9.3`).
    pub latest_patch: &'static str,
    pub python_min: &'static str,
    pub python_max: &'static str,
    /// CUDA and cuDNN the release was built against.
    pub cuda: &'static str,
    pub cudnn: &'static str,
    /// Known-good pins (pip constraint lines) that make this release import and train.
    pub pins: &'static [&'static str],
    pub pip_cuda: PipCuda,
}

/// NVIDIA driver minimums for one CUDA minor (Linux x86_64).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaRow {
    pub cuda: &'static str,
    /// The newest patch release, as used in `nvidia/cuda` image tags.
    pub latest_patch: &'static str,
    /// Driver shipped with the toolkit: everything works at or above it.
    pub driver_min: &'static str,
    /// Minor-version compatibility: runs at or above this, without PTX JIT of newer code.
    pub driver_compat_min: &'static str,
}

/// The folder under `site-packages/nvidia/` of the nvcc wheel: `bin/ptxas` and
/// `nvvm/libdevice/libdevice.10.bc`, what XLA needs to compile GPU kernels (its
/// `--xla_gpu_cuda_data_dir`). The same in the CUDA 11 and 12 wheels.
pub const NVCC_FOLDER: &str = "cuda_nvcc";

/// The CUPTI name TensorFlow loads when the one of the CUDA it was built with is missing
/// (the wheels carry `libcupti.so.11.8`; TensorFlow 2.9, built with 11.2, first asks for
/// `libcupti.so.11.2`).
pub const CUPTI_FALLBACK: &str = "libcupti.so";

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

impl TensorflowRow {
    pub fn python_range(&self) -> (Version, Version) {
        (version(self.python_min), version(self.python_max))
    }

    /// Whether a Python `major.minor` is inside the tested range.
    pub fn supports_python(&self, python: &Version) -> bool {
        let (low, high) = self.python_range();
        let wanted = Version::parse(&format!(
            "{}.{}",
            python.major(),
            python.minor().unwrap_or(0)
        ))
        .expect("two numbers always parse");
        low <= wanted && wanted <= high
    }

    /// TensorFlow loads any CUDA runtime of the major it was built with, and any cuDNN of
    /// the same major at or above the minor it was built with.
    pub fn accepts(&self, cuda: &Version, cudnn: &Version) -> bool {
        let built_cuda = version(self.cuda);
        let built_cudnn = version(self.cudnn);
        cuda.major() == built_cuda.major()
            && cudnn.major() == built_cudnn.major()
            && cudnn.major_minor() >= built_cudnn.major_minor()
    }
}

fn version(text: &'static str) -> Version {
    Version::parse(text).expect("compat table holds valid versions")
}

/// The row for a TensorFlow version (`2.9`, `2.9.1`, `2.9.3` all give the 2.9 row).
pub fn tensorflow_row(tensorflow: &Version) -> Option<&'static TensorflowRow> {
    if tensorflow.precision() < 2 {
        return None;
    }
    let key = tensorflow.major_minor();
    TENSORFLOW
        .iter()
        .find(|row| version(row.minor).major_minor() == key)
}

/// Every TensorFlow minor the table knows, for hints (`2.4, 2.5, ... 2.18`).
pub fn known_tensorflow_minors() -> String {
    TENSORFLOW
        .iter()
        .map(|row| row.minor)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Driver minimums for a CUDA version; a patch version maps to its minor's row.
pub fn cuda_row_for(cuda: &Version) -> Option<&'static CudaRow> {
    let key = cuda.major_minor();
    CUDA.iter()
        .find(|row| version(row.cuda).major_minor() == key)
}

/// The driver verdict for running CUDA `cuda` on a host driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverVerdict {
    /// At or above the toolkit's driver: everything works.
    Supported,
    /// Between the minor-version-compatibility minimum and the toolkit's driver: runs,
    /// but PTX compiled by a newer toolkit cannot be JIT-compiled.
    MinorVersionCompatibility,
    /// Below both: CUDA initialisation fails.
    TooOld,
}

pub fn driver_verdict(row: &CudaRow, driver: &Version) -> DriverVerdict {
    if *driver >= version(row.driver_min) {
        DriverVerdict::Supported
    } else if *driver >= version(row.driver_compat_min) {
        DriverVerdict::MinorVersionCompatibility
    } else {
        DriverVerdict::TooOld
    }
}

/// The Python a distribution's `python3` package installs, for base images tfimg knows.
/// Keyed by the repository's last path segment and tag (`debian:bullseye-slim`,
/// `ubuntu:22.04`, `nvidia/cuda:11.2.2-cudnn8-runtime-ubuntu20.04`).
pub fn distribution_python(image: &str) -> Option<&'static str> {
    let (repository, tag) = match image.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => (repository, tag),
        _ => (image, "latest"),
    };
    let name = repository.rsplit('/').next().unwrap_or(repository);
    const DEBIAN: &[(&str, &str)] = &[
        ("buster", "3.7"),
        ("10", "3.7"),
        ("bullseye", "3.9"),
        ("11", "3.9"),
        ("bookworm", "3.11"),
        ("12", "3.11"),
        ("trixie", "3.13"),
        ("13", "3.13"),
    ];
    const UBUNTU: &[(&str, &str)] = &[
        ("18.04", "3.6"),
        ("bionic", "3.6"),
        ("20.04", "3.8"),
        ("focal", "3.8"),
        ("22.04", "3.10"),
        ("jammy", "3.10"),
        ("24.04", "3.12"),
        ("noble", "3.12"),
    ];
    let lookup = |table: &[(&str, &'static str)], release: &str| {
        table
            .iter()
            .find(|(name, _)| *name == release)
            .map(|(_, python)| *python)
    };
    match name {
        "debian" => {
            let release = tag.split(['-', '.']).next().unwrap_or(tag);
            lookup(DEBIAN, release)
        }
        "ubuntu" => lookup(UBUNTU, tag),
        "cuda" => {
            // nvidia/cuda tags end in the distribution: `...-runtime-ubuntu20.04`.
            let release = tag.rsplit('-').next()?;
            let release = release.strip_prefix("ubuntu")?;
            lookup(UBUNTU, release)
        }
        _ => None,
    }
}

/// The CUDA/cuDNN shared objects a TensorFlow release dlopens (cuDNN's sub-libraries
/// included, which it loads lazily), by the CUDA and cuDNN it was built against. The
/// driver's `libcuda.so.1` is deliberately absent: it comes from the host.
pub fn cuda_sonames(row: &TensorflowRow) -> Vec<&'static str> {
    let cuda = version(row.cuda).major();
    let cudnn = version(row.cudnn).major();
    let mut sonames: Vec<&'static str> = match cuda {
        11 => vec![
            "libcudart.so.11.0",
            "libcublas.so.11",
            "libcublasLt.so.11",
            "libcufft.so.10",
            "libcurand.so.10",
            // TensorFlow 2.4 was built with CUDA 11.0, whose cuSOLVER is still .so.10.
            if row.minor == "2.4" {
                "libcusolver.so.10"
            } else {
                "libcusolver.so.11"
            },
            "libcusparse.so.11",
        ],
        _ => vec![
            "libcudart.so.12",
            "libcublas.so.12",
            "libcublasLt.so.12",
            "libcufft.so.11",
            "libcurand.so.10",
            "libcusolver.so.11",
            "libcusparse.so.12",
        ],
    };
    if cudnn == 8 {
        sonames.extend([
            "libcudnn.so.8",
            "libcudnn_ops_infer.so.8",
            "libcudnn_ops_train.so.8",
            "libcudnn_cnn_infer.so.8",
            "libcudnn_cnn_train.so.8",
            "libcudnn_adv_infer.so.8",
            "libcudnn_adv_train.so.8",
        ]);
    } else {
        sonames.extend([
            "libcudnn.so.9",
            "libcudnn_graph.so.9",
            "libcudnn_ops.so.9",
            "libcudnn_cnn.so.9",
            "libcudnn_adv.so.9",
            "libcudnn_engines_precompiled.so.9",
            "libcudnn_engines_runtime_compiled.so.9",
            "libcudnn_heuristic.so.9",
        ]);
    }
    sonames
}

/// The `nvidia/cuda` runtime image for a CUDA/cuDNN pair on an Ubuntu release.
pub fn nvidia_cuda_image(cuda: &CudaRow, cudnn_major: u32, ubuntu: &str) -> String {
    format!(
        "nvidia/cuda:{}-cudnn{}-runtime-ubuntu{}",
        cuda.latest_patch, cudnn_major, ubuntu
    )
}

#[cfg(test)]
mod tests {
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
}
