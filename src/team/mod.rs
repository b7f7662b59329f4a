//! Team files: one YAML file describing everyone's environment on a shared GPU server
//! (defaults, then members with their spec, GPUs, mounts, ports and environment). This
//! module parses and validates them, with errors at file:line:column naming both members
//! of a clash. Pure apart from reading the file.

pub mod compose;
pub mod emit;
pub mod k8s;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::input::source::{Location, PositionIndex, SpecError};
use crate::input::yaml::{self, Problem, Step};
use crate::input::InputError;
use crate::plan::gpus::GpuSelection;
use crate::plan::mounts;
use crate::spec::load::decode;
use crate::spec::model::{EnvValue, PortNumber};

// Each `expecting` replaces serde's wording, which names the Rust type (`expected struct
// TeamFile`) instead of what to write.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `team`, `defaults` and `members`"
)]
pub struct TeamFile {
    pub team: String,
    #[serde(default)]
    pub defaults: Defaults,
    pub members: Vec<Member>,
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
    /// Where the spec is named (the member's `spec:`, or the default's), for errors about it.
    pub spec_location: Location,
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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub name: String,
    /// The folder of the team file: relative mounts start there.
    pub folder: PathBuf,
    pub members: Vec<TeamMember>,
}

/// Mounts from `mounts_root` land under the workdir of the member's spec, which is known
/// only once the spec is resolved: `commands::team` puts it in place of this mark.
pub const WORKDIR_MARK: &str = "@WORKDIR@";

/// A workdir to check mounts against before the spec is resolved: any valid workdir gives
/// the same verdict (workdirs are never system folders).
const PLACEHOLDER_WORKDIR: &str = "/tf";

/// Member names prefix container names with the team's.
const MAX_MEMBER_NAME: usize = 40;

/// `tfimg k8s` names a member's objects `<team>-<member>` and its workers' headless
/// Service `<team>-<member>-workers`; Services are DNS-1035 labels (at most 63
/// characters, ending in a letter or digit), so `<team>-<member>` has at most 55.
const MAX_FULL_NAME: usize = 63 - "-workers".len();

/// A team name leaves room for `-` and a one-letter member.
const MAX_TEAM_NAME: usize = MAX_FULL_NAME - 2;

/// Kubernetes runs at most this many pods in one indexed Job; worker `<name>-<index>`
/// host names then stay within 63 characters too.
const MAX_WORKERS: u32 = 100_000;

const NAME_END_HINT: &str =
    "end the name with a letter or digit: Kubernetes names cannot end with `-`";

/// A name as echoed in a message: at most 64 characters, then `…`.
fn shortened(name: &str) -> String {
    match name.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_string(),
    }
}

/// `cpus:` as `--cpus` checks it, in the file's words.
fn check_cpus(text: &str) -> Result<i64, InputError> {
    crate::plan::parse_cpus(text).map_err(|error| {
        InputError::new(
            error.message.replacen("`--cpus ", "`cpus: ", 1),
            error.hint.replace("`--cpus ", "`cpus: "),
        )
    })
}

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
            "give the path of a team YAML file (see compose/team.yaml)",
        )
    })?;
    let text = decode(bytes, display, &yaml::TEAM)?;
    parse(&text, display, folder)
}

