//! A team brought to what its file says. `up`: the host ports the file names (the
//! gateway's, members' `ports:`) are checked first, then members gone from the file are
//! removed, unchanged ones (same settings, same image, still running) are left alone, new
//! and changed ones go through the one launcher (every member checked before any
//! container or network is created), start at once and are waited for; an interrupt
//! keeps only the members that were fully up. A failure after the first create rolls back
//! what this `up` made when nothing of the team existed before (or with `--rollback`).
//! The exports' plans come from the same members, without a daemon.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use futures_util::future::join_all;

use crate::app::gateway::{self, GatewayAction};
use crate::app::hub::{self, HubAction};
use crate::app::launch::{self, Prepared};
use crate::app::ready;
use crate::app::session::Session;
use crate::app::Interrupted;
use crate::engine::prelude::{ContainerIo, Containers, Daemon, Images, Networks, Tunnels};
use crate::engine::ContainerFacts;
use crate::host::Host;
use crate::labels;
use crate::notice::Notice;
use crate::plan::LaunchPlan;
use crate::spec::ResolvedSpec;
use crate::team::{Team, TeamMember};

/// Each member's name and launch plan, in the file's order.
pub type MemberPlans = Vec<(String, LaunchPlan)>;

/// What `up` did to one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Unchanged,
    Created,
    Recreated,
    /// Stopped by its idle watch, started again (created anew from the same settings, so
    /// its GPUs are chosen again; its mounted data is where it was).
    Woken,
    /// Started from the team's hub when she signs in (her server, if running, is left as
    /// it is; a restart from the hub's home page takes the file's new settings).
    Hub,
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
    /// Rolling back (the default for a team that did not exist, or `--rollback`), the
    /// failures made this `up` remove what it started.
    pub rolled_back: usize,
    /// Whether this `up` rolls back on a failure (what `rollback` asked, else whether
    /// nothing of the team existed before).
    pub rollback: bool,
    /// What happened to the team's gateway, when it has (or had) one.
    pub gateway: Option<GatewayAction>,
    /// What happened to the team's hub, when it has (or had) one.
    pub hub: Option<HubAction>,
    /// What the launcher said of each member (a folder it created, a GPU choice), each
    /// naming its member.
    pub notes: Vec<Notice>,
}

impl UpReport {
    /// Whether this `up` changed anything: a member started or removed, the hub made or
    /// started again.
    pub fn changed(&self) -> bool {
        !self.started.is_empty()
            || !self.removed.is_empty()
            || matches!(self.hub, Some(HubAction::Created | HubAction::Restarted))
    }

    /// What `up` says changed before its table: `no change: ...`, or each member removed.
    pub fn changes(&self, team: &Team) -> Vec<String> {
        if !self.changed() {
            let members = team.members.len();
            return vec![format!(
                "no change: the {members} member(s) of `{}` are up to date",
                team.name
            )];
        }
        self.removed
            .iter()
            .map(|member| format!("removed `{member}` (no longer in the team file)"))
            .collect()
    }

    /// What `up` says of the team's front door: `gateway: ADDRESS (created)`, `hub: LOGIN
    /// (created)` and, for a new hub, how members get in.
    pub fn front_door(&self, team: &Team) -> Vec<String> {
        let mut lines = Vec::new();
        if let (Some(gateway), Some(action)) = (&team.gateway, self.gateway) {
            lines.push(format!("gateway: {} ({action})", gateway.address()));
        }
        if let (Some(hub), Some(action)) = (&team.hub, self.hub) {
            lines.push(format!("hub: {} ({action})", hub.login_url()));
            if action == HubAction::Created {
                lines.push(format!("hint: members sign in there; give each one a first password with `tfimg hub passwd {} MEMBER` (she changes it at /hub/change-password)", team.file));
            }
        }
        lines
    }
}

/// A launcher's note about `member`: `note: `alice`: created ./work/alice (empty)`.
fn member_note(member: &str, note: &Notice) -> Notice {
    let text = format!("`{member}`: {}", members::in_file_terms(note.text()));
    match note {
        Notice::Status(_) => Notice::Status(text),
        Notice::Note(_) => Notice::Note(text),
        Notice::Warning(_) => Notice::Warning(text),
    }
}

