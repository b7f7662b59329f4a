//! A team file as written: the YAML model serde reads, before defaults are applied and
//! values checked.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::spec::model::{EnvValue, PortNumber};

// Each `expecting` replaces serde's wording, which names the Rust type (`expected struct
// TeamFile`) instead of what to write.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `team`, `defaults`, `members`, `gateway`, `hub` and `idle`"
)]
pub struct TeamFile {
    pub team: String,
    #[serde(default)]
    pub defaults: Defaults,
    pub members: Vec<Member>,
    /// One published address for the whole team, in front of the members' services.
    pub gateway: Option<GatewayFile>,
    /// The team's JupyterHub, instead of the gateway: members sign in and start their own
    /// servers.
    pub hub: Option<HubFile>,
    /// What is let go when idle.
    pub idle: Option<IdleFile>,
}

/// `idle:` as written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "idle: a mapping with `kernels` and `containers` (durations such as `1h`)"
)]
pub struct IdleFile {
    /// How long a Jupyter kernel may run nothing before Jupyter shuts it down.
    pub kernels: Option<String>,
    /// How long nobody may use a member's container before it stops itself.
    pub containers: Option<String>,
}

/// `gateway:` as written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a gateway: a mapping with `port`, `public`, `tls`, `route` and `domain`"
)]
pub struct GatewayFile {
    pub port: Option<PortNumber>,
    #[serde(default)]
    pub public: bool,
    pub tls: Option<TlsValue>,
    pub route: Option<String>,
    pub domain: Option<String>,
}

/// `hub:` as written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a hub: a mapping with `auth`, `admins`, `port`, `public` and `tls`"
)]
pub struct HubFile {
    pub auth: Option<String>,
    #[serde(default)]
    pub admins: Vec<String>,
    pub port: Option<PortNumber>,
    #[serde(default)]
    pub public: bool,
    pub tls: Option<TlsValue>,
}

/// `tls:` as written: `self-signed`, or a certificate and its key.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    untagged,
    expecting = "expected `tls` to be `self-signed` or a mapping with `cert` and `key`"
)]
pub enum TlsValue {
    Word(String),
    Files(TlsFiles),
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TlsFiles {
    pub cert: String,
    pub key: String,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping of defaults such as `spec` and `mounts_root`"
)]
pub struct Defaults {
    pub spec: Option<String>,
    /// Each member gets `<mounts_root>/<member>` mounted at `<workdir>/work`.
    pub mounts_root: Option<String>,
    pub memory: Option<String>,
    pub cpus: Option<String>,
    pub shm_size: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a member: a mapping with `name` and settings such as `spec` and `gpus`"
)]
pub struct Member {
    pub name: String,
    pub spec: Option<String>,
    /// Other specs she may start her server from at the team's hub (`spec:` is the
    /// first she is offered).
    #[serde(default)]
    pub choices: Vec<String>,
    /// `all`, a count, a list of indices/UUIDs, or `none`.
    pub gpus: Option<GpusValue>,
    /// Allow other members on the same GPUs.
    #[serde(default)]
    pub shared: bool,
    #[serde(default)]
    pub mounts: Vec<String>,
    /// Fixed host ports by service name (`jupyter: 8890`).
    #[serde(default)]
    pub ports: BTreeMap<String, PortNumber>,
    #[serde(default)]
    pub env: BTreeMap<String, EnvValue>,
    /// A command instead of the service (for headless members).
    #[serde(default)]
    pub command: Vec<String>,
    pub memory: Option<String>,
    pub cpus: Option<String>,
    /// Multi-worker training on Kubernetes: this many workers (`tfimg up` runs one).
    pub workers: Option<u32>,
    /// A serving member's model: a folder of numbered SavedModel versions.
    pub model: Option<String>,
    /// The model's name in its URLs; the folder's name otherwise.
    pub model_name: Option<String>,
    /// A serving member's models instead: TensorFlow Serving's model config file.
    pub model_config: Option<String>,
    /// The model server's cap on merged rows (`tfimg serve --max-batch`).
    pub max_batch: Option<u32>,
    /// TensorFlow Serving's batching (`tfimg serve --enable-batching`): `true` for its
    /// defaults, or its batching parameters file (`--batching-parameters`).
    pub batching: Option<BatchingValue>,
}

/// `batching:` as YAML allows it: `true`/`false`, or a file name.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    untagged,
    expecting = "expected `batching` to be `true` (TensorFlow Serving's batching with its defaults) or its batching parameters file"
)]
pub enum BatchingValue {
    On(bool),
    File(String),
}

/// `gpus:` as YAML allows it: `all`, `2`, `[0, 1]`, `"GPU-..."`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    untagged,
    expecting = "expected `gpus` to be `all`, `none`, a count, or a list of GPU indices and UUIDs"
)]
pub enum GpusValue {
    Count(u32),
    Text(String),
    List(Vec<ListItem>),
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged, expecting = "expected a GPU index or UUID")]
pub enum ListItem {
    Index(u32),
    Text(String),
}

impl GpusValue {
    pub(super) fn text(&self) -> String {
        match self {
            GpusValue::Count(count) => count.to_string(),
            GpusValue::Text(text) => text.clone(),
            // A list always names devices, even `[1]`.
            GpusValue::List(items) => {
                "device=".to_string()
                    + &items
                        .iter()
                        .map(|item| match item {
                            ListItem::Index(index) => index.to_string(),
                            ListItem::Text(text) => text.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join(",")
            }
        }
    }
}
