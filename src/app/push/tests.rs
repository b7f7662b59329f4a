use super::*;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;

#[test]
fn the_target_keeps_the_image_s_path_under_the_registry() {
    let target = target("tfimg/cpu-jupyter:2.9.3@sha256:abc", "127.0.0.1:5000/");
    assert_eq!(target.unwrap(), "127.0.0.1:5000/tfimg/cpu-jupyter:2.9.3");
}

#[test]
fn a_registry_that_is_not_a_host_is_refused_before_the_engine() {
    let error = target("tfimg/lab:1", "not a host").unwrap_err();
    assert_eq!(
        error.to_string(),
        "`--registry not a host` is not a registry host"
    );
}

#[test]
fn an_image_missing_here_is_refused_and_nothing_is_tagged() {
    let engine = FakeEngine::new();
    let reporter = crate::output::ui::Recorded::default();
    let error = block_on(push(
        &engine,
        "tfimg/lab:1",
        "r:5000/tfimg/lab:1",
        &reporter,
    ));
    let error = error.unwrap_err().to_string();
    assert_eq!(error, "no image named `tfimg/lab:1` on this machine");
    assert!(engine.calls_to("tag").is_empty());
}

#[test]
fn the_image_is_tagged_for_the_registry_before_the_push() {
    let engine = FakeEngine::new();
    let id = engine.add_image(&["tfimg/lab:1"], &[]);
    let reporter = crate::output::ui::Recorded::default();
    let pushed = block_on(push(
        &engine,
        "tfimg/lab:1",
        "r:5000/tfimg/lab:1",
        &reporter,
    ));
    // The fake engine's registry is unreachable: the push itself fails.
    assert!(pushed.is_err());
    assert_eq!(
        engine.calls_to("tag"),
        [format!("tag {id} r:5000/tfimg/lab:1")]
    );
    assert_eq!(engine.calls_to("push"), ["push r:5000/tfimg/lab:1"]);
}
