//! The catalog of specs: the built-ins embedded in the binary and local specs
//! (`./images/*.yaml`) overriding them by name; finding a spec by name and walking its
//! `extends` chain with cycle detection. Pure: `app::catalog` reads the local files and
//! hands their bytes in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{decode, Origin, SpecDocument};
use crate::input::source::SpecError;
use crate::input::yaml;

/// The built-in specs, embedded at compile time.
const BUILTINS: &[(&str, &str)] = &[
    ("base", include_str!("../../../../../images/base.yaml")),
    (
        "cpu-base",
        include_str!("../../../../../images/cpu-base.yaml"),
    ),
    (
        "cpu-headless",
        include_str!("../../../../../images/cpu-headless.yaml"),
    ),
    (
        "cpu-jupyter",
        include_str!("../../../../../images/cpu-jupyter.yaml"),
    ),
    (
        "cpu-serving",
        include_str!("../../../../../images/cpu-serving.yaml"),
    ),
    (
        "cpu-ssh",
        include_str!("../../../../../images/cpu-ssh.yaml"),
    ),
    (
        "gpu-base",
        include_str!("../../../../../images/gpu-base.yaml"),
    ),
    (
        "gpu-headless",
        include_str!("../../../../../images/gpu-headless.yaml"),
    ),
    (
        "gpu-jupyter",
        include_str!("../../../../../images/gpu-jupyter.yaml"),
    ),
    (
        "gpu-serving",
        include_str!("../../../../../images/gpu-serving.yaml"),
    ),
    (
        "gpu-ssh",
        include_str!("../../../../../images/gpu-ssh.yaml"),
    ),
    (
        "tf218-cpu-headless",
        include_str!("../../../../../images/tf218-cpu-headless.yaml"),
    ),
    (
        "tf218-cpu-jupyter",
        include_str!("../../../../../images/tf218-cpu-jupyter.yaml"),
    ),
    (
        "tf218-cpu-serving",
        include_str!("../../../../../images/tf218-cpu-serving.yaml"),
    ),
    (
        "tf218-cpu-ssh",
        include_str!("../../../../../images/tf218-cpu-ssh.yaml"),
    ),
    (
        "tf218-gpu-headless",
        include_str!("../../../../../images/tf218-gpu-headless.yaml"),
    ),
    (
        "tf218-gpu-jupyter",
        include_str!("../../../../../images/tf218-gpu-jupyter.yaml"),
    ),
    (
        "tf218-gpu-serving",
        include_str!("../../../../../images/tf218-gpu-serving.yaml"),
    ),
    (
        "tf218-gpu-ssh",
        include_str!("../../../../../images/tf218-gpu-ssh.yaml"),
    ),
];

/// The built-ins' locks (`images/<name>.lock`, made with `tfimg lock NAME -o
/// images/NAME.lock` in this checkout), embedded like the specs: a build of a built-in
/// installs from them. A built-in without one here builds unlocked.
const BUILTIN_LOCKS: &[(&str, &str)] = &[
    (
        "cpu-headless",
        include_str!("../../../../../images/cpu-headless.lock"),
    ),
    (
        "cpu-jupyter",
        include_str!("../../../../../images/cpu-jupyter.lock"),
    ),
    (
        "cpu-serving",
        include_str!("../../../../../images/cpu-serving.lock"),
    ),
    (
        "cpu-ssh",
        include_str!("../../../../../images/cpu-ssh.lock"),
    ),
    (
        "gpu-headless",
        include_str!("../../../../../images/gpu-headless.lock"),
    ),
    (
        "gpu-jupyter",
        include_str!("../../../../../images/gpu-jupyter.lock"),
    ),
    (
        "gpu-serving",
        include_str!("../../../../../images/gpu-serving.lock"),
    ),
    (
        "gpu-ssh",
        include_str!("../../../../../images/gpu-ssh.lock"),
    ),
    (
        "tf218-cpu-headless",
        include_str!("../../../../../images/tf218-cpu-headless.lock"),
    ),
    (
        "tf218-cpu-jupyter",
        include_str!("../../../../../images/tf218-cpu-jupyter.lock"),
    ),
    (
        "tf218-cpu-serving",
        include_str!("../../../../../images/tf218-cpu-serving.lock"),
    ),
    (
        "tf218-cpu-ssh",
        include_str!("../../../../../images/tf218-cpu-ssh.lock"),
    ),
    (
        "tf218-gpu-headless",
        include_str!("../../../../../images/tf218-gpu-headless.lock"),
    ),
    (
        "tf218-gpu-jupyter",
        include_str!("../../../../../images/tf218-gpu-jupyter.lock"),
    ),
    (
        "tf218-gpu-serving",
        include_str!("../../../../../images/tf218-gpu-serving.lock"),
    ),
    (
        "tf218-gpu-ssh",
        include_str!("../../../../../images/tf218-gpu-ssh.lock"),
    ),
];

/// The built-ins that have an embedded lock.
pub fn builtin_lock_names() -> impl Iterator<Item = &'static str> {
    BUILTIN_LOCKS.iter().map(|(name, _)| *name)
}

/// The embedded lock of the built-in spec `name`, if it has one.
pub fn builtin_lock(name: &str) -> Option<&'static str> {
    BUILTIN_LOCKS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}

/// `extends: builtin:gpu-jupyter` reaches the embedded spec even when a local one of the
/// same name overrides it, so a local `gpu-jupyter` can customise the built-in one.
pub const BUILTIN_PREFIX: &str = "builtin:";

/// Every spec tfimg can see from the current directory.
#[derive(Debug, Default)]
pub struct Catalog {
    /// The folder tfimg runs in: `files:` may copy from under it.
    current_dir: PathBuf,
    builtins: BTreeMap<String, SpecDocument>,
    /// Built-ins overridden by local specs of the same name.
    effective: BTreeMap<String, SpecDocument>,
    /// Local files that did not parse, keyed by the name they would have had.
    broken: BTreeMap<String, SpecError>,
}

