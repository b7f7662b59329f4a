//! THE launcher: one container from a `LaunchRequest`, whether `tfimg run` or a team
//! member asked for it. `prepare` checks everything first and creates nothing (mounts
//! against the image's home and workdir, GPUs against the host and the daemon, the
//! token, the SSH key); `start` then makes the missing mount folders, chooses host
//! ports, creates and starts the container, and retries a port another process took in
//! the meantime. A container that never ran is removed, and so are the folders made for
//! it.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::{Engine, EngineError, StartFailure};
use crate::host::HostError;
use crate::host::{Host, SshKey};
use crate::input::InputError;
use crate::plan::gpus::{self, GpuMode, GpuPlan, GpuSelection};
use crate::plan::mounts::{self, MountPlan};
use crate::plan::ports::{self, PortRequest};
use crate::plan::{self, LaunchInput, LaunchPlan};
use crate::spec::resolved::{home_folder, GpuStack};
use crate::spec::Service;

/// Attempts when another process takes a chosen port between planning and starting (20
/// `tfimg run` at once all want 8888 first; each lost race moves to a kernel-chosen port).
pub const PORT_ATTEMPTS: usize = 10;

/// What runs: a spec's image, or an image as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub spec_name: String,
    pub image: String,
    pub service: Service,
    pub image_user: String,
    pub workdir: String,
    pub ports: BTreeMap<String, u16>,
    pub gpu_image: bool,
    /// The spec's CUDA stack (for the driver check); unknown for plain images.
    pub gpu: Option<GpuStack>,
    /// Built by tfimg (its entrypoint maps the user).
    pub tfimg_image: bool,
}

/// Where the key a container's sshd admits comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SshSource {
    /// `--ssh-key PATH`, else the user's own key, else one tfimg makes.
    User(Option<PathBuf>),
    /// A team member's own key pair.
    Member { team: String, member: String },
}

/// Everything one launch needs, from `run`'s options or a team member.
#[derive(Debug, Clone)]
pub struct LaunchRequest {
    pub target: Target,
    pub name: String,
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Each mount with the text it was written as (for messages).
    pub mounts: Vec<(MountPlan, String)>,
    /// Team mounts under a mounts root may need their parent folders made too.
    pub make_mount_parents: bool,
    pub port_requests: Vec<PortRequest>,
    pub public: bool,
    /// `None`: a GPU image takes every GPU when the host can give them (run's default).
    pub gpus: Option<GpuSelection>,
    pub gpu_mode: GpuMode,
    /// Host uid/gid the container user takes; `None` runs as root (`--user root`).
    pub ids: Option<(u32, u32)>,
    pub ssh: SshSource,
    pub memory: Option<i64>,
    pub nano_cpus: Option<i64>,
    pub shm_size: i64,
    pub restart: Option<plan::RestartPolicy>,
    pub extra_labels: BTreeMap<String, String>,
}

/// A launch checked against the machine and the daemon; nothing exists yet.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub request: LaunchRequest,
    pub gpus: GpuSelection,
    gpus_by_default: bool,
    gpu_plan: GpuPlan,
    jupyter_token: Option<String>,
    ssh: Option<SshKey>,
    known_hosts: Option<PathBuf>,
    /// What to tell the user before the container starts (the GPU choice).
    pub notes: Vec<String>,
}

/// A started (or, with `no_start`, created) container.
#[derive(Debug, Clone)]
pub struct Launched {
    pub id: String,
    pub name: String,
    pub plan: LaunchPlan,
    /// tfimg's known_hosts, for an SSH service (its host key is pinned there when ready).
    pub known_hosts: Option<PathBuf>,
    /// What happened on the way (the daemon refused the default GPUs).
    pub notes: Vec<String>,
}

