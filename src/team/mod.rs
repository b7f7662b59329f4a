//! Team files: one YAML file describing everyone's environment on a shared GPU server
//! (defaults, then members with their spec, GPUs, mounts, ports and environment). This
//! module parses and validates them, with errors at file:line:column naming both members
//! of a clash. Pure apart from reading the file.

pub mod compose;
pub mod k8s;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::plan::gpus::GpuSelection;
use crate::spec::model::EnvValue;
use crate::spec::source::{Location, PositionIndex, SpecError};

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TeamFile {
    pub team: String,
    #[serde(default)]
    pub defaults: Defaults,
    pub members: Vec<Member>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub spec: Option<String>,
    /// Each member gets `<mounts_root>/<member>` mounted at `<workdir>/work`.
    pub mounts_root: Option<String>,
    pub memory: Option<String>,
    pub cpus: Option<String>,
    pub shm_size: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub name: String,
    pub spec: Option<String>,
    /// `all`, a count, a list of indices/UUIDs, or `none`.
    pub gpus: Option<GpusValue>,
    /// Allow other members on the same GPUs.
    #[serde(default)]
    pub shared: bool,
    #[serde(default)]
    pub mounts: Vec<String>,
    /// Fixed host ports by service name (`jupyter: 8890`).
    #[serde(default)]
    pub ports: BTreeMap<String, i64>,
    #[serde(default)]
    pub env: BTreeMap<String, EnvValue>,
    /// A command instead of the service (for headless members).
    #[serde(default)]
    pub command: Vec<String>,
    pub memory: Option<String>,
    pub cpus: Option<String>,
    /// Multi-worker training on Kubernetes: this many workers (`tfimg up` runs one).
    pub workers: Option<u32>,
}

/// `gpus:` as YAML allows it: `all`, `2`, `[0, 1]`, `"GPU-..."`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum GpusValue {
    Count(u32),
    Text(String),
    List(Vec<ListItem>),
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum ListItem {
    Index(u32),
    Text(String),
}

impl GpusValue {
    fn text(&self) -> String {
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

/// A member with defaults applied and values checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamMember {
    pub name: String,
    pub spec: String,
    pub gpus: GpuSelection,
    pub shared: bool,
    pub mounts: Vec<String>,
    pub ports: BTreeMap<String, u16>,
    pub env: Vec<(String, String)>,
    pub command: Vec<String>,
    pub memory: Option<String>,
    pub cpus: Option<String>,
    pub shm_size: String,
    pub workers: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub name: String,
    /// The folder of the team file: relative mounts start there.
    pub folder: PathBuf,
    pub members: Vec<TeamMember>,
}

/// Reads and validates a team file.
pub fn load(path: &Path) -> Result<Team, SpecError> {
    let display = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| {
        SpecError::new(
            None,
            format!("cannot read team file `{display}`: {error}"),
            "give the path of a team YAML file (see compose/team.yaml)",
        )
    })?;
    let folder = path
        .parent()
        .map(|parent| {
            std::path::absolute(if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            })
        })
        .transpose()
        .ok()
        .flatten()
        .unwrap_or_else(|| PathBuf::from("."));
    parse(&text, &display, folder)
}

