//! Launch planning: resolved run options and host facts in, a `LaunchPlan` (the whole
//! container configuration) out. Pure: no Docker, no file system, so every decision
//! (GPUs, mounts, ports, user, environment, labels) is unit-tested.

pub mod base;
pub mod cache;
pub mod gpus;
pub mod host_urls;
pub mod image;
pub mod model_config;
pub mod mounts;
pub mod network;
mod parse;
pub mod ports;
pub mod serving;
pub mod sync;
#[cfg(test)]
pub(crate) mod testing;
pub mod tunnels;
pub mod user;
pub mod volumes;

use std::collections::BTreeMap;

use crate::labels;
use crate::spec::resolved::{SERVING_GRPC_PORT_NAME, SERVING_PORT_NAME};
use crate::spec::Service;
use cache::VolumePlan;
use gpus::{GpuPlan, GpuSelection};
use mounts::MountPlan;
use network::NetworkPlan;
use ports::PortPlan;

pub use parse::{parse_cpus, parse_env, parse_idle, parse_idle_flag, parse_size, RestartPolicy};
pub use user::container_ids;
use user::user_and_capabilities;

/// Default /dev/shm: Docker's 64 MB breaks tf.data and multi-worker loaders.
pub const DEFAULT_SHM: i64 = 2 * 1024 * 1024 * 1024;

/// What a container may use, and when Docker restarts it: `run`'s `--memory`, `--cpus`,
/// `--shm-size` and `--restart`, a team member's or a sweep's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    pub memory: Option<i64>,
    pub nano_cpus: Option<i64>,
    pub shm_size: i64,
    pub restart: Option<RestartPolicy>,
}

impl Default for Resources {
    /// No limits, `DEFAULT_SHM`, never restarted.
    fn default() -> Self {
        Resources {
            memory: None,
            nano_cpus: None,
            shm_size: DEFAULT_SHM,
            restart: None,
        }
    }
}

/// Everything `launch` needs, already validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchInput {
    pub image: String,
    pub spec_name: String,
    pub service: Service,
    /// The in-image user (`tf`), for the ssh line.
    pub image_user: String,
    /// Whether the image has tfimg's entrypoint (which maps the user and drops root).
    /// Other images are started directly as the host uid/gid.
    pub tfimg_image: bool,
    pub name: String,
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub mounts: Vec<MountPlan>,
    /// Named volumes (the CUDA compute cache of a GPU container).
    pub volumes: Vec<VolumePlan>,
    pub ports: Vec<PortPlan>,
    pub gpus: GpuSelection,
    pub gpu: GpuPlan,
    /// Host uid/gid the container user takes; `None` runs as root (`--user root`).
    pub ids: Option<(u32, u32)>,
    pub jupyter_token: Option<String>,
    pub ssh_public_key: Option<String>,
    /// Private key and known_hosts file for the printed ssh line.
    pub ssh_identity: Option<String>,
    pub ssh_known_hosts: Option<String>,
    pub resources: Resources,
    pub extra_labels: BTreeMap<String, String>,
    /// The team network it joins (and its place behind the team's gateway).
    pub network: Option<NetworkPlan>,
}

/// The container to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    pub name: String,
    pub image: String,
    pub command: Vec<String>,
    /// `KEY=value`, sorted.
    pub env: Vec<String>,
    pub labels: BTreeMap<String, String>,
    pub user: Option<String>,
    pub mounts: Vec<MountPlan>,
    pub volumes: Vec<VolumePlan>,
    pub ports: Vec<PortPlan>,
    pub gpu: GpuPlan,
    pub memory: Option<i64>,
    pub nano_cpus: Option<i64>,
    pub shm_size: i64,
    pub restart: Option<RestartPolicy>,
    pub cap_drop: Vec<String>,
    pub security_opt: Vec<String>,
    /// The network it joins instead of Docker's default bridge.
    pub network: Option<String>,
    /// Behind a team's gateway: Jupyter's port and base URL inside the container, where
    /// readiness asks it (it has no host port).
    pub jupyter_inside: Option<(u16, String)>,
    /// What to tell the user: (`jupyter`, URL) or (`ssh`, command line).
    pub endpoints: Vec<(String, String)>,
}

/// How a user reaches a container from its endpoints: its service (Jupyter's URL, the
/// ssh line or the model's URL, the first there is) and its TensorBoard, for the tables
/// of `up` and `compose`.
pub fn access(endpoints: &[(String, String)]) -> (Option<&str>, Option<&str>) {
    let endpoint = |service: &str| {
        endpoints
            .iter()
            .find(|(name, _)| name == service)
            .map(|(_, address)| address.as_str())
    };
    let service = ["jupyter", "ssh", crate::spec::resolved::SERVING_PORT_NAME]
        .into_iter()
        .find_map(endpoint);
    (service, endpoint(crate::spec::resolved::TENSORBOARD_PORT))
}

