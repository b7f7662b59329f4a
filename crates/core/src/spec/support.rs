//! A resolved spec's support windows: its base release, Python and TensorFlow line judged
//! on a day handed in (`compat::support`), and the built-in to move to when a part is past
//! its support. Pure: the day comes from the `Host` seam.

use serde::Serialize;

use super::compat::support::{support, PartSupport};
use super::compat::Date;
use super::{Catalog, ResolvedSpec};
use crate::notice::Notice;

/// What `list`, `show` and `doctor` say about a spec's support.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpecSupport {
    /// The day it was judged on.
    pub checked_on: Date,
    pub parts: Vec<PartSupport>,
    /// A built-in of the same kind (GPU or CPU, same service) with no part past support,
    /// when some part of this spec is.
    pub move_to_spec: Option<String>,
}

impl SpecSupport {
    /// `ok`, `ended` (some part past its support), or `-` (no part tfimg has dates for).
    pub fn cell(&self) -> &'static str {
        if self.parts.is_empty() {
            "-"
        } else if self.is_past() {
            "ended"
        } else {
            "ok"
        }
    }

    pub fn past(&self) -> impl Iterator<Item = &PartSupport> {
        self.parts.iter().filter(|part| part.past_support)
    }

    pub fn is_past(&self) -> bool {
        self.past().next().is_some()
    }

    /// The parts past support, by name: `Debian 11 (bullseye)`, `Python 3.9`, ...
    pub fn past_names(&self) -> Vec<&str> {
        self.past().map(|part| part.name.as_str()).collect()
    }

    /// Where to move: the built-in (with what it has), else what each part moves to.
    pub fn move_to(&self) -> String {
        let targets: Vec<&str> = self
            .past()
            .filter_map(|part| part.move_to.as_deref())
            .collect();
        match &self.move_to_spec {
            Some(spec) => format!("`{spec}` ({})", targets.join(", ")),
            None => targets.join(", "),
        }
    }

    /// The one warning for a spec with parts past support, said once where a spec is
    /// shown: which parts, and where to move (the `support:` section has the dates).
    pub fn warning(&self, spec: &str) -> Option<Notice> {
        self.is_past().then(|| {
            Notice::warning(format!(
                "`{spec}` is past its support ({}; `support:` says since when) → move to {}",
                self.past_names().join(", "),
                self.move_to()
            ))
        })
    }

    /// `Debian 11 (bullseye): long-term support ended 2026-08-31 → move to Debian 12
    /// (bookworm): `tf218-gpu-jupyter``
    pub fn advice(&self, part: &PartSupport) -> String {
        let mut line = part.summary();
        if let Some(target) = &part.move_to {
            line.push_str(&format!(" → move to {target}"));
            if let Some(spec) = &self.move_to_spec {
                line.push_str(&format!(": `{spec}`"));
            }
        }
        line
    }
}

/// `resolved` judged on `today`, with the successor looked up in `catalog`.
pub fn spec_support(catalog: &Catalog, resolved: &ResolvedSpec, today: Date) -> SpecSupport {
    let parts = parts_of(resolved, today);
    let past = parts.iter().any(|part| part.past_support);
    SpecSupport {
        checked_on: today,
        move_to_spec: past.then(|| successor(catalog, resolved, today)).flatten(),
        parts,
    }
}

fn parts_of(resolved: &ResolvedSpec, today: Date) -> Vec<PartSupport> {
    support(
        &resolved.base,
        &resolved.python,
        &resolved.tensorflow,
        today,
    )
}

/// The built-in of the same kind whose every part is supported on `today`, the newest
/// TensorFlow first (ties: by name).
fn successor(catalog: &Catalog, resolved: &ResolvedSpec, today: Date) -> Option<String> {
    let mut candidates: Vec<ResolvedSpec> = catalog
        .documents()
        .filter(|document| document.file.is_abstract != Some(true))
        .filter(|document| document.name != resolved.name)
        .filter_map(|document| super::resolve(catalog, &document.name).ok())
        .filter(|candidate| {
            candidate.source == "built-in"
                && candidate.is_gpu() == resolved.is_gpu()
                && candidate.service == resolved.service
        })
        .filter(|candidate| {
            let parts = parts_of(candidate, today);
            !parts.is_empty() && parts.iter().all(|part| !part.past_support)
        })
        .collect();
    candidates.sort_by(|left, right| {
        let version = |spec: &ResolvedSpec| super::compat::Version::parse(&spec.tensorflow);
        version(right)
            .cmp(&version(left))
            .then_with(|| left.name.cmp(&right.name))
    });
    candidates.into_iter().next().map(|spec| spec.name)
}

#[cfg(test)]
mod tests;
