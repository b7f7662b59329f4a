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
