//! The resolution `tfimg lock` runs in a throw-away container of the spec's base image,
//! rendered from `templates/lock_script.sh`: it walks the Dockerfile's layers in their
//! order and prints what each would install after `lock::resolve::MARKER`, which
//! `lock::resolve` reads back into a lock. Pure, like the rest of `render`.

use crate::labels;
use crate::lock::check::{inputs_of, is_system_apt};
use crate::lock::resolve::MARKER;
use crate::lock::LockFile;
use crate::render::files::PIP_PIN;
use crate::render::NetworkOptions;
use crate::spec::ResolvedSpec;

const TEMPLATE: &str = include_str!("templates/lock_script.sh");

/// The script for `spec` (`sh -c` runs it). The CA travels in the container's
/// environment (`labels::LOCK_CA_VARIABLE`), so the script's text never holds it. With a
/// `shared` lock (one whose layers below the variant's are made from the same inputs,
/// `lock::check::shares_layers`), those layers are installed from it rather than resolved
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
    let mut packages_line = if spec.packages.pip.is_empty() {
        String::new()
    } else {
        format!(
            "report /tmp/tfimg-packages.json --constraint /tmp/tfimg-constraints.txt --constraint /tmp/tfimg-tensorflow-pins.txt {} {}\n",
            words(&inputs.requirements),
            words(&spec.packages.pip)
        )
    };
    if !spec.packages.pip_no_deps.is_empty() {
        // Only the packages themselves: their declared dependencies are not installed.
        packages_line += &format!(
            "report /tmp/tfimg-no-deps.json --no-deps {}\n",
            words(&spec.packages.pip_no_deps)
        );
    }
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

#[cfg(test)]
mod tests;
