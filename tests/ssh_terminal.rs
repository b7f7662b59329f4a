//! The SSH box as a person uses it, in a real pseudo-terminal (rexpect): log in with the
//! line `tfimg run` printed, start a long job in tmux, log out; log in again, `tmux
//! attach`, see the job, detach, log out. For the three host users tfimg meets: root
//! (then the container runs as the image's user), a user under sudo (then as that user)
//! and a plain user (as themselves). Before the trust-boundary work, root's login closed
//! at once (`linux_audit_write_entry failed`, exit 255): sshd ran as uid 0 without the
//! capability a terminal login needs.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use common::{field, scratch, unique, DockerGuard, HOST_CA};

const EXPECT_MS: u64 = 60_000;

/// How tfimg is started: as this process (root), with sudo's variables, or as a plain user.
enum HostUser {
    Root,
    Sudo(u32),
    Plain(u32),
}

/// The docker group's id (the socket's group), which a plain user needs to reach the daemon.
fn docker_group() -> u32 {
    let groups = std::fs::read_to_string("/etc/group").unwrap();
    groups
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields[0] == "docker").then(|| fields[2].parse().unwrap())
        })
        .expect("a `docker` group (Debian's docker.io makes it)")
}

/// `tfimg run cpu-ssh -d` as `user`, in `folder`; the printed ssh line as words.
fn start(user: &HostUser, folder: &Path, name: &str, key: &Path) -> Vec<String> {
    let binary = env!("CARGO_BIN_EXE_tfimg");
    let mut command = match user {
        HostUser::Plain(uid) => {
            let mut command = std::process::Command::new("setpriv");
            command.args([
                format!("--reuid={uid}"),
                format!("--regid={uid}"),
                format!("--groups={}", docker_group()),
                "--".to_string(),
                binary.to_string(),
            ]);
            command
        }
        _ => std::process::Command::new(binary),
    };
    command
        .args(["run", "cpu-ssh", "-d", "--no-build", "--name", name])
        .arg("--ssh-key")
        .arg(key.with_extension("pub"))
        .args(["--ca-cert", HOST_CA])
        .current_dir(folder)
        .env("HOME", folder)
        .env("XDG_DATA_HOME", folder.join(".tfimg-data"))
        .env("NO_COLOR", "1")
        .env("TFIMG_CONFIG", "/dev/null")
        .env("TFIMG_TODAY", common::TODAY)
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID");
    if let HostUser::Sudo(uid) = user {
        command
            .env("SUDO_UID", uid.to_string())
            .env("SUDO_GID", uid.to_string());
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let line = field(&stdout, "ssh").expect("an ssh line");
    line.split_whitespace().map(str::to_string).collect()
}

/// A login through `line` in a real terminal (options go before the destination).
fn login(line: &[String]) -> rexpect::session::PtySession {
    let (destination, options) = line.split_last().unwrap();
    let mut command = std::process::Command::new(&options[0]);
    command
        .args(&options[1..])
        .args(["-tt", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"])
        .arg(destination);
    let mut session = rexpect::session::spawn_command(command, Some(EXPECT_MS)).unwrap();
    // Arithmetic the shell must do: its echo of the command line does not match.
    session.send_line("echo ready-$((6*7))").unwrap();
    session.exp_string("ready-42").unwrap_or_else(|error| {
        panic!("no shell at the login: {error}");
    });
    session
}

fn log_out(mut session: rexpect::session::PtySession) {
    session.send_line("exit").unwrap();
    session.exp_eof().unwrap();
    let status = session.process().wait().unwrap();
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
}

fn tmux_survives_logging_out(user: HostUser, uid_inside: u32) {
    let folder = scratch(&[]);
    let key = common::ssh_key(folder.path());
    if let HostUser::Plain(uid) = user {
        std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for path in [folder.path().to_path_buf(), key.with_extension("pub")] {
            std::os::unix::fs::chown(&path, Some(uid), Some(uid)).unwrap();
        }
    }
    let name = unique("t-tmux");
    let _guard = DockerGuard::containers(&[&name]);
    let line = start(&user, folder.path(), &name, &key);

    // The first login needs the container's sshd up: retried for a while.
    let mut session = None;
    for _ in 0..60 {
        let probe = std::process::Command::new(&line[0])
            .args(&line[1..line.len() - 1])
            .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=5"])
            .arg(&line[line.len() - 1])
            .arg("true")
            .output()
            .unwrap();
        if probe.status.success() {
            session = Some(login(&line));
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut session = session.expect("sshd answers within 30 s");
    session
        .send_line("echo uid-$(id -u) $(grep CapEff /proc/self/status)")
        .unwrap();
    session
        .exp_string(&format!("uid-{uid_inside} CapEff: 0000000000000000"))
        .unwrap();
    session
        .send_line("tmux new-session -d -s train 'echo job-$((20+3)) running; sleep 600'")
        .unwrap();
    session
        .send_line("tmux has-session -t train && echo kept-$((1+1))")
        .unwrap();
    session.exp_string("kept-2").unwrap();
    log_out(session);

    let mut session = login(&line);
    session.send_line("tmux attach -t train").unwrap();
    session.exp_string("job-23 running").unwrap();
    detach(&mut session);
    session
        .send_line("tmux has-session -t train && echo still-$((2+2))")
        .unwrap();
    session.exp_string("still-4").unwrap();
    log_out(session);
}

/// Detaches the attached tmux client (Ctrl-b d) and waits for its `[detached`. The keys go
/// again every 5 s while none came: once in CI (2026-11-30) tmux took them while it was
/// still drawing the attached client and only redraws followed. Any stray `d` a late
/// detach leaves at the shell's prompt is cleared (Ctrl-u). A detach that never works
/// still fails, after 4 tries.
fn detach(session: &mut rexpect::session::PtySession) {
    let mut seen = String::new();
    for _ in 0..4 {
        session.send_control('b').unwrap();
        session.send("d").unwrap();
        session.flush().unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < until {
            match session.try_read() {
                Some(read) => seen.push(read),
                None => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
            if seen.contains("[detached") {
                session.send_control('u').unwrap();
                return;
            }
        }
    }
    panic!("tmux never said [detached after 4 tries: {seen:?}");
}

/// Whether this test can run: an engine, and root (to be root, and to become the others).
async fn root_with_an_engine() -> bool {
    if common::engine().await.is_none() {
        return false;
    }
    if !common::running_as_root() {
        eprintln!("skipping: needs root (CI runs as root)");
    }
    common::running_as_root()
}

#[tokio::test]
async fn as_root_a_tmux_job_survives_logging_out_and_attaches_again() {
    if root_with_an_engine().await {
        tmux_survives_logging_out(HostUser::Root, 1000);
    }
}

#[tokio::test]
async fn under_sudo_a_tmux_job_survives_logging_out_and_attaches_again() {
    if root_with_an_engine().await {
        tmux_survives_logging_out(HostUser::Sudo(4242), 4242);
    }
}

#[tokio::test]
async fn as_a_plain_user_a_tmux_job_survives_logging_out_and_attaches_again() {
    if root_with_an_engine().await {
        tmux_survives_logging_out(HostUser::Plain(4343), 4343);
    }
}
