//! Support windows: until when a base image's distribution release, a Python minor and a
//! TensorFlow line get fixes, and what to move to after. Data with its sources, and pure
//! lookups: `today` is always handed in (the `Host` seam reads the clock), never read here.
//!
//! What counts as the end: for Debian the end of its long-term support (the last free
//! security updates; Freexian's paid ELTS is not counted), for Ubuntu the end of standard
//! support (Ubuntu Pro's ESM is paid), for Python the end of life on python.org. A
//! TensorFlow line has no published end date: a minor older than the newest the table
//! knows gets no more releases, and its last patch is said instead. A Python that is the
//! base release's own `python3` is patched by the distribution while the release is
//! supported, so its end is the later of the two. A part is past support the day after its
//! end date.

use serde::Serialize;

use super::date::Date;
use super::{tensorflow_row, Version, TENSORFLOW};

/// A Linux distribution tfimg can bootstrap a base image of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Debian,
    Ubuntu,
}

/// One release of a distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistributionRow {
    pub family: Family,
    /// `11`, `22.04`
    pub version: &'static str,
    /// `bullseye`, `jammy`
    pub codename: &'static str,
    /// The Python its `python3` package installs.
    pub python: &'static str,
    /// Debian: the security team's regular support ends (LTS follows); Ubuntu: the same
    /// day as `end`.
    pub regular_end: Date,
    /// The last day of free public security support.
    pub end: Date,
}

const fn debian(
    version: &'static str,
    codename: &'static str,
    python: &'static str,
    regular_end: Date,
    end: Date,
) -> DistributionRow {
    DistributionRow {
        family: Family::Debian,
        version,
        codename,
        python,
        regular_end,
        end,
    }
}

const fn ubuntu(
    version: &'static str,
    codename: &'static str,
    python: &'static str,
    end: Date,
) -> DistributionRow {
    DistributionRow {
        family: Family::Ubuntu,
        version,
        codename,
        python,
        regular_end: end,
        end,
    }
}

/// Oldest first within each distribution.
///
/// Debian: https://wiki.debian.org/DebianReleases (regular security support) and
/// https://wiki.debian.org/LTS (long-term support), as the LTS team announced them on
/// 2024-06-15 (https://www.debian.org/News/2024/20240615): buster LTS to 2024-06-30,
/// bullseye regular to 2024-08-14 and LTS to 2026-08-31, bookworm regular to 2026-06-10
/// and LTS to 2028-06-30, trixie (released 2025-08-09) regular to 2028-08-09 and LTS to
/// 2030-06-30. (Third-party pages report bookworm's regular support extended to
/// 2026-07-11; only the LTS end is flagged, so it changes nothing here.)
///
/// Ubuntu: https://ubuntu.com/about/release-cycle, "End of Standard Support", which it
/// gives as a month (taken here as the month's last day): 18.04 May 2023, 20.04 May 2025,
/// 22.04 May 2027 (earlier versions of the page said April), 24.04 April 2029.
pub const DISTRIBUTIONS: &[DistributionRow] = &[
    debian(
        "10",
        "buster",
        "3.7",
        Date::new(2022, 6, 30),
        Date::new(2024, 6, 30),
    ),
    debian(
        "11",
        "bullseye",
        "3.9",
        Date::new(2024, 8, 14),
        Date::new(2026, 8, 31),
    ),
    debian(
        "12",
        "bookworm",
        "3.11",
        Date::new(2026, 6, 10),
        Date::new(2028, 6, 30),
    ),
    debian(
        "13",
        "trixie",
        "3.13",
        Date::new(2028, 8, 9),
        Date::new(2030, 6, 30),
    ),
    ubuntu("18.04", "bionic", "3.6", Date::new(2023, 5, 31)),
    ubuntu("20.04", "focal", "3.8", Date::new(2025, 5, 31)),
    ubuntu("22.04", "jammy", "3.10", Date::new(2027, 5, 31)),
    ubuntu("24.04", "noble", "3.12", Date::new(2029, 4, 30)),
];

