//! The TensorFlow compatibility table: which Python, CUDA and cuDNN each TensorFlow minor
//! release was built and tested with, the NVIDIA driver those CUDA versions need, the
//! package pins that keep each release importable, and where a GPU image gets its CUDA
//! user-space libraries from.
//!
//! Pure data and lookups: no I/O, no knowledge of specs or files. Sources: TensorFlow's
//! "tested build configurations" table and NVIDIA's CUDA release notes (driver table).
//!
//! The table itself is in `table`, the version type in `version`; this file holds the
//! row types and the lookups.

mod date;
mod kernels;
pub mod support;
mod table;
mod version;

pub use date::Date;
pub use kernels::{capability_by_name, ComputeCapability, KernelFit, Kernels};
pub use table::{CUDA, TENSORFLOW};
pub use version::Version;

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

    /// The GPU code in this line's wheels. It followed the CUDA toolchain of each release:
    /// the CUDA 11 builds (2.4 to 2.14) carry SASS for 3.5 to 7.5 and PTX for 8.0, the
    /// CUDA 12.2/12.3 builds (2.15 to 2.17) SASS for 5.0 to 8.0 and PTX for 9.0, the CUDA
    /// 12.5 build (2.18) SASS for 6.0 to 8.9 and PTX for 9.0 (sources in `kernels`).
    pub fn kernels(&self) -> Kernels {
        match self.cuda {
            "12.5" => kernels::KERNELS_CUDA_12_5,
            cuda if cuda.starts_with("12.") => kernels::KERNELS_CUDA_12,
            _ => kernels::KERNELS_CUDA_11,
        }
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
    support::distribution(image).map(|row| row.python)
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

/// The table as Markdown, for docs/reference/compatibility.md (generated from this data
/// and checked against it by the tests, so the page cannot drift from what tfimg does).
pub fn table_markdown() -> String {
    let mut text = String::from(
        "| TensorFlow | newest patch | Python | built with CUDA / cuDNN | GPU images carry | NVIDIA driver | pins |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in TENSORFLOW {
        let pinned = |name: &str| {
            row.pip_cuda.pins().iter().find_map(|pin| {
                let (package, version) = pin.split_once("==")?;
                let (major, minor) = Version::parse(version)?.major_minor();
                (package == name).then(|| format!("{major}.{minor}"))
            })
        };
        let carried = match row.pip_cuda {
            PipCuda::Wheels { cuda, cudnn, .. } => Some((
                format!("CUDA {cuda} / cuDNN {cudnn} (NVIDIA's wheels, pinned by tfimg)"),
                cuda.to_string(),
            )),
            PipCuda::AndCudaExtra { .. } => {
                let cuda = pinned("nvidia-cuda-runtime-cu12").unwrap_or_default();
                let cudnn = pinned("nvidia-cudnn-cu12").unwrap_or_default();
                Some((
                    format!("CUDA {cuda} / cuDNN {cudnn} (`tensorflow[and-cuda]`'s wheels)"),
                    cuda,
                ))
            }
            PipCuda::Unavailable => None,
        };
        let (carried, driver) = match carried {
            Some((text, cuda)) => {
                let driver = Version::parse(&cuda)
                    .and_then(|cuda| cuda_row_for(&cuda))
                    .map(|row| {
                        format!(
                            "{} or later ({} or later through minor-version compatibility)",
                            row.driver_min, row.driver_compat_min
                        )
                    })
                    .unwrap_or_else(|| "-".to_string());
                (text, driver)
            }
            None => (
                "no wheels carry its libraries: `cuda_provider: image`".to_string(),
                "-".to_string(),
            ),
        };
        let pins = match row.pins {
            [] => "-".to_string(),
            pins => pins
                .iter()
                .map(|pin| format!("`{pin}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        text.push_str(&format!(
            "| {} | {} | {} to {} | {} / {} | {carried} | {driver} | {pins} |\n",
            row.minor, row.latest_patch, row.python_min, row.python_max, row.cuda, row.cudnn
        ));
    }
    text
}

#[cfg(test)]
mod tests;
