//! One launch, as every caller asks for it (`run`'s flags, a team member, a sweep's
//! trial, `serve`, a team's gateway): the one request type between what the user typed
//! and the plan. It is built before the target is known (`LaunchRequest<()>`, what
//! `run`'s flags say) and aimed at one (`on`) once the image is built or found; the
//! launcher then checks it, chooses what only the machine can tell (`Chosen`), and
//! `plan::launch` turns both into the container. Pure data.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::cache::{self, VolumePlan};
use super::gpus::share::Holder;
use super::gpus::{GpuMode, GpuPlan, GpuSelection};
use super::mounts::{MountPlan, MountRequest};
use super::network::NetworkPlan;
use super::ports::{PortPlan, PortRequest};
use super::sync::{SyncPlan, SyncRequest};
use super::Resources;
use crate::labels;
use crate::spec::resolved::GpuStack;
use crate::spec::Service;

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
    /// The image's CUDA compute cache folder (`io.tfimg.cuda-cache`): a GPU container gets
    /// its user's cache volume there.
    pub cuda_cache: Option<String>,
}

impl Target {
    /// Whether a container of it serves Jupyter: a Jupyter image whose service no
    /// `command` replaces.
    pub fn serves_jupyter(&self, command: &[String]) -> bool {
        self.service == Service::Jupyter && command.is_empty()
    }

    /// Whether a container of it runs its service under the entrypoint's idle watch when
    /// asked: a tfimg image whose service is someone's session (Jupyter, SSH, headless),
    /// not a model server, and no `command` replaces it.
    pub fn watches_idle(&self, command: &[String]) -> bool {
        self.tfimg_image && self.service != Service::Serving && command.is_empty()
    }
}

/// How the ports of a container on a remote engine reach this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunnelMode {
    /// Through the engine connection itself, for as long as this tfimg runs (a
    /// foreground `run`, a sweep's trials).
    Session,
    /// Through an ssh connection of the container's own that outlives this tfimg and
    /// ends with the container (`run -d`, `up`).
    Detached,
}

/// Where the key a container's sshd admits comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SshSource {
    /// `--ssh-key PATH`, else the user's own key, else one tfimg makes.
    User(Option<PathBuf>),
    /// A team member's own key pair.
    Member { team: String, member: String },
}

/// Everything one launch asks for. `T` is its target: `()` while the image is not known
/// yet (`run`'s flags, checked before anything is built), [`Target`] once it is.
#[derive(Debug, Clone)]
pub struct LaunchRequest<T = Target> {
    pub target: T,
    /// `None`: the launcher names it after the target, with a random suffix.
    pub name: Option<String>,
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Folders of this machine; a destination left out goes under the target's workdir.
    pub mounts: Vec<MountRequest>,
    /// Local folders and files copied in before the start (`--sync`).
    pub syncs: Vec<SyncRequest>,
    /// The folders a sync's destination lies in are made when the image lacks them (a
    /// sweep trial's folder under `/tfimg`); otherwise a missing one is bad input.
    pub make_sync_parents: bool,
    /// Named volumes (`--volume`).
    pub volumes: Vec<VolumePlan>,
    pub port_requests: Vec<PortRequest>,
    pub public: bool,
    /// `None`: a GPU image takes every GPU when the host can give them (run's default).
    pub gpus: Option<GpuSelection>,
    pub gpu_mode: GpuMode,
    /// `--share-gpus`: GPUs other tfimg containers hold may be taken too (the container is
    /// labelled as sharing); otherwise asking for one is refused.
    pub share_gpus: bool,
    /// GPUs that launches prepared before this one will hold once they start (a team's
    /// earlier members), beside those of the engine's containers.
    pub pending_holders: Vec<Holder>,
    /// A launch that shares (a sweep's trial, placed by its slots) still claims its GPUs
    /// against every container but those carrying this label (`key`, `value`): when
    /// another claimed them first, the launcher gives up with `GpusClaimed` for the caller
    /// to place it again.
    pub claim_beside: Option<(String, String)>,
    /// Seconds a Jupyter kernel may sit idle before Jupyter shuts it down (a service
    /// without Jupyter ignores it).
    pub idle_kernels: Option<u64>,
    /// Seconds nobody may use the container before its idle watch stops it (a launch the
    /// watch does not apply to ignores it: `Target::watches_idle`).
    pub idle_containers: Option<u64>,
    /// Host uid/gid the container user takes; `None` runs as root (`--user root`).
    pub ids: Option<(u32, u32)>,
    pub ssh: SshSource,
    pub resources: Resources,
    pub extra_labels: BTreeMap<String, String>,
    /// On a remote engine: how its ports reach this machine.
    pub tunnel: TunnelMode,
    /// The team network it joins, and its place behind the team's gateway.
    pub network: Option<NetworkPlan>,
}

