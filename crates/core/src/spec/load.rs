//! Loading specs: parsing one spec file into a `SpecDocument` (its YAML checked before
//! serde reads it, every error at file:line:column with a hint), spec names, and a spec
//! file named by path. The catalog of built-in and local specs and their `extends`
//! chains is in `catalog`. Pure: `app::catalog` reads the files and hands their bytes in;
//! validation lives in `validate`.

mod catalog;

pub use catalog::{builtin_lock, builtin_lock_names, Catalog, BUILTIN_PREFIX};

use std::path::{Path, PathBuf};

use super::model::{SpecFile, UNQUOTED_VERSION};
use crate::input::source::{Location, PositionIndex, SpecError};
use crate::input::yaml::{self, location, Problem, Step};

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
    let unknown = explained.message.contains("unknown field")
        || explained.message.contains("unknown variant");
    if let (Some(hint), false) = (&explained.hint, unknown) {
        return SpecError::new(Some(location(display_path, at)), explained.message, hint);
    }
    // A name that is close to a known one is suggested before the general hint.
    let suggestion = explained
        .hint
        .map(|hint| format!("{hint} "))
        .unwrap_or_default();
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
        "check the spelling; every field is described in docs/reference/spec.md"
    } else if message.contains("unknown variant") {
        "use one of the values listed; see docs/reference/spec.md"
    } else {
        "run `tfimg show gpu-jupyter` to see a valid resolved spec"
    };
    SpecError::new(
        Some(location(display_path, at)),
        message,
        format!("{suggestion}{hint}"),
    )
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
mod tests;
