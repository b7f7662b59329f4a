//! Launch planning: resolved run options and host facts in, a `LaunchPlan` (the whole
//! container configuration) out. Pure: no Docker, no file system, so every decision
//! (GPUs, mounts, ports, user, environment, labels) is unit-tested.

pub mod base;
pub mod batching;
pub mod cache;
pub mod gpus;
pub mod host_urls;
pub mod image;
pub mod model_config;
pub mod mounts;
pub mod network;
mod parse;
pub mod ports;
pub mod request;
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
use gpus::GpuPlan;
use mounts::MountPlan;
use ports::PortPlan;

pub use parse::{parse_cpus, parse_env, parse_idle, parse_idle_flag, parse_size, RestartPolicy};
pub use request::{Chosen, LaunchRequest, SshSource, Target, TunnelMode};
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

/// Whether a TensorBoard address is one a team's gateway guards (under the member's
/// Jupyter address, `…/tensorboard/`), which its member's token opens; one published
/// by `run` (`http://127.0.0.1:6006/`) has no login.
pub fn tensorboard_behind_gateway(url: &str) -> bool {
    without_token(url).ends_with("/tensorboard/")
}

/// `url` with Jupyter's `token` query added.
pub fn with_token(url: &str, token: &str) -> String {
    format!("{}?token={token}", without_token(url))
}

/// The container for `request`, with what the launcher `chosen`: its environment, what to tell the user, its labels, and
/// the user and capabilities it starts with.
pub fn launch(request: &LaunchRequest, chosen: &Chosen) -> LaunchPlan {
    let env = environment(request, chosen);
    let endpoints = endpoints(request, chosen);
    let labels = launch_labels(request, chosen, &endpoints);
    let (cap_drop, user) = user_and_capabilities(request);
    LaunchPlan {
        name: chosen.name.clone(),
        image: request.target.image.clone(),
        command: request.command.clone(),
        env,
        labels,
        user,
        mounts: request
            .mount_plans()
            .into_iter()
            .map(|(mount, _)| mount)
            .collect(),
        volumes: request.volumes_with(&chosen.gpu),
        ports: chosen.ports.clone(),
        gpu: chosen.gpu.clone(),
        memory: request.resources.memory,
        nano_cpus: request.resources.nano_cpus,
        shm_size: request.resources.shm_size,
        restart: request.resources.restart,
        cap_drop,
        security_opt: vec!["no-new-privileges".to_string()],
        network: request.network.as_ref().map(|network| network.name.clone()),
        jupyter_inside: gateway_route(request)
            .map(|route| (route.jupyter_port, route.base_url.clone())),
        endpoints,
    }
}

/// The container's `KEY=value` environment, sorted: the user's variables, the ids the
/// entrypoint maps the user to, the token or key of the service, the NVIDIA runtime's.
fn environment(request: &LaunchRequest, chosen: &Chosen) -> Vec<String> {
    let mut env: BTreeMap<String, String> = request.env.iter().cloned().collect();
    let remap = request.target.tfimg_image && request.ids.is_some();
    if let (true, Some((uid, gid))) = (remap, request.ids) {
        env.extend(labels::id_variables(uid, gid));
    }
    if let Some(token) = &chosen.jupyter_token {
        env.insert(labels::JUPYTER_TOKEN_VARIABLE.to_string(), token.clone());
    }
    if let Some(route) = gateway_route(request) {
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
    if let Some(key) = &chosen.ssh_public_key {
        env.insert(labels::SSH_KEYS_VARIABLE.to_string(), key.clone());
    }
    if let GpuPlan::Runtime { visible_devices } = &chosen.gpu {
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
fn endpoints(request: &LaunchRequest, chosen: &Chosen) -> Vec<(String, String)> {
    let mut endpoints = Vec::new();
    if !request.command.is_empty() {
        return endpoints;
    }
    let port = |name: &str| chosen.ports.iter().find(|plan| plan.name == name);
    if let (Some(route), Service::Jupyter) = (gateway_route(request), request.target.service) {
        if let Some(token) = &chosen.jupyter_token {
            endpoints.push(("jupyter".to_string(), with_token(&route.jupyter_url, token)));
        }
        // The gateway lets a TensorBoard answer only when the member's Jupyter accepts
        // the request: its link carries the token too (a fresh browser opens it).
        if let (Some(url), Some(token)) = (&route.tensorboard_url, &chosen.jupyter_token) {
            endpoints.push(("tensorboard".to_string(), with_token(url, token)));
        }
        return endpoints;
    }
    match request.target.service {
        Service::Jupyter => {
            if let (Some(plan), Some(token)) = (port("jupyter"), &chosen.jupyter_token) {
                endpoints.push((
                    "jupyter".to_string(),
                    format!("http://127.0.0.1:{}/lab?token={token}", plan.host),
                ));
            }
        }
        Service::Ssh => {
            if let Some(plan) = port("ssh") {
                endpoints.push(("ssh".to_string(), ssh_line(request, chosen, plan)));
            }
        }
        Service::Serving => {
            if let Some(plan) = port(SERVING_PORT_NAME) {
                let model = request.extra_labels.get(labels::MODEL);
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
fn gateway_route(request: &LaunchRequest) -> Option<&network::GatewayRoute> {
    request.network.as_ref()?.gateway.as_ref()
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
fn ssh_line(request: &LaunchRequest, chosen: &Chosen, port: &PortPlan) -> String {
    let mut line = format!("ssh -p {}", port.host);
    if let Some(identity) = &chosen.ssh_identity {
        line.push_str(&format!(" -i {identity}"));
    }
    if let Some(known_hosts) = &chosen.ssh_known_hosts {
        line.push_str(&format!(" -o UserKnownHostsFile={known_hosts}"));
    }
    // `--user root` keeps the container (and the key) with root.
    let login = if request.ids.is_some() {
        request.target.image_user.as_str()
    } else {
        "root"
    };
    line.push_str(&format!(" {login}@127.0.0.1"));
    line
}

/// The container's labels: the caller's, then the spec, service, GPUs, ids, ports and
/// the endpoints' URLs.
fn launch_labels(
    request: &LaunchRequest,
    chosen: &Chosen,
    endpoints: &[(String, String)],
) -> BTreeMap<String, String> {
    let mut labels = request.labels();
    labels.insert(labels::SPEC.to_string(), request.target.spec_name.clone());
    labels.insert(
        labels::SERVICE.to_string(),
        request.target.service.as_str().to_string(),
    );
    labels.insert(labels::GPUS.to_string(), chosen.gpus.describe());
    labels.insert(
        labels::UID.to_string(),
        match request.ids {
            Some((uid, gid)) => format!("{uid}:{gid}"),
            None => "0:0".to_string(),
        },
    );
    if !chosen.ports.is_empty() {
        labels.insert(
            labels::PORTS.to_string(),
            labels::encode_ports(
                &chosen
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
