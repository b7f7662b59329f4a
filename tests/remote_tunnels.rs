//! Ports and files of containers on a remote engine, through a real OpenSSH server on
//! 127.0.0.1 (tests/common/sshd.rs) and the machine's own Docker behind it. The remote
//! daemon publishes service ports on its 127.0.0.1 on ports it chooses; tfimg carries
//! them to local ports through ssh: a detached run's URL answers through its own tunnel,
//! which `rm` closes (and nothing of it is left running), `tfimg forward` opens again
//! and a stop of the container ends by itself; a foreground run's tunnel goes with it
//! when it is interrupted; a Docker context works the same; a team's `up` tunnels its
//! members (again, when closed) and `down` closes them; and `--sync`/`--sync-back` carry
//! code and results over the same connection.
//!
//! Here the "remote" host is this machine, so the container's published port is also
//! visible to the test: it is checked to differ from the local port tfimg printed, and
//! to be bound on 127.0.0.1 only.

mod common;

use std::time::{Duration, Instant};

use common::cli::{free_port, run_args};
use common::sshd::Sshd;
use common::{docker, field, jupyter_url, scratch, try_http, unique, DockerGuard, Run, HOST_CA};

/// Time for ssh processes to go after tfimg exits (a hang catcher only).
const SETTLE: Duration = Duration::from_secs(20);

/// How soon a closed tunnel's local port must refuse connections.
const CLOSED_WITHIN: Duration = Duration::from_secs(2);

fn tfimg(sshd: &Sshd, extra: &[(&str, String)], args: &[&str]) -> Run {
    sshd.tfimg_in(scratch(&[]).path(), extra, args)
}

fn refuses(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
}

/// Whether the port refuses connections within `limit`.
fn refuses_within(port: u16, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if refuses(port) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_nothing_left(sshd: &Sshd, what: &str) {
    let left = sshd.settle(SETTLE);
    assert!(left.is_empty(), "{what} left processes running: {left:#?}");
}

/// Where the daemon published `container_port` of `name` (`HostIp HostPort`), asked of
/// the machine's daemon through its local socket.
fn published(name: &str, container_port: u16) -> (String, u16) {
    let format = format!(
        "{{{{with index .NetworkSettings.Ports \"{container_port}/tcp\"}}}}{{{{(index . 0).HostIp}}}} {{{{(index . 0).HostPort}}}}{{{{end}}}}"
    );
    let text = docker(&["inspect", "--format", &format, name]);
    let (ip, port) = text.trim().split_once(' ').expect("a published port");
    (ip.to_string(), port.parse().expect("a port number"))
}

/// `GET /api/status` on the local port: with the token 200, without it 403.
fn assert_jupyter_answers(port: u16, token: &str) {
    let with = try_http("GET", port, &format!("/api/status?token={token}"), &[], "");
    assert_eq!(with.map(|(status, _)| status), Some(200), "with the token");
    let without = try_http("GET", port, "/api/status", &[], "");
    assert_eq!(without.map(|(status, _)| status), Some(403), "without it");
}

/// `run cpu-jupyter -d` through the server (extra variables over its defaults).
fn detached_notebook(sshd: &Sshd, extra: &[(&str, String)], name: &str) -> common::JupyterUrl {
    let run = tfimg(sshd, extra, &run_args("cpu-jupyter", &["-d"], name, &[]));
    assert_eq!(run.code, 0, "{}\nsshd: {}", run.stderr, sshd.log());
    let url = field(&run.stdout, "jupyter").expect("a jupyter line on stdout");
    jupyter_url(&url)
}

#[tokio::test]
async fn a_detached_notebook_answers_on_a_local_port_that_forward_reopens_and_rm_closes() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let name = unique("t-tunnel");
    let _guard = DockerGuard::containers(&[&name]);
    let url = detached_notebook(&sshd, &[], &name);

    // The remote side: loopback only, on a port the daemon chose (not the local one).
    let (ip, remote) = published(&name, 8888);
    assert_eq!(ip, "127.0.0.1", "nothing listens on public interfaces");
    assert_ne!(remote, url.port, "the local port is the tunnel's own");
    assert_jupyter_answers(url.port, &url.token);

    // `ps` shows the tunnel's local address; the record is the user's only.
    let ps = tfimg(&sshd, &[], &["ps"]);
    assert_eq!(ps.code, 0, "{}", ps.tail());
    let row = ps.stdout.lines().find(|line| line.starts_with(&name));
    assert!(
        row.is_some_and(|row| row.ends_with(&url.address)),
        "{}",
        ps.stdout
    );
    let records = sshd.path("data/tfimg/tunnels");
    let record = std::fs::read_dir(&records)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = record.metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // Closed, the local port refuses and `ps` says how to open it; `forward` opens it.
    let closed = tfimg(&sshd, &[], &["forward", &name, "--close"]);
    assert_eq!(closed.code, 0, "{}", closed.tail());
    assert!(refuses_within(url.port, CLOSED_WITHIN), "still open");
    let ps = tfimg(&sshd, &[], &["ps"]);
    assert!(
        ps.stdout.contains(&format!("closed: tfimg forward {name}")),
        "{}",
        ps.stdout
    );
    let forward = tfimg(&sshd, &[], &["forward", &name]);
    assert_eq!(forward.code, 0, "{}", forward.tail());
    let again = field(&forward.stdout, "jupyter").expect("the URL again");
    assert_eq!(again, format!("{}?token={}", url.address, url.token));
    assert_jupyter_answers(url.port, &url.token);

    let removed = tfimg(&sshd, &[], &["rm", "-f", &name]);
    assert_eq!(removed.code, 0, "{}", removed.tail());
    assert!(
        refuses_within(url.port, CLOSED_WITHIN),
        "the local port still answers after `rm`"
    );
    assert!(std::fs::read_dir(&records).unwrap().next().is_none());
    assert_nothing_left(&sshd, "the detached notebook");
}

