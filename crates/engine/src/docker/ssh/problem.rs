//! What went wrong reaching a Docker daemon through ssh, read from what ssh, the remote
//! shell and the remote docker CLI wrote on stderr, as a cause and the fix to print. Pure:
//! tested on stderr captured from OpenSSH 9.2 and docker 20.10
//! (`tests/fixtures/ssh/`).

use crate::endpoint::SshTarget;

/// Which ssh process failed: the master (connect, host key, authentication) or a dial
/// (the remote `docker system dial-stdio`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Master,
    Dial,
}

/// The cause (after "cannot reach the Docker daemon at `URL`: ") and its fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshProblem {
    pub cause: String,
    pub hint: String,
}

impl SshProblem {
    fn new(cause: String, hint: impl Into<String>) -> SshProblem {
        SshProblem {
            cause,
            hint: hint.into(),
        }
    }
}

/// The host and port ssh reported (`connect to host H port P:`, `Could not resolve
/// hostname H:`), else the URL's: an alias in ~/.ssh/config may name another.
fn place(stderr: &str, target: &SshTarget) -> (String, String) {
    let default_port = target.port.unwrap_or(22).to_string();
    let reported = stderr.lines().find_map(|line| {
        if let Some(at) = line.find("Could not resolve hostname ") {
            let rest = &line[at + "Could not resolve hostname ".len()..];
            let host = rest.split(':').next()?;
            return Some((host.to_string(), default_port.clone()));
        }
        let rest = &line[line.find("connect to host ")? + "connect to host ".len()..];
        let (host, rest) = rest.split_once(" port ")?;
        let port = rest.split(':').next()?;
        Some((host.to_string(), port.to_string()))
    });
    reported.unwrap_or_else(|| (target.host.clone(), target.port.unwrap_or(22).to_string()))
}

/// The last line that says something (ssh ends its lines with `\r\n`).
pub fn last_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .unwrap_or("")
        .to_string()
}

fn user_of(target: &SshTarget) -> String {
    target
        .user
        .clone()
        .unwrap_or_else(|| "your user".to_string())
}

/// The login as a user types it for the hints: `me@host` (and `-p PORT`).
fn login(target: &SshTarget) -> String {
    let host = match &target.user {
        Some(user) => format!("{user}@{}", target.host),
        None => target.host.clone(),
    };
    match target.port {
        Some(port) => format!("-p {port} {host}"),
        None => host,
    }
}

/// The cause of a failed master or dial, from its stderr and exit status.
pub fn classify(
    phase: Phase,
    stderr: &str,
    status: Option<i32>,
    target: &SshTarget,
    connect_seconds: u64,
) -> SshProblem {
    let (host, port) = place(stderr, target);
    let lower = stderr.to_ascii_lowercase();
    let ssh = login(target);
    // A dial's stderr is the remote docker CLI's own ("connect: connection refused" is
    // then the daemon's socket, not ssh's connection).
    if phase == Phase::Dial {
        if let Some(problem) = docker_problem(stderr, &lower, status, target, &ssh) {
            return problem;
        }
    }
    if let Some(problem) = connection_problem(&lower, &host, &port, &ssh, connect_seconds) {
        return problem;
    }
    if let Some(problem) = authentication_problem(stderr, &host, &known_name(target), &ssh) {
        return problem;
    }
    if lower.contains("administratively prohibited") {
        return SshProblem::new(
            format!(
                "the ssh server on `{host}` refused a channel (MaxSessions or AllowTcpForwarding)"
            ),
            "ask for `MaxSessions 20` and `AllowTcpForwarding local` in its sshd_config",
        );
    }
    let said = last_line(stderr);
    let status = status.map_or("was killed".to_string(), |code| {
        format!("exited with status {code}")
    });
    let cause = match (phase, said.is_empty()) {
        (Phase::Master, true) => format!("ssh to `{host}` {status}"),
        (Phase::Master, false) => format!("ssh to `{host}` {status}: {said}"),
        (Phase::Dial, true) => format!("`docker system dial-stdio` on `{host}` {status}"),
        (Phase::Dial, false) => format!("`docker system dial-stdio` on `{host}` {status}: {said}"),
    };
    SshProblem::new(
        cause,
        format!("`ssh {ssh} docker version` must work without a prompt; `TFIMG_SSH_COMMAND='ssh -v'` shows what ssh does"),
    )
}

fn connection_problem(
    lower: &str,
    host: &str,
    port: &str,
    ssh: &str,
    connect_seconds: u64,
) -> Option<SshProblem> {
    if lower.contains("could not resolve hostname") {
        return Some(SshProblem::new(
            format!("ssh cannot resolve the host name `{host}`"),
            format!("check the spelling, or add a `Host {host}` entry with its `HostName` to ~/.ssh/config"),
        ));
    }
    if lower.contains("connection refused") {
        return Some(SshProblem::new(
            format!("`{host}` refused the connection on port {port}"),
            format!("check the port (`ssh://user@host:PORT`) and that sshd runs there: `ssh {ssh} true` must work"),
        ));
    }
    if lower.contains("timed out") {
        return Some(timed_out(host, port, connect_seconds));
    }
    if lower.contains("no route to host") || lower.contains("network is unreachable") {
        return Some(SshProblem::new(
            format!("no route to `{host}`"),
            unreachable_hint(),
        ));
    }
    None
}

