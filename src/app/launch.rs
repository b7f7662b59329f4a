//! THE launcher (`Launcher::of(session)`): one container from a `LaunchRequest`, whether
//! `tfimg run`, a team member, `serve`, a team's gateway or a sweep's trial asked for it.
//! `prepare` checks everything first and creates nothing (mounts against the image's
//! home and workdir, GPUs against the host and the daemon, the token, the SSH key);
//! `start` then makes the missing mount folders, chooses host ports, creates the
//! container, reads the GPU claims again and lets its GPUs go to a launch that claimed
//! them first (`reserve`), copies the `--sync` sources in (`files`), starts it, retries
//! a port another process took in the meantime, and on a remote engine carries its
//! ports to this machine (`tunnels`). A container that never ran (or whose tunnel could
//! not be made) is removed, and so are the folders made for it.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use crate::app::gpu_host;
use crate::app::gpu_ledger::GpuLedger;
use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers, Daemon, Images, Tunnels};
use crate::engine::{EngineError, StartFailure};
use crate::host::prelude::{Confined, Gpus, Identity, Ports, Secrets, Trust};
use crate::host::HostError;
use crate::host::{Host, NvidiaFacts, SshKey};
use crate::input::InputError;
use crate::labels;
use crate::notice::Notice;
use crate::plan::gpus::share::{self, Holder};
use crate::plan::gpus::{self, GpuMode, GpuPlan, GpuSelection};
use crate::plan::sync::SyncPlan;
use crate::plan::{self, LaunchPlan};
use crate::spec::resolved::home_folder;
use crate::spec::syntax::docker_name_char;
use crate::spec::Service;
use files::Files;
use folders::{check_mounts, make_mount_folders, MadeFolders};
use input::{choose_ports, chosen, release};
use reserve::Standing;

pub use crate::plan::{LaunchRequest, SshSource, Target, TunnelMode};
pub use folders::make_folders;

/// Times a launch may let its GPUs go to launches that claimed them first (`reserve`).
pub const GPU_ROUNDS: usize = 20;

/// THE launcher of one session: what `run`, `up`, `serve`, a team's gateway and a
/// sweep's trials launch through. `check_before_build` (what is refused before the image
/// is built or found), `prepare` (everything checked, nothing created), then `start`.
pub struct Launcher<'a, E: ?Sized, H: ?Sized> {
    session: Session<'a, E, H>,
}

impl<E: ?Sized, H: ?Sized> Clone for Launcher<'_, E, H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: ?Sized, H: ?Sized> Copy for Launcher<'_, E, H> {}

impl<'a, E, H> Launcher<'a, E, H> {
    /// The launcher of `session`'s engine and host.
    pub fn of(session: Session<'a, E, H>) -> Self {
        Launcher { session }
    }

    /// Mounts refused on an engine on another host, GPUs refused on a machine without a
    /// driver, before anything is built; the facts of this machine's NVIDIA host when GPUs
    /// were asked (for `prepare`).
    pub async fn check_before_build<T>(
        &self,
        request: &LaunchRequest<T>,
    ) -> anyhow::Result<Option<NvidiaFacts>>
    where
        E: Tunnels + Daemon,
        H: Gpus,
    {
        check_before_build(self.session, request).await
    }

    /// GPUs asked explicitly, checked against this machine's driver before a build.
    pub async fn check_requested_gpus(
        &self,
        requested: Option<&GpuSelection>,
    ) -> anyhow::Result<Option<NvidiaFacts>>
    where
        E: Daemon,
        H: Gpus,
    {
        check_requested_gpus(self.session, requested).await
    }

    /// `request` checked without creating anything (see the module's words); `nvidia`:
    /// the facts of the engine's host when the caller has them already.
    pub async fn prepare(
        &self,
        request: LaunchRequest,
        nvidia: Option<NvidiaFacts>,
    ) -> anyhow::Result<Prepared>
    where
        E: Tunnels + Containers + Images + ContainerIo + Daemon,
        H: Secrets + Trust + Gpus + Confined + Identity,
    {
        prepare(self.session, request, nvidia).await
    }

