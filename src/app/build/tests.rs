//! Unit tests of `build`.
use super::*;
use crate::engine::fake::FakeEngine;
use crate::engine::Finished;
use crate::host::fake::FakeHost;
use crate::spec::Catalog;

fn setup() -> (FakeEngine, FakeHost, ResolvedSpec) {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let catalog = Catalog::builtin(std::path::PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, "cpu-headless").unwrap();
    (engine, FakeHost::new(), resolved)
}

fn build(
    session: Session<'_, FakeEngine, FakeHost>,
    resolved: &ResolvedSpec,
    options: &BuildOptions<'_>,
) -> anyhow::Result<Option<Built>> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(build_spec(session, resolved, &Network::default(), options))
}

#[test]
fn a_new_spec_is_built_verified_tagged_then_up_to_date() {
    let (engine, host, resolved) = setup();
    let built = build(
        Session::quiet(&engine, &host),
        &resolved,
        &BuildOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert!(!built.up_to_date);
    assert_eq!(built.plan.tag, "tfimg/cpu-headless:2.9.3");
    assert_eq!(engine.calls_to("build").len(), 1);
    assert_eq!(
        engine.calls_to("run-once"),
        [format!("run-once {}", built.image_id)]
    );
    assert_eq!(engine.tags().len(), 3, "{:?}", engine.tags());
    assert!(engine.tags().contains(&built.plan.keyed_tag));
    // Earlier builds are pruned in the background.
    assert_eq!(
        *host.prunes.borrow(),
        [("cpu-headless".to_string(), built.plan.key.clone())]
    );

    let again = build(
        Session::quiet(&engine, &host),
        &resolved,
        &BuildOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert!(again.up_to_date);
    assert_eq!(again.image_id, built.image_id);
    assert_eq!(engine.calls_to("build").len(), 1, "no second build");
}

#[test]
fn a_failed_verification_tags_nothing_and_removes_the_image() {
    let (engine, host, resolved) = setup();
    engine.state.borrow_mut().run_once = Some(Finished {
        exit_code: Some(1),
        output: "ok    tensorflow version: 2.9.3\nFAIL  pin numpy<1.24: numpy 2.0.0\n".into(),
        ..Finished::default()
    });
    let error = build(
        Session::quiet(&engine, &host),
        &resolved,
        &BuildOptions::default(),
    )
    .unwrap_err();
    assert!(
        error.to_string().starts_with(
            "verification of `cpu-headless` failed (exit 1); the image was not tagged"
        ),
        "{error}"
    );
    assert_eq!(engine.tags(), ["debian:bullseye-slim"]);
    assert!(engine.calls_to("tag").is_empty());
    assert_eq!(engine.calls_to("remove-image").len(), 1);
    assert!(host.prunes.borrow().is_empty());
}

#[test]
fn only_a_check_builds_nothing() {
    let (engine, host, resolved) = setup();
    let options = BuildOptions {
        only_check: true,
        ..BuildOptions::default()
    };
    assert!(build(Session::quiet(&engine, &host), &resolved, &options)
        .unwrap()
        .is_none());
    assert!(engine.calls_to("build").is_empty());
}

#[test]
fn a_failed_step_is_bad_input_with_its_output() {
    let (engine, host, resolved) = setup();
    engine.state.borrow_mut().build_failure = Some(BuildFailure {
        step: Some((4, 18, "RUN pip install nope".into())),
        message: "The command returned a non-zero code: 1".into(),
        output: vec!["ERROR: No matching distribution found for nope".into()],
    });
    let error = build(
        Session::quiet(&engine, &host),
        &resolved,
        &BuildOptions::default(),
    )
    .unwrap_err();
    let input = error.downcast_ref::<InputError>().expect("bad input");
    assert_eq!(
        input.message,
        "building `cpu-headless` failed at step 4/18 `RUN pip install nope`: The command returned a non-zero code: 1\n  | ERROR: No matching distribution found for nope"
    );
    assert!(engine.calls_to("tag").is_empty());
}

#[test]
fn a_base_other_than_the_locked_one_is_said_only_where_the_user_can_act() {
    let (_, _, mut resolved) = setup();
    let text = crate::spec::load::builtin_lock("cpu-headless").unwrap();
    let load = |display: &str| {
        crate::lock::load(text.as_bytes().to_vec(), display, "cpu-headless").unwrap()
    };
    resolved.lock = Some(load("builtin:cpu-headless.lock"));
    let locked_id = resolved.lock.as_ref().unwrap().file.base.id.clone();
    let other = "sha256:0123456789abcdef0123";
    assert_eq!(base_drift(&resolved, &locked_id), None);
    // A built-in's lock (and a parent's, which a derived spec inherits) was made on
    // another machine's base: nothing the user can do, so nothing is said (issue 45).
    assert_eq!(base_drift(&resolved, other), None);
    let mut derived = resolved.clone();
    derived.name = "mylab".to_string();
    derived.source = "images/mylab.yaml".to_string();
    derived.lock = None;
    derived.extends = vec!["cpu-headless".to_string()];
    assert_eq!(base_drift(&derived, other), None);
    // The spec's own lock file: `tfimg lock` makes it again on this base.
    resolved.source = "images/cpu-headless.yaml".to_string();
    resolved.lock = Some(load("images/cpu-headless.lock"));
    assert_eq!(
        crate::output::notice_line(&base_drift(&resolved, other).unwrap()),
        format!(
            "warning: the base image `debian:bullseye-slim` here (0123456789ab) is not the one `images/cpu-headless.lock` was made on ({}); apt and pip stay pinned; `tfimg lock images/cpu-headless.yaml` makes the lock on this one",
            &locked_id["sha256:".len().."sha256:".len() + 12]
        )
    );
}

#[test]
fn a_tag_that_is_not_an_image_reference_is_refused() {
    assert!(check_tags(&["team/lab:1".to_string()]).is_ok());
    let tags = ["team/lab:1".to_string(), "Bad Tag".to_string()];
    let error = check_tags(&tags).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`--tag Bad Tag` is not a valid image reference"
    );
}
