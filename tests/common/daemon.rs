//! The machine's own dockerd stopped and started again, as a restart does, for the tests
//! that restart it (each its own test binary: cargo runs binaries one after another).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::wait_for;

pub const HANG: Duration = Duration::from_secs(180);

pub const PID_FILE: &str = "/var/run/docker.pid";
pub const LOG: &str = "/var/log/tfimg-dockerd.log";

pub fn daemon_answers() -> bool {
    Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
        .is_ok_and(|output| output.status.success())
}

pub fn systemd_managed() -> bool {
    Command::new("systemctl")
        .args(["is-active", "--quiet", "docker"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// How the running dockerd was started, and how to start it again.
pub struct Daemon {
    command_line: Vec<String>,
    systemd: bool,
}

impl Daemon {
    pub fn current() -> Daemon {
        let systemd = systemd_managed();
        let pid = std::fs::read_to_string(PID_FILE).expect("dockerd's pid file");
        let command_line = std::fs::read(format!("/proc/{}/cmdline", pid.trim()))
            .expect("dockerd's command line")
            .split(|byte| *byte == 0)
            .filter(|part| !part.is_empty())
            .map(|part| String::from_utf8_lossy(part).into_owned())
            .collect();
        Daemon {
            command_line,
            systemd,
        }
    }

    /// Stops dockerd the way a restart does (SIGTERM: containers are stopped first).
    pub fn stop(&self) {
        if self.systemd {
            assert!(Command::new("systemctl")
                .args(["stop", "docker", "docker.socket"])
                .status()
                .unwrap()
                .success());
        } else {
            let pid: i32 = std::fs::read_to_string(PID_FILE)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            // SAFETY: kill(2) has no memory-safety preconditions.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
            wait_for("dockerd to exit", HANG, || {
                !Path::new(&format!("/proc/{pid}")).exists()
            });
        }
        assert!(!daemon_answers());
    }

    pub fn start(&self) {
        if daemon_answers() {
            return;
        }
        if self.systemd {
            let _ = Command::new("systemctl").args(["start", "docker"]).status();
        } else {
            // Started by a shell that exits at once (so nothing waits on dockerd), in its
            // own session: it outlives this test and its signals, as `nohup dockerd &` does.
            let started = Command::new("setsid")
                .args([
                    "sh",
                    "-c",
                    &format!("exec \"$@\" >>{LOG} 2>&1 </dev/null &"),
                    "sh",
                ])
                .args(&self.command_line)
                .status()
                .expect("dockerd starts");
            assert!(started.success());
        }
        wait_for("dockerd to answer", HANG, daemon_answers);
    }
}

/// Starts the daemon again whatever happened in the test.
pub struct Restarter<'a>(pub &'a Daemon);

impl Drop for Restarter<'_> {
    fn drop(&mut self) {
        self.0.start();
    }
}