    /// A prepared launch created and (unless `no_start`) started; host ports in `reserved`
    /// are other launches' of this tfimg; `on_created` learns the container's id at once.
    pub async fn start(
        &self,
        prepared: Prepared,
        reserved: &RefCell<BTreeSet<u16>>,
        no_start: bool,
        on_created: impl FnMut(&str),
    ) -> anyhow::Result<Launched>
    where
        E: Containers + Tunnels + ContainerIo + Images + Daemon,
        H: Host,
    {
        start(self.session, prepared, reserved, no_start, on_created).await
    }
}

/// A launch checked against the machine and the daemon; nothing exists yet.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub request: LaunchRequest,
    /// The container's name: the request's, or one the launcher chose.
    pub name: String,
    pub gpus: GpuSelection,
    gpus_by_default: bool,
    gpu_plan: GpuPlan,
    jupyter_token: Option<String>,
    ssh: Option<SshKey>,
    known_hosts: Option<PathBuf>,
    files: Files,
    /// What to tell the user before the container starts (the GPU choice, the syncs).
    pub notes: Vec<Notice>,
    /// The NVIDIA facts of the engine's host, when GPUs were involved.
    pub nvidia: Option<NvidiaFacts>,
}

impl Prepared {
    /// The container this launch describes, for another to create when asked (a team
    /// hub's spawner, when the member starts her server): its GPUs as prepared, no host
    /// ports (the hub reaches it on her network). Its mount folders are the caller's to
    /// make (`make_folders`).
    pub fn handed_over(&self) -> LaunchPlan {
        plan::launch(
            &self.request,
            &chosen(self, Vec::new(), &self.gpus, &self.gpu_plan),
        )
    }

    /// The GPUs this launch will hold once it starts, for the launches prepared after it.
    pub fn holder(&self) -> Option<Holder> {
        let nvidia = self.nvidia.as_ref()?;
        let mut container_labels: std::collections::HashMap<String, String> = self
            .request
            .extra_labels
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        container_labels.insert(labels::GPUS.to_string(), self.gpus.describe());
        share::holder(&self.name, "running", &container_labels, &nvidia.gpus)
    }
}

/// A started (or, with `no_start`, created) container.
#[derive(Debug, Clone)]
pub struct Launched {
    pub id: String,
    pub name: String,
    pub plan: LaunchPlan,
    /// tfimg's known_hosts, for an SSH service (its host key is pinned there when ready).
    pub known_hosts: Option<PathBuf>,
    /// What `--sync-back` copies back.
    pub syncs: Vec<SyncPlan>,
    /// What happened on the way (the daemon refused the default GPUs).
    pub notes: Vec<Notice>,
    /// On a remote engine: the tunnel its ports reach this machine through.
    pub tunnel: Option<crate::app::tunnels::TunnelRecord>,
}

