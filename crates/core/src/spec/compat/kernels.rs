//! Which GPUs a TensorFlow line's wheels carry GPU code for, and what a GPU of a given
//! compute capability makes of it: machine code (SASS) that starts at once, PTX that the
//! driver JIT-compiles when a process starts (minutes for all of TensorFlow's kernels),
//! or nothing TensorFlow can use. Also the compute capability of GPUs by name, for drivers
//! whose nvidia-smi cannot report it (its `compute_cap` field came after the 470 drivers).
//! Pure data and rules: no I/O.
//!
//! Sources of the kernels per line: `tf.sysconfig.get_build_info()["cuda_compute_capabilities"]`
//! of the released wheels, as users printed it: CUDA 11.2 builds (2.5 to 2.11) and the
//! CUDA 11.8 build of 2.14 report `sm_35, sm_50, sm_60, sm_70, sm_75, compute_80`; the CUDA
//! 12.3 build of 2.16 reports `sm_50, sm_60, sm_70, sm_80, compute_90`; the CUDA 12.5.1
//! build of 2.18 reports `sm_60, sm_70, sm_80, sm_89, compute_90`, which is also what
//! TensorFlow's `.bazelrc` sets for its CUDA 12.5 clang builds. 2.4 (CUDA 11.0), 2.12 and
//! 2.13 (CUDA 11.8) use the same `release_gpu` setting as 2.5 to 2.11 (TensorFlow says 2.4
//! runs on 5.0, tensorflow/tensorflow#46537); 2.15 and 2.17 are the CUDA 12 clang builds of
//! 2.16. Compute capabilities by name: NVIDIA's CUDA GPUs list.

use std::fmt;

/// A GPU's compute capability, `major.minor` (`9.0` for H100).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    /// `9.0`, `8.6` (nvidia-smi's `compute_cap`); `None` on anything else (`[N/A]`).
    pub fn parse(text: &str) -> Option<ComputeCapability> {
        let (major, minor) = text.trim().split_once('.')?;
        let number = |part: &str| {
            (!part.is_empty() && part.len() <= 3 && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())
                .flatten()
        };
        Some(ComputeCapability {
            major: number(major)?,
            minor: number(minor)?,
        })
    }

    fn of(text: &'static str) -> ComputeCapability {
        ComputeCapability::parse(text).expect("the tables hold valid capabilities")
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The GPU code in a TensorFlow line's wheels: machine code (SASS) for some compute
/// capabilities and PTX for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernels {
    /// `sm_XY`: runs as it is on GPUs of major X and minor Y or above.
    pub sass: &'static [&'static str],
    /// `compute_XY`: the driver compiles it for any GPU of X.Y or newer.
    pub ptx: &'static str,
}

/// 2.4 to 2.14: `sm_35,sm_50,sm_60,sm_70,sm_75,compute_80`.
pub const KERNELS_CUDA_11: Kernels = Kernels {
    sass: &["3.5", "5.0", "6.0", "7.0", "7.5"],
    ptx: "8.0",
};

/// 2.15 to 2.17: `sm_50,sm_60,sm_70,sm_80,compute_90`.
pub const KERNELS_CUDA_12: Kernels = Kernels {
    sass: &["5.0", "6.0", "7.0", "8.0"],
    ptx: "9.0",
};

/// 2.18: `sm_60,sm_70,sm_80,sm_89,compute_90`.
pub const KERNELS_CUDA_12_5: Kernels = Kernels {
    sass: &["6.0", "7.0", "8.0", "8.9"],
    ptx: "9.0",
};

/// What a GPU runs of a line's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelFit {
    /// Machine code built for this capability (the one named): no compilation.
    Sass(ComputeCapability),
    /// Only the PTX (of the capability named): the driver JIT-compiles every kernel the
    /// first time a process loads it, unless its compute cache already holds the result.
    Ptx(ComputeCapability),
    /// Older than every kernel: TensorFlow cannot use this GPU.
    Unsupported,
}

