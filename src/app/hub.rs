//! A team's JupyterHub brought to what its file says (`hub:`). `up` prepares each
//! Jupyter member through the one launcher as for any launch (her mounts checked and
//! made, her environment, user and limits), but creates nothing for her: the launch plan
//! goes to the hub (`team::hub::profile`), whose spawner creates exactly that container
//! when she starts her server from the hub's home page. The hub itself is one container,
//! created (or recreated when its image, port, certificate source or team settings
//! changed: JupyterHub reads its configuration at start, and members' running servers
//! outlive its restart) with the team's settings, certificate and key copied in before it
//! starts. Its state (users, password hashes, cookie secret) is a named volume that `down`
//! keeps.
//!
//! Trust boundaries. Engine → hub: the hub holds the Docker socket (its spawner creates
//! the members' servers), so it is root on the engine's host in all but name; it runs
//! with no capability, no member server gets the socket, and nothing a member controls
//! reaches the hub but JupyterHub's own HTTP API. Member → member: each member's server is
//! on a network of her own that only the hub joins besides it, as behind the gateway.
//! Secrets: the hub makes its cookie secret and keeps password hashes in its state volume
//! (0600, root of a container without capabilities); the password `tfimg hub passwd` sets
//! is copied into a private folder of the hub and removed by the script that hashes it;
//! none is in an image layer, a label, a log or this tfimg's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::app::gateway::{front_door, open_front_door, FrontDoor};
use crate::app::gpu_ledger::GpuLedger;
use crate::app::launch::{self, LaunchRequest};
use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers, Daemon, Images, Networks, Tunnels};
use crate::engine::OutputChunk;
use crate::host::archive::BuildContext;
use crate::host::prelude::{Clock, Gpus};
use crate::host::Host;
use crate::host::NvidiaFacts;
use crate::input::InputError;
use crate::labels;
use crate::plan::cache::VolumePlan;
use crate::plan::gpus::{GpuMode, GpuPlan, GpuSelection};
use crate::plan::mounts::MountRequest;
use crate::plan::network::{self, NetworkPlan};
use crate::render::dockerfile::hub::{
    FOLDER, MIN_PASSWORD, PASSWD, PASSWORD_FILE, SHARE, STATE, TFIMG_IN_HUB,
};
use crate::spec::{ResolvedSpec, Service};
use crate::team::hub::{self, Hub, Profile, LISTEN_PORT, ROUTED_SERVICES};
use crate::team::{Team, TeamMember};

/// What `reconcile` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubAction {
    Unchanged,
    Created,
    /// Started again with the file's new settings (members' servers keep running).
    Restarted,
    Removed,
}

impl std::fmt::Display for HubAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HubAction::Unchanged => "unchanged",
            HubAction::Created => "created",
            HubAction::Restarted => "restarted with the file's settings",
            HubAction::Removed => "removed (its users and passwords are kept for a later `hub:`)",
        })
    }
}

/// How long the hub may take to answer after it starts.
const READY_SECONDS: u64 = 120;

/// Whether the hub starts `member`'s server (a Jupyter member without a command of her
/// own); `up` runs every other member itself.
pub fn serves(team: &Team, member: &TeamMember, specs: &BTreeMap<String, ResolvedSpec>) -> bool {
    team.hub.is_some()
        && member.command.is_empty()
        && specs[&member.spec].service == Service::Jupyter
}

/// A hub member's launch: her server image (`image`: her spec's with the hub's single-user
/// server), on her own network, her Jupyter and TensorBoard without host ports (the hub
/// reaches them there), her idle server culled by the hub, not by her container's own
/// watch, and no GPU now: they are chosen when she starts her server (`gpus`).
pub fn place_member(team: &Team, member: &TeamMember, image: &str, request: &mut LaunchRequest) {
    request.target.image = image.to_string();
    request.gpus = Some(GpuSelection::None);
    request
        .target
        .ports
        .retain(|service, _| !ROUTED_SERVICES.contains(&service.as_str()));
    request.idle_containers = None;
    request.network = Some(NetworkPlan {
        name: network::member_network(&team.name, &member.name),
        gateway: None,
    });
}