/// `http://127.0.0.1:8888/lab?token=abc` → `http://127.0.0.1:8888/lab`.
pub fn without_token(url: &str) -> String {
    match url.split_once("?token=") {
        Some((address, _)) => address.to_string(),
        None => url.to_string(),
    }
}

/// `url` with Jupyter's `token` query added.
pub fn with_token(url: &str, token: &str) -> String {
    format!("{}?token={token}", without_token(url))
}

/// The container for `input`: its environment, what to tell the user, its labels, and
/// the user and capabilities it starts with.
pub fn launch(input: &LaunchInput) -> LaunchPlan {
    let env = environment(input);
    let endpoints = endpoints(input);
    let labels = launch_labels(input, &endpoints);
    let (cap_drop, user) = user_and_capabilities(input);
    LaunchPlan {
        name: input.name.clone(),
        image: input.image.clone(),
        command: input.command.clone(),
        env,
        labels,
        user,
        mounts: input.mounts.clone(),
        volumes: input.volumes.clone(),
        ports: input.ports.clone(),
        gpu: input.gpu.clone(),
        memory: input.resources.memory,
        nano_cpus: input.resources.nano_cpus,
        shm_size: input.resources.shm_size,
        restart: input.resources.restart,
        cap_drop,
        security_opt: vec!["no-new-privileges".to_string()],
        network: input.network.as_ref().map(|network| network.name.clone()),
        jupyter_inside: gateway_route(input)
            .map(|route| (route.jupyter_port, route.base_url.clone())),
        endpoints,
    }
}

/// The container's `KEY=value` environment, sorted: the user's variables, the ids the
/// entrypoint maps the user to, the token or key of the service, the NVIDIA runtime's.
fn environment(input: &LaunchInput) -> Vec<String> {
    let mut env: BTreeMap<String, String> = input.env.iter().cloned().collect();
    let remap = input.tfimg_image && input.ids.is_some();
    if let (true, Some((uid, gid))) = (remap, input.ids) {
        env.extend(labels::id_variables(uid, gid));
    }
    if let Some(token) = &input.jupyter_token {
        env.insert(labels::JUPYTER_TOKEN_VARIABLE.to_string(), token.clone());
    }
    if let Some(route) = gateway_route(input) {
        env.insert(
            labels::JUPYTER_BASE_URL_VARIABLE.to_string(),
            route.base_url.clone(),
        );
        if route.host_cookies {
            env.insert(
                labels::JUPYTER_HOST_COOKIES_VARIABLE.to_string(),
                "1".to_string(),
            );
        }
    }
    if let Some(key) = &input.ssh_public_key {
        env.insert(labels::SSH_KEYS_VARIABLE.to_string(), key.clone());
    }
    if let GpuPlan::Runtime { visible_devices } = &input.gpu {
        env.insert(
            "NVIDIA_VISIBLE_DEVICES".to_string(),
            visible_devices.clone(),
        );
        env.insert(
            "NVIDIA_DRIVER_CAPABILITIES".to_string(),
            "compute,utility".to_string(),
        );
    }
    env.into_iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect()
}

/// What to tell the user: the Jupyter URL (with its token) or the ssh line, and
/// TensorBoard's URL. A command replaces the service, so it has nothing to connect to.
fn endpoints(input: &LaunchInput) -> Vec<(String, String)> {
    let mut endpoints = Vec::new();
    if !input.command.is_empty() {
        return endpoints;
    }
    let port = |name: &str| input.ports.iter().find(|plan| plan.name == name);
    if let (Some(route), Service::Jupyter) = (gateway_route(input), input.service) {
        if let Some(token) = &input.jupyter_token {
            endpoints.push(("jupyter".to_string(), with_token(&route.jupyter_url, token)));
        }
        if let Some(url) = &route.tensorboard_url {
            endpoints.push(("tensorboard".to_string(), url.clone()));
        }
        return endpoints;
    }
    match input.service {
        Service::Jupyter => {
            if let (Some(plan), Some(token)) = (port("jupyter"), &input.jupyter_token) {
                endpoints.push((
                    "jupyter".to_string(),
                    format!("http://127.0.0.1:{}/lab?token={token}", plan.host),
                ));
            }
        }
        Service::Ssh => {
            if let Some(plan) = port("ssh") {
                endpoints.push(("ssh".to_string(), ssh_line(input, plan)));
            }
        }
        Service::Serving => {
            if let Some(plan) = port(SERVING_PORT_NAME) {
                let model = input.extra_labels.get(labels::MODEL);
                endpoints.push((
                    SERVING_PORT_NAME.to_string(),
                    serving_url(plan.host, model.map(String::as_str)),
                ));
            }
            if let Some(plan) = port(SERVING_GRPC_PORT_NAME) {
                endpoints.push((
                    SERVING_GRPC_PORT_NAME.to_string(),
                    format!("127.0.0.1:{}", plan.host),
                ));
            }
        }
        Service::None => {}
    }
    if let Some(plan) = port("tensorboard") {
        endpoints.push((
            "tensorboard".to_string(),
            format!("http://127.0.0.1:{}/", plan.host),
        ));
    }
    endpoints
}

