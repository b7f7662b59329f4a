//! The classifier on stderr captured from real runs (tests/fixtures/ssh/README.md says
//! how each was made).

use super::*;

fn target() -> SshTarget {
    SshTarget {
        user: Some("root".to_string()),
        host: "127.0.0.1".to_string(),
        port: Some(2222),
        socket: None,
    }
}

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            "../../../../../../tests/fixtures/ssh/",
            $name,
            ".txt"
        ))
    };
}

#[test]
fn each_captured_failure_gets_its_cause_and_hint() {
    use Phase::{Dial, Master};
    let table: &[(Phase, &str, Option<i32>, &str, &str)] = &[
        (Master, fixture!("refused"), Some(255),
         "`127.0.0.1` refused the connection on port 1",
         "check the port (`ssh://user@host:PORT`) and that sshd runs there: `ssh -p 2222 root@127.0.0.1 true` must work"),
        (Master, fixture!("dns"), Some(255),
         "ssh cannot resolve the host name `no-such-host.invalid`",
         "check the spelling, or add a `Host no-such-host.invalid` entry with its `HostName` to ~/.ssh/config"),
        (Master, fixture!("timeout"), Some(255),
         "`10.255.255.1` did not answer on port 22 within 10 s",
         "check the address, VPN or firewall; a jump host goes in ~/.ssh/config (`ProxyJump`); `TFIMG_SSH_COMMAND='ssh -o ConnectTimeout=30'` waits longer"),
        (Master, fixture!("banner-timeout"), Some(255),
         "`127.0.0.1` did not answer on port 2222 within 10 s", ""),
        (Master, fixture!("no-route"), Some(255), "no route to `10.9.8.7`", ""),
        (Master, fixture!("hostkey-unknown"), Some(255),
         "the host key of `127.0.0.1` is not in your known_hosts (tfimg never asks)",
         "connect once with `ssh -p 2222 root@127.0.0.1`, check the fingerprint, then run tfimg again"),
        (Master, fixture!("hostkey-changed"), Some(255),
         "the host key of `127.0.0.1` changed since you last connected",
         "if the server was reinstalled, `ssh-keygen -R '[127.0.0.1]:2222'`, then connect once with `ssh -p 2222 root@127.0.0.1` and check the fingerprint; otherwise do not connect"),
        (Master, fixture!("publickey"), Some(255),
         "`127.0.0.1` refused the key (Permission denied (publickey))", ""),
        (Dial, fixture!("docker-not-found-sh"), Some(127),
         "`docker` is not installed on `127.0.0.1` (or not on the PATH of non-interactive ssh sessions): /bin/sh: 1: docker: not found",
         "install Docker there (https://docs.docker.com/engine/install/); `ssh -p 2222 root@127.0.0.1 docker version` must work"),
        (Dial, fixture!("docker-not-found-bash"), Some(127),
         "`docker` is not installed on `127.0.0.1` (or not on the PATH of non-interactive ssh sessions): bash: line 1: docker: command not found", ""),
        (Dial, fixture!("daemon-down"), Some(1),
         "the Docker daemon on `127.0.0.1` is not running (dial unix /nonexistent.sock: connect: no such file or directory)",
         "start it there: `ssh -p 2222 root@127.0.0.1 sudo systemctl start docker`"),
        (Dial, fixture!("socket-denied"), Some(1),
         "`root` may not use the Docker socket on `127.0.0.1`",
         "on `127.0.0.1`: `sudo usermod -aG docker root`, then log in again"),
    ];
    for (phase, stderr, status, cause, hint) in table {
        let problem = classify(*phase, stderr, *status, &target(), 10);
        assert_eq!(problem.cause, *cause, "{stderr}");
        if !hint.is_empty() {
            assert_eq!(problem.hint, *hint, "{stderr}");
        }
        assert!(!problem.hint.is_empty());
    }
}

#[test]
fn a_dial_s_daemon_refusal_is_not_taken_for_ssh_s() {
    let stderr = "failed to open the raw stream connection: dial unix /var/run/docker.sock: connect: connection refused\n";
    let problem = classify(Phase::Dial, stderr, Some(1), &target(), 10);
    assert_eq!(
        problem.cause,
        "the Docker daemon on `127.0.0.1` is not running (dial unix /var/run/docker.sock: connect: connection refused)"
    );
}

#[test]
fn anything_else_quotes_the_last_line_and_the_status() {
    let problem = classify(
        Phase::Master,
        "debug1: x\r\nkex_exchange_identification: read: Connection reset by peer\r\n",
        Some(255),
        &target(),
        10,
    );
    assert_eq!(
        problem.cause,
        "ssh to `127.0.0.1` exited with status 255: kex_exchange_identification: read: Connection reset by peer"
    );
    let problem = classify(Phase::Dial, "", None, &target(), 10);
    assert_eq!(
        problem.cause,
        "`docker system dial-stdio` on `127.0.0.1` was killed"
    );
    let problem = guard_expired(&target(), 30);
    assert_eq!(
        problem.cause,
        "`127.0.0.1` did not answer on port 2222 within 30 s"
    );
    let problem = closed(
        &target(),
        "Connection to 127.0.0.1 closed by remote host.\r\n",
    );
    assert_eq!(
        problem.cause,
        "the ssh connection to `127.0.0.1` closed: Connection to 127.0.0.1 closed by remote host."
    );
    let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
    assert_eq!(
        cannot_start("ssh", &missing).cause,
        "cannot run `ssh`: it is not installed"
    );
}
