//! What serde_yaml must not be handed, and the places it cannot give. Spec and team files
//! go through `decode` (size, UTF-8) and `scan` (one streaming pass of yaml-rust2) before
//! serde_yaml reads them: serde_yaml loads a whole document before it looks at it, so an
//! unclosed `{a: {a: ...` thirty thousand deep took half a minute, and an alias bomb or
//! deep nesting came back as "repetition/recursion limit exceeded" at `1:1`. The scan
//! stops at the first such problem with its place; `earlier_error` then asks serde_yaml
//! about the text before that place only, so the first problem in the file is the one
//! reported. `explain` turns serde_yaml's own errors into readable ones (tabs, duplicate
//! keys placed on the duplicate). Pure: no I/O.

mod places;
mod scan;

use serde::de::DeserializeOwned;
use yaml_rust2::scanner::Marker;

use super::source::{Location, SpecError};

pub use places::Places;
pub use scan::{key_place, scan, Scan};

/// Specs and team files are a few kilobytes; anything past this is the wrong file.
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// serde_yaml's own recursion limit: deeper documents are refused here, before it reads them.
pub const MAX_DEPTH: usize = 128;

/// Values that aliases may add once expanded (serde_yaml buffers them for untagged
/// values such as `gpus:`): far above any real file, far below a bomb.
pub const MAX_ALIAS_VALUES: u64 = 100_000;

/// The kind of file, for messages and hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKind {
    /// `spec`, `team file`.
    pub noun: &'static str,
    /// What the whole file should hold, for an empty one.
    pub empty_hint: &'static str,
    /// The hint of structural problems (nesting).
    pub hint: &'static str,
}

pub const SPEC: FileKind = FileKind {
    noun: "spec",
    empty_hint: "a spec needs at least `tensorflow:` or `extends:`; run `tfimg show gpu-jupyter` to see a complete one",
    hint: "run `tfimg show gpu-jupyter` to see a valid resolved spec",
};

/// What a team file holds, as a small one (a user of the binary has no example file).
pub const TEAM_HINT: &str = "a team file has `team`, `defaults` and `members`, such as `team: lab`, `defaults: {spec: cpu-jupyter, mounts_root: ./work}`, `members: [{name: alice}, {name: bob}]`";

/// What a sweep file holds, as a small one.
pub const SWEEP_HINT: &str = "a sweep file has `sweep`, `spec` (or `image`), `command` and `params`, such as `sweep: lr`, `spec: cpu-headless`, `command: [python, train.py]`, `params: {lr: [0.1, 0.01]}`";

pub const TEAM: FileKind = FileKind {
    noun: "team file",
    empty_hint: TEAM_HINT,
    hint: TEAM_HINT,
};

pub const SWEEP: FileKind = FileKind {
    noun: "sweep file",
    empty_hint: SWEEP_HINT,
    hint: SWEEP_HINT,
};

/// A place in the text: line and column from 1, and the character index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub column: usize,
    pub index: usize,
}

impl Place {
    pub const START: Place = Place {
        line: 1,
        column: 1,
        index: 0,
    };

    fn of(mark: &Marker) -> Place {
        // yaml-rust2 counts lines from 1, columns and the index (in characters) from 0.
        Place {
            line: mark.line().max(1),
            column: mark.col() + 1,
            index: mark.index(),
        }
    }

    pub fn pair(self) -> (usize, usize) {
        (self.line, self.column)
    }

    /// Whether `(line, column)` comes before this place.
    pub fn is_after(self, (line, column): (usize, usize)) -> bool {
        (line, column) < (self.line, self.column)
    }
}

/// One step of the path to a value: a mapping key or a sequence item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key {
        /// `None` for a key that is a collection or an alias.
        name: Option<String>,
        key_at: Place,
        value_at: Place,
    },
    Item {
        index: usize,
        at: Place,
    },
}

impl Step {
    /// Where the value of this step starts.
    pub fn value_at(&self) -> Place {
        match self {
            Step::Key { value_at, .. } => *value_at,
            Step::Item { at, .. } => *at,
        }
    }
}

/// What a file must not hold before serde_yaml reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    TooLarge,
    NotUtf8 {
        at: Place,
    },
    /// The collection that opens level `MAX_DEPTH + 1`.
    TooDeep {
        at: Place,
    },
    /// The alias at which the expansion went past the limit, and the path to it.
    AliasBomb {
        at: Place,
        path: Vec<Step>,
    },
    /// The start of the second document.
    SeveralDocuments {
        at: Place,
    },
}

impl Problem {
    /// The problem as an error of `file` at `at`, worded for `kind`.
    pub fn error(&self, file: &str, at: Place, kind: &FileKind) -> SpecError {
        let (message, hint) = match self {
            Problem::TooLarge => (
                "the file is larger than 1 MiB".to_string(),
                format!(
                    "a {} is a few kilobytes of YAML: check that this is the right file",
                    kind.noun
                ),
            ),
            Problem::NotUtf8 { .. } => (
                "the file is not valid UTF-8".to_string(),
                "save the file as UTF-8".to_string(),
            ),
            Problem::TooDeep { .. } => (
                format!("the YAML nests too deeply (more than {MAX_DEPTH} levels)"),
                kind.hint.to_string(),
            ),
            Problem::AliasBomb { .. } => (
                "the anchors and aliases expand to too many values".to_string(),
                "write the values out instead of repeating aliases (`*name`)".to_string(),
            ),
            Problem::SeveralDocuments { .. } => (
                "the file holds more than one YAML document".to_string(),
                format!(
                    "a {} is one document: remove the `---` line and what follows it",
                    kind.noun
                ),
            ),
        };
        SpecError::new(Some(location(file, at.pair())), message, hint)
    }

