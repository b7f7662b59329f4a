//! A team's gateway brought to what its file says: the team network, the members behind
//! it (no host ports of their own for Jupyter and TensorBoard, Jupyter under its base
//! URL), and one nginx container in front, with the configuration `team::gateway::nginx`
//! renders, the team's certificate and key copied in before it starts (never in an image
//! layer), and `nginx -s reload` when an `up` changes the members: old workers finish their
//! open connections, so kernels' WebSockets stay up.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::app::build::Network;
use crate::app::launch::{self, LaunchRequest, SshSource, Target, TunnelMode};
use crate::engine::prelude::*;
use crate::engine::{BuildRequest, OutputChunk};
use crate::host::archive::BuildContext;
use crate::host::Host;
use crate::input::InputError;
use crate::labels;
use crate::output::progress::Reporter;
use crate::plan::gpus::{GpuMode, GpuSelection};
use crate::plan::mounts::MountPlan;
use crate::plan::network::{self, GatewayRoute, NetworkPlan};
use crate::plan::ports::{PortPlan, PortRequest};
use crate::plan::LaunchPlan;
use crate::plan::RestartPolicy;
use crate::render::{self, dockerfile::GATEWAY_BASE};
use crate::spec::{ResolvedSpec, Service};
use crate::team::gateway::ingress::IngressPlan;
use crate::team::gateway::nginx::{self, Backend, GATEWAY_IMAGE, GATEWAY_UID};
use crate::team::gateway::{Gateway, Tls, LISTEN_PORT, ROUTED_SERVICES};
use crate::team::{Team, TeamMember};

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
    let Some(gateway) = &team.gateway else {
        return;
    };
    let behind = request.target.service == Service::Jupyter && member.command.is_empty();
    let route = behind.then(|| {
        let tensorboard = request.target.ports.contains_key("tensorboard");
        GatewayRoute {
            base_url: gateway.base_url(&member.name),
            jupyter_port: request.target.ports.get("jupyter").copied().unwrap_or(8888),
            jupyter_url: gateway.url(&member.name, "jupyter"),
            tensorboard_url: tensorboard.then(|| gateway.url(&member.name, "tensorboard")),
        }
    });
    request
        .target
        .ports
        .retain(|service, _| !ROUTED_SERVICES.contains(&service.as_str()));
    request.network = Some(NetworkPlan {
        name: network::team_network(&team.name),
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

/// The team network, made before any member that joins it.
pub async fn prepare_network(engine: &impl Engine, team: &Team) -> anyhow::Result<()> {
    if team.gateway.is_some() {
        let labels = BTreeMap::from([(labels::TEAM.to_string(), team.name.clone())]);
        engine
            .ensure_network(&network::team_network(&team.name), &labels)
            .await?;
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
    engine: &impl Engine,
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    image: Option<&str>,
    members_changed: bool,
) -> anyhow::Result<Option<GatewayAction>> {
    let existing = engine.container(&container_name(&team.name)).await?;
    let Some(gateway) = &team.gateway else {
        let Some(found) = existing else {
            return Ok(None);
        };
        engine.remove_container(&found.id, true).await?;
        engine
            .remove_network(&network::team_network(&team.name))
            .await?;
        return Ok(Some(GatewayAction::Removed));
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
            upload(engine, &found.id, &files).await?;
            reload(engine, &found.id).await?;
            Ok(Some(GatewayAction::Reloaded))
        }
        found => {
            if let Some(found) = found {
                engine.remove_container(&found.id, true).await?;
            }
            create(engine, host, team, gateway, image, &hash, &files).await?;
            Ok(Some(GatewayAction::Created))
        }
    }
}

/// Creates the gateway's container, copies its files in, then starts it.
async fn create(
    engine: &impl Engine,
    host: &impl Host,
    team: &Team,
    gateway: &Gateway,
    image: &str,
    hash: &str,
    files: &[u8],
) -> anyhow::Result<()> {
    let request = request(team, gateway, image, hash);
    let prepared = launch::prepare(engine, host, request).await?;
    let reserved = RefCell::new(BTreeSet::new());
    let launched = launch::start(engine, host, prepared, &reserved, true, |_| {}).await?;
    let started = async {
        upload(engine, &launched.id, files).await?;
        engine
            .start(&launched.id)
            .await
            .map_err(|failure| match failure {
                crate::engine::StartFailure::PortTaken(message) => {
                    anyhow::Error::from(InputError::new(
                        format!("the gateway's port {} is taken: {message}", gateway.port),
                        "stop what listens there, or give the gateway another `port`",
                    ))
                }
                other => anyhow::anyhow!("the gateway did not start: {other:?}"),
            })
    };
    if let Err(error) = started.await {
        let _ = engine.remove_container(&launched.id, true).await;
        return Err(error);
    }
    Ok(())
}

/// The gateway's launch: nginx as `www-data` with every capability dropped, on the team
/// network, its one port published (on 127.0.0.1 unless `public`).
fn request(team: &Team, gateway: &Gateway, image: &str, hash: &str) -> LaunchRequest {
    LaunchRequest {
        target: Target {
            spec_name: "gateway".to_string(),
            image: image.to_string(),
            service: Service::None,
            image_user: "www-data".to_string(),
            workdir: "/".to_string(),
            ports: BTreeMap::from([("gateway".to_string(), LISTEN_PORT)]),
            gpu_image: false,
            gpu: None,
            tfimg_image: false,
            cuda_cache: None,
        },
        name: container_name(&team.name),
        command: nginx::command(),
        env: Vec::new(),
        mounts: Vec::new(),
        make_mount_parents: false,
        syncs: Vec::new(),
        make_sync_parents: false,
        volumes: Vec::new(),
        port_requests: vec![PortRequest {
            host: Some(gateway.port),
            container: LISTEN_PORT,
        }],
        public: gateway.public,
        gpus: Some(GpuSelection::None),
        gpu_mode: GpuMode::Auto,
        ids: Some((GATEWAY_UID, GATEWAY_UID)),
        ssh: SshSource::User(None),
        memory: None,
        nano_cpus: None,
        shm_size: GATEWAY_SHM,
        restart: Some(RestartPolicy::UnlessStopped),
        extra_labels: BTreeMap::from([
            (labels::TEAM.to_string(), team.name.clone()),
            (labels::GATEWAY.to_string(), team.name.clone()),
            (labels::MEMBER_HASH.to_string(), hash.to_string()),
            (labels::url_label("gateway"), gateway.address()),
        ]),
        tunnel: TunnelMode::Detached,
        nvidia: None,
        network: Some(NetworkPlan {
            name: network::team_network(&team.name),
            gateway: None,
        }),
    }
}

/// What makes a running gateway out of date: its image, port, address and certificate
/// source (the configuration itself is reloaded, not recreated).
fn settings_hash(gateway: &Gateway, image: &str) -> String {
    let text = format!("{image}|{:?}", gateway);
    crate::plan::image::hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}

/// The gateway's image for `network` (its apt mirror and CA, as spec builds use them):
/// the existing one, or one built from the registry-free Debian base and also tagged
/// `tfimg/gateway:latest`. Its tag carries the build key, so a changed mirror, CA or base
/// is a new image. With `only_check`, `None` instead of a build (or a missing base).
pub async fn image(
    engine: &impl Engine,
    network: &Network,
    only_check: bool,
    reporter: &Reporter,
) -> anyhow::Result<Option<String>> {
    let base = GATEWAY_BASE;
    let base_id = if only_check {
        match engine.image(base).await? {
            Some(found) => found.id,
            None => return Ok(None),
        }
    } else {
        crate::app::base::ensure_base(engine, base, network, false, false, reporter)
            .await
            .map_err(|error| {
                anyhow::Error::from(InputError::new(
                    format!("the gateway image needs `{base}`: {error:#}"),
                    format!(
                        "make it with `tfimg base bootstrap {base}`, or load it (`docker load`)"
                    ),
                ))
            })?
    };
    let rendered = render::dockerfile::gateway(&network.render);
    let context = BuildContext::from_rendered(&rendered, &[])?;
    let key = crate::plan::image::build_key(&rendered.dockerfile, &context.digest()?, &base_id);
    let tag = format!("{GATEWAY_IMAGE}:{}", &key[..12]);
    if engine.image(&tag).await?.is_some() {
        return Ok(Some(tag));
    }
    if only_check {
        return Ok(None);
    }
    reporter.status(&format!(
        "building the gateway image `{tag}` (nginx from `{base}`)"
    ));
    let request = BuildRequest {
        build_args: network.proxy_build_args.clone().into_iter().collect(),
        no_cache: false,
    };
    let built = engine
        .build(&request, context.into_stream(), |_| {})
        .await?;
    match built {
        Ok(id) => {
            engine.tag(&id, &tag).await?;
            engine.tag(&id, &format!("{GATEWAY_IMAGE}:latest")).await?;
            Ok(Some(tag))
        }
        Err(failure) => Err(InputError::new(
            format!("the gateway image did not build: {}", failure.message),
            "nginx comes from Debian's packages: check `--apt-mirror` and `--ca-cert` (the ones spec builds use)",
        )
        .into()),
    }
}

/// The tar of nginx.conf, the certificate and its key (0600), owned by nginx's user.
fn files(
    host: &impl Host,
    team: &Team,
    gateway: &Gateway,
    specs: &BTreeMap<String, ResolvedSpec>,
) -> anyhow::Result<Vec<u8>> {
    let config = nginx::config(&team.name, gateway, &backends(team, specs));
    let (cert, key) = certificate(host, team, gateway)?;
    let mut files = BuildContext::default();
    files.add_bytes(nginx::CONFIG, 0o644, config.into_bytes());
    files.add_bytes(nginx::CERT, 0o644, cert);
    files.add_bytes(nginx::KEY, 0o600, key);
    files.set_owner(GATEWAY_UID, GATEWAY_UID);
    let mut tar = Vec::new();
    files.write_tar(&mut tar)?;
    Ok(tar)
}

/// The gateway on Kubernetes: each Jupyter member serves under its base URL, and the
/// Ingress routes to the members' Services with the team's certificate.
pub fn k8s_export(
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    plans: &mut crate::app::team::MemberPlans,
) -> anyhow::Result<Option<IngressPlan>> {
    let Some(gateway) = &team.gateway else {
        return Ok(None);
    };
    let backends = backends(team, specs);
    for (member, plan) in plans.iter_mut() {
        if backends.iter().any(|backend| backend.member == *member) {
            plan.env.push(format!(
                "{}={}",
                labels::JUPYTER_BASE_URL_VARIABLE,
                gateway.base_url(member)
            ));
            plan.env.sort();
        }
    }
    let (cert, key) = certificate(host, team, gateway)?;
    Ok(Some(IngressPlan {
        gateway: gateway.clone(),
        backends,
        cert_pem: String::from_utf8_lossy(&cert).into_owned(),
        key_pem: String::from_utf8_lossy(&key).into_owned(),
    }))
}

/// The gateway in a Compose export: its service's plan and the files it reads.
#[derive(Debug)]
pub struct ComposeGateway {
    pub plan: LaunchPlan,
    /// The folder beside the Compose file the service mounts read-only.
    pub folder: PathBuf,
    /// nginx.conf, the certificate and its key (name, bytes, private).
    pub files: Vec<(&'static str, Vec<u8>, bool)>,
    /// Who owns the folder and its files: the user the service runs as.
    pub owner: (u32, u32),
}

/// The gateway as a Compose service beside the members' (`export_plans` with
/// `behind_gateway`): nginx as the user who runs Compose (`ids`), so it reads the key
/// that only they may read, from `folder` mounted read-only; its one port as the file
/// says, even when `up`'s gateway holds it now. `ids` of root become the image's user.
pub fn compose_export(
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    image: &str,
    ids: (u32, u32),
    folder: &Path,
) -> anyhow::Result<Option<ComposeGateway>> {
    let Some(gateway) = &team.gateway else {
        return Ok(None);
    };
    // nginx never runs as root (its workers would switch to `nobody`): root's export runs
    // it as the image's user, who is then given the files.
    let ids = if ids.0 == 0 {
        (GATEWAY_UID, GATEWAY_UID)
    } else {
        ids
    };
    let mut request = request(team, gateway, image, "");
    request.ids = Some(ids);
    request.port_requests.clear();
    request.network = None;
    let reserved = RefCell::new(BTreeSet::new());
    let mut plan = launch::plan_without_engine(host, request, &reserved)?;
    plan.labels.remove(labels::MEMBER_HASH);
    let host_ip = if gateway.public {
        "0.0.0.0"
    } else {
        "127.0.0.1"
    };
    plan.ports = vec![PortPlan {
        name: "gateway".to_string(),
        container: LISTEN_PORT,
        host_ip: host_ip.to_string(),
        host: gateway.port,
        tunneled: false,
    }];
    let published = labels::PublishedPort {
        name: "gateway".to_string(),
        host_ip: host_ip.to_string(),
        host: gateway.port,
        container: LISTEN_PORT,
    };
    plan.labels.insert(
        labels::PORTS.to_string(),
        labels::encode_ports(&[published]),
    );
    let folder = folder.join(format!("{}.gateway", team.name));
    plan.mounts = vec![MountPlan {
        source: folder.clone(),
        target: nginx::FOLDER.to_string(),
        read_only: true,
    }];
    let config = nginx::config(&team.name, gateway, &backends(team, specs));
    let (cert, key) = certificate(host, team, gateway)?;
    Ok(Some(ComposeGateway {
        plan,
        folder,
        owner: ids,
        files: vec![
            (nginx::CONFIG, config.into_bytes(), false),
            (nginx::CERT, cert, false),
            (nginx::KEY, key, true),
        ],
    }))
}

/// The certificate and key: the file's, or the team's self-signed pair, made once and
/// kept under tfimg's data folder (the key 0600).
fn certificate(
    host: &impl Host,
    team: &Team,
    gateway: &Gateway,
) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let read = |path: &std::path::Path| {
        host.read_file(path).map_err(|error| {
            InputError::new(
                format!("cannot read `{}`: {error}", path.display()),
                "`tls` names a PEM certificate and its key, relative to the team file's folder",
            )
        })
    };
    match &gateway.tls {
        Tls::Files { cert, key } => Ok((read(cert)?, read(key)?)),
        Tls::SelfSigned => {
            let folder = host
                .data_dir()
                .join("teams")
                .join(&team.name)
                .join("gateway");
            let (cert_path, key_path) = (folder.join(nginx::CERT), folder.join(nginx::KEY));
            if host.exists(&cert_path) && host.exists(&key_path) {
                return Ok((read(&cert_path)?, read(&key_path)?));
            }
            let (cert, key) = host.self_signed_certificate(&nginx::certificate_names(gateway))?;
            host.write_private_file(&key_path, key.as_bytes())?;
            host.write_file(&cert_path, cert.as_bytes())?;
            Ok((cert.into_bytes(), key.into_bytes()))
        }
    }
}

async fn upload(engine: &impl Engine, id: &str, files: &[u8]) -> anyhow::Result<()> {
    let bytes = Bytes::copy_from_slice(files);
    let stream = futures_util::stream::once(async move { Ok::<_, std::io::Error>(bytes) });
    if !engine.upload(id, nginx::FOLDER, stream).await? {
        anyhow::bail!("the gateway image has no `{}`", nginx::FOLDER);
    }
    Ok(())
}

/// `nginx -s reload`: a configuration that does not load leaves the old one serving.
async fn reload(engine: &impl Engine, id: &str) -> anyhow::Result<()> {
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

#[cfg(test)]
mod tests;
