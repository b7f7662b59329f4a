//! The contract users script against, written once: every `io.tfimg.*` label tfimg puts
//! on images and containers, every `TFIMG_*` variable it sets or reads, and how the
//! labels that carry more than one value are encoded and decoded. Nothing else in `src/`
//! spells a label key or a `TFIMG_*` name. Pure.

use std::collections::{BTreeMap, HashMap};

/// What every tfimg label key starts with.
pub const PREFIX: &str = "io.tfimg.";

// Image labels (set by the rendered Dockerfile).

/// The spec an image (or a container) was made from.
pub const SPEC: &str = "io.tfimg.spec";
/// sha256 of the Dockerfile, the build context and the base image's id.
pub const BUILD_KEY: &str = "io.tfimg.build-key";
pub const TENSORFLOW: &str = "io.tfimg.tensorflow";
pub const PYTHON: &str = "io.tfimg.python";
/// Only on GPU images.
pub const CUDA: &str = "io.tfimg.cuda";
pub const CUDNN: &str = "io.tfimg.cudnn";
/// `jupyter`, `ssh` or `none` (images and containers).
pub const SERVICE: &str = "io.tfimg.service";
/// The in-image user.
pub const USER: &str = "io.tfimg.user";
/// The tfimg that built the image: its presence means tfimg's entrypoint is inside.
pub const VERSION: &str = "io.tfimg.version";
/// The container port the managed TensorBoard listens on.
pub const TENSORBOARD: &str = "io.tfimg.tensorboard";
/// On base images `tfimg base bootstrap` made: the mirror and suite.
pub const BOOTSTRAP: &str = "io.tfimg.bootstrap";
/// On GPU images: the folder (their CUDA_CACHE_PATH, mode 1777) where a container's CUDA
/// compute cache volume belongs. On those volumes: the uid whose cache it is.
pub const CUDA_CACHE: &str = "io.tfimg.cuda-cache";
/// On images built from a lock: `sha256:<hex>` of the lock file's bytes.
pub const LOCK: &str = "io.tfimg.lock";
/// On the one-off container `tfimg lock` resolves a spec in.
pub const LOCK_RESOLVE: &str = "io.tfimg.lock-resolve";

// Container labels (set by the launch plan).

/// What `--gpus` asked for (`none`, `all`, `0,1`).
pub const GPUS: &str = "io.tfimg.gpus";
/// `true` on a container started with `--share-gpus`: it may hold GPUs others hold.
pub const GPUS_SHARED: &str = "io.tfimg.gpus-shared";
/// The host user who started the container (`SUDO_USER` under sudo, else `USER`).
pub const OWNER: &str = "io.tfimg.owner";
/// Seconds nobody may use the container before its idle watch stops it (`--idle-containers`,
/// a team's `idle: {containers: ...}`); `ps` says `stopped (idle 12h)` for one it stopped.
pub const IDLE_CONTAINERS: &str = "io.tfimg.idle-containers";
/// Where the idle watch keeps when the container was last used (whole seconds since the
/// Unix epoch), rewritten at each look: `ps --gpus` reads it through the archive API,
/// which starts no process there (the watch would count one as use).
pub const IDLE_LAST_USED: &str = "/tmp/tfimg-last-used";
/// How the output of a container its idle watch stopped ends (`tfimg: idle for 12h: ...`).
pub const IDLE_STOPPED: &str = "tfimg: idle for";
pub const TEAM: &str = "io.tfimg.team";
pub const MEMBER: &str = "io.tfimg.member";
/// Hash of a member's settings and image: equal hashes mean `up` leaves it alone.
pub const MEMBER_HASH: &str = "io.tfimg.member-hash";
/// `io.tfimg.url.jupyter`, `io.tfimg.url.ssh`, ...: what `ps` shows (never a token).
pub const URL_PREFIX: &str = "io.tfimg.url.";
/// `jupyter=127.0.0.1:8888->8888,...`: the published ports.
pub const PORTS: &str = "io.tfimg.ports";
/// `uid:gid` the container runs as (for `exec`).
pub const UID: &str = "io.tfimg.uid";
/// On the one-off container that verifies a build.
pub const VERIFY: &str = "io.tfimg.verify";
/// On the one-off `--gpus all` container that asks an engine's host for its GPUs.
pub const GPU_PROBE: &str = "io.tfimg.gpu-probe";
/// A sweep's trial containers: the sweep's name.
pub const SWEEP: &str = "io.tfimg.sweep";
/// A trial container's trial id (`t001`).
pub const TRIAL: &str = "io.tfimg.trial";
/// A trial container's attempt (`1`, `2` after a retry).
pub const ATTEMPT: &str = "io.tfimg.attempt";
/// The `--sync` destinations of a container, joined by `,` (`pull-files` copies the
/// first when not told which).
pub const SYNC: &str = "io.tfimg.sync";
/// On the volumes `--volume` made: the volume's name.
pub const VOLUME: &str = "io.tfimg.volume";
/// A team's gateway container (the team's name).
pub const GATEWAY: &str = "io.tfimg.gateway";
/// A team's JupyterHub container, and the members' servers it spawned (the team's name):
/// `up` leaves those to the hub.
pub const HUB: &str = "io.tfimg.hub";

