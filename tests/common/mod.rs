//! Helpers shared by the integration tests: run the real `tfimg` binary in a scratch
//! folder and capture what a user would see.
#![allow(dead_code)]

pub mod account;
pub mod browser;
pub mod cli;
pub mod compose;
pub mod daemon;
pub mod gpu;
pub mod k8s;
pub mod serving;
pub mod sshd;
pub mod sweep;

use std::path::Path;
use std::process::Command;

use tfimg_testing::engine::prelude::*;

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The last 60 lines of stderr, for a failed assertion's message: a build's error
    /// comes last, after thousands of lines of pip's output that CI's log would cut.
    pub fn tail(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        let from = lines.len().saturating_sub(60);
        let cut = if from > 0 {
            format!("[{from} earlier lines]\n")
        } else {
            String::new()
        };
        cut + &lines[from..].join("\n")
    }
}

pub fn tfimg(current_dir: &Path, args: &[&str]) -> Run {
    tfimg_with_env(current_dir, args, &[])
}

/// A scratch folder with the given files (path, contents) written into it.
pub fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let folder = tempfile::tempdir().expect("a temporary folder");
    for (path, contents) in files {
        let path = folder.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    folder
}

/// The day every test's tfimg judges support windows on (`TFIMG_TODAY`): Debian 11's
/// long-term support, Python 3.9 and TensorFlow 2.9 are past support on it.
pub const TODAY: &str = "2026-11-22";

pub const BUILTINS: &[&str] = &[
    "cpu-headless",
    "cpu-jupyter",
    "cpu-serving",
    "cpu-ssh",
    "gpu-headless",
    "gpu-jupyter",
    "gpu-serving",
    "gpu-ssh",
    "tf218-cpu-headless",
    "tf218-cpu-jupyter",
    "tf218-cpu-serving",
    "tf218-cpu-ssh",
    "tf218-gpu-headless",
    "tf218-gpu-jupyter",
    "tf218-gpu-serving",
    "tf218-gpu-ssh",
];

/// The real engine. Unreachable fails the test (always under CI=true); a developer without
/// Docker can opt out explicitly with TFIMG_SKIP_ENGINE_TESTS=1.
pub async fn engine() -> Option<tfimg_testing::engine::Docker> {
    match tfimg_testing::engine::Docker::connect().await {
        Ok(engine) => Some(engine),
        Err(error) => {
            let ci = std::env::var("CI").is_ok_and(|value| value == "true");
            let opted_out =
                std::env::var("TFIMG_SKIP_ENGINE_TESTS").is_ok_and(|value| value == "1");
            if opted_out && !ci {
                eprintln!("skipping: Docker unreachable and TFIMG_SKIP_ENGINE_TESTS=1: {error}");
                None
            } else {
                panic!("the Docker Engine must be reachable for the integration tests: {error}");
            }
        }
    }
}

/// Fails, showing all of `text`, unless it contains `wanted`.
#[track_caller]
pub fn assert_contains(text: &str, wanted: &str) {
    assert!(text.contains(wanted), "{wanted:?} is not in:\n{text}");
}

/// The opener of a test that builds image `tfimg/<name>`: the real engine (`None` where a
/// developer opted out, as `engine` says), a name no other test uses, and a guard that
/// removes that repository's images when the test ends, failed or not.
pub async fn image_test(
    prefix: &str,
) -> Option<(tfimg_testing::engine::Docker, String, DockerGuard)> {
    let engine = engine().await?;
    let name = unique(prefix);
    let guard = DockerGuard::images(&[&format!("tfimg/{name}")]);
    Some((engine, name, guard))
}

/// The opener of a test that makes container `<name>`: as `image_test`, with a guard
/// that removes that container.
pub async fn container_test(
    prefix: &str,
) -> Option<(tfimg_testing::engine::Docker, String, DockerGuard)> {
    let engine = engine().await?;
    let name = unique(prefix);
    let guard = DockerGuard::containers(&[&name]);
    Some((engine, name, guard))
}