pub fn parse(text: &str, display: &str, folder: PathBuf) -> Result<Team, SpecError> {
    let positions = PositionIndex::build(text);
    let at = |line_column: (usize, usize)| Location {
        file: display.to_string(),
        line: line_column.0,
        column: line_column.1,
    };
    let file: TeamFile = serde_yaml::from_str(text).map_err(|error| {
        let place = error
            .location()
            .map(|place| at((place.line(), place.column())));
        let message = error.to_string();
        let message = message
            .rfind(" at line ")
            .map(|index| message[..index].to_string())
            .unwrap_or(message);
        SpecError::new(
            place,
            message,
            "a team file has `team`, `defaults` and `members`; see compose/team.yaml",
        )
    })?;
    // Member entries have no stable key path; find a member's `name:` line by value (the
    // last one, so a duplicate points at the second entry).
    let member_location = |name: &str, field: &str| -> Option<Location> {
        let name_line = text
            .lines()
            .enumerate()
            .filter(|(_, line)| {
                let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
                trimmed
                    .strip_prefix("name:")
                    .is_some_and(|value| value.trim().trim_matches(['"', '\'']) == name)
            })
            .map(|(index, _)| index)
            .last()?
            + 1;
        if field == "name" {
            let column = text.lines().nth(name_line - 1)?.find("name:")? + 1;
            return Some(at((name_line, column)));
        }
        // The field's line: the first one after the name line inside the same entry.
        text.lines()
            .enumerate()
            .skip(name_line)
            .take_while(|(_, line)| !line.trim_start().starts_with("- name:"))
            .find(|(_, line)| line.trim_start().starts_with(&format!("{field}:")))
            .map(|(index, line)| at((index + 1, line.find(field).unwrap_or(0) + 1)))
            .or_else(|| Some(at((name_line, 1))))
    };
    let bad = |location: Option<Location>, message: String, hint: &str| {
        SpecError::new(location, message, hint)
    };

    let team_ok = !file.team.is_empty()
        && file
            .team
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && file.team.starts_with(|c: char| c.is_ascii_lowercase());
    if !team_ok {
        return Err(bad(
            positions.value("team").map(at),
            format!("team name `{}` is not valid", file.team),
            "use lowercase letters, digits and `-`, starting with a letter (it prefixes container names)",
        ));
    }
    if file.members.is_empty() {
        return Err(bad(
            positions.key("members").map(at),
            "the team has no members".into(),
            "add members with at least a `name`",
        ));
    }

    let mut members: Vec<TeamMember> = Vec::new();
    for member in &file.members {
        let valid_name = !member.name.is_empty()
            && member.name.len() <= 40
            && member.name.starts_with(|c: char| c.is_ascii_lowercase())
            && member
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid_name {
            return Err(bad(
                member_location(&member.name, "name"),
                format!("member name `{}` is not valid", member.name),
                "use lowercase letters, digits and `-`, starting with a letter",
            ));
        }
        if let Some(first) = members.iter().find(|seen| seen.name == member.name) {
            return Err(bad(
                member_location(&member.name, "name"),
                format!("member `{}` is listed twice", first.name),
                "give every member a name of their own",
            ));
        }
        let spec = member
            .spec
            .clone()
            .or_else(|| file.defaults.spec.clone())
            .ok_or_else(|| {
                bad(
                    member_location(&member.name, "name"),
                    format!(
                        "member `{}` has no spec and the team has no default",
                        member.name
                    ),
                    "add `spec:` to the member, or `defaults: {spec: cpu-jupyter}`",
                )
            })?;
        let gpus = match &member.gpus {
            None => GpuSelection::None,
            Some(value) => GpuSelection::parse(&value.text()).map_err(|error| {
                bad(
                    member_location(&member.name, "gpus"),
                    format!("member `{}`: {}", member.name, error.message),
                    &error.hint,
                )
            })?,
        };
        let mut ports = BTreeMap::new();
        for (service, port) in &member.ports {
            let Some(port) = u16::try_from(*port).ok().filter(|port| *port > 0) else {
                return Err(bad(
                    member_location(&member.name, "ports"),
                    format!(
                        "member `{}`: port {port} for `{service}` is out of range",
                        member.name
                    ),
                    "host ports go from 1 to 65535",
                ));
            };
            ports.insert(service.clone(), port);
        }
        let mut env = Vec::new();
        for (key, value) in &member.env {
            let (key, value) =
                crate::plan::parse_env(&format!("{key}={}", value.0)).map_err(|error| {
                    bad(
                        member_location(&member.name, "env"),
                        format!("member `{}`: {}", member.name, error.message),
                        &error.hint,
                    )
                })?;
            env.push((key, value));
        }
        if let Some(workers) = member.workers {
            if workers < 2 || member.command.is_empty() {
                return Err(bad(
                    member_location(&member.name, "workers"),
                    format!(
                        "member `{}`: `workers: {workers}` needs 2 or more workers and a `command`",
                        member.name
                    ),
                    "multi-worker training runs a command (`python train.py`) on 2 or more workers",
                ));
            }
        }
        let mut mounts = member.mounts.clone();
        if let Some(root) = &file.defaults.mounts_root {
            mounts.push(format!(
                "{}/{}:@WORKDIR@/work",
                root.trim_end_matches('/'),
                member.name
            ));
        }
        members.push(TeamMember {
            name: member.name.clone(),
            spec,
            gpus,
            shared: member.shared,
            mounts,
            ports,
            env,
            command: member.command.clone(),
            memory: member
                .memory
                .clone()
                .or_else(|| file.defaults.memory.clone()),
            cpus: member.cpus.clone().or_else(|| file.defaults.cpus.clone()),
            shm_size: file
                .defaults
                .shm_size
                .clone()
                .unwrap_or_else(|| "2g".to_string()),
            workers: member.workers,
        });
    }

    // Clashes: the same GPU pinned by two members (unless both share), one host port twice.
    for (index, member) in members.iter().enumerate() {
        for earlier in &members[..index] {
            if let (GpuSelection::Devices(mine), GpuSelection::Devices(theirs)) =
                (&member.gpus, &earlier.gpus)
            {
                if let Some(gpu) = mine.iter().find(|gpu| theirs.contains(gpu)) {
                    if !(member.shared && earlier.shared) {
                        return Err(bad(
                            member_location(&member.name, "gpus"),
                            format!("GPU {gpu} is given to both `{}` and `{}`", earlier.name, member.name),
                            "give each member its own GPUs, or set `shared: true` on both to share on purpose",
                        ));
                    }
                }
            }
            for (service, port) in &member.ports {
                if let Some((other_service, _)) =
                    earlier.ports.iter().find(|(_, other)| *other == port)
                {
                    return Err(bad(
                        member_location(&member.name, "ports"),
                        format!(
                            "host port {port} is given to both `{}` ({other_service}) and `{}` ({service})",
                            earlier.name, member.name
                        ),
                        "give each member its own host ports, or leave `ports` out and tfimg picks free ones",
                    ));
                }
            }
        }
    }
    Ok(Team {
        name: file.team,
        folder,
        members,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Team, SpecError> {
        parse(text, "team.yaml", PathBuf::from("/lab"))
    }

    #[test]
    fn members_take_defaults() {
        let team = parse_text(
            "team: vision\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\n  memory: 8g\nmembers:\n  - name: alice\n    gpus: [0]\n  - name: bob\n    spec: cpu-ssh\n    gpus: all\n",
        )
        .unwrap();
        assert_eq!(team.members[0].spec, "cpu-jupyter");
        assert_eq!(
            team.members[0].gpus,
            GpuSelection::Devices(vec!["0".into()])
        );
        assert_eq!(team.members[0].mounts, ["./work/alice:@WORKDIR@/work"]);
        assert_eq!(team.members[1].gpus, GpuSelection::All);
        assert_eq!(team.members[1].memory.as_deref(), Some("8g"));
    }

    #[test]
    fn clashes_name_both_members_and_the_line() {
        let error = parse_text(
            "team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    gpus: [0, 1]\n  - name: bob\n    gpus: [1]\n",
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "`team.yaml`:7:5: GPU 1 is given to both `alice` and `bob`"
        );
        let shared = "team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    gpus: [0]\n    shared: true\n  - name: bob\n    gpus: [0]\n    shared: true\n";
        assert!(parse_text(shared).is_ok());
        let error = parse_text(
            "team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    ports: {jupyter: 8890}\n  - name: bob\n    ports:\n      jupyter: 8890\n",
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "`team.yaml`:7:5: host port 8890 is given to both `alice` (jupyter) and `bob` (jupyter)"
        );
        let error = parse_text("team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n  - name: alice\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "`team.yaml`:5:5: member `alice` is listed twice"
        );
    }
}
