//! The manifest: what a bundle holds (every part with its size and sha256, the images
//! with their ids, tags and tfimg labels, the specs and their locks), as JSON, and the
//! rules a manifest read from a bundle must keep before anything in it is trusted. Pure.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::error::BundleError;
use super::{CHECKSUM_PATH, FORMAT, KIND, MANIFEST_PATH};
use crate::spec::load::valid_name;
use crate::spec::syntax::valid_image_reference;

/// The longest part path: a plain ustar name, no prefix field and no extension headers.
pub const MAX_PATH_BYTES: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always `tfimg-bundle`: what the file is.
    pub kind: String,
    /// The bundle format; a reader refuses a newer one.
    pub format: u32,
    /// The tfimg version that saved it.
    pub tfimg: String,
    /// When it was saved, in seconds since the Unix epoch.
    pub created_unix: u64,
    /// Every part after the manifest, in the order the tar holds them.
    pub parts: Vec<Part>,
    pub images: Vec<BundledImage>,
    pub specs: Vec<BundledSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// Its path in the tar (`images.tar`, `specs/lab.yaml`).
    pub path: String,
    pub size: u64,
    /// Lowercase hex.
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundledImage {
    /// The image id (`sha256:...`), the same after `docker load`.
    pub id: String,
    /// Every tag it had when it was saved (`docker load` sets them again).
    pub tags: Vec<String>,
    /// Its `io.tfimg.*` labels.
    pub labels: BTreeMap<String, String>,
    /// The part holding it (Docker's image tarball).
    pub part: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecSource {
    /// A built-in spec, as `tfimg show` resolves it (every tfimg has the spec itself).
    BuiltIn,
    /// A spec file that was saved, as it was.
    File,
    /// A local spec a saved spec file extends, as it was.
    Parent,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundledSpec {
    pub name: String,
    pub source: SpecSource,
    /// The part holding the spec's YAML.
    pub part: String,
    /// The part holding its lock file (`<name>.lock` beside the spec), when it had one.
    pub lock: Option<String>,
    /// The id of its image in the bundle (none for a parent).
    pub image: Option<String>,
}

impl Manifest {
    /// A manifest with nothing in it yet.
    pub fn new(tfimg: &str, created_unix: u64) -> Manifest {
        Manifest {
            kind: KIND.to_string(),
            format: FORMAT,
            tfimg: tfimg.to_string(),
            created_unix,
            parts: Vec::new(),
            images: Vec::new(),
            specs: Vec::new(),
        }
    }

    /// Pretty JSON, ending with a newline.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// A manifest read from a bundle, checked (format first, so a newer tfimg's
    /// manifest is named as such rather than as a list of unknown fields).
    pub fn decode(bytes: &[u8]) -> Result<Manifest, BundleError> {
        let invalid = |reason: String| BundleError::Manifest { reason };
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|error| invalid(error.to_string()))?;
        if value.get("kind").and_then(|kind| kind.as_str()) != Some(KIND) {
            return Err(BundleError::NotABundle {
                reason: format!("its `{MANIFEST_PATH}` does not say `\"kind\": \"{KIND}\"`"),
            });
        }
        match value.get("format").and_then(|format| format.as_u64()) {
            Some(found) if found > u64::from(FORMAT) => {
                return Err(BundleError::NewerFormat {
                    found: u32::try_from(found).unwrap_or(u32::MAX),
                    supported: FORMAT,
                })
            }
            Some(found) if found == u64::from(FORMAT) => {}
            _ => return Err(invalid(format!("`format` must be {FORMAT}"))),
        }
        let manifest: Manifest =
            serde_json::from_value(value).map_err(|error| invalid(error.to_string()))?;
        manifest.validate()?;
        Ok(manifest)
    }

    /// The part at `path`.
    pub fn part(&self, path: &str) -> Option<&Part> {
        self.parts.iter().find(|part| part.path == path)
    }

    /// The rules every manifest keeps: safe and unique part paths, well-formed digests,
    /// images and specs that name parts the bundle has.
    pub fn validate(&self) -> Result<(), BundleError> {
        let invalid = |reason: String| BundleError::Manifest { reason };
        if self.parts.is_empty() {
            return Err(invalid("it lists no parts".to_string()));
        }
        let mut paths = BTreeSet::new();
        for part in &self.parts {
            if let Some(reason) = path_problem(&part.path) {
                return Err(BundleError::Path {
                    path: part.path.clone(),
                    reason: reason.to_string(),
                });
            }
            if part.path == MANIFEST_PATH || part.path == CHECKSUM_PATH {
                return Err(invalid(format!("`{}` cannot be a part", part.path)));
            }
            if !paths.insert(part.path.as_str()) {
                return Err(invalid(format!("part `{}` is listed twice", part.path)));
            }
            if !is_sha256_hex(&part.sha256) {
                return Err(invalid(format!(
                    "the sha256 of part `{}` is not 64 lowercase hex digits",
                    part.path
                )));
            }
        }
        self.validate_images(&paths)?;
        self.validate_specs(&paths)
    }

    fn validate_images(&self, paths: &BTreeSet<&str>) -> Result<(), BundleError> {
        let invalid = |reason: String| BundleError::Manifest { reason };
        let mut ids = BTreeSet::new();
        for image in &self.images {
            let hex = image.id.strip_prefix("sha256:").unwrap_or_default();
            if !is_sha256_hex(hex) {
                return Err(invalid(format!(
                    "image id `{}` is not `sha256:` and 64 hex digits",
                    image.id
                )));
            }
            if !ids.insert(image.id.as_str()) {
                return Err(invalid(format!("image `{}` is listed twice", image.id)));
            }
            if let Some(tag) = image.tags.iter().find(|tag| !valid_image_reference(tag)) {
                return Err(invalid(format!("`{tag}` is not an image reference")));
            }
            if !paths.contains(image.part.as_str()) {
                return Err(invalid(format!(
                    "image `{}` is in part `{}`, which the manifest does not list",
                    image.id, image.part
                )));
            }
        }
        Ok(())
    }

    fn validate_specs(&self, paths: &BTreeSet<&str>) -> Result<(), BundleError> {
        let invalid = |reason: String| BundleError::Manifest { reason };
        let mut names = BTreeSet::new();
        for spec in &self.specs {
            if !valid_name(&spec.name) {
                return Err(invalid(format!("`{}` is not a spec name", spec.name)));
            }
            if !names.insert(spec.name.as_str()) {
                return Err(invalid(format!("spec `{}` is listed twice", spec.name)));
            }
            for part in std::iter::once(&spec.part).chain(&spec.lock) {
                if !paths.contains(part.as_str()) {
                    return Err(invalid(format!(
                        "spec `{}` is in part `{part}`, which the manifest does not list",
                        spec.name
                    )));
                }
            }
            if let Some(image) = &spec.image {
                if !self.images.iter().any(|bundled| &bundled.id == image) {
                    return Err(invalid(format!(
                        "spec `{}` names image `{image}`, which the manifest does not list",
                        spec.name
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Why `path` cannot be a part's path, if it cannot: only plain relative paths of
/// letters, digits, `.`, `_`, `-` and `/`, never leaving the bundle.
pub fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("is empty");
    }
    if path.starts_with('/') {
        return Some("is absolute");
    }
    if path.split('/').any(|component| component == "..") {
        return Some("escapes the bundle (`..`)");
    }
    if path
        .split('/')
        .any(|component| component.is_empty() || component == ".")
    {
        return Some("has an empty or `.` component");
    }
    if path.len() > MAX_PATH_BYTES {
        return Some("is longer than 100 bytes");
    }
    if !path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
    {
        return Some("holds characters other than letters, digits, `.`, `_`, `-` and `/`");
    }
    None
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

#[cfg(test)]
mod tests;