/// A serving container's model (`tfimg serve`): readiness waits for it, its URL names it.
pub const MODEL: &str = "io.tfimg.model";
/// Every model a model server serves from a model config (`a,b`), when more than one;
/// `MODEL` names the first.
pub const MODELS: &str = "io.tfimg.models";

// The entrypoint's run-time contract (variables tfimg sets in containers).

/// The reserved prefix: specs and `-e` may not set these.
pub const VARIABLE_PREFIX: &str = "TFIMG_";
/// The host uid and gid the image's user takes.
pub const UID_VARIABLE: &str = "TFIMG_UID";
pub const GID_VARIABLE: &str = "TFIMG_GID";
/// Jupyter's token.
pub const JUPYTER_TOKEN_VARIABLE: &str = "TFIMG_JUPYTER_TOKEN";
/// Jupyter's `base_url` behind a team's gateway (`/alice/`); `/` when unset.
pub const JUPYTER_BASE_URL_VARIABLE: &str = "TFIMG_JUPYTER_BASE_URL";
/// Set to `1` in a member behind a team's gateway that routes by host: Jupyter names its
/// login and XSRF cookies `JUPYTER_LOGIN_COOKIE` and `JUPYTER_XSRF_COOKIE` (`__Host-`
/// cookies, which no page of a sibling host can set).
pub const JUPYTER_HOST_COOKIES_VARIABLE: &str = "TFIMG_JUPYTER_HOST_COOKIES";
/// Jupyter's login cookie behind a gateway routing by host: the image's Jupyter sets and
/// reads it, the gateway passes it (and `JUPYTER_XSRF_COOKIE`) to the member and no other.
pub const JUPYTER_LOGIN_COOKIE: &str = "__Host-jupyter-login";
/// Jupyter's XSRF cookie there. Its name still ends in `_xsrf`, where JupyterLab's client
/// looks for the token (`\b_xsrf=` in `document.cookie`).
pub const JUPYTER_XSRF_COOKIE: &str = "__Host-_xsrf";
/// Seconds a Jupyter kernel may run nothing before Jupyter shuts it down (`--idle-kernels`,
/// a team's `idle: {kernels: ...}`); unset: never.
pub const IDLE_KERNELS_VARIABLE: &str = "TFIMG_IDLE_KERNELS";
/// Seconds nobody may use the container before the entrypoint's idle watch stops it; unset:
/// never.
pub const IDLE_CONTAINERS_VARIABLE: &str = "TFIMG_IDLE_CONTAINERS";
/// The public keys that may log in over SSH.
pub const SSH_KEYS_VARIABLE: &str = "TFIMG_SSH_AUTHORIZED_KEYS";
/// The port sshd listens on instead of the spec's (Kubernetes pods).
pub const SSH_PORT_VARIABLE: &str = "TFIMG_SSH_PORT";
/// The build argument that carries the build key into the image's labels.
pub const BUILD_KEY_ARG: &str = "TFIMG_BUILD_KEY";
/// The extra CA (PEM) in the container `tfimg lock` resolves a spec in, in parts
/// (`TFIMG_CA_PEM_0`, `_1`, ...): one variable holds at most 128 KiB.
pub const LOCK_CA_VARIABLE: &str = "TFIMG_CA_PEM_";
/// A trial's sweep name and trial id.
pub const SWEEP_VARIABLE: &str = "TFIMG_SWEEP";
pub const TRIAL_VARIABLE: &str = "TFIMG_TRIAL";
/// Where a trial's own folder is mounted (params.json, metrics.jsonl, logs).
pub const TRIAL_DIR_VARIABLE: &str = "TFIMG_TRIAL_DIR";
/// `TFIMG_PARAM_<NAME>`: each param of a trial, the name upper-cased.
pub const PARAM_VARIABLE_PREFIX: &str = "TFIMG_PARAM_";

