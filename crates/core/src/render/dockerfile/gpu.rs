//! What a GPU image's environment holds beyond the spec's: the NVIDIA runtime's variables,
//! the CUDA wheels' library path, XLA's tools, and the CUDA compute cache. Pure.

use super::syntax::quote;
use crate::spec::resolved::GpuStack;
use crate::spec::ResolvedSpec;

/// XLA's flags variable, and the flag naming the folder of ptxas and libdevice.
pub(super) const XLA_FLAGS: &str = "XLA_FLAGS";
const XLA_DATA_DIR_FLAG: &str = "--xla_gpu_cuda_data_dir";

/// GPU images: where CUDA keeps the kernels it JIT-compiles from PTX (`CUDA_CACHE_PATH`).
/// The folder is mode 1777 in the image, so the named volume the launcher mounts there
/// starts out with that mode (Docker copies an image folder's contents, owner and mode
/// into an empty volume) and whatever uid the container runs as can write it.
pub const CUDA_CACHE_FOLDER: &str = "/var/cache/tfimg/cuda";

/// `CUDA_CACHE_MAXSIZE`, in bytes: 4 GiB, the largest value CUDA accepts. Its default
/// (256 MiB in older CUDA, 1 GiB in newer) is less than TensorFlow 2.3's release notes ask
/// for Ampere GPUs (2 GiB), and whatever does not fit is compiled again at every start.
pub const CUDA_CACHE_MAX_BYTES: u64 = 4 << 30;

/// What the NVIDIA runtime and XLA need from a GPU image; PATH already as the Dockerfile
/// must read it, every other value unquoted.
pub(super) fn gpu_environment(gpu: &GpuStack) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    // `void`: no GPU unless the run asks for one, even where `nvidia` is the default
    // runtime; --gpus sets the devices explicitly.
    env.push(("NVIDIA_VISIBLE_DEVICES", "void".to_string()));
    env.push(("NVIDIA_DRIVER_CAPABILITIES", "compute,utility".to_string()));
    let major = gpu.cuda.split('.').next().unwrap_or("0");
    // Minor-version compatibility: any driver of this CUDA major can start it;
    // `tfimg doctor` warns below the toolkit's own driver.
    env.push(("NVIDIA_REQUIRE_CUDA", format!("cuda>={major}.0")));
    // A GPU newer than the SASS in TensorFlow's wheels runs its PTX, compiled at every
    // process start unless this cache (a volume `tfimg run` mounts) already holds it.
    env.push(("CUDA_CACHE_PATH", CUDA_CACHE_FOLDER.to_string()));
    env.push(("CUDA_CACHE_MAXSIZE", CUDA_CACHE_MAX_BYTES.to_string()));
    if !gpu.library_path.is_empty() {
        env.push(("LD_LIBRARY_PATH", gpu.library_path.join(":")));
    }
    if let Some(data_dir) = &gpu.cuda_data_dir {
        // XLA finds libdevice under the data folder, ptxas there or on PATH; shells
        // and Jupyter find ptxas on PATH (profile.sh keeps it for login shells).
        env.push((
            "PATH",
            format!("{}:$PATH", quote(&format!("{data_dir}/bin"))),
        ));
    }
    env
}

/// XLA's flags: the CUDA data folder of a pip GPU stack, then the spec's own `XLA_FLAGS`
/// (which win when they name a data folder themselves).
pub(super) fn xla_flags(spec: &ResolvedSpec) -> Option<String> {
    let own = spec
        .env
        .get(XLA_FLAGS)
        .filter(|flags| !flags.trim().is_empty());
    let data_dir = spec.gpu.as_ref().and_then(|gpu| gpu.cuda_data_dir.as_ref());
    match (data_dir, own) {
        (Some(_), Some(own)) if own.contains(&format!("{XLA_DATA_DIR_FLAG}=")) => Some(own.clone()),
        (Some(data_dir), Some(own)) => Some(format!("{XLA_DATA_DIR_FLAG}={data_dir} {own}")),
        (Some(data_dir), None) => Some(format!("{XLA_DATA_DIR_FLAG}={data_dir}")),
        (None, own) => own.cloned(),
    }
}
