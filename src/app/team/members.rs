//! A team member's launch, from its entry in the team file: the request the one launcher
//! takes (for `up` and for the exports' plans), its mounts checked against the engine's
//! host, and the hash that decides whether a running member is still right.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::{serving, MemberPlans};
use crate::app::gateway;
use crate::app::launch::{self, LaunchRequest, SshSource, TunnelMode};
use crate::app::run::target_of_spec;
use crate::host::prelude::{Files, Identity, Trust};
use crate::host::Host;
use crate::input::InputError;
use crate::labels;
use crate::notice::Notice;
use crate::plan;
use crate::plan::mounts::{self, MountPlan, MountRequest};
use crate::plan::ports::PortRequest;
use crate::render::dockerfile::IMAGE_UID;
use crate::spec::ResolvedSpec;
use crate::team::{self, Team, TeamMember};

/// A member's launch: its spec's image, its own ports, mounts, resources, GPUs (always
/// explicit for teams), key and labels; services come back after a reboot, a batch job
/// runs once.
pub fn member_request(
    team: &Team,
    member: &TeamMember,
    resolved: &ResolvedSpec,
    images: &BTreeMap<String, String>,
    ids: (u32, u32),
) -> Result<LaunchRequest, InputError> {
    let image = &images[&member.spec];
    let port_requests = member
        .ports
        .iter()
        .map(|(service, host)| {
            let container = resolved.ports.get(service).copied().ok_or_else(|| {
                InputError::new(
                    format!(
                        "member `{}`: `{}` has no `{service}` port",
                        member.name, resolved.name
                    ),
                    format!(
                        "its ports are: {}",
                        resolved
                            .ports
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
            Ok(PortRequest {
                host: Some(*host),
                container,
            })
        })
        .collect::<Result<_, InputError>>()?;
    let command_given = !member.command.is_empty();
    let mut request = LaunchRequest {
        command: member.command.clone(),
        env: member.env.clone(),
        mounts: member_mounts(team, member, resolved)?,
        port_requests,
        gpus: Some(member.gpus.clone()),
        idle_kernels: team.idle_kernels,
        idle_containers: team.idle_containers,
        share_gpus: member.shared,
        ssh: SshSource::Member {
            team: team.name.clone(),
            member: member.name.clone(),
        },
        resources: plan::Resources {
            memory: member.memory,
            nano_cpus: member.nano_cpus,
            shm_size: member.shm_size,
            restart: (!command_given).then_some(plan::RestartPolicy::UnlessStopped),
        },
        extra_labels: BTreeMap::from([
            (labels::TEAM.to_string(), team.name.clone()),
            (labels::MEMBER.to_string(), member.name.clone()),
            (
                labels::MEMBER_HASH.to_string(),
                member_hash(team, member, image),
            ),
        ]),
        tunnel: TunnelMode::Detached,
        // No network yet: `up` puts the member on its team network (`gateway::place_member`).
        ..LaunchRequest::new(
            target_of_spec(resolved, image.clone()),
            format!("{}-{}", team.name, member.name),
            Some(ids),
        )
    };
    serving::add_model(member, &mut request);
    Ok(request)
}

/// The members' mounts are folders of this machine: an engine on another host (`remote`,
/// its URL) refuses the first one.
pub fn check_mounts_are_local(team: &Team, remote: Option<&str>) -> Result<(), InputError> {
    let Some(endpoint) = remote else {
        return Ok(());
    };
    let first = team.members.iter().find_map(|member| {
        let text = member.mounts.first()?;
        // The folder of this machine (a `mounts_root` mount's target is not known yet).
        Some((member, text.split(':').next().unwrap_or(text).to_string()))
    });
    if let Some((member, model)) = team
        .members
        .iter()
        .find_map(|member| Some((member, member.model.as_ref()?)))
    {
        return Err(InputError::new(
            format!(
                "member `{}`: the model folder `{}` is on this machine, and the engine runs on `{endpoint}`",
                member.name, model.text
            ),
            "run `tfimg up` on that host itself, or serve the model with `tfimg serve` (which copies the folder in on a remote engine)",
        ));
    }
    let folders =
        first.map(|(member, text)| format!("member `{}`: the mount `{text}`", member.name));
    launch::refuse_local_folders(remote, folders)
}

/// The members' folders, checked before anything is built or created, at three
/// boundaries:
/// - **member → member** (and other host users → a member): each member's folder under
///   `mounts_root` must be a real folder. A link there, planted by whoever can write the
///   shared root, would bind-mount its target (another member's folder, a system folder)
///   into the member's container: refused at its path. tfimg makes a missing one itself,
///   through a handle of the root (`host::confined`), so no link can be slipped in as it
///   is made.
/// - **another local account → tfimg** (`host::trusted`): `mounts_root` and each member's
///   folder in it belong to the user running tfimg, root or the account the members run
///   as, and no other account can write them (nor a folder above them), or another
///   account could have planted the folder or swap a member's files.
/// - **member files → host**: members run as one host uid (the admin's), and anything a
///   member can write it can mark setuid or setgid (no capability is needed for one's own
///   file, and a bind mount cannot be made `nosuid` through the Engine), so the bits are
///   made useless instead: every writable folder a member mounts lies below a folder no
///   other account can enter (`host::trusted::closed_folders`) and no member can change
///   (it is not inside any member's writable mount). A missing `mounts_root` is made so
///   (0700, `make_mounts_root`); an open one is refused with the `chmod` that closes it.
pub fn check_member_folders(
    host: &(impl Trust + Files + Identity),
    team: &Team,
) -> Result<(), InputError> {
    let members_uid = host.container_ids().0;
    let writable = writable_mounts(team);
    let writable_real: Vec<PathBuf> = writable
        .iter()
        .map(|(_, mount, _)| {
            host.closed_folders(&mount.source)
                .map_or_else(|_| mount.source.clone(), |(real, _)| real)
        })
        .collect();
    for (member, mount, in_root) in &writable {
        let path = &mount.source;
        if *in_root && host.is_link(path) {
            return Err(InputError::new(
                format!(
                    "member `{}`: its folder `{}` under `mounts_root` is a link: it would mount what the link points at",
                    member.name,
                    path.display()
                ),
                format!(
                    "remove the link (`rm {}`) and let tfimg make the folder, or mount the folder it points at with the member's `mounts:`",
                    path.display()
                ),
            ));
        }
        // The folder itself when it is there, else the nearest one above it that is.
        let Some(existing) = path.ancestors().find(|folder| host.exists(folder)) else {
            continue;
        };
        if *in_root {
            let what = format!("member `{}`'s folder", member.name);
            // As plain root members take root's ids, but an SSH member keeps the image's
            // user (`plan::user::for_service`), whose folder tfimg made for it.
            host.trusted_folder(existing, None, Some(members_uid))
                .or_else(|error| match members_uid {
                    0 => host
                        .trusted_folder(existing, None, Some(IMAGE_UID))
                        .map_err(|_| error),
                    _ => Err(error),
                })
                .map_err(|error| crate::host::trusted::explained(error, &what, existing))?;
        }
        let root = path.parent().unwrap_or(path);
        if *in_root && !host.exists(root) {
            continue; // made closed by `make_mounts_root`
        }
        let (_, closed) = host.closed_folders(existing).map_err(|error| {
            InputError::new(
                format!(
                    "member `{}`: cannot read `{}`: {error}",
                    member.name,
                    existing.display()
                ),
                "check the folder's permissions",
            )
        })?;
        let shut = closed.iter().any(|folder| {
            folder != path
                && !writable_real
                    .iter()
                    .any(|mounted| folder.starts_with(mounted))
        });
        if !shut {
            // The folder above the mount: the member's container can change the mount itself.
            let open = match (*in_root, existing == path.as_path()) {
                (true, _) => root,
                (false, true) => path.parent().unwrap_or(path),
                (false, false) => existing,
            };
            return Err(InputError::new(
                format!(
                    "member `{}`: other accounts on this machine can reach its folder `{}`, where a program the member marks setuid would run as uid {members_uid} for any of them",
                    member.name,
                    path.display()
                ),
                format!(
                    "make a folder on its way private: `chmod 700 {}` (the members' containers still reach their folders; only you and root can enter it)",
                    open.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Makes a missing `mounts_root` closed to other accounts (0700): members' files below it
/// are out of their reach (`check_member_folders`).
pub fn make_mounts_root(host: &(impl Files + Trust), team: &Team) -> Result<(), InputError> {
    for (member, mount, in_root) in writable_mounts(team) {
        let Some(root) = mount.source.parent().filter(|_| in_root) else {
            continue;
        };
        if host.exists(root) {
            continue;
        }
        let what = format!("the team's `mounts_root` (for member `{}`)", member.name);
        host.trusted_folder(root, Some(0o700), None)
            .map_err(|error| crate::host::trusted::explained(error, &what, root))?;
    }
    Ok(())
}

/// Each member's writable mounts, their sources resolved; `true` for its folder under
/// `mounts_root` (at the workdir mark).
fn writable_mounts(team: &Team) -> Vec<(&TeamMember, MountPlan, bool)> {
    let mut found = Vec::new();
    for member in &team.members {
        for text in &member.mounts {
            let in_root = text.contains(team::WORKDIR_MARK);
            // Its source is all that matters here: the workdir it lands in is any one.
            let Ok(mount) = mounts::parse(
                &text.replace(team::WORKDIR_MARK, "/tf"),
                &team.folder,
                "/tf",
            ) else {
                continue;
            };
            if !mount.read_only {
                found.push((member, mount, in_root));
            }
        }
    }
    found
}

/// A member's mounts (and the text each came from), with the spec's workdir in place.
fn member_mounts(
    team: &Team,
    member: &TeamMember,
    resolved: &ResolvedSpec,
) -> Result<Vec<MountRequest>, InputError> {
    member
        .mounts
        .iter()
        .map(|text| {
            let text = text.replace(team::WORKDIR_MARK, &resolved.workdir);
            let mount = mounts::parse(&text, &team.folder, &resolved.workdir)
                .and_then(|mount| {
                    mounts::check_not_above(&mount, &text, &resolved.home(), &resolved.workdir)?;
                    Ok(mount)
                })
                .map_err(|error| member_error(member, error))?;
            Ok(MountRequest {
                text,
                source: mount.source,
                target: Some(mount.target),
                read_only: mount.read_only,
            })
        })
        .collect()
}

fn member_error(member: &TeamMember, error: InputError) -> InputError {
    InputError::new(
        format!(
            "member `{}`: {}",
            member.name,
            in_file_terms(&error.message)
        ),
        in_file_terms(&error.hint),
    )
}

/// The launcher's words for `run`'s flags, as the team file's keys: a member asking for
/// one GPU in the file is not told to pass `--gpus 1`, a flag `up` does not have.
pub(super) fn in_file_terms(text: &str) -> String {
    const WORDS: [(&str, &str); 9] = [
        (
            "share them with `--share-gpus` (a team member: `shared: true`; ",
            "share them with the member's `shared: true` (",
        ),
        ("`--share-gpus`", "the member's `shared: true`"),
        ("drop `--gpus`", "set the member's `gpus: none`"),
        ("`--gpus`", "the member's `gpus:`"),
        ("`--gpus ", "`gpus: "),
        ("`--mount`", "the member's `mounts:`"),
        ("`--mount ", "`mounts: "),
        ("leave `-p` out", "remove it from the member's `ports:`"),
        ("`--memory ", "`memory: "),
    ];
    let mut text = WORDS.iter().fold(text.to_string(), |text, (flag, key)| {
        text.replace(flag, key)
    });
    // `-p OTHER:8888`, `-p HOST:CONTAINER`, `-p HOST:6006`: the member's `ports:`.
    while let Some(start) = text.find("`-p ") {
        let Some(length) = text[start + 1..].find('`') else {
            break;
        };
        text.replace_range(start..start + length + 2, "the member's `ports:`");
    }
    text.replace("with the member's `ports:`", "in the member's `ports:`")
}

/// An error about one member says which (input errors keep their exit code).
pub(super) fn prefixed(member: &TeamMember, error: anyhow::Error) -> anyhow::Error {
    match error.downcast::<InputError>() {
        Ok(input) => member_error(member, input).into(),
        Err(other) => other.context(format!("member `{}`", member.name)),
    }
}

/// The members' plans for an export (Compose, Kubernetes): the same requests `up` makes,
/// planned without a daemon (GPUs as device requests, as a cluster's device plugin takes
/// them), then their missing mount folders made; with what to tell the user. With
/// `behind_gateway` (Compose) the members sit behind the team's gateway as `up` puts them.
pub fn export_plans(
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    images: &BTreeMap<String, String>,
    ids: (u32, u32),
    behind_gateway: bool,
) -> anyhow::Result<(MemberPlans, Vec<Notice>)> {
    check_member_folders(host, team)?;
    let requests = team
        .members
        .iter()
        .map(|member| {
            let mut request = member_request(team, member, &specs[&member.spec], images, ids)?;
            if behind_gateway {
                gateway::place_member(team, member, &mut request);
            }
            Ok(request)
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    let reserved = RefCell::new(BTreeSet::new());
    let mut plans = Vec::new();
    for (member, request) in team.members.iter().zip(&requests) {
        let plan = launch::plan_without_engine(host, request.clone(), &reserved)
            .map_err(|error| prefixed(member, error))?;
        plans.push((member.name.clone(), plan));
    }
    // Every member planned first: a bad one leaves no folder behind.
    make_mounts_root(host, team)?;
    let mut notes = Vec::new();
    for request in &requests {
        notes.extend(launch::make_folders(host, request)?);
    }
    Ok((plans, notes))
}

/// What decides whether a running member is still right: its settings, image and place
/// behind the team's gateway.
pub fn member_hash(team: &Team, member: &TeamMember, image: &str) -> String {
    let mut text = format!(
        "{}|{image}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{}",
        member.spec,
        member.gpus.describe(),
        member.mounts,
        member.ports,
        member.env,
        member.command,
        member.memory,
        member.nano_cpus,
        member.shm_size,
        member.shared
    );
    let network = crate::plan::network::member_network(&team.name, &member.name);
    match &team.gateway {
        Some(gateway) => text.push_str(&format!(
            "|{}|{network}",
            gateway.url(&member.name, "jupyter")
        )),
        // A member of a team without a gateway that still runs on Docker's default
        // bridge (beside the other members) is moved onto its own network.
        None => text.push_str(&format!("|network:{network}")),
    }
    if let Some(seconds) = team.idle_kernels {
        text.push_str(&format!("|idle-kernels:{seconds}"));
    }
    if let Some(seconds) = team.idle_containers {
        text.push_str(&format!("|idle-containers:{seconds}"));
    }
    if let Some(model) = &member.model {
        text.push_str(&format!("|model:{}:{}", model.folder.display(), model.name));
        for each in model.config.iter().flatten() {
            text.push_str(&format!("|{}:{}", each.name, each.folder.display()));
        }
        if let Some(rows) = model.max_batch {
            text.push_str(&format!("|max_batch:{rows}"));
        }
        if let Some(batching) = &model.batching {
            text.push_str(&format!("|batching:{}", batching.env_value()));
        }
    }
    crate::plan::image::hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}
