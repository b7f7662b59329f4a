//! Finding and parsing specs: the built-ins embedded in the binary, `./images/*.yaml`
//! overriding them by name, or a spec file given by path; and walking `extends` chains
//! with cycle detection. Reads files, nothing else: validation lives in `validate`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::model::{SpecFile, UNQUOTED_VERSION};
use super::source::{Location, PositionIndex, SpecError};

/// The built-in specs, embedded at compile time.
const BUILTINS: &[(&str, &str)] = &[
    ("base", include_str!("../../images/base.yaml")),
    ("cpu-base", include_str!("../../images/cpu-base.yaml")),
    (
        "cpu-headless",
        include_str!("../../images/cpu-headless.yaml"),
    ),
    ("cpu-jupyter", include_str!("../../images/cpu-jupyter.yaml")),
    ("cpu-ssh", include_str!("../../images/cpu-ssh.yaml")),
    ("gpu-base", include_str!("../../images/gpu-base.yaml")),
    (
        "gpu-headless",
        include_str!("../../images/gpu-headless.yaml"),
    ),
    ("gpu-jupyter", include_str!("../../images/gpu-jupyter.yaml")),
    ("gpu-ssh", include_str!("../../images/gpu-ssh.yaml")),
];

/// `extends: builtin:gpu-jupyter` reaches the embedded spec even when a local one of the
/// same name overrides it, so a local `gpu-jupyter` can customise the built-in one.
pub const BUILTIN_PREFIX: &str = "builtin:";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    /// From `./images/`.
    Local(PathBuf),
    /// Named on the command line by path.
    File(PathBuf),
}

impl Origin {
    pub fn label(&self) -> &'static str {
        match self {
            Origin::Builtin => "built-in",
            Origin::Local(_) => "local",
            Origin::File(_) => "file",
        }
    }
}

/// One parsed spec file.
#[derive(Debug, Clone)]
pub struct SpecDocument {
    pub name: String,
    pub origin: Origin,
    /// How errors name the file: `images/x.yaml`, or `builtin:x.yaml`.
    pub display_path: String,
    pub file: SpecFile,
    pub positions: PositionIndex,
}

impl SpecDocument {
    /// Parses one spec. `fallback_name` (the file stem) is used when `name:` is absent.
    pub fn parse(
        text: &str,
        display_path: &str,
        origin: Origin,
        fallback_name: &str,
    ) -> Result<SpecDocument, SpecError> {
        let positions = PositionIndex::build(text);
        if text.trim().is_empty() {
            return Err(SpecError::new(
                Some(location(display_path, (1, 1))),
                "the spec is empty",
                "a spec needs at least `tensorflow:` or `extends:`; run `tfimg show gpu-jupyter` to see a complete one",
            ));
        }
        let file: SpecFile = serde_yaml::from_str(text).map_err(|error| {
            let at = error.location().map(|place| (place.line(), place.column()));
            let message = strip_position(&error.to_string());
            if let (Some(field), Some(at)) = (message.strip_suffix(UNQUOTED_VERSION), at) {
                let field = field.trim_end_matches(": ");
                let typed = token_at(text, at);
                return SpecError::new(
                    Some(location(display_path, at)),
                    format!("{field}: version {typed} is not quoted, so YAML reads it as a number"),
                    format!("write `{field}: \"{typed}\"`"),
                );
            }
            let hint = if message.starts_with("unknown field") {
                "check the spelling; every field is described under \"Spec reference\" in README.md"
            } else if message.contains("unknown variant") {
                "use one of the values listed; see \"Spec reference\" in README.md"
            } else {
                "run `tfimg show gpu-jupyter` to see a valid resolved spec"
            };
            SpecError::new(
                Some(location(display_path, at.unwrap_or((1, 1)))),
                message,
                hint,
            )
        })?;
        let name = file
            .name
            .clone()
            .unwrap_or_else(|| fallback_name.to_string());
        if !valid_name(&name) {
            let at = positions.value("name").unwrap_or((1, 1));
            return Err(SpecError::new(
                Some(location(display_path, at)),
                format!("spec name `{name}` is not valid"),
                "use lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit (it becomes the image name)",
            ));
        }
        Ok(SpecDocument {
            name,
            origin,
            display_path: display_path.to_string(),
            file,
            positions,
        })
    }

    /// Location of the value at `path` (`ports.jupyter`) in this file.
    pub fn locate(&self, path: &str) -> Option<Location> {
        self.positions
            .value(path)
            .map(|at| location(&self.display_path, at))
    }

    /// Location of the key at `path`, or of its value.
    pub fn locate_key(&self, path: &str) -> Option<Location> {
        self.positions
            .key(path)
            .or_else(|| self.positions.value(path))
            .map(|at| location(&self.display_path, at))
    }

    /// Somewhere in this file, for errors about the file as a whole.
    pub fn start(&self) -> Location {
        self.locate_key("name")
            .unwrap_or_else(|| location(&self.display_path, (1, 1)))
    }
}

fn location(file: &str, (line, column): (usize, usize)) -> Location {
    Location {
        file: file.to_string(),
        line,
        column,
    }
}