/// The images `up` starts containers of.
#[derive(Debug, Clone, Default)]
pub struct TeamImages {
    /// Each spec's image, by spec name.
    pub specs: BTreeMap<String, String>,
    /// The gateway's image, when the team has a gateway.
    pub gateway: Option<String>,
    /// The hub's image, when the team has a hub.
    pub hub: Option<String>,
    /// Each hub member's server image (her spec's, with the hub's single-user server), by
    /// spec name.
    pub hub_members: BTreeMap<String, String>,
}

/// Brings `team` up: `images` holds each spec's image (and the gateway's), `ids` the user
/// the members run as. `rollback`: whether a failure after the first create removes what
/// this `up` made; `None` rolls back where nothing of the team existed before (members
/// that already ran were replaced or kept, and an `up` that fixes one member should not
/// take the others down).
pub async fn up(
    session: Session<
        '_,
        impl Containers + ContainerIo + Tunnels + Networks + Images + Daemon,
        impl Host,
    >,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    images: &TeamImages,
    ids: (u32, u32),
    rollback: Option<bool>,
) -> anyhow::Result<UpReport> {
    let Session { engine, host, .. } = session;
    let existing = engine
        .containers_with_label(&labels::team_filter(&team.name))
        .await?;
    // The host ports the file names, before anything is removed or created.
    ports::check(host, team, &existing)?;
    let fresh = existing.is_empty();
    let explicit = rollback;
    let rollback = rollback.unwrap_or(fresh);
    let mut report = UpReport {
        removed: remove_dropped(engine, team, &existing).await?,
        rollback,
        ..UpReport::default()
    };
    if let Some(seconds) = team.idle_kernels {
        let idle = humantime::format_duration(std::time::Duration::from_secs(seconds));
        report.notes.push(Notice::note(format!(
            "Jupyter shuts down the members' kernels that ran nothing for {idle} (`idle: kernels`), letting go of their memory and GPU memory; their notebooks stay"
        )));
    }
    if let (Some(seconds), Some(_)) = (team.idle_containers, &team.hub) {
        let idle = humantime::format_duration(std::time::Duration::from_secs(seconds));
        report.notes.push(Notice::note(format!(
            "the hub stops a member's server nobody used for {idle} (`idle: containers`, jupyterhub-idle-culler), keeping her data; she starts it again from the hub's home page"
        )));
    } else if let Some(seconds) = team.idle_containers {
        let idle = humantime::format_duration(std::time::Duration::from_secs(seconds));
        report.notes.push(Notice::note(format!(
            "a member's container nobody used for {idle} (no kernel, terminal, SSH or exec session, no process left running, no GPU in use) stops itself (`idle: containers`), keeping its data; `tfimg up` starts it again"
        )));
    }
    // Host ports the unchanged members keep: new members must not take them.
    let reserved = RefCell::new(BTreeSet::new());
    let by_member: HashMap<String, &ContainerFacts> = existing
        .iter()
        .filter_map(|container| Some((container.labels.get(labels::MEMBER)?.clone(), container)))
        .collect();
    let socket = hub::socket(team, engine.endpoint(), engine.remote_endpoint().is_some())?;
    for member in &team.members {
        if hub::serves(team, member, specs) {
            // Her server is the hub's to start; one `up` started itself (before the team
            // had a hub) goes.
            if let Some(container) = by_member.get(&member.name) {
                if !container.labels.contains_key(labels::HUB) {
                    engine.remove_container(&container.id, true).await?;
                }
            }
            report.actions.insert(member.name.clone(), Action::Hub);
            continue;
        }
        let hash = member_hash(team, member, &images.specs[&member.spec]);
        let action = match by_member.get(&member.name) {
            // A server the team's hub made (the file had `hub:`) is no member's own
            // container, whatever its settings: it has no token and no port of its own.
            Some(container)
                if !container.labels.contains_key(labels::HUB)
                    && keeps(engine, member, container, &hash).await =>
            {
                reserved.borrow_mut().extend(ports_of(container));
                Action::Unchanged
            }
            Some(container) => {
                let idle = crate::app::containers::stopped_idle(engine, container).await;
                engine.remove_container(&container.id, true).await?;
                match idle {
                    Some(_) => Action::Woken,
                    None => Action::Recreated,
                }
            }
            None => Action::Created,
        };
        report.actions.insert(member.name.clone(), action);
    }
    // Every member is checked (mounts, GPUs, ports, keys) before any container or network
    // is created; the engine's host is asked about its GPUs once, for the first member
    // that has some.
    let mut prepared: Vec<launch::Prepared> = Vec::new();
    // A hub member is prepared once per spec she may start from (her `spec`, then her
    // `choices`): the hub creates whichever she picks.
    let launches = team
        .members
        .iter()
        .filter(|member| report.actions[&member.name] != Action::Unchanged)
        .flat_map(|member| match report.actions[&member.name] {
            Action::Hub => member
                .specs()
                .map(|spec| (member.with_spec(spec), true))
                .collect::<Vec<_>>(),
            _ => vec![(member.clone(), false)],
        });
    let mut for_hub: Vec<(TeamMember, launch::Prepared)> = Vec::new();
    for (member, served) in launches {
        let mut request = member_request(team, &member, &specs[&member.spec], &images.specs, ids)?;
        if served {
            let image = images.hub_members.get(&member.spec).ok_or_else(|| {
                anyhow::anyhow!(
                    "the hub's server image for `{}` was not built before `up`",
                    member.spec
                )
            })?;
            hub::place_member(team, &member, image, &mut request);
        } else {
            gateway::place_member(team, &member, &mut request);
        }
        let nvidia = prepared.iter().find_map(|earlier| earlier.nvidia.clone());
        request.pending_holders = prepared.iter().filter_map(Prepared::holder).collect();
        let member_error = |error: anyhow::Error| prefixed(&member, error);
        let ready = launch::Launcher::of(session)
            .prepare(request, nvidia)
            .await
            .map_err(member_error)?;
        let said = ready
            .notes
            .iter()
            .map(|note| member_note(&member.name, note));
        report.notes.extend(said);
        // A model a newer TensorFlow wrote than her serving spec runs.
        let newer = member
            .model
            .as_ref()
            .and_then(|model| model.warning.clone());
        let newer = newer.map(|warning| {
            Notice::warning(format!(
                "`{}`: {warning} (`tfimg list` shows each serving spec's TensorFlow)",
                member.name
            ))
        });
        report.notes.extend(newer);
        if served {
            for_hub.push((member, ready));
        } else {
            prepared.push(ready);
        }
    }
    // What the hub's spawner creates for each of its members, one profile per spec she
    // may start from, their folders made now.
    let mut profiles: BTreeMap<String, Vec<crate::team::hub::Profile>> = BTreeMap::new();
    for (member, ready) in &for_hub {
        let made = launch::make_folders(host, &ready.request)?;
        report
            .notes
            .extend(made.iter().map(|note| member_note(&member.name, note)));
        let profile = crate::team::hub::profile(
            &team.name,
            &ready.handed_over(),
            member,
            &specs[&member.spec],
        );
        profiles
            .entry(member.name.clone())
            .or_default()
            .push(profile);
    }
    let gpu_host = hub::gpu_host(session, &profiles).await?;
    gateway::prepare_network(engine, team).await?;
    let undo = |created: Vec<(String, String)>| async move {
        for (_, id) in &created {
            let _ = engine.remove_container(id, true).await;
        }
        // Nothing of the team was there before: its networks go too.
        if fresh {
            let _ = gateway::remove_networks(engine, &team.name).await;
        }
    };
    // An interrupt is the user's stop, not a failure: it keeps the members fully up
    // unless `--rollback` was given.
    let on_interrupt = explicit == Some(true);
    let created = match start_all(session, prepared, &reserved, on_interrupt, &mut report).await {
        Ok(created) => created,
        Err(error) if error.downcast_ref::<Interrupted>().is_some() => return Err(error),
        Err(error) => {
            // A member not even created: `start_all` removed the others.
            undo(Vec::new()).await;
            return Err(error);
        }
    };
    if !report.failures.is_empty() && rollback {
        undo(created).await;
        report.rolled_back = report.started.len();
        return Ok(report);
    }
    let changed = !report.started.is_empty() || !report.removed.is_empty();
    let gateway =
        gateway::reconcile(session, team, specs, images.gateway.as_deref(), changed).await;
    match gateway {
        Ok(action) => report.gateway = action,
        Err(error) if rollback => {
            undo(created).await;
            return Err(error.context(format!(
                "the gateway did not come up, so this `up` removed the {} member(s) it had started (rolled back)",
                report.started.len()
            )));
        }
        Err(error) => return Err(error),
    }
    let hub = hub::reconcile(
        session,
        team,
        images.hub.as_deref(),
        socket.as_ref(),
        profiles,
        gpu_host,
    )
    .await;
    match hub {
        Ok(action) => report.hub = action,
        Err(error) if rollback => {
            undo(created).await;
            return Err(error.context(format!(
                "the hub did not come up, so this `up` removed the {} member(s) it had started (rolled back)",
                report.started.len()
            )));
        }
        Err(error) => return Err(error),
    }
    Ok(report)
}