pub fn parse(text: &str, display: &str, folder: PathBuf) -> Result<Team, SpecError> {
    let positions = PositionIndex::build(text);
    let at = |line_column: (usize, usize)| Location {
        file: display.to_string(),
        line: line_column.0,
        column: line_column.1,
    };
    let empty = || {
        SpecError::new(
            Some(at((1, 1))),
            "the team file is empty",
            yaml::TEAM.empty_hint,
        )
    };
    if text.trim().is_empty() {
        return Err(empty());
    }
    // What serde_yaml must not read (deep nesting, alias bombs, several documents) is
    // refused first, unless serde_yaml finds a problem before it in the file.
    let scan = yaml::scan(text);
    let serde_error = |error: &serde_yaml::Error| {
        let explained = yaml::explain(error, text, &scan);
        // An untagged value (`gpus: -1`) fails on its member: point at its field.
        let place = explained
            .message
            .split_once(": expected `")
            .and_then(|(path, rest)| {
                let field = rest.split_once('`')?.0;
                yaml::key_place(text, &format!("{path}.{field}"))
            })
            .map_or(explained.at, yaml::Place::pair);
        SpecError::new(
            Some(at(place)),
            explained.message,
            explained
                .hint
                .unwrap_or_else(|| yaml::TEAM.hint.to_string()),
        )
    };
    if let Some(problem) = &scan.problem {
        // A bomb is blamed on the member's field holding it, or the top-level field.
        let place = match problem {
            Problem::AliasBomb { path, .. } => match path.as_slice() {
                [Step::Key {
                    name: Some(top), ..
                }, Step::Item { .. }, Step::Key { key_at, .. }, ..]
                    if top == "members" =>
                {
                    *key_at
                }
                [first, ..] => first.value_at(),
                [] => problem.place(),
            },
            _ => problem.place(),
        };
        if *problem != Problem::TooLarge {
            if let Some(error) = yaml::earlier_error::<TeamFile>(text, place) {
                return Err(serde_error(&error));
            }
        }
        return Err(problem.error(display, place, &yaml::TEAM));
    }
    if scan.empty {
        return Err(empty());
    }
    let file: TeamFile = serde_yaml::from_str(text).map_err(|error| serde_error(&error))?;
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
    // A member written in flow style (`- {name: a}`) has no `name:` line, and a document
    // yaml-rust2 cannot index has no positions: point at `members`, or the file's start.
    let bad = |location: Option<Location>, message: String, hint: &str| {
        let location = location
            .or_else(|| positions.key("members").map(at))
            .unwrap_or_else(|| at((1, 1)));
        SpecError::new(Some(location), message, hint)
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
            format!("team name `{}` is not valid", shortened(&file.team)),
            "use lowercase letters, digits and `-`, starting with a letter (it prefixes container names)",
        ));
    }
    if file.team.ends_with('-') {
        return Err(bad(
            positions.value("team").map(at),
            format!("team name `{}` ends with `-`", shortened(&file.team)),
            NAME_END_HINT,
        ));
    }
    if file.team.len() > MAX_TEAM_NAME {
        return Err(bad(
            positions.value("team").map(at),
            format!(
                "team name `{}` is too long ({} characters, at most {MAX_TEAM_NAME})",
                shortened(&file.team),
                file.team.len()
            ),
            "members' Kubernetes names are `<team>-<member>-workers`, at most 63 characters: use a shorter team name",
        ));
    }
    if file.members.is_empty() {
        return Err(bad(
            positions.key("members").map(at),
            "the team has no members".into(),
            "add members with at least a `name`",
        ));
    }

    let defaults = &file.defaults;
    let defaults_error = |field: &str, error: InputError| {
        bad(
            positions.value(&format!("defaults.{field}")).map(at),
            error.message,
            &error.hint,
        )
    };
    let default_memory = defaults
        .memory
        .as_deref()
        .map(|memory| crate::plan::parse_size(memory, "memory:"))
        .transpose()
        .map_err(|e| defaults_error("memory", e))?;
    let default_cpus = defaults
        .cpus
        .as_deref()
        .map(check_cpus)
        .transpose()
        .map_err(|e| defaults_error("cpus", e))?;
    let shm_size = match &defaults.shm_size {
        Some(shm_size) => crate::plan::parse_size(shm_size, "shm_size:")
            .map_err(|e| defaults_error("shm_size", e))?,
        None => crate::plan::DEFAULT_SHM,
    };

    let mut members: Vec<TeamMember> = Vec::new();
    for member in &file.members {
        let valid_name = !member.name.is_empty()
            && member.name.len() <= MAX_MEMBER_NAME
            && member.name.starts_with(|c: char| c.is_ascii_lowercase())
            && member
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid_name {
            let length = member.name.chars().count();
            let message = if length > MAX_MEMBER_NAME {
                format!(
                    "member name `{}` is too long ({length} characters, at most {MAX_MEMBER_NAME})",
                    shortened(&member.name)
                )
            } else {
                format!("member name `{}` is not valid", member.name)
            };
            return Err(bad(
                member_location(&member.name, "name"),
                message,
                "use lowercase letters, digits and `-`, starting with a letter",
            ));
        }
        if member.name.ends_with('-') {
            return Err(bad(
                member_location(&member.name, "name"),
                format!("member name `{}` ends with `-`", member.name),
                NAME_END_HINT,
            ));
        }
        let full_name = format!("{}-{}", file.team, member.name);
        if full_name.len() > MAX_FULL_NAME {
            return Err(bad(
                member_location(&member.name, "name"),
                format!(
                    "member name `{}` is too long for team `{}`: `{full_name}` has {} characters, at most {MAX_FULL_NAME}",
                    member.name,
                    file.team,
                    full_name.len()
                ),
                "Kubernetes names are `<team>-<member>` and `<team>-<member>-workers`, at most 63 characters: shorten the team or member name",
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
        let spec_location = match &member.spec {
            Some(_) => member_location(&member.name, "spec"),
            None => positions.value("defaults.spec").map(at),
        }
        .or_else(|| positions.key("members").map(at))
        .unwrap_or_else(|| at((1, 1)));
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
        for (service, number) in &member.ports {
            let Some(port) = number.port() else {
                return Err(bad(
                    member_location(&member.name, "ports"),
                    format!(
                        "member `{}`: port {number} for `{service}` is out of range",
                        member.name
                    ),
                    "host ports go from 1 to 65535",
                ));
            };
            ports.insert(service.clone(), port);
        }
        let mut env = Vec::new();
        for (key, value) in &member.env {
            let (key, value) = crate::plan::parse_env(&format!("{key}={}", value.0), |_| None)
                .map_err(|error| {
                    bad(
                        member_location(&member.name, "env"),
                        format!("member `{}`: {}", member.name, error.message),
                        &error.hint,
                    )
                })?;
            env.push((key, value));
        }
        if let Some(workers) = member.workers {
            if workers > MAX_WORKERS {
                return Err(bad(
                    member_location(&member.name, "workers"),
                    format!(
                        "member `{}`: `workers: {workers}` is more than Kubernetes runs in one indexed Job ({MAX_WORKERS})",
                        member.name
                    ),
                    "split the training into several members, or use fewer workers",
                ));
            }
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
        // Sizes, CPUs and mounts are checked here, with their place, so `up` and
        // `compose` refuse a bad member before they ask the engine anything or make a
        // folder.
        let member_error = |field: &str, error: InputError| {
            bad(
                member_location(&member.name, field),
                format!("member `{}`: {}", member.name, error.message),
                &error.hint,
            )
        };
        let memory = member
            .memory
            .as_deref()
            .map(|memory| crate::plan::parse_size(memory, "memory:"))
            .transpose()
            .map_err(|e| member_error("memory", e))?
            .or(default_memory);
        let nano_cpus = member
            .cpus
            .as_deref()
            .map(check_cpus)
            .transpose()
            .map_err(|e| member_error("cpus", e))?
            .or(default_cpus);
        for mount in &member.mounts {
            mounts::parse(mount, &folder, PLACEHOLDER_WORKDIR)
                .map_err(|e| member_error("mounts", e))?;
        }
        let mut mounts = member.mounts.clone();
        if let Some(root) = &file.defaults.mounts_root {
            let mount = format!(
                "{}/{}:{WORKDIR_MARK}/work",
                root.trim_end_matches('/'),
                member.name
            );
            let checked = mount.replace(WORKDIR_MARK, PLACEHOLDER_WORKDIR);
            mounts::parse(&checked, &folder, PLACEHOLDER_WORKDIR).map_err(|error| {
                bad(
                    positions.value("defaults.mounts_root").map(at),
                    format!(
                        "`mounts_root` for member `{}`: {}",
                        member.name, error.message
                    ),
                    &error.hint,
                )
            })?;
            mounts.push(mount);
        }
        members.push(TeamMember {
            name: member.name.clone(),
            spec,
            spec_location,
            gpus,
            shared: member.shared,
            mounts,
            ports,
            env,
            command: member.command.clone(),
            memory,
            nano_cpus,
            shm_size,
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
        assert_eq!(team.members[1].memory, Some(8 * 1024 * 1024 * 1024));
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

    #[test]
    fn every_error_names_the_file() {
        // Found by `just fuzz`: members in flow style had no line to point at, and a
        // repetition-limit error no position, so these errors named no file. The bomb is
        // now found before serde_yaml expands it, on the member's field.
        let error =
            parse_text("team: lab\nmembers:\n  - {name: a, spec: x}\n  - {name: a}\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "`team.yaml`:2:1: member `a` is listed twice"
        );
        let mut levels = vec![String::from("&a0 [x, x, x, x, x, x, x, x, x]")];
        for level in 1..10 {
            let row = vec![format!("*a{}", level - 1); 9].join(", ");
            levels.push(format!("&a{level} [{row}]"));
        }
        let bomb = format!(
            "team: lab\nmembers:\n  - name: a\n    gpus: [{}]\n",
            levels.join(", ")
        );
        let error = parse_text(&bomb).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`team.yaml`:4:5: the anchors and aliases expand to too many values"
        );
        let error =
            parse_text("team: lab\nmembers:\n  - name: alice\n    port\ts: 1\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "`team.yaml`:4:5: members[0]: unknown field `port\\ts`, expected one of `name`, `spec`, `gpus`, `shared`, `mounts`, `ports`, `env`, `command`, `memory`, `cpus`, `workers`"
        );
    }

    #[test]
    fn members_are_checked_at_load_with_their_place() {
        let team = |rest: &str| {
            format!("team: lab\ndefaults:\n  spec: cpu-headless\nmembers:\n  - name: alice\n{rest}")
        };
        let error = |rest: &str| {
            let error = parse_text(&team(rest)).unwrap_err();
            (error.to_string(), error.hint)
        };
        assert_eq!(
            error("    memory: 99999999999999999999g\n"),
            (
                "`team.yaml`:6:5: member `alice`: `memory: 99999999999999999999g` is out of range"
                    .into(),
                "sizes go from 4m to a few hundred g".into()
            )
        );
        assert_eq!(
            error("    cpus: lots\n").0,
            "`team.yaml`:6:5: member `alice`: `cpus: lots` is not a number"
        );
        assert_eq!(
            error("    mounts: [./data, \"./a:relative\"]\n").0,
            "`team.yaml`:6:5: member `alice`: `--mount ./a:relative`: the destination `relative` must be an absolute path inside the container"
        );
        assert_eq!(
            error("    mounts: [\"./a:/usr\"]\n").0,
            "`team.yaml`:6:5: member `alice`: `--mount ./a:/usr`: the destination `/usr` is a system folder of the image"
        );
        assert_eq!(
            error("    ports: {jupyter: 99999999999999999999}\n").0,
            "`team.yaml`:6:5: member `alice`: port 99999999999999999999 for `jupyter` is out of range"
        );
        assert_eq!(
            error("    gpus: -1\n").0,
            "`team.yaml`:6:5: members[0]: expected `gpus` to be `all`, `none`, a count, or a list of GPU indices and UUIDs"
        );
        let defaults = "team: lab\ndefaults:\n  spec: cpu-headless\n  shm_size: huge\nmembers:\n  - name: alice\n";
        let error = parse_text(defaults).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`team.yaml`:4:13: `shm_size: huge` is not a size"
        );
        assert_eq!(
            error.hint,
            "write sizes like `shm_size: 512m` or `shm_size: 8g` (b, k, m, g)"
        );
        let root = "team: lab\ndefaults:\n  spec: cpu-headless\n  mounts_root: \"a:b\"\nmembers:\n  - name: alice\n";
        assert_eq!(
            parse_text(root).unwrap_err().to_string(),
            "`team.yaml`:4:16: `mounts_root` for member `alice`: `--mount a:b/alice:/tf/work`: too many `:` parts"
        );
    }

    #[test]
    fn spec_names_keep_their_place_and_names_are_shortened() {
        let team = parse_text(
            "team: lab\ndefaults:\n  spec: cpu-headless\nmembers:\n  - name: alice\n    spec: gpu-jupyterr\n  - name: bob\n",
        )
        .unwrap();
        let places: Vec<(usize, usize)> = team
            .members
            .iter()
            .map(|member| (member.spec_location.line, member.spec_location.column))
            .collect();
        assert_eq!(places, [(6, 5), (3, 9)]);
        let long = "a".repeat(100);
        let error = parse_text(&format!("team: lab\nmembers:\n  - name: {long}\n")).unwrap_err();
        assert_eq!(
            error.message,
            format!(
                "member name `{}…` is too long (100 characters, at most 40)",
                "a".repeat(64)
            )
        );
    }

    #[test]
    fn names_fit_kubernetes_with_the_longest_suffix_tfimg_adds() {
        let message = |text: &str| parse_text(text).unwrap_err().to_string();
        let team = "t".repeat(90);
        assert_eq!(
            message(&format!("team: {team}\nmembers:\n  - name: a\n")),
            format!(
                "`team.yaml`:1:7: team name `{}…` is too long (90 characters, at most 53)",
                "t".repeat(64)
            )
        );
        assert_eq!(
            message("team: lab-\nmembers:\n  - name: a\n"),
            "`team.yaml`:1:7: team name `lab-` ends with `-`"
        );
        assert_eq!(
            message("team: lab\ndefaults: {spec: x}\nmembers:\n  - name: alice\n  - name: bob-\n"),
            "`team.yaml`:5:5: member name `bob-` ends with `-`"
        );
        // `<team>-<member>-workers` is the longest name: 55 + 8 = 63 fits, 64 does not.
        let team = "t".repeat(30);
        let fits = format!(
            "team: {team}\ndefaults: {{spec: x}}\nmembers:\n  - name: {}\n",
            "m".repeat(24)
        );
        assert_eq!(parse_text(&fits).unwrap().members[0].name.len(), 24);
        let error = parse_text(&format!(
            "team: {team}\nmembers:\n  - name: {}\n",
            "m".repeat(25)
        ))
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "`team.yaml`:3:5: member name `{m}` is too long for team `{team}`: `{team}-{m}` has 56 characters, at most 55",
                m = "m".repeat(25)
            )
        );
        assert!(
            error.hint.contains("at most 63 characters"),
            "{}",
            error.hint
        );
        assert_eq!(
            message("team: lab\ndefaults: {spec: x}\nmembers:\n  - name: a\n    workers: 100001\n    command: [python]\n"),
            "`team.yaml`:5:5: member `a`: `workers: 100001` is more than Kubernetes runs in one indexed Job (100000)"
        );
    }

    #[test]
    fn broken_files_are_named_for_what_they_are() {
        let message = |text: &str| parse_text(text).unwrap_err().to_string();
        for empty in ["", "null\n", "# later\n", "---\n"] {
            assert_eq!(message(empty), "`team.yaml`:1:1: the team file is empty");
        }
        assert_eq!(
            message("team: lab\nteam: lab2\nmembers: [{name: a}]\n"),
            "`team.yaml`:2:1: duplicate field `team`"
        );
        assert_eq!(
            message("team: lab\nmembers: [{name: a, spec: x}]\n---\nteam: b\n"),
            "`team.yaml`:3:1: the file holds more than one YAML document"
        );
        assert_eq!(
            message("team: lab\nmembers:\n\t- name: alice\n"),
            "`team.yaml`:3:1: a tab indents this line; YAML indents with spaces only"
        );
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert_eq!(
            message(&format!(
                "team: lab\nmembers:\n  - name: a\n    gpus: {deep}\n"
            )),
            "`team.yaml`:4:136: the YAML nests too deeply (more than 128 levels)"
        );
        // What comes first in the file is reported first.
        assert_eq!(
            message(&format!(
                "teams: lab\nmembers:\n  - name: a\n    gpus: {deep}\n"
            )),
            "`team.yaml`:1:1: unknown field `teams`, expected one of `team`, `defaults`, `members`"
        );
    }
}
