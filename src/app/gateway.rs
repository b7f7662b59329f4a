//! A team's gateway brought to what its file says: the networks, the members behind it
//! (no host ports of their own for Jupyter and TensorBoard, Jupyter under its base URL),
//! and one nginx container in front, with the configuration `team::gateway::nginx`
//! renders, the team's certificate and key copied in before it starts (never in an image
//! layer), and `nginx -s reload` when an `up` changes the members: old workers finish their
//! open connections, so kernels' WebSockets stay up.
//!
//! Trust boundary, member → member: members are different people, each in control of
//! their own container and its listening ports. Here each member goes on a network of its
//! own (`plan::network::member_network`) that only the gateway joins besides it, so no
//! member reaches another's ports, and the gateway (the one container on every member's
//! network) passes on only what its configuration lets through.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::app::launch::{self, LaunchRequest, Target, TunnelMode};
use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers, Daemon, Images, Networks, Tunnels};
use crate::engine::{EngineError, OutputChunk};
use crate::host::archive::BuildContext;
use crate::host::prelude::{FileWrites, Files, Secrets};
use crate::host::Host;
use crate::input::InputError;
use crate::labels;
use crate::plan::gpus::GpuSelection;
use crate::plan::network::{self, GatewayRoute, NetworkPlan};
use crate::plan::ports::PortRequest;
use crate::plan::{Resources, RestartPolicy};
use crate::spec::{ResolvedSpec, Service};
use crate::team::gateway::nginx::{self, Backend, GATEWAY_UID};
use crate::team::gateway::{Gateway, Route, Tls, LISTEN_PORT, ROUTED_SERVICES};
use crate::team::{Team, TeamMember};

/// Beside a kept self-signed certificate: the names it was made for, one a line.
const CERT_NAMES: &str = "cert.names";

/// Docker's own /dev/shm size: nginx needs no more.
const GATEWAY_SHM: i64 = 64 * 1024 * 1024;

/// The gateway's container: `<team>-gateway` (no member may be called `gateway`).
pub fn container_name(team: &str) -> String {
    format!("{team}-gateway")
}

/// A member's network, and for a Jupyter member its place behind the gateway. No member
/// publishes Jupyter or TensorBoard: an SSH member keeps its ssh port, and reaches its
/// TensorBoard through it (`ssh -L`), since TensorBoard has no login the gateway could ask.
pub fn place_member(team: &Team, member: &TeamMember, request: &mut LaunchRequest) {
    let network = network::member_network(&team.name, &member.name);
    let Some(gateway) = &team.gateway else {
        // No gateway: alone on its network all the same (its ports published as `run`'s).
        request.network = Some(NetworkPlan {
            name: network,
            gateway: None,
        });
        return;
    };
    let behind = request.target.serves_jupyter(&member.command);
    let route = behind.then(|| {
        let tensorboard = request.target.ports.contains_key("tensorboard");
        GatewayRoute {
            base_url: gateway.base_url(&member.name),
            jupyter_port: request.target.ports.get("jupyter").copied().unwrap_or(8888),
            jupyter_url: gateway.url(&member.name, "jupyter"),
            tensorboard_url: tensorboard.then(|| gateway.url(&member.name, "tensorboard")),
            host_cookies: gateway.route == Route::Host,
        }
    });
    request
        .target
        .ports
        .retain(|service, _| !ROUTED_SERVICES.contains(&service.as_str()));
    request.network = Some(NetworkPlan {
        name: network,
        gateway: route,
    });
}

/// The members behind the gateway, as the nginx configuration names them.
pub fn backends(team: &Team, specs: &BTreeMap<String, ResolvedSpec>) -> Vec<Backend> {
    team.members
        .iter()
        .filter(|member| member.command.is_empty())
        .filter(|member| specs[&member.spec].service == Service::Jupyter)
        .map(|member| {
            let ports = &specs[&member.spec].ports;
            Backend {
                member: member.name.clone(),
                container: format!("{}-{}", team.name, member.name),
                jupyter: ports.get("jupyter").copied(),
                tensorboard: ports.get("tensorboard").copied(),
            }
        })
        .collect()
}

