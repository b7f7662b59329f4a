//! The lock `tfimg lock` makes from what its resolution printed (the script that runs in a
//! throw-away container of the spec's base image is `render::lock_script`): the line after
//! `MARKER`, read strictly, with the spec's inputs and the base it ran on.

use serde::Deserialize;

use super::check::inputs_of;
use crate::spec::locked::{AptGroups, AptPackage, Base, Distribution, LockFile, PipGroups, FORMAT};
use crate::spec::ResolvedSpec;

/// The line of the script's output that carries its result.
pub const MARKER: &str = "TFIMG-LOCK-RESULT";

/// What the script prints after its marker.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Resolution {
    apt_system: Vec<(String, String)>,
    apt_variant: Vec<(String, String)>,
    venv: Vec<(String, String)>,
    pip: Vec<Distribution>,
    tensorflow: Vec<Distribution>,
    packages: Vec<Distribution>,
}

/// The lock of `spec` from the script's `output`, made on the base `base`; `Err` says why
/// the output holds none (the caller shows the output's last lines).
pub fn lock_from_output(
    spec: &ResolvedSpec,
    base: Base,
    output: &str,
    shared: Option<&LockFile>,
) -> Result<LockFile, String> {
    let line = output
        .lines()
        .rev()
        .find_map(|line| line.trim_end().strip_prefix(MARKER))
        .ok_or_else(|| "the resolution printed no result".to_string())?;
    let resolution: Resolution = serde_json::from_str(line.trim())
        .map_err(|error| format!("the resolution's result does not read: {error}"))?;
    let apt = |pairs: Vec<(String, String)>| -> Vec<AptPackage> {
        pairs
            .into_iter()
            .map(|(name, version)| AptPackage { name, version })
            .collect()
    };
    let mut lock = LockFile {
        lock: FORMAT,
        spec: spec.name.clone(),
        inputs: inputs_of(spec),
        base,
        apt: AptGroups {
            system: apt(resolution.apt_system),
            variant: apt(resolution.apt_variant),
        },
        pip: PipGroups {
            venv: resolution
                .venv
                .into_iter()
                .map(|(name, version)| Distribution {
                    name,
                    version,
                    sha256: None,
                })
                .collect(),
            pip: resolution.pip,
            tensorflow: resolution.tensorflow,
            packages: resolution.packages,
        },
    };
    if let Some(shared) = shared {
        lock.apt.system = shared.apt.system.clone();
        lock.pip.venv = shared.pip.venv.clone();
        lock.pip.pip = shared.pip.pip.clone();
        lock.pip.tensorflow = shared.pip.tensorflow.clone();
    }
    Ok(lock)
}
