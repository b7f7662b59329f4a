//! The checks of a team file as written: names that fit container and Kubernetes names,
//! the defaults, each member's values with their place, and clashes between members.
//! Sizes, CPUs and mounts are checked here too, so `up` and `compose` refuse a bad member
//! before they ask the engine anything or make a folder.

use std::collections::BTreeMap;
use std::path::Path;

use crate::input::source::{printable, Location, SpecError};
use crate::input::InputError;
use crate::labels;
use crate::plan::gpus::GpuSelection;
use crate::plan::mounts;

use super::model::{Member, TeamFile};
use super::read::Places;
use super::{TeamMember, WORKDIR_MARK};

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
    crate::plan::parse_cpus(text, "cpus:")
}

/// The team's name, and that it has members.
pub(super) fn team(file: &TeamFile, places: &Places) -> Result<(), SpecError> {
    let team_ok = !file.team.is_empty()
        && file
            .team
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && file.team.starts_with(|c: char| c.is_ascii_lowercase());
    if !team_ok {
        return Err(places.bad(
            places.value("team"),
            format!("team name `{}` is not valid", shortened(&file.team)),
            "use lowercase letters, digits and `-`, starting with a letter (it prefixes container names)",
        ));
    }
    if file.team.ends_with('-') {
        return Err(places.bad(
            places.value("team"),
            format!("team name `{}` ends with `-`", shortened(&file.team)),
            NAME_END_HINT,
        ));
    }
    if file.team.len() > MAX_TEAM_NAME {
        return Err(places.bad(
            places.value("team"),
            format!(
                "team name `{}` is too long ({} characters, at most {MAX_TEAM_NAME})",
                shortened(&file.team),
                file.team.len()
            ),
            "members' Kubernetes names are `<team>-<member>-workers`, at most 63 characters: use a shorter team name",
        ));
    }
    if file.members.is_empty() {
        return Err(places.bad(
            places.key("members"),
            "the team has no members".into(),
            "add members with at least a `name`",
        ));
    }
    Ok(())
}

/// The limits a member takes from `defaults` unless it sets its own.
struct Limits {
    /// Bytes.
    memory: Option<i64>,
    nano_cpus: Option<i64>,
    /// Bytes; every member takes it.
    shm_size: i64,
}

/// Checks members one by one against the team's defaults.
pub(super) struct MemberChecks<'a> {
    file: &'a TeamFile,
    places: &'a Places<'a>,
    /// The folder of the team file: relative mounts start there.
    folder: &'a Path,
    limits: Limits,
}

