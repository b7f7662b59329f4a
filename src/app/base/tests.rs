use super::*;
use crate::app::testing::block_on;
use crate::cli::Progress;
use crate::engine::fake::FakeEngine;

#[test]
fn an_existing_image_is_kept_without_force_and_nothing_is_imported() {
    let engine = FakeEngine::new();
    let id = engine.add_image(&["debian:bullseye-slim"], &[]);
    let target = BootstrapTarget::parse("debian:bullseye-slim").unwrap();
    let reporter = Reporter::new(Progress::Plain);
    let done = block_on(bootstrap_unless_present(
        &engine, &target, None, false, &reporter,
    ));
    assert_eq!(done.unwrap(), Bootstrapped::Existing(id));
    assert!(engine.calls_to("import").is_empty());
}