/// The member's place behind its team's gateway, if it is behind one.
fn gateway_route(input: &LaunchInput) -> Option<&network::GatewayRoute> {
    input.network.as_ref()?.gateway.as_ref()
}

/// A model server's address: its model's status URL (TensorFlow Serving's REST API), or
/// the server itself when no model was named.
pub fn serving_url(port: u16, model: Option<&str>) -> String {
    match model {
        Some(model) => format!("http://127.0.0.1:{port}/v1/models/{model}"),
        None => format!("http://127.0.0.1:{port}/"),
    }
}

/// The ssh command line that logs in through the published `port`.
fn ssh_line(input: &LaunchInput, port: &PortPlan) -> String {
    let mut line = format!("ssh -p {}", port.host);
    if let Some(identity) = &input.ssh_identity {
        line.push_str(&format!(" -i {identity}"));
    }
    if let Some(known_hosts) = &input.ssh_known_hosts {
        line.push_str(&format!(" -o UserKnownHostsFile={known_hosts}"));
    }
    // `--user root` keeps the container (and the key) with root.
    let login = if input.ids.is_some() {
        input.image_user.as_str()
    } else {
        "root"
    };
    line.push_str(&format!(" {login}@127.0.0.1"));
    line
}

/// The container's labels: the caller's, then the spec, service, GPUs, ids, ports and
/// the endpoints' URLs.
fn launch_labels(input: &LaunchInput, endpoints: &[(String, String)]) -> BTreeMap<String, String> {
    let mut labels = input.extra_labels.clone();
    labels.insert(labels::SPEC.to_string(), input.spec_name.clone());
    labels.insert(
        labels::SERVICE.to_string(),
        input.service.as_str().to_string(),
    );
    labels.insert(labels::GPUS.to_string(), input.gpus.describe());
    labels.insert(
        labels::UID.to_string(),
        match input.ids {
            Some((uid, gid)) => format!("{uid}:{gid}"),
            None => "0:0".to_string(),
        },
    );
    if !input.ports.is_empty() {
        labels.insert(
            labels::PORTS.to_string(),
            labels::encode_ports(
                &input
                    .ports
                    .iter()
                    .map(|plan| labels::PublishedPort {
                        name: plan.name.clone(),
                        // A tunneled port is reached on this machine's loopback.
                        host_ip: if plan.tunneled {
                            "127.0.0.1".to_string()
                        } else {
                            plan.host_ip.clone()
                        },
                        host: plan.host,
                        container: plan.container,
                    })
                    .collect::<Vec<_>>(),
            ),
        );
    }
    // Labels are readable by anyone who can list containers: never the token.
    for (name, url) in endpoints {
        labels.insert(crate::labels::url_label(name), without_token(url));
    }
    labels
}

/// What the user reads when the kernel killed a container for memory: the limit it had
/// (`memory`, bytes; `None`: the host's memory) and the setting that raises it, as the
/// user writes it, `VALUE` standing for the new limit (`` `--memory VALUE` ``).
pub fn out_of_memory(memory: Option<i64>, setting: &str) -> (String, String) {
    match memory {
        Some(limit) => (
            format!(
                "the kernel killed it for using more than its memory limit ({})",
                memory_text(limit)
            ),
            format!(
                "raise the limit ({}), or have the job use less (a smaller batch)",
                setting.replace("VALUE", &memory_value(limit.saturating_mul(2)))
            ),
        ),
        None => (
            "the kernel killed it for memory: the host ran out".to_string(),
            format!(
                "have the job use less (a smaller batch), or give it a limit ({}) so that it alone fails",
                setting.replace("VALUE", "8g")
            ),
        ),
    }
}

/// `512 MiB`, `8 GiB`, `1.5 GiB`.
fn memory_text(bytes: i64) -> String {
    const MIB: i64 = 1024 * 1024;
    const GIB: i64 = 1024 * MIB;
    if bytes >= GIB {
        let tenths = bytes * 10 / GIB;
        match tenths % 10 {
            0 => format!("{} GiB", tenths / 10),
            rest => format!("{}.{rest} GiB", tenths / 10),
        }
    } else {
        format!("{} MiB", bytes / MIB)
    }
}

/// A limit as the flags take it: `16g`, `768m`.
fn memory_value(bytes: i64) -> String {
    const MIB: i64 = 1024 * 1024;
    match bytes % (1024 * MIB) {
        0 => format!("{}g", bytes / (1024 * MIB)),
        _ => format!("{}m", (bytes + MIB - 1) / MIB),
    }
}

#[cfg(test)]
mod tests;
