//! Helpers shared by the integration tests: run the real `tfimg` binary in a scratch
//! folder and capture what a user would see.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn tfimg(current_dir: &Path, args: &[&str]) -> Run {
    let output: Output = Command::new(env!("CARGO_BIN_EXE_tfimg"))
        .args(args)
        .current_dir(current_dir)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("the tfimg binary runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
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