// tfimg's own settings from the environment.

/// The config file (else `~/.config/tfimg/config.yaml`).
pub const CONFIG_VARIABLE: &str = "TFIMG_CONFIG";
pub const CA_CERT_VARIABLE: &str = "TFIMG_CA_CERT";
pub const PIP_INDEX_URL_VARIABLE: &str = "TFIMG_PIP_INDEX_URL";
pub const APT_MIRROR_VARIABLE: &str = "TFIMG_APT_MIRROR";
pub const REGISTRY_MIRROR_VARIABLE: &str = "TFIMG_REGISTRY_MIRROR";
/// The day (`YYYY-MM-DD`) `list`, `show` and `doctor` judge support windows on, instead of
/// the clock's: what a coming day will flag, and fixed days for tests.
pub const TODAY_VARIABLE: &str = "TFIMG_TODAY";
/// The ssh program and options for `ssh://` engines, split as a shell would (like git's
/// `GIT_SSH_COMMAND`): `ssh -F ~/.ssh/gpu_config -i ~/.ssh/lab`.
pub const SSH_COMMAND_VARIABLE: &str = "TFIMG_SSH_COMMAND";

/// The named volume holding one host user's CUDA compute cache, shared by every GPU
/// container tfimg starts for that user: `tfimg-cuda-cache-<uid>`.
pub fn cuda_cache_volume(uid: u32) -> String {
    format!("tfimg-cuda-cache-{uid}")
}

/// The sync label's value: the destinations (which never hold a `,`) joined by `,`.
pub fn encode_syncs<'a>(targets: impl IntoIterator<Item = &'a str>) -> String {
    targets.into_iter().collect::<Vec<_>>().join(",")
}

/// The destinations in a sync label, in the order they were given.
pub fn decode_syncs(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|target| !target.is_empty())
        .map(str::to_string)
        .collect()
}

/// `io.tfimg.spec=NAME`: the filter for a spec's images or containers.
pub fn spec_filter(spec: &str) -> String {
    format!("{SPEC}={spec}")
}

/// `io.tfimg.team=NAME`: the filter for a team's containers.
pub fn team_filter(team: &str) -> String {
    format!("{TEAM}={team}")
}

/// `io.tfimg.model=NAME`: the filter for the containers serving a model.
pub fn model_filter(model: &str) -> String {
    format!("{MODEL}={model}")
}

/// `io.tfimg.sweep=NAME`: the filter for a sweep's trial containers.
pub fn sweep_filter(sweep: &str) -> String {
    format!("{SWEEP}={sweep}")
}

/// `TFIMG_PARAM_LR` for the param `lr`.
pub fn param_variable(param: &str) -> String {
    format!("{PARAM_VARIABLE_PREFIX}{}", param.to_ascii_uppercase())
}

/// `io.tfimg.verify=MARKER`: the filter for one verification container.
pub fn verify_filter(marker: &str) -> String {
    format!("{VERIFY}={marker}")
}

/// The label filter of the container `tfimg lock` resolves in, by its marker.
pub fn lock_resolve_filter(marker: &str) -> String {
    format!("{LOCK_RESOLVE}={marker}")
}

/// The label holding an endpoint's address: `io.tfimg.url.jupyter`.
pub fn url_label(endpoint: &str) -> String {
    format!("{URL_PREFIX}{endpoint}")
}

