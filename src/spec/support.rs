//! A resolved spec's support windows: its base release, Python and TensorFlow line judged
//! on a day handed in (`compat::support`), and the built-in to move to when a part is past
//! its support. Pure: the day comes from the `Host` seam.

use serde::Serialize;

use super::compat::support::{support, PartSupport};
use super::compat::Date;
use super::{Catalog, ResolvedSpec};

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
mod tests {
    use super::*;

    fn judged(name: &str, today: &str) -> SpecSupport {
        let catalog = Catalog::builtin("/".into());
        let resolved = super::super::resolve(&catalog, name).unwrap();
        spec_support(&catalog, &resolved, Date::parse(today).unwrap())
    }

    #[test]
    fn each_2_9_built_in_moves_to_its_current_line_twin() {
        for variant in [
            "cpu-headless",
            "cpu-jupyter",
            "cpu-ssh",
            "gpu-headless",
            "gpu-jupyter",
            "gpu-ssh",
        ] {
            let support = judged(variant, "2026-11-22");
            assert_eq!(support.past().count(), 3, "{variant}: {support:#?}");
            assert_eq!(
                support.move_to_spec,
                Some(format!("tf218-{variant}")),
                "{variant}"
            );
            let current = judged(&format!("tf218-{variant}"), "2026-11-22");
            assert!(!current.is_past(), "{current:#?}");
            assert_eq!(current.move_to_spec, None);
        }
    }

    #[test]
    fn advice_names_the_end_the_target_and_the_spec() {
        let support = judged("gpu-jupyter", "2026-11-22");
        let lines: Vec<String> = support.past().map(|part| support.advice(part)).collect();
        assert_eq!(
            lines,
            [
                "Debian 11 (bullseye): long-term support ended 2026-08-31 → move to Debian 12 (bookworm): `tf218-gpu-jupyter`",
                "Python 3.9: end of life 2025-10-31; Debian 11 (bullseye)'s python3 got fixes until 2026-08-31 → move to Python 3.11 to 3.12: `tf218-gpu-jupyter`",
                "TensorFlow 2.9: no more releases: the last is 2.9.3 → move to TensorFlow 2.18: `tf218-gpu-jupyter`",
            ]
        );
    }

    #[test]
    fn before_debian_11_and_python_3_9_ended_only_tensorflow_is_flagged() {
        let support = judged("cpu-ssh", "2025-06-01");
        let past: Vec<&str> = support.past().map(|part| part.name.as_str()).collect();
        assert_eq!(past, ["TensorFlow 2.9"]);
        assert_eq!(support.move_to_spec.as_deref(), Some("tf218-cpu-ssh"));
    }
}