/// Checks a launch without creating anything: every mount, the GPUs against the host and
/// the daemon, then the token and key it will carry.
pub async fn prepare(
    engine: &impl Engine,
    host: &impl Host,
    request: LaunchRequest,
) -> anyhow::Result<Prepared> {
    let target = &request.target;
    let home = if target.tfimg_image {
        home_folder(&target.image_user)
    } else {
        String::new()
    };
    check_mounts(host, &request, &home)?;
    let mut notes = Vec::new();
    let gpus = choose_gpus(engine, host, &request, &mut notes).await?;
    let gpus_by_default = request.gpus.is_none() && !gpus.is_none();
    let mode = match request.gpu_mode {
        _ if gpus.is_none() => GpuMode::Devices,
        // CDI names devices; a count always goes to the nvidia device driver.
        GpuMode::Auto
            if !matches!(gpus, GpuSelection::Count(_)) && engine.cdi_supported().await =>
        {
            GpuMode::Cdi
        }
        GpuMode::Auto => GpuMode::Devices,
        other => other,
    };
    let gpu_plan = gpus.plan(mode)?;
    let (jupyter_token, ssh) = credentials(host, &request)?;
    let known_hosts = ssh.as_ref().map(|_| host.known_hosts());
    Ok(Prepared {
        request,
        gpus,
        gpus_by_default,
        gpu_plan,
        jupyter_token,
        ssh,
        known_hosts,
        notes,
    })
}

/// Every mount: not above the image's home or workdir, its source there or makeable.
fn check_mounts(host: &impl Host, request: &LaunchRequest, home: &str) -> Result<(), InputError> {
    for (mount, text) in &request.mounts {
        mounts::check_not_above(mount, text, home, &request.target.workdir)?;
        check_mount_source(host, mount, text, request.make_mount_parents)?;
    }
    Ok(())
}

/// The token of a Jupyter service and the key of an SSH service (none when a command
/// replaces the service).
fn credentials(
    host: &impl Host,
    request: &LaunchRequest,
) -> anyhow::Result<(Option<String>, Option<SshKey>)> {
    let target = &request.target;
    let serves = request.command.is_empty();
    let jupyter_token = (target.service == Service::Jupyter && serves)
        .then(|| host.random_hex(24))
        .transpose()?;
    let ssh = match (&request.ssh, target.service == Service::Ssh && serves) {
        (_, false) => None,
        (SshSource::User(explicit), true) => Some(host.ssh_key(explicit.as_deref())?),
        (SshSource::Member { team, member }, true) => Some(host.member_ssh_key(team, member)?),
    };
    Ok((jupyter_token, ssh))
}

/// The error a missing source would give, creating nothing: a missing path that names a
/// file, or a missing parent folder (unless the launch makes parents).
fn check_mount_source(
    host: &impl Host,
    mount: &MountPlan,
    text: &str,
    parents_made: bool,
) -> Result<(), InputError> {
    if host.exists(&mount.source) {
        return Ok(());
    }
    let parent_exists = parents_made
        || mount
            .source
            .parent()
            .is_some_and(|parent| host.exists(parent));
    mounts::missing_source_problem(mount, text, parent_exists).map_or(Ok(()), Err)
}

/// The launch's GPUs: the request's, after the doctor's GPU checks (so a known problem is
/// explained before the daemon's error: an unknown device, a driver too old for the
/// image's CUDA, no toolkit); without one, `plan::gpus::choose` on the host's facts.
async fn choose_gpus(
    engine: &impl Engine,
    host: &impl Host,
    request: &LaunchRequest,
    notes: &mut Vec<String>,
) -> anyhow::Result<GpuSelection> {
    let target = &request.target;
    let requested = request.gpus.as_ref();
    if let Some(requested) = requested.filter(|requested| !requested.is_none()) {
        let nvidia = host.nvidia();
        if nvidia.driver.is_some() {
            gpus::check_against_host(requested, &nvidia.gpus)?;
        }
        let info = engine.info().await?;
        if let Some(problem) =
            crate::doctor::gpu_launch_problem(&nvidia, &info, target.gpu.as_ref())
        {
            return Err(HostError {
                message: format!("cannot give GPUs to the container: {}", problem.summary),
                hint: problem
                    .fix
                    .unwrap_or_else(|| "run `tfimg doctor` for details".to_string()),
            }
            .into());
        }
    }
    let facts = if gpus::needs_host_facts(requested, target.gpu_image) {
        let info = engine.info().await?;
        Some(crate::doctor::gpu_host(
            &host.nvidia(),
            &info,
            target.gpu.as_ref(),
        ))
    } else {
        None
    };
    let choice = gpus::choose(
        requested,
        target.gpu_image,
        &target.spec_name,
        facts.as_ref(),
    );
    notes.extend(choice.note);
    Ok(choice.selection)
}

