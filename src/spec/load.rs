//! The catalog of specs: the built-ins embedded in the binary, local specs
//! (`./images/*.yaml`) overriding them by name, and a spec file named by path; parsing
//! each, and walking `extends` chains with cycle detection. Pure: `app::catalog` reads
//! the files and hands their bytes in; validation lives in `validate`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::model::{SpecFile, UNQUOTED_VERSION};
use crate::input::source::{Location, PositionIndex, SpecError};
use crate::input::yaml::{self, location, Problem, Step};

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
        let empty = || {
            SpecError::new(
                Some(location(display_path, (1, 1))),
                "the spec is empty",
                yaml::SPEC.empty_hint,
            )
        };
        if text.trim().is_empty() {
            return Err(empty());
        }
        // What serde_yaml must not read (deep nesting, alias bombs, several documents) is
        // refused first, unless serde_yaml finds a problem before it in the file.
        let scan = yaml::scan(text);
        if let Some(problem) = &scan.problem {
            // A bomb is blamed on the field holding it, where its value starts.
            let at = match problem {
                Problem::AliasBomb { path, .. } => {
                    path.first().map_or(problem.place(), Step::value_at)
                }
                _ => problem.place(),
            };
            if *problem != Problem::TooLarge {
                if let Some(error) = yaml::earlier_error::<SpecFile>(text, at) {
                    return Err(serde_error(&error, text, &scan, display_path));
                }
            }
            return Err(problem.error(display_path, at, &yaml::SPEC));
        }
        if scan.empty {
            return Err(empty());
        }
        let file: SpecFile = serde_yaml::from_str(text)
            .map_err(|error| serde_error(&error, text, &scan, display_path))?;
        let name = file
            .name
            .clone()
            .unwrap_or_else(|| fallback_name.to_string());
        if let Some((message, hint)) = name_problem(&name) {
            let at = positions.value("name").unwrap_or((1, 1));
            return Err(SpecError::new(
                Some(location(display_path, at)),
                message,
                hint,
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

/// A serde_yaml error of a spec, with its place and a hint that fits the message.
fn serde_error(
    error: &serde_yaml::Error,
    text: &str,
    scan: &yaml::Scan,
    display_path: &str,
) -> SpecError {
    let explained = yaml::explain(error, text, scan);
    let at = explained.at;
    if let Some(hint) = explained.hint {
        return SpecError::new(Some(location(display_path, at)), explained.message, hint);
    }
    let message = explained.message;
    if let (Some(field), true) = (
        message.strip_suffix(UNQUOTED_VERSION),
        error.location().is_some(),
    ) {
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
    SpecError::new(Some(location(display_path, at)), message, hint)
}

/// A file's text, or the error naming it at the first byte that is not UTF-8.
pub(crate) fn decode(
    bytes: Vec<u8>,
    display: &str,
    kind: &yaml::FileKind,
) -> Result<String, SpecError> {
    yaml::decode(bytes).map_err(|problem| problem.error(display, problem.place(), kind))
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

/// The longest spec name: it becomes an image name, and is echoed in messages.
const MAX_NAME_LENGTH: usize = 64;

/// Why `name` cannot be a spec name (message and hint), if it cannot.
fn name_problem(name: &str) -> Option<(String, String)> {
    if valid_name(name) {
        return None;
    }
    let length = name.chars().count();
    if length > MAX_NAME_LENGTH {
        let start: String = name.chars().take(MAX_NAME_LENGTH).collect();
        return Some((
            format!("spec name `{start}…` is too long ({length} characters, at most {MAX_NAME_LENGTH})"),
            format!("use at most {MAX_NAME_LENGTH} lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit (it becomes the image name)"),
        ));
    }
    Some((
        format!("spec name `{name}` is not valid"),
        "use lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit (it becomes the image name)".to_string(),
    ))
}

/// Image names must be lowercase; keep spec names usable as-is.
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'0'..=b'9'))
        && name.len() <= MAX_NAME_LENGTH
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.'))
}

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
            let at = Some(child.locate("extends").unwrap_or_else(|| child.start()));
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

/// Whether `wanted` names a spec file rather than a spec (a `/`, or a `.yaml`/`.yml`
/// ending).
pub fn looks_like_path(wanted: &str) -> bool {
    wanted.contains('/') || wanted.ends_with(".yaml") || wanted.ends_with(".yml")
}

/// A spec file named by path, with what reading it gave.
pub fn file_document(
    wanted: &str,
    read: Result<Vec<u8>, String>,
) -> Result<SpecDocument, SpecError> {
    let bytes = read.map_err(|error| {
        SpecError::new(
            None,
            format!("cannot read spec file `{wanted}`: {error}"),
            "give the path of a YAML spec, or a spec name from `tfimg list`",
        )
    })?;
    let text = decode(bytes, wanted, &yaml::SPEC)?;
    let path = Path::new(wanted);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("spec");
    SpecDocument::parse(&text, wanted, Origin::File(path.to_path_buf()), stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_chain() {
        let catalog = Catalog::builtin(PathBuf::from("/"));
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
    fn extends_errors_name_the_file_even_without_positions() {
        // Found by `just fuzz`: when yaml-rust2 could not index a file serde_yaml read,
        // this error named no file.
        let catalog = Catalog::builtin(PathBuf::from("/"));
        let text = "name: x\nextends: nothing\n";
        let mut document =
            SpecDocument::parse(text, "x.yaml", Origin::File("x.yaml".into()), "x").unwrap();
        document.positions = PositionIndex::default();
        let error = catalog.chain(document).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`x.yaml`:1:1: `extends: nothing` names no spec"
        );
    }

    #[test]
    fn yaml_messages_lose_their_positions() {
        let error =
            SpecDocument::parse("name: x\nextend", "x.yaml", Origin::Builtin, "x").unwrap_err();
        assert_eq!(
            error.to_string(),
            "`x.yaml`:3:1: could not find expected ':', while scanning a simple key"
        );
    }

    #[test]
    fn broken_yaml_is_named_for_what_it_is_and_where() {
        let error = |text: &str| {
            let error = SpecDocument::parse(text, "x.yaml", Origin::Builtin, "x").unwrap_err();
            (error.to_string(), error.hint)
        };
        for empty in ["", " \n", "# later\n", "---\n", "null\n", "~\n"] {
            assert_eq!(
                error(empty).0,
                "`x.yaml`:1:1: the spec is empty",
                "{empty:?}"
            );
        }
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert_eq!(
            error(&format!("extends: x\nfiles:\n  - {deep}\n")).0,
            "`x.yaml`:3:131: the YAML nests too deeply (more than 128 levels)"
        );
        // The first problem in the file wins: an unknown field before the deep part.
        assert_eq!(
            error(&"{a: ".repeat(30_000)).0,
            "`x.yaml`:1:2: unknown field `a`, expected one of `name`, `abstract`, `extends`, `description`, `base`, `tensorflow`, `python`, `gpu`, `cuda_provider`, `cuda`, `cudnn`, `service`, `packages`, `env`, `ports`, `user`, `workdir`, `tensorboard_logdir`, `files`"
        );
        let mut levels = vec![String::from("&a0 [x, x, x, x, x, x, x, x, x]")];
        for level in 1..10 {
            levels.push(format!(
                "&a{level} [{}]",
                vec![format!("*a{}", level - 1); 9].join(", ")
            ));
        }
        assert_eq!(
            error(&format!(
                "extends: x\nfiles:\n  - [{}]\n",
                levels.join(", ")
            )),
            (
                "`x.yaml`:3:3: the anchors and aliases expand to too many values".into(),
                "write the values out instead of repeating aliases (`*name`)".into()
            )
        );
        assert_eq!(
            error("name: a\nname: b\n").0,
            "`x.yaml`:2:1: duplicate field `name`"
        );
        assert_eq!(
            error("packages:\n\tpip: [numpy]\n"),
            (
                "`x.yaml`:2:1: a tab indents this line; YAML indents with spaces only".into(),
                "replace the tab with spaces".into()
            )
        );
        assert_eq!(
            error("extends: x\n---\nextends: y\n"),
            (
                "`x.yaml`:2:1: the file holds more than one YAML document".into(),
                "a spec is one document: remove the `---` line and what follows it".into()
            )
        );
        assert_eq!(
            error("tensorflow: 99999999999999999999\n").0,
            "`x.yaml`:1:13: tensorflow: version 99999999999999999999 is not quoted, so YAML reads it as a number"
        );
    }

    #[test]
    fn bad_names_are_shown_shortened_and_escaped() {
        let error = |name: &str| {
            let text = format!("name: {name}\n");
            let error = SpecDocument::parse(&text, "x.yaml", Origin::Builtin, "x").unwrap_err();
            (error.to_string(), error.hint)
        };
        assert_eq!(
            error(&"a".repeat(100_000)),
            (
                format!(
                    "`x.yaml`:1:7: spec name `{}…` is too long (100000 characters, at most 64)",
                    "a".repeat(64)
                ),
                "use at most 64 lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit (it becomes the image name)".into()
            )
        );
        assert_eq!(
            error("lab\u{200b}").0,
            "`x.yaml`:1:7: spec name `lab\\u{200b}` is not valid"
        );
        assert!(SpecDocument::parse(
            &format!("name: {}\n", "a".repeat(64)),
            "x.yaml",
            Origin::Builtin,
            "x"
        )
        .is_ok());
    }

    #[test]
    fn spec_files_must_be_utf_8() {
        let bytes = b"name: lab\ndescription: caf\xe9\n".to_vec();
        let error = file_document("./x.yaml", Ok(bytes)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`./x.yaml`:2:17: the file is not valid UTF-8"
        );
        assert_eq!(error.hint, "save the file as UTF-8");
        let unreadable = file_document("./y.yaml", Err("No such file".into())).unwrap_err();
        assert_eq!(
            unreadable.to_string(),
            "cannot read spec file `./y.yaml`: No such file"
        );
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
