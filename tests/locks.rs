//! `tfimg lock` and locked builds against the real Docker Engine and PyPI: a small spec
//! (`extends: builtin:cpu-headless` plus `rich`, which pulls three more distributions) is
//! locked, built, built again cold with `--no-cache`, and both images hold exactly the
//! lock's distributions; a copy of the lock with one sha256 altered fails at pip's step
//! naming the package; a package added to the spec makes `lock --check` and `build`
//! refuse, naming it. Every image is removed when the test ends, failed or not.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

use tfimg_testing::engine::prelude::*;

use common::{docker, scratch, tfimg, unique, DockerGuard, HOST_CA};

fn spec_file(name: &str, pip: &str) -> String {
    format!("name: {name}\nextends: builtin:cpu-headless\npackages:\n  pip: [{pip}]\n")
}

/// `pip freeze --all` of `image`, as name (normalized) → version.
fn freeze(image: &str) -> BTreeMap<String, String> {
    let output = docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        "--entrypoint",
        "/opt/venv/bin/pip",
        image,
        "freeze",
        "--all",
    ]);
    output
        .lines()
        .filter_map(|line| line.split_once("=="))
        .map(|(name, version)| (normalize(name), version.to_string()))
        .collect()
}

fn normalize(name: &str) -> String {
    name.to_lowercase().replace(['_', '.'], "-")
}

/// The id of the layer of `image` whose step contains `needle` (`docker history`).
fn layer_id(image: &str, needle: &str) -> Option<String> {
    docker(&[
        "history",
        "--no-trunc",
        "--format",
        "{{.ID}} {{.CreatedBy}}",
        image,
    ])
    .lines()
    .find(|line| line.contains(needle))
    .and_then(|line| line.split_whitespace().next())
    .map(str::to_string)
}

/// The tests build one after the other. The first one's cold (`--no-cache`) build makes
/// a second chain of the built-in's lower layers, and its refused build leaves images on
/// top of that chain; Docker's classic builder takes the newest matching chain, so a
/// build of the second test meanwhile would share its TensorFlow layer with those instead
/// of with `tfimg/cpu-headless`. The first test removes what it left before the next.
static SERIAL: Mutex<()> = Mutex::new(());