/// The gateway's port is published on the engine's host and not yet carried home through
/// a tunnel: on a remote engine (`remote`, its URL) it is refused before anything is built.
pub fn check_local(team: &Team, remote: Option<&str>) -> Result<(), InputError> {
    match (&team.gateway, remote) {
        (Some(_), Some(endpoint)) => Err(InputError::new(
            format!("a team gateway runs on this machine's engine only, not on `{endpoint}`"),
            "remove `gateway:` to reach the members through their own tunnels, or run `tfimg up` on the server itself",
        )),
        _ => Ok(()),
    }
}

/// Each member's network and the gateway's (where the team has one), made before any
/// member that joins them (and made one each again where an older tfimg left two of a
/// name: `Networks::ensure_network`).
pub async fn prepare_network(engine: &impl Networks, team: &Team) -> anyhow::Result<()> {
    let labels = BTreeMap::from([(labels::TEAM.to_string(), team.name.clone())]);
    let ensure = |name: String, labels: BTreeMap<String, String>| async move {
        engine
            .ensure_network(&name, &labels)
            .await
            .map_err(|error| match error {
                EngineError::DuplicateNetworks { name, ids, why, .. } => {
                    EngineError::DuplicateNetworks {
                        name,
                        ids,
                        why,
                        hint: format!(
                            "run `tfimg down {file}` (it removes the team's containers and networks, never the data on their mounts), then `tfimg up {file}`",
                            file = team.file
                        ),
                    }
                }
                other => other,
            })
    };
    if team.gateway.is_some() || team.hub.is_some() {
        ensure(network::team_network(&team.name), labels.clone()).await?;
    }
    for member in &team.members {
        let mut labels = labels.clone();
        labels.insert(labels::MEMBER.to_string(), member.name.clone());
        ensure(network::member_network(&team.name, &member.name), labels).await?;
    }
    Ok(())
}

/// Removes every network of team `team` (the gateway's and the members'), taking the
/// gateway off them first.
pub async fn remove_networks(engine: &impl Networks, team: &str) -> anyhow::Result<()> {
    let label = format!("{}={team}", labels::TEAM);
    for name in engine.networks_with_label(&label).await? {
        engine.remove_network(&name).await?;
    }
    // Made before networks had labels: by its name.
    engine.remove_network(&network::team_network(team)).await?;
    Ok(())
}

/// The gateway joins every member's network (the only container that does), and leaves
/// the networks of members gone from the file, which go with it.
async fn join_members(engine: &impl Networks, team: &Team, gateway: &str) -> anyhow::Result<()> {
    for member in &team.members {
        let name = network::member_network(&team.name, &member.name);
        engine.connect_network(&name, gateway).await?;
    }
    remove_dropped_networks(engine, team).await
}

/// Removes the networks of members gone from the file (their containers went first).
async fn remove_dropped_networks(engine: &impl Networks, team: &Team) -> anyhow::Result<()> {
    let wanted: BTreeSet<String> = team
        .members
        .iter()
        .map(|member| network::member_network(&team.name, &member.name))
        .collect();
    let label = format!("{}={}", labels::TEAM, team.name);
    for name in engine.networks_with_label(&label).await? {
        if name != network::team_network(&team.name) && !wanted.contains(&name) {
            engine.remove_network(&name).await?;
        }
    }
    Ok(())
}

/// What `reconcile` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayAction {
    Unchanged,
    Created,
    Reloaded,
    Removed,
}

impl std::fmt::Display for GatewayAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GatewayAction::Unchanged => "unchanged",
            GatewayAction::Created => "created",
            GatewayAction::Reloaded => "reloaded with the new members",
            GatewayAction::Removed => "removed",
        })
    }
}

