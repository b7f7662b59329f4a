//! Launch planning: resolved run options and host facts in, a `LaunchPlan` (the whole
//! container configuration) out. Pure: no Docker, no file system, so every decision
//! (GPUs, mounts, ports, user, environment, labels) is unit-tested.

pub mod base;
pub mod gpus;
pub mod image;
pub mod mounts;
pub mod ports;

use std::collections::BTreeMap;

use crate::input::InputError;
use crate::labels;
use crate::spec::Service;
use gpus::{GpuPlan, GpuSelection};
use mounts::MountPlan;
use ports::PortPlan;

/// Docker's default capability set (moby's `oci/caps` defaults); tfimg never adds to it.
const DOCKER_DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "NET_RAW",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// Capabilities the entrypoint needs for its first instant as root (re-owning the user,
/// then dropping to it); the rest of Docker's defaults are dropped, nothing is added.
const REMAP_CAPABILITIES: &[&str] = &["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"];

/// Default /dev/shm: Docker's 64 MB breaks tf.data and multi-worker loaders.
pub const DEFAULT_SHM: i64 = 2 * 1024 * 1024 * 1024;

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
    pub memory: Option<i64>,
    pub nano_cpus: Option<i64>,
    pub shm_size: i64,
    pub restart: Option<RestartPolicy>,
    pub extra_labels: BTreeMap<String, String>,
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
    pub ports: Vec<PortPlan>,
    pub gpu: GpuPlan,
    pub memory: Option<i64>,
    pub nano_cpus: Option<i64>,
    pub shm_size: i64,
    pub restart: Option<RestartPolicy>,
    pub cap_drop: Vec<String>,
    pub security_opt: Vec<String>,
    /// What to tell the user: (`jupyter`, URL) or (`ssh`, command line).
    pub endpoints: Vec<(String, String)>,
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

pub fn launch(input: &LaunchInput) -> LaunchPlan {
    let mut env: BTreeMap<String, String> = input.env.iter().cloned().collect();
    let remap = input.tfimg_image && input.ids.is_some();
    if let (true, Some((uid, gid))) = (remap, input.ids) {
        env.extend(labels::id_variables(uid, gid));
    }
    if let Some(token) = &input.jupyter_token {
        env.insert(labels::JUPYTER_TOKEN_VARIABLE.to_string(), token.clone());
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

    let mut endpoints = Vec::new();
    // A command replaces the service, so it has nothing to connect to.
    if input.command.is_empty() {
        let port = |name: &str| input.ports.iter().find(|plan| plan.name == name);
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
                    let mut line = format!("ssh -p {}", plan.host);
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
                    endpoints.push(("ssh".to_string(), line));
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
    }

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
                        host_ip: plan.host_ip.clone(),
                        host: plan.host,
                        container: plan.container,
                    })
                    .collect::<Vec<_>>(),
            ),
        );
    }
    // Labels are readable by anyone who can list containers: never the token.
    for (name, url) in &endpoints {
        labels.insert(crate::labels::url_label(name), without_token(url));
    }

    // Capabilities are only ever dropped (`cap_add` stays empty).
    let (cap_drop, user) = match input.ids {
        // Not tfimg's entrypoint: nothing would drop root, so start as the user directly.
        Some((uid, gid)) if !input.tfimg_image => {
            (vec!["ALL".to_string()], Some(format!("{uid}:{gid}")))
        }
        // The entrypoint starts as root only to take the host ids, then drops root.
        Some((uid, _)) => {
            let mut kept = REMAP_CAPABILITIES.to_vec();
            // A host user that is root stays uid 0 inside; sshd then runs as root and
            // needs its privilege separation (a chroot, signals to its sshd child).
            if uid == 0 && input.service == Service::Ssh && input.command.is_empty() {
                kept.extend(["KILL", "SYS_CHROOT"]);
            }
            let dropped = DOCKER_DEFAULT_CAPABILITIES
                .iter()
                .filter(|cap| !kept.contains(cap))
                .map(|cap| cap.to_string())
                .collect();
            (dropped, Some("root".to_string()))
        }
        // `--user root`: the user's explicit choice; Docker's default capabilities.
        None => (Vec::new(), Some("root".to_string())),
    };

    LaunchPlan {
        name: input.name.clone(),
        image: input.image.clone(),
        command: input.command.clone(),
        env: env
            .into_iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect(),
        labels,
        user,
        mounts: input.mounts.clone(),
        ports: input.ports.clone(),
        gpu: input.gpu.clone(),
        memory: input.memory,
        nano_cpus: input.nano_cpus,
        shm_size: input.shm_size,
        restart: input.restart,
        cap_drop,
        security_opt: vec!["no-new-privileges".to_string()],
        endpoints,
    }
}

/// What Docker does when a container stops (`--restart`, and services of teams).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartPolicy {
    No,
    Always,
    UnlessStopped,
    /// At most this many retries, when given.
    OnFailure(Option<u32>),
}

