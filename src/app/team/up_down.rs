//! `tfimg up` and `tfimg down`, whole: the team file and its members'
//! specs read and checked, the images built, the team brought up (`team::up`) and each
//! member's access read back; `down` removes the team's containers, closes their tunnels
//! and removes its networks, never the data on their mounts. `up` and `down` of one team
//! are one at a time on this machine (`one_at_a_time`): two at once made each network
//! twice and both failed.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Action, TeamImages, UpReport};
use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::session::Session;
use crate::engine::prelude::{Builds, ContainerIo, Containers, Daemon, Images, Networks, Tunnels};
use crate::engine::Engine;
use crate::host::prelude::{Clock, FileWrites, Files, Ports, Processes, Secrets, State};
use crate::host::Host;
use crate::output::progress::Report;
use crate::plan;
use crate::spec::{self, Catalog, ResolvedSpec};
use crate::team::Team;

/// The team file and every member's resolved spec (errors name the member), with serving
/// members' model folders checked.
pub fn load(
    host: &impl Files,
    catalog: &Catalog,
    file: &Path,
) -> anyhow::Result<(Team, BTreeMap<String, ResolvedSpec>)> {
    let mut team = crate::app::catalog::load_team(host, file)?;
    let mut specs: BTreeMap<String, ResolvedSpec> = BTreeMap::new();
    for member in &team.members {
        for (index, name) in member.specs().enumerate() {
            // `no spec named ...` has no place of its own: the member's `spec:` or `choices:`.
            let place = match index {
                0 => &member.spec_location,
                _ => &member.choices_location,
            };
            if !specs.contains_key(name) {
                let resolved =
                    crate::app::catalog::resolve(host, catalog, name).map_err(|error| {
                        spec::SpecError::new(
                            error.location.clone().or_else(|| Some(place.clone())),
                            format!("member `{}`: {}", member.name, error.message),
                            error.hint.clone(),
                        )
                    })?;
                specs.insert(name.to_string(), resolved);
            }
            if index > 0 && specs[name].service != spec::Service::Jupyter {
                return Err(spec::SpecError::new(
                    Some(place.clone()),
                    format!(
                        "member `{}`: choice `{name}` serves no Jupyter (its service is `{}`)",
                        member.name,
                        specs[name].service.as_str()
                    ),
                    "`choices` are specs she starts her Jupyter server from at the hub: list Jupyter specs (`tfimg list` shows each one's service)",
                )
                .into());
            }
        }
        if !member.choices.is_empty() && !crate::app::hub::serves(&team, member, &specs) {
            return Err(spec::SpecError::new(
                Some(member.choices_location.clone()),
                format!(
                    "member `{}` has `choices:`, but her spec `{}` serves no Jupyter, so the hub starts no server for her",
                    member.name, member.spec
                ),
                "give her a Jupyter `spec:` (the first one she is offered), or remove `choices`",
            )
            .into());
        }
    }
    // Serving members' models, before anything is built or created.
    super::check_models(host, &mut team, &specs)?;
    Ok((team, specs))
}

/// The current image of every spec, built (and verified) when missing.
pub async fn images_for(
    session: Session<
        '_,
        impl Images + Builds + Containers + Daemon,
        impl Clock + Secrets + Processes,
    >,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
) -> anyhow::Result<BTreeMap<String, String>> {
    let reporter = session.report;
    let mut images = BTreeMap::new();
    for (name, resolved) in specs {
        let built = build_spec(session, resolved, network, &BuildOptions::default())
            .await?
            .expect("a real build always answers");
        images.insert(name.clone(), built.plan.keyed_tag);
    }
    reporter.clear();
    Ok(images)
}

/// The lock file of team `team`: `up` and `down` hold it, one at a time.
pub fn lock_name(team: &str) -> String {
    format!("team-{team}.lock")
}

/// Waits (saying so once) while another tfimg brings team `team` up or down, then holds
/// its lock until dropped; `None` where locks are impossible here (no data folder of
/// this user's own: `Host::try_lock`), and the command then runs unserialised.
async fn one_at_a_time(
    host: &(impl Clock + State),
    team: &str,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Option<Box<dyn std::any::Any + Send>>> {
    crate::app::build::lock(
        host,
        &lock_name(team),
        false,
        &format!("waiting for another `tfimg up` or `tfimg down` of team `{team}` to finish"),
        reporter,
    )
    .await
}

/// `tfimg up` (members run as the host's `container_ids`): what is refused before any
/// build (mounts and a gateway on a remote engine, members' folders), the images, then the
/// team brought to its file; the tunnels of members replaced or rolled back are tidied
/// away. Waits while another `up` or `down` of the team runs.
pub async fn bring_up(
    session: Session<'_, impl Engine, impl Host>,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    rollback: Option<bool>,
) -> anyhow::Result<UpReport> {
    let reporter = session.report;
    let ui = session.ui;
    let Session { engine, host, .. } = session;
    let chosen = host.container_ids();
    let _one_at_a_time = one_at_a_time(host, &team.name, reporter).await?;
    // Before any build: members' mounts name folders of this machine.
    super::check_mounts_are_local(team, engine.remote_endpoint())?;
    super::check_member_folders(host, team)?;
    crate::app::gateway::check_local(team, engine.remote_endpoint())?;
    crate::app::hub::socket(team, engine.endpoint(), engine.remote_endpoint().is_some())?;
    let spec_images = images_for(session, specs, network).await?;
    let mut images = TeamImages {
        gateway: match team.gateway {
            Some(_) => crate::app::gateway::image(engine, network, false, reporter).await?,
            None => None,
        },
        ..TeamImages::default()
    };
    if team.hub.is_some() {
        images.hub = Some(crate::app::hub::image(engine, network, reporter).await?);
        let served = team
            .members
            .iter()
            .filter(|member| crate::app::hub::serves(team, member, specs));
        for spec in served.flat_map(|member| member.specs()) {
            if images.hub_members.contains_key(spec) {
                continue;
            }
            let built = crate::app::hub::member_image(
                engine,
                network,
                &specs[spec],
                &spec_images[spec],
                reporter,
            )
            .await?;
            images.hub_members.insert(spec.to_string(), built);
        }
    }
    images.specs = spec_images;
    reporter.clear();
    super::make_mounts_root(host, team)?;
    let report = super::up(session, team, specs, &images, chosen, rollback).await?;
    for note in &report.notes {
        ui.notice(note);
    }
    // Members replaced or rolled back leave tunnels behind on a remote engine.
    crate::app::tunnels::TunnelStore::of(session).tidy().await?;
    Ok(report)
}

/// One member as `up` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberAccess {
    pub member: String,
    pub spec: String,
    /// What this `up` did: created, recreated, restarted (it had stopped idle) or unchanged.
    pub action: &'static str,
    /// The GPUs it was given (`device=2`: a count shows the GPUs chosen), from its label;
    /// what the file asks while it has no container.
    pub gpus: String,
    /// Its service's address, else its state (`exited (1)`), else `-`.
    pub access: String,
    /// TensorBoard's address, else `-`.
    pub tensorboard: String,
}