/// Checks a launch without creating anything: every mount, the GPUs against the host and
/// the daemon, then the token and key it will carry, and what it copies in. `nvidia`: the
/// facts of the engine's host when the caller already has them (`check_before_build`, a
/// sweep's trials, a team's members after the first); `None`: learnt here when GPUs are
/// involved.
async fn prepare(
    session: Session<
        '_,
        impl Tunnels + Containers + Images + ContainerIo + Daemon,
        impl Secrets + Trust + Gpus + Confined + Identity,
    >,
    mut request: LaunchRequest,
    nvidia: Option<NvidiaFacts>,
) -> anyhow::Result<Prepared> {
    let Session { engine, host, .. } = session;
    let name = match &request.name {
        Some(name) => name.clone(),
        None => container_name(host, &request.target.spec_name)?,
    };
    request.name = Some(name.clone());
    if request.share_gpus {
        request
            .extra_labels
            .insert(labels::GPUS_SHARED.to_string(), "true".to_string());
    }
    if let Some(user) = host.user_name() {
        request
            .extra_labels
            .entry(labels::OWNER.to_string())
            .or_insert(user);
    }
    request.ids = service_ids(&request);
    let jupyter = request.target.serves_jupyter(&request.command);
    if let Some(seconds) = request.idle_kernels.filter(|_| jupyter) {
        let variable = labels::IDLE_KERNELS_VARIABLE.to_string();
        request.env.push((variable, seconds.to_string()));
    }
    let watched = request.target.watches_idle(&request.command);
    if let Some(seconds) = request.idle_containers.filter(|_| watched) {
        let variable = labels::IDLE_CONTAINERS_VARIABLE.to_string();
        request.env.push((variable, seconds.to_string()));
        request
            .extra_labels
            .insert(labels::IDLE_CONTAINERS.to_string(), seconds.to_string());
        // The watch stops the container with exit code 0, which `on-failure` leaves
        // stopped; stopped from outside it exits as a signal would, so it still comes back
        // with the daemon. `always` and `unless-stopped` would start it again at once.
        if matches!(
            request.resources.restart,
            Some(plan::RestartPolicy::Always | plan::RestartPolicy::UnlessStopped)
        ) {
            request.resources.restart = Some(plan::RestartPolicy::OnFailure(None));
        }
    }
    let target = &request.target;
    let home = if target.tfimg_image {
        home_folder(&target.image_user)
    } else {
        String::new()
    };
    check_mounts_are_local(engine, &request)?;
    check_mounts(&request, &home)?;
    let mut notes = folders::unwritable_mounts(host, &request);
    if !request.mounts.is_empty() {
        notes.extend(crate::plan::sync::mounts_on_tcp_note(engine.endpoint()));
    }
    let (gpus, nvidia) = choose_gpus(session, &request, nvidia, &mut notes).await?;
    let gpus_by_default = request.gpus.is_none() && !gpus.is_none();
    let gpu_plan = plan_gpus(engine, request.gpu_mode, &gpus).await?;
    let (jupyter_token, ssh) = credentials(host, &request)?;
    let known_hosts = ssh.as_ref().map(|_| host.known_hosts()).transpose()?;
    let files = files::prepare_files(session, &request, &home, &mut notes).await?;
    Ok(Prepared {
        request,
        name,
        gpus,
        gpus_by_default,
        gpu_plan,
        jupyter_token,
        ssh,
        known_hosts,
        files,
        notes,
        nvidia,
    })
}