/// The hub creates containers through the engine's socket, which must be this machine's
/// (`endpoint` is the engine's URL): its path, or why not.
pub fn socket(team: &Team, endpoint: &str, remote: bool) -> Result<Option<PathBuf>, InputError> {
    if team.hub.is_none() {
        return Ok(None);
    }
    match endpoint.strip_prefix("unix://") {
        Some(path) if !remote => Ok(Some(PathBuf::from(path))),
        _ => Err(InputError::new(
            format!("a team hub runs beside this machine's engine only, and needs its socket: the engine here is `{endpoint}`"),
            "run `tfimg up` on the server itself (its engine at unix:///var/run/docker.sock), or remove `hub:`",
        )),
    }
}

/// The NVIDIA facts of the engine's host (this machine: the hub runs beside its engine),
/// for the hub to choose GPUs from when a member's server starts; `None` when no member
/// asks for GPUs. Each member's `gpus:` is checked against them now: a machine without
/// a driver, or an index it does not have, is refused before anything is created.
pub async fn gpu_host(
    session: Session<'_, impl Daemon, impl Gpus>,
    profiles: &BTreeMap<String, Vec<Profile>>,
) -> anyhow::Result<Option<serde_json::Value>> {
    let mut facts = None;
    // A member's profiles (one per spec she may pick) ask for the same GPUs: her first says.
    let each = profiles
        .iter()
        .filter_map(|(name, hers)| Some((name, hers.first()?)));
    for (name, profile) in each {
        let Some(gpus) = &profile.gpus else { continue };
        let in_member = |error: anyhow::Error| error.context(format!("member `{name}`"));
        let requested = GpuSelection::parse(gpus).map_err(|error| in_member(error.into()))?;
        if facts.is_none() {
            facts = launch::Launcher::of(session)
                .check_requested_gpus(Some(&requested))
                .await
                .map_err(in_member)?;
        }
        if let Some(found) = &facts {
            crate::plan::gpus::check_against_host(&requested, &found.gpus, None)
                .map_err(|error| in_member(error.into()))?;
        }
    }
    Ok(match facts {
        Some(found) => Some(serde_json::to_value(found)?),
        None => None,
    })
}

/// `choose_gpus` of a request as the hub writes it (JSON), its grant as JSON.
pub async fn choose_gpus_json(
    engine: &(impl Containers + Daemon),
    text: &str,
) -> anyhow::Result<String> {
    let ask: GpuAsk = serde_json::from_str(text).map_err(|error| {
        InputError::new(
            format!("`tfimg hub gpus` reads a JSON request on stdin: {error}"),
            "it is run by a team's hub, not by hand",
        )
    })?;
    Ok(serde_json::to_string(&choose_gpus(engine, &ask).await?)?)
}

/// What the hub asks of `tfimg hub gpus` when a member's server starts (JSON on stdin).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GpuAsk {
    /// Her server's container, which holds nothing yet (one left from before is not
    /// counted against her).
    pub name: String,
    /// Her `gpus:`, as Docker's `--gpus` writes them.
    pub gpus: String,
    pub shared: bool,
    /// The engine host's facts `up` read.
    pub nvidia: NvidiaFacts,
}

/// What her server's container gets: tfimg's GPU labels, and the GPUs in Docker's terms
/// (device requests as docker-py takes them, or the nvidia runtime and its environment).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GpuGrant {
    pub labels: BTreeMap<String, String>,
    pub device_requests: Vec<BTreeMap<String, serde_json::Value>>,
    pub runtime: Option<String>,
    pub env: BTreeMap<String, String>,
}