/// Removes the containers of members no longer in the file (first, so their ports are
/// free again); their names.
async fn remove_dropped(
    engine: &impl Containers,
    team: &Team,
    existing: &[ContainerFacts],
) -> anyhow::Result<Vec<String>> {
    let wanted: BTreeSet<&str> = team
        .members
        .iter()
        .map(|member| member.name.as_str())
        .collect();
    let mut removed = Vec::new();
    // The gateway and the hub are no members: their `reconcile` keeps or removes them.
    for container in existing.iter().filter(|container| {
        let hub = container.labels.contains_key(labels::HUB)
            && !container.labels.contains_key(labels::MEMBER);
        !container.labels.contains_key(labels::GATEWAY) && !hub
    }) {
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
    engine: &impl Containers,
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
/// `rollback`); a member that could not even be created undoes the whole `up`. The
/// members it created and their containers' ids.
async fn start_all(
    session: Session<'_, impl Containers + Tunnels + ContainerIo + Images + Daemon, impl Host>,
    prepared: Vec<Prepared>,
    reserved: &RefCell<BTreeSet<u16>>,
    rollback: bool,
    report: &mut UpReport,
) -> anyhow::Result<Vec<(String, String)>> {
    let Session { engine, host, .. } = session;
    // What this `up` created and which of those are fully up, kept outside the work so
    // an interrupt can leave exactly the members that are ready.
    let created: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let ready: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let work = join_all(prepared.into_iter().map(|prepared| {
        let (created, ready) = (&created, &ready);
        async move {
            let member = member_of(&prepared);
            let launched = launch::Launcher::of(session)
                .start(prepared, reserved, false, |id| {
                    lock(created).push((member.clone(), id.to_string()));
                })
                .await;
            let exists = lock(created).iter().any(|(name, _)| *name == member);
            let notes = match &launched {
                Ok(launched) => launched.notes.clone(),
                Err(_) => Vec::new(),
            };
            let outcome = match launched {
                Ok(launched) if launched.plan.endpoints.is_empty() => Ok(()),
                Ok(launched) => {
                    let known_hosts = launched.known_hosts.as_deref();
                    ready::wait_until_ready(session, &launched.id, &launched.plan, known_hosts)
                        .await
                }
                Err(error) => Err(error),
            };
            if outcome.is_ok() {
                lock(ready).insert(member.clone());
            }
            (member, exists, outcome, notes)
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
    for (member, exists, result, notes) in outcome {
        report
            .notes
            .extend(notes.iter().map(|note| member_note(&member, note)));
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
    Ok(created)
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
    engine: &impl Containers,
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

pub mod export;
mod members;
mod ports;
mod serving;
pub mod up_down;

use members::prefixed;
pub use members::{
    check_member_folders, check_mounts_are_local, export_plans, make_mounts_root, member_hash,
    member_request,
};
pub use serving::check_models;

#[cfg(test)]
mod tests;