impl LaunchRequest<()> {
    /// A launch whose target is not known yet, its user taking the host's `ids` (`None`:
    /// root; there is no default, so no caller runs as root by forgetting them): the
    /// image's own command and service, no environment, mounts, syncs, volumes or
    /// published ports beyond the image's, GPUs as the launcher decides, the user's own
    /// ssh key, no limits, no extra labels, Docker's default network, and on a remote
    /// engine its ports tunneled for this session. Callers write what differs
    /// (`LaunchRequest { public: true, ..LaunchRequest::unaimed(ids) }`).
    pub fn unaimed(ids: Option<(u32, u32)>) -> Self {
        LaunchRequest {
            target: (),
            name: None,
            command: Vec::new(),
            env: Vec::new(),
            mounts: Vec::new(),
            syncs: Vec::new(),
            make_sync_parents: false,
            volumes: Vec::new(),
            port_requests: Vec::new(),
            public: false,
            gpus: None,
            gpu_mode: GpuMode::Auto,
            share_gpus: false,
            pending_holders: Vec::new(),
            claim_beside: None,
            idle_kernels: None,
            idle_containers: None,
            ids,
            ssh: SshSource::User(None),
            resources: Resources::default(),
            extra_labels: BTreeMap::new(),
            tunnel: TunnelMode::Session,
            network: None,
        }
    }
}

impl<T> LaunchRequest<T> {
    /// The same request aimed at `target`.
    pub fn on<U>(self, target: U) -> LaunchRequest<U> {
        let LaunchRequest {
            target: _,
            name,
            command,
            env,
            mounts,
            syncs,
            make_sync_parents,
            volumes,
            port_requests,
            public,
            gpus,
            gpu_mode,
            share_gpus,
            pending_holders,
            claim_beside,
            idle_kernels,
            idle_containers,
            ids,
            ssh,
            resources,
            extra_labels,
            tunnel,
            network,
        } = self;
        LaunchRequest {
            target,
            name,
            command,
            env,
            mounts,
            syncs,
            make_sync_parents,
            volumes,
            port_requests,
            public,
            gpus,
            gpu_mode,
            share_gpus,
            pending_holders,
            claim_beside,
            idle_kernels,
            idle_containers,
            ids,
            ssh,
            resources,
            extra_labels,
            tunnel,
            network,
        }
    }
}

impl LaunchRequest<Target> {
    /// A launch of `target` named `name`, otherwise as [`LaunchRequest::unaimed`].
    pub fn new(target: Target, name: String, ids: Option<(u32, u32)>) -> Self {
        LaunchRequest {
            name: Some(name),
            ..LaunchRequest::unaimed(ids)
        }
        .on(target)
    }

    /// Each mount where it lands in the target, with the text it was written as.
    pub fn mount_plans(&self) -> Vec<(MountPlan, &str)> {
        self.mounts
            .iter()
            .map(|mount| (mount.at(&self.target.workdir), mount.text.as_str()))
            .collect()
    }

    /// Each copy where it lands in the target.
    pub fn sync_plans(&self) -> Vec<SyncPlan> {
        self.syncs
            .iter()
            .map(|sync| sync.at(&self.target.workdir))
            .collect()
    }

    /// The container's named volumes: the request's, and the CUDA compute cache of a GPU
    /// container (unless one of the request's places covers its folder).
    pub fn volumes_with(&self, gpu: &GpuPlan) -> Vec<VolumePlan> {
        let mounts = self.mount_plans();
        let syncs = self.sync_plans();
        let taken: Vec<&str> = mounts
            .iter()
            .map(|(mount, _)| mount.target.as_str())
            .chain(syncs.iter().map(|sync| sync.target.as_str()))
            .chain(self.volumes.iter().map(|volume| volume.target.as_str()))
            .collect();
        // Every GPU container the launcher starts (run, up, sweep) keeps its compiled
        // kernels.
        let cuda_cache = cache::cuda_cache(
            self.target.cuda_cache.as_deref(),
            !matches!(gpu, GpuPlan::None),
            self.ids.map_or(0, |(uid, _)| uid),
            &self.env,
            &taken,
        );
        self.volumes.iter().cloned().chain(cuda_cache).collect()
    }

    /// The caller's labels, and the sync destinations `pull-files` defaults to.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = self.extra_labels.clone();
        let syncs = self.sync_plans();
        if !syncs.is_empty() {
            let targets = syncs.iter().map(|sync| sync.target.as_str());
            labels.insert(labels::SYNC.to_string(), labels::encode_syncs(targets));
        }
        labels
    }
}

/// What the launcher chose for one request, from what only the machine and the daemon
/// can tell: its name, host ports, GPUs, token and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub name: String,
    pub ports: Vec<PortPlan>,
    pub gpus: GpuSelection,
    pub gpu: GpuPlan,
    pub jupyter_token: Option<String>,
    pub ssh_public_key: Option<String>,
    /// Private key and known_hosts file for the printed ssh line.
    pub ssh_identity: Option<String>,
    pub ssh_known_hosts: Option<String>,
}