/// After the members: the gateway created (or recreated when its image, port or
/// certificate source changed), reloaded when `members_changed`, or removed with the
/// team network when the file has no gateway any more.
pub async fn reconcile(
    session: Session<
        '_,
        impl Containers + Networks + ContainerIo + Tunnels + Images + Daemon,
        impl Host,
    >,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    image: Option<&str>,
    members_changed: bool,
) -> anyhow::Result<Option<GatewayAction>> {
    let Session { engine, host, .. } = session;
    let existing = engine.container(&container_name(&team.name)).await?;
    let Some(gateway) = &team.gateway else {
        let removed = match existing {
            Some(found) => {
                engine.remove_container(&found.id, true).await?;
                // A hub in its place keeps the team's network.
                if team.hub.is_none() {
                    engine
                        .remove_network(&network::team_network(&team.name))
                        .await?;
                }
                Some(GatewayAction::Removed)
            }
            None => None,
        };
        remove_dropped_networks(engine, team).await?;
        return Ok(removed);
    };
    let image = image.context("the gateway's image was not built before `up`")?;
    let hash = settings_hash(gateway, image);
    let files = files(host, team, gateway, specs)?;
    match existing {
        Some(found)
            if found.state == "running" && found.labels.get(labels::MEMBER_HASH) == Some(&hash) =>
        {
            if !members_changed {
                return Ok(Some(GatewayAction::Unchanged));
            }
            join_members(engine, team, &found.id).await?;
            upload(engine, &found.id, nginx::FOLDER, &files).await?;
            reload(engine, &found.id).await?;
            Ok(Some(GatewayAction::Reloaded))
        }
        found => {
            if let Some(found) = found {
                engine.remove_container(&found.id, true).await?;
            }
            let request = request(team, gateway, image, &hash);
            open_front_door(session, team, request, "gateway", nginx::FOLDER, &files).await?;
            Ok(Some(GatewayAction::Created))
        }
    }
}

/// A front door (`role`: `gateway` or `hub`, its key in the file) created from `request`,
/// joined to every member's network (it is the one container on each), its `files` (a
/// tar) copied into `folder`, then started; its id. A port another holds is said with the
/// file's key (the launcher's hint names `-p`, which `up` does not have); a front door
/// that does not start is removed.
pub(crate) async fn open_front_door(
    session: Session<
        '_,
        impl Containers + Networks + Tunnels + ContainerIo + Images + Daemon,
        impl Host,
    >,
    team: &Team,
    request: LaunchRequest,
    role: &str,
    folder: &str,
    files: &[u8],
) -> anyhow::Result<String> {
    let Session { engine, .. } = session;
    let port = request
        .port_requests
        .first()
        .and_then(|port| port.host)
        .unwrap_or_default();
    let hint = format!(
        "stop what listens there, or give the {role} another port: `{role}.port` in `{}`",
        team.file
    );
    let taken = |error: anyhow::Error| match error.downcast::<InputError>() {
        Ok(input) if input.message.contains("already in use") => {
            anyhow::Error::from(InputError::new(
                format!(
                    "the {role}'s port {port} (`{role}.port` in `{}`) is already in use",
                    team.file
                ),
                hint.clone(),
            ))
        }
        Ok(input) => input.into(),
        Err(other) => other,
    };
    let prepared = launch::Launcher::of(session).prepare(request, None).await?;
    let reserved = RefCell::new(BTreeSet::new());
    let launched = launch::Launcher::of(session)
        .start(prepared, &reserved, true, |_| {})
        .await
        .map_err(taken)?;
    let started = async {
        join_members(engine, team, &launched.id).await?;
        upload(engine, &launched.id, folder, files).await?;
        engine
            .start(&launched.id)
            .await
            .map_err(|failure| match failure {
                crate::engine::StartFailure::PortTaken(message) => {
                    anyhow::Error::from(InputError::new(
                        format!("the {role}'s port {port} is taken: {message}"),
                        hint.clone(),
                    ))
                }
                other => anyhow::Error::from(other.into_engine_error())
                    .context(format!("the {role} did not start")),
            })
    };
    if let Err(error) = started.await {
        let _ = engine.remove_container(&launched.id, true).await;
        return Err(error);
    }
    Ok(launched.id)
}