    /// Where the problem is, before a caller chooses a better place for an alias bomb.
    pub fn place(&self) -> Place {
        match self {
            Problem::TooLarge => Place::START,
            Problem::NotUtf8 { at }
            | Problem::TooDeep { at }
            | Problem::AliasBomb { at, .. }
            | Problem::SeveralDocuments { at } => *at,
        }
    }
}

/// A place in `file`, as errors print it.
pub fn location(file: &str, (line, column): (usize, usize)) -> Location {
    Location {
        file: file.to_string(),
        line,
        column,
    }
}

/// The text of a file's bytes: at most `MAX_FILE_BYTES`, and UTF-8 (the error is placed
/// on the first byte that is not).
pub fn decode(bytes: Vec<u8>) -> Result<String, Problem> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Problem::TooLarge);
    }
    String::from_utf8(bytes).map_err(|error| {
        let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
        // Valid up to there, so this cannot fail; the fallback only avoids a panic.
        let before = std::str::from_utf8(valid).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |index| index + 1);
        Problem::NotUtf8 {
            at: Place {
                line: before.matches('\n').count() + 1,
                column: before[line_start..].chars().count() + 1,
                index: before.chars().count(),
            },
        }
    })
}

/// serde_yaml's error for the text before `before`, when it comes first: the problem at
/// `before` is then not the first one in the file. An error at or after `before` is the
/// cut's doing (an unclosed bracket), and `missing field` too (what follows was cut off).
pub fn earlier_error<T: DeserializeOwned>(text: &str, before: Place) -> Option<serde_yaml::Error> {
    let cut = text
        .char_indices()
        .nth(before.index)
        .map_or(text.len(), |(offset, _)| offset);
    let error = serde_yaml::from_str::<T>(&text[..cut]).err()?;
    let at = error.location()?;
    let earlier = before.is_after((at.line(), at.column()));
    (earlier && !error.to_string().contains("missing field")).then_some(error)
}

/// A serde_yaml error, readable: its place, its message without positions, and a hint
/// when the message calls for a particular one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    pub at: (usize, usize),
    pub message: String,
    pub hint: Option<String>,
}

pub fn explain(error: &serde_yaml::Error, text: &str, scan: &Scan) -> Explained {
    let mut at = error
        .location()
        .map_or((1, 1), |place| (place.line(), place.column()));
    let message = strip_positions(&error.to_string());
    if message.starts_with("found character that cannot start any token") {
        if let Some(column) = tab_indent(text, at.0) {
            return Explained {
                at: (at.0, column),
                message: "a tab indents this line; YAML indents with spaces only".to_string(),
                hint: Some("replace the tab with spaces".to_string()),
            };
        }
    }
    if message == "repetition limit exceeded" {
        return Explained {
            at,
            message: "the anchors and aliases expand to too many values".to_string(),
            hint: Some("write the values out instead of repeating aliases (`*name`)".to_string()),
        };
    }
    // serde_yaml places a duplicate field on its mapping (or nowhere): find the duplicate.
    if let Some((path, rest)) = message.split_once("duplicate field `") {
        let path = path.strip_suffix(": ").unwrap_or(path);
        let key = rest.strip_suffix('`').unwrap_or(rest);
        if let Some((_, _, place)) = scan
            .duplicates
            .iter()
            .find(|(mapping, name, _)| mapping == path && name == key)
        {
            at = place.pair();
        }
    }
    let hint = unknown_name_hint(&message);
    Explained { at, message, hint }
}

/// For serde's "unknown field `X`, expected one of `a`, `b`" (or "unknown variant"): the
/// expected name closest to `X`, when one is close (`mount_root` → `mounts_root`).
fn unknown_name_hint(message: &str) -> Option<String> {
    let (_, rest) = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))?;
    let (wanted, expected) = rest.split_once('`')?;
    let expected = expected.split_once("expected")?.1;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let name = super::closest(wanted, known.iter().copied())?;
    Some(format!("did you mean `{name}`?"))
}

/// The column of the tab in the indentation of `line`, if a tab is there.
pub fn tab_indent(text: &str, line: usize) -> Option<usize> {
    let text = text.lines().nth(line.checked_sub(1)?)?;
    let indentation: Vec<char> = text
        .chars()
        .take_while(|c| matches!(c, ' ' | '\t'))
        .collect();
    indentation
        .iter()
        .position(|c| *c == '\t')
        .map(|index| index + 1)
}

/// serde_yaml's message without the positions it writes into it (" at line N column M",
/// and for libyaml's errors a second one before ", while parsing ..."): the location is
/// printed once, up front.
pub(crate) fn strip_positions(message: &str) -> String {
    let mut stripped = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(index) = rest.find(" at ") {
        stripped.push_str(&rest[..index]);
        let after = &rest[index + " at ".len()..];
        match position_length(after) {
            Some(length) => rest = &after[length..],
            None => {
                stripped.push_str(" at ");
                rest = after;
            }
        }
    }
    stripped.push_str(rest);
    stripped
}

/// The length of `line N column M` or `position N` at the start of `text`.
fn position_length(text: &str) -> Option<usize> {
    let digits = |text: &str| text.bytes().take_while(u8::is_ascii_digit).count();
    if let Some(rest) = text.strip_prefix("position ") {
        let count = digits(rest);
        return (count > 0).then_some("position ".len() + count);
    }
    let rest = text.strip_prefix("line ")?;
    let line = digits(rest);
    let rest = rest[line..].strip_prefix(" column ")?;
    let column = digits(rest);
    (line > 0 && column > 0).then_some("line ".len() + line + " column ".len() + column)
}

#[cfg(test)]
mod tests;
