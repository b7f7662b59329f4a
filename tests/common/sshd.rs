//! A real OpenSSH server on 127.0.0.1 for the remote-engine tests: its own host key, a
//! client key it accepts and one it does not, a client config that trusts exactly its
//! host key, and five ports: the machine's Docker as it is (`port`), a shell without
//! `docker` on its PATH (`no_docker_port`), one whose daemon is down
//! (`daemon_down_port`), a GPU server (`gpu_port`: `docker` there is the stand-in NVIDIA
//! host of tests/common/gpu.rs and the stand-in `nvidia-smi` is on the PATH), and a host
//! with a driver but no container toolkit (`driver_only_port`: the machine's Docker, the
//! stand-in `nvidia-smi` on the PATH). Everything lives in one private folder removed on
//! drop, and the server is stopped then. `scripts/setup-machine` installs openssh-server
//! (never started as a service).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    /// Keys, configs, known_hosts, the server's log.
    pub dir: tempfile::TempDir,
    /// A short XDG_RUNTIME_DIR for tfimg's control sockets (`sun_path` is 108 bytes).
    pub runtime: tempfile::TempDir,
    pub port: u16,
    pub no_docker_port: u16,
    pub daemon_down_port: u16,
    /// Sessions reach the stand-in NVIDIA host's daemon (start it with
    /// `common::gpu::gpu_engine()` first) and find the stand-in `nvidia-smi`.
    pub gpu_port: u16,
    /// Sessions reach the machine's daemon (no toolkit) and find the stand-in `nvidia-smi`.
    pub driver_only_port: u16,
    server: std::process::Child,
}

/// `count` different free ports (held together while chosen, so none repeats).
fn free_ports(count: usize) -> Vec<u16> {
    let listeners: Vec<std::net::TcpListener> = (0..count)
        .map(|_| std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap())
        .collect();
    listeners
        .iter()
        .map(|listener| listener.local_addr().unwrap().port())
        .collect()
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "tfimg-test", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen runs");
    assert!(status.success(), "ssh-keygen {}", path.display());
}

fn write(path: &Path, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

impl Sshd {
    /// The server, answering. `None` only when TFIMG_SKIP_SSH_TESTS=1 outside CI and
    /// sshd is not installed; under CI=true a missing sshd fails the test.
    pub fn start() -> Option<Sshd> {
        if !Path::new(SSHD).exists() {
            let ci = std::env::var("CI").is_ok_and(|value| value == "true");
            let opted_out = std::env::var("TFIMG_SKIP_SSH_TESTS").is_ok_and(|value| value == "1");
            if opted_out && !ci {
                eprintln!("skipping: {SSHD} missing and TFIMG_SKIP_SSH_TESTS=1");
                return None;
            }
            panic!("{SSHD} is missing: run scripts/setup-machine (it installs openssh-server)");
        }
        // The build's temporary folder, wherever the checkout lies: sshd's StrictModes is
        // off below (see server_config), so a clone under /tmp works as one under /root.
        let dir = tempfile::Builder::new()
            .prefix("sshd-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let runtime = tempfile::Builder::new().prefix("rt-").tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all("/run/sshd").unwrap();
        for key in ["host_key", "client_key", "wrong_key"] {
            keygen(&d.join(key));
        }
        let ports = free_ports(5);
        let (port, no_docker_port, daemon_down_port) = (ports[0], ports[1], ports[2]);
        let (gpu_port, driver_only_port) = (ports[3], ports[4]);
        let client_public = std::fs::read_to_string(d.join("client_key.pub")).unwrap();
        write(&d.join("authorized_keys"), &client_public, 0o600);
        let host_public = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
        let host_public = host_public
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let known: String = ports
            .iter()
            .map(|port| format!("[127.0.0.1]:{port} {host_public}\n"))
            .collect();
        write(&d.join("known_hosts"), &known, 0o600);
        write(&d.join("empty_known_hosts"), "", 0o600);
        write(&d.join("sshd_config"), &server_config(d, &ports), 0o600);
        for (name, key, known) in [
            ("ssh_config", "client_key", "known_hosts"),
            ("ssh_config_wrong_key", "wrong_key", "known_hosts"),
            ("ssh_config_unknown_host", "client_key", "empty_known_hosts"),
        ] {
            write(&d.join(name), &client_config(d, key, known), 0o600);
        }
        let checked = Command::new(SSHD)
            .args(["-t", "-f"])
            .arg(d.join("sshd_config"))
            .output()
            .unwrap();
        assert!(
            checked.status.success(),
            "sshd -t: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
        let log = std::fs::File::create(d.join("sshd.log")).unwrap();
        let server = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("sshd starts");
        let mut sshd = Sshd {
            dir,
            runtime,
            port,
            no_docker_port,
            daemon_down_port,
            gpu_port,
            driver_only_port,
            server,
        };
        sshd.wait_until_listening();
        Some(sshd)
    }

    fn wait_until_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(status)) = self.server.try_wait() {
                panic!("sshd exited ({status}): {}", self.log());
            }
            let all = [
                self.port,
                self.no_docker_port,
                self.daemon_down_port,
                self.gpu_port,
                self.driver_only_port,
            ]
            .iter()
            .all(|port| std::net::TcpStream::connect(("127.0.0.1", *port)).is_ok());
            if all {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "sshd never listened: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// What the server logged (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.path("sshd.log")).unwrap_or_default()
    }

    pub fn url(&self, port: u16) -> String {
        format!("ssh://root@127.0.0.1:{port}")
    }

    /// The `DOCKER_HOST` of `env`: the machine's Docker through this server.
    pub fn docker_host(&self) -> String {
        self.url(self.port)
    }

    /// `TFIMG_SSH_COMMAND` with one of the client configs (`ssh_config`, ...).
    pub fn ssh_command(&self, config: &str) -> String {
        format!("ssh -F {}", self.path(config).display())
    }

    /// The environment of a tfimg reaching the machine's Docker through this server, with
    /// `DOCKER_CONFIG` kept inside the test's folder.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("DOCKER_HOST".to_string(), self.url(self.port)),
            (
                "TFIMG_SSH_COMMAND".to_string(),
                self.ssh_command("ssh_config"),
            ),
            (
                "XDG_RUNTIME_DIR".to_string(),
                self.runtime.path().display().to_string(),
            ),
            (
                "DOCKER_CONFIG".to_string(),
                self.path("docker").display().to_string(),
            ),
            ("DOCKER_CONTEXT".to_string(), String::new()),
            // tfimg's records (tunnels, keys, known_hosts) stay in the test's folder.
            (
                "XDG_DATA_HOME".to_string(),
                self.path("data").display().to_string(),
            ),
        ]
    }

    /// `env` with `extra` set over it (an empty value unsets the variable for tfimg).
    pub fn env_with(&self, extra: &[(&str, String)]) -> Vec<(String, String)> {
        let mut env = self.env();
        for (key, value) in extra {
            env.retain(|(known, _)| known != key);
            env.push((key.to_string(), value.clone()));
        }
        env
    }

    /// `tfimg <args>` in `folder`, reaching the machine's Docker through this server.
    pub fn tfimg_in(&self, folder: &Path, extra: &[(&str, String)], args: &[&str]) -> super::Run {
        let env = self.env_with(extra);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        super::tfimg_with_env(folder, args, &env)
    }

    /// `tfimg <args>` started without waiting (to be signalled), through this server.
    pub fn spawn_tfimg(&self, folder: &Path, args: &[&str]) -> super::Running {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        super::spawn_tfimg(folder, args, &env)
    }

    /// Processes still running that belong to this test: ssh clients naming its folders,
    /// and the server's own session processes. Each as `pid: command line`.
    pub fn leftovers(&self) -> Vec<String> {
        let server = self.server.id();
        let marks = [
            self.dir.path().display().to_string(),
            self.runtime.path().display().to_string(),
        ];
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if pid == server || pid == std::process::id() {
                continue;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline"))
                .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
                .unwrap_or_default();
            let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
            let parent = status
                .lines()
                .find_map(|line| line.strip_prefix("PPid:"))
                .and_then(|value| value.trim().parse::<u32>().ok());
            let zombie = status
                .lines()
                .any(|line| line.starts_with("State:") && line.contains('Z'));
            if zombie || cmdline.is_empty() {
                continue;
            }
            if parent == Some(server) || marks.iter().any(|mark| cmdline.contains(mark.as_str())) {
                found.push(format!("{pid}: {}", cmdline.trim()));
            }
        }
        found
    }

    /// Waits (up to `limit`) until nothing of this test runs; what is left otherwise.
    pub fn settle(&self, limit: Duration) -> Vec<String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = self.leftovers();
            if left.is_empty() || Instant::now() > deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // SIGTERM: sshd stops listening and exits; its sessions end with their clients.
        if let Ok(pid) = i32::try_from(self.server.id()) {
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        let _ = self.server.wait();
    }
}