/// The gateway's launch: nginx as `www-data` with every capability dropped, on its own
/// network (it joins the members' before it starts), its one port published (on
/// 127.0.0.1 unless `public`).
fn request(team: &Team, gateway: &Gateway, image: &str, hash: &str) -> LaunchRequest {
    let door = FrontDoor {
        role: labels::GATEWAY,
        name: container_name(&team.name),
        image,
        image_user: "www-data",
        workdir: "/",
        port: (gateway.port, LISTEN_PORT),
        public: gateway.public,
        hash,
        address: gateway.address(),
        ids: (GATEWAY_UID, GATEWAY_UID),
    };
    let mut request = front_door(team, &door);
    request.command = nginx::command();
    request.resources.shm_size = GATEWAY_SHM;
    request
}

/// A team's front door (its gateway or its hub): one container of a non-tfimg image.
pub(crate) struct FrontDoor<'a> {
    /// Its label (`io.tfimg.gateway`, `io.tfimg.hub`), which also names it in `ps`.
    pub role: &'a str,
    pub name: String,
    pub image: &'a str,
    pub image_user: &'a str,
    pub workdir: &'a str,
    /// The host port and the one it listens on inside.
    pub port: (u16, u16),
    pub public: bool,
    /// Its settings' hash: a running one with another is out of date.
    pub hash: &'a str,
    /// What `ps` shows as its address.
    pub address: String,
    pub ids: (u32, u32),
}

/// A front door's launch: its one port published (on 127.0.0.1 unless `public`), no GPU,
/// restarted with the daemon unless stopped, every capability dropped (its image is no
/// tfimg's), on the team's network, labelled with the team, its role, its hash and its
/// address.
pub(crate) fn front_door(team: &Team, door: &FrontDoor<'_>) -> LaunchRequest {
    let service = door.role.trim_start_matches(labels::PREFIX);
    let target = Target {
        spec_name: service.to_string(),
        image: door.image.to_string(),
        service: Service::None,
        image_user: door.image_user.to_string(),
        workdir: door.workdir.to_string(),
        ports: BTreeMap::from([(service.to_string(), door.port.1)]),
        gpu_image: false,
        gpu: None,
        tfimg_image: false,
        cuda_cache: None,
    };
    LaunchRequest {
        port_requests: vec![PortRequest {
            host: Some(door.port.0),
            container: door.port.1,
        }],
        public: door.public,
        gpus: Some(GpuSelection::None),
        resources: Resources {
            restart: Some(RestartPolicy::UnlessStopped),
            ..Resources::default()
        },
        extra_labels: BTreeMap::from([
            (labels::TEAM.to_string(), team.name.clone()),
            (door.role.to_string(), team.name.clone()),
            (labels::MEMBER_HASH.to_string(), door.hash.to_string()),
            (labels::url_label(service), door.address.clone()),
        ]),
        tunnel: TunnelMode::Detached,
        network: Some(NetworkPlan {
            name: network::team_network(&team.name),
            gateway: None,
        }),
        ..LaunchRequest::new(target, door.name.clone(), Some(door.ids))
    }
}

/// What makes a running gateway out of date: its image, port, address, routing and
/// certificate source (the configuration itself is reloaded, not recreated). Where the
/// file says it is not part of it.
fn settings_hash(gateway: &Gateway, image: &str) -> String {
    let text = format!(
        "{image}|{}|{}|{:?}|{:?}|{:?}|networks:member",
        gateway.port, gateway.public, gateway.tls, gateway.route, gateway.domain
    );
    crate::plan::image::hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}

