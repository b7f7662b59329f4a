//! A team's JupyterHub (`hub:`): the front door members sign in at, each starting their
//! own server. This module checks `hub:` as written and renders what the hub reads at
//! start (`settings`): the team's members and admins, and for each member the container
//! tfimg's launcher planned (`profile`), which the hub's spawner creates when she starts
//! her server. Pure: the image, certificates and files are the caller's.
//!
//! Trust boundaries: the hub holds the Docker socket (it creates the members' containers)
//! and no member container does; a member's server is on a network of her own that only
//! the hub joins besides it, as behind the gateway; the hub's secrets (cookie secret,
//! database of password hashes) live in its state volume, never in an image layer, a
//! label or this file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::input::source::SpecError;
use crate::plan::LaunchPlan;
use crate::spec::ResolvedSpec;

use super::gateway::{self, Tls};
use super::model::TeamFile;
use super::read::Places;
use super::TeamMember;

/// The host port the hub publishes when the file names none.
pub const DEFAULT_PORT: u16 = 8443;

/// The port JupyterHub's proxy listens on inside the hub's container.
pub const LISTEN_PORT: u16 = 8443;

/// The port the hub's own API listens on, which members' servers reach on their network.
pub const API_PORT: u16 = 8081;

/// Services the hub carries, as the gateway does: no member has a host port for them.
pub use super::gateway::ROUTED_SERVICES;

/// Set in a member's server: its Jupyter is spawned by the hub (`jupyterhub-singleuser`),
/// which signs members in, instead of a token of its own.
pub const HUB_MODE_ENV: &str = "TFIMG_HUB";

/// How members sign in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// JupyterHub's NativeAuthenticator: passwords kept (bcrypt) in the hub's database,
    /// the first one set by the admin (`tfimg hub passwd`), then changed by the member.
    Native,
}

impl Auth {
    pub fn as_str(self) -> &'static str {
        match self {
            Auth::Native => "native",
        }
    }
}

/// `hub:` with defaults applied and values checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hub {
    pub auth: Auth,
    /// Members who are JupyterHub admins (they see and stop every server).
    pub admins: Vec<String>,
    pub port: u16,
    /// Published on every address instead of 127.0.0.1.
    pub public: bool,
    pub tls: Tls,
}

impl Hub {
    /// The hub's address: `https://127.0.0.1:8443/` (`0.0.0.0` when public).
    pub fn address(&self) -> String {
        let host = if self.public { "0.0.0.0" } else { "127.0.0.1" };
        format!("https://{host}:{}/", self.port)
    }

    /// Where a member signs in: the hub's own login page.
    pub fn login_url(&self) -> String {
        format!("{}hub/login", self.address())
    }
}

/// The hub's container: `<team>-hub` (no member may be called `hub`).
pub fn container_name(team: &str) -> String {
    format!("{team}-hub")
}

/// The named volume the hub keeps its state in (users, password hashes, cookie secret):
/// `down` leaves it, so the next `up` has the same users.
pub fn state_volume(team: &str) -> String {
    format!("tfimg-hub-{team}")
}

/// The checked `hub:` of `file`, if it has one; `members` are the file's, checked.
pub(super) fn check(
    file: &TeamFile,
    places: &Places,
    folder: &Path,
    members: &[TeamMember],
) -> Result<Option<Hub>, SpecError> {
    let Some(written) = &file.hub else {
        return Ok(None);
    };
    if file.gateway.is_some() {
        return Err(places.bad(
            places.key("hub"),
            "a team has a `gateway:` or a `hub:`, not both".to_string(),
            "the hub is the team's front door (members sign in there); remove `gateway:`, or remove `hub:` to keep the token gateway",
        ));
    }
    let auth = match written.auth.as_deref() {
        None | Some("native") => Auth::Native,
        Some(other) => {
            return Err(places.bad(
                places.value("hub.auth"),
                format!("hub `auth: {}` is not one tfimg knows", gateway::short(other)),
                "write `auth: native`: members sign in with a password the admin sets first (`tfimg hub passwd`)",
            ))
        }
    };
    let port = match written.port {
        None => DEFAULT_PORT,
        Some(number) => number.port().ok_or_else(|| {
            places.bad(
                places.value("hub.port"),
                format!("hub port {number} is out of range"),
                "host ports go from 1 to 65535",
            )
        })?,
    };
    for admin in &written.admins {
        if !members.iter().any(|member| &member.name == admin) {
            return Err(places.bad(
                places.value("hub.admins"),
                format!(
                    "hub admin `{}` is not a member of the team",
                    gateway::short(admin)
                ),
                "list members' names under `admins`: only members sign in to the hub",
            ));
        }
    }
    let hub = Hub {
        auth,
        admins: written.admins.clone(),
        port,
        public: written.public,
        tls: gateway::tls(written.tls.as_ref(), "hub", places, folder)?,
    };
    check_members(&hub, members, places)?;
    Ok(Some(hub))
}

/// A team without `hub:` has no server to choose a spec for: `choices:` is refused.
pub(super) fn refuse_choices(members: &[TeamMember], places: &Places) -> Result<(), SpecError> {
    match members.iter().find(|member| !member.choices.is_empty()) {
        Some(member) => Err(places.bad(
            Some(member.choices_location.clone()),
            format!(
                "member `{}` has `choices:`, which only a team with `hub:` offers",
                member.name
            ),
            "add `hub: {auth: native}`: members then pick one of their specs when they start their server; without a hub, `up` runs each member's `spec`",
        )),
        None => Ok(()),
    }
}

