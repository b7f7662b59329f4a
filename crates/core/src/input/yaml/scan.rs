//! The one streaming pass of yaml-rust2 over a spec or team file: the first problem
//! serde_yaml must not meet (nesting past `MAX_DEPTH`, an alias bomb, a second document)
//! with its place and the path to it, whether the file is empty, the duplicate keys, and
//! where a key is by serde_yaml's path. Events are pulled one by one and aliases are
//! counted, never expanded, so the pass is linear in the text. Pure.

use std::collections::{HashMap, HashSet};

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{ScanError, TScalarStyle};

use super::{Place, Problem, Step, MAX_ALIAS_VALUES, MAX_DEPTH, MAX_FILE_BYTES};

/// serde_yaml gives up after this many alias expansions per event of the document.
const SERDE_JUMPS_PER_EVENT: u64 = 100;

/// What one pass over a file found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// The first problem, which ended the pass.
    pub problem: Option<Problem>,
    /// No document, or one that is only `null` (`~`, nothing, a comment, `---`).
    pub empty: bool,
    /// Keys repeated in a mapping: (serde_yaml's path of the mapping, key, place).
    pub duplicates: Vec<(String, String, Place)>,
    /// Where the key `find` asked for is, if found.
    pub found: Option<Place>,
}

/// Scans `text` for the problems above; a YAML syntax error just ends the pass (serde_yaml
/// reports it, with its own wording).
pub fn scan(text: &str) -> Scan {
    Scanner::default().run(text, None)
}

/// The place of the key at `path`, spelled as serde_yaml spells paths (`members[0].gpus`).
pub fn key_place(text: &str, path: &str) -> Option<Place> {
    Scanner::default().run(text, Some(path)).found
}

/// One open mapping or sequence.
struct Frame {
    mapping: bool,
    anchor: usize,
    /// Values inside once aliases are expanded, this collection included.
    values: u64,
    /// Alias expansions serde_yaml makes to read it.
    jumps: u64,
    /// Mapping: whether the next node is the value of `key` (else it is a key).
    awaiting_value: bool,
    /// Where the collection starts.
    start: Place,
    /// Mapping: the current key and its place; sequence: unused.
    key: Option<String>,
    key_at: Place,
    /// Where the current value (or item) starts.
    value_at: Place,
    /// Sequence: items started so far.
    items: usize,
    seen: HashSet<String>,
}

impl Frame {
    fn new(mapping: bool, anchor: usize, start: Place) -> Frame {
        Frame {
            mapping,
            anchor,
            start,
            values: 1,
            jumps: 0,
            awaiting_value: false,
            key: None,
            key_at: Place::START,
            value_at: start,
            items: 0,
            seen: HashSet::new(),
        }
    }
}

#[derive(Default)]
struct Scanner {
    stack: Vec<Frame>,
    /// (values, jumps) of each anchored node, by yaml-rust2's anchor id.
    anchors: HashMap<usize, (u64, u64)>,
    events: u64,
    alias_values: u64,
    jumps: u64,
    documents: usize,
    root_is_null: bool,
    scan: Scan,
}

enum Node<'a> {
    Scalar {
        text: &'a str,
        null: bool,
        anchor: usize,
    },
    Alias(usize),
    Start {
        mapping: bool,
        anchor: usize,
    },
}

/// What one parser event means for the pass.
enum Next<'a> {
    /// A node starts: a key, a value or an item.
    Node(Node<'a>),
    /// Nothing to do for it (a collection's end is counted already).
    Skip,
    /// The stream ended.
    End,
}

impl Scanner {
    fn run(mut self, text: &str, find: Option<&str>) -> Scan {
        if text.len() > MAX_FILE_BYTES {
            self.scan.problem = Some(Problem::TooLarge);
            return self.scan;
        }
        let mut parser = Parser::new_from_str(text);
        // Where the last node started and whether it opened a collection, to place
        // nesting yaml-rust2 itself refuses.
        let mut last = (Place::START, false);
        // Events are pulled one by one: `Parser::load` recurses once per nesting level.
        loop {
            let (event, mark) = match parser.next_token() {
                Ok(next) => next,
                Err(error) => {
                    self.scan.problem = self.refused(&error, text, last);
                    return self.scan;
                }
            };
            let place = Place::of(&mark);
            let node = match self.event(&event, place) {
                Ok(Next::Node(node)) => node,
                Ok(Next::Skip) => continue,
                Ok(Next::End) => break,
                Err(problem) => {
                    self.scan.problem = Some(problem);
                    return self.scan;
                }
            };
            self.events += 1;
            last = (place, matches!(node, Node::Start { .. }));
            if let Some(problem) = self.node(node, place, &mut parser, find) {
                self.scan.problem = Some(problem);
                return self.scan;
            }
            if self.scan.found.is_some() {
                return self.scan;
            }
        }
        self.scan.empty = self.documents == 0 || (self.documents == 1 && self.root_is_null);
        self.scan
    }

