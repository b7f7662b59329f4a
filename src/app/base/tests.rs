use super::*;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;

#[test]
fn an_existing_image_is_kept_without_force_and_nothing_is_imported() {
    let engine = FakeEngine::new();
    let id = engine.add_image(&["debian:bullseye-slim"], &[]);
    let target = BootstrapTarget::parse("debian:bullseye-slim").unwrap();
    let reporter = crate::output::ui::Recorded::default();
    let done = block_on(bootstrap_unless_present(
        &engine, &target, None, false, &reporter,
    ));
    assert_eq!(done.unwrap(), Bootstrapped::Existing(id));
    assert!(engine.calls_to("import").is_empty());
}

/// What the story says goes through the report the fakes record: the pull it tries, and
/// that it falls back on the local image when `--pull` finds no registry.
#[test]
fn a_pull_that_fails_falls_back_on_the_local_image_and_says_so() {
    let engine = FakeEngine::new();
    let id = engine.add_image(&["debian:bullseye-slim"], &[]);
    let reporter = crate::output::ui::Recorded::default();
    let network = Network::default();
    let base = block_on(ensure_base(
        &engine,
        "debian:bullseye-slim",
        &network,
        true,
        false,
        &reporter,
    ));
    assert_eq!(base.unwrap(), id);
    let notes = reporter.notes.borrow();
    assert_eq!(notes[0], "pulling base image `debian:bullseye-slim`");
    assert!(
        notes[1].starts_with("could not pull `debian:bullseye-slim` (")
            && notes[1].ends_with("); using the local image"),
        "{notes:?}"
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
}
