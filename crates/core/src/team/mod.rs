//! Team files: one YAML file describing everyone's environment on a shared GPU server
//! (defaults, then members with their spec, GPUs, mounts, ports and environment). This
//! module parses and validates them, with errors at file:line:column naming both members
//! of a clash. Pure: the caller reads the file and hands its bytes in.
//!
//! `parse` tells the story: the YAML is read in `read` (which also knows where things are
//! for errors), the file as written is modelled in `model`, and its values are checked in
//! `checks`; `gateway` checks the team's front door and renders its proxy; `compose`
//! and `k8s` export a parsed team.

pub mod compose;
pub mod emit;
pub mod gateway;
pub mod hub;
pub mod k8s;
pub mod serving;

mod checks;
mod model;
mod read;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::input::source::{Location, SpecError};
use crate::input::yaml;
use crate::plan::gpus::GpuSelection;
use crate::spec::load::decode;

use checks::MemberChecks;
use read::Places;

/// A member with defaults applied and values checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamMember {
    pub name: String,
    pub spec: String,
    /// Where the spec is named (the member's `spec:`, or the default's), for errors about it.
    pub spec_location: Location,
    /// Other specs she may start her server from at the team's hub (`choices:`), each
    /// once and none her `spec`.
    pub choices: Vec<String>,
    /// Where `choices:` is written, for errors about one of them.
    pub choices_location: Location,
    pub gpus: GpuSelection,
    pub shared: bool,
    pub mounts: Vec<String>,
    pub ports: BTreeMap<String, u16>,
    pub env: Vec<(String, String)>,
    pub command: Vec<String>,
    /// Bytes.
    pub memory: Option<i64>,
    pub nano_cpus: Option<i64>,
    /// Bytes.
    pub shm_size: i64,
    pub workers: Option<u32>,
    /// A serving member's model (`model:`), mounted read-only at `/models/NAME`.
    pub model: Option<serving::MemberModel>,
}

impl TeamMember {
    /// Her spec, then her `choices`: every spec her server may start from.
    pub fn specs(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.spec.as_str()).chain(self.choices.iter().map(String::as_str))
    }

    /// The member as if `spec` were her spec (one of her `choices`).
    pub fn with_spec(&self, spec: &str) -> TeamMember {
        TeamMember {
            spec: spec.to_string(),
            ..self.clone()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub name: String,
    /// The team file as the user named it (`lab.yaml`), for hints that give a command.
    pub file: String,
    /// The folder of the team file: relative mounts start there.
    pub folder: PathBuf,
    pub members: Vec<TeamMember>,
    /// One published port in front of the members' services (`gateway:`).
    pub gateway: Option<gateway::Gateway>,
    /// The team's JupyterHub (`hub:`), where members sign in and start their servers.
    pub hub: Option<hub::Hub>,
    /// `idle: {kernels: ...}`: seconds a Jupyter member's kernel may sit idle.
    pub idle_kernels: Option<u64>,
    /// `idle: {containers: ...}`: seconds nobody may use a member's container before it
    /// stops itself.
    pub idle_containers: Option<u64>,
}

/// Mounts from `mounts_root` land under the workdir of the member's spec, which is known
/// only once the spec is resolved: `app::team` puts it in place of this mark.
pub const WORKDIR_MARK: &str = "@WORKDIR@";

/// A team file (shown as `display`) with what reading it gave; relative mounts start at
/// `folder`.
pub fn parse_file(
    display: &str,
    read: Result<Vec<u8>, String>,
    folder: PathBuf,
) -> Result<Team, SpecError> {
    let bytes = read.map_err(|error| {
        SpecError::new(
            None,
            format!("cannot read team file `{display}`: {error}"),
            format!("give the path of a team YAML file; {}", yaml::TEAM_HINT),
        )
    })?;
    let text = decode(bytes, display, &yaml::TEAM)?;
    parse(&text, display, folder)
}

/// A team from the text of its file (shown as `display`); relative mounts start at
/// `folder`.
pub fn parse(text: &str, display: &str, folder: PathBuf) -> Result<Team, SpecError> {
    let places = Places::new(text, display);
    let file = read::team_file(&places)?;
    checks::team(&file, &places)?;
    let member_checks = MemberChecks::new(&file, &places, &folder)?;
    let mut members: Vec<TeamMember> = Vec::new();
    for member in &file.members {
        let checked = member_checks.member(member, &members)?;
        members.push(checked);
    }
    checks::clashes(&members, &places)?;
    let gateway = gateway::check(&file, &places, &folder)?;
    if let Some(gateway) = &gateway {
        gateway::check_members(gateway, &members, &places)?;
    }
    let hub = hub::check(&file, &places, &folder, &members)?;
    if hub.is_none() {
        hub::refuse_choices(&members, &places)?;
    }
    let idle = |key: &str, text: Option<&str>| match text {
        Some(text) => crate::plan::parse_idle(text, &format!("{key}:"))
            .map(Some)
            .map_err(|error| {
                places.bad(
                    places.value(&format!("idle.{key}")),
                    error.message,
                    &error.hint,
                )
            }),
        None => Ok(None),
    };
    let idle_file = file.idle.as_ref();
    let idle_kernels = idle(
        "kernels",
        idle_file.and_then(|idle| idle.kernels.as_deref()),
    )?;
    let idle_containers = idle(
        "containers",
        idle_file.and_then(|idle| idle.containers.as_deref()),
    )?;
    Ok(Team {
        name: file.team,
        file: display.to_string(),
        folder,
        members,
        gateway,
        hub,
        idle_kernels,
        idle_containers,
    })
}

#[cfg(test)]
mod tests;