impl<'a> MemberChecks<'a> {
    /// The checks for the members of `file`, once its defaults are checked.
    pub(super) fn new(
        file: &'a TeamFile,
        places: &'a Places<'a>,
        folder: &'a Path,
    ) -> Result<MemberChecks<'a>, SpecError> {
        let defaults = &file.defaults;
        let defaults_error = |field: &str, error: InputError| {
            places.bad(
                places.value(&format!("defaults.{field}")),
                error.message,
                &error.hint,
            )
        };
        let memory = defaults
            .memory
            .as_deref()
            .map(|memory| crate::plan::parse_size(memory, "memory:"))
            .transpose()
            .map_err(|e| defaults_error("memory", e))?;
        let nano_cpus = defaults
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
        Ok(MemberChecks {
            file,
            places,
            folder,
            limits: Limits {
                memory,
                nano_cpus,
                shm_size,
            },
        })
    }

    /// One member with the defaults applied, checked against the members before it.
    pub(super) fn member(
        &self,
        member: &Member,
        earlier: &[TeamMember],
    ) -> Result<TeamMember, SpecError> {
        self.name(member, earlier)?;
        let (spec, spec_location) = self.spec(member)?;
        let (choices, choices_location) = self.choices(member, &spec, &spec_location)?;
        let gpus = self.gpus(member)?;
        let ports = self.ports(member)?;
        let env = self.env(member)?;
        self.workers(member)?;
        let memory = member
            .memory
            .as_deref()
            .map(|memory| crate::plan::parse_size(memory, "memory:"))
            .transpose()
            .map_err(|e| self.error(member, "memory", e))?
            .or(self.limits.memory);
        let nano_cpus = member
            .cpus
            .as_deref()
            .map(check_cpus)
            .transpose()
            .map_err(|e| self.error(member, "cpus", e))?
            .or(self.limits.nano_cpus);
        let mounts = self.mounts(member)?;
        let model = super::serving::check(member, self.places, self.folder)?;
        // A model server takes hostile request bytes: it always has a limit.
        let memory = match model {
            Some(_) => memory.or(Some(crate::plan::serving::DEFAULT_MEMORY)),
            None => memory,
        };
        Ok(TeamMember {
            name: member.name.clone(),
            spec,
            spec_location,
            choices,
            choices_location,
            gpus,
            shared: member.shared,
            mounts,
            ports,
            env,
            command: member.command.clone(),
            memory,
            nano_cpus,
            shm_size: self.limits.shm_size,
            workers: member.workers,
            model,
        })
    }

    /// A member's value error, at its field, naming the member.
    fn error(&self, member: &Member, field: &str, error: InputError) -> SpecError {
        self.places.bad(
            self.places.member(&member.name, field),
            format!("member `{}`: {}", member.name, error.message),
            &error.hint,
        )
    }

    /// A name fit for container and Kubernetes names, and not taken by an earlier member.
    fn name(&self, member: &Member, earlier: &[TeamMember]) -> Result<(), SpecError> {
        let places = self.places;
        let at_name = || places.member(&member.name, "name");
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
            return Err(places.bad(
                at_name(),
                message,
                "use lowercase letters, digits and `-`, starting with a letter",
            ));
        }
        if member.name.ends_with('-') {
            return Err(places.bad(
                at_name(),
                format!("member name `{}` ends with `-`", member.name),
                NAME_END_HINT,
            ));
        }
        let full_name = format!("{}-{}", self.file.team, member.name);
        if full_name.len() > MAX_FULL_NAME {
            return Err(places.bad(
                at_name(),
                format!(
                    "member name `{}` is too long for team `{}`: `{full_name}` has {} characters, at most {MAX_FULL_NAME}",
                    member.name,
                    self.file.team,
                    full_name.len()
                ),
                "Kubernetes names are `<team>-<member>` and `<team>-<member>-workers`, at most 63 characters: shorten the team or member name",
            ));
        }
        if let Some(first) = earlier.iter().find(|seen| seen.name == member.name) {
            return Err(places.bad(
                at_name(),
                format!("member `{}` is listed twice", first.name),
                "give every member a name of their own",
            ));
        }
        Ok(())
    }

    /// The member's spec (else the default's), and where it is named.
    fn spec(&self, member: &Member) -> Result<(String, Location), SpecError> {
        let places = self.places;
        let spec = member
            .spec
            .clone()
            .or_else(|| self.file.defaults.spec.clone())
            .ok_or_else(|| {
                places.bad(
                    places.member(&member.name, "name"),
                    format!(
                        "member `{}` has no spec and the team has no default",
                        member.name
                    ),
                    "add `spec:` to the member, or `defaults: {spec: cpu-jupyter}`",
                )
            })?;
        let spec_location = match &member.spec {
            Some(_) => places.member(&member.name, "spec"),
            None => places.value("defaults.spec"),
        }
        .or_else(|| places.key("members"))
        .unwrap_or_else(|| places.at((1, 1)));
        Ok((spec, spec_location))
    }

    /// The member's other specs (`choices:`), each once and none her spec, and where they
    /// are written; a member who runs a `command` has no server to choose for.
    fn choices(
        &self,
        member: &Member,
        spec: &str,
        spec_location: &Location,
    ) -> Result<(Vec<String>, Location), SpecError> {
        let places = self.places;
        let location = match member.choices.is_empty() {
            true => spec_location.clone(),
            false => places
                .member(&member.name, "choices")
                .unwrap_or_else(|| spec_location.clone()),
        };
        let bad = |message: String, hint: &str| places.bad(Some(location.clone()), message, hint);
        if !member.choices.is_empty() && !member.command.is_empty() {
            return Err(bad(
                format!("member `{}` runs a `command` and has `choices:`", member.name),
                "`choices` are the specs a member starts her Jupyter server from at the team's hub; remove them, or the `command`",
            ));
        }
        for (index, choice) in member.choices.iter().enumerate() {
            if choice.trim().is_empty() {
                return Err(bad(
                    format!("member `{}`: a choice is empty", member.name),
                    "list spec names under `choices`, such as `[tf218-cpu-jupyter]`",
                ));
            }
            if choice == spec {
                return Err(bad(
                    format!(
                        "member `{}`: `{}` is her `spec` and one of her `choices`",
                        member.name,
                        printable(choice)
                    ),
                    "her `spec` is always offered first: list only the other specs under `choices`",
                ));
            }
            if member.choices[..index].contains(choice) {
                return Err(bad(
                    format!(
                        "member `{}`: choice `{}` is listed twice",
                        member.name,
                        printable(choice)
                    ),
                    "list each spec once under `choices`",
                ));
            }
        }
        Ok((member.choices.clone(), location))
    }

    fn gpus(&self, member: &Member) -> Result<GpuSelection, SpecError> {
        match &member.gpus {
            None => Ok(GpuSelection::None),
            Some(value) => GpuSelection::parse(&value.text())
                .map_err(|error| self.error(member, "gpus", error)),
        }
    }

    /// Fixed host ports by service name.
    fn ports(&self, member: &Member) -> Result<BTreeMap<String, u16>, SpecError> {
        let mut ports = BTreeMap::new();
        for (service, number) in &member.ports {
            let Some(port) = number.port() else {
                return Err(self.places.bad(
                    self.places.member(&member.name, "ports"),
                    format!(
                        "member `{}`: port {number} for `{service}` is out of range",
                        member.name
                    ),
                    "host ports go from 1 to 65535",
                ));
            };
            ports.insert(service.clone(), port);
        }
        Ok(ports)
    }

    fn env(&self, member: &Member) -> Result<Vec<(String, String)>, SpecError> {
        let mut env = Vec::new();
        for (key, value) in &member.env {
            if key.starts_with(labels::VARIABLE_PREFIX) {
                return Err(self.places.bad(
                    self.places.member(&member.name, key),
                    printable(&format!(
                        "member `{}`: `{key}`: `TFIMG_*` variables are set by tfimg",
                        member.name
                    ))
                    .into_owned(),
                    "use another name; a serving member caps merged rows with `max_batch:`",
                ));
            }
            let (key, value) = crate::plan::parse_env(&format!("{key}={}", value.0), |_| None)
                .map_err(|error| self.error(member, "env", error))?;
            env.push((key, value));
        }
        Ok(env)
    }

    /// Multi-worker training: a command on 2 or more workers, at most what one indexed
    /// Job runs.
    fn workers(&self, member: &Member) -> Result<(), SpecError> {
        let Some(workers) = member.workers else {
            return Ok(());
        };
        if workers > MAX_WORKERS {
            return Err(self.places.bad(
                self.places.member(&member.name, "workers"),
                format!(
                    "member `{}`: `workers: {workers}` is more than Kubernetes runs in one indexed Job ({MAX_WORKERS})",
                    member.name
                ),
                "split the training into several members, or use fewer workers",
            ));
        }
        if workers < 2 || member.command.is_empty() {
            return Err(self.places.bad(
                self.places.member(&member.name, "workers"),
                format!(
                    "member `{}`: `workers: {workers}` needs 2 or more workers and a `command`",
                    member.name
                ),
                "multi-worker training runs a command (`python train.py`) on 2 or more workers",
            ));
        }
        Ok(())
    }

    /// The member's mounts, then its folder under `mounts_root` (at the workdir mark).
    fn mounts(&self, member: &Member) -> Result<Vec<String>, SpecError> {
        for mount in &member.mounts {
            mounts::parse(mount, self.folder, PLACEHOLDER_WORKDIR)
                .map_err(|e| self.error(member, "mounts", e))?;
        }
        let mut mounts = member.mounts.clone();
        if let Some(root) = &self.file.defaults.mounts_root {
            let mount = format!(
                "{}/{}:{WORKDIR_MARK}/work",
                root.trim_end_matches('/'),
                member.name
            );
            let checked = mount.replace(WORKDIR_MARK, PLACEHOLDER_WORKDIR);
            mounts::parse(&checked, self.folder, PLACEHOLDER_WORKDIR).map_err(|error| {
                self.places.bad(
                    self.places.value("defaults.mounts_root"),
                    format!(
                        "`mounts_root` for member `{}`: {}",
                        member.name, error.message
                    ),
                    &error.hint,
                )
            })?;
            mounts.push(mount);
        }
        Ok(mounts)
    }
}

/// Clashes: the same GPU pinned by two members (unless both share), one host port twice.
pub(super) fn clashes(members: &[TeamMember], places: &Places) -> Result<(), SpecError> {
    for (index, member) in members.iter().enumerate() {
        for earlier in &members[..index] {
            if let (GpuSelection::Devices(mine), GpuSelection::Devices(theirs)) =
                (&member.gpus, &earlier.gpus)
            {
                if let Some(gpu) = mine.iter().find(|gpu| theirs.contains(gpu)) {
                    if !(member.shared && earlier.shared) {
                        return Err(places.bad(
                            places.member(&member.name, "gpus"),
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
                    return Err(places.bad(
                        places.member(&member.name, "ports"),
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
    Ok(())
}
