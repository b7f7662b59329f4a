//! A sweep file as written: the YAML model serde reads, before values are checked. The
//! search (`params`, `random`, `trials`) and `gpus` are kept as YAML values: their
//! shapes are checked in `search` and `checks`, which place every error on its item.

use serde::Deserialize;

use crate::spec::model::EnvValue;

// Each `expecting` replaces serde's wording, which names the Rust type (`expected struct
// SweepFile`) instead of what to write.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `sweep`, `spec` (or `image`), `command` and `params`"
)]
pub struct SweepFile {
    pub sweep: String,
    pub spec: Option<String>,
    pub image: Option<String>,
    pub command: Vec<String>,
    #[serde(default)]
    pub mounts: Vec<String>,
    #[serde(default)]
    pub env: serde_yaml::Mapping,
    /// A grid: param name → list of values.
    pub params: Option<serde_yaml::Mapping>,
    /// `count`, `seed` and a distribution per param.
    pub random: Option<serde_yaml::Mapping>,
    /// `random:`'s keys and `startup`: a search that learns.
    pub tpe: Option<serde_yaml::Mapping>,
    /// An explicit list of param sets.
    pub trials: Option<Vec<serde_yaml::Value>>,
    /// `all`, `none`, or a list of GPU indices and UUIDs.
    pub gpus: Option<serde_yaml::Value>,
    pub gpus_per_trial: Option<u32>,
    pub trials_per_gpu: Option<u32>,
    pub cpus_per_trial: Option<EnvValue>,
    pub memory: Option<EnvValue>,
    pub shm_size: Option<EnvValue>,
    pub max_parallel: Option<u32>,
    pub retries: Option<u32>,
    pub max_failed: Option<u32>,
    pub objective: Option<ObjectiveFile>,
    pub early_stop: Option<EarlyStopFile>,
    /// How long one attempt may run (`30m`, `2h 30m`), checked in `checks`.
    pub timeout: Option<EnvValue>,
    pub output: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `max_epochs`, and optionally `rule` (`asha` or `median`) and its settings"
)]
pub struct EarlyStopFile {
    /// None: the default rule (`checks::DEFAULT_RULE`).
    pub rule: Option<RuleFile>,
    pub max_epochs: Option<u32>,
    pub grace: Option<u32>,
    pub reduction: Option<u32>,
    pub brackets: Option<u32>,
    pub cutoff: Option<CutoffFile>,
    pub min_trials: Option<u32>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase", expecting = "`quantile` or `rank`")]
pub enum CutoffFile {
    Quantile,
    Rank,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase", expecting = "`asha` or `median`")]
pub enum RuleFile {
    Asha,
    Median,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `metric`, `mode` (`max` or `min`) and optionally `use` (`last` or `best`)"
)]
pub struct ObjectiveFile {
    pub metric: String,
    pub mode: ModeFile,
    /// `last` or `best`, checked at its place in `checks`.
    #[serde(rename = "use")]
    pub pick: Option<serde_yaml::Value>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase", expecting = "`max` or `min`")]
pub enum ModeFile {
    Max,
    Min,
}
