//! A team brought to what its file says. `up`: members gone from the file are removed,
//! unchanged ones (same settings, same image, still running) are left alone, new and
//! changed ones go through the one launcher (every member checked before any is
//! created), start at once and are waited for; an interrupt keeps only the members that
//! were fully up. The exports' plans come from the same members, without a daemon.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use futures_util::future::join_all;
use sha2::{Digest, Sha256};

use crate::app::gateway::{self, GatewayAction};
use crate::app::launch::{self, LaunchRequest, Prepared, SshSource, TunnelMode};
use crate::app::ready;
use crate::app::run::target_of_spec;
use crate::app::Interrupted;
use crate::engine::{ContainerFacts, Engine};
use crate::host::Host;
use crate::input::InputError;
use crate::labels;
use crate::plan::gpus::GpuMode;
use crate::plan::mounts::{self, MountPlan};
use crate::plan::ports::PortRequest;
use crate::plan::{self, sync, LaunchPlan};
use crate::spec::ResolvedSpec;
use crate::team::{self, Team, TeamMember};

/// Each member's name and launch plan, in the file's order.
pub type MemberPlans = Vec<(String, LaunchPlan)>;

/// What `up` did to one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Unchanged,
    Created,
    Recreated,
}

/// The outcome of an `up` that ran to the end.
#[derive(Debug, Default)]
pub struct UpReport {
    pub actions: BTreeMap<String, Action>,
    /// Members no longer in the file, removed.
    pub removed: Vec<String>,
    /// Members created or recreated and started.
    pub started: Vec<String>,
    /// Members that did not come up, and why.
    pub failures: Vec<(String, anyhow::Error)>,
    /// With `--rollback`, the failures made this `up` remove what it started.
    pub rolled_back: usize,
    /// What happened to the team's gateway, when it has (or had) one.
    pub gateway: Option<GatewayAction>,
}

/// The images `up` starts containers of.
#[derive(Debug, Clone, Default)]
pub struct TeamImages {
    /// Each spec's image, by spec name.
    pub specs: BTreeMap<String, String>,
    /// The gateway's image, when the team has a gateway.
    pub gateway: Option<String>,
}

/// Brings `team` up: `images` holds each spec's image (and the gateway's), `ids` the user
/// the members run as.
pub async fn up(
    engine: &impl Engine,
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    images: &TeamImages,
    ids: (u32, u32),
    rollback: bool,
) -> anyhow::Result<UpReport> {
    let existing = engine
        .containers_with_label(&labels::team_filter(&team.name))
        .await?;
    let mut report = UpReport {
        removed: remove_dropped(engine, team, &existing).await?,
        ..UpReport::default()
    };
    // Host ports the unchanged members keep: new members must not take them.
    let reserved = RefCell::new(BTreeSet::new());
    let by_member: HashMap<String, &ContainerFacts> = existing
        .iter()
        .filter_map(|container| Some((container.labels.get(labels::MEMBER)?.clone(), container)))
        .collect();
    for member in &team.members {
        let hash = member_hash(team, member, &images.specs[&member.spec]);
        let action = match by_member.get(&member.name) {
            Some(container) if keeps(engine, member, container, &hash).await => {
                reserved.borrow_mut().extend(ports_of(container));
                Action::Unchanged
            }
            Some(container) => {
                engine.remove_container(&container.id, true).await?;
                Action::Recreated
            }
            None => Action::Created,
        };
        report.actions.insert(member.name.clone(), action);
    }
    // Every member is checked (mounts, GPUs, ports, keys) before any is created; the
    // engine's host is asked about its GPUs once, for the first member that has some.
    let mut prepared: Vec<launch::Prepared> = Vec::new();
    gateway::prepare_network(engine, team).await?;
    for member in &team.members {
        if report.actions[&member.name] == Action::Unchanged {
            continue;
        }
        let mut request = member_request(team, member, &specs[&member.spec], &images.specs, ids)?;
        gateway::place_member(team, member, &mut request);
        request.nvidia = prepared.iter().find_map(|earlier| earlier.nvidia.clone());
        let member_error = |error: anyhow::Error| prefixed(member, error);
        prepared.push(
            launch::prepare(engine, host, request)
                .await
                .map_err(member_error)?,
        );
    }
    start_all(engine, host, prepared, &reserved, rollback, &mut report).await?;
    let changed = !report.started.is_empty() || !report.removed.is_empty();
    report.gateway = gateway::reconcile(
        engine,
        host,
        team,
        specs,
        images.gateway.as_deref(),
        changed,
    )
    .await?;
    Ok(report)
}