/// Creates and (unless `no_start`) starts a prepared launch. Host ports in `reserved`
/// are someone else's in this same tfimg (a team's other members); the ones chosen here
/// join them. `on_created` learns the container's id as soon as it exists, so an
/// interrupted caller can remove it.
pub async fn start(
    engine: &impl Engine,
    host: &impl Host,
    prepared: Prepared,
    reserved: &RefCell<BTreeSet<u16>>,
    no_start: bool,
    mut on_created: impl FnMut(&str),
) -> anyhow::Result<Launched> {
    let mut gpus = prepared.gpus.clone();
    let mut gpu_plan = prepared.gpu_plan.clone();
    let request = &prepared.request;
    let mut notes = Vec::new();
    let mut folders: Option<MadeFolders<'_, _>> = None;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let ports = choose_ports(host, request, reserved)?;
        if folders.is_none() {
            folders = Some(make_mount_folders(host, request, &mut notes)?);
        }
        let plan = plan::launch(&launch_input(&prepared, ports, &gpus, &gpu_plan));
        let id = match engine.create(&plan).await {
            Ok(id) => id,
            Err(EngineError::Failed { message, .. }) if message.contains("is already in use") => {
                return Err(InputError::new(
                    format!("a container named `{}` already exists", request.name),
                    format!(
                        "choose another `--name`, or remove it: `tfimg rm -f {}`",
                        request.name
                    ),
                )
                .into())
            }
            Err(error) => return Err(error.into()),
        };
        on_created(&id);
        let failure = if no_start {
            None
        } else {
            engine.start(&id).await.err()
        };
        let Some(failure) = failure else {
            if let Some(folders) = folders.take() {
                folders.keep();
            }
            return Ok(Launched {
                id,
                name: request.name.clone(),
                known_hosts: prepared.known_hosts.clone(),
                plan,
                notes,
            });
        };
        // A container that never ran is never left behind.
        let _ = engine.remove_container(&id, true).await;
        release(reserved, &plan);
        match failure {
            StartFailure::PortTaken(_)
                if attempt < PORT_ATTEMPTS && request.port_requests.is_empty() =>
            {
                // Racers that lost together should not pick again in lockstep.
                let jitter = host
                    .random_hex(1)
                    .ok()
                    .and_then(|hex| u64::from_str_radix(&hex, 16).ok())
                    .unwrap_or(0);
                host.sleep(Duration::from_millis(jitter)).await;
            }
            StartFailure::PortTaken(message) => {
                return Err(InputError::new(
                    format!("a published port is taken: {message}"),
                    "choose other host ports with `-p HOST:CONTAINER`",
                )
                .into())
            }
            // The host looked ready, yet the daemon has no NVIDIA device driver (installed
            // but Docker not restarted): the default gives way.
            StartFailure::GpuDriver(message) if prepared.gpus_by_default && !gpus.is_none() => {
                notes.push(gpus::daemon_refused_note(
                    &request.target.spec_name,
                    &message,
                ));
                gpus = GpuSelection::None;
                gpu_plan = GpuPlan::None;
            }
            StartFailure::GpuDriver(message) => {
                return Err(EngineError::GpuToolkitMissing { message }.into())
            }
            StartFailure::Engine(error) => return Err(error.into()),
        }
    }
}

/// The plan a request becomes without asking a daemon (the exports): its mounts checked,
/// GPUs as the request gives them (device requests), ports chosen on this machine around
/// `reserved`, a fresh token or the member's key. Creates nothing.
pub fn plan_without_engine(
    host: &impl Host,
    request: LaunchRequest,
    reserved: &RefCell<BTreeSet<u16>>,
) -> anyhow::Result<LaunchPlan> {
    check_mounts(host, &request, &home_folder(&request.target.image_user))?;
    let gpus = request.gpus.clone().unwrap_or(GpuSelection::None);
    let gpu_plan = gpus.plan(GpuMode::Devices)?;
    let (jupyter_token, ssh) = credentials(host, &request)?;
    let ports = choose_ports(host, &request, reserved)?;
    let known_hosts = ssh.as_ref().map(|_| host.known_hosts());
    let prepared = Prepared {
        request,
        gpus: gpus.clone(),
        gpus_by_default: false,
        gpu_plan: gpu_plan.clone(),
        jupyter_token,
        ssh,
        known_hosts,
        notes: Vec::new(),
    };
    Ok(plan::launch(&launch_input(
        &prepared, ports, &gpus, &gpu_plan,
    )))
}

