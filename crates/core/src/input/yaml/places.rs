//! Where every key and value of a document is, by a path spelled as serde_yaml spells
//! it (`params.lr`, `params.lr[2]`, `trials[0].wd`, `random.lr.uniform[1]`), so checks
//! made after parsing (a duplicate grid value, the third trial's missing param) point at
//! the text. Unlike `PositionIndex` (keyed by a list item's text), every item has its own
//! path. Run it only on text `scan` passed: it holds a path per node and expands no alias
//! (the values an alias stands for have no place of their own: `nearest` then gives the
//! alias's). Pure.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};

use super::scan::join;
use super::Place;

/// The places of one document's keys and values.
#[derive(Debug, Clone, Default)]
pub struct Places {
    keys: HashMap<String, Place>,
    values: HashMap<String, Place>,
}

enum Frame {
    /// The mapping's path, and the key whose value comes next.
    Mapping { path: String, key: Option<String> },
    /// The sequence's path and the index of the next item.
    Sequence { path: String, next: usize },
}

impl Places {
    /// The places of the first document of `text`; a document that does not parse gives
    /// what was read before the error (serde_yaml reports the error itself).
    pub fn build(text: &str) -> Places {
        let mut places = Places::default();
        let mut stack: Vec<Frame> = Vec::new();
        let mut parser = Parser::new_from_str(text);
        // Events are pulled one by one: `Parser::load` recurses once per nesting level.
        while let Ok((event, mark)) = parser.next_token() {
            let place = Place::of(&mark);
            match event {
                Event::Scalar(text, ..) => {
                    places.node(&mut stack, place, Some(&text));
                }
                Event::Alias(_) => {
                    places.node(&mut stack, place, Some("*"));
                }
                Event::MappingStart(..) => {
                    let path = places.node(&mut stack, place, None).unwrap_or_default();
                    stack.push(Frame::Mapping { path, key: None });
                }
                Event::SequenceStart(..) => {
                    let path = places.node(&mut stack, place, None).unwrap_or_default();
                    stack.push(Frame::Sequence { path, next: 0 });
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    stack.pop();
                }
                Event::DocumentEnd | Event::StreamEnd => break,
                _ => {}
            }
        }
        places
    }

    /// A node at `place`: a key (`scalar` is its text; recorded, no path returned), a
    /// value or an item (its path returned, for a collection that opens here).
    fn node(&mut self, stack: &mut [Frame], place: Place, scalar: Option<&str>) -> Option<String> {
        let path = match stack.last_mut() {
            None => String::new(),
            Some(Frame::Mapping { path, key }) => match key.take() {
                None => {
                    // A key; a collection as a key has no path, its contents none either.
                    let name = scalar.unwrap_or("?");
                    // yaml-rust2 places a block mapping after its first key.
                    if let Some(start) = self.values.get_mut(path.as_str()) {
                        if place.index < start.index {
                            *start = place;
                        }
                    }
                    self.keys.entry(join(path, name)).or_insert(place);
                    *key = Some(name.to_string());
                    return None;
                }
                Some(key) => join(path, &key),
            },
            Some(Frame::Sequence { path, next }) => {
                *next += 1;
                format!("{path}[{}]", *next - 1)
            }
        };
        self.values.entry(path.clone()).or_insert(place);
        Some(path)
    }

    /// Where the key at `path` is (`params.lr`).
    pub fn key(&self, path: &str) -> Option<Place> {
        self.keys.get(path).copied()
    }

    /// Where the value at `path` starts (`params.lr[2]`).
    pub fn value(&self, path: &str) -> Option<Place> {
        self.values.get(path).copied()
    }

    /// The value at `path`, else its key, else the nearest enclosing value that has a
    /// place (values an alias stands for), else the start of the file.
    pub fn nearest(&self, path: &str) -> Place {
        let mut path = path;
        loop {
            if let Some(place) = self.value(path).or_else(|| self.key(path)) {
                return place;
            }
            match path.rfind(['.', '[']) {
                Some(cut) => path = &path[..cut],
                None => return Place::START,
            }
        }
    }
}

#[cfg(test)]
mod tests;