/// `tfimg hub gpus`: the GPUs a member's server takes as it starts, by the launcher's own
/// rules: GPUs another tfimg container holds are refused (unless both share), a count
/// takes the least-used free ones, named ones must be free. The hub runs one at a time and
/// creates the container before the next, so two members starting at once never get the
/// same GPU.
pub async fn choose_gpus(
    engine: &(impl Containers + Daemon),
    ask: &GpuAsk,
) -> anyhow::Result<GpuGrant> {
    let requested = GpuSelection::parse(&ask.gpus)?;
    let ledger =
        GpuLedger::read(engine, &ask.nvidia, |container| container.name == ask.name).await?;
    let chosen = ledger.sharing(ask.shared).allocate(&requested)?;
    let plan = launch::plan_gpus(engine, GpuMode::Auto, &chosen).await?;
    let mut labels = BTreeMap::from([(labels::GPUS.to_string(), chosen.describe())]);
    if ask.shared {
        labels.insert(labels::GPUS_SHARED.to_string(), "true".to_string());
    }
    let mut grant = GpuGrant {
        labels,
        device_requests: Vec::new(),
        runtime: None,
        env: BTreeMap::new(),
    };
    match plan {
        GpuPlan::None => {}
        GpuPlan::Request(request) => {
            let mut fields = BTreeMap::from([
                ("driver".to_string(), serde_json::json!(request.driver)),
                (
                    "capabilities".to_string(),
                    serde_json::json!(request.capabilities),
                ),
            ]);
            match request.count {
                Some(count) => fields.insert("count".to_string(), serde_json::json!(count)),
                None => fields.insert(
                    "device_ids".to_string(),
                    serde_json::json!(request.device_ids),
                ),
            };
            grant.device_requests.push(fields);
        }
        GpuPlan::Runtime { visible_devices } => {
            grant.runtime = Some("nvidia".to_string());
            grant
                .env
                .insert("NVIDIA_VISIBLE_DEVICES".to_string(), visible_devices);
            grant.env.insert(
                "NVIDIA_DRIVER_CAPABILITIES".to_string(),
                "compute,utility".to_string(),
            );
        }
    }
    Ok(grant)
}

/// After the members: the hub created (or recreated when its settings changed), or
/// removed when the file has no hub any more. `profiles`: each hub member's planned
/// server; `socket`: the engine's.
pub async fn reconcile(
    session: Session<
        '_,
        impl Containers + Networks + ContainerIo + Tunnels + Images + Daemon,
        impl Host,
    >,
    team: &Team,
    image: Option<&str>,
    socket: Option<&PathBuf>,
    profiles: BTreeMap<String, Vec<Profile>>,
    gpu_host: Option<serde_json::Value>,
) -> anyhow::Result<Option<HubAction>> {
    let Session { engine, host, .. } = session;
    let existing = engine.container(&hub::container_name(&team.name)).await?;
    let Some(hub) = &team.hub else {
        return Ok(match existing {
            Some(found) => {
                engine.remove_container(&found.id, true).await?;
                Some(HubAction::Removed)
            }
            None => None,
        });
    };
    let (Some(image), Some(socket)) = (image, socket) else {
        anyhow::bail!("the hub's image and socket were not ready before `up`");
    };
    let chooses_gpus = gpu_host.is_some();
    let settings = hub::settings(team, hub, profiles, gpu_host).to_json();
    let hash = settings_hash(hub, image, &settings);
    let action = match existing {
        Some(found)
            if found.state == "running" && found.labels.get(labels::MEMBER_HASH) == Some(&hash) =>
        {
            return Ok(Some(HubAction::Unchanged));
        }
        Some(found) => {
            engine.remove_container(&found.id, true).await?;
            HubAction::Restarted
        }
        None => HubAction::Created,
    };
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let (cert, key) = crate::app::gateway::certificate(host, team, &hub.tls, &names, "hub")?;
    let mut files = BuildContext::default();
    files.add_bytes("team.json", 0o600, settings.into_bytes());
    files.add_bytes("cert.pem", 0o644, cert);
    files.add_bytes("key.pem", 0o600, key);
    files.set_owner(0, 0);
    let mut tar = Vec::new();
    files.write_tar(&mut tar)?;
    let tfimg = host.executable()?;
    let request = request(team, hub, image, &hash, socket, &tfimg);
    let id = open_front_door(session, team, request, "hub", FOLDER, &tar).await?;
    let ready = async {
        wait_until_ready(session, &id).await?;
        if chooses_gpus {
            check_tfimg_runs(engine, &id).await?;
        }
        anyhow::Ok(())
    };
    if let Err(error) = ready.await {
        let _ = engine.remove_container(&id, true).await;
        return Err(error);
    }
    Ok(Some(action))
}