impl RestartPolicy {
    /// `no`, `always`, `unless-stopped`, `on-failure[:N]`.
    pub fn parse(text: &str) -> Result<RestartPolicy, InputError> {
        let policy = match text.split_once(':') {
            None => match text {
                "no" => Some(RestartPolicy::No),
                "always" => Some(RestartPolicy::Always),
                "unless-stopped" => Some(RestartPolicy::UnlessStopped),
                "on-failure" => Some(RestartPolicy::OnFailure(None)),
                _ => None,
            },
            Some(("on-failure", retries)) => retries
                .parse::<u32>()
                .ok()
                .map(|retries| RestartPolicy::OnFailure(Some(retries))),
            Some(_) => None,
        };
        policy.ok_or_else(|| {
            InputError::new(
                format!("`--restart {text}` is not a restart policy"),
                "use `no`, `always`, `unless-stopped` or `on-failure[:N]`",
            )
        })
    }

    /// As Docker and Compose write it.
    pub fn as_text(&self) -> String {
        match self {
            RestartPolicy::No => "no".to_string(),
            RestartPolicy::Always => "always".to_string(),
            RestartPolicy::UnlessStopped => "unless-stopped".to_string(),
            RestartPolicy::OnFailure(None) => "on-failure".to_string(),
            RestartPolicy::OnFailure(Some(retries)) => format!("on-failure:{retries}"),
        }
    }
}

/// `512m`, `8g`, `1.5g`, `1048576` → bytes.
pub fn parse_size(text: &str, flag: &str) -> Result<i64, InputError> {
    let bad = || {
        InputError::new(
            format!("`{flag} {text}` is not a size"),
            format!("write sizes like `{flag} 512m` or `{flag} 8g` (b, k, m, g)"),
        )
    };
    let lower = text.trim().to_ascii_lowercase();
    let lower = lower
        .strip_suffix('b')
        .filter(|rest| !rest.is_empty() && rest.ends_with(['k', 'm', 'g']))
        .unwrap_or(&lower);
    let (number, unit) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 1024f64),
        Some('m') => (&lower[..lower.len() - 1], 1024f64 * 1024.0),
        Some('g') => (&lower[..lower.len() - 1], 1024f64 * 1024.0 * 1024.0),
        Some('b') => (&lower[..lower.len() - 1], 1f64),
        _ => (lower, 1f64),
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = value * unit;
    if !(4.0 * 1024.0 * 1024.0..1e15).contains(&bytes) {
        return Err(InputError::new(
            format!("`{flag} {text}` is out of range"),
            "sizes go from 4m to a few hundred g",
        ));
    }
    Ok(bytes as i64)
}

/// `1.5` → 1.5e9 nano-CPUs.
/// The smallest `--cpus` (Docker's own lower bound).
pub const MIN_CPUS: f64 = 0.01;

pub fn parse_cpus(text: &str) -> Result<i64, InputError> {
    let value: f64 = text.trim().parse().map_err(|_| {
        InputError::new(
            format!("`--cpus {text}` is not a number"),
            "write `--cpus 2` or `--cpus 1.5`",
        )
    })?;
    if !(value.is_finite() && value > 0.0 && value <= 1024.0) {
        return Err(InputError::new(
            format!("`--cpus {text}` is out of range"),
            "use a number above 0, such as 2",
        ));
    }
    // The kernel's smallest quota is 1 ms per 100 ms period; below it the value would
    // round to NanoCpus 0, which Docker reads as no limit at all.
    if value < MIN_CPUS {
        return Err(InputError::new(
            format!("`--cpus {text}` is below {MIN_CPUS}, the smallest share a container can get"),
            "use 0.01 or more, such as 0.5",
        ));
    }
    Ok((value * 1e9).round() as i64)
}