/// Ports as in `Sshd`: the machine's Docker, no docker, a daemon that is down, the GPU
/// server, a driver without toolkit. StrictModes is off: it refuses keys when any folder
/// above them is writable by others, and the folders above a test's keys are wherever a
/// contributor cloned the repository (a clone under the 1777 `/tmp` failed every remote
/// test). The key files themselves are still 0600 and the server listens on 127.0.0.1 only.
fn server_config(d: &Path, ports: &[u16]) -> String {
    let d = d.display();
    let [port, no_docker, daemon_down, gpu, driver_only] = ports[..] else {
        panic!("five ports");
    };
    // The stand-in nvidia-smi first on the PATH of these sessions; the rest as sshd's own.
    let path = format!(
        "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        super::gpu::standin_bin().display()
    );
    let gpu_host = super::gpu::GPU_HOST;
    format!(
        "ListenAddress 127.0.0.1\n\
         Port {port}\nPort {no_docker}\nPort {daemon_down}\nPort {gpu}\nPort {driver_only}\n\
         HostKey {d}/host_key\n\
         PidFile none\n\
         AuthorizedKeysFile {d}/authorized_keys\n\
         PermitRootLogin prohibit-password\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         UsePAM no\n\
         StrictModes no\n\
         AllowTcpForwarding local\n\
         X11Forwarding no\n\
         PermitTTY no\n\
         MaxSessions 20\n\
         LogLevel VERBOSE\n\
         Match LocalPort {no_docker}\n\
         \x20   ForceCommand /usr/bin/env PATH=/nonexistent /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n\
         Match LocalPort {daemon_down}\n\
         \x20   ForceCommand /usr/bin/env DOCKER_HOST=unix:///nonexistent.sock /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n\
         Match LocalPort {gpu}\n\
         \x20   ForceCommand /usr/bin/env DOCKER_HOST={gpu_host} PATH={path} /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n\
         Match LocalPort {driver_only}\n\
         \x20   ForceCommand /usr/bin/env PATH={path} /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n"
    )
}

fn client_config(d: &Path, key: &str, known: &str) -> String {
    let d = d.display();
    format!(
        "Host *\n\
         \x20   IdentityFile {d}/{key}\n\
         \x20   IdentitiesOnly yes\n\
         \x20   IdentityAgent none\n\
         \x20   UserKnownHostsFile {d}/{known}\n\
         \x20   GlobalKnownHostsFile /dev/null\n\
         \x20   StrictHostKeyChecking yes\n\
         \x20   BatchMode yes\n"
    )
}