/// The hub's launch: JupyterHub as root of its container (it owns the state volume and
/// uses the engine's socket) with every capability dropped, on the team's network (it
/// joins the members' before it starts), its one port published (on 127.0.0.1 unless
/// `public`).
fn request(
    team: &Team,
    hub: &Hub,
    image: &str,
    hash: &str,
    socket: &Path,
    tfimg: &Path,
) -> LaunchRequest {
    let door = FrontDoor {
        role: labels::HUB,
        name: hub::container_name(&team.name),
        image,
        image_user: "root",
        workdir: STATE,
        port: (hub.port, LISTEN_PORT),
        public: hub.public,
        hash,
        address: hub.login_url(),
        ids: (0, 0),
    };
    let mount = |source: &Path, target: &str| MountRequest {
        text: source.display().to_string(),
        source: source.to_path_buf(),
        target: Some(target.to_string()),
        read_only: true,
    };
    LaunchRequest {
        mounts: vec![
            // Read-only does not stop a socket's use: the mount is the hub's whole power
            // over the engine, said in docs/architecture.md.
            mount(socket, "/var/run/docker.sock"),
            // This tfimg, which chooses members' GPUs by its own rules (`tfimg hub gpus`).
            mount(tfimg, TFIMG_IN_HUB),
        ],
        volumes: vec![VolumePlan {
            name: hub::state_volume(&team.name),
            target: STATE.to_string(),
            read_only: false,
            labels: BTreeMap::from([(labels::TEAM.to_string(), team.name.clone())]),
        }],
        ..front_door(team, &door)
    }
}

/// What makes a running hub out of date: its image, port, address, certificate source
/// and the team's settings (JupyterHub reads them at start only).
fn settings_hash(hub: &Hub, image: &str, settings: &str) -> String {
    let text = format!(
        "{image}|{}|{}|{:?}|{:?}|{settings}",
        hub.port, hub.public, hub.tls, hub.admins
    );
    crate::plan::image::hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}

/// Waits until JupyterHub answers on its port inside its container (`/hub/health`), or
/// fails with the end of its log.
async fn wait_until_ready(
    session: Session<'_, impl Containers + ContainerIo, impl Clock>,
    id: &str,
) -> anyhow::Result<()> {
    let Session { engine, host, .. } = session;
    let probe = format!(
        "import ssl, urllib.request; urllib.request.urlopen('https://127.0.0.1:{LISTEN_PORT}/hub/health', context=ssl._create_unverified_context(), timeout=5)"
    );
    let command = ["python3".to_string(), "-c".to_string(), probe];
    let started = std::time::Instant::now();
    loop {
        let answered = engine.exec(id, &command, "0:0", |_| {}).await;
        if matches!(answered, Ok(0)) {
            return Ok(());
        }
        let state = engine.container(id).await?;
        let gone = state.as_ref().is_none_or(|facts| facts.state != "running");
        if gone || started.elapsed().as_secs() > READY_SECONDS {
            let log = engine.output(id).await.unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            anyhow::bail!(
                "the hub did not answer within {READY_SECONDS} s{}; its log ends:\n{}",
                if gone { " (it stopped)" } else { "" },
                tail.join("\n")
            );
        }
        host.sleep(std::time::Duration::from_secs(1)).await;
    }
}

/// The hub runs this tfimg (from this machine, mounted) to choose members' GPUs: it must
/// run on the hub's Debian 12, which a tfimg built against a newer C library does not.
async fn check_tfimg_runs(engine: &impl ContainerIo, id: &str) -> anyhow::Result<()> {
    let mut output = String::new();
    let command = [TFIMG_IN_HUB.to_string(), "--version".to_string()];
    let code = engine
        .exec(id, &command, "0:0", |chunk| match chunk {
            OutputChunk::Stdout(bytes) | OutputChunk::Stderr(bytes) => {
                output.push_str(&String::from_utf8_lossy(&bytes))
            }
        })
        .await?;
    if code != 0 {
        return Err(InputError::new(
            format!(
                "this tfimg does not run in the hub's image (Debian 12), which chooses members' GPUs with it: {}",
                output.trim()
            ),
            "use a tfimg built on Debian 12 or an older system (its C library must not be newer than 2.36), or give the hub's members no `gpus:`",
        )
        .into());
    }
    Ok(())
}

