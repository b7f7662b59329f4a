//! The image a build makes: its build key (sha256 over the Dockerfile, the context's
//! digest and the base image id) and its tags. Pure.

use sha2::{Digest, Sha256};

use crate::spec::ResolvedSpec;

/// Everything decided before the daemon is asked to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePlan {
    /// Hex sha256.
    pub key: String,
    /// `tfimg/<name>:<tensorflow>`: the moving tag `tfimg run` uses.
    pub tag: String,
    /// `tfimg/<name>:<tensorflow>-<first 12 hex of the key>`: this exact build.
    pub keyed_tag: String,
    /// Extra tags the user asked for.
    pub extra_tags: Vec<String>,
}

impl ImagePlan {
    pub fn all_tags(&self) -> Vec<String> {
        let mut tags = vec![self.tag.clone(), self.keyed_tag.clone()];
        tags.extend(self.extra_tags.iter().cloned());
        tags
    }
}

/// sha256 over the Dockerfile, the context tar's digest and the base image id.
pub fn build_key(dockerfile: &str, context_digest: &[u8; 32], base_image_id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"tfimg build key v1\n");
    hasher.update(dockerfile.as_bytes());
    hasher.update(context_digest);
    hasher.update(base_image_id.as_bytes());
    hex(&hasher.finalize())
}

pub fn plan(spec: &ResolvedSpec, key: String, extra_tags: &[String]) -> ImagePlan {
    let tag = spec.image_reference();
    let keyed_tag = format!("{tag}-{}", &key[..12]);
    ImagePlan {
        key,
        tag,
        keyed_tag,
        extra_tags: extra_tags.to_vec(),
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests;