/// Removes the containers of members no longer in the file (first, so their ports are
/// free again); their names.
async fn remove_dropped(
    engine: &impl Engine,
    team: &Team,
    existing: &[ContainerFacts],
) -> anyhow::Result<Vec<String>> {
    let wanted: BTreeSet<&str> = team
        .members
        .iter()
        .map(|member| member.name.as_str())
        .collect();
    let mut removed = Vec::new();
    // The gateway is no member: `gateway::reconcile` keeps or removes it.
    for container in existing
        .iter()
        .filter(|container| !container.labels.contains_key(labels::GATEWAY))
    {
        let member = container
            .labels
            .get(labels::MEMBER)
            .cloned()
            .unwrap_or_default();
        if !wanted.contains(member.as_str()) {
            engine.remove_container(&container.id, true).await?;
            removed.push(member);
        }
    }
    Ok(removed)
}

/// Whether a member's container stays as it is: the same settings and image, and running
/// (or, for a batch job, finished well: it is done, not broken, and is not rerun).
async fn keeps(
    engine: &impl Engine,
    member: &TeamMember,
    container: &ContainerFacts,
    hash: &str,
) -> bool {
    if container
        .labels
        .get(labels::MEMBER_HASH)
        .map(String::as_str)
        != Some(hash)
    {
        return false;
    }
    if container.state == "running" {
        return true;
    }
    !member.command.is_empty()
        && container.state == "exited"
        && matches!(engine.container(&container.id).await, Ok(Some(facts)) if facts.exit_code == Some(0))
}

/// Starts every prepared member at once and waits for each one's service; one failing
/// does not stop the others. An interrupt keeps only the members fully up (none with
/// `rollback`); a member that could not even be created undoes the whole `up`.
async fn start_all(
    engine: &impl Engine,
    host: &impl Host,
    prepared: Vec<Prepared>,
    reserved: &RefCell<BTreeSet<u16>>,
    rollback: bool,
    report: &mut UpReport,
) -> anyhow::Result<()> {
    // What this `up` created and which of those are fully up, kept outside the work so
    // an interrupt can leave exactly the members that are ready.
    let created: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let ready: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let work = join_all(prepared.into_iter().map(|prepared| {
        let (created, ready) = (&created, &ready);
        async move {
            let member = member_of(&prepared);
            let launched = launch::start(engine, host, prepared, reserved, false, |id| {
                lock(created).push((member.clone(), id.to_string()));
            })
            .await;
            let exists = lock(created).iter().any(|(name, _)| *name == member);
            let outcome = match launched {
                Ok(launched) if launched.plan.endpoints.is_empty() => Ok(()),
                Ok(launched) => {
                    let known_hosts = launched.known_hosts.as_deref();
                    ready::wait_until_ready(engine, host, &launched.id, &launched.plan, known_hosts)
                        .await
                }
                Err(error) => Err(error),
            };
            if outcome.is_ok() {
                lock(ready).insert(member.clone());
            }
            (member, exists, outcome)
        }
    }));
    let outcome = tokio::select! {
        outcome = work => Some(outcome),
        _ = host.interrupted() => None,
    };
    let created = std::mem::take(&mut *lock(&created));
    let Some(outcome) = outcome else {
        let ready = std::mem::take(&mut *lock(&ready));
        return Err(interrupted_up(engine, &created, &ready, rollback).await);
    };
    for (member, exists, result) in outcome {
        match result {
            Ok(()) => report.started.push(member),
            // Not even created: a name in use, the daemon failing. Nothing of this `up`
            // stays, as when it stopped before creating anything.
            Err(error) if !exists => {
                for (_, id) in &created {
                    let _ = engine.remove_container(id, true).await;
                }
                return Err(error);
            }
            Err(error) => report.failures.push((member, error)),
        }
    }
    if !report.failures.is_empty() && rollback {
        for (_, id) in &created {
            let _ = engine.remove_container(id, true).await;
        }
        report.rolled_back = created.len();
    }
    Ok(())
}