/// `tfimg compose` writes no hub (members would lose their front door without a word).
pub fn refuse_compose(team: &Team) -> Result<(), InputError> {
    match team.hub {
        Some(_) => Err(InputError::new(
            format!("`tfimg compose` does not write a team's hub (`hub:` in `{}`)", team.file),
            "run the hub with `tfimg up` on the server, or write it for Kubernetes with `tfimg k8s` (Zero to JupyterHub's values); without `hub:`, `compose` writes the members with their tokens",
        )),
        None => Ok(()),
    }
}

/// `tfimg hub passwd`'s member: one the team's hub serves, else why not.
pub fn check_member(
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    member: &str,
) -> Result<(), InputError> {
    if team.hub.is_none() {
        return Err(InputError::new(
            format!("team file `{}` has no `hub:`", team.file),
            "add `hub: {auth: native}` to the team file and run `tfimg up` to give the team a JupyterHub",
        ));
    }
    let Some(found) = team.members.iter().find(|found| found.name == member) else {
        let names: Vec<&str> = team
            .members
            .iter()
            .map(|found| found.name.as_str())
            .collect();
        return Err(InputError::new(
            format!("`{member}` is not a member of team `{}`", team.name),
            format!("the members of `{}` are: {}", team.file, names.join(", ")),
        ));
    };
    if !serves(team, found, specs) {
        return Err(InputError::new(
            format!("member `{member}` does not sign in at the hub: her spec serves no Jupyter, or she runs a `command`"),
            "only Jupyter members have a server at the hub; `tfimg up` prints how the others are reached",
        ));
    }
    Ok(())
}

/// A password the hub takes: 8 to 72 bytes (bcrypt reads no further), on one line.
pub fn check_password(password: &str) -> Result<(), InputError> {
    let bytes = password.len();
    if !(MIN_PASSWORD..=72).contains(&bytes) {
        return Err(InputError::new(
            format!("a password is {MIN_PASSWORD} to 72 bytes; this one is {bytes}"),
            "give a longer (or shorter) password on one line of stdin",
        ));
    }
    if password.contains(['\n', '\r', '\0']) {
        return Err(InputError::new(
            "a password is one line, without NUL",
            "give the password alone on one line of stdin",
        ));
    }
    Ok(())
}

/// `tfimg hub passwd`: sets `member`'s password (checked: `check_password`) in the running
/// hub (hashed there by NativeAuthenticator's own bcrypt), so she signs in with it and
/// then changes it herself; what to tell the admin.
pub async fn passwd(
    engine: &(impl Containers + ContainerIo),
    team: &Team,
    member: &str,
    password: &str,
) -> anyhow::Result<String> {
    check_password(password)?;
    let password = password.as_bytes();
    let hub_name = hub::container_name(&team.name);
    let running = engine
        .container(&hub_name)
        .await?
        .filter(|found| found.state == "running");
    let Some(found) = running else {
        return Err(InputError::new(
            format!("the hub of team `{}` is not running", team.name),
            format!("bring it up first: `tfimg up {}`", team.file),
        )
        .into());
    };
    let mut files = BuildContext::default();
    files.add_bytes(PASSWORD_FILE, 0o600, password.to_vec());
    files.set_owner(0, 0);
    let mut tar = Vec::new();
    files.write_tar(&mut tar)?;
    crate::app::gateway::upload(engine, &found.id, FOLDER, &tar).await?;
    let mut output = String::new();
    let command = [
        "python3".to_string(),
        format!("{SHARE}/{PASSWD}"),
        member.to_string(),
    ];
    let code = engine
        .exec(&found.id, &command, "0:0", |chunk| match chunk {
            OutputChunk::Stdout(bytes) | OutputChunk::Stderr(bytes) => {
                output.push_str(&String::from_utf8_lossy(&bytes))
            }
        })
        .await?;
    if code != 0 {
        anyhow::bail!("the hub did not set the password: {}", output.trim());
    }
    let login = team.hub.as_ref().map(Hub::login_url).unwrap_or_default();
    Ok(format!(
        "`{member}` signs in at {login} with it, then changes it at /hub/change-password"
    ))
}

mod image;

pub use image::{image, member_image, member_moving_tag};

#[cfg(test)]
mod tests;