/// With a hub, members' Jupyter and TensorBoard are reached through it only.
fn check_members(hub: &Hub, members: &[TeamMember], places: &Places) -> Result<(), SpecError> {
    gateway::check_front_door(("hub", "JupyterHub"), hub.port, members, places)
}

/// What the hub's spawner creates for one member: the container tfimg's launcher planned
/// for her, in Docker's terms, less what the hub decides itself (Jupyter's address and
/// sign-in) and with her server's GPUs chosen when she starts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Profile {
    pub name: String,
    /// The spec her server starts from, which she picks at the hub among hers.
    pub spec: String,
    /// The spec's description, shown beside its name where she picks it.
    pub description: String,
    pub image: String,
    /// The user the container starts as (`None`: the image's, which maps itself to
    /// `TFIMG_UID`/`TFIMG_GID` and drops root).
    pub user: Option<String>,
    pub env: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    /// `SOURCE:TARGET:ro|rw`, host folders and named volumes alike.
    pub binds: Vec<String>,
    pub mem_limit: Option<i64>,
    pub nano_cpus: Option<i64>,
    pub shm_size: i64,
    pub cap_drop: Vec<String>,
    pub security_opt: Vec<String>,
    /// The member's own network, which only the hub joins besides her server.
    pub network: String,
    /// The GPUs her server asks for at each start (her `gpus:`, as Docker's `--gpus`
    /// writes them), chosen then among the free ones by tfimg's own rules (`tfimg hub
    /// gpus`, which the hub runs); `None`: no GPU.
    pub gpus: Option<String>,
    /// `shared: true`: GPUs others hold may be hers too.
    pub shared_gpus: bool,
}

/// Environment the launcher sets for a Jupyter it publishes itself, which the hub
/// replaces: the token (the hub signs members in), the gateway's base URL and cookies.
const NOT_IN_HUB: [&str; 3] = [
    "TFIMG_JUPYTER_TOKEN",
    "TFIMG_JUPYTER_BASE_URL",
    "TFIMG_JUPYTER_HOST_COOKIES",
];

/// The profile of the container `plan` describes for `member` on her spec `resolved`, for
/// team `team`'s hub.
pub fn profile(
    team: &str,
    plan: &LaunchPlan,
    member: &TeamMember,
    resolved: &ResolvedSpec,
) -> Profile {
    let mut env: BTreeMap<String, String> = plan
        .env
        .iter()
        .filter_map(|pair| pair.split_once('='))
        .filter(|(key, _)| !NOT_IN_HUB.contains(key))
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    env.insert(HUB_MODE_ENV.to_string(), "1".to_string());
    let mut labels: BTreeMap<String, String> = plan
        .labels
        .iter()
        .filter(|(key, _)| !key.starts_with(crate::labels::URL_PREFIX))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    labels.insert(crate::labels::HUB.to_string(), team.to_string());
    let mode = |read_only: bool| if read_only { "ro" } else { "rw" };
    let binds = plan
        .mounts
        .iter()
        .map(|mount| {
            format!(
                "{}:{}:{}",
                mount.source.display(),
                mount.target,
                mode(mount.read_only)
            )
        })
        .chain(plan.volumes.iter().map(|volume| {
            format!(
                "{}:{}:{}",
                volume.name,
                volume.target,
                mode(volume.read_only)
            )
        }))
        .collect();
    Profile {
        name: plan.name.clone(),
        spec: resolved.name.clone(),
        description: resolved.description.clone(),
        image: plan.image.clone(),
        user: plan.user.clone(),
        env,
        labels,
        binds,
        mem_limit: plan.memory,
        nano_cpus: plan.nano_cpus,
        shm_size: plan.shm_size,
        cap_drop: plan.cap_drop.clone(),
        security_opt: plan.security_opt.clone(),
        network: plan.network.clone().unwrap_or_default(),
        gpus: (!member.gpus.is_none()).then(|| member.gpus.describe()),
        shared_gpus: member.shared,
    }
}

/// What the hub reads at start (`/etc/tfimg-hub/team.json`): the team, its admins, and
/// each member's profiles, one per spec she may start from (her `spec` first, then her
/// `choices`). Members without one (a headless or SSH member `up` runs
/// itself) cannot sign in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settings {
    pub team: String,
    /// The hub's container name, which members' servers reach its API by.
    pub hub_host: String,
    pub api_port: u16,
    pub listen_port: u16,
    pub auth: &'static str,
    pub admins: Vec<String>,
    pub members: BTreeMap<String, Vec<Profile>>,
    /// Seconds a server nobody used may run before the idle culler stops it.
    pub idle_servers: Option<u64>,
    /// The NVIDIA facts of the engine's host (its GPUs), read by `up`, for choosing GPUs
    /// when a member's server starts; `None` when no member asks for any.
    pub gpu_host: Option<serde_json::Value>,
}

/// The hub's settings for `team`, with its members' `profiles`.
pub fn settings(
    team: &super::Team,
    hub: &Hub,
    profiles: BTreeMap<String, Vec<Profile>>,
    gpu_host: Option<serde_json::Value>,
) -> Settings {
    Settings {
        team: team.name.clone(),
        hub_host: container_name(&team.name),
        api_port: API_PORT,
        listen_port: LISTEN_PORT,
        auth: hub.auth.as_str(),
        admins: hub.admins.clone(),
        members: profiles,
        idle_servers: team.idle_containers,
        gpu_host,
    }
}

impl Settings {
    /// As the hub reads it.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("settings are plain data") + "\n"
    }
}

pub mod z2jh;

#[cfg(test)]
mod tests;