/// Each member's access, read back from the engine: the labels have no token, so the
/// user who ran `up` gets the whole URL from the container; on a remote engine a running
/// member's tunnel is opened again if it was closed.
pub async fn access(
    session: Session<
        '_,
        impl Tunnels + Containers + ContainerIo + Daemon,
        impl Files + FileWrites + Ports + Secrets,
    >,
    team: &Team,
    actions: &BTreeMap<String, Action>,
) -> anyhow::Result<Vec<MemberAccess>> {
    let Session { engine, .. } = session;
    let mut rows = Vec::new();
    for member in &team.members {
        let name = format!("{}-{}", team.name, member.name);
        let container = engine.container(&name).await?;
        let endpoints = match &container {
            Some(found)
                if engine.tunnels_ports()
                    && found.state == "running"
                    && found.labels.contains_key(crate::labels::PORTS) =>
            {
                crate::app::tunnels::reopen(session, found).await?
            }
            Some(found) => plan::tunnels::container_endpoints(
                &found.labels,
                crate::labels::jupyter_token(&found.env).as_deref(),
                &[],
            ),
            None => Vec::new(),
        };
        let (service, tensorboard) = plan::access(&endpoints);
        // A hub member is reached through the hub, whether her server runs or not: its
        // address signs her in and starts it.
        let at_hub = match (&team.hub, actions.get(&member.name)) {
            (Some(hub), Some(Action::Hub)) => Some(hub.address()),
            _ => None,
        };
        let (service, tensorboard) = match &at_hub {
            Some(address) => (
                Some(format!("{address}user/{}/lab", member.name)),
                Some(format!("{address}user/{}/tensorboard/", member.name)),
            ),
            None => (service.map(str::to_string), tensorboard.map(str::to_string)),
        };
        let access =
            service.unwrap_or_else(|| match container.as_ref().map(|c| c.state.as_str()) {
                Some("exited") => format!(
                    "exited ({})",
                    container.as_ref().and_then(|c| c.exit_code).unwrap_or(0)
                ),
                Some(state) => state.to_string(),
                None => "-".to_string(),
            });
        rows.push(MemberAccess {
            member: member.name.clone(),
            // A hub member's running server says which of her specs she picked; until
            // then, all she may pick from.
            spec: container
                .as_ref()
                .and_then(|found| found.labels.get(crate::labels::SPEC).cloned())
                .filter(|_| !member.choices.is_empty())
                .unwrap_or_else(|| member.specs().collect::<Vec<_>>().join(", ")),
            action: match actions.get(&member.name) {
                Some(Action::Created) => "created",
                Some(Action::Recreated) => "recreated",
                Some(Action::Woken) => "restarted",
                Some(Action::Hub) => "at the hub",
                _ => "unchanged",
            },
            // What it was given (a count becomes the GPUs chosen), as its label says;
            // what the file asks before it exists.
            gpus: container
                .as_ref()
                .and_then(|found| found.labels.get(crate::labels::GPUS).cloned())
                .unwrap_or_else(|| member.gpus.describe()),
            access,
            tensorboard: tensorboard.unwrap_or_else(|| "-".to_string()),
        });
    }
    Ok(rows)
}

/// `tfimg down`: the team's containers removed (their tunnels closed), then its networks;
/// the names removed, in the engine's order. Waits while another `up` or `down` of the
/// team runs.
pub async fn down(
    session: Session<
        '_,
        impl Tunnels + Containers + Networks + Daemon,
        impl State + Files + Clock + FileWrites,
    >,
    team: &str,
) -> anyhow::Result<Vec<String>> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let _one_at_a_time = one_at_a_time(host, team, reporter).await?;
    let containers = engine
        .containers_with_label(&crate::labels::team_filter(team))
        .await?;
    let mut removed = Vec::new();
    for container in &containers {
        engine.remove_container(&container.id, true).await?;
        crate::app::tunnels::TunnelStore::of(session)
            .close(&container.id)
            .await;
        removed.push(container.name.clone());
    }
    // The team's networks (each member's, and the gateway's) go with its last container.
    crate::app::gateway::remove_networks(engine, team).await?;
    Ok(removed)
}

#[cfg(test)]
mod tests;
