//! Load on one Engine: 20 `tfimg run -d cpu-jupyter` at once all come up with their own
//! ports and tokens (no port race is lost for good), and 20 `tfimg build` of one new spec
//! at once make one image without an error.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{docker, field, http, scratch, spawn_tfimg, unique, DockerGuard, HOST_CA};

/// Catches a hang; never a performance expectation.
const HANG: Duration = Duration::from_secs(900);
const AT_ONCE: usize = 20;

/// The two tests each load the machine; they take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[tokio::test]
async fn twenty_notebooks_started_at_once_all_answer_on_their_own_ports_with_their_own_tokens() {
    let Some(_engine) = common::engine().await else { return };
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let names: Vec<String> = (0..AT_ONCE)
        .map(|i| unique(&format!("t-load-{i}")))
        .collect();
    let _guard = DockerGuard::containers(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let folder = scratch(&[]);
    let data = folder.path().join("data");
    let running: Vec<_> = names
        .iter()
        .map(|name| {
            spawn_tfimg(
                folder.path(),
                &["run", "cpu-jupyter", "-d", "--no-build", "--name", name],
                &[("XDG_DATA_HOME", data.to_str().unwrap())],
            )
        })
        .collect();
    let runs: Vec<_> = running.into_iter().map(|run| run.finish(HANG)).collect();

    let mut ports = BTreeSet::new();
    let mut tokens = BTreeSet::new();
    for (name, run) in names.iter().zip(&runs) {
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let url = field(&run.stdout, "jupyter").expect("a jupyter line");
        let common::JupyterUrl { port, token, .. } = common::jupyter_url(&url);
        ports.insert(port);
        tokens.insert(token.clone());
        assert_eq!(
            http("GET", port, &format!("/api/status?token={token}"), &[], "").0,
            200,
            "{name}"
        );
        assert_eq!(http("GET", port, "/api/status", &[], "").0, 403, "{name}");
    }
    assert_eq!(
        ports.len(),
        AT_ONCE,
        "every notebook has its own port: {ports:?}"
    );
    assert_eq!(tokens.len(), AT_ONCE, "every notebook has its own token");
    // Each container publishes exactly the port it printed.
    for (name, run) in names.iter().zip(&runs) {
        let url = field(&run.stdout, "jupyter").unwrap();
        let bindings = docker(&["port", name, "8888"]);
        let printed = url.split('/').nth(2).unwrap();
        assert_eq!(bindings.trim(), printed, "{name}");
    }
}

#[tokio::test]
async fn twenty_builds_of_one_new_spec_at_once_make_one_image_without_errors() {
    let Some(_engine) = common::engine().await else { return };
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = unique("t-load-build").to_lowercase();
    let _guard = DockerGuard::images(&[&format!("tfimg/{name}")]);
    let folder = scratch(&[(
        "spec.yaml",
        &format!("name: {name}\nextends: cpu-headless\nenv:\n  BUILT_FOR: \"{name}\"\n"),
    )]);
    let data = folder.path().join("data");
    let running: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            spawn_tfimg(
                folder.path(),
                &[
                    "build",
                    "./spec.yaml",
                    "--ca-cert",
                    HOST_CA,
                    "--progress",
                    "plain",
                ],
                &[("XDG_DATA_HOME", data.to_str().unwrap())],
            )
        })
        .collect();
    let runs: Vec<_> = running.into_iter().map(|run| run.finish(HANG)).collect();

    let mut built = 0;
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.tail());
        assert_eq!(run.stdout, format!("tfimg/{name}:2.9.3\n"));
        if run.stderr.contains(&format!("built `tfimg/{name}:2.9.3`")) {
            built += 1;
        } else {
            assert!(run.stderr.contains("is up to date"), "{}", run.tail());
        }
    }
    assert_eq!(built, 1, "one build, the others found it up to date");
    let images = docker(&[
        "images",
        "-q",
        "--no-trunc",
        "--filter",
        &format!("label=io.tfimg.spec={name}"),
    ]);
    let images: BTreeSet<&str> = images.split_whitespace().collect();
    assert_eq!(images.len(), 1, "one image: {images:?}");
}
