//! The Docker daemon going away under tfimg: it is stopped while a build runs a step,
//! while `run -d` waits for a notebook, while `logs -f` follows and while an attached
//! `run` streams — each ends with exit 2 and a clear message, never a hang — and when
//! it comes back, the containers started with `--restart` are running again, the one
//! without is not, and `tfimg ps` still finds them all.
//!
//! This restarts the machine's dockerd, so it is its own test binary with one test (cargo
//! runs test binaries one after another); a guard starts the daemon again even when the
//! test fails.

mod common;

use common::{
    container_state, docker, field, http, scratch, spawn_tfimg, tfimg_with_env, unique, wait_for,
    DockerGuard,
};

use common::daemon::{Daemon, Restarter, HANG};

#[tokio::test]
async fn a_daemon_restart_ends_commands_clearly_and_restart_policies_bring_containers_back() {
    let Some(_engine) = common::engine().await else { return };
    let daemon = Daemon::current();
    let [always, notebook, plain, attached, stuck] =
        ["always", "lab", "plain", "attached", "stuck"].map(|n| unique(&format!("t-daemon-{n}")));
    let build_name = unique("t-daemon-build").to_lowercase();
    let mut guard = DockerGuard::containers(&[&always, &notebook, &plain, &attached, &stuck]);
    guard.repositories.push(format!("tfimg/{build_name}"));
    let folder = scratch(&[
        (
            "spec.yaml",
            &format!("name: {build_name}\nextends: cpu-headless\n"),
        ),
        ("hang/sitecustomize.py", "import time\ntime.sleep(600)\n"),
    ]);
    let xdg = folder.path().join("xdg");
    let env = [("XDG_DATA_HOME", xdg.to_str().unwrap())];
    let tfimg = |args: &[&str]| tfimg_with_env(folder.path(), args, &env);

    // Before: three detached containers, two of them with a restart policy.
    let run = tfimg(&[
        "run",
        "cpu-headless",
        "-d",
        "--no-build",
        "--restart",
        "always",
        "--name",
        &always,
        "--",
        "sleep",
        "3000",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let run = tfimg(&[
        "run",
        "cpu-jupyter",
        "-d",
        "--no-build",
        "--restart",
        "unless-stopped",
        "--name",
        &notebook,
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let url = field(&run.stdout, "jupyter").unwrap();
    let common::JupyterUrl { port, token, .. } = common::jupyter_url(&url);
    let run = tfimg(&[
        "run",
        "cpu-headless",
        "-d",
        "--no-build",
        "--name",
        &plain,
        "--",
        "sleep",
        "3000",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());

    // In flight when the daemon goes: a build inside a step (pip waits on an index that
    // never answers), a notebook that never becomes ready, `logs -f`, an attached run.
    let (index_url, connected, _index) = common::silent_index();
    let build = spawn_tfimg(
        folder.path(),
        &[
            "build",
            "./spec.yaml",
            "--pip-index-url",
            &index_url,
            "--progress",
            "plain",
        ],
        &env,
    );
    connected
        .recv_timeout(HANG)
        .expect("pip connects: the build is inside its step");
    let waiting = spawn_tfimg(
        folder.path(),
        &[
            "run",
            "cpu-jupyter",
            "-d",
            "--no-build",
            "--name",
            &stuck,
            "--mount",
            "./hang:/opt/hang",
            "-e",
            "PYTHONPATH=/opt/hang",
        ],
        &env,
    );
    let follow = spawn_tfimg(folder.path(), &["logs", "-f", &plain], &env);
    let foreground = spawn_tfimg(
        folder.path(),
        &[
            "run",
            "cpu-headless",
            "--no-build",
            "--name",
            &attached,
            "--",
            "sleep",
            "3000",
        ],
        &env,
    );
    wait_for("the attached run", HANG, || {
        container_state(&attached).as_deref() == Some("running")
    });
    wait_for("the notebook that never gets ready", HANG, || {
        container_state(&stuck).as_deref() == Some("running")
    });

    let _restarter = Restarter(&daemon);
    daemon.stop();
    let unreachable = "cannot reach the Docker daemon at `unix:///var/run/docker.sock`";
    for (what, running) in [
        ("build", build),
        ("run -d", waiting),
        ("logs -f", follow),
        ("attached run", foreground),
    ] {
        let run = running.finish(HANG);
        assert_eq!(run.code, 2, "{what}: {}", run.stderr);
        assert!(run.stderr.contains(unreachable), "{what}: {}", run.stderr);
        assert!(
            run.stderr.contains("hint: start the daemon"),
            "{what}: {}",
            run.stderr
        );
    }
    let ps = tfimg(&["ps"]);
    assert_eq!(ps.code, 2);
    assert!(ps.stderr.contains(unreachable), "{}", ps.tail());

    // After: the policies decide who runs.
    daemon.start();
    wait_for("the --restart always container", HANG, || {
        container_state(&always).as_deref() == Some("running")
    });
    wait_for("the notebook", HANG, || {
        container_state(&notebook).as_deref() == Some("running")
    });
    assert_eq!(
        container_state(&plain).as_deref(),
        Some("exited"),
        "no policy, not restarted"
    );
    // The notebook answers again on its port, with its token, and only with it.
    wait_for("Jupyter to answer again", HANG, || {
        common::try_http("GET", port, &format!("/api/status?token={token}"), &[], "")
            .is_some_and(|(status, _)| status == 200)
    });
    assert_eq!(http("GET", port, "/api/status", &[], "").0, 403);
    let ps = tfimg(&["ps", "--json"]);
    assert_eq!(ps.code, 0, "{}", ps.tail());
    let listed: Vec<serde_json::Value> = serde_json::from_str(&ps.stdout).unwrap();
    let state = |name: &str| {
        listed
            .iter()
            .find(|entry| entry["name"] == name)
            .map(|entry| entry["state"].as_str().unwrap().to_string())
    };
    assert_eq!(state(&always).as_deref(), Some("running"));
    assert_eq!(state(&notebook).as_deref(), Some("running"));
    assert_eq!(state(&plain).as_deref(), Some("exited"));
    // The interrupted build left no tag.
    assert_eq!(
        docker(&["images", "-q", &format!("tfimg/{build_name}")]).trim(),
        ""
    );
    // What the interrupted `run -d` had created is labelled: `ps` and `rm` reach it.
    assert!(state(&stuck).is_some(), "{}", ps.stdout);
}