/// Makes a request's missing mount folders for good (an export's, which Compose would
/// otherwise make as root); what to tell the user.
pub fn make_folders(host: &impl Host, request: &LaunchRequest) -> anyhow::Result<Vec<String>> {
    let mut notes = Vec::new();
    make_mount_folders(host, request, &mut notes)?.keep();
    Ok(notes)
}

/// Host ports for the request's service ports and `-p` requests, avoiding `reserved`;
/// the chosen ones are added to it.
fn choose_ports(
    host: &impl Host,
    request: &LaunchRequest,
    reserved: &RefCell<BTreeSet<u16>>,
) -> Result<Vec<ports::PortPlan>, InputError> {
    let held = reserved.borrow().clone();
    let assigned = ports::assign(
        &request.target.ports,
        &request.port_requests,
        request.public,
        &mut |ip, port| !held.contains(&port) && host.port_is_free(ip, port),
        &mut |ip| {
            (0..64)
                .filter_map(|_| host.any_free_port(ip))
                .find(|port| !held.contains(port))
        },
    )?;
    reserved
        .borrow_mut()
        .extend(assigned.iter().map(|port| port.host));
    Ok(assigned)
}

fn release(reserved: &RefCell<BTreeSet<u16>>, plan: &LaunchPlan) {
    let mut reserved = reserved.borrow_mut();
    for port in &plan.ports {
        reserved.remove(&port.host);
    }
}

fn launch_input(
    prepared: &Prepared,
    ports: Vec<ports::PortPlan>,
    gpus: &GpuSelection,
    gpu_plan: &GpuPlan,
) -> LaunchInput {
    let request = &prepared.request;
    let target = &request.target;
    LaunchInput {
        image: target.image.clone(),
        spec_name: target.spec_name.clone(),
        service: target.service,
        image_user: target.image_user.clone(),
        tfimg_image: target.tfimg_image,
        name: request.name.clone(),
        command: request.command.clone(),
        env: request.env.clone(),
        mounts: request
            .mounts
            .iter()
            .map(|(mount, _)| mount.clone())
            .collect(),
        ports,
        gpus: gpus.clone(),
        gpu: gpu_plan.clone(),
        ids: request.ids,
        jupyter_token: prepared.jupyter_token.clone(),
        ssh_public_key: prepared.ssh.as_ref().map(|key| key.public_key.clone()),
        ssh_identity: prepared
            .ssh
            .as_ref()
            .and_then(|key| key.identity.as_ref())
            .map(|path| path.display().to_string()),
        ssh_known_hosts: prepared
            .known_hosts
            .as_ref()
            .map(|path| path.display().to_string()),
        memory: request.memory,
        nano_cpus: request.nano_cpus,
        shm_size: request.shm_size,
        restart: request.restart,
        extra_labels: request.extra_labels.clone(),
    }
}

/// Makes the request's missing mount folders (owned by the user the container runs as).
fn make_mount_folders<'a, H: Host>(
    host: &'a H,
    request: &LaunchRequest,
    notes: &mut Vec<String>,
) -> anyhow::Result<MadeFolders<'a, H>> {
    let mut made = MadeFolders {
        host,
        folders: Vec::new(),
    };
    for (mount, text) in &request.mounts {
        if host.exists(&mount.source) {
            continue;
        }
        let warning = host
            .make_folder(&mount.source, request.make_mount_parents, request.ids)
            .map_err(|error| {
                InputError::new(
                    format!(
                        "`--mount {text}`: cannot create `{}`: {error}",
                        mount.source.display()
                    ),
                    "create the folder yourself, or mount another one",
                )
            })?;
        notes.extend(warning);
        made.folders.push(mount.source.clone());
    }
    Ok(made)
}