/// This test's turn: the tests that build the shared spec run one after another.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The dangling images now (untagged, without children: a refused build's last step).
fn dangling() -> BTreeSet<String> {
    docker(&["images", "-q", "--no-trunc", "--filter", "dangling=true"])
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Removes, when dropped (failed or not), the images that became dangling since it was
/// made, with the untagged layers below them no other image uses.
struct NewDangling(BTreeSet<String>);

impl Drop for NewDangling {
    fn drop(&mut self) {
        for id in dangling().difference(&self.0) {
            docker(&["rmi", id]);
        }
    }
}

fn build(folder: &Path, spec: &str, extra: &[&str]) -> common::Run {
    let mut args = vec!["build", spec, "--ca-cert", HOST_CA, "--progress", "plain"];
    args.extend_from_slice(extra);
    tfimg(folder, &args)
}

#[tokio::test]
// Each test has a runtime (and a thread) of its own: the lock only orders them.
#[allow(clippy::await_holding_lock)]
async fn a_locked_spec_builds_the_same_environment_twice_and_refuses_an_altered_hash() {
    let _serial = one_at_a_time();
    let Some(engine) = common::engine().await else { return };
    let started = std::time::Instant::now();
    let name = unique("t-lock");
    let altered = format!("{name}-altered");
    let _guard = DockerGuard::images(&[&format!("tfimg/{name}"), &format!("tfimg/{altered}")]);
    // Dropped before the guard: the refused build's images, then the tagged ones.
    let _leftovers = NewDangling(dangling());
    let folder = scratch(&[("images/lab.yaml", &spec_file(&name, "rich"))]);
    let dir = folder.path();

    // Lock: the file beside the spec, with the spec's own group holding rich's closure.
    let locked = tfimg(
        dir,
        &["lock", &name, "--ca-cert", HOST_CA, "--progress", "plain"],
    );
    assert_eq!(locked.code, 0, "{}", locked.tail());
    assert_eq!(locked.stdout, "images/lab.lock\n");
    let text = std::fs::read_to_string(dir.join("images/lab.lock")).unwrap();
    assert!(
        text.starts_with("# written by tfimg lock: do not edit\n"),
        "{text}"
    );
    let lock = tfimg_testing::lock::read::parse(&text, "images/lab.lock", Some(&name)).unwrap();
    let own: Vec<&str> = lock.pip.packages.iter().map(|d| d.name.as_str()).collect();
    assert!(own.contains(&"rich") && own.contains(&"mdurl"), "{own:?}");
    assert!(lock
        .pip
        .tensorflow
        .iter()
        .any(|d| d.name == "tensorflow-cpu"));
    let expected: BTreeMap<String, String> = tfimg_testing::lock::expected(&lock)
        .into_iter()
        .map(|(name, version)| (normalize(&name), version))
        .collect();
    let check = tfimg(dir, &["lock", &name, "--check"]);
    assert_eq!(check.code, 0, "{}", check.tail());
    assert!(check.stderr.contains("lock up to date"), "{}", check.tail());
    let after_lock = started.elapsed();

    // A build, then a cold one (`--no-cache`: every layer again, pip downloads every
    // file: PIP_NO_CACHE_DIR=1 keeps no cache in any layer).
    let first = build(dir, &name, &[]);
    assert_eq!(first.code, 0, "{}", first.tail());
    assert!(
        first
            .stderr
            .contains("ok    installed distributions equal the lock"),
        "{}",
        first.stderr
    );
    let tag = format!("tfimg/{name}:2.9.3");
    let image = engine.image(&tag).await.unwrap().expect("tagged");
    assert_eq!(
        image.labels.get("io.tfimg.lock"),
        Some(&tfimg_testing::lock::hex_digest(text.as_bytes()))
    );
    let first_freeze = freeze(&tag);
    let first_id = image.id.clone();
    // The TensorFlow group is the built-in's (the lock took it from the embedded one), so
    // when `tfimg/cpu-headless:2.9.3` was built from its lock (scripts/test builds it
    // first) this build downloads no TensorFlow: the layer comes from the cache. (Which
    // of several identical cached chains Docker picks is its own choice: a `--no-cache`
    // build makes a second one, so the layer ids are not compared.)
    let step = "--require-hashes --no-deps -r /opt/tfimg/lock/tensorflow.txt";
    assert!(layer_id(&tag, step).is_some(), "a locked TensorFlow layer");
    if let Some(builtin) = engine.image("tfimg/cpu-headless:2.9.3").await.unwrap() {
        if builtin.labels.contains_key("io.tfimg.lock") {
            assert!(
                !first.stderr.contains("Downloading tensorflow_cpu"),
                "{}",
                first.stderr
            );
        }
    }
    let after_first = started.elapsed();

    let cold = build(dir, &name, &["--no-cache"]);
    assert_eq!(cold.code, 0, "{}", cold.tail());
    assert!(!cold.stderr.contains("Using cache"), "{}", cold.tail());
    assert!(
        cold.stderr.contains("Downloading tensorflow_cpu-2.9.3"),
        "the cold build downloads TensorFlow again: {}",
        cold.stderr
    );
    let cold_id = engine.image(&tag).await.unwrap().expect("tagged").id;
    assert_ne!(cold_id, first_id, "a new image");
    let cold_freeze = freeze(&tag);
    assert_eq!(first_freeze, cold_freeze);
    assert_eq!(first_freeze, expected, "pip freeze equals the lock");
    let after_cold = started.elapsed();

    // One hash altered in a copy of the lock: pip refuses it, naming the package.
    let mdurl = lock
        .pip
        .packages
        .iter()
        .find(|d| d.name == "mdurl")
        .expect("mdurl in the spec's group");
    let good_hash = mdurl.sha256.clone().unwrap();
    let bad_hash: String = good_hash.chars().rev().collect();
    let altered_text = text
        .replace(&good_hash, &bad_hash)
        .replace(&format!("spec: {name}\n"), &format!("spec: {altered}\n"));
    std::fs::write(dir.join("images/altered.lock"), altered_text).unwrap();
    std::fs::write(dir.join("images/altered.yaml"), spec_file(&altered, "rich")).unwrap();
    let refused = build(dir, &altered, &[]);
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(
        refused.stderr.contains(&format!(
            "error: pip refused `mdurl=={}`: its sha256 is not the lock's (`images/altered.lock`)",
            mdurl.version
        )),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("hint: "), "{}", refused.tail());
    assert!(engine
        .image(&format!("tfimg/{altered}:2.9.3"))
        .await
        .unwrap()
        .is_none());

    // A package added to the spec: --check and build name it, and build builds nothing.
    std::fs::write(dir.join("images/lab.yaml"), spec_file(&name, "rich, tqdm")).unwrap();
    let stale = tfimg(dir, &["lock", &name, "--check"]);
    assert_eq!(stale.code, 1, "{}", stale.tail());
    assert!(
        stale
            .stderr
            .contains("the spec adds pip package `tqdm`; the lock was made without it"),
        "{}",
        stale.stderr
    );
    assert!(
        stale.stderr.contains(&format!(
            "hint: make the lock again with `tfimg lock {name}`"
        )),
        "{}",
        stale.stderr
    );
    let refused = build(dir, &name, &[]);
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(refused.stderr.contains("`tqdm`"), "{}", refused.tail());
    assert!(!refused.stderr.contains("Step 1/"), "{}", refused.tail());
    eprintln!(
        "timings: lock {:.0} s, first build {:.0} s, cold build {:.0} s, total {:.0} s",
        after_lock.as_secs_f64(),
        (after_first - after_lock).as_secs_f64(),
        (after_cold - after_first).as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// The ids of every layer in the history of the tagged `tfimg/*` images but `except`.
fn layers_of_other_images(except: &str) -> Vec<String> {
    let tags = docker(&[
        "images",
        "--filter",
        "reference=tfimg/*",
        "--format",
        "{{.Repository}}:{{.Tag}}",
    ]);
    let except_id = docker(&["image", "inspect", "--format", "{{.Id}}", except]);
    tags.lines()
        .filter(|tag| docker(&["image", "inspect", "--format", "{{.Id}}", tag]) != except_id)
        .flat_map(|tag| {
            docker(&["history", "--no-trunc", "--quiet", tag])
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test]
#[allow(clippy::await_holding_lock)]
async fn a_spec_without_a_lock_builds_on_its_built_in_s_locked_layers_and_shares_them() {
    let _serial = one_at_a_time();
    let Some(engine) = common::engine().await else { return };
    let name = unique("t-inherit");
    let same = format!("{name}-env");
    let _guard = DockerGuard::images(&[&format!("tfimg/{name}"), &format!("tfimg/{same}")]);
    let folder = scratch(&[
        ("images/lab.yaml", &spec_file(&name, "rich")),
        (
            "images/same.yaml",
            &format!("name: {same}\nextends: builtin:cpu-headless\nenv: {{MARK: \"1\"}}\n"),
        ),
    ]);
    let dir = folder.path();
    // The built-in from its embedded lock (from the cache when scripts/test built it).
    let builtin = build(dir, "cpu-headless", &[]);
    assert_eq!(builtin.code, 0, "{}", builtin.tail());

    // Its own pip package on top: the layers below come from the built-in's lock, by hash
    // and from the cache; rich floats, and the build says so.
    let built = build(dir, &name, &[]);
    assert_eq!(built.code, 0, "{}", built.tail());
    assert!(
        built.stderr.contains(&format!(
            "`{name}` has no lock of its own: `builtin:cpu-headless.lock` pins every layer but the spec's own pip packages (the images built from it share them); `tfimg lock images/lab.yaml` pins the rest too\n"
        )),
        "{}",
        built.stderr
    );
    assert!(
        built
            .stderr
            .contains("ok    the inherited lock's distributions are installed: "),
        "{}",
        built.stderr
    );
    assert!(!built.stderr.contains("tensorflow_cpu"), "{}", built.tail());
    let tag = format!("tfimg/{name}:2.9.3");
    let image = engine.image(&tag).await.unwrap().expect("tagged");
    assert_eq!(image.labels.get("io.tfimg.lock"), None, "not locked whole");
    let installed = freeze(&tag);
    assert!(installed.contains_key("rich"), "{installed:?}");
    let builtin_lock = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/images/cpu-headless.lock"
    ))
    .unwrap();
    let builtin_lock =
        tfimg_testing::lock::read::parse(&builtin_lock, "cpu-headless.lock", None).unwrap();
    for (name, version) in tfimg_testing::lock::expected_below_packages(&builtin_lock) {
        assert_eq!(installed.get(&normalize(&name)), Some(&version), "{name}");
    }
    // The TensorFlow layer is another image's too: removing this one keeps it, so the next
    // spec like it downloads nothing either.
    let step = "--require-hashes --no-deps -r /opt/tfimg/lock/tensorflow.txt";
    let tensorflow = layer_id(&tag, step).expect("the locked TensorFlow layer");
    assert!(
        layers_of_other_images(&tag).contains(&tensorflow),
        "{tensorflow} is this image's alone"
    );

    // Only a variable more: every layer is the lock's, and the image holds exactly it.
    let whole = build(dir, &same, &[]);
    assert_eq!(whole.code, 0, "{}", whole.tail());
    assert!(
        whole.stderr.contains(&format!(
            "`{same}` has no lock of its own: `builtin:cpu-headless.lock` pins every layer (the images built from it share them)\n"
        )),
        "{}",
        whole.stderr
    );
    assert!(
        whole
            .stderr
            .contains("ok    installed distributions equal the lock"),
        "{}",
        whole.stderr
    );
    let shown = tfimg(dir, &["show", &same]);
    assert!(
        shown
            .stdout
            .contains("lock:\n  file: builtin:cpu-headless.lock\n"),
        "{}",
        shown.stdout
    );
}