/// How the daemon is asked for `gpus`: `mode`, where `Auto` becomes CDI when the daemon
/// knows it and the GPUs are named.
pub(crate) async fn plan_gpus(
    engine: &impl Daemon,
    mode: GpuMode,
    gpus: &GpuSelection,
) -> Result<GpuPlan, InputError> {
    let mode = match mode {
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
    gpus.plan(mode)
}

/// The ids the request's container takes for its service (`plan::user::for_service`: an
/// SSH service never runs at uid 0 without asking for root).
fn service_ids(request: &LaunchRequest) -> Option<(u32, u32)> {
    let service = request.target.service;
    plan::user::for_service(request.ids, service, !request.command.is_empty())
}

/// The token of a Jupyter service and the key of an SSH service (none when a command
/// replaces the service).
fn credentials(
    host: &impl Secrets,
    request: &LaunchRequest,
) -> anyhow::Result<(Option<String>, Option<SshKey>)> {
    let target = &request.target;
    let serves = request.command.is_empty();
    let jupyter_token = target
        .serves_jupyter(&request.command)
        .then(|| host.random_hex(24))
        .transpose()?;
    let ssh = match (&request.ssh, target.service == Service::Ssh && serves) {
        (_, false) => None,
        (SshSource::User(explicit), true) => Some(host.ssh_key(explicit.as_deref())?),
        (SshSource::Member { team, member }, true) => Some(host.member_ssh_key(team, member)?),
    };
    Ok((jupyter_token, ssh))
}

/// The launch's GPUs: the request's, after the doctor's GPU checks (so a known problem is
/// explained before the daemon's error: an unknown device, a driver too old for the
/// image's CUDA, no toolkit); without one, `plan::gpus::choose` on the facts of the
/// engine's host. Those facts too, when GPUs are involved at all: without `--gpus` and a
/// GPU image nothing is asked (a CPU run on a remote engine pays nothing).
async fn choose_gpus(
    session: Session<'_, impl Containers + Images + Daemon, impl Gpus + Secrets>,
    request: &LaunchRequest,
    known: Option<NvidiaFacts>,
    notes: &mut Vec<Notice>,
) -> anyhow::Result<(GpuSelection, Option<NvidiaFacts>)> {
    let Session { engine, .. } = session;
    let target = &request.target;
    let requested = request.gpus.as_ref();
    let explicit = requested.filter(|requested| !requested.is_none());
    let default = gpus::needs_host_facts(requested, target.gpu_image);
    if explicit.is_none() && !default {
        let choice = gpus::choose(requested, target.gpu_image, &target.spec_name, None, None);
        return Ok((choice.selection, None));
    }
    let nvidia = match known {
        Some(known) => known,
        None => gpu_host::engine_nvidia(session, std::slice::from_ref(&target.image)).await,
    };
    let info = engine.info().await?;
    let engine_host = nvidia.probe.as_ref().map(|probe| probe.engine.as_str());
    let mut ledger = GpuLedger::read(engine, &nvidia, |container| {
        Some(&container.name) == request.name.as_ref()
    })
    .await?;
    for pending in &request.pending_holders {
        ledger.hold(pending.clone());
    }
    let sharing = ledger.sharing(request.share_gpus);
    let mut allocated = None;
    if let Some(requested) = explicit {
        refuse_gpus_without_driver(requested, &nvidia)?;
        if nvidia.driver.is_some() {
            gpus::check_against_host(requested, &nvidia.gpus, engine_host)?;
            if !nvidia.gpus.is_empty() {
                allocated = Some(sharing.allocate(requested)?);
            }
        }
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
    let facts = default.then(|| crate::doctor::gpu_host(&nvidia, &info, target.gpu.as_ref()));
    let choice = gpus::choose(
        allocated.as_ref().or(requested),
        target.gpu_image,
        &target.spec_name,
        facts.as_ref(),
        Some(&sharing),
    );
    notes.extend(choice.note);
    Ok((choice.selection, Some(nvidia)))
}

/// Mounts name folders of this machine: an engine on another host has none of them, so
/// it refuses the first of `request`'s, before anything is built.
pub fn check_mounts_are_local<T>(
    engine: &(impl Tunnels + Daemon),
    request: &LaunchRequest<T>,
) -> Result<(), InputError> {
    refuse_local_folders(
        engine.remote_endpoint(),
        request
            .mounts
            .iter()
            .map(|mount| format!("`--mount {}`", mount.text)),
    )
}

/// The one refusal of folders of this machine on an engine on another host (`remote`, its
/// URL): the first of `folders`, each said as its user wrote it and where
/// (`` `--mount ./data` ``, a team member's mount, a sweep file's `mounts:`).
pub fn refuse_local_folders(
    remote: Option<&str>,
    folders: impl IntoIterator<Item = String>,
) -> Result<(), InputError> {
    let Some(endpoint) = remote else {
        return Ok(());
    };
    match folders.into_iter().next() {
        Some(what) => Err(crate::plan::sync::folder_on_remote(&what, endpoint)),
        None => Ok(()),
    }
}

/// What the launcher refuses about `request` before its image is built or found: mounts
/// on an engine on another host, and GPUs asked of a machine without a driver. The facts
/// of this machine's NVIDIA host when GPUs were asked (for `prepare`).
async fn check_before_build<T>(
    session: Session<'_, impl Tunnels + Daemon, impl Gpus>,
    request: &LaunchRequest<T>,
) -> anyhow::Result<Option<NvidiaFacts>> {
    check_mounts_are_local(session.engine, request)?;
    check_requested_gpus(session, request.gpus.as_ref()).await
}

/// The facts of this machine's NVIDIA host for an explicit `--gpus` (anything but
/// `none`), read before anything is built: a request no driver can answer is refused here
/// (see [`refuse_gpus_without_driver`]). `None` when nothing was asked or the engine is on
/// another host (its probe runs with the launch).
async fn check_requested_gpus(
    session: Session<'_, impl Daemon, impl Gpus>,
    requested: Option<&GpuSelection>,
) -> anyhow::Result<Option<NvidiaFacts>> {
    let Session { engine, host, .. } = session;
    let Some(requested) = requested.filter(|requested| !requested.is_none()) else {
        return Ok(None);
    };
    if !engine.on_this_machine() {
        return Ok(None);
    }
    let nvidia = host.nvidia();
    refuse_gpus_without_driver(requested, &nvidia)?;
    Ok(Some(nvidia))
}

/// GPUs asked of a machine where no NVIDIA driver answers: a fact of this host (exit 2),
/// said as `tfimg doctor` says it, rather than the daemon's "could not select device
/// driver" (which blames the Container Toolkit) once the container exists. Only for this
/// machine's facts: another host's come from a probe, whose failure proves no absence.
pub fn refuse_gpus_without_driver(
    requested: &GpuSelection,
    nvidia: &NvidiaFacts,
) -> Result<(), HostError> {
    if nvidia.driver.is_some() || nvidia.probe.is_some() {
        return Ok(());
    }
    Err(HostError {
        message: format!(
            "`--gpus {}`: this host has no NVIDIA GPU or driver (no working `nvidia-smi`, no /proc/driver/nvidia/version)",
            requested.describe()
        ),
        hint: "drop `--gpus` to run on the CPU (a GPU image then says it runs there), or run on a host with an NVIDIA GPU and its driver; `tfimg doctor` checks this one".to_string(),
    })
}

/// Creates and (unless `no_start`) starts a prepared launch. Host ports in `reserved`
/// are someone else's in this same tfimg (a team's other members); the ones chosen here
/// join them. `on_created` learns the container's id as soon as it exists, so an
/// interrupted caller can remove it.
async fn start(
    session: Session<'_, impl Containers + Tunnels + ContainerIo + Images + Daemon, impl Host>,
    prepared: Prepared,
    reserved: &RefCell<BTreeSet<u16>>,
    no_start: bool,
    mut on_created: impl FnMut(&str),
) -> anyhow::Result<Launched> {
    let Session { engine, host, .. } = session;
    let mut gpus = prepared.gpus.clone();
    let mut gpu_plan = prepared.gpu_plan.clone();
    let request = &prepared.request;
    let mut notes = Vec::new();
    let mut folders: Option<MadeFolders<'_, _>> = None;
    let mut attempt = 0;
    let mut rounds = 0;
    let mut ignored = BTreeSet::new();
    loop {
        attempt += 1;
        let ports = choose_ports(host, request, engine.tunnels_ports(), reserved)?;
        if folders.is_none() {
            folders = Some(make_mount_folders(host, request, &mut notes)?);
        }
        let plan = plan::launch(request, &chosen(&prepared, ports, &gpus, &gpu_plan));
        let id = create(engine, &plan).await?;
        on_created(&id);
        let kin = request.claim_beside.as_ref();
        let standing = match prepared.nvidia.as_ref().filter(|_| !gpus.is_none()) {
            Some(nvidia) => reserve::settle(session, nvidia, &id, kin, &mut ignored).await,
            None => Ok(Standing::Kept),
        };
        let let_go = match standing {
            Ok(Standing::Kept) => None,
            Ok(Standing::LetGo { holders, racers }) => Some((holders, racers)),
            Err(error) => {
                let _ = engine.remove_container(&id, true).await;
                release(reserved, &plan);
                return Err(error.into());
            }
        };
        if let Some((holders, racers)) = let_go {
            // Another launch claimed a GPU first: this one lets go and chooses again
            // once that one has started.
            let _ = engine.remove_container(&id, true).await;
            release(reserved, &plan);
            rounds += 1;
            if rounds > GPU_ROUNDS {
                return Err(HostError {
                    message: format!(
                        "the GPUs chosen for `{}` were taken by other launches {GPU_ROUNDS} times in a row (last by `{}`)",
                        prepared.name,
                        holders.join("`, `")
                    ),
                    hint: "try again; `tfimg ps --gpus` shows who holds what".to_string(),
                }
                .into());
            }
            reserve::wait_for(session, &racers, &mut ignored).await?;
            if kin.is_some() {
                return Err(GpusClaimed { holders }.into());
            }
            let before = gpus_text(&gpus);
            (gpus, gpu_plan) = choose_again(session, &prepared).await?;
            notes.push(Notice::status(format!(
                "{before} was taken by `{}` as `{}` started: it runs on {} instead",
                holders.join("`, `"),
                prepared.name,
                gpus_text(&gpus)
            )));
            continue;
        }
        if let Err(error) = files::copy_in(engine, &prepared.files, &id).await {
            let _ = engine.remove_container(&id, true).await;
            release(reserved, &plan);
            return Err(error);
        }
        let failure = if no_start {
            None
        } else {
            engine.start(&id).await.err()
        };
        let Some(failure) = failure else {
            let opened = if no_start {
                Ok((plan.clone(), None))
            } else {
                tunnels::open(session, request, &id, &plan, reserved).await
            };
            let (plan, tunnel) = match opened {
                Ok(opened) => opened,
                Err(error) => {
                    let _ = engine.remove_container(&id, true).await;
                    release(reserved, &plan);
                    return Err(error);
                }
            };
            if let Some(folders) = folders.take() {
                folders.keep();
            }
            // Said once the container exists, never in front of a refusal.
            notes.extend(folders::open_to_other_accounts(host, request));
            notes.extend(plan::ports::moved(&plan.ports, &request.port_requests));
            return Ok(Launched {
                id,
                name: prepared.name.clone(),
                known_hosts: prepared.known_hosts.clone(),
                syncs: request.sync_plans(),
                plan,
                notes,
                tunnel,
            });
        };
        // A container that never ran is never left behind.
        let _ = engine.remove_container(&id, true).await;
        release(reserved, &plan);
        match next_attempt(failure, attempt, &prepared, &gpus)? {
            Retry::ElsewhereSoon => {
                // Racers that lost together should not pick again in lockstep.
                let jitter = host
                    .random_hex(1)
                    .ok()
                    .and_then(|hex| u64::from_str_radix(&hex, 16).ok())
                    .unwrap_or(0);
                host.sleep(Duration::from_millis(jitter)).await;
            }
            Retry::WithoutGpus(note) => {
                notes.push(note);
                gpus = GpuSelection::None;
                gpu_plan = GpuPlan::None;
            }
        }
    }
}

/// The GPUs of a launch whose first choice another launch took (see `reserve`): chosen
/// again as `prepare` chose them, against the holders now.
async fn choose_again(
    session: Session<'_, impl Containers + Images + Daemon, impl Gpus + Secrets>,
    prepared: &Prepared,
) -> anyhow::Result<(GpuSelection, GpuPlan)> {
    let Session { engine, .. } = session;
    let request = &prepared.request;
    let nvidia = prepared.nvidia.clone();
    let (gpus, _) = choose_gpus(session, request, nvidia, &mut Vec::new()).await?;
    let gpu_plan = plan_gpus(engine, request.gpu_mode, &gpus).await?;
    Ok((gpus, gpu_plan))
}

/// `GPU 0`, `GPUs 0, 1`, `every GPU`.
fn gpus_text(gpus: &GpuSelection) -> String {
    match gpus {
        GpuSelection::None => "no GPU".to_string(),
        GpuSelection::All => "every GPU".to_string(),
        GpuSelection::Count(count) => format!("{count} GPUs"),
        GpuSelection::Devices(devices) if devices.len() == 1 => format!("GPU {}", devices[0]),
        GpuSelection::Devices(devices) => format!("GPUs {}", devices.join(", ")),
    }
}

/// Creates the planned container; a name in use is the user's to change.
async fn create(engine: &impl Containers, plan: &LaunchPlan) -> anyhow::Result<String> {
    match engine.create(plan).await {
        Ok(id) => Ok(id),
        Err(EngineError::Failed { message, .. }) if message.contains("is already in use") => {
            Err(InputError::new(
                format!("a container named `{}` already exists", plan.name),
                format!(
                    "choose another `--name`, or remove it: `tfimg rm -f {}`",
                    plan.name
                ),
            )
            .into())
        }
        Err(error) => Err(error.into()),
    }
}

/// A launch with `claim_beside` whose GPUs another container claimed first: nothing of
/// it is left, and those containers have started (or gone) by now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpusClaimed {
    pub holders: Vec<String>,
}

impl std::fmt::Display for GpusClaimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the GPUs were claimed first by `{}`",
            self.holders.join("`, `")
        )
    }
}

