use super::*;
use crate::app::session::Session;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;

#[test]
fn after_builds_an_earlier_key_s_tag_goes_and_the_current_one_stays() {
    let engine = FakeEngine::new();
    let spec = labels::SPEC;
    let key = labels::BUILD_KEY;
    engine.add_image(
        &["tfimg/lab:2.9.3-aaaaaaaaaaaa"],
        &[(spec, "lab"), (key, "aaaaaaaaaaaa")],
    );
    engine.add_image(
        &["tfimg/lab:2.9.3-bbbbbbbbbbbb", "tfimg/lab:2.9.3"],
        &[(spec, "lab"), (key, "bbbbbbbbbbbb")],
    );
    let host = FakeHost::new();
    let pruned = prune_after_builds(Session::quiet(&engine, &host), "lab", "bbbbbbbbbbbb");
    block_on(pruned).unwrap();
    assert_eq!(
        engine.calls_to("remove-image"),
        ["remove-image tfimg/lab:2.9.3-aaaaaaaaaaaa"]
    );
}