/// The tar of nginx.conf, the certificate and its key (0600), owned by nginx's user.
fn files(
    host: &(impl Files + Secrets + FileWrites),
    team: &Team,
    gateway: &Gateway,
    specs: &BTreeMap<String, ResolvedSpec>,
) -> anyhow::Result<Vec<u8>> {
    let config = nginx::config(&team.name, gateway, &backends(team, specs));
    let (cert, key) = gateway_certificate(host, team, gateway)?;
    let mut files = BuildContext::default();
    files.add_bytes(nginx::CONFIG, 0o644, config.into_bytes());
    files.add_bytes(nginx::CERT, 0o644, cert);
    files.add_bytes(nginx::KEY, 0o600, key);
    files.set_owner(GATEWAY_UID, GATEWAY_UID);
    let mut tar = Vec::new();
    files.write_tar(&mut tar)?;
    Ok(tar)
}

/// The gateway's certificate and key (`certificate` for its names).
pub(crate) fn gateway_certificate(
    host: &(impl Files + Secrets + FileWrites),
    team: &Team,
    gateway: &Gateway,
) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let names = nginx::certificate_names(gateway);
    certificate(host, team, &gateway.tls, &names, "gateway")
}

/// The certificate and key: the file's, or the team's self-signed pair for `names`, made
/// once and kept under tfimg's data folder (`teams/<team>/<front>`, the key 0600).
pub(crate) fn certificate(
    host: &(impl Files + Secrets + FileWrites),
    team: &Team,
    tls: &Tls,
    names: &[String],
    front: &str,
) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let read = |path: &std::path::Path| {
        host.read_file(path).map_err(|error| {
            InputError::new(
                format!("cannot read `{}`: {error}", path.display()),
                "`tls` names a PEM certificate and its key, relative to the team file's folder",
            )
        })
    };
    match tls {
        Tls::Files { cert, key } => Ok((read(cert)?, read(key)?)),
        Tls::SelfSigned => {
            let folder = host
                .data_folder()?
                .join("teams")
                .join(&team.name)
                .join(front);
            let (cert_path, key_path) = (folder.join(nginx::CERT), folder.join(nginx::KEY));
            // The names it was made for, beside it: a team that routes by host now, or
            // under another domain, gets a certificate for its new names.
            let names_path = folder.join(CERT_NAMES);
            let names_text = names.join("\n") + "\n";
            let kept_names = host.read_file(&names_path).ok();
            if host.exists(&cert_path)
                && host.exists(&key_path)
                && kept_names.as_deref() == Some(names_text.as_bytes())
            {
                return Ok((read(&cert_path)?, read(&key_path)?));
            }
            let (cert, key) = host.self_signed_certificate(names)?;
            host.write_private_file(&key_path, key.as_bytes())?;
            host.write_file(&cert_path, cert.as_bytes())?;
            host.write_file(&names_path, names_text.as_bytes())?;
            Ok((cert.into_bytes(), key.into_bytes()))
        }
    }
}

/// Copies the tar `files` into `folder` of container `id` (a gateway's or a hub's).
pub(crate) async fn upload(
    engine: &impl ContainerIo,
    id: &str,
    folder: &str,
    files: &[u8],
) -> anyhow::Result<()> {
    let bytes = Bytes::copy_from_slice(files);
    let stream = futures_util::stream::once(async move { Ok::<_, std::io::Error>(bytes) });
    if !engine.upload(id, folder, stream).await? {
        anyhow::bail!("the image of container `{id}` has no `{folder}`");
    }
    Ok(())
}

/// `nginx -s reload`: a configuration that does not load leaves the old one serving.
async fn reload(engine: &impl ContainerIo, id: &str) -> anyhow::Result<()> {
    let mut output = String::new();
    let user = format!("{GATEWAY_UID}:{GATEWAY_UID}");
    let code = engine
        .exec(id, &nginx::reload_command(), &user, |chunk| match chunk {
            OutputChunk::Stdout(bytes) | OutputChunk::Stderr(bytes) => {
                output.push_str(&String::from_utf8_lossy(&bytes))
            }
        })
        .await?;
    if code != 0 {
        anyhow::bail!(
            "the gateway did not reload its configuration: {}",
            output.trim()
        );
    }
    Ok(())
}

mod export;
pub(crate) mod image;

pub use export::{compose_export, k8s_export, ComposeGateway};
pub use image::image;

#[cfg(test)]
mod tests;