impl Kernels {
    /// SASS runs within its major on the same or a higher minor; PTX compiles for any GPU
    /// at or above it.
    pub fn fit(&self, gpu: ComputeCapability) -> KernelFit {
        let sass = self
            .sass
            .iter()
            .map(|text| ComputeCapability::of(text))
            .filter(|sass| sass.major == gpu.major && sass.minor <= gpu.minor)
            .max();
        if let Some(sass) = sass {
            return KernelFit::Sass(sass);
        }
        let ptx = ComputeCapability::of(self.ptx);
        if gpu >= ptx {
            KernelFit::Ptx(ptx)
        } else {
            KernelFit::Unsupported
        }
    }

    /// `3.5 to 7.5` (the SASS range), for messages.
    pub fn sass_range(&self) -> String {
        match (self.sass.first(), self.sass.last()) {
            (Some(first), Some(last)) if first != last => format!("{first} to {last}"),
            (Some(only), _) => only.to_string(),
            _ => "none".to_string(),
        }
    }
}

/// The compute capability of a GPU by the name nvidia-smi gives it (`Tesla V100-SXM2-16GB`,
/// `NVIDIA A100-SXM4-40GB`, `GeForce GTX 1080 Ti`), where tfimg's table knows the model.
pub fn capability_by_name(name: &str) -> Option<ComputeCapability> {
    let words: Vec<String> = name
        .split(|c: char| c.is_whitespace() || c == '-')
        .map(|word| word.trim_end_matches('.').to_ascii_uppercase())
        .filter(|word| !word.is_empty())
        .collect();
    let model = words.iter().find_map(|word| {
        MODELS
            .iter()
            .find(|(models, _)| models.contains(&word.as_str()))
            .map(|(_, capability)| *capability)
    });
    model
        .or_else(|| consumer_series(&words))
        .map(ComputeCapability::of)
}

/// Data-centre and workstation models, by the word that names them.
const MODELS: &[(&[&str], &str)] = &[
    (
        &[
            "K20", "K20C", "K20M", "K20X", "K20XM", "K40", "K40C", "K40M",
        ],
        "3.5",
    ),
    (&["K80"], "3.7"),
    (&["M4", "M6", "M40", "M60"], "5.2"),
    (&["P100"], "6.0"),
    (&["P4", "P40", "XP"], "6.1"),
    (&["V100", "V100S"], "7.0"),
    (&["T4", "T1000", "T400"], "7.5"),
    (&["A100", "A30", "A800"], "8.0"),
    (
        &[
            "A2", "A10", "A10G", "A16", "A40", "A2000", "A4000", "A4500", "A5000", "A6000",
        ],
        "8.6",
    ),
    (&["L4", "L20", "L40", "L40S", "ADA"], "8.9"),
    (&["H100", "H200", "H800", "H20", "GH200"], "9.0"),
    (&["B100", "B200", "GB200"], "10.0"),
];

/// GeForce, TITAN and Quadro RTX cards by their series: `RTX 4090`, `GTX 1080`, `Quadro RTX 4000`.
fn consumer_series(words: &[String]) -> Option<&'static str> {
    if words.iter().any(|word| word == "QUADRO") && words.iter().any(|word| word == "RTX") {
        return Some("7.5");
    }
    if words.iter().any(|word| word == "TITAN") {
        return match words.last().map(String::as_str) {
            Some("V") => Some("7.0"),
            Some("RTX") => Some("7.5"),
            _ => None,
        };
    }
    let number = words.windows(2).find_map(|pair| {
        matches!(pair[0].as_str(), "RTX" | "GTX")
            .then(|| pair[1].trim_end_matches("TI"))
            .filter(|number| number.len() >= 3 && number.bytes().all(|b| b.is_ascii_digit()))
    })?;
    match number.len() {
        4 => match &number[..2] {
            "50" => Some("12.0"),
            "40" => Some("8.9"),
            "30" => Some("8.6"),
            "20" | "16" => Some("7.5"),
            "10" => Some("6.1"),
            _ => None,
        },
        3 if number.starts_with('9') => Some("5.2"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