/// The embedded lock of the built-in `builtin` made the lock of spec `name`, which adds
/// nothing to what it resolves (a variable, files), with `base` another reference of the
/// same base image: its build takes every layer from the built-in's cache.
pub fn builtin_lock_for(builtin: &str, name: &str, base: Option<&str>) -> String {
    let path = format!("{}/images/{builtin}.lock", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.replacen(
        &format!("\nspec: {builtin}\n"),
        &format!("\nspec: {name}\n"),
        1,
    );
    match base {
        Some(base) => text
            .replacen(
                "\n  base: debian:bullseye-slim\n",
                &format!("\n  base: {base}\n"),
                1,
            )
            .replacen(
                "\n  reference: debian:bullseye-slim\n",
                &format!("\n  reference: {base}\n"),
                1,
            ),
        None => text,
    }
}

/// The machine's CA bundle: on this network PyPI is only reachable with it.
pub const HOST_CA: &str = "/etc/ssl/certs/ca-certificates.crt";

/// A name no other test (or earlier run) uses: `t<pid><nanos>`.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{prefix}-{}-{}-{nanos:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Removes, when dropped (also when the test fails), every image of the given
/// repositories, every container carrying the given label or name and the named volumes,
/// on the machine's daemon or (`on`) another one such as the stand-in NVIDIA host.
#[derive(Default)]
pub struct DockerGuard {
    pub repositories: Vec<String>,
    pub container_label: Option<String>,
    pub containers: Vec<String>,
    pub volumes: Vec<String>,
    /// `DOCKER_HOST` of the daemon; `None`: the machine's own.
    pub host: Option<String>,
}

impl DockerGuard {
    pub fn images(repositories: &[&str]) -> DockerGuard {
        let mut guard = DockerGuard::default();
        guard.repositories = repositories.iter().map(|r| r.to_string()).collect();
        guard
    }

    pub fn containers(names: &[&str]) -> DockerGuard {
        let mut guard = DockerGuard::default();
        guard.containers = names.iter().map(|n| n.to_string()).collect();
        guard
    }

    /// The same guard for the daemon at `host`.
    pub fn on(mut self, host: &str) -> DockerGuard {
        self.host = Some(host.to_string());
        self
    }
}

/// The docker CLI's stdout (empty when it fails): for checks from outside tfimg.
pub fn docker(args: &[&str]) -> String {
    docker_at(None, args)
}

/// `docker` against the daemon at `host` (`None`: the machine's own).
pub fn docker_at(host: Option<&str>, args: &[&str]) -> String {
    let mut command = Command::new("docker");
    if let Some(host) = host {
        command.args(["-H", host]);
    }
    command
        .args(args)
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .unwrap_or_default()
}

impl Drop for DockerGuard {
    fn drop(&mut self) {
        let docker = |args: &[&str]| docker_at(self.host.as_deref(), args);
        for name in &self.containers {
            // A team member's network (`tfimg-<team>.<member>` for `<team>-<member>`) goes
            // with it, once nothing else is on it (`docker network rm` refuses otherwise).
            let network = docker(&[
                "inspect",
                "-f",
                "{{index .Config.Labels \"io.tfimg.team\"}}.{{index .Config.Labels \"io.tfimg.member\"}}",
                name,
            ]);
            docker(&["rm", "-f", name]);
            let network = network.trim();
            if !network.starts_with('.') && !network.ends_with('.') && !network.is_empty() {
                docker(&["network", "rm", &format!("tfimg-{network}")]);
            }
        }
        if let Some(label) = &self.container_label {
            for id in
                docker(&["ps", "-aq", "--filter", &format!("label={label}")]).split_whitespace()
            {
                docker(&["rm", "-f", id]);
            }
            // A team's networks (each member has one, with a gateway or without) go once
            // its containers are gone.
            if label.starts_with("io.tfimg.team=") {
                let filter = format!("label={label}");
                for id in docker(&["network", "ls", "-q", "--filter", &filter]).split_whitespace() {
                    docker(&["network", "rm", id]);
                }
            }
        }
        for volume in &self.volumes {
            docker(&["volume", "rm", "-f", volume]);
        }
        // A sweep's guard: tfimg's record of where the sweep ran goes too (in this
        // machine's data folder, whatever the engine).
        let sweep = self
            .container_label
            .as_deref()
            .and_then(|label| label.strip_prefix("io.tfimg.sweep="));
        if let Some(sweep) = sweep {
            let _ = std::fs::remove_file(
                tfimg_testing::host::machine::data_dir()
                    .join("sweeps")
                    .join(sweep),
            );
        }
        for repository in &self.repositories {
            // Tags, and digests for what was pulled by digest (its tag is `<none>`).
            let listed = docker(&[
                "images",
                "--digests",
                "--format",
                "{{.Repository}}:{{.Tag}} {{.Repository}}@{{.Digest}}",
                repository,
            ]);
            for reference in listed.split_whitespace() {
                if !reference.contains("<none>") {
                    docker(&["rmi", "-f", reference]);
                }
            }
            // A test spec's earlier builds whose tags a later build took (dangling now);
            // never a built-in's.
            let spec = repository.strip_prefix("tfimg/");
            if let Some(spec) = spec.filter(|spec| !BUILTINS.contains(spec)) {
                let filter = format!("label=io.tfimg.spec={spec}");
                for id in docker(&["images", "-q", "--filter", &filter]).split_whitespace() {
                    docker(&["rmi", "-f", id]);
                }
            }
        }
    }
}

/// Runs tfimg with extra environment variables.
pub fn tfimg_with_env(current_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tfimg"));
    command
        .args(args)
        .current_dir(current_dir)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        // Keep a developer's own config file out of the tests.
        .env("TFIMG_CONFIG", "/dev/null")
        // Support windows are judged on a fixed day, never the machine's clock.
        .env("TFIMG_TODAY", TODAY);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("the tfimg binary runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Starts a Python kernel through Jupyter's REST API (as a notebook tab does), on the
/// server at 127.0.0.1:`port`; its id.
pub fn start_kernel(port: u16, token: &str) -> String {
    let (status, body) = http(
        "POST",
        port,
        &format!("/api/kernels?token={token}"),
        &[("Content-Type", "application/json")],
        "{\"name\": \"python3\"}",
    );
    assert_eq!(status, 201, "{body}");
    let kernel: serde_json::Value = serde_json::from_str(&body).unwrap();
    kernel["id"].as_str().expect("a kernel id").to_string()
}

/// One HTTP/1.0 request to 127.0.0.1:`port`; the status code and the body.
pub fn http(
    method: &str,
    port: u16,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    try_http(method, port, path, headers, body).expect("the port answers")
}

/// `http`, or `None` when the connection fails (a service still starting).
pub fn try_http(
    method: &str,
    port: u16,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .ok()?;
    let mut request = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(status_and_body(&response))
}

/// A raw HTTP response's status code (0 when there is none) and body.
pub fn status_and_body(response: &str) -> (u16, String) {
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The value after `key` on the line of `text` that starts with it (`jupyter    http://...`).
pub fn field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?;
        rest.starts_with(' ').then(|| rest.trim().to_string())
    })
}

/// Runs `command` to completion in a throw-away container of `image` (removed afterwards);
/// `network` false cuts it off from every network.
pub async fn run_in(
    engine: &tfimg_testing::engine::Docker,
    image: &str,
    command: &[&str],
    network: bool,
) -> tfimg_testing::engine::Finished {
    let one_off = tfimg_testing::engine::OneOff {
        image: image.to_string(),
        command: command.iter().map(|part| part.to_string()).collect(),
        network_disabled: !network,
        ..Default::default()
    };
    engine
        .run_once(&one_off, std::time::Duration::from_secs(180))
        .await
        .expect("the container runs")
}

/// A tfimg started without waiting; its output is drained as it comes (so a chatty
/// build never blocks on a full pipe) and stdout lines are also handed out live.
pub struct Running {
    pub child: std::process::Child,
    pub stdout_lines: std::sync::mpsc::Receiver<String>,
    readers: Vec<std::thread::JoinHandle<String>>,
}

/// Starts tfimg without waiting, for tests that signal it or act while it runs.
pub fn spawn_tfimg(current_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Running {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tfimg"));
    command
        .args(args)
        .current_dir(current_dir)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .env("TFIMG_CONFIG", "/dev/null")
        .env("TFIMG_TODAY", TODAY)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("the tfimg binary starts");
    let (sender, stdout_lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let readers = vec![
        std::thread::spawn(move || drain(stdout, Some(sender))),
        std::thread::spawn(move || drain(stderr, None)),
    ];
    Running {
        child,
        stdout_lines,
        readers,
    }
}

/// Every line of `pipe` as one text, each line also sent to `lines` when given.
fn drain(pipe: impl std::io::Read, lines: Option<std::sync::mpsc::Sender<String>>) -> String {
    use std::io::BufRead;
    let mut text = String::new();
    for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
        text.push_str(&line);
        text.push('\n');
        if let Some(lines) = &lines {
            let _ = lines.send(line);
        }
    }
    text
}

impl Running {
    /// Sends `signal` (libc::SIGINT, SIGTERM, ...) to the process.
    pub fn signal(&self, signal: i32) {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        assert_eq!(
            unsafe { libc::kill(pid, signal) },
            0,
            "kill({pid}, {signal})"
        );
    }

    /// Waits for the process. `limit` only catches a hang (the process is killed and the
    /// test fails); it is never a performance expectation.
    pub fn finish(mut self, limit: std::time::Duration) -> Run {
        let deadline = std::time::Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waitpid") {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let stderr = self.readers.pop().unwrap().join().unwrap_or_default();
                panic!("tfimg hung for {limit:?}; its stderr:\n{stderr}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let stderr = self.readers.pop().unwrap().join().unwrap_or_default();
        let stdout = self.readers.pop().unwrap().join().unwrap_or_default();
        Run {
            code: std::os::unix::process::ExitStatusExt::signal(&status)
                .map_or(status.code().unwrap_or(-1), |signal| 128 + signal),
            stdout,
            stderr,
        }
    }
}

/// Polls `check` every 100 ms until it holds; panics with `what` after `limit` (a hang
/// catcher, not a timing expectation).
pub fn wait_for(what: &str, limit: std::time::Duration, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "gave up waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The state of a container (`running`, `exited`, ...) or `None` when it does not exist.
pub fn container_state(name: &str) -> Option<String> {
    let state = docker(&["inspect", "--format", "{{.State.Status}}", name]);
    let state = state.trim();
    (!state.is_empty()).then(|| state.to_string())
}

/// What `docker save IMAGE` holds that must not be there: every file of every layer
/// (also files a later layer deletes) is looked at; a file that starts like a PEM private
/// key is reported, and so is any file of up to 4 MiB containing one of `needles`.
/// Returns `layer path: finding` lines.
pub fn secrets_in_layers(image: &str, needles: &[&str]) -> Vec<String> {
    use std::io::Read;
    let mut save = Command::new("docker")
        .args(["save", image])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("docker save starts");
    let stdout = save.stdout.take().unwrap();
    let mut findings = Vec::new();
    let mut files = 0usize;
    let mut outer = tar::Archive::new(stdout);
    for layer in outer.entries().expect("a tar from docker save") {
        let layer = layer.unwrap();
        let layer_name = layer.path().unwrap().display().to_string();
        if !layer_name.ends_with("layer.tar") {
            continue;
        }
        let mut inner = tar::Archive::new(layer);
        for file in inner.entries().unwrap() {
            let mut file = file.unwrap();
            if file.header().entry_type() != tar::EntryType::Regular {
                continue;
            }
            files += 1;
            let path = file.path().unwrap().display().to_string();
            let size = file.header().size().unwrap_or(0);
            let mut head = Vec::new();
            let limit = if size <= 4 << 20 { size } else { 64 };
            (&mut file).take(limit).read_to_end(&mut head).unwrap();
            let start = String::from_utf8_lossy(&head[..head.len().min(64)]).into_owned();
            if start.starts_with("-----BEGIN") && start.contains("PRIVATE KEY-----") {
                findings.push(format!("{layer_name} {path}: a private key"));
            }
            for needle in needles {
                if head
                    .windows(needle.len())
                    .any(|window| window == needle.as_bytes())
                {
                    findings.push(format!("{layer_name} {path}: `{needle}`"));
                }
            }
        }
    }
    assert!(save.wait().unwrap().success(), "docker save {image}");
    assert!(files > 1000, "only {files} files in the layers of {image}");
    findings
}

/// The address containers reach the host at: the default bridge's gateway. A fresh
/// daemon may report only the subnet (`{"Config":[{"Subnet":"172.17.0.0/16"}]}`, seen on
/// the first daemon of a new machine), so this falls back to the bridge interface's own
/// address, then to the subnet's first host (where Docker puts the gateway).
pub fn bridge_gateway() -> String {
    let inspect = docker(&["network", "inspect", "bridge", "--format", "{{json .}}"]);
    let network: serde_json::Value =
        serde_json::from_str(inspect.trim()).expect("`docker network inspect bridge` is JSON");
    let interface = network["Options"]["com.docker.network.bridge.name"]
        .as_str()
        .unwrap_or("docker0");
    gateway_from(&network["IPAM"], interface_ipv4(interface)).unwrap_or_else(|| {
        panic!(
            "no address for the default bridge: IPAM {}, no address on `{interface}`",
            network["IPAM"]
        )
    })
}

/// The gateway from a network's IPAM section, else `interface_address`, else the first
/// host of the IPv4 subnet.
pub fn gateway_from(
    ipam: &serde_json::Value,
    interface_address: Option<std::net::Ipv4Addr>,
) -> Option<String> {
    let configs = ipam["Config"].as_array().cloned().unwrap_or_default();
    let ipv4 = |text: &str| text.parse::<std::net::Ipv4Addr>().ok();
    if let Some(gateway) = configs
        .iter()
        .filter_map(|config| config["Gateway"].as_str())
        .find_map(ipv4)
    {
        return Some(gateway.to_string());
    }
    if let Some(address) = interface_address {
        return Some(address.to_string());
    }
    configs
        .iter()
        .filter_map(|config| config["Subnet"].as_str())
        .find_map(|subnet| {
            let (network, bits) = subnet.split_once('/')?;
            let network = u32::from(ipv4(network)?);
            let bits: u32 = bits.parse().ok().filter(|bits| *bits < 31)?;
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            Some(std::net::Ipv4Addr::from((network & mask) + 1).to_string())
        })
}

/// The IPv4 address of a network interface of this machine (getifaddrs).
pub fn interface_ipv4(name: &str) -> Option<std::net::Ipv4Addr> {
    let mut addresses: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills a list that freeifaddrs releases; we only read it between.
    if unsafe { libc::getifaddrs(&mut addresses) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cursor = addresses;
    while !cursor.is_null() {
        // SAFETY: cursor walks the list getifaddrs returned, which stays valid until freed.
        let entry = unsafe { &*cursor };
        let entry_name = unsafe { std::ffi::CStr::from_ptr(entry.ifa_name) };
        if entry_name.to_bytes() == name.as_bytes() && !entry.ifa_addr.is_null() {
            // SAFETY: ifa_addr is non-null; sa_family tells its real type.
            if i32::from(unsafe { (*entry.ifa_addr).sa_family }) == libc::AF_INET {
                let address = unsafe { &*(entry.ifa_addr as *const libc::sockaddr_in) };
                found = Some(std::net::Ipv4Addr::from(u32::from_be(
                    address.sin_addr.s_addr,
                )));
                break;
            }
        }
        cursor = entry.ifa_next;
    }
    // SAFETY: the list came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(addresses) };
    found
}

/// A "package index" that accepts pip's connection and never answers: the build sits in
/// the middle of its pip step for as long as the test wants. Returns the index URL and a
/// receiver that gets one message per connection.
pub fn silent_index() -> (String, std::sync::mpsc::Receiver<()>, std::net::TcpListener) {
    let gateway = bridge_gateway();
    let listener =
        std::net::TcpListener::bind((gateway.as_str(), 0)).expect("a port on the bridge");
    let port = listener.local_addr().unwrap().port();
    let (sender, connected) = std::sync::mpsc::channel();
    let accepting = listener.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in accepting.incoming().map_while(Result::ok) {
            held.push(stream);
            if sender.send(()).is_err() {
                break;
            }
        }
    });
    (
        format!("http://{gateway}:{port}/simple"),
        connected,
        listener,
    )
}

/// A Jupyter URL as `run` prints it (`http://127.0.0.1:PORT/lab?token=T`), in parts.
pub struct JupyterUrl {
    /// The URL without its token, as labels and `ps` show it.
    pub address: String,
    pub port: u16,
    pub token: String,
}

pub fn jupyter_url(url: &str) -> JupyterUrl {
    let (address, token) = url.split_once("?token=").expect("the URL has its token");
    let port = address
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/lab")
        .parse()
        .expect("a loopback port");
    JupyterUrl {
        address: address.to_string(),
        port,
        token: token.to_string(),
    }
}

/// Whether Debian's `chromium` is here. Under CI=true it must be (scripts/setup-machine
/// installs it); elsewhere a missing browser skips the browser part, saying so.
pub fn chromium_available() -> bool {
    let found = Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        let ci = std::env::var("CI").is_ok_and(|value| value == "true");
        assert!(
            !ci,
            "headless Chromium (`chromium`) is missing; scripts/setup-machine installs it"
        );
        eprintln!("skipping the browser checks: no `chromium` on PATH (scripts/setup-machine installs it)");
    }
    found
}

/// Whether the tests run as root (CI does): the root-only checks need it.
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A new ed25519 key pair `id_ed25519` (and `.pub`) in `folder`, without a passphrase.
pub fn ssh_key(folder: &Path) -> std::path::PathBuf {
    let key = folder.join("id_ed25519");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen runs");
    assert!(made.success());
    key
}