#[tokio::test]
async fn a_detached_tunnel_ends_by_itself_when_its_container_stops() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let name = unique("t-tunnel-stop");
    let _guard = DockerGuard::containers(&[&name]);
    let local = free_port();
    let run = tfimg(
        &sshd,
        &[],
        &run_args(
            "cpu-headless",
            &["-d", "-p", &format!("{local}:8000")],
            &name,
            &["python", "-m", "http.server", "8000"],
        ),
    );
    assert_eq!(run.code, 0, "{}", run.tail());
    common::wait_for("the server through the tunnel", SETTLE, || {
        try_http("GET", local, "/", &[], "").is_some_and(|(status, _)| status == 200)
    });
    // Stopped behind tfimg's back: the tunnel's `docker wait` returns and it ends.
    docker(&["stop", "-t", "1", &name]);
    assert!(
        refuses_within(local, SETTLE),
        "the tunnel outlived its container"
    );
    assert_nothing_left(&sshd, "a stopped container's tunnel");
    let removed = tfimg(&sshd, &[], &["rm", &name]);
    assert_eq!(removed.code, 0, "{}", removed.tail());
}

#[tokio::test]
async fn an_interrupted_foreground_run_closes_its_tunnel() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let name = unique("t-tunnel-fg");
    let _guard = DockerGuard::containers(&[&name]);
    let local = free_port();
    let folder = scratch(&[]);
    let run = sshd.spawn_tfimg(
        folder.path(),
        &run_args("cpu-jupyter", &["-p", &format!("{local}:8888")], &name, &[]),
    );
    // The token is in the container's environment (the machine's daemon shows it).
    common::wait_for("the container", SETTLE, || {
        common::container_state(&name).as_deref() == Some("running")
    });
    let env = docker(&["inspect", "--format", "{{join .Config.Env \"\\n\"}}", &name]);
    let token = env
        .lines()
        .find_map(|line| line.strip_prefix("TFIMG_JUPYTER_TOKEN="))
        .expect("a token")
        .to_string();
    common::wait_for(
        "Jupyter through the session's tunnel",
        Duration::from_secs(180),
        || {
            try_http("GET", local, &format!("/api/status?token={token}"), &[], "")
                .is_some_and(|(status, _)| status == 200)
        },
    );
    assert_ne!(published(&name, 8888).1, local);
    run.signal(libc::SIGINT);
    let run = run.finish(Duration::from_secs(60));
    assert_eq!(run.code, 130, "{}", run.tail());
    assert!(refuses(local), "the forward outlived the run");
    assert_eq!(
        common::container_state(&name),
        None,
        "the container is removed"
    );
    assert_nothing_left(&sshd, "the interrupted run");
}