/// Python minors and their end of life, from https://devguide.python.org/versions/
/// (its release-cycle.json): 3.6 2021-12-23, 3.7 2023-06-27, 3.8 2024-10-07, 3.9
/// 2025-10-31; from 3.10 on the page gives only the month (October, five years after the
/// first release), taken as its last day.
pub const PYTHONS: &[(&str, Date)] = &[
    ("3.6", Date::new(2021, 12, 23)),
    ("3.7", Date::new(2023, 6, 27)),
    ("3.8", Date::new(2024, 10, 7)),
    ("3.9", Date::new(2025, 10, 31)),
    ("3.10", Date::new(2026, 10, 31)),
    ("3.11", Date::new(2027, 10, 31)),
    ("3.12", Date::new(2028, 10, 31)),
    ("3.13", Date::new(2029, 10, 31)),
];

impl DistributionRow {
    /// `Debian 11 (bullseye)`, `Ubuntu 20.04 (focal)`
    pub fn title(&self) -> String {
        let family = match self.family {
            Family::Debian => "Debian",
            Family::Ubuntu => "Ubuntu",
        };
        format!("{family} {} ({})", self.version, self.codename)
    }

    fn end_name(&self) -> &'static str {
        match self.family {
            Family::Debian => "long-term support",
            Family::Ubuntu => "standard support",
        }
    }
}

/// The release of a base image tfimg knows: `debian:bullseye-slim`, `debian:11.6`,
/// `ubuntu:22.04`, `nvidia/cuda:11.2.2-cudnn8-runtime-ubuntu20.04` (any registry).
pub fn distribution(image: &str) -> Option<&'static DistributionRow> {
    let (repository, tag) = match image.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => (repository, tag),
        _ => (image, "latest"),
    };
    let name = repository.rsplit('/').next().unwrap_or(repository);
    let (family, release) = match name {
        "debian" => (Family::Debian, tag.split(['-', '.']).next().unwrap_or(tag)),
        "ubuntu" => (Family::Ubuntu, tag),
        // nvidia/cuda tags end in the distribution: `...-runtime-ubuntu20.04`.
        "cuda" => (
            Family::Ubuntu,
            tag.rsplit('-').next()?.strip_prefix("ubuntu")?,
        ),
        _ => return None,
    };
    DISTRIBUTIONS
        .iter()
        .find(|row| row.family == family && (row.version == release || row.codename == release))
}

/// Which part of an environment a verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    Base,
    Python,
    Tensorflow,
}

/// Where one part of an environment stands on a given day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartSupport {
    pub part: Part,
    /// `Debian 11 (bullseye)`, `Python 3.9`, `TensorFlow 2.9`
    pub name: String,
    pub past_support: bool,
    /// The last day of support, where one is published.
    pub ends: Option<Date>,
    /// What ends or ended, in words: `long-term support ended 2026-08-31`,
    /// `no more releases: the last is 2.9.3`.
    pub status: String,
    /// What to move to once it is past support: `Debian 12 (bookworm)`.
    pub move_to: Option<String>,
}

impl PartSupport {
    /// `Debian 11 (bullseye): long-term support ended 2026-08-31`
    pub fn summary(&self) -> String {
        format!("{}: {}", self.name, self.status)
    }
}

/// The support of a base image's release, a Python minor (`3.9`) and a TensorFlow release
/// (`2.9.3`) on `today`; parts tfimg has no dates for are left out.
pub fn support(base: &str, python: &str, tensorflow: &str, today: Date) -> Vec<PartSupport> {
    let mut parts = Vec::new();
    let release = distribution(base);
    if let Some(row) = release {
        parts.push(distribution_support(row, today));
    }
    if let Some(part) = python_support(python, release, today) {
        parts.push(part);
    }
    if let Some(part) = Version::parse(tensorflow)
        .as_ref()
        .and_then(tensorflow_row)
        .map(|row| tensorflow_support(row.minor, row.latest_patch))
    {
        parts.push(part);
    }
    parts
}

