//! Reading a sweep file's YAML into a `SweepFile`, and the places its errors point at.
//! What serde_yaml must not read (deep nesting, alias bombs, several documents) is
//! refused before it reads the file, as for specs and team files.

use crate::input::source::{Location, SpecError};
use crate::input::yaml::{self, Place, Problem};

use super::model::SweepFile;

/// Where things are in one sweep file, for errors.
pub(crate) struct Places<'a> {
    text: &'a str,
    display: &'a str,
    places: yaml::Places,
}

impl<'a> Places<'a> {
    pub(crate) fn new(text: &'a str, display: &'a str) -> Places<'a> {
        Places {
            text,
            display,
            places: yaml::Places::build(text),
        }
    }

    fn location(&self, place: Place) -> Location {
        yaml::location(self.display, place.pair())
    }

    /// The value at `path` (`params.lr[2]`), else the nearest place that has one.
    pub(crate) fn value(&self, path: &str) -> Location {
        self.location(self.places.nearest(path))
    }

    /// The key at `path` (`random`), else its value's place.
    pub(crate) fn key(&self, path: &str) -> Location {
        match self.places.key(path) {
            Some(place) => self.location(place),
            None => self.value(path),
        }
    }

    /// An error at the value of `path`.
    pub(crate) fn bad(&self, path: &str, message: String, hint: impl Into<String>) -> SpecError {
        SpecError::new(Some(self.value(path)), message, hint)
    }

    /// An error at the key of `path`.
    pub(crate) fn bad_key(
        &self,
        path: &str,
        message: String,
        hint: impl Into<String>,
    ) -> SpecError {
        SpecError::new(Some(self.key(path)), message, hint)
    }
}

/// The file as written, or the first problem in it.
pub(crate) fn sweep_file(places: &Places) -> Result<SweepFile, SpecError> {
    let text = places.text;
    let empty = || {
        SpecError::new(
            Some(yaml::location(places.display, (1, 1))),
            "the sweep file is empty",
            yaml::SWEEP.empty_hint,
        )
    };
    if text.trim().is_empty() {
        return Err(empty());
    }
    let scan = yaml::scan(text);
    if let Some(problem) = &scan.problem {
        let place = match problem {
            // A bomb is blamed on the top-level field holding it.
            Problem::AliasBomb { path, .. } => {
                path.first().map_or(problem.place(), yaml::Step::value_at)
            }
            _ => problem.place(),
        };
        if *problem != Problem::TooLarge {
            if let Some(error) = yaml::earlier_error::<SweepFile>(text, place) {
                return Err(serde_error(&error, &scan, places));
            }
        }
        return Err(problem.error(places.display, place, &yaml::SWEEP));
    }
    if scan.empty {
        return Err(empty());
    }
    serde_yaml::from_str(text).map_err(|error| serde_error(&error, &scan, places))
}

/// A serde_yaml error of a sweep file, with its place and a hint.
fn serde_error(error: &serde_yaml::Error, scan: &yaml::Scan, places: &Places) -> SpecError {
    let explained = yaml::explain(error, places.text, scan);
    SpecError::new(
        Some(yaml::location(places.display, explained.at)),
        explained.message,
        explained
            .hint
            .unwrap_or_else(|| yaml::SWEEP.hint.to_string()),
    )
}