/// The plain scalar starting at a line and column (1-based), as the user typed it.
fn token_at(text: &str, (line, column): (usize, usize)) -> String {
    text.lines()
        .nth(line.saturating_sub(1))
        .map(|line| {
            line.chars()
                .skip(column.saturating_sub(1))
                .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ']' | '}' | '#'))
                .collect()
        })
        .unwrap_or_default()
}

/// serde_yaml appends " at line N column M"; the location is printed separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_string(),
        None => message.to_string(),
    }
}

/// Image names must be lowercase; keep spec names usable as-is.
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'0'..=b'9'))
        && name.len() <= 64
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.'))
}

/// Every spec tfimg can see from the current directory.
#[derive(Debug, Default)]
pub struct Catalog {
    builtins: BTreeMap<String, SpecDocument>,
    /// Built-ins overridden by local specs of the same name.
    effective: BTreeMap<String, SpecDocument>,
    /// Local files that did not parse, keyed by the name they would have had.
    broken: BTreeMap<String, SpecError>,
}

impl Catalog {
    /// The built-ins plus `images_dir/*.yaml` (and `*.yml`) when that folder exists.
    pub fn load(images_dir: &Path) -> Catalog {
        let mut catalog = Catalog::default();
        for (name, text) in BUILTINS {
            let display = format!("{BUILTIN_PREFIX}{name}.yaml");
            let document = SpecDocument::parse(text, &display, Origin::Builtin, name)
                .unwrap_or_else(|error| panic!("built-in spec `{name}` is broken: {error}"));
            catalog.builtins.insert(name.to_string(), document.clone());
            catalog.effective.insert(name.to_string(), document);
        }
        for path in local_spec_files(images_dir) {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("spec");
            let display = display_path(&path);
            let parsed = std::fs::read_to_string(&path)
                .map_err(|error| {
                    SpecError::new(
                        None,
                        format!("cannot read `{display}`: {error}"),
                        "check the file's permissions",
                    )
                })
                .and_then(|text| {
                    SpecDocument::parse(&text, &display, Origin::Local(path.clone()), stem)
                });
            match parsed {
                Ok(document) => {
                    if let Some(previous) = catalog.effective.get(&document.name) {
                        // Inside tfimg's own checkout `images/` holds the built-ins
                        // themselves: an identical file is not an override.
                        if previous.origin == Origin::Builtin && previous.file == document.file {
                            continue;
                        }
                        if previous.origin != Origin::Builtin {
                            catalog.broken.insert(
                                document.name.clone(),
                                SpecError::new(
                                    Some(document.start()),
                                    format!(
                                        "spec `{}` is defined twice, also in `{}`",
                                        document.name, previous.display_path
                                    ),
                                    "rename one of them (`name:` or the file name)",
                                ),
                            );
                            continue;
                        }
                    }
                    catalog.effective.insert(document.name.clone(), document);
                }
                Err(error) => {
                    catalog.broken.insert(stem.to_string(), error);
                }
            }
        }
        catalog
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

    /// A spec by name or by path (anything with a `/` or a `.yaml`/`.yml` ending).
    pub fn find(&self, wanted: &str) -> Result<SpecDocument, SpecError> {
        if looks_like_path(wanted) {
            let path = Path::new(wanted);
            let text = std::fs::read_to_string(path).map_err(|error| {
                SpecError::new(
                    None,
                    format!("cannot read spec file `{wanted}`: {error}"),
                    "give the path of a YAML spec, or a spec name from `tfimg list`",
                )
            })?;
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("spec");
            return SpecDocument::parse(&text, wanted, Origin::File(path.to_path_buf()), stem);
        }
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
                    "known specs: {}; or give the path of a spec file",
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
            let at = child.locate("extends");
            let parent = self.parent(&parent_name).ok_or_else(|| {
                SpecError::new(
                    at.clone(),
                    format!("`extends: {parent_name}` names no spec"),
                    format!(
                        "known specs: {}; prefix `{BUILTIN_PREFIX}` to reach a built-in",
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

fn looks_like_path(wanted: &str) -> bool {
    wanted.contains('/') || wanted.ends_with(".yaml") || wanted.ends_with(".yml")
}

fn display_path(path: &Path) -> String {
    let current = std::env::current_dir().ok();
    let shown = current
        .as_deref()
        .and_then(|current| path.strip_prefix(current).ok())
        .unwrap_or(path);
    shown.display().to_string()
}

fn local_spec_files(images_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(images_dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.is_file()
                && matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("yaml" | "yml")
                )
        })
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_chain() {
        let catalog = Catalog::load(Path::new("/nonexistent"));
        assert_eq!(
            catalog.names(),
            [
                "cpu-headless",
                "cpu-jupyter",
                "cpu-ssh",
                "gpu-headless",
                "gpu-jupyter",
                "gpu-ssh"
            ]
        );
        let leaf = catalog.find("gpu-jupyter").unwrap();
        let chain = catalog.chain(leaf).unwrap();
        let names: Vec<_> = chain.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["base", "gpu-base", "gpu-jupyter"]);
    }

    #[test]
    fn names_must_be_image_friendly() {
        assert!(valid_name("gpu-jupyter"));
        assert!(valid_name("tf2.9_lab"));
        assert!(!valid_name("GPU"));
        assert!(!valid_name("-x"));
        assert!(!valid_name(""));
        assert!(!valid_name("a b"));
    }
}