fn unreachable_hint() -> String {
    "check the address, VPN or firewall; a jump host goes in ~/.ssh/config (`ProxyJump`); `TFIMG_SSH_COMMAND='ssh -o ConnectTimeout=30'` waits longer".to_string()
}

/// The host did not answer in time (ssh said so, or tfimg's guard stopped it).
pub fn timed_out(host: &str, port: &str, connect_seconds: u64) -> SshProblem {
    SshProblem::new(
        format!("`{host}` did not answer on port {port} within {connect_seconds} s"),
        unreachable_hint(),
    )
}

/// tfimg's guard stopped an ssh that neither connected nor failed in time.
pub fn guard_expired(target: &SshTarget, connect_seconds: u64) -> SshProblem {
    let port = target.port.unwrap_or(22).to_string();
    timed_out(&target.host, &port, connect_seconds)
}

/// How known_hosts names the host: `host`, or `'[host]:port'` off port 22.
fn known_name(target: &SshTarget) -> String {
    match target.port.filter(|port| *port != 22) {
        Some(port) => format!("'[{}]:{port}'", target.host),
        None => target.host.clone(),
    }
}

fn authentication_problem(stderr: &str, host: &str, known: &str, ssh: &str) -> Option<SshProblem> {
    if stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        return Some(SshProblem::new(
            format!("the host key of `{host}` changed since you last connected"),
            format!("if the server was reinstalled, `ssh-keygen -R {known}`, then connect once with `ssh {ssh}` and check the fingerprint; otherwise do not connect"),
        ));
    }
    if stderr.contains("Host key verification failed") {
        return Some(SshProblem::new(
            format!("the host key of `{host}` is not in your known_hosts (tfimg never asks)"),
            format!("connect once with `ssh {ssh}`, check the fingerprint, then run tfimg again"),
        ));
    }
    let denied = stderr
        .lines()
        .find_map(|line| line.find("Permission denied (").map(|at| &line[at..]))?;
    let denied = denied.trim().trim_end_matches('.');
    Some(SshProblem::new(
        format!("`{host}` refused the key ({denied})"),
        format!("load the key into your agent (`ssh-add ~/.ssh/id_ed25519`) or name it in ~/.ssh/config (`IdentityFile`); tfimg runs ssh in BatchMode and cannot ask for a passphrase: `ssh {ssh} true` must work without a prompt"),
    ))
}

fn docker_problem(
    stderr: &str,
    lower: &str,
    status: Option<i32>,
    target: &SshTarget,
    ssh: &str,
) -> Option<SshProblem> {
    let host = &target.host;
    if lower.contains("is not a docker command") {
        return Some(SshProblem::new(
            format!("the docker CLI on `{host}` is older than 18.09 (no `system dial-stdio`)"),
            "upgrade Docker on the remote host",
        ));
    }
    let not_found = lower.contains("docker: not found")
        || lower.contains("docker: command not found")
        || lower.contains("docker: no such file");
    if status == Some(127) || not_found {
        return Some(SshProblem::new(
            format!(
                "`docker` is not installed on `{host}` (or not on the PATH of non-interactive ssh sessions): {}",
                last_line(stderr)
            ),
            format!("install Docker there (https://docs.docker.com/engine/install/); `ssh {ssh} docker version` must work"),
        ));
    }
    let dial_failed = lower.contains("failed to open the raw stream connection")
        || lower.contains("cannot connect to the docker daemon");
    if dial_failed && lower.contains("permission denied") {
        let user = user_of(target);
        return Some(SshProblem::new(
            format!("`{user}` may not use the Docker socket on `{host}`"),
            format!("on `{host}`: `sudo usermod -aG docker {user}`, then log in again"),
        ));
    }
    if dial_failed {
        let detail = last_line(stderr);
        let detail = detail
            .split_once("failed to open the raw stream connection: ")
            .map_or(detail.as_str(), |(_, rest)| rest);
        return Some(SshProblem::new(
            format!("the Docker daemon on `{host}` is not running ({detail})"),
            format!("start it there: `ssh {ssh} sudo systemctl start docker`"),
        ));
    }
    None
}

/// `ssh` (or the program `TFIMG_SSH_COMMAND` names) could not be started.
pub fn cannot_start(program: &str, error: &std::io::Error) -> SshProblem {
    if error.kind() == std::io::ErrorKind::NotFound {
        return SshProblem::new(
            format!("cannot run `{program}`: it is not installed"),
            "install the OpenSSH client (`sudo apt-get install openssh-client`), or name it in `TFIMG_SSH_COMMAND`",
        );
    }
    SshProblem::new(
        format!("cannot run `{program}`: {error}"),
        "check `TFIMG_SSH_COMMAND` and that the program can be run",
    )
}

/// The master went away while tfimg was using it.
pub fn closed(target: &SshTarget, stderr: &str) -> SshProblem {
    let said = last_line(stderr);
    let said = if said.is_empty() {
        "it exited".to_string()
    } else {
        said
    };
    SshProblem::new(
        format!("the ssh connection to `{}` closed: {said}", target.host),
        format!(
            "check the network; containers on `{}` keep running (`tfimg ps` once it answers)",
            target.host
        ),
    )
}

#[cfg(test)]
mod tests;