fn distribution_support(row: &DistributionRow, today: Date) -> PartSupport {
    let past = today > row.end;
    let status = if past {
        format!("{} ended {}", row.end_name(), row.end)
    } else if today > row.regular_end {
        format!(
            "{} until {} (regular security support ended {})",
            row.end_name(),
            row.end,
            row.regular_end
        )
    } else {
        format!("{} until {}", row.end_name(), row.end)
    };
    PartSupport {
        part: Part::Base,
        name: row.title(),
        past_support: past,
        ends: Some(row.end),
        status,
        move_to: past
            .then(|| distribution_successor(row, today))
            .flatten()
            .map(|row| row.title()),
    }
}

/// The newest release of the same distribution still supported on `today` whose Python
/// the newest TensorFlow line supports (Debian 13's Python 3.13 is past TensorFlow 2.18's
/// 3.12, so Debian 11 moves to 12).
fn distribution_successor(row: &DistributionRow, today: Date) -> Option<&'static DistributionRow> {
    let newest = newest_tensorflow();
    DISTRIBUTIONS.iter().rfind(|candidate| {
        candidate.family == row.family
            && today <= candidate.end
            && Version::parse(candidate.python)
                .is_some_and(|python| newest.supports_python(&python))
    })
}

/// A Python minor on `today`. When it is the distribution's own `python3` (`from`), the
/// distribution patches it as long as the release is supported, past python.org's end of
/// life (Debian 11's 3.9 got fixes until 2026-08-31, python.org's ended 2025-10-31).
fn python_support(
    python: &str,
    from: Option<&DistributionRow>,
    today: Date,
) -> Option<PartSupport> {
    let (minor, upstream) = PYTHONS
        .iter()
        .find(|(minor, _)| *minor == python_minor(python))?;
    let distribution = from.filter(|row| row.python == *minor && row.end > *upstream);
    let end = distribution.map_or(*upstream, |row| row.end);
    let past = today > end;
    let status = match distribution {
        None if past => format!("end of life {upstream}"),
        None => format!("supported until {upstream}"),
        Some(row) if past => format!(
            "end of life {upstream}; {}'s python3 got fixes until {end}",
            row.title()
        ),
        Some(row) => format!(
            "{}'s python3 gets fixes until {end} (python.org's end of life: {upstream})",
            row.title()
        ),
    };
    Some(PartSupport {
        part: Part::Python,
        name: format!("Python {minor}"),
        past_support: past,
        ends: Some(end),
        status,
        move_to: past.then(|| python_successor(today)),
    })
}

/// The Pythons the newest TensorFlow line takes that python.org still supports.
fn python_successor(today: Date) -> String {
    let newest = newest_tensorflow();
    let supported: Vec<&str> = PYTHONS
        .iter()
        .filter(|(candidate, end)| {
            today <= *end
                && Version::parse(candidate).is_some_and(|version| newest.supports_python(&version))
        })
        .map(|(candidate, _)| *candidate)
        .collect();
    match supported.as_slice() {
        [] => format!("a Python TensorFlow {} supports", newest.minor),
        [only] => format!("Python {only}"),
        [first, .., last] => format!("Python {first} to {last}"),
    }
}

/// `3.9.18` → `3.9`
fn python_minor(python: &str) -> &str {
    match python.match_indices('.').nth(1) {
        Some((at, _)) => &python[..at],
        None => python,
    }
}

fn tensorflow_support(minor: &'static str, latest_patch: &'static str) -> PartSupport {
    let newest = newest_tensorflow();
    let past = minor != newest.minor;
    PartSupport {
        part: Part::Tensorflow,
        name: format!("TensorFlow {minor}"),
        past_support: past,
        ends: None,
        status: if past {
            format!("no more releases: the last is {latest_patch}")
        } else {
            "the newest line tfimg knows".to_string()
        },
        move_to: past.then(|| format!("TensorFlow {}", newest.minor)),
    }
}

fn newest_tensorflow() -> &'static super::TensorflowRow {
    TENSORFLOW.last().expect("the table is not empty")
}

#[cfg(test)]
mod tests;