impl Catalog {
    /// The built-ins, seen from `current_dir`.
    pub fn builtin(current_dir: PathBuf) -> Catalog {
        let mut catalog = Catalog {
            current_dir,
            ..Catalog::default()
        };
        for (name, text) in BUILTINS {
            let display = format!("{BUILTIN_PREFIX}{name}.yaml");
            let document = SpecDocument::parse(text, &display, Origin::Builtin, name)
                .unwrap_or_else(|error| panic!("built-in spec `{name}` is broken: {error}"));
            catalog.builtins.insert(name.to_string(), document.clone());
            catalog.effective.insert(name.to_string(), document);
        }
        catalog
    }

    /// The folder tfimg runs in.
    pub fn current_dir(&self) -> &Path {
        &self.current_dir
    }

    /// Whether `name` is a built-in spec's (abstract parents such as `cpu-base` too).
    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtins.contains_key(name)
    }

    /// A local spec file (`images/x.yaml`, shown as `display`) with what reading it gave:
    /// it overrides the built-in of its name; one that does not load is kept as broken.
    pub fn add_local(&mut self, path: PathBuf, display: &str, read: Result<Vec<u8>, String>) {
        let stem = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("spec")
            .to_string();
        let parsed = read
            .map_err(|error| {
                SpecError::new(
                    None,
                    format!("cannot read `{display}`: {error}"),
                    "check the file's permissions",
                )
            })
            .and_then(|bytes| decode(bytes, display, &yaml::SPEC))
            .and_then(|text| SpecDocument::parse(&text, display, Origin::Local(path), &stem));
        let document = match parsed {
            Ok(document) => document,
            Err(error) => {
                self.broken.insert(stem, error);
                return;
            }
        };
        if let Some(previous) = self.effective.get(&document.name) {
            // Inside tfimg's own checkout `images/` holds the built-ins themselves: an
            // identical file is not an override.
            if previous.origin == Origin::Builtin && previous.file == document.file {
                return;
            }
            if previous.origin != Origin::Builtin {
                let error = SpecError::new(
                    Some(document.start()),
                    format!(
                        "spec `{}` is defined twice, also in `{}`",
                        document.name, previous.display_path
                    ),
                    "rename one of them (`name:` or the file name)",
                );
                self.broken.insert(document.name.clone(), error);
                return;
            }
        }
        self.effective.insert(document.name.clone(), document);
    }

    /// Specs by name, local ones overriding built-ins.
    pub fn documents(&self) -> impl Iterator<Item = &SpecDocument> {
        self.effective.values()
    }

    /// Local spec files that failed to load.
    pub fn broken(&self) -> impl Iterator<Item = &SpecError> {
        self.broken.values()
    }

    /// Every name a user can ask for, for hints.
    pub fn names(&self) -> Vec<String> {
        self.effective
            .values()
            .filter(|document| document.file.is_abstract != Some(true))
            .map(|document| document.name.clone())
            .collect()
    }

    /// A spec by name (a path goes through `file_document`).
    pub fn find(&self, wanted: &str) -> Result<SpecDocument, SpecError> {
        if let Some(error) = self.broken.get(wanted) {
            return Err(error.clone());
        }
        if let Some(name) = wanted.strip_prefix(BUILTIN_PREFIX) {
            if let Some(document) = self.builtins.get(name) {
                return Ok(document.clone());
            }
        }
        self.effective.get(wanted).cloned().ok_or_else(|| {
            SpecError::new(
                None,
                format!("no spec named `{wanted}`"),
                format!(
                    "{}known specs: {}; or give the path of a spec file",
                    crate::input::did_you_mean(wanted, self.names().iter().map(String::as_str)),
                    self.names().join(", ")
                ),
            )
        })
    }

    /// The `extends` chain of `leaf`, root first, leaf last.
    pub fn chain(&self, leaf: SpecDocument) -> Result<Vec<SpecDocument>, SpecError> {
        let mut chain = vec![leaf];
        loop {
            let child = chain.last().expect("chain starts non-empty");
            let Some(parent_name) = child.file.extends.clone() else {
                break;
            };
            let at = Some(child.locate("extends").unwrap_or_else(|| child.start()));
            let parent = self.parent(&parent_name).ok_or_else(|| {
                SpecError::new(
                    at.clone(),
                    format!("`extends: {parent_name}` names no spec"),
                    format!(
                        "{}known specs: {}; prefix `{BUILTIN_PREFIX}` to reach a built-in",
                        crate::input::did_you_mean(
                            &parent_name,
                            self.effective.keys().map(String::as_str)
                        ),
                        self.effective
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
            let repeats = chain
                .iter()
                .any(|seen| seen.name == parent.name && seen.display_path == parent.display_path);
            if repeats {
                let mut names: Vec<String> = chain.iter().map(|doc| doc.name.clone()).collect();
                names.push(parent.name.clone());
                return Err(SpecError::new(
                    at,
                    format!("`extends` cycle: {}", names.join(" → ")),
                    "remove `extends` from one of these specs so the chain ends at a spec without it",
                ));
            }
            chain.push(parent);
        }
        chain.reverse();
        Ok(chain)
    }

    /// A built-in's parent is looked up among the effective specs too, so overriding
    /// `gpu-base` locally changes every built-in GPU variant.
    fn parent(&self, name: &str) -> Option<SpecDocument> {
        if let Some(builtin) = name.strip_prefix(BUILTIN_PREFIX) {
            return self.builtins.get(builtin).cloned();
        }
        self.effective.get(name).cloned()
    }
}
