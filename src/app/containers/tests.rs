use super::*;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;

/// A serving container of `model` as `tfimg serve` leaves it.
fn serving(engine: &FakeEngine, name: &str, model: &str) {
    engine.add_container(
        name,
        "running",
        &[
            (labels::SPEC, "cpu-serving".to_string()),
            (labels::MODEL, model.to_string()),
        ],
    );
}

fn message(error: anyhow::Error) -> String {
    let error = error.downcast::<InputError>().expect("bad input");
    format!("{}\nhint: {}", error.message, error.hint)
}

#[test]
fn a_container_is_found_by_its_name_first() {
    let engine = FakeEngine::new();
    serving(&engine, "serve-fraud-fbca62", "fraud");
    // A container called as another container's model: its own name wins.
    serving(&engine, "fraud", "other");
    let found = block_on(find(&engine, "fraud")).unwrap();
    assert_eq!(found.name, "fraud");
    let found = block_on(find(&engine, "serve-fraud-fbca62")).unwrap();
    assert_eq!(found.name, "serve-fraud-fbca62");
}

/// Issue 28, item 9: `tfimg serve --name fraud` made `serve-fraud-<hash>`, which `rm
/// fraud`, `logs fraud` and `stop fraud` did not find.
#[test]
fn a_serving_container_is_found_by_its_model_s_name() {
    let engine = FakeEngine::new();
    serving(&engine, "serve-fraud-fbca62", "fraud");
    let found = block_on(find(&engine, "fraud")).unwrap();
    assert_eq!(found.name, "serve-fraud-fbca62");
}

#[test]
fn a_model_served_twice_names_both_containers() {
    let engine = FakeEngine::new();
    serving(&engine, "serve-fraud-fbca62", "fraud");
    serving(&engine, "lab-fraud", "fraud");
    assert_eq!(
        message(block_on(find(&engine, "fraud")).unwrap_err()),
        "2 containers serve the model `fraud`: `lab-fraud`, `serve-fraud-fbca62`\n\
         hint: name the container you mean"
    );
}

#[test]
fn other_containers_are_never_found() {
    let engine = FakeEngine::new();
    engine.add_container("web", "running", &[]);
    // Labelled with a model, but not started by tfimg.
    engine.add_container(
        "impostor",
        "running",
        &[(labels::MODEL, "fraud".to_string())],
    );
    assert_eq!(
        message(block_on(find(&engine, "web")).unwrap_err()),
        "`web` was not started by tfimg\n\
         hint: tfimg only manages its own containers; use `docker` for this one"
    );
    assert_eq!(
        message(block_on(find(&engine, "fraud")).unwrap_err()),
        "no container named `fraud`\n\
         hint: `tfimg ps` lists tfimg's containers"
    );
}
