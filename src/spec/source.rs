//! Where things are in a spec file: the `SpecError` every spec problem becomes (file,
//! line, column, message, hint), and a position index mapping field paths such as
//! `ports.jupyter` or `packages.pip=numpy` to their line and column, so errors found after
//! parsing (a Python outside TensorFlow's range) can still point at the text.

use std::collections::HashMap;
use std::fmt;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// A place in a spec file; `line` and `column` start at 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`:{}:{}", self.file, self.line, self.column)
    }
}

/// A problem with a spec, reported as
/// ``error: `images/x.yaml`:3:9: message`` followed by `hint: ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SpecError {
    pub location: Option<Location>,
    pub message: String,
    pub hint: String,
}

impl SpecError {
    pub fn new(
        location: Option<Location>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        SpecError {
            location,
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(location) => write!(f, "{location}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Positions of the keys and values of one YAML document.
#[derive(Debug, Clone, Default)]
pub struct PositionIndex {
    keys: HashMap<String, (usize, usize)>,
    values: HashMap<String, (usize, usize)>,
}

impl PositionIndex {
    /// Indexes `text`; a document that does not parse gives an empty index (the serde
    /// error for it carries its own position).
    pub fn build(text: &str) -> PositionIndex {
        let mut receiver = Receiver::default();
        let mut parser = Parser::new_from_str(text);
        if parser.load(&mut receiver, false).is_err() {
            return PositionIndex::default();
        }
        receiver.index
    }

    /// Line and column of the key at `path` (`ports.jupyter`).
    pub fn key(&self, path: &str) -> Option<(usize, usize)> {
        self.keys.get(path).copied()
    }

    /// Line and column of the value at `path`, falling back to its key.
    pub fn value(&self, path: &str) -> Option<(usize, usize)> {
        self.values.get(path).copied().or_else(|| self.key(path))
    }
}

enum Frame {
    Mapping { path: String, key: Option<String> },
    Sequence { path: String },
}

#[derive(Default)]
struct Receiver {
    stack: Vec<Frame>,
    index: PositionIndex,
}

fn position(mark: &Marker) -> (usize, usize) {
    // yaml-rust2 counts lines from 1 and columns from 0.
    (mark.line(), mark.col() + 1)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl Receiver {
    /// Records a value (scalar, or the start of a nested collection) at the top of the
    /// stack and returns the path it lives at.
    fn value(&mut self, mark: &Marker, scalar: Option<&str>) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Mapping { path, key }) => match key.take() {
                None => {
                    // A key. Nested collections as keys get no path.
                    let text = scalar?;
                    let full = join(path, text);
                    self.index.keys.insert(full, position(mark));
                    *key = Some(text.to_string());
                    None
                }
                Some(key) => {
                    let full = join(path, &key);
                    self.index.values.insert(full.clone(), position(mark));
                    Some(full)
                }
            },
            Some(Frame::Sequence { path }) => {
                let full = match scalar {
                    Some(text) => format!("{path}={text}"),
                    None => format!("{path}[]"),
                };
                self.index.values.insert(full.clone(), position(mark));
                Some(full)
            }
        }
    }
}

impl MarkedEventReceiver for Receiver {
    fn on_event(&mut self, event: Event, mark: Marker) {
        match event {
            Event::Scalar(text, ..) => {
                self.value(&mark, Some(&text));
            }
            Event::Alias(_) => {
                self.value(&mark, Some("*alias"));
            }
            Event::MappingStart(..) => {
                let path = self.value(&mark, None).unwrap_or_else(|| "?".to_string());
                self.stack.push(Frame::Mapping { path, key: None });
            }
            Event::SequenceStart(..) => {
                let path = self.value(&mark, None).unwrap_or_else(|| "?".to_string());
                self.stack.push(Frame::Sequence { path });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_keys_values_and_list_items() {
        let text = "name: x\nports:\n  jupyter: 8888\npackages:\n  pip: [numpy, pandas]\n  apt:\n    - tini\n";
        let index = PositionIndex::build(text);
        assert_eq!(index.key("name"), Some((1, 1)));
        assert_eq!(index.value("name"), Some((1, 7)));
        assert_eq!(index.key("ports.jupyter"), Some((3, 3)));
        assert_eq!(index.value("ports.jupyter"), Some((3, 12)));
        assert_eq!(index.value("packages.pip=pandas"), Some((5, 16)));
        assert_eq!(index.value("packages.apt=tini"), Some((7, 7)));
        assert_eq!(index.value("missing"), None);
    }

    #[test]
    fn broken_yaml_gives_an_empty_index() {
        let index = PositionIndex::build("a: [\n");
        assert_eq!(index.key("a"), None);
    }

    #[test]
    fn errors_print_location_then_message() {
        let error = SpecError::new(
            Some(Location {
                file: "images/x.yaml".into(),
                line: 3,
                column: 9,
            }),
            "bad",
            "fix it",
        );
        assert_eq!(error.to_string(), "`images/x.yaml`:3:9: bad");
    }
}