/// Mount folders a launch made. Dropped without `keep` (a failed create or start), the
/// ones still empty are removed: a launch that never started leaves nothing behind.
struct MadeFolders<'a, H: Host> {
    host: &'a H,
    folders: Vec<PathBuf>,
}

impl<H: Host> MadeFolders<'_, H> {
    fn keep(mut self) {
        self.folders.clear();
    }
}

impl<H: Host> Drop for MadeFolders<'_, H> {
    fn drop(&mut self) {
        for folder in &self.folders {
            self.host.remove_empty_folder(folder);
        }
    }
}

/// The container name `tfimg run` picks: the spec's name (a spec path's stem) and a
/// random suffix.
pub fn container_name(host: &impl Host, spec_name: &str) -> std::io::Result<String> {
    let cleaned: String = spec_name
        .rsplit('/')
        .next()
        .unwrap_or(spec_name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let prefix = cleaned.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    Ok(format!("{prefix}-{}", host.random_hex(3)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fake::FakeEngine;
    use crate::host::fake::FakeHost;
    use crate::plan::gpus::HostGpu;
    use crate::spec::Catalog;

    fn target(spec: &str) -> Target {
        let catalog = Catalog::builtin(PathBuf::from("/project"));
        let resolved = crate::spec::resolve(&catalog, spec).unwrap();
        crate::app::run::target_of_spec(&resolved, format!("tfimg/{spec}:2.9.3-0123456789ab"))
    }

    fn request(spec: &str) -> LaunchRequest {
        LaunchRequest {
            target: target(spec),
            name: "lab".to_string(),
            command: Vec::new(),
            env: Vec::new(),
            mounts: Vec::new(),
            make_mount_parents: false,
            port_requests: Vec::new(),
            public: false,
            gpus: None,
            gpu_mode: GpuMode::Auto,
            ids: Some((4321, 4322)),
            ssh: SshSource::User(None),
            memory: None,
            nano_cpus: None,
            shm_size: plan::DEFAULT_SHM,
            restart: None,
            extra_labels: BTreeMap::new(),
        }
    }

    /// Checks and creates in one go: `prepare`, then `start`.
    async fn launch(
        engine: &impl Engine,
        host: &impl Host,
        request: LaunchRequest,
        no_start: bool,
    ) -> anyhow::Result<(Vec<String>, Launched)> {
        let prepared = prepare(engine, host, request).await?;
        let notes = prepared.notes.clone();
        let launched = start(
            engine,
            host,
            prepared,
            &RefCell::new(BTreeSet::new()),
            no_start,
            |_| {},
        )
        .await?;
        Ok((notes, launched))
    }

    fn run<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    /// A host with one GPU, a driver new enough for CUDA 11.8 and the toolkit's hook.
    fn gpu_host() -> FakeHost {
        let mut host = FakeHost::new();
        host.nvidia.driver = Some("535.104.05".to_string());
        host.nvidia.gpus = vec![HostGpu {
            index: 0,
            uuid: "GPU-0f0e".to_string(),
            name: "Tesla T4".to_string(),
            memory_mib: Some(15360),
        }];
        host.nvidia.toolkit_programs = vec!["nvidia-container-runtime-hook".to_string()];
        host
    }

    #[test]
    fn a_notebook_is_created_started_and_reachable_on_its_ports() {
        let (engine, host) = (FakeEngine::new(), FakeHost::new());
        let (notes, launched) = run(launch(&engine, &host, request("cpu-jupyter"), false)).unwrap();
        assert!(notes.is_empty());
        assert_eq!(
            engine.calls(),
            ["create lab".to_string(), format!("start {}", launched.id)]
        );
        assert_eq!(engine.container_names(), ["lab"]);
        let jupyter = &launched.plan.endpoints[0];
        assert_eq!(jupyter.0, "jupyter");
        assert!(jupyter.1.starts_with("http://127.0.0.1:8888/lab?token="));
    }

    #[test]
    fn gpus_the_daemon_refuses_leave_no_container_and_no_folder() {
        let (engine, host) = (FakeEngine::new(), gpu_host());
        engine
            .state
            .borrow_mut()
            .start_failures
            .push_back(StartFailure::GpuDriver(
                "could not select device driver \"nvidia\" with capabilities: [[gpu]]".into(),
            ));
        let mut request = request("gpu-headless");
        request.gpus = Some(GpuSelection::All);
        let source = PathBuf::from("/project/data");
        request.mounts = vec![(
            mounts::parse("./data", &PathBuf::from("/project"), "/tf").unwrap(),
            "./data".to_string(),
        )];
        host.paths.borrow_mut().insert(PathBuf::from("/project"));
        let error = run(launch(&engine, &host, request, false)).unwrap_err();
        assert!(
            matches!(
                error.downcast_ref::<EngineError>(),
                Some(EngineError::GpuToolkitMissing { .. })
            ),
            "{error:#}"
        );
        // It was created with every GPU, then removed; its new folder went with it.
        assert_eq!(engine.calls_to("create").len(), 1);
        assert_eq!(engine.calls_to("remove-container").len(), 1);
        assert!(engine.container_names().is_empty());
        assert_eq!(*host.made.borrow(), std::slice::from_ref(&source));
        assert_eq!(*host.removed.borrow(), [source]);
    }

    #[test]
    fn gpus_a_host_cannot_give_are_refused_before_anything_exists() {
        // A driver and a GPU, but no container toolkit.
        let mut host = gpu_host();
        host.nvidia.toolkit_programs.clear();
        let engine = FakeEngine::new();
        let mut request = request("gpu-headless");
        request.gpus = Some(GpuSelection::All);
        let error = run(launch(&engine, &host, request, false)).unwrap_err();
        assert!(error.downcast_ref::<HostError>().is_some(), "{error:#}");
        assert!(
            error.to_string().starts_with(
                "cannot give GPUs to the container: the NVIDIA container toolkit is missing"
            ),
            "{error}"
        );
        assert!(engine.calls_to("create").is_empty());
    }

    #[test]
    fn a_port_lost_to_another_program_is_chosen_again() {
        let (engine, host) = (FakeEngine::new(), FakeHost::new());
        // Between tfimg's check and the daemon's bind, someone takes 8888.
        host.raced_ports.borrow_mut().insert(8888);
        engine
            .state
            .borrow_mut()
            .start_failures
            .push_back(StartFailure::PortTaken(
                "Bind for 127.0.0.1:8888 failed: port is already allocated".into(),
            ));
        let (_, launched) = run(launch(&engine, &host, request("cpu-jupyter"), false)).unwrap();
        assert_eq!(engine.calls_to("create").len(), 2);
        assert_eq!(engine.calls_to("remove-container").len(), 1);
        assert_eq!(engine.container_names(), ["lab"]);
        let jupyter = launched
            .plan
            .ports
            .iter()
            .find(|port| port.name == "jupyter")
            .unwrap();
        assert_ne!(jupyter.host, 8888, "the retry moved to a free port");
    }

    #[test]
    fn a_port_the_user_named_is_not_retried() {
        let (engine, host) = (FakeEngine::new(), FakeHost::new());
        engine
            .state
            .borrow_mut()
            .start_failures
            .push_back(StartFailure::PortTaken("port is already allocated".into()));
        let mut request = request("cpu-jupyter");
        request.port_requests = vec![PortRequest::parse("8890:8888").unwrap()];
        let error = run(launch(&engine, &host, request, false)).unwrap_err();
        assert!(
            error.to_string().starts_with("a published port is taken"),
            "{error}"
        );
        assert!(engine.container_names().is_empty());
    }

    #[test]
    fn a_gpu_image_takes_every_gpu_by_default_and_gives_way_when_the_daemon_refuses() {
        let (engine, host) = (FakeEngine::new(), gpu_host());
        engine
            .state
            .borrow_mut()
            .start_failures
            .push_back(StartFailure::GpuDriver(
                "could not select device driver".into(),
            ));
        let (notes, launched) =
            run(launch(&engine, &host, request("gpu-headless"), false)).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(launched.plan.gpu, GpuPlan::None);
        assert_eq!(launched.notes.len(), 1, "{:?}", launched.notes);
        assert_eq!(engine.calls_to("create").len(), 2);
    }
}
