//! The doctor's verdicts: facts about Docker, the NVIDIA host and a spec in, one check
//! per concern out (pass / warn / fail, a one-line summary, the fix). Pure, so every
//! verdict is unit-tested; `docker`, `nvidia` and `spec` judge one group of facts each
//! (`engine_host` the NVIDIA facts of an engine on another host, learned in a container
//! there), `gather` collects the facts, and the launcher reuses the GPU checks before it
//! starts a GPU container.

mod docker;
mod engine_host;
pub mod gather;
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
    Warn,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub check: String,
    pub verdict: Verdict,
    pub summary: String,
    pub fix: Option<String>,
}

fn check(name: &str, verdict: Verdict, summary: impl Into<String>, fix: Option<String>) -> Check {
    Check {
        check: name.to_string(),
        verdict,
        summary: summary.into(),
        fix,
    }
}
