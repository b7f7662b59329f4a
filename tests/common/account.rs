//! Another account on this machine, made for one test and removed after it (also when the
//! test fails): the "another local account" of the trust boundaries, with a uid no other
//! account has (never 1000, which containers run as from a root shell), its own group,
//! and no home folder. Making one takes root (`useradd`), which CI runs as.

use std::process::{Command, Output};

pub struct Account {
    pub name: String,
    pub uid: u32,
}

impl Account {
    /// A new account, or `None` when not root (the caller's test then returns).
    pub fn new() -> Option<Account> {
        if !super::running_as_root() {
            return None;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!("tfx{:x}{:x}", std::process::id() % 0xffff, nanos % 0xfffff);
        // A free uid from 40000 up, away from the usual ranges of real people.
        let uid = (40_000 + (nanos % 20_000))..60_000;
        let uid = uid
            .into_iter()
            .find(|uid| {
                let taken = Command::new("getent")
                    .args(["passwd", &uid.to_string()])
                    .output()
                    .is_ok_and(|output| output.status.success());
                let group = Command::new("getent")
                    .args(["group", &uid.to_string()])
                    .output()
                    .is_ok_and(|output| output.status.success());
                !taken && !group
            })
            .expect("a free uid");
        let made = Command::new("useradd")
            .args(["--no-create-home", "--user-group", "--shell", "/bin/sh"])
            .args(["--uid", &uid.to_string(), &name])
            .output()
            .expect("useradd runs");
        assert!(
            made.status.success(),
            "useradd: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        Some(Account { name, uid })
    }

    /// `script` run by `sh` as this account (`runuser`, from the folder `/`).
    pub fn run(&self, script: &str) -> Output {
        Command::new("runuser")
            .args(["-u", &self.name, "--", "sh", "-c", script])
            .current_dir("/")
            .output()
            .expect("runuser runs")
    }

    /// `script` run as this account, which must succeed.
    pub fn must(&self, script: &str) {
        let output = self.run(script);
        assert!(
            output.status.success(),
            "as {}: {script}: {}",
            self.name,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
        let _ = Command::new("groupdel").arg(&self.name).output();
    }
}
