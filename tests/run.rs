//! `tfimg run` and the container commands against the real Docker Engine. Each test names
//! its containers uniquely and removes them when it ends, failed or not; keys and
//! known_hosts go to a per-test data folder. The images come from the warm cache
//! (`scripts/test` builds the built-ins first), so `--no-build` holds.

mod common;

use tfimg_testing::engine::prelude::*;

use std::path::Path;
use std::time::Duration;

use common::{field, http, scratch, tfimg_with_env, unique, DockerGuard, HOST_CA};

/// `tfimg run ...` from `folder`, with its own data folder and this machine's CA.
fn run(folder: &Path, args: &[&str]) -> common::Run {
    run_with_env(folder, args, &[])
}

/// `run` with more environment. The CA goes before a `--` (after it, it would be part of
/// the container's command, and the spec's build key would not be the warm cache's).
fn run_with_env(folder: &Path, args: &[&str], env: &[(&str, &str)]) -> common::Run {
    let data = folder.join(".tfimg-data");
    let split = args
        .iter()
        .position(|arg| *arg == "--")
        .unwrap_or(args.len());
    let mut all = vec!["run"];
    all.extend_from_slice(&args[..split]);
    all.extend_from_slice(&["--ca-cert", HOST_CA]);
    all.extend_from_slice(&args[split..]);
    let mut env = env.to_vec();
    env.push(("XDG_DATA_HOME", data.to_str().unwrap()));
    tfimg_with_env(folder, &all, &env)
}

fn tfimg(folder: &Path, args: &[&str]) -> common::Run {
    tfimg_with_env(folder, args, &[])
}

