//! The doctor's verdicts: facts about Docker, the NVIDIA host and a spec in, one check
//! per concern out (pass / warn / fail, a one-line summary, the fix). Pure, so every
//! verdict is unit-tested; `docker`, `nvidia` and `spec` judge one group of facts each
//! (`engine_host` the NVIDIA facts of an engine on another host, learned in a container
//! there); `app::doctor` gathers the facts, and the launcher reuses the GPU checks before
//! it starts a GPU container.

mod docker;
mod driver;
mod engine_host;
mod kernels;
mod nvidia;
mod spec;

use serde::Serialize;

pub use docker::{docker_checks, DockerFacts};
pub use nvidia::{gpu_host, gpu_launch_problem, nvidia_checks};
pub use spec::{spec_checks, ImageState, SpecFacts};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    /// Said for what it is, but the spec asked about does not need it (the NVIDIA side of
    /// a CPU spec's host).
    Info,
    Warn,
    Fail,
}

/// The checks of the NVIDIA side, which only GPU images need.
const NVIDIA_CHECKS: &[&str] = &["nvidia-driver", "gpus", "container-toolkit"];

/// For a CPU spec the NVIDIA side's warnings do not apply: they become information.
pub fn for_cpu_spec(checks: &mut [Check]) {
    for check in checks {
        if NVIDIA_CHECKS.contains(&check.check.as_str()) && check.verdict == Verdict::Warn {
            check.verdict = Verdict::Info;
        }
    }
}

/// The line above the checks: what runs here, in one line. Docker first (nothing runs
/// without it), then CPU images, GPU images (where they run, and why on the CPU), and the
/// spec asked about when one of its own checks fails.
pub fn verdict(checks: &[Check], spec: &str) -> String {
    let failing = |check: &Check| check.verdict == Verdict::Fail;
    let named = |name: &str| checks.iter().find(|check| check.check == name);
    if named("docker").is_some_and(failing) {
        return "verdict: nothing runs here yet: Docker does not answer (its fix is below)"
            .to_string();
    }
    let nvidia_failing: Vec<&str> = checks
        .iter()
        .filter(|check| NVIDIA_CHECKS.contains(&check.check.as_str()) && failing(check))
        .map(|check| check.check.as_str())
        .collect();
    let passes = |name: &str| named(name).is_some_and(|check| check.verdict == Verdict::Pass);
    let gpu = if !nvidia_failing.is_empty() {
        format!(
            "GPU images: not ready (`{}` fails; its fix is below)",
            nvidia_failing.join("`, `")
        )
    } else if !passes("nvidia-driver") {
        "GPU images: will run on the CPU: no NVIDIA driver".to_string()
    } else if !passes("gpus") {
        "GPU images: will run on the CPU: the driver lists no GPU".to_string()
    } else if !passes("container-toolkit") {
        "GPU images: will run on the CPU: Docker cannot hand GPUs over (no NVIDIA Container Toolkit)"
            .to_string()
    } else {
        "GPU images: ready".to_string()
    };
    let spec_failing: Vec<&str> = checks
        .iter()
        .filter(|check| {
            failing(check)
                && check.check != "docker"
                && !NVIDIA_CHECKS.contains(&check.check.as_str())
        })
        .map(|check| check.check.as_str())
        .collect();
    let mut line = format!("verdict: CPU images: ready; {gpu}");
    if !spec_failing.is_empty() {
        line.push_str(&format!(
            "; `{spec}`: not ready (`{}` fails; its fix is below)",
            spec_failing.join("`, `")
        ));
    }
    line
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub check: String,
    pub verdict: Verdict,
    pub summary: String,
    pub fix: Option<String>,
}

/// What `tfimg doctor` prints: the verdict line, then one line per check (its verdict,
/// name and summary) with its fix below it.
pub fn report(checks: &[Check], spec: &str) -> String {
    let width = checks
        .iter()
        .map(|check| check.check.len())
        .max()
        .unwrap_or(0);
    let mut text = format!("{}\n", verdict(checks, spec));
    for check in checks {
        let verdict = match check.verdict {
            Verdict::Pass => "PASS",
            Verdict::Info => "INFO",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        };
        text.push_str(&format!(
            "{verdict}  {:<width$}  {}\n",
            check.check, check.summary
        ));
        if let Some(fix) = &check.fix {
            text.push_str(&format!("      {:<width$}  fix: {fix}\n", ""));
        }
    }
    text
}

/// Whether any check fails (`tfimg doctor` then exits 1).
pub fn failed(checks: &[Check]) -> bool {
    checks.iter().any(|check| check.verdict == Verdict::Fail)
}

fn check(name: &str, verdict: Verdict, summary: impl Into<String>, fix: Option<String>) -> Check {
    Check {
        check: name.to_string(),
        verdict,
        summary: summary.into(),
        fix,
    }
}

#[cfg(test)]
mod tests;
