//! The CUDA compute cache of a GPU container: a named volume per host user, mounted where
//! the image's `CUDA_CACHE_PATH` points, so the kernels the driver JIT-compiles from PTX
//! (minutes on a GPU newer than TensorFlow's machine code) are compiled once per user, not
//! once per container. One volume per uid keeps users apart: CUDA writes its index and
//! entries with the writer's umask, so a cache shared by two users would be half unwritable
//! for each. Pure: the launcher mounts what this decides.

use std::collections::BTreeMap;

use crate::labels;

/// A named volume to mount (created by Docker, with these labels, the first time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumePlan {
    pub name: String,
    pub target: String,
    pub read_only: bool,
    pub labels: BTreeMap<String, String>,
}

/// The cache volume for a container: only when it gets GPUs, its image has a cache folder
/// (`io.tfimg.cuda-cache`, which tfimg's GPU images carry) and the user did not choose
/// otherwise (their own `CUDA_CACHE_PATH` or `CUDA_CACHE_DISABLE=1`, or a mount, volume or
/// sync of theirs on, over or under the folder: `taken` are their destinations).
pub fn cuda_cache(
    image_folder: Option<&str>,
    gets_gpus: bool,
    uid: u32,
    env: &[(String, String)],
    taken: &[&str],
) -> Option<VolumePlan> {
    let folder = image_folder.filter(|_| gets_gpus)?;
    let own_choice = env.iter().any(|(key, value)| {
        key == "CUDA_CACHE_PATH" || (key == "CUDA_CACHE_DISABLE" && value.trim() == "1")
    });
    let overlaps = |target: &str| {
        let inside = |outer: &str, inner: &str| {
            inner == outer || inner.starts_with(&format!("{}/", outer.trim_end_matches('/')))
        };
        inside(target, folder) || inside(folder, target)
    };
    if own_choice || taken.iter().any(|target| overlaps(target)) {
        return None;
    }
    Some(VolumePlan {
        name: labels::cuda_cache_volume(uid),
        target: folder.to_string(),
        read_only: false,
        labels: BTreeMap::from([(labels::CUDA_CACHE.to_string(), uid.to_string())]),
    })
}

#[cfg(test)]
mod tests;
