//! The lock file as written: the inputs it was made from, the base image, and every apt
//! package and pip distribution grouped by the Dockerfile layer that installs it. serde
//! reads and writes it; every struct denies unknown fields.
//!
//! Plain data, here rather than in `lock/` because a resolved spec carries its lock
//! (`ResolvedSpec::lock`, `inherited`) while `lock/` reads specs: the model sits below
//! both. `lock/` re-exports the types it hands out.

use serde::{Deserialize, Serialize};

/// The format version this tfimg reads and writes.
pub const FORMAT: u32 = 1;

/// A whole lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// The format version (`lock: 1`).
    pub lock: u32,
    /// The spec it locks.
    pub spec: String,
    /// What the spec said when the lock was made; `lock --check` compares them.
    pub inputs: Inputs,
    /// The base image the resolution ran on.
    pub base: Base,
    pub apt: AptGroups,
    pub pip: PipGroups,
}

/// The spec's inputs that decide what the lock holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inputs {
    pub base: String,
    pub tensorflow: String,
    pub python: String,
    /// `11.8 (pip)` for GPU stacks; absent for CPU ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    /// What the TensorFlow layer installs: TensorFlow and its CUDA wheels.
    pub requirements: Vec<String>,
    /// The pins every install runs under.
    pub constraints: Vec<String>,
    /// The spec's own pip packages.
    pub pip: Vec<String>,
    /// Those installed without their dependencies (the serving image's TensorFlow Serving
    /// API); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pip_no_deps: Vec<String>,
    /// Every apt package the spec asks for (the shared ones and the variant's).
    pub apt: Vec<String>,
}

/// The base image: its reference and the id it had where the lock was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    pub reference: String,
    pub id: String,
}

/// apt packages by layer, each with the closure apt installs for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AptGroups {
    /// The first layer, shared by every variant of a base.
    pub system: Vec<AptPackage>,
    /// The variant's own system packages.
    #[serde(default)]
    pub variant: Vec<AptPackage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AptPackage {
    pub name: String,
    pub version: String,
}

/// pip distributions by layer. A later group replaces an earlier one's distribution of
/// the same name (TensorFlow's setuptools replaces the venv's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipGroups {
    /// What `python3 -m venv` puts there (from Debian's packages, so no hashes).
    pub venv: Vec<Distribution>,
    /// The pinned pip.
    pub pip: Vec<Distribution>,
    /// TensorFlow, its pins, its CUDA wheels and everything they pull.
    pub tensorflow: Vec<Distribution>,
    /// What the spec's pip packages add on top.
    #[serde(default)]
    pub packages: Vec<Distribution>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distribution {
    pub name: String,
    pub version: String,
    /// sha256 of the file pip installs on this platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// The groups in install order, with the names the lock and the build use for them.
impl PipGroups {
    pub fn in_order(&self) -> [(&'static str, &Vec<Distribution>); 4] {
        [
            ("venv", &self.venv),
            ("pip", &self.pip),
            ("tensorflow", &self.tensorflow),
            ("packages", &self.packages),
        ]
    }
}

/// A lock as a spec carries it: the parsed file, how messages name it, and the sha256 of
/// its bytes (the image's `io.tfimg.lock` label).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    pub file: LockFile,
    pub display: String,
    pub digest: String,
}

/// A distribution name as pip compares them (PEP 503).
pub fn normalize(name: &str) -> String {
    let mut normalized = String::with_capacity(name.len());
    let mut separator = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            separator = true;
            continue;
        }
        if separator && !normalized.is_empty() {
            normalized.push('-');
        }
        separator = false;
        normalized.push(c.to_ascii_lowercase());
    }
    normalized
}

/// The lock a spec without its own takes its layers from: the nearest one (an ancestor's,
/// a sibling's or a built-in's) made from the same inputs below the variant, so the
/// spec's image is those layers byte for byte and shares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inherited {
    pub locked: Locked,
    /// The spec asks for the lock's apt packages: its variant layer is pinned too.
    pub variant: bool,
    /// The spec asks for the lock's pip packages as well: the whole image is pinned.
    pub packages: bool,
}

/// What pins a spec's image, layer by layer: its own lock (every layer), or an
/// inherited one (the layers up to TensorFlow's, and those above whose inputs match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pins<'a> {
    pub locked: &'a Locked,
    /// The spec's own lock, not an inherited one.
    pub own: bool,
    pub variant: bool,
    pub packages: bool,
}

impl Pins<'_> {
    /// Whether every layer is pinned, so the installed distributions must equal the lock's.
    pub fn whole(&self) -> bool {
        self.variant && self.packages
    }

    /// Which layers the lock pins, in words.
    pub fn layers(&self) -> &'static str {
        match (self.variant, self.packages) {
            (true, true) => "every layer",
            (true, false) => "every layer but the spec's own pip packages",
            _ => "the layers up to TensorFlow's",
        }
    }
}
