//! The model server's own code checks: `ruff check` and `ruff format --check` on the
//! `tfimg_serving` package and its tests, then its pytest unit tests
//! (tests/serving_package/), inside each serving line's image as `tfimg build` makes it:
//! the package as the image holds it (/opt/tfimg/tfimg_serving), with that line's Python
//! and TensorFlow (3.9 and 2.9, 3.11 and 2.18). pytest and ruff, pinned, go into the
//! container's /tmp from PyPI (with this network's CA), never into the image.

mod common;

use std::process::Command;

use common::serving::tfimg;
use common::{container_test, scratch, HOST_CA};

const PYTEST: &str = "pytest==8.3.5";
const RUFF: &str = "ruff==0.17.6";
const PACKAGE: &str = "crates/core/src/render/templates/tfimg_serving";
const TESTS: &str = "tests/serving_package";
const TEST_FILES: &[&str] = &[
    "test_batching",
    "test_link",
    "test_model_config",
    "test_requests",
    "test_settings",
    "test_tensors",
    "test_text_ops",
    "test_twin",
];

/// The checks run in `image` as container `name`: its exit code and output.
fn checks_in(image: &str, name: &str) -> (Option<i32>, String) {
    let root = env!("CARGO_MANIFEST_DIR");
    let script = format!(
        "set -e; python -m pip install -q --disable-pip-version-check --target /tmp/tools \
         --cert /ca.crt {PYTEST} {RUFF}; cd /src; /tmp/tools/bin/ruff check --no-cache; \
         /tmp/tools/bin/ruff format --check --no-cache; cd /tmp; \
         PYTHONPATH=/opt/tfimg:/tmp/tools python -m pytest -p no:cacheprovider -q -rA /src/{TESTS}"
    );
    let output = Command::new("docker")
        .args(["run", "--rm", "--name", name, "--entrypoint", "sh"])
        .args(["-v", &format!("{root}/ruff.toml:/src/ruff.toml:ro")])
        .args(["-v", &format!("{root}/{PACKAGE}:/src/{PACKAGE}:ro")])
        .args(["-v", &format!("{root}/{TESTS}:/src/{TESTS}:ro")])
        .args(["-v", &format!("{HOST_CA}:/ca.crt:ro")])
        .args([image, "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code(), text)
}

#[tokio::test]
async fn the_server_package_is_ruff_clean_and_passes_its_unit_tests_on_both_serving_lines() {
    let Some((_engine, name, _guard)) = container_test("t-serving-package").await else {
        return;
    };
    let folder = scratch(&[]);
    for (spec, image) in [
        ("cpu-serving", "tfimg/cpu-serving:2.9.3"),
        ("tf218-cpu-serving", "tfimg/tf218-cpu-serving:2.18.1"),
    ] {
        let built = tfimg(folder.path(), &["build", spec, "--progress", "plain"]);
        assert_eq!(built.code, 0, "{}", built.tail());
        let (code, text) = checks_in(image, &name);
        println!("{spec}:\n{text}");
        assert_eq!(code, Some(0), "{spec}:\n{text}");
        // ruff looked at the files, and every test file ran.
        assert!(text.contains("All checks passed!"), "{spec}:\n{text}");
        for file in TEST_FILES {
            let ran = text
                .lines()
                .any(|line| line.starts_with("PASSED ") && line.contains(&format!("{file}.py::")));
            assert!(ran, "{spec}: {file} did not run:\n{text}");
        }
    }
}