/// `KEY=value`; a bare `KEY` takes the value `inherited` finds (tfimg's own environment
/// value, as docker does).
pub fn parse_env(
    text: &str,
    inherited: impl Fn(&str) -> Option<String>,
) -> Result<(String, String), InputError> {
    let (key, value) = match text.split_once('=') {
        Some((key, value)) => (key.to_string(), value.to_string()),
        None => (text.to_string(), inherited(text).unwrap_or_default()),
    };
    let valid = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if key.is_empty() {
        return Err(InputError::new(
            format!("`-e {text}`: the variable has no name"),
            "write `-e KEY=value` with letters, digits and `_`",
        ));
    }
    if !valid {
        return Err(InputError::new(
            format!("`-e {text}`: `{key}` is not a valid variable name"),
            "write `-e KEY=value` with letters, digits and `_`",
        ));
    }
    if key.starts_with(labels::VARIABLE_PREFIX) {
        return Err(InputError::new(
            format!("`-e {text}`: `TFIMG_*` variables are set by tfimg"),
            "use `--uid`/`--gid`, `--ssh-key` or the printed token instead",
        ));
    }
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> LaunchInput {
        LaunchInput {
            image: "tfimg/cpu-jupyter:2.9.3".into(),
            spec_name: "cpu-jupyter".into(),
            service: Service::Jupyter,
            image_user: "tf".into(),
            tfimg_image: true,
            name: "cpu-jupyter-1a2b3c".into(),
            command: Vec::new(),
            env: vec![("A".into(), "1".into())],
            mounts: Vec::new(),
            ports: vec![PortPlan {
                name: "jupyter".into(),
                container: 8888,
                host_ip: "127.0.0.1".into(),
                host: 8890,
            }],
            gpus: GpuSelection::None,
            gpu: GpuPlan::None,
            ids: Some((1234, 2345)),
            jupyter_token: Some("t0k3n".into()),
            ssh_public_key: None,
            ssh_identity: None,
            ssh_known_hosts: None,
            memory: None,
            nano_cpus: None,
            shm_size: DEFAULT_SHM,
            restart: None,
            extra_labels: BTreeMap::new(),
        }
    }

    #[test]
    fn a_jupyter_launch_maps_the_user_keeps_few_capabilities_and_labels_its_url() {
        let plan = launch(&input());
        assert_eq!(
            plan.env,
            [
                "A=1".to_string(),
                format!("{}=2345", labels::GID_VARIABLE),
                format!("{}=t0k3n", labels::JUPYTER_TOKEN_VARIABLE),
                format!("{}=1234", labels::UID_VARIABLE),
            ]
        );
        assert_eq!(plan.user.as_deref(), Some("root"));
        assert_eq!(
            plan.cap_drop,
            [
                "AUDIT_WRITE",
                "FSETID",
                "KILL",
                "MKNOD",
                "NET_BIND_SERVICE",
                "NET_RAW",
                "SETFCAP",
                "SETPCAP",
                "SYS_CHROOT"
            ]
        );
        assert_eq!(plan.security_opt, ["no-new-privileges"]);
        let url = "http://127.0.0.1:8890/lab?token=t0k3n";
        assert_eq!(plan.endpoints, [("jupyter".to_string(), url.to_string())]);
        assert_eq!(
            plan.labels[&labels::url_label("jupyter")],
            "http://127.0.0.1:8890/lab",
            "no token in labels"
        );
        assert_eq!(
            with_token(&plan.labels[&labels::url_label("jupyter")], "t0k3n"),
            url
        );
        assert_eq!(plan.labels[labels::PORTS], "jupyter=127.0.0.1:8890->8888");
        assert_eq!(plan.labels[labels::GPUS], "none");
        assert_eq!(plan.labels[labels::UID], "1234:2345");
        assert_eq!(plan.shm_size, 2147483648);
    }

    #[test]
    fn a_command_replaces_the_service_and_ssh_lines_are_exact() {
        let mut with_command = input();
        with_command.command = vec!["python".into()];
        assert!(launch(&with_command).endpoints.is_empty());
        let mut ssh = input();
        ssh.service = Service::Ssh;
        ssh.jupyter_token = None;
        ssh.ports[0].name = "ssh".into();
        ssh.ssh_identity = Some("/home/a/.ssh/id_ed25519".into());
        ssh.ssh_known_hosts = Some("/home/a/.local/share/tfimg/known_hosts".into());
        assert_eq!(
            launch(&ssh).endpoints[0].1,
            "ssh -p 8890 -i /home/a/.ssh/id_ed25519 -o UserKnownHostsFile=/home/a/.local/share/tfimg/known_hosts tf@127.0.0.1"
        );
    }

    #[test]
    fn other_images_start_as_the_host_user_and_root_opt_out_logs_in_as_root() {
        let mut foreign = input();
        foreign.tfimg_image = false;
        foreign.jupyter_token = None;
        let plan = launch(&foreign);
        assert_eq!(plan.user.as_deref(), Some("1234:2345"));
        assert_eq!(plan.cap_drop, ["ALL"]);
        assert!(!plan
            .env
            .iter()
            .any(|entry| entry.starts_with(&format!("{}=", labels::UID_VARIABLE))));
        let mut root = input();
        root.service = Service::Ssh;
        root.ids = None;
        root.ports[0].name = "ssh".into();
        let plan = launch(&root);
        assert!(plan.endpoints[0].1.ends_with(" root@127.0.0.1"));
        assert_eq!(plan.user.as_deref(), Some("root"));
        assert!(plan.cap_drop.is_empty());
    }

    #[test]
    fn sizes_cpus_and_env() {
        assert_eq!(
            parse_size("2g", "--shm-size").unwrap(),
            2 * 1024 * 1024 * 1024
        );
        assert_eq!(parse_size("512m", "--memory").unwrap(), 512 * 1024 * 1024);
        assert_eq!(parse_size("1.5GB", "--memory").unwrap(), 1610612736);
        assert!(parse_size("lots", "--memory").is_err());
        assert!(parse_size("1k", "--memory").is_err());
        assert_eq!(parse_cpus("1.5").unwrap(), 1_500_000_000);
        assert!(parse_cpus("0").is_err());
        let none = |_: &str| None;
        assert_eq!(
            parse_env("A=b=c", none).unwrap(),
            ("A".into(), "b=c".into())
        );
        assert_eq!(
            parse_env("HOME", |key| (key == "HOME")
                .then(|| "/home/ana".to_string()))
            .unwrap(),
            ("HOME".into(), "/home/ana".into())
        );
        assert!(parse_env("1A=b", none).is_err());
        assert!(parse_env(&format!("{}=0", labels::UID_VARIABLE), none).is_err());
    }
}