#[tokio::test]
async fn a_docker_context_s_notebook_is_tunneled_the_same_way() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let name = unique("t-tunnel-ctx");
    let _guard = DockerGuard::containers(&[&name]);
    let context = format!("tfimg-{name}");
    let created = std::process::Command::new("docker")
        .env("DOCKER_CONFIG", sshd.path("docker"))
        .args(["context", "create", &context, "--docker"])
        .arg(format!("host={}", sshd.url(sshd.port)))
        .output()
        .expect("the docker CLI runs");
    assert!(created.status.success(), "{created:?}");
    let through_context = [
        ("DOCKER_HOST", String::new()),
        ("DOCKER_CONTEXT", context.clone()),
    ];
    let url = detached_notebook(&sshd, &through_context, &name);
    assert_ne!(published(&name, 8888).1, url.port);
    assert_jupyter_answers(url.port, &url.token);
    let removed = tfimg(&sshd, &through_context, &["rm", "-f", &name]);
    assert_eq!(removed.code, 0, "{}", removed.tail());
    assert!(refuses_within(url.port, CLOSED_WITHIN));
    assert_nothing_left(&sshd, "the context's notebook");
}

#[tokio::test]
async fn a_team_member_is_tunneled_by_up_reopened_by_up_and_closed_by_down() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let team = format!("t{}", &unique("up").replace('-', "")[2..])
        .chars()
        .take(20)
        .collect::<String>()
        .to_lowercase();
    let member = format!("{team}-lab");
    let _guard = DockerGuard::containers(&[&member]);
    let folder = scratch(&[(
        "team.yaml",
        &format!("team: {team}\nmembers:\n  - name: lab\n    spec: cpu-jupyter\n"),
    )]);
    let up = || {
        let up = sshd.tfimg_in(
            folder.path(),
            &[],
            &["up", "team.yaml", "--ca-cert", HOST_CA],
        );
        assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
        let row = up.stdout.lines().find(|line| line.starts_with("lab "));
        // MEMBER SPEC UP GPUS ACCESS TENSORBOARD
        let url = row.and_then(|row| row.split_whitespace().nth(4));
        jupyter_url(url.unwrap_or_else(|| panic!("a member row: {}", up.stdout)))
    };
    let url = up();
    assert_ne!(published(&member, 8888).1, url.port);
    assert_jupyter_answers(url.port, &url.token);

    // A member whose tunnel closed gets it back from the next `up`, on the same port.
    let closed = tfimg(&sshd, &[], &["forward", &member, "--close"]);
    assert_eq!(closed.code, 0, "{}", closed.tail());
    assert!(refuses_within(url.port, CLOSED_WITHIN));
    assert_eq!(up().address, url.address);
    assert_jupyter_answers(url.port, &url.token);

    let down = sshd.tfimg_in(folder.path(), &[], &["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.tail());
    assert!(
        refuses_within(url.port, CLOSED_WITHIN),
        "`down` left the tunnel"
    );
    assert_nothing_left(&sshd, "the team");
}

/// Checks what it received (ignored files stayed home) and writes a result.
const TRAIN: &str = r#"import os, sys
here = os.path.dirname(os.path.abspath(__file__))
if not os.path.exists(os.path.join(here, "data.txt")) or os.path.exists(os.path.join(here, "big.bin")):
    sys.exit(3)
os.makedirs(os.path.join(here, "out"), exist_ok=True)
numbers = open(os.path.join(here, "data.txt")).read().split()
with open(os.path.join(here, "out", "result.txt"), "w") as out:
    out.write("sum %d\n" % sum(map(int, numbers)))
print("trained over ssh")
"#;

#[tokio::test]
async fn code_synced_over_ssh_trains_and_its_result_comes_back() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let name = unique("t-remote-sync");
    let _guard = DockerGuard::containers(&[&name]);
    let folder = scratch(&[
        ("code/train.py", TRAIN),
        ("code/data.txt", "1 2 3\n"),
        ("code/.gitignore", "*.bin\n"),
        ("code/big.bin", "weights"),
    ]);
    let run = sshd.tfimg_in(
        folder.path(),
        &[],
        &run_args(
            "cpu-headless",
            &["--sync", "./code", "--sync-back"],
            &name,
            &["python", "code/train.py"],
        ),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "trained over ssh\n");
    let result = folder.path().join("code/out/result.txt");
    assert_eq!(std::fs::read_to_string(result).unwrap(), "sum 6\n");
    assert_eq!(
        common::container_state(&name),
        None,
        "the container is removed"
    );
    assert_nothing_left(&sshd, "the synced run");
}
