//! The daemon's verdicts: whether it answers (and which versions talk), and the free
//! space where it keeps images.

use super::{check, Check, Verdict};
use crate::engine::EngineInfo;

/// The daemon as doctor saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerFacts {
    pub endpoint: String,
    pub version: String,
    pub api_version: String,
    pub negotiated_api: String,
    pub info: EngineInfo,
    /// Free bytes where images live (None: not readable from here, e.g. a remote daemon).
    pub free_bytes: Option<u64>,
}

/// Below this much free space where images live, builds of GPU images (5 GB) may fail.
const LOW_DISK: u64 = 20 * 1024 * 1024 * 1024;

pub fn docker_checks(docker: &Result<DockerFacts, (String, String)>) -> Vec<Check> {
    let facts = match docker {
        Ok(facts) => facts,
        Err((message, fix)) => {
            return vec![check(
                "docker",
                Verdict::Fail,
                message.clone(),
                Some(fix.clone()),
            )]
        }
    };
    let mut checks = vec![check(
        "docker",
        Verdict::Pass,
        format!(
            "Docker {} at {} (API {}, tfimg speaks {})",
            facts.version, facts.endpoint, facts.api_version, facts.negotiated_api
        ),
        None,
    )];
    let free = facts
        .free_bytes
        .map(|bytes| format!(", {:.1} GB free", bytes as f64 / 1e9))
        .unwrap_or_default();
    let place = if facts.info.root_dir.is_empty() {
        String::new()
    } else {
        format!(" in {}", facts.info.root_dir)
    };
    let summary = format!("storage driver {}{place}{free}", facts.info.storage_driver);
    checks.push(match facts.free_bytes {
        Some(bytes) if bytes < LOW_DISK => check(
            "storage",
            Verdict::Warn,
            summary,
            Some("free space where Docker keeps images (GPU images are about 5 GB): `docker image prune`, or move Docker's data-root".to_string()),
        ),
        _ => check("storage", Verdict::Pass, summary, None),
    });
    checks
}

#[cfg(test)]
mod tests;