fn member_of(prepared: &Prepared) -> String {
    prepared
        .request
        .extra_labels
        .get(labels::MEMBER)
        .cloned()
        .unwrap_or_default()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// After an interrupt: the members that were fully up stay (and are named), the ones
/// created but not yet ready are removed; with `rollback` every member this `up` created
/// goes.
async fn interrupted_up(
    engine: &impl Engine,
    created: &[(String, String)],
    ready: &BTreeSet<String>,
    rollback: bool,
) -> anyhow::Error {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for (member, id) in created {
        if ready.contains(member) && !rollback {
            kept.push(member.as_str());
        } else {
            let _ = engine.remove_container(id, true).await;
            removed.push(member.as_str());
        }
    }
    // Members are created at once, in whichever order the daemon answers: name them sorted.
    kept.sort_unstable();
    removed.sort_unstable();
    let list = |names: &[&str]| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    Interrupted {
        what: format!(
            "`up` stopped; kept the member(s) that were fully up: {}; removed the ones it had not finished starting{}: {}",
            list(&kept),
            if rollback { " or had started (--rollback)" } else { "" },
            list(&removed)
        ),
    }
    .into()
}

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
        target: target_of_spec(resolved, image.clone()),
        name: format!("{}-{}", team.name, member.name),
        command: member.command.clone(),
        env: member.env.clone(),
        mounts: member_mounts(team, member, resolved)?,
        make_mount_parents: true,
        syncs: Vec::new(),
        make_sync_parents: false,
        volumes: Vec::new(),
        port_requests,
        public: false,
        gpus: Some(member.gpus.clone()),
        gpu_mode: GpuMode::Auto,
        ids: Some(ids),
        ssh: SshSource::Member {
            team: team.name.clone(),
            member: member.name.clone(),
        },
        memory: member.memory,
        nano_cpus: member.nano_cpus,
        shm_size: member.shm_size,
        restart: (!command_given).then_some(plan::RestartPolicy::UnlessStopped),
        extra_labels: BTreeMap::from([
            (labels::TEAM.to_string(), team.name.clone()),
            (labels::MEMBER.to_string(), member.name.clone()),
            (
                labels::MEMBER_HASH.to_string(),
                member_hash(team, member, image),
            ),
        ]),
        tunnel: TunnelMode::Detached,
        nvidia: None,
        // `up` puts the member on its team network (`gateway::place_member`).
        network: None,
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
    match first {
        Some((member, text)) => Err(sync::member_mount_on_remote(&member.name, &text, endpoint)),
        None => Ok(()),
    }
}

/// A member's mounts (and the text each came from), with the spec's workdir in place.
fn member_mounts(
    team: &Team,
    member: &TeamMember,
    resolved: &ResolvedSpec,
) -> Result<Vec<(MountPlan, String)>, InputError> {
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
            Ok((mount, text))
        })
        .collect()
}

fn member_error(member: &TeamMember, error: InputError) -> InputError {
    InputError::new(
        format!("member `{}`: {}", member.name, error.message),
        error.hint,
    )
}

/// An error about one member says which (input errors keep their exit code).
fn prefixed(member: &TeamMember, error: anyhow::Error) -> anyhow::Error {
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
) -> anyhow::Result<(MemberPlans, Vec<String>)> {
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
    // Without a gateway or a model the text is what it always was: no member is
    // recreated for them.
    if let Some(gateway) = &team.gateway {
        text.push_str(&format!("|{}", gateway.url(&member.name, "jupyter")));
    }
    if let Some(model) = &member.model {
        text.push_str(&format!("|model:{}:{}", model.folder.display(), model.name));
    }
    crate::plan::image::hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}

/// The host ports a member's container holds (from its ports label).
fn ports_of(container: &ContainerFacts) -> Vec<u16> {
    container
        .labels
        .get(labels::PORTS)
        .map(|ports| {
            labels::decode_ports(ports)
                .into_iter()
                .map(|port| port.host)
                .collect()
        })
        .unwrap_or_default()
}

mod serving;
pub use serving::check_models;

#[cfg(test)]
mod tests;