/// One published port as the ports label carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedPort {
    pub name: String,
    pub host_ip: String,
    pub host: u16,
    pub container: u16,
}

/// `jupyter=127.0.0.1:8888->8888,tensorboard=127.0.0.1:6006->6006`.
pub fn encode_ports(ports: &[PublishedPort]) -> String {
    ports
        .iter()
        .map(|port| {
            format!(
                "{}={}:{}->{}",
                port.name, port.host_ip, port.host, port.container
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The ports label read back; entries that do not parse are left out.
pub fn decode_ports(text: &str) -> Vec<PublishedPort> {
    text.split(',')
        .filter_map(|entry| {
            let (name, rest) = entry.split_once('=')?;
            let (address, container) = rest.split_once("->")?;
            let (host_ip, host) = address.rsplit_once(':')?;
            Some(PublishedPort {
                name: name.to_string(),
                host_ip: host_ip.to_string(),
                host: host.parse().ok()?,
                container: container.parse().ok()?,
            })
        })
        .collect()
}

/// `KEY=value` entries for the entrypoint's ids.
pub fn id_variables(uid: u32, gid: u32) -> [(String, String); 2] {
    [
        (UID_VARIABLE.to_string(), uid.to_string()),
        (GID_VARIABLE.to_string(), gid.to_string()),
    ]
}

/// The Jupyter token in a container's `KEY=value` environment.
pub fn jupyter_token(env: &[String]) -> Option<String> {
    let prefix = format!("{JUPYTER_TOKEN_VARIABLE}=");
    env.iter()
        .find_map(|entry| entry.strip_prefix(prefix.as_str()))
        .map(str::to_string)
}

/// Whether an environment variable holds a secret that belongs in a Secret or an env
/// file, never in a manifest or a Compose file.
pub fn is_secret_variable(key: &str) -> bool {
    key == JUPYTER_TOKEN_VARIABLE || key == SSH_KEYS_VARIABLE
}

/// What an image's labels say about it, for `tfimg run IMAGE`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImageLabels {
    pub spec: Option<String>,
    pub service: Option<String>,
    pub user: Option<String>,
    /// A GPU image (it carries a CUDA version).
    pub gpu: bool,
    /// Built by tfimg: its entrypoint maps the user and drops root.
    pub tfimg: bool,
    /// The container port of the managed TensorBoard.
    pub tensorboard: Option<u16>,
    /// Where the image wants its CUDA compute cache mounted (GPU images).
    pub cuda_cache: Option<String>,
}

impl ImageLabels {
    pub fn decode(labels: &HashMap<String, String>) -> ImageLabels {
        ImageLabels {
            spec: labels.get(SPEC).cloned(),
            service: labels.get(SERVICE).cloned(),
            user: labels.get(USER).cloned(),
            gpu: labels.contains_key(CUDA),
            tfimg: labels.contains_key(VERSION),
            tensorboard: labels.get(TENSORBOARD).and_then(|port| port.parse().ok()),
            cuda_cache: labels.get(CUDA_CACHE).cloned(),
        }
    }
}

/// The image labels the Dockerfile's `LABEL` sets (the build key apart: it comes in
/// through a build argument).
pub fn image_labels(
    spec: &str,
    tensorflow: &str,
    python: &str,
    service: &str,
    user: &str,
    cuda: Option<(&str, &str)>,
    tensorboard: Option<u16>,
) -> BTreeMap<&'static str, String> {
    let mut labels = BTreeMap::from([
        (SPEC, spec.to_string()),
        (TENSORFLOW, tensorflow.to_string()),
        (PYTHON, python.to_string()),
        (SERVICE, service.to_string()),
        (USER, user.to_string()),
        (VERSION, env!("CARGO_PKG_VERSION").to_string()),
    ]);
    if let Some((cuda, cudnn)) = cuda {
        labels.insert(CUDA, cuda.to_string());
        labels.insert(CUDNN, cudnn.to_string());
    }
    if let Some(port) = tensorboard {
        labels.insert(TENSORBOARD, port.to_string());
    }
    labels
}

#[cfg(test)]
mod tests;
