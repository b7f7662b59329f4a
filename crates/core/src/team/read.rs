//! Reading a team file's YAML into a `TeamFile`, and the places its errors point at.
//! What serde_yaml must not read (deep nesting, alias bombs, several documents) is refused
//! before it reads the file, unless it finds a problem earlier in the file.

use crate::input::source::{Location, PositionIndex, SpecError};
use crate::input::yaml::{self, Problem, Step};

use super::model::TeamFile;

/// Where things are in one team file, for errors.
pub(super) struct Places<'a> {
    text: &'a str,
    display: &'a str,
    positions: PositionIndex,
}

impl<'a> Places<'a> {
    pub(super) fn new(text: &'a str, display: &'a str) -> Places<'a> {
        Places {
            text,
            display,
            positions: PositionIndex::build(text),
        }
    }

    /// A line and column (1-based) of this file.
    pub(super) fn at(&self, (line, column): (usize, usize)) -> Location {
        Location {
            file: self.display.to_string(),
            line,
            column,
        }
    }

    /// The value at a key path (`defaults.spec`).
    pub(super) fn value(&self, path: &str) -> Option<Location> {
        self.positions.value(path).map(|at| self.at(at))
    }

    /// The key at a key path (`members`).
    pub(super) fn key(&self, path: &str) -> Option<Location> {
        self.positions.key(path).map(|at| self.at(at))
    }

    /// A member's `field` (its `name:` for `name`), else its `name:` line.
    ///
    /// Member entries have no stable key path; find a member's `name:` line by value (the
    /// last one, so a duplicate points at the second entry).
    pub(super) fn member(&self, name: &str, field: &str) -> Option<Location> {
        let text = self.text;
        let name_line = text
            .lines()
            .enumerate()
            .filter(|(_, line)| {
                let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
                trimmed
                    .strip_prefix("name:")
                    .is_some_and(|value| value.trim().trim_matches(['"', '\'']) == name)
            })
            .map(|(index, _)| index)
            .last()?
            + 1;
        if field == "name" {
            let column = text.lines().nth(name_line - 1)?.find("name:")? + 1;
            return Some(self.at((name_line, column)));
        }
        // The field's line: the first one after the name line inside the same entry.
        text.lines()
            .enumerate()
            .skip(name_line)
            .take_while(|(_, line)| !line.trim_start().starts_with("- name:"))
            .find(|(_, line)| line.trim_start().starts_with(&format!("{field}:")))
            .map(|(index, line)| self.at((index + 1, line.find(field).unwrap_or(0) + 1)))
            .or_else(|| Some(self.at((name_line, 1))))
    }

    /// An error at `location`. A member written in flow style (`- {name: a}`) has no
    /// `name:` line, and a document yaml-rust2 cannot index has no positions: then it
    /// points at `members`, or the file's start.
    pub(super) fn bad(&self, location: Option<Location>, message: String, hint: &str) -> SpecError {
        let location = location
            .or_else(|| self.key("members"))
            .unwrap_or_else(|| self.at((1, 1)));
        SpecError::new(Some(location), message, hint)
    }
}

/// The file as written, or the first problem in it.
pub(super) fn team_file(places: &Places) -> Result<TeamFile, SpecError> {
    let text = places.text;
    let empty = || {
        SpecError::new(
            Some(places.at((1, 1))),
            "the team file is empty",
            yaml::TEAM.empty_hint,
        )
    };
    if text.trim().is_empty() {
        return Err(empty());
    }
    let scan = yaml::scan(text);
    if let Some(problem) = &scan.problem {
        let place = problem_place(problem);
        if *problem != Problem::TooLarge {
            if let Some(error) = yaml::earlier_error::<TeamFile>(text, place) {
                return Err(serde_error(&error, &scan, places));
            }
        }
        return Err(problem.error(places.display, place, &yaml::TEAM));
    }
    if scan.empty {
        return Err(empty());
    }
    serde_yaml::from_str(text).map_err(|error| serde_error(&error, &scan, places))
}

/// Where a problem is blamed: a bomb on the member's field holding it, or the top-level
/// field.
fn problem_place(problem: &Problem) -> yaml::Place {
    match problem {
        Problem::AliasBomb { path, .. } => match path.as_slice() {
            [Step::Key {
                name: Some(top), ..
            }, Step::Item { .. }, Step::Key { key_at, .. }, ..]
                if top == "members" =>
            {
                *key_at
            }
            [first, ..] => first.value_at(),
            [] => problem.place(),
        },
        _ => problem.place(),
    }
}

/// A serde_yaml error of a team file, with its place and a hint.
fn serde_error(error: &serde_yaml::Error, scan: &yaml::Scan, places: &Places) -> SpecError {
    let text = places.text;
    let explained = yaml::explain(error, text, scan);
    // An untagged value (`gpus: -1`) fails on its member: point at its field.
    let place = explained
        .message
        .split_once(": expected `")
        .and_then(|(path, rest)| {
            let field = rest.split_once('`')?.0;
            yaml::key_place(text, &format!("{path}.{field}"))
        })
        .map_or(explained.at, yaml::Place::pair);
    // Inside `gateway:`, say what it takes rather than what a team file has.
    let hint = match explained.hint {
        Some(hint) => hint,
        None if explained.message.starts_with("gateway") => GATEWAY_HINT.to_string(),
        None => yaml::TEAM.hint.to_string(),
    };
    SpecError::new(Some(places.at(place)), explained.message, hint)
}

const GATEWAY_HINT: &str = "`gateway` takes `port`, `public`, `tls` (`self-signed` or `{cert: FILE, key: FILE}`), `route` (`path` or `host`) and `domain`";