fn port_of(url: &str) -> u16 {
    url.split("127.0.0.1:")
        .nth(1)
        .unwrap()
        .split(['/', ' '])
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn token_of(url: &str) -> String {
    url.split("token=").nth(1).unwrap().to_string()
}

#[test]
fn gpu_selection_becomes_one_device_request_on_a_gpu_host() {
    // The stand-in NVIDIA host: a driver answers and Docker has the `nvidia` device
    // driver, so `--no-start` containers show the request a real GPU server gets.
    let Some(gpu) = common::gpu::gpu_engine() else {
        return;
    };
    let folder = scratch(&[]);
    let names: Vec<String> = (0..3).map(|_| unique("t-gpus")).collect();
    let _guard = DockerGuard::containers(&names.iter().map(String::as_str).collect::<Vec<_>>())
        .on(&gpu.host);
    // `--gpus`, the request's count and ids, the label. A count takes free GPUs by index
    // (the least-loaded first), never Docker's count. Each container is removed before
    // the next, which would otherwise find its GPUs held.
    let _turn = common::gpu::gpu_turn();
    let cases = [
        ("0,1", None, vec!["0", "1"], "0,1"),
        ("all", Some(-1), vec![], "all"),
        ("2", None, vec!["0", "1"], "0,1"),
    ];
    for ((gpus, count, ids, label), name) in cases.iter().zip(&names) {
        let created = run_with_env(
            folder.path(),
            &[
                "cpu-headless",
                "--gpus",
                gpus,
                "--no-start",
                "--no-build",
                "--name",
                name,
            ],
            &gpu.env(),
        );
        assert_eq!(created.code, 0, "{}", created.tail());
        assert_eq!(created.stdout, format!("{name}\n"));
        let container = gpu.inspect(name);
        let host_config = &container["HostConfig"];
        let requests = host_config["DeviceRequests"].as_array().expect("requests");
        assert_eq!(requests.len(), 1, "{gpus}");
        let request = &requests[0];
        assert_eq!(request["Driver"], "nvidia");
        assert_eq!(request["Capabilities"], serde_json::json!([["gpu"]]));
        let device_ids: Vec<&str> = request["DeviceIDs"]
            .as_array()
            .map(|ids| ids.iter().filter_map(|id| id.as_str()).collect())
            .unwrap_or_default();
        assert_eq!(device_ids, *ids, "{gpus}");
        match count {
            Some(count) => assert_eq!(request["Count"], *count, "{gpus}"),
            // Docker reports an unset count as 0: never a count together with ids.
            None => assert!(
                request["Count"].is_null() || request["Count"] == 0,
                "{gpus}: {request}"
            ),
        }
        assert_eq!(container["Config"]["Labels"]["io.tfimg.gpus"], *label);
        // Only Docker's defaults the entrypoint's first instant needs stay; none is added.
        // Taking root's own ids (plain root), it keeps SETPCAP to empty its bounding set.
        let root_ids = tfimg_testing::host::current_ids() == Some((0, 0))
            && std::env::var("SUDO_UID").map_or(true, |uid| uid.is_empty() || uid == "0");
        let dropped: Vec<&str> = [
            "AUDIT_WRITE",
            "FSETID",
            "KILL",
            "MKNOD",
            "NET_BIND_SERVICE",
            "NET_RAW",
            "SETFCAP",
            "SETPCAP",
            "SYS_CHROOT",
        ]
        .into_iter()
        .filter(|capability| !(root_ids && *capability == "SETPCAP"))
        .collect();
        assert_eq!(host_config["CapDrop"], serde_json::json!(dropped));
        assert!(
            host_config["CapAdd"].is_null() || host_config["CapAdd"] == serde_json::json!([]),
            "{}",
            host_config["CapAdd"]
        );
        assert_eq!(host_config["Privileged"], false);
        assert_eq!(host_config["ShmSize"], 2_i64 * 1024 * 1024 * 1024);
        let removed = tfimg_with_env(folder.path(), &["rm", name], &gpu.env());
        assert_eq!(removed.code, 0, "{}", removed.tail());
    }
}

#[tokio::test]
async fn gpus_on_a_host_without_an_nvidia_driver_are_refused_before_anything_is_made() {
    let Some(engine) = common::engine().await else { return };
    // This machine: no NVIDIA driver. Every form of `--gpus` is refused as a fact of the
    // host (exit 2), as `tfimg doctor` says it, before a container (or a build) is made;
    // the daemon's "could not select device driver" (which blames the toolkit) is never
    // reached.
    let folder = scratch(&[]);
    let name = unique("t-nogpu");
    let _guard = DockerGuard::containers(&[&name]);
    for gpus in ["3", "0", "all", "0,1"] {
        let refused = run(
            folder.path(),
            &[
                "cpu-headless",
                "--gpus",
                gpus,
                "-d",
                "--no-build",
                "--name",
                &name,
            ],
        );
        assert_eq!(
            (refused.code, refused.stdout.as_str(), refused.stderr.as_str()),
            (
                2,
                "",
                format!(
                    "error: `--gpus {gpus}`: this host has no NVIDIA GPU or driver (no working `nvidia-smi`, no /proc/driver/nvidia/version)\n\
                     hint: drop `--gpus` to run on the CPU (a GPU image then says it runs there), or run on a host with an NVIDIA GPU and its driver; `tfimg doctor` checks this one\n"
                )
                .as_str()
            ),
            "--gpus {gpus}"
        );
        assert!(engine.container(&name).await.unwrap().is_none());
    }
    // Before the build, too: a spec whose image does not exist is not built for nothing.
    let spec = unique("t-nogpu-spec");
    std::fs::write(
        folder.path().join("never.yaml"),
        format!("name: {spec}\nextends: cpu-headless\n"),
    )
    .unwrap();
    let unbuilt = run(folder.path(), &["./never.yaml", "--gpus", "1", "-d"]);
    assert_eq!(unbuilt.code, 2, "{}", unbuilt.tail());
    assert!(
        unbuilt
            .stderr
            .starts_with("error: `--gpus 1`: this host has no NVIDIA GPU or driver"),
        "{}",
        unbuilt.stderr
    );
    assert!(
        engine
            .image(&format!("tfimg/{spec}:2.9.3"))
            .await
            .unwrap()
            .is_none(),
        "nothing was built"
    );
}

#[tokio::test]
async fn jupyter_answers_with_its_token_only_and_writes_notebooks_as_the_host_user() {
    let Some((engine, name, _guard)) = common::container_test("t-jupyter").await else {
        return;
    };
    let folder = scratch(&[]);
    // A non-root uid/gid proves the mapping even though these machines run as root.
    let started = run(
        folder.path(),
        &[
            "cpu-jupyter",
            "-d",
            "--mount",
            "./nb",
            "--name",
            &name,
            "--uid",
            "4321",
            "--gid",
            "4322",
            "--no-build",
        ],
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    let url = field(&started.stdout, "jupyter").expect("a jupyter line");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/lab?token="),
        "{url}"
    );
    let token = token_of(&url);
    assert!(token.len() >= 32, "a token of at least 128 bits");
    let port = port_of(&url);

    let with_token = http("GET", port, &format!("/api/status?token={token}"), &[], "");
    assert_eq!(with_token.0, 200);
    assert_eq!(http("GET", port, "/api/status", &[], "").0, 403);
    // JupyterLab's page: the news plugin (its "get notified about official Jupyter news?"
    // pop-up on every first start) is among the disabled ones it gives the browser.
    let lab = http("GET", port, &format!("/lab?token={token}"), &[], "");
    assert_eq!(lab.0, 200, "{}", lab.1);
    let page_config = lab
        .1
        .split("id=\"jupyter-config-data\"")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .unwrap_or_else(|| panic!("no page config in: {}", lab.1));
    let page_config: serde_json::Value = serde_json::from_str(
        page_config
            .split_once('>')
            .map_or(page_config, |(_, json)| json)
            .trim(),
    )
    .unwrap_or_else(|error| panic!("{error}: {page_config}"));
    let disabled = page_config["disabledExtensions"].to_string();
    assert!(
        disabled.contains("@jupyterlab/apputils-extension:announcements"),
        "{disabled}"
    );
    let authorization = format!("token {token}");
    let written = http(
        "PUT",
        port,
        "/api/contents/nb/analysis.ipynb",
        &[
            ("Authorization", &authorization),
            ("Content-Type", "application/json"),
        ],
        r#"{"type": "notebook"}"#,
    );
    assert_eq!(written.0, 201, "{}", written.1);
    let notebook = folder.path().join("nb/analysis.ipynb");
    let metadata = std::fs::metadata(&notebook).expect("the notebook is on the host");
    use std::os::unix::fs::MetadataExt;
    assert_eq!((metadata.uid(), metadata.gid()), (4321, 4322));

    // The published port is on loopback only, and `exec` runs as the mapped user.
    let container = engine.container(&name).await.unwrap().unwrap();
    assert!(
        container.labels["io.tfimg.ports"].contains("jupyter=127.0.0.1:"),
        "{:?}",
        container.labels
    );
    let id = tfimg(folder.path(), &["exec", &name, "--", "id", "-u"]);
    assert_eq!((id.code, id.stdout.trim()), (0, "4321"), "{}", id.tail());

    let removed = tfimg(folder.path(), &["rm", "-f", &name]);
    assert_eq!(removed.code, 0, "{}", removed.tail());
    assert!(engine.container(&name).await.unwrap().is_none());
    assert!(
        notebook.is_file(),
        "removing the container keeps the mounted files"
    );
}

#[tokio::test]
async fn the_printed_ssh_line_logs_in_with_the_key_and_passwords_are_refused() {
    let Some(_engine) = common::engine().await else { return };
    let folder = scratch(&[]);
    let key = common::ssh_key(folder.path());
    let name = unique("t-ssh");
    let _guard = DockerGuard::containers(&[&name]);
    let started = run(
        folder.path(),
        &[
            "cpu-ssh",
            "-d",
            "--name",
            &name,
            "--ssh-key",
            key.to_str().unwrap(),
            "--no-build",
        ],
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    let line = field(&started.stdout, "ssh").expect("an ssh line");
    assert!(line.starts_with("ssh -p "), "{line}");
    assert!(line.contains(&format!("-i {}", key.display())), "{line}");
    assert!(line.ends_with(" tf@127.0.0.1"), "{line}");

    // That exact line, plus a command, with no prompt (BatchMode) and real host-key checks.
    let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    words.extend([
        "-o".to_string(),
        "BatchMode=yes".to_string(),
        "python -c \"import tensorflow as tf; print(tf.__version__)\"".to_string(),
    ]);
    let output = std::process::Command::new(&words[0])
        .args(&words[1..])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "2.9.3");

    let port = port_of(&line.replace("ssh -p ", "127.0.0.1:"));
    // Issue 45: without `-p` the service went to host port 22, the host's own sshd's on
    // most servers. Its port is one the kernel chose, and `ps` shows the line that answers.
    assert_ne!(port, 22, "never the host's own sshd port: {line}");
    let ps = common::tfimg(folder.path(), &["ps", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&ps.stdout).unwrap();
    let shown = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == name.as_str())
        .map(|row| row["urls"]["ssh"].as_str().unwrap_or_default().to_string());
    assert!(
        shown
            .as_deref()
            .is_some_and(|shown| shown.starts_with(&format!("ssh -p {port} "))),
        "{shown:?}"
    );
    let password = std::process::Command::new("ssh")
        .args([
            "-p",
            &port.to_string(),
            "-o",
            "BatchMode=yes",
            "-o",
            "PubkeyAuthentication=no",
        ])
        .args([
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
        ])
        .args([
            "-o",
            "PreferredAuthentications=password,keyboard-interactive",
            "tf@127.0.0.1",
            "true",
        ])
        .output()
        .unwrap();
    assert!(!password.status.success());
    assert!(
        String::from_utf8_lossy(&password.stderr).contains("Permission denied (publickey)"),
        "{}",
        String::from_utf8_lossy(&password.stderr)
    );
}

#[tokio::test]
async fn a_headless_command_passes_its_exit_code_through_and_leaves_nothing() {
    let Some(engine) = common::engine().await else { return };
    let folder = scratch(&[(
        "code/train.py",
        "import sys\nprint('training'); print('to stderr', file=sys.stderr)\n",
    )]);
    let name = unique("t-headless");
    let _guard = DockerGuard::containers(&[&name]);
    let ran = run(
        folder.path(),
        &[
            "cpu-headless",
            "--name",
            &name,
            "--mount",
            "./code",
            "--no-build",
            "--",
            "sh",
            "-c",
            "python code/train.py && exit 7",
        ],
    );
    assert_eq!(ran.code, 7, "{}", ran.tail());
    assert_eq!(ran.stdout, "training\n");
    assert!(ran.stderr.contains("to stderr"), "{}", ran.tail());
    assert!(
        engine.container(&name).await.unwrap().is_none(),
        "removed after exit"
    );

    let kept = run(
        folder.path(),
        &[
            "cpu-headless",
            "--name",
            &name,
            "--keep",
            "--no-build",
            "--",
            "true",
        ],
    );
    assert_eq!(kept.code, 0, "{}", kept.tail());
    assert_eq!(
        engine.container(&name).await.unwrap().unwrap().state,
        "exited"
    );
}

#[tokio::test]
async fn two_jupyters_at_once_get_different_ports_and_ps_lists_both() {
    let Some(_engine) = common::engine().await else { return };
    let folder = scratch(&[]);
    let names = [unique("t-twin"), unique("t-twin")];
    let _guard = DockerGuard::containers(&[&names[0], &names[1]]);
    let runs: Vec<common::Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|name| {
                let folder = folder.path();
                scope.spawn(move || {
                    run(folder, &["cpu-jupyter", "-d", "--name", name, "--no-build"])
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    for started in &runs {
        assert_eq!(started.code, 0, "{}", started.tail());
    }
    let urls: Vec<String> = runs
        .iter()
        .map(|r| field(&r.stdout, "jupyter").unwrap())
        .collect();
    assert_ne!(port_of(&urls[0]), port_of(&urls[1]));

    let listed = tfimg(folder.path(), &["ps", "--json", "--show-tokens"]);
    assert_eq!(listed.code, 0, "{}", listed.tail());
    let entries: Vec<serde_json::Value> = serde_json::from_str(&listed.stdout).unwrap();
    for (name, url) in names.iter().zip(&urls) {
        let entry = entries
            .iter()
            .find(|e| e["name"] == name.as_str())
            .expect("listed");
        assert_eq!(entry["urls"]["jupyter"], url.as_str());
        assert_eq!(entry["spec"], "cpu-jupyter");
        assert_eq!(entry["state"], "running");
    }
    let table = tfimg(folder.path(), &["ps"]);
    assert!(table.stdout.starts_with("NAME "), "{}", table.stdout);
    // The table hides the token (`--show-tokens` above shows it).
    let (address, token) = urls[0].split_once("?token=").unwrap();
    assert!(
        table.stdout.contains(&format!("{address}\n")),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains(token), "{}", table.stdout);
}

#[tokio::test]
async fn a_missing_mount_source_is_always_made_an_empty_folder_and_said() {
    let Some(_engine) = common::engine().await else { return };
    // Whatever the name looks like (a dot, a typo, parents missing), as `docker run -v`.
    let folder = scratch(&[]);
    let name = unique("t-made");
    let _guard = DockerGuard::containers(&[&name]);
    let args = [
        "cpu-headless",
        "--no-build",
        "--name",
        &name,
        "--mount",
        "./notbooks",
        "--mount",
        "./data.v2:/data:ro",
        "--mount",
        "./runs/2026/b",
        "--",
        "sh",
        "-c",
        "ls -A /tf/notbooks /data /tf/b; echo listed",
    ];
    let made = run(folder.path(), &args);
    assert_eq!(made.code, 0, "{}", made.tail());
    assert_eq!(made.stdout, "/data:\n\n/tf/b:\n\n/tf/notbooks:\nlisted\n");
    let created: Vec<&str> = made
        .stderr
        .lines()
        .filter(|line| line.starts_with("note: created"))
        .collect();
    assert_eq!(
        created,
        [
            "note: created ./notbooks (empty)",
            "note: created ./data.v2 (empty)",
            "note: created ./runs/2026/b (empty)",
        ],
        "{}",
        made.stderr
    );
    for made in ["notbooks", "data.v2", "runs/2026/b"] {
        assert!(folder.path().join(made).is_dir(), "{made}");
    }
    // There now: nothing more to say.
    let again = run(folder.path(), &args);
    assert_eq!(again.code, 0, "{}", again.tail());
    assert!(!again.stderr.contains("note: created"), "{}", again.tail());
}

#[tokio::test]
async fn jupyter_moved_off_a_taken_8888_says_where_and_why() {
    let Some(_engine) = common::engine().await else { return };
    // 8888 held here (or already held by someone else: taken either way).
    let _held = std::net::TcpListener::bind(("127.0.0.1", 8888));
    assert!(
        std::net::TcpListener::bind(("127.0.0.1", 8888)).is_err(),
        "8888 is taken"
    );
    let folder = scratch(&[]);
    let name = unique("t-moved");
    let _guard = DockerGuard::containers(&[&name]);
    let started = run(
        folder.path(),
        &["cpu-jupyter", "-d", "--no-build", "--name", &name],
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    let url = started
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("jupyter     "))
        .unwrap_or_else(|| panic!("no jupyter line: {}", started.stdout));
    let port = port_of(url);
    assert_ne!(port, 8888);
    let said: Vec<&str> = started
        .stderr
        .lines()
        .filter(|line| line.contains("8888"))
        .collect();
    assert_eq!(
        said,
        [format!(
            "note: port 8888 (jupyter) is in use, so it is on {port} instead (`-p HOST:8888` chooses)"
        )],
        "{}",
        started.stderr
    );
}

#[tokio::test]
async fn bad_input_exits_1_before_any_container_exists() {
    let Some((engine, name, _guard)) = common::container_test("t-bad").await else { return };
    let folder = scratch(&[]);
    let held = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let taken = held.local_addr().unwrap().port();
    let taken_mapping = format!("{taken}:8888");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["cpu-jupyter", "-d", "--gpus", "zero"],
            "error: `--gpus zero` is not valid: `zero` is neither a GPU index nor a GPU-/MIG- UUID\nhint: use `--gpus all`, a count (`--gpus 2`), indices (`--gpus 0,1`), UUIDs (`--gpus GPU-3f2a...`), or `--gpus none`\n".to_string(),
        ),
        (
            vec!["cpu-jupyter", "-d", "-p", &taken_mapping],
            format!("error: host port {taken} (for `jupyter`, container port 8888) is already in use\nhint: choose another with `-p OTHER:8888`, or leave `-p` out and tfimg picks a free one\n"),
        ),
        // The mount folder would be made; the held port is found first (issue 12, item 13).
        (
            vec!["cpu-jupyter", "-d", "--mount", "./newdir", "-p", &taken_mapping],
            format!("error: host port {taken} (for `jupyter`, container port 8888) is already in use\nhint: choose another with `-p OTHER:8888`, or leave `-p` out and tfimg picks a free one\n"),
        ),
    ];
    for (args, expected) in cases {
        let mut args = args.clone();
        args.extend_from_slice(&["--name", &name, "--no-build"]);
        let outcome = run(folder.path(), &args);
        assert_eq!(outcome.code, 1, "{args:?}: {}", outcome.stderr);
        assert_eq!(outcome.stderr, expected, "{args:?}");
        assert!(
            engine.container(&name).await.unwrap().is_none(),
            "{args:?} created a container"
        );
    }
    assert!(
        !folder.path().join("newdir").exists(),
        "a failed run left its mount folder"
    );
    // A name that is taken: the container is never created, so its new folder goes too.
    let created = std::process::Command::new("docker")
        .args([
            "create",
            "--name",
            &name,
            "--label",
            "io.tfimg.test=1",
            "debian:bullseye-slim",
            "true",
        ])
        .output()
        .unwrap();
    assert!(created.status.success());
    let outcome = run(
        folder.path(),
        &[
            "cpu-headless",
            "-d",
            "--no-build",
            "--name",
            &name,
            "--mount",
            "./newdir",
        ],
    );
    assert_eq!(outcome.code, 1, "{}", outcome.tail());
    assert!(
        outcome
            .stderr
            .starts_with(&format!("error: a container named `{name}` already exists")),
        "{}",
        outcome.stderr
    );
    assert!(
        !folder.path().join("newdir").exists(),
        "a failed create left its mount folder"
    );
    drop(held);
}

#[tokio::test]
async fn container_commands_refuse_containers_tfimg_did_not_start() {
    let Some((_, name, _guard)) = common::container_test("t-foreign").await else { return };
    let folder = scratch(&[]);
    let created = std::process::Command::new("docker")
        .args(["create", "--name", &name, "debian:bullseye-slim", "true"])
        .output()
        .unwrap();
    assert!(created.status.success());
    for command in [
        vec!["rm", "-f", &name],
        vec!["logs", &name],
        vec!["stop", &name],
    ] {
        let outcome = tfimg(folder.path(), &command);
        assert_eq!(outcome.code, 1, "{command:?}");
        assert!(
            outcome
                .stderr
                .contains(&format!("error: `{name}` was not started by tfimg")),
            "{}",
            outcome.stderr
        );
    }
    let missing = tfimg(folder.path(), &["logs", "tfimg-no-such-container"]);
    assert_eq!(missing.code, 1);
    assert_eq!(
        missing.stderr,
        "error: no container named `tfimg-no-such-container`\nhint: `tfimg ps` lists tfimg's containers\n"
    );
    std::thread::sleep(Duration::from_millis(10));
}

#[tokio::test]
async fn ctrl_c_stops_and_removes_a_foreground_container() {
    let Some((engine, name, _guard)) = common::container_test("t-interrupt").await else {
        return;
    };
    let folder = scratch(&[]);
    let data = folder.path().join(".tfimg-data");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_tfimg"))
        .args([
            "run",
            "cpu-headless",
            "--name",
            &name,
            "--no-build",
            "--ca-cert",
            HOST_CA,
            "--",
            "sleep",
            "600",
        ])
        .current_dir(folder.path())
        .env("TFIMG_CONFIG", "/dev/null")
        .env("XDG_DATA_HOME", &data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let running = engine
            .container(&name)
            .await
            .unwrap()
            .is_some_and(|c| c.state == "running");
        if running {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the container never ran"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let signalled = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains(&format!("tfimg: stopping `{name}`")));
    assert!(
        engine.container(&name).await.unwrap().is_none(),
        "removed after Ctrl-C"
    );
}

#[tokio::test]
async fn gpus_the_host_does_not_have_are_refused_and_runtime_mode_needs_the_toolkit() {
    let Some(engine) = common::engine().await else { return };
    // A host whose nvidia-smi reports one GPU (the output format of the real tool).
    let folder = scratch(&[(
        "bin/nvidia-smi",
        "#!/bin/sh\necho '0, GPU-8a2b44f3-1c2d-3e4f-5a6b-7c8d9e0f1a2b, Tesla T4, 15360, 470.82.01'\n",
    )]);
    use std::os::unix::fs::PermissionsExt;
    let fake = folder.path().join("bin/nvidia-smi");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        folder.path().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let name = unique("t-hostgpu");
    let _guard = DockerGuard::containers(&[&name]);
    let refused = tfimg_with_env(
        folder.path(),
        &[
            "run",
            "cpu-headless",
            "--gpus",
            "device=1",
            "-d",
            "--name",
            &name,
            "--no-build",
            "--ca-cert",
            HOST_CA,
        ],
        &[("PATH", &path)],
    );
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert_eq!(
        refused.stderr,
        "error: GPU `1` does not exist on this host\nhint: this host has: 0 (GPU-8a2b44f3-1c2d-3e4f-5a6b-7c8d9e0f1a2b, Tesla T4)\n"
    );
    assert!(engine.container(&name).await.unwrap().is_none());

    let runtime = run_with_env(
        folder.path(),
        &[
            "cpu-headless",
            "--gpus",
            "0",
            "--gpu-mode",
            "runtime",
            "-d",
            "--name",
            &name,
            "--no-build",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(runtime.code, 2, "{}", runtime.tail());
    // A driver but no toolkit: refused before Docker is asked (its "Unknown runtime
    // specified nvidia" is never reached).
    assert!(
        runtime.stderr.starts_with(
            "error: cannot give GPUs to the container: the NVIDIA container toolkit is missing"
        ),
        "{}",
        runtime.stderr
    );
    assert!(
        runtime
            .stderr
            .contains("hint: install the NVIDIA Container Toolkit"),
        "{}",
        runtime.stderr
    );
    assert!(engine.container(&name).await.unwrap().is_none());
}

#[tokio::test]
async fn mounted_folders_are_never_re_owned_and_a_read_only_workdir_still_starts() {
    let Some(_engine) = common::engine().await else { return };
    if tfimg_testing::host::current_ids() != Some((0, 0)) {
        eprintln!("skipping: needs root to give a test file to uid 1000");
        return;
    }
    let folder = scratch(&[("shared/weights.bin", "w"), ("ro/readme.txt", "r")]);
    let weights = folder.path().join("shared/weights.bin");
    // Owned by the image user's original uid: exactly what a careless re-own would take.
    std::os::unix::fs::chown(&weights, Some(1000), Some(1000)).unwrap();
    let name = unique("t-owners");
    let _guard = DockerGuard::containers(&[&name]);
    let ran = run(
        folder.path(),
        &[
            "cpu-headless",
            "--name",
            &name,
            "--uid",
            "4321",
            "--gid",
            "4321",
            "--no-build",
            "--mount",
            "./shared:/home/tf/shared",
            "--mount",
            "./ro:/tf:ro",
            "--",
            "sh",
            "-c",
            "stat -c %u /home/tf/shared/weights.bin; stat -c %u /home/tf; cat /tf/readme.txt",
        ],
    );
    assert_eq!(ran.code, 0, "{}", ran.tail());
    assert_eq!(ran.stdout, "1000\n4321\nr");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&weights).unwrap().uid(), 1000);
}

/// A folder whose `bin/` stands in for an NVIDIA host on PATH: an `nvidia-smi` that
/// answers like the real tool with one Tesla T4 and, with `toolkit`, the container
/// toolkit's hook (dockerd here never registered it, so its daemon still has no `nvidia`
/// device driver).
fn stand_in_nvidia_host(toolkit: bool) -> (tempfile::TempDir, String) {
    let mut programs = vec![(
        "bin/nvidia-smi",
        "#!/bin/sh\necho '0, GPU-8a2b44f3-1c2d-3e4f-5a6b-7c8d9e0f1a2b, Tesla T4, 15360, 535.104.05'\n",
    )];
    if toolkit {
        programs.push(("bin/nvidia-container-runtime-hook", "#!/bin/sh\nexit 0\n"));
    }
    let folder = scratch(&programs);
    use std::os::unix::fs::PermissionsExt;
    for (program, _) in &programs {
        let path = folder.path().join(program);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        folder.path().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    (folder, path)
}

/// The notes a run printed (`note: ...` lines of stderr), but the one `--no-build` adds
/// while another worktree's build on this shared daemon has moved a built-in's tag.
fn notes(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.starts_with("note: ") && !line.contains("is older than the spec"))
        .collect()
}

#[tokio::test]
async fn gpu_images_take_the_gpus_by_default_only_where_docker_can_hand_them_over() {
    let Some(engine) = common::engine().await else { return };
    let folder = scratch(&[]);
    let names: Vec<String> = (0..4).map(|_| unique("t-gpudefault")).collect();
    let _guard = DockerGuard::containers(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let no_gpu_note = "note: `gpu-headless` runs on the CPU: no NVIDIA driver answers on this host (no working `nvidia-smi`); where a GPU, its driver and the NVIDIA Container Toolkit are installed, GPU images get all GPUs (`tfimg doctor` checks the host; `--gpus none` skips this note)";

    // This machine has no GPU: a GPU image without `--gpus` runs on the CPU and says why.
    let ran = run(folder.path(), &["gpu-headless", "--no-build", "--", "true"]);
    assert_eq!(ran.code, 0, "{}", ran.tail());
    assert_eq!(notes(&ran.stderr), [no_gpu_note], "{}", ran.tail());
    let created = run(
        folder.path(),
        &[
            "gpu-headless",
            "--no-build",
            "--no-start",
            "--name",
            &names[0],
        ],
    );
    assert_eq!(created.code, 0, "{}", created.tail());
    assert_eq!(notes(&created.stderr), [no_gpu_note]);
    let container = engine.container(&names[0]).await.unwrap().expect("created");
    assert!(
        container.device_requests.is_empty(),
        "{:?}",
        container.device_requests
    );
    assert_eq!(container.labels["io.tfimg.gpus"], "none");

    // `--gpus none` opts out silently; CPU images never hear about GPUs.
    for args in [
        ["gpu-headless", "--gpus", "none", "--no-build", "--", "true"].as_slice(),
        ["cpu-headless", "--no-build", "--", "true"].as_slice(),
    ] {
        let ran = run(folder.path(), args);
        assert_eq!(ran.code, 0, "{args:?}: {}", ran.stderr);
        assert!(notes(&ran.stderr).is_empty(), "{args:?}: {}", ran.stderr);
    }

    // A host whose nvidia-smi lists a GPU, but Docker cannot hand it over: the CPU, and
    // the note names the missing toolkit.
    let (_host, path) = stand_in_nvidia_host(false);
    let env = [("PATH", path.as_str())];
    let with_env = |args: &[&str]| run_with_env(folder.path(), args, &env);
    let created = with_env(&[
        "gpu-headless",
        "--no-build",
        "--no-start",
        "--name",
        &names[1],
    ]);
    assert_eq!(created.code, 0, "{}", created.tail());
    assert_eq!(
        notes(&created.stderr),
        ["note: `gpu-headless` runs on the CPU: this host has 1 GPU but Docker cannot hand GPUs to containers (the NVIDIA Container Toolkit is missing); install it and restart Docker to get them (`tfimg doctor` checks the host; `--gpus none` skips this note)"],
        "{}",
        created.stderr
    );
    let container = engine.container(&names[1]).await.unwrap().expect("created");
    assert!(container.device_requests.is_empty());

    // With the toolkit's hook as well, the default is every GPU: one DeviceRequest for
    // the nvidia driver, Count -1, as `docker run --gpus all` makes.
    let (_host, path) = stand_in_nvidia_host(true);
    let env = [("PATH", path.as_str())];
    let with_env = |args: &[&str]| run_with_env(folder.path(), args, &env);
    let created = with_env(&[
        "gpu-headless",
        "--no-build",
        "--no-start",
        "--name",
        &names[2],
    ]);
    assert_eq!(created.code, 0, "{}", created.tail());
    assert_eq!(
        notes(&created.stderr),
        ["note: `gpu-headless` gets all 1 GPU of this host (the default for GPU images; `--gpus none` runs it on the CPU, `--gpus 0` picks one)"]
    );
    let container = engine.container(&names[2]).await.unwrap().expect("created");
    assert_eq!(container.device_requests.len(), 1);
    let request = &container.device_requests[0];
    assert_eq!(
        (request.driver.as_str(), request.count),
        ("nvidia", Some(-1))
    );
    assert_eq!(request.capabilities, vec![vec!["gpu".to_string()]]);
    assert_eq!(container.labels["io.tfimg.gpus"], "all");
    // This daemon never registered the hook ("could not select device driver"): the
    // default gives way and the run goes on on the CPU, where `--gpus all` fails.
    let ran = with_env(&[
        "gpu-headless",
        "--no-build",
        "--name",
        &names[3],
        "--",
        "true",
    ]);
    assert_eq!(ran.code, 0, "{}", ran.tail());
    let ran_notes = notes(&ran.stderr);
    assert_eq!(ran_notes.len(), 2, "{}", ran.tail());
    assert!(
        ran_notes[1].starts_with("note: `gpu-headless` runs on the CPU: Docker could not hand it the GPUs (")
            && ran_notes[1].contains("could not select device driver")
            && ran_notes[1].ends_with("); install the NVIDIA Container Toolkit and restart Docker to get them (`tfimg doctor` checks the host; `--gpus none` skips this note)"),
        "{}",
        ran.stderr
    );
    assert!(engine.container(&names[3]).await.unwrap().is_none());
    let refused = with_env(&[
        "gpu-headless",
        "--gpus",
        "all",
        "--no-build",
        "--name",
        &names[3],
        "--",
        "true",
    ]);
    assert_eq!(refused.code, 2, "{}", refused.tail());
    assert!(
        refused.stderr.contains("could not select device driver"),
        "{}",
        refused.stderr
    );
}

#[tokio::test]
async fn tensorboard_answers_at_the_printed_url_serves_the_workdir_as_the_user_and_comes_back() {
    let Some(_engine) = common::engine().await else { return };
    // The built-in Jupyter image under a name of the test's own (built on the warm cache:
    // only the generated files differ), so no built-in tag moves.
    let spec = unique("t-tensorboard");
    let folder = scratch(&[("lab.yaml", &format!("name: {spec}\nextends: cpu-jupyter\n"))]);
    let name = unique("t-tensorboard");
    let mut guard = DockerGuard::images(&[&format!("tfimg/{spec}")]);
    guard.containers = vec![name.clone()];
    let started = run(
        folder.path(),
        &[
            "./lab.yaml",
            "-d",
            "--name",
            &name,
            "--uid",
            "4321",
            "--gid",
            "4322",
        ],
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    let url = field(&started.stdout, "tensorboard").expect("a tensorboard line");
    let port = port_of(&url);
    assert_eq!(url, format!("http://127.0.0.1:{port}/"));
    let answered = || {
        common::try_http("GET", port, "/", &[], "").is_some_and(|(status, body)| {
            status == 200 && body.contains("<title>TensorBoard</title>")
        })
    };
    // `run -d` waits for Jupyter only; TensorBoard (niced) may need a few seconds more,
    // and then the note says so.
    if !answered() {
        assert!(
            started.stderr.contains(&format!(
                "note: TensorBoard is still starting and answers in a few seconds (its output: `tfimg logs {name}`)"
            )),
            "{}",
            started.stderr
        );
    }
    common::wait_for(
        "TensorBoard at the printed URL",
        Duration::from_secs(120),
        answered,
    );

    // It serves the workdir: a run a summary writer leaves there shows up in its API.
    let wrote = tfimg(
        folder.path(),
        &[
            "exec",
            &name,
            "--",
            "python",
            "-c",
            "import tensorflow as tf\n\
             with tf.summary.create_file_writer('logs/demo').as_default():\n    \
                 tf.summary.scalar('loss', 0.5, step=1)\n",
        ],
    );
    assert_eq!(wrote.code, 0, "{}", wrote.tail());
    common::wait_for("the run in /data/runs", Duration::from_secs(60), || {
        common::try_http("GET", port, "/data/runs", &[], "")
            .is_some_and(|(_, body)| body.contains("\"logs/demo\""))
    });

    // It runs as the host user (with everything else), and its output is in the logs.
    let processes = common::docker(&["top", &name, "-o", "pid,uid,gid,args"]);
    let tensorboard: Vec<&str> = processes
        .lines()
        .filter(|line| line.contains("bin/tensorboard --logdir /tf"))
        .collect();
    assert_eq!(tensorboard.len(), 1, "{processes}");
    for row in processes.lines().skip(1) {
        let columns: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&columns[1..3], ["4321", "4322"], "{processes}");
    }
    let logs = tfimg(folder.path(), &["logs", &name]);
    let output = format!("{}{}", logs.stdout, logs.stderr);
    assert!(
        output.contains("TensorBoard 2.9.1 at http://0.0.0.0:6006/"),
        "{output}"
    );

    // Run by image reference, the image's label says TensorBoard runs: the URL is
    // printed. An image that does not say so (built before tfimg ran TensorBoard, or any
    // other image) still publishes 6006, but no URL that would not answer.
    let image = format!("tfimg/{spec}:2.9.3");
    let unlabelled = format!("tfimg/{spec}:unlabelled");
    let built = std::process::Command::new("docker")
        .args(["build", "-q", "-t", &unlabelled, "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(format!("FROM {image}\nLABEL io.tfimg.tensorboard=\n").as_bytes())?;
            child.wait()
        })
        .unwrap();
    assert!(built.success());
    for (reference, printed) in [(&image, true), (&unlabelled, false)] {
        let other = unique("t-tensorboard");
        guard.containers.push(other.clone());
        let started = run(
            folder.path(),
            &[reference, "-d", "--no-wait", "--name", &other],
        );
        assert_eq!(started.code, 0, "{}", started.tail());
        assert_eq!(
            field(&started.stdout, "tensorboard").is_some(),
            printed,
            "{reference}: {}",
            started.stdout
        );
        let ports = common::docker(&["port", &other]);
        assert!(ports.contains("6006/tcp -> 127.0.0.1:"), "{ports}");
        tfimg(folder.path(), &["rm", "-f", &other]);
    }

    // Killed, it comes back on the same URL, and the log says so.
    let killed = tfimg(
        folder.path(),
        &[
            "exec",
            &name,
            "--",
            "sh",
            "-c",
            // Every process whose command is TensorBoard's, but this shell (whose own
            // command line names it too).
            "for p in /proc/[0-9]*; do \
               [ \"${p#/proc/}\" != $$ ] || continue; \
               case \"$(tr '\\0' ' ' <$p/cmdline 2>/dev/null)\" in \
                 *bin/tensorboard\\ --logdir*) kill ${p#/proc/} ;; \
               esac; \
             done",
        ],
    );
    assert_eq!(killed.code, 0, "{}", killed.tail());
    common::wait_for("the restart in the log", Duration::from_secs(30), || {
        let logs = tfimg(folder.path(), &["logs", &name]);
        format!("{}{}", logs.stdout, logs.stderr).contains("tfimg: tensorboard exited (status ")
    });
    common::wait_for("TensorBoard again", Duration::from_secs(120), answered);
    drop(guard);
}

#[tokio::test]
async fn the_ssh_image_has_a_shell_s_tools_and_the_jupyter_image_has_git() {
    let Some(_engine) = common::engine().await else { return };
    let folder = scratch(&[]);
    let [ssh, jupyter] = ["ssh", "jupyter"].map(|kind| unique(&format!("t-tools-{kind}")));
    let _guard = DockerGuard::containers(&[&ssh, &jupyter]);
    // As the host user, in a login shell, as someone who logged in would look for them.
    let tools = "tmux screen git nano vi less curl htop ps";
    let found = run(
        folder.path(),
        &[
            "cpu-ssh",
            "--no-build",
            "--name",
            &ssh,
            "--uid",
            "4321",
            "--gid",
            "4321",
            "--",
            "bash",
            "-lc",
            &format!("for t in {tools}; do command -v $t || echo missing $t; done; tmux -V"),
        ],
    );
    assert_eq!(found.code, 0, "{}", found.tail());
    assert!(!found.stdout.contains("missing"), "{}", found.stdout);
    assert!(found.stdout.contains("tmux 3."), "{}", found.stdout);
    let git = run(
        folder.path(),
        &[
            "cpu-jupyter",
            "--no-build",
            "--name",
            &jupyter,
            "--",
            "git",
            "--version",
        ],
    );
    assert_eq!(git.code, 0, "{}", git.tail());
    assert!(git.stdout.starts_with("git version 2."), "{}", git.stdout);
}

/// `--idle-kernels`: Jupyter's own culling shuts down a kernel that ran nothing for that
/// long, as Jupyter's API shows; an image without Jupyter is refused before anything
/// exists.
#[test]
fn an_idle_kernel_is_shut_down_by_jupyter_and_a_non_jupyter_image_is_refused() {
    let name = unique("t-idle");
    let refused_name = unique("t-idle-headless");
    let _guard = DockerGuard::containers(&[&name, &refused_name]);
    let folder = scratch(&[]);
    // Each flag is refused where it has nothing to act on, before anything is created:
    // `--idle-kernels` without Jupyter, `--idle-containers` on a command (which ends by
    // itself).
    for (flag, said) in [
        ("--idle-kernels", "`--idle-kernels` shuts down idle Jupyter kernels"),
        (
            "--idle-containers",
            "`--idle-containers` stops a container nobody uses, and `cpu-headless` here runs a command",
        ),
    ] {
        let args = ["cpu-headless", flag, "1h", "--name", &refused_name, "--no-build", "--", "true"];
        let refused = run(folder.path(), &args);
        assert_eq!(refused.code, 1, "{}", refused.tail());
        assert!(refused.stderr.contains(said), "{}", refused.stderr);
        assert!(
            common::docker(&["ps", "-aq", "--filter", &format!("name=^{refused_name}$")])
                .trim()
                .is_empty()
        );
    }

    let started = run(
        folder.path(),
        &[
            "cpu-jupyter",
            "-d",
            "--idle-kernels",
            "10s",
            "--name",
            &name,
            "--no-build",
        ],
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    let url = field(&started.stdout, "jupyter").expect("a jupyter line");
    let (port, token) = (port_of(&url), token_of(&url));
    let kernels = || http("GET", port, &format!("/api/kernels?token={token}"), &[], "");
    common::start_kernel(port, &token);
    let listed = kernels();
    assert_eq!(listed.0, 200);
    assert!(
        listed.1.contains("\"execution_state\""),
        "one kernel: {}",
        listed.1
    );
    common::wait_for(
        "Jupyter to shut the idle kernel down",
        Duration::from_secs(90),
        || kernels().1.trim() == "[]",
    );
    // The server itself stays up.
    assert_eq!(
        http("GET", port, &format!("/api/status?token={token}"), &[], "").0,
        200
    );
}

/// Issue 45: a foreground `tfimg run cpu-jupyter` in a real terminal shows only URLs that
/// answer on this machine. Jupyter's own log names its in-container address
/// (`http://127.0.0.1:8888/lab?token=...` and the container's host name) and TensorBoard
/// its bind address (`http://0.0.0.0:6006/`); with both ports published elsewhere, every
/// `http://` URL on the terminal is the host's, Jupyter's with its token.
#[test]
fn a_foreground_jupyter_shows_no_url_but_the_host_s_on_a_terminal() {
    if common::docker(&["image", "inspect", "tfimg/cpu-jupyter:2.9.3"]).is_empty() {
        eprintln!("skipping: no engine or no cpu-jupyter image");
        return;
    }
    let name = unique("t-urls");
    let _guard = DockerGuard::containers(&[&name]);
    let folder = scratch(&[]);
    let data = folder.path().join(".tfimg-data");
    let (jupyter, tensorboard) = (common::cli::free_port(), common::cli::free_port());
    let (jupyter_map, tensorboard_map) = (format!("{jupyter}:8888"), format!("{tensorboard}:6006"));
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tfimg"));
    command
        .args(common::cli::run_args(
            "cpu-jupyter",
            &["-p", &jupyter_map, "-p", &tensorboard_map],
            &name,
            &[],
        ))
        .current_dir(folder.path())
        .env_remove("RUST_LOG")
        .env("TFIMG_CONFIG", "/dev/null")
        .env("TFIMG_TODAY", common::TODAY)
        .env("XDG_DATA_HOME", &data);
    let mut session = rexpect::session::spawn_command(command, Some(120_000)).unwrap();
    let mut seen = String::new();
    // Line by line until both servers have announced themselves, whatever their order:
    // TensorBoard's line (`TensorBoard 2.9.1 at URL (Press CTRL+C to quit)`), and the two addresses under Jupyter's `is running at:`.
    let announced = |seen: &str| {
        seen.contains("(Press CTRL+C to quit)")
            && seen
                .split_once("is running at:")
                .is_some_and(|(_, after)| after.lines().count() >= 3)
    };
    while !announced(&seen) {
        let (before, end) = session.exp_regex("\r?\n").unwrap_or_else(|error| {
            panic!("the servers did not announce themselves: {error}\n{seen}");
        });
        seen.push_str(&before);
        seen.push_str(&end);
    }
    session.send_control('c').unwrap();
    seen.push_str(&session.exp_eof().unwrap());
    let host_url = format!("http://127.0.0.1:{jupyter}/lab?token=");
    assert!(seen.contains(&host_url), "{seen}");
    assert!(
        seen.contains(&format!("at http://127.0.0.1:{tensorboard}/")),
        "{seen}"
    );
    for wrong in ["127.0.0.1:8888", "0.0.0.0:6006", ":8888/", ":6006/"] {
        assert!(!seen.contains(wrong), "`{wrong}` on the terminal:\n{seen}");
    }
    let answering = [
        format!("127.0.0.1:{jupyter}/"),
        format!("127.0.0.1:{tensorboard}/"),
    ];
    for url in seen.split("http://").skip(1) {
        assert!(
            answering.iter().any(|host| url.starts_with(host.as_str())),
            "a URL that does not answer here: http://{}\n{seen}",
            url.lines().next().unwrap_or_default()
        );
    }
}

/// Issue 45: a job the kernel kills for memory ends with 137, as Docker's does, and tfimg
/// says why and what raises the limit (exit 137 alone is any SIGKILL: the daemon's
/// `OOMKilled` decides).
#[tokio::test]
async fn a_job_killed_for_memory_says_so_and_names_the_flag_that_raises_the_limit() {
    let Some(engine) = common::engine().await else { return };
    let folder = scratch(&[]);
    let name = unique("t-oom");
    let _guard = DockerGuard::containers(&[&name]);
    // `command` in cpu-headless under a 64 MiB limit.
    let limited = |command: &[&str]| {
        let mut args = vec![
            "cpu-headless",
            "--name",
            &name,
            "--memory",
            "64m",
            "--no-build",
            "--",
        ];
        args.extend_from_slice(command);
        run(folder.path(), &args)
    };
    let ran = limited(&["python", "-c", "b = bytearray(1024 << 20); print(len(b))"]);
    assert_eq!(ran.code, 137, "{}", ran.tail());
    assert!(
        ran.stderr.contains(&format!(
            "note: `{name}` ended with 137: the kernel killed it for using more than its memory limit (64 MiB)\nhint: raise the limit (`--memory 128m`), or have the job use less (a smaller batch)\n"
        )),
        "{}",
        ran.stderr
    );
    assert!(engine.container(&name).await.unwrap().is_none());

    // A SIGKILL that is not the kernel's says nothing of memory.
    let killed = limited(&["sh", "-c", "kill -9 $$"]);
    assert_eq!(killed.code, 137, "{}", killed.tail());
    assert!(!killed.stderr.contains("memory"), "{}", killed.stderr);
}
