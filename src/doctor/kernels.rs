//! The host's GPUs against the GPU code in a TensorFlow line's wheels: machine code (SASS)
//! starts at once; a GPU newer than all of it runs the PTX, which the driver JIT-compiles
//! at the first start of every process (minutes for TensorFlow's kernels) unless the CUDA
//! compute cache holds it, which tfimg mounts into every GPU container.

use std::collections::BTreeMap;

use super::{check, Check, Verdict};
use crate::plan::gpus::HostGpu;
use crate::render::dockerfile::{CUDA_CACHE_FOLDER, CUDA_CACHE_MAX_BYTES};
use crate::spec::compat::{self, ComputeCapability, KernelFit, Version, TENSORFLOW};

/// How one group of GPUs (same name and capability) fares.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    Sass,
    Ptx,
    Unsupported,
    Unknown,
}

/// The verdict for `tensorflow`'s line on these GPUs, naming `cache_volume` (the user's
/// cache); `None` when there is nothing to judge (no GPU, a line tfimg does not know).
pub fn kernels_check(tensorflow: &str, gpus: &[HostGpu], cache_volume: &str) -> Option<Check> {
    if gpus.is_empty() {
        return None;
    }
    let row = compat::tensorflow_row(&Version::parse(tensorflow)?)?;
    let kernels = row.kernels();
    let groups = group(gpus, &kernels);
    let described = |wanted: Fit| described(&groups, wanted);
    let line = format!(
        "TensorFlow {}'s wheels carry machine code (SASS) for compute capability {} and PTX for {}",
        row.minor,
        kernels.sass_range(),
        kernels.ptx
    );
    let (ptx, unsupported, unknown) = (
        described(Fit::Ptx),
        described(Fit::Unsupported),
        described(Fit::Unknown),
    );
    if !ptx.is_empty() {
        return Some(ptx_warning(&line, &ptx, &unsupported, cache_volume, gpus));
    }
    if !unsupported.is_empty() {
        return Some(check(
            "gpu-kernels",
            Verdict::Warn,
            format!(
                "{line}: {} is older than all of it, so TensorFlow {} will not use it",
                unsupported.join("; "),
                row.minor
            ),
            older_line_for(gpus, row.minor).map(|minor| {
                format!("TensorFlow {minor} still has machine code for it (`tensorflow: \"{minor}\"` in the spec)")
            }),
        ));
    }
    let sass = described(Fit::Sass);
    if sass.is_empty() {
        return Some(check(
            "gpu-kernels",
            Verdict::Warn,
            format!(
                "{line}; the compute capability of {} is unknown (the driver's nvidia-smi cannot report it and tfimg does not know the name)",
                unknown.join("; ")
            ),
            Some("look it up on https://developer.nvidia.com/cuda-gpus: above the SASS, the first start of each process compiles the PTX (minutes), which tfimg's CUDA cache keeps to once".to_string()),
        ));
    }
    Some(check(
        "gpu-kernels",
        Verdict::Pass,
        format!("{line}: machine code for {}", sass.join("; ")),
        None,
    ))
}

/// GPUs grouped by what they are and how they fare: (fit, name, capability) → indices.
type Groups = BTreeMap<(Fit, String, Option<ComputeCapability>), Vec<u32>>;

fn group(gpus: &[HostGpu], kernels: &compat::Kernels) -> Groups {
    let mut groups = Groups::new();
    for gpu in gpus {
        let capability = gpu
            .compute_capability
            .or_else(|| compat::capability_by_name(&gpu.name));
        let fit = match capability.map(|capability| kernels.fit(capability)) {
            Some(KernelFit::Sass(_)) => Fit::Sass,
            Some(KernelFit::Ptx(_)) => Fit::Ptx,
            Some(KernelFit::Unsupported) => Fit::Unsupported,
            None => Fit::Unknown,
        };
        groups
            .entry((fit, gpu.name.clone(), capability))
            .or_default()
            .push(gpu.index);
    }
    groups
}

/// `GPUs 0, 1 (NVIDIA H100 80GB HBM3, 9.0)` for each group that fares as `wanted`.
fn described(groups: &Groups, wanted: Fit) -> Vec<String> {
    groups
        .iter()
        .filter(|((fit, _, _), _)| *fit == wanted)
        .map(|((_, name, capability), indices)| {
            let indices: Vec<String> = indices.iter().map(u32::to_string).collect();
            let capability = capability.map_or("unknown".to_string(), |c| c.to_string());
            let noun = if indices.len() == 1 { "GPU" } else { "GPUs" };
            format!("{noun} {} ({name}, {capability})", indices.join(", "))
        })
        .collect()
}

/// The warning for GPUs that only run the PTX: what the first start costs, and that the
/// cache keeps it to once.
fn ptx_warning(
    line: &str,
    ptx: &[String],
    unsupported: &[String],
    cache_volume: &str,
    gpus: &[HostGpu],
) -> Check {
    let mut summary = format!(
        "{line}: {} newer, so the first start of each process JIT-compiles TensorFlow's GPU kernels from PTX, which takes minutes; tfimg's CUDA cache (volume `{cache_volume}` at `{CUDA_CACHE_FOLDER}`, mounted into every GPU container it starts) keeps that to once per user and driver",
        if ptx.len() == 1 && !ptx[0].starts_with("GPUs") {
            format!("{} is", ptx[0])
        } else {
            format!("{} are", ptx.join("; "))
        },
    );
    if !unsupported.is_empty() {
        summary.push_str(&format!(
            "; {} is older than all of it and unused",
            unsupported.join("; ")
        ));
    }
    let newer = newer_line_for(gpus);
    let mut fix = format!(
        "expect the first start to be slow, then fast: keep the volume (`docker volume rm {cache_volume}` frees its space and starts over; CUDA_CACHE_MAXSIZE is {} GiB)",
        CUDA_CACHE_MAX_BYTES >> 30
    );
    if let Some(minor) = newer {
        fix.push_str(&format!(
            "; TensorFlow {minor} or later has machine code for these GPUs"
        ));
    }
    check("gpu-kernels", Verdict::Warn, summary, Some(fix))
}

/// Capabilities of the GPUs (reported, else by name).
fn capabilities(gpus: &[HostGpu]) -> Vec<ComputeCapability> {
    gpus.iter()
        .filter_map(|gpu| {
            gpu.compute_capability
                .or_else(|| compat::capability_by_name(&gpu.name))
        })
        .collect()
}

/// The oldest TensorFlow line with machine code for every GPU here.
fn newer_line_for(gpus: &[HostGpu]) -> Option<&'static str> {
    let capabilities = capabilities(gpus);
    TENSORFLOW
        .iter()
        .find(|row| {
            !capabilities.is_empty()
                && capabilities
                    .iter()
                    .all(|capability| matches!(row.kernels().fit(*capability), KernelFit::Sass(_)))
        })
        .map(|row| row.minor)
}

/// The newest line before `minor` that can use every GPU here.
fn older_line_for(gpus: &[HostGpu], minor: &str) -> Option<&'static str> {
    let capabilities = capabilities(gpus);
    TENSORFLOW
        .iter()
        .take_while(|row| row.minor != minor)
        .filter(|row| {
            capabilities
                .iter()
                .all(|capability| row.kernels().fit(*capability) != KernelFit::Unsupported)
        })
        .last()
        .map(|row| row.minor)
}

#[cfg(test)]
mod tests;
