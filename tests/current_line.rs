//! The current line of built-ins (TensorFlow 2.18 on Debian 12, Python 3.11, Keras 3)
//! against the real Docker Engine: one image, extending `tf218-cpu-headless` under its own
//! name, is built, verified and trains the seed MLP (examples/sweep/code/train.py).
//! `scripts/test` warms `tf218-cpu-headless`, so every heavy layer comes from the cache:
//! measured here 72 s (build steps from the cache, verification, two trainings) on the
//! 2-core machine while other builds ran; cold, the warm-up costs a `base bootstrap` of
//! `debian:bookworm-slim` (73 s) and the image's first build (236 s). The GPU variants
//! share the same templates and are covered by their rendered Dockerfiles (`cli_specs.rs`)
//! and the measured builds in docs/reference/builtins.md.

mod common;

use tfimg_testing::engine::prelude::*;

use common::{scratch, tfimg_with_env, HOST_CA};

#[tokio::test]
async fn the_current_line_builds_verifies_and_trains_the_seed_mlp() {
    let Some((engine, name, _guard)) = common::image_test("t-current").await else { return };
    let train = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sweep/code/train.py"),
    )
    .unwrap();
    let folder = scratch(&[
        (
            "images/x.yaml",
            &format!("name: {name}\nextends: tf218-cpu-headless\n"),
        ),
        ("code/train.py", &train),
    ]);

    let build = tfimg_with_env(
        folder.path(),
        &[
            "build",
            &name,
            "--ca-cert",
            HOST_CA,
            "--progress",
            "plain",
            "--bootstrap-base",
        ],
        &[],
    );
    assert_eq!(build.code, 0, "{}", build.tail());
    let image = format!("tfimg/{name}:2.18.1");
    assert_eq!(build.stdout, format!("{image}\n"));
    for line in [
        "ok    tensorflow version: 2.18.1",
        "ok    pin tensorflow-cpu==2.18.1: tensorflow-cpu 2.18.1",
        "ok    pin numpy<2.1: numpy 2.0.",
        "ok    jit_compile=True function computed on the CPU: 1540.0 (expected 1540.0), compiled by XLA",
    ] {
        assert!(build.stderr.contains(line), "{line}\n{}", build.stderr);
    }
    let labels = engine.image(&image).await.unwrap().expect("tagged").labels;
    assert_eq!(labels["io.tfimg.python"], "3.11");
    assert_eq!(labels["io.tfimg.tensorflow"], "2.18.1");

    // Keras 3 trains the seed MLP: four epochs, each with its loss, the loss falling; the
    // seed holds, so a second run prints the same epochs to the last digit.
    let train = || {
        let run = tfimg_with_env(
            folder.path(),
            &[
                "run",
                &image,
                "--mount",
                "./code:ro",
                "--",
                "python",
                "code/train.py",
            ],
            &[],
        );
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("trained in "), "{}", run.stdout);
        assert!(
            run.stdout.contains("GPUs seen by TensorFlow: 0"),
            "{}",
            run.stdout
        );
        run.stdout
            .lines()
            .filter(|line| line.starts_with("epoch "))
            .map(str::to_string)
            .collect::<Vec<String>>()
    };
    let epochs = train();
    let losses: Vec<f64> = epochs
        .iter()
        .map(|line| {
            let loss = line.split(" loss=").nth(1).expect("a loss").split(' ');
            loss.take(1).collect::<String>().parse().unwrap()
        })
        .collect();
    assert_eq!(losses.len(), 4, "{epochs:?}");
    assert!(losses[3] < losses[0], "{epochs:?}");
    assert_eq!(train(), epochs, "the seeded model trained differently");
}