impl std::error::Error for GpusClaimed {}

/// How to try again after a failed start.
enum Retry {
    /// Another process took a chosen host port: choose again after a short, random wait.
    ElsewhereSoon,
    /// The daemon refused the GPUs the default asked for: go on without them, saying so.
    WithoutGpus(Notice),
}

/// Whether (and how) a failed start is tried again, or the error that ends the launch.
fn next_attempt(
    failure: StartFailure,
    attempt: usize,
    prepared: &Prepared,
    gpus: &GpuSelection,
) -> anyhow::Result<Retry> {
    let request = &prepared.request;
    match failure {
        StartFailure::PortTaken(message)
            if attempt < crate::plan::ports::PORT_ATTEMPTS
                && chosen_port_was_taken(request, &message) =>
        {
            Ok(Retry::ElsewhereSoon)
        }
        StartFailure::PortTaken(message) => Err(InputError::new(
            format!("a published port is taken: {message}"),
            "choose other host ports with `-p HOST:CONTAINER`",
        )
        .into()),
        // The host looked ready, yet the daemon has no NVIDIA device driver (installed but
        // Docker not restarted): the default gives way.
        StartFailure::GpuDriver(message) if prepared.gpus_by_default && !gpus.is_none() => {
            Ok(Retry::WithoutGpus(gpus::daemon_refused_note(
                &request.target.spec_name,
                &message,
            )))
        }
        StartFailure::GpuDriver(message) => Err(EngineError::GpuToolkitMissing { message }.into()),
        StartFailure::Engine(error) => Err(error.into()),
    }
}

