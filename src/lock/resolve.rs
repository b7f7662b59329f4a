//! The resolution `tfimg lock` runs in a throw-away container of the spec's base image:
//! the script (rendered from `resolve.sh`, pure), and the lock made from what it prints.

use serde::Deserialize;

use super::check::{inputs_of, is_system_apt};
use crate::labels;
use crate::render::files::PIP_PIN;
use crate::render::NetworkOptions;
use crate::spec::locked::{AptGroups, AptPackage, Base, Distribution, LockFile, PipGroups, FORMAT};
use crate::spec::ResolvedSpec;

const TEMPLATE: &str = include_str!("resolve.sh");

/// The line of the script's output that carries its result.
pub const MARKER: &str = "TFIMG-LOCK-RESULT";

/// The script for `spec` (`sh -c` runs it). The CA travels in the container's
/// environment (`labels::LOCK_CA_VARIABLE`), so the script's text never holds it. With a
/// `shared` lock (one whose layers below the variant's are made from the same inputs,
/// `check::shares_layers`), those layers are installed from it rather than resolved
/// again, so the two images share them.
pub fn script(spec: &ResolvedSpec, network: &NetworkOptions, shared: Option<&LockFile>) -> String {
    let words = |items: &[String]| {
        items
            .iter()
            .map(|item| quote(item))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let system: Vec<String> = spec
        .packages
        .apt
        .iter()
        .filter(|package| is_system_apt(package))
        .cloned()
        .collect();
    let variant: Vec<String> = spec
        .packages
        .apt
        .iter()
        .filter(|package| !is_system_apt(package))
        .cloned()
        .collect();
    let inputs = inputs_of(spec);
    let variant_line = if variant.is_empty() {
        String::new()
    } else {
        format!("simulate {} > /tmp/tfimg-apt-variant\n", words(&variant))
    };
    let packages_line = if spec.packages.pip.is_empty() {
        String::new()
    } else {
        format!(
            "report /tmp/tfimg-packages.json --constraint /tmp/tfimg-constraints.txt --constraint /tmp/tfimg-tensorflow-pins.txt {} {}\n",
            words(&inputs.requirements),
            words(&spec.packages.pip)
        )
    };
    let (system_steps, tensorflow_steps) = match shared {
        Some(shared) => {
            let pinned: Vec<String> = shared
                .apt
                .system
                .iter()
                .map(|package| format!("{}={}", package.name, package.version))
                .collect();
            let pins: Vec<String> = shared
                .pip
                .tensorflow
                .iter()
                .map(|distribution| format!("{}=={}", distribution.name, distribution.version))
                .collect();
            (
                format!(
                    ": > /tmp/tfimg-apt-system\napt-get install -y -q --no-install-recommends {}\n",
                    words(&pinned)
                ),
                format!(
                    "printf '%s\\n' {} > /tmp/tfimg-tensorflow-pins.txt\n",
                    words(&pins)
                ),
            )
        }
        None => (
            format!(
                "simulate {system} > /tmp/tfimg-apt-system\napt-get install -y -q --no-install-recommends {system}\n",
                system = words(&system)
            ),
            format!(
                "report /tmp/tfimg-pip.json {PIP_PIN}\nreport /tmp/tfimg-tensorflow.json --constraint /tmp/tfimg-constraints.txt {}\n{TENSORFLOW_PINS}\n",
                words(&inputs.requirements)
            ),
        ),
    };
    let pip_index = match &network.pip_index_url {
        Some(index) => {
            let mut exports = format!("export PIP_INDEX_URL={}\n", quote(index));
            if let Some(host) = index.strip_prefix("http://") {
                let host = host.split(['/', ':']).next().unwrap_or(host);
                exports.push_str(&format!("export PIP_TRUSTED_HOST={}\n", quote(host)));
            }
            exports
        }
        None => String::new(),
    };
    TEMPLATE
        .replace("@NAME@", &spec.name)
        .replace("@MARKER@", MARKER)
        .replace("@CA_VARIABLE@", labels::LOCK_CA_VARIABLE)
        .replace("@PIP_INDEX@", &pip_index)
        .replace(
            "@APT_MIRROR@",
            &quote(network.apt_mirror.as_deref().unwrap_or("")),
        )
        .replace("@SYSTEM_APT_STEPS@", &system_steps)
        .replace("@TENSORFLOW_STEPS@", &tensorflow_steps)
        .replace("@VARIANT_APT@", &variant_line)
        .replace("@PIP_PIN@", PIP_PIN)
        .replace("@CONSTRAINTS@", &words(&inputs.constraints))
        .replace("@PACKAGES@", &packages_line)
}

/// The TensorFlow layer's resolution as exact pins, the constraints of the spec's own.
const TENSORFLOW_PINS: &str = r#"/opt/venv/bin/python -c 'import json; [print(i["metadata"]["name"] + "==" + i["metadata"]["version"]) for i in json.load(open("/tmp/tfimg-tensorflow.json"))["install"]]' > /tmp/tfimg-tensorflow-pins.txt"#;

/// A word for `sh`: as it is when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,/:=+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

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