    /// The problem behind a parser error, if it is one of ours: yaml-rust2 reads up to
    /// 1024 characters ahead for a possible key and stops at 255 open brackets, before it
    /// has told of the 129th. Other errors are serde_yaml's to report.
    fn refused(&self, error: &ScanError, text: &str, last: (Place, bool)) -> Option<Problem> {
        if error.info() != "recursion limit exceeded" {
            return None;
        }
        let (from, opened) = match self.stack.is_empty() {
            true => (Place::START, false),
            false => last,
        };
        let at = deeper_bracket(text, from, opened, self.stack.len())
            .unwrap_or_else(|| Place::of(error.marker()));
        Some(Problem::TooDeep { at })
    }

    /// What `event` at `place` means: a node, the end of a collection (counted here), a
    /// second document (a problem) or the end of the stream.
    fn event<'a>(&mut self, event: &'a Event, place: Place) -> Result<Next<'a>, Problem> {
        let node = match event {
            Event::StreamEnd => return Ok(Next::End),
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(Problem::SeveralDocuments { at: place });
                }
                return Ok(Next::Skip);
            }
            Event::Scalar(text, style, anchor, tag) => Node::Scalar {
                text,
                null: *style == TScalarStyle::Plain
                    && tag.is_none()
                    && matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"),
                anchor: *anchor,
            },
            Event::Alias(anchor) => Node::Alias(*anchor),
            Event::SequenceStart(anchor, _) => Node::Start {
                mapping: false,
                anchor: *anchor,
            },
            Event::MappingStart(anchor, _) => Node::Start {
                mapping: true,
                anchor: *anchor,
            },
            Event::SequenceEnd | Event::MappingEnd => {
                self.events += 1;
                if let Some(frame) = self.stack.pop() {
                    if frame.anchor != 0 {
                        self.anchors
                            .insert(frame.anchor, (frame.values, frame.jumps));
                    }
                    self.finished(frame.values, frame.jumps);
                }
                return Ok(Next::Skip);
            }
            _ => return Ok(Next::Skip),
        };
        Ok(Next::Node(node))
    }

    /// A node starts at `place`: a key or a value of the open mapping, or an item.
    fn node(
        &mut self,
        node: Node,
        place: Place,
        parser: &mut Parser<std::str::Chars>,
        find: Option<&str>,
    ) -> Option<Problem> {
        if let Node::Start { mapping: true, .. } = node {
            if self.stack.len() >= MAX_DEPTH {
                return Some(Problem::TooDeep {
                    at: block_mapping_place(place, parser),
                });
            }
        }
        if self.takes_place(&node, place) {
            self.key(&node, place, find);
        }
        match node {
            Node::Scalar { anchor, .. } => {
                if anchor != 0 {
                    self.anchors.insert(anchor, (1, 0));
                }
                self.finished(1, 0);
                None
            }
            Node::Alias(anchor) => self.alias(anchor, place),
            Node::Start { mapping, anchor } => {
                if self.stack.len() >= MAX_DEPTH {
                    return Some(Problem::TooDeep { at: place });
                }
                self.stack.push(Frame::new(mapping, anchor, place));
                None
            }
        }
    }

    /// Records where `node` sits in the open collection (the root: whether it is null);
    /// true when it is a mapping's key.
    fn takes_place(&mut self, node: &Node, place: Place) -> bool {
        match self.stack.last_mut() {
            None => {
                self.root_is_null = matches!(
                    node,
                    Node::Scalar {
                        null: true,
                        anchor: 0,
                        ..
                    }
                );
                false
            }
            Some(frame) if frame.mapping && !frame.awaiting_value => true,
            Some(frame) if frame.mapping => {
                frame.value_at = place;
                false
            }
            Some(frame) => {
                frame.value_at = place;
                frame.items += 1;
                false
            }
        }
    }

    /// `node` is a key at `place`: remembered in its mapping, noted when it repeats one,
    /// and the answer when its path is the one `find` asked for.
    fn key(&mut self, node: &Node, place: Place, find: Option<&str>) {
        self.first_key_starts_block_mapping(place);
        let duplicate = {
            let frame = self.stack.last_mut().expect("a key has a mapping");
            frame.items += 1;
            frame.key_at = place;
            frame.key = match node {
                Node::Scalar { text, .. } => Some(text.to_string()),
                _ => None,
            };
            match &frame.key {
                Some(key) if !frame.seen.insert(key.clone()) => Some(key.clone()),
                _ => None,
            }
        };
        if let Some(key) = duplicate {
            if self.scan.duplicates.len() < 64 {
                let path = self.path(self.stack.len() - 1);
                self.scan.duplicates.push((path, key, place));
            }
        }
        if let Some(wanted) = find {
            let depth = self.stack.len() - 1;
            if let Some(key) = &self.stack[depth].key {
                if join(&self.path(depth), key) == wanted {
                    self.scan.found = Some(place);
                }
            }
        }
    }

    /// An alias at `place`: counted as the values it stands for and the jumps serde_yaml
    /// makes to expand it, never expanded here; too many is an alias bomb.
    fn alias(&mut self, anchor: usize, place: Place) -> Option<Problem> {
        let (values, jumps) = self.anchors.get(&anchor).copied().unwrap_or((1, 0));
        let jumps = jumps.saturating_add(1);
        self.alias_values = self.alias_values.saturating_add(values);
        self.jumps = self.jumps.saturating_add(jumps);
        if self.alias_values > MAX_ALIAS_VALUES
            || self.jumps > self.events.saturating_mul(SERDE_JUMPS_PER_EVENT)
        {
            return Some(Problem::AliasBomb {
                at: place,
                path: self.steps(),
            });
        }
        self.finished(values, jumps);
        None
    }

    /// yaml-rust2 places a block mapping after its first key: the key at `place` moves
    /// the mapping's start (and its place as its parent's value) back to it.
    fn first_key_starts_block_mapping(&mut self, place: Place) {
        let depth = self.stack.len();
        let frame = &mut self.stack[depth - 1];
        if frame.items > 0 || place.index >= frame.start.index {
            return;
        }
        let old = frame.start;
        frame.start = place;
        frame.value_at = place;
        if depth >= 2 && self.stack[depth - 2].value_at == old {
            self.stack[depth - 2].value_at = place;
        }
    }

    /// A node of `values` and `jumps` is complete: count it in its parent.
    fn finished(&mut self, values: u64, jumps: u64) {
        if let Some(frame) = self.stack.last_mut() {
            frame.values = frame.values.saturating_add(values);
            frame.jumps = frame.jumps.saturating_add(jumps);
            if frame.mapping {
                frame.awaiting_value = !frame.awaiting_value;
            }
        }
    }

    /// serde_yaml's path of the collection at `depth` (`members[0]`, `` for the root).
    fn path(&self, depth: usize) -> String {
        let mut path = String::new();
        for frame in &self.stack[..depth] {
            if frame.mapping {
                path = join(&path, frame.key.as_deref().unwrap_or("?"));
            } else {
                path = format!("{path}[{}]", frame.items.saturating_sub(1));
            }
        }
        path
    }

    /// The path to the node being read, one step per open collection.
    fn steps(&self) -> Vec<Step> {
        self.stack
            .iter()
            .map(|frame| {
                if frame.mapping {
                    Step::Key {
                        name: frame.key.clone(),
                        key_at: frame.key_at,
                        value_at: frame.value_at,
                    }
                } else {
                    Step::Item {
                        index: frame.items.saturating_sub(1),
                        at: frame.value_at,
                    }
                }
            })
            .collect()
    }
}

