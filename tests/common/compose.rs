//! A Compose project a test started from a tfimg export: stopped and removed when the
//! guard drops (also when the test fails).

use std::path::PathBuf;
use std::process::{Command, Output};

/// `docker-compose -f FILE -p PROJECT ...`; `down` when dropped.
pub struct ComposeGuard {
    pub file: PathBuf,
    pub project: String,
}

impl ComposeGuard {
    /// Runs `docker-compose` on the project with `args`, the environment's `env` added.
    pub fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new("docker-compose")
            .arg("-f")
            .arg(&self.file)
            .args(["-p", &self.project])
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }
}

impl Drop for ComposeGuard {
    fn drop(&mut self) {
        let _ = self.run(&["down", "--timeout", "2"], &[]);
    }
}
