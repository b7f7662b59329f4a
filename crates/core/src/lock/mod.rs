//! Environment locks: `SPEC.lock` holds every apt package and pip distribution a spec's
//! image installs, with exact versions and (pip) sha256 hashes, grouped by the layer that
//! installs them, plus the inputs it was made from. This module reads and writes the
//! file, compares it with its spec, renders pip's requirement files from it and reads
//! pip's hash failures. Pure: `app::lock` does the reading, writing and resolving. The
//! file's data model is `spec::locked` (a resolved spec carries its lock); `show` is what
//! `tfimg show` prints of a spec and its lock.

pub mod check;
pub mod read;
pub mod resolve;
pub mod show;

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::spec::locked::normalize;
pub use crate::spec::locked::{Distribution, Inherited, LockFile, Locked, Pins};
pub use check::differences;

/// What pins `spec`'s image: its own lock, else the one it inherits; `None` when nothing does.
pub fn pins(spec: &crate::spec::ResolvedSpec) -> Option<Pins<'_>> {
    if let Some(locked) = &spec.lock {
        return Some(Pins {
            locked,
            own: true,
            variant: true,
            packages: true,
        });
    }
    spec.inherited.as_ref().map(|inherited| Pins {
        locked: &inherited.locked,
        own: false,
        variant: inherited.variant,
        packages: inherited.packages,
    })
}

/// The first lines of every lock file.
pub const HEADER: &str = "# written by tfimg lock: do not edit\n# make it again with `tfimg lock SPEC`; `tfimg lock SPEC --check` compares it with the spec\n";

/// A lock's text: the header, then the YAML.
pub fn to_text(lock: &LockFile) -> String {
    let yaml = serde_yaml::to_string(lock).expect("a lock is plain data");
    format!("{HEADER}{yaml}")
}

/// The lock of spec `spec` read from `bytes` (shown as `display`), with the digest of
/// those bytes.
pub fn load(bytes: Vec<u8>, display: &str, spec: &str) -> Result<Locked, crate::input::SpecError> {
    load_any(bytes, display, Some(spec))
}

/// The embedded lock of the built-in `name`; `None` when it has none.
pub fn builtin(name: &str) -> Option<Result<Locked, crate::input::SpecError>> {
    let text = crate::spec::load::builtin_lock(name)?;
    let display = format!("builtin:{name}.lock");
    Some(load(text.as_bytes().to_vec(), &display, name))
}

/// A lock read from `bytes`; with `spec`, it must be that spec's.
pub fn load_any(
    bytes: Vec<u8>,
    display: &str,
    spec: Option<&str>,
) -> Result<Locked, crate::input::SpecError> {
    let digest = hex_digest(&bytes);
    let file = read::parse_bytes(bytes, display, spec)?;
    Ok(Locked {
        file,
        display: display.to_string(),
        digest,
    })
}

/// `sha256:<hex>` of `bytes`: the value of the image's `io.tfimg.lock` label.
pub fn hex_digest(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

/// pip's requirement file for one group: `name==version --hash=sha256:...` per line.
pub fn requirements(distributions: &[Distribution]) -> String {
    let mut text = String::new();
    for distribution in distributions {
        text.push_str(&format!("{}=={}", distribution.name, distribution.version));
        if let Some(hash) = &distribution.sha256 {
            text.push_str(&format!(" --hash=sha256:{hash}"));
        }
        text.push('\n');
    }
    text
}

/// The distributions the finished image holds, by normalized name: every group in
/// install order, a later one replacing an earlier one's distribution of the same name.
pub fn expected(lock: &LockFile) -> BTreeMap<String, String> {
    merged(lock, |_| true)
}

/// What the layers up to TensorFlow's install (the groups a spec without its own lock
/// inherits), the same way.
pub fn expected_below_packages(lock: &LockFile) -> BTreeMap<String, String> {
    merged(lock, |group| group != "packages")
}

fn merged(lock: &LockFile, wanted: impl Fn(&str) -> bool) -> BTreeMap<String, String> {
    let mut expected = BTreeMap::new();
    for (group, distributions) in lock.pip.in_order() {
        if !wanted(group) {
            continue;
        }
        for distribution in distributions {
            expected.insert(normalize(&distribution.name), distribution.version.clone());
        }
    }
    expected
}

/// The requirements pip refused because a file's sha256 was not the one required: the
/// lines after "THESE PACKAGES DO NOT MATCH THE HASHES" that start with `name==version`.
pub fn hash_mismatches(output: &[String]) -> Vec<String> {
    let Some(start) = output
        .iter()
        .position(|line| line.contains("THESE PACKAGES DO NOT MATCH THE HASHES"))
    else {
        return Vec::new();
    };
    output[start + 1..]
        .iter()
        .filter_map(|line| {
            let word = line.split_whitespace().next()?;
            let word = word.trim_end_matches(':');
            let (name, version) = word.split_once("==")?;
            (!name.is_empty() && !version.is_empty()).then(|| word.to_string())
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
