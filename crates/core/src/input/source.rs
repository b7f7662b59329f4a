//! Where things are in a spec file: the `SpecError` every spec problem becomes (file,
//! line, column, message, hint), and a position index mapping field paths such as
//! `ports.jupyter` or `packages.pip=numpy` to their line and column, so errors found after
//! parsing (a Python outside TensorFlow's range) can still point at the text.

use std::borrow::Cow;
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
    /// Control characters the message or hint quotes from the file come out escaped.
    pub fn new(
        location: Option<Location>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        SpecError {
            location,
            message: printable(&message.into()).into_owned(),
            hint: printable(&hint.into()).into_owned(),
        }
    }
}

/// `text` with its control and invisible characters escaped (`\n`, `\u{1b}`,
/// `\u{200b}`), for quoting what the user wrote inside a one-line message: a newline or a
/// terminal escape in a spec, a team file or a flag must neither break the `error:` line
/// nor reach the terminal raw, and `lab` followed by a zero-width space must not read as
/// `lab`.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.contains(hidden) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

/// Control characters, and the format characters a terminal shows as nothing or that
/// reorder the text around them: soft hyphen, zero-width spaces and joiners, direction
/// marks and overrides, word joiner and invisible operators, byte order mark.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c as u32, 0xAD | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2069 | 0xFEFF)
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(location) => write!(f, "{location}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Nesting past serde_yaml's own limit (128) is refused by it anyway; the index stops
/// there too, so a deep document costs neither stack nor quadratic key paths.
const MAX_DEPTH: usize = 128;

/// Positions of the keys and values of one YAML document.
#[derive(Debug, Clone, Default)]
pub struct PositionIndex {
    keys: HashMap<String, (usize, usize)>,
    values: HashMap<String, (usize, usize)>,
    /// Scalar values as written (`1e10`, which serde_yaml turns into a float).
    scalars: HashMap<String, String>,
}

impl PositionIndex {
    /// Indexes the first document of `text`; a document that does not parse, or nests
    /// deeper than `MAX_DEPTH`, gives an empty index (the serde error for it carries its
    /// own position).
    pub fn build(text: &str) -> PositionIndex {
        // Events are pulled one by one: yaml-rust2's `Parser::load` recurses once per
        // nesting level, and `- - - ... x` ten thousand deep overflowed the stack.
        let mut receiver = Receiver::default();
        let mut parser = Parser::new_from_str(text);
        loop {
            match parser.next_token() {
                Ok((Event::DocumentEnd | Event::StreamEnd, _)) => return receiver.index,
                Ok((event, mark)) => receiver.on_event(event, mark),
                Err(_) => return PositionIndex::default(),
            }
            if receiver.stack.len() > MAX_DEPTH {
                return PositionIndex::default();
            }
        }
    }

    /// Line and column of the key at `path` (`ports.jupyter`).
    pub fn key(&self, path: &str) -> Option<(usize, usize)> {
        self.keys.get(path).copied()
    }

    /// Line and column of the value at `path`, falling back to its key.
    pub fn value(&self, path: &str) -> Option<(usize, usize)> {
        self.values.get(path).copied().or_else(|| self.key(path))
    }

    /// The scalar value at `path` as written in the file.
    pub fn scalar(&self, path: &str) -> Option<&str> {
        self.scalars.get(path).map(String::as_str)
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
                    if let Some(text) = scalar {
                        self.index.scalars.insert(full.clone(), text.to_string());
                    }
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
mod tests;
