//! A spec's verdicts: whether it resolves, its CUDA against the host driver, its
//! TensorFlow line's GPU code against the host's GPUs, and where its base image and its
//! own image stand on the engine (this machine, or the engine's host).

use super::kernels::kernels_check;
use super::nvidia::driver_check;
use super::{check, Check, Verdict};
use crate::host::nvidia::NvidiaFacts;
use crate::spec::compat::support::Part;
use crate::spec::resolved::GpuStack;
use crate::spec::support::SpecSupport;

/// The state of a spec's image on the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageState {
    /// The image for the current build key exists.
    Current {
        tag: String,
        key: String,
    },
    /// Only an older build exists.
    Stale {
        tag: String,
    },
    Missing {
        tag: String,
    },
    /// Could not tell (no base image, so no key).
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecFacts {
    pub name: String,
    pub summary: String,
    /// The TensorFlow release (`2.9.3`): its line's GPU code is judged against the GPUs.
    pub tensorflow: String,
    /// The CUDA compute cache volume of the user running the doctor.
    pub cuda_cache_volume: String,
    pub gpu: Option<GpuStack>,
    pub base: String,
    pub base_present: bool,
    /// The engine's URL when it runs on another host (messages name it); `None`: here.
    pub engine_host: Option<String>,
    pub base_bootstrappable: bool,
    pub image: ImageState,
    /// Its base release, Python and TensorFlow line against their support windows.
    pub support: SpecSupport,
}

/// The spec itself, its CUDA against the host driver, and (when Docker answers) its base
/// image and its own image on the engine.
pub fn spec_checks(
    spec: &Result<SpecFacts, String>,
    nvidia: &NvidiaFacts,
    docker_up: bool,
) -> Vec<Check> {
    let facts = match spec {
        Ok(facts) => facts,
        Err(message) => {
            return vec![check(
                "spec",
                Verdict::Fail,
                message.clone(),
                Some("fix the spec; `tfimg show SPEC` prints what it resolves to".to_string()),
            )]
        }
    };
    let mut checks = vec![check("spec", Verdict::Pass, facts.summary.clone(), None)];
    checks.extend(support_checks(&facts.support, &facts.name));
    if let (Some(gpu), Some(driver)) = (&facts.gpu, &nvidia.driver) {
        checks.push(driver_check(gpu, driver));
        checks.extend(kernels_check(
            &facts.tensorflow,
            &nvidia.gpus,
            &facts.cuda_cache_volume,
        ));
    }
    if !docker_up {
        return checks;
    }
    checks.push(base_image_check(facts));
    checks.push(image_check(facts));
    checks
}

/// One check per part with a support window that passes, and one warning (never a
/// failure: the image still works) for all the parts past their support, with where to
/// move: said once, not once a part.
fn support_checks(support: &SpecSupport, spec: &str) -> Vec<Check> {
    let mut checks: Vec<Check> = support
        .parts
        .iter()
        .filter(|part| !part.past_support)
        .map(|part| {
            let name = match part.part {
                Part::Base => "base-release",
                Part::Python => "python-release",
                Part::Tensorflow => "tensorflow-line",
            };
            check(name, Verdict::Pass, part.summary(), None)
        })
        .collect();
    if support.is_past() {
        let names = support.past_names();
        let listed = match names.split_last() {
            Some((last, [])) => format!("{last} is"),
            Some((last, rest)) => format!("{} and {last} are", rest.join(", ")),
            None => String::new(),
        };
        let past = format!(
            "{listed} past {} support (as of {}; `tfimg show {spec}` says since when)",
            if names.len() == 1 { "its" } else { "their" },
            support.checked_on
        );
        let fix = match &support.move_to_spec {
            Some(_) => format!("move to the built-in {}", support.move_to()),
            None => format!("move to {}", support.move_to()),
        };
        checks.push(check("support", Verdict::Warn, past, Some(fix)));
    }
    checks
}

/// Whether the base image is here, and how to get it without a registry.
fn base_image_check(facts: &SpecFacts) -> Check {
    let place = match &facts.engine_host {
        Some(url) => format!("`{url}`"),
        None => "this machine".to_string(),
    };
    if facts.base_present {
        check(
            "base-image",
            Verdict::Pass,
            format!("`{}` is on {place}", facts.base),
            None,
        )
    } else {
        check(
            "base-image",
            Verdict::Warn,
            format!(
                "`{}` is not on {place}; `tfimg build` pulls it when a registry answers",
                facts.base
            ),
            Some(if facts.base_bootstrappable {
                format!("without a registry: `tfimg base bootstrap {}`", facts.base)
            } else {
                format!(
                    "load or pull `{}`, or use `--registry-mirror HOST`",
                    facts.base
                )
            }),
        )
    }
}

/// Whether the spec's image is built for its current build key.
fn image_check(facts: &SpecFacts) -> Check {
    match &facts.image {
        ImageState::Current { tag, key } => check(
            "image",
            Verdict::Pass,
            format!(
                "`{tag}` is current (build key {})",
                &key[..key.len().min(12)]
            ),
            None,
        ),
        ImageState::Stale { tag } => check(
            "image",
            Verdict::Warn,
            format!("`{tag}` is an older build of the spec"),
            Some(format!("`tfimg build {}` brings it up to date", facts.name)),
        ),
        ImageState::Missing { tag } => check(
            "image",
            Verdict::Warn,
            format!("`{tag}` is not built yet"),
            Some(format!(
                "`tfimg build {}` (or `tfimg run` builds it)",
                facts.name
            )),
        ),
        ImageState::Unknown => check(
            "image",
            Verdict::Warn,
            "cannot tell whether the image is current without the base image",
            None,
        ),
    }
}