/// Where a block mapping that yaml-rust2 placed at `place` starts: it places one after its
/// first key, so the key's place when the key comes first.
fn block_mapping_place(place: Place, parser: &mut Parser<std::str::Chars>) -> Place {
    if let Ok((_, mark)) = parser.next_token() {
        let key = Place::of(&mark);
        if key.index < place.index {
            return key;
        }
    }
    place
}

/// The bracket that opens level `MAX_DEPTH + 1`, reading the flow text from `from` (the
/// last node yaml-rust2 told of, at `depth` open collections, `opened` when it is one of
/// them); quoted scalars and comments are skipped.
fn deeper_bracket(text: &str, from: Place, opened: bool, mut depth: usize) -> Option<Place> {
    let mut place = from;
    let mut chars = text.chars().skip(from.index).peekable();
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    // The node's own bracket is counted already.
    if opened && chars.next_if(|c| matches!(c, '[' | '{')).is_some() {
        place.index += 1;
        place.column += 1;
    }
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                chars.next();
                place.index += 1;
                place.column += 1;
            }
            (Some(open), c) if c == open => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if previous.is_whitespace() => {
                while chars.next_if(|c| *c != '\n').is_some() {
                    place.index += 1;
                }
            }
            (None, '[' | '{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(place);
                }
            }
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        previous = c;
        place.index += 1;
        if c == '\n' {
            place.line += 1;
            place.column = 1;
        } else {
            place.column += 1;
        }
    }
    None
}

/// `path.key`, or `key` at the top.
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests;
