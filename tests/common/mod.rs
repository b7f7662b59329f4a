//! Helpers shared by the integration tests: run the real `tfimg` binary in a scratch
//! folder and capture what a user would see.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
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

pub const BUILTINS: &[&str] = &[
    "cpu-headless",
    "cpu-jupyter",
    "cpu-ssh",
    "gpu-headless",
    "gpu-jupyter",
    "gpu-ssh",
];

/// The real engine. Unreachable fails the test (always under CI=true); a developer without
/// Docker can opt out explicitly with TFIMG_SKIP_ENGINE_TESTS=1.
pub async fn engine() -> Option<tfimg::engine::Engine> {
    match tfimg::engine::Engine::connect().await {
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
/// repositories and every container carrying the given label.
pub struct DockerGuard {
    pub repositories: Vec<String>,
    pub container_label: Option<String>,
}

impl DockerGuard {
    pub fn images(repositories: &[&str]) -> DockerGuard {
        DockerGuard {
            repositories: repositories.iter().map(|r| r.to_string()).collect(),
            container_label: None,
        }
    }
}

fn docker(args: &[&str]) -> String {
    Command::new("docker")
        .args(args)
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .unwrap_or_default()
}

impl Drop for DockerGuard {
    fn drop(&mut self) {
        if let Some(label) = &self.container_label {
            for id in
                docker(&["ps", "-aq", "--filter", &format!("label={label}")]).split_whitespace()
            {
                docker(&["rm", "-f", id]);
            }
        }
        for repository in &self.repositories {
            let listed = docker(&["images", "--format", "{{.Repository}}:{{.Tag}}", repository]);
            for reference in listed.split_whitespace() {
                docker(&["rmi", "-f", reference]);
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
        .env("TFIMG_CONFIG", "/nonexistent/tfimg-test-config.yaml");
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
