//! What `tfimg show SPEC` prints: the resolved spec as YAML (every default and pin), the
//! lock that pins its image (its own, or the one it inherits layers from), then its
//! support windows judged on `today`; and a warning for each part past its support. No
//! I/O here.

use serde::Serialize;

use crate::notice::Notice;
use crate::spec::compat::Date;
use crate::spec::support::{spec_support, SpecSupport};
use crate::spec::{Catalog, ResolvedSpec};

#[derive(Serialize)]
struct SupportSection<'a> {
    support: &'a SpecSupport,
}

/// What pins the spec's image: its own lock, or the one it inherits layers from.
#[derive(Serialize)]
struct LockSection<'a> {
    lock: ShownLock<'a>,
}

#[derive(Serialize)]
struct ShownLock<'a> {
    file: &'a str,
    digest: &'a str,
    inherited: bool,
    pins: &'static str,
}

/// The text for stdout, and the warning (which parts are past support, where to move) for
/// stderr.
pub fn show(
    catalog: &Catalog,
    resolved: &ResolvedSpec,
    today: Date,
) -> Result<(String, Vec<Notice>), serde_yaml::Error> {
    let support = spec_support(catalog, resolved, today);
    let mut text = serde_yaml::to_string(resolved)?;
    if let Some(pins) = super::pins(resolved) {
        text.push_str(&serde_yaml::to_string(&LockSection {
            lock: ShownLock {
                file: &pins.locked.display,
                digest: &pins.locked.digest,
                inherited: !pins.own,
                pins: pins.layers(),
            },
        })?);
    }
    text.push_str(&serde_yaml::to_string(&SupportSection {
        support: &support,
    })?);
    let warnings = support.warning(&resolved.name).into_iter().collect();
    Ok((text, warnings))
}

#[cfg(test)]
mod tests;