/// Whether the port the daemon could not bind is one tfimg chose (so choosing again helps):
/// the daemon's message names it (`Bind for 127.0.0.1:6006 failed`); when it does not,
/// only a launch whose every port tfimg chose is tried again.
fn chosen_port_was_taken(request: &LaunchRequest, message: &str) -> bool {
    let named: Vec<u16> = request
        .port_requests
        .iter()
        .filter_map(|r| r.host)
        .collect();
    let taken = message
        .split("Bind for ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|address| address.rsplit(':').next())
        .and_then(|port| port.parse::<u16>().ok());
    match taken {
        Some(port) => !named.contains(&port),
        None => request.port_requests.is_empty(),
    }
}

/// The plan a request becomes without asking a daemon (the exports): its mounts checked,
/// GPUs as the request gives them (device requests), ports chosen on this machine around
/// `reserved`, a fresh token or the member's key. Creates nothing.
pub fn plan_without_engine(
    host: &(impl Secrets + Ports),
    request: LaunchRequest,
    reserved: &RefCell<BTreeSet<u16>>,
) -> anyhow::Result<LaunchPlan> {
    let mut request = request;
    let name = match &request.name {
        Some(name) => name.clone(),
        None => container_name(host, &request.target.spec_name)?,
    };
    request.name = Some(name.clone());
    request.ids = service_ids(&request);
    check_mounts(&request, &home_folder(&request.target.image_user))?;
    let gpus = request.gpus.clone().unwrap_or(GpuSelection::None);
    let gpu_plan = gpus.plan(GpuMode::Devices)?;
    let (jupyter_token, ssh) = credentials(host, &request)?;
    let ports = choose_ports(host, &request, false, reserved)?;
    let known_hosts = ssh.as_ref().map(|_| host.known_hosts()).transpose()?;
    let prepared = Prepared {
        request,
        name,
        gpus: gpus.clone(),
        gpus_by_default: false,
        gpu_plan: gpu_plan.clone(),
        jupyter_token,
        ssh,
        known_hosts,
        files: Files::default(),
        notes: Vec::new(),
        nvidia: None,
    };
    Ok(plan::launch(
        &prepared.request,
        &chosen(&prepared, ports, &gpus, &gpu_plan),
    ))
}

/// The container name `tfimg run` picks: the spec's name (a spec path's stem) and a
/// random suffix.
pub fn container_name(host: &impl Secrets, spec_name: &str) -> std::io::Result<String> {
    let cleaned: String = spec_name
        .rsplit('/')
        .next()
        .unwrap_or(spec_name)
        .chars()
        .map(|c| if docker_name_char(c) { c } else { '-' })
        .collect();
    let prefix = cleaned.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    Ok(format!("{prefix}-{}", host.random_hex(3)?))
}

mod files;
mod folders;
#[cfg(test)]
mod gpu_tests;
mod input;
mod reserve;
#[cfg(test)]
mod reserve_tests;
#[cfg(test)]
mod tests;
mod tunnels;
