//! Unit tests of `save` and `load` on the fake engine and host: a spec file with its lock
//! and a local parent saved on one engine and loaded on another; every refusal before
//! anything is written or imported.

use std::path::{Path, PathBuf};

use super::load::Loaded;
use super::save::{spec_target, SaveTarget};
use super::*;
use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::session::Session;
use crate::app::testing::block_on as run;
use crate::bundle::layout::IMAGES_PART;
use crate::bundle::SpecSource;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::spec::load::file_document;
use crate::spec::Catalog;

const OUTPUT: &str = "/out/lab.tar";
const LAB: &str = "name: lab\nextends: team-base\nenv: {MARK: \"42\"}\n";
const TEAM_BASE: &str = "name: team-base\nextends: cpu-headless\npackages: {pip: [rich]}\n";
const LOCK: &str = "# lock of lab\nrich==13.7.1 --hash=sha256:abc\n";

fn reporter() -> crate::output::ui::Recorded {
    crate::output::ui::Recorded::default()
}

/// A project on the fake host: `/project/lab.yaml` (with its lock) extending the local
/// `images/team-base.yaml`; the engine has the base image.
fn project() -> (FakeEngine, FakeHost, Catalog) {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let host = FakeHost::new();
    host.paths.borrow_mut().insert(PathBuf::from("/out"));
    let mut files = host.files.borrow_mut();
    files.insert("/project/lab.yaml".into(), LAB.into());
    files.insert("/project/lab.lock".into(), LOCK.into());
    files.insert("/project/images/team-base.yaml".into(), TEAM_BASE.into());
    drop(files);
    let mut catalog = Catalog::builtin(PathBuf::from("/project"));
    catalog.add_local(
        "/project/images/team-base.yaml".into(),
        "images/team-base.yaml",
        Ok(TEAM_BASE.into()),
    );
    (engine, host, catalog)
}

fn lab_target(catalog: &Catalog) -> SaveTarget {
    let leaf = file_document("/project/lab.yaml", Ok(LAB.into())).unwrap();
    let resolved = crate::spec::resolve_document(catalog, leaf.clone()).unwrap();
    let chain = catalog.chain(leaf).unwrap();
    SaveTarget::Spec(Box::new(spec_target(resolved, &chain)))
}

fn builtin_target(catalog: &Catalog, name: &str) -> SaveTarget {
    let resolved = crate::spec::resolve(catalog, name).unwrap();
    let chain = catalog.chain(catalog.find(name).unwrap()).unwrap();
    SaveTarget::Spec(Box::new(spec_target(resolved, &chain)))
}

/// Builds the target's image; it gets the labels a rendered Dockerfile gives, and one
/// that is not tfimg's.
fn build(session: Session<'_, FakeEngine, FakeHost>, target: &SaveTarget) {
    let engine = session.engine;
    let SaveTarget::Spec(target) = target else { panic!("a spec") };
    let built = run(build_spec(
        session,
        &target.resolved,
        &Network::default(),
        &BuildOptions::default(),
    ))
    .unwrap()
    .unwrap();
    let mut state = engine.state.borrow_mut();
    let labels = &mut state.images.get_mut(&built.image_id).unwrap().labels;
    labels.insert("io.tfimg.spec".into(), target.resolved.name.clone());
    labels.insert("maintainer".into(), "someone".into());
}

fn save_to(
    session: Session<'_, FakeEngine, FakeHost>,
    targets: &[SaveTarget],
    output: &str,
) -> anyhow::Result<save::Saved> {
    let network = Network::default();
    let options = SaveOptions {
        output: Path::new(output),
        network: &network,
        tfimg_version: "0.1.0",
    };
    run(save(session, targets, &options))
}

fn options<'a>(folder: &'a str, force: bool) -> LoadOptions<'a> {
    LoadOptions {
        bundle: Path::new(OUTPUT),
        folder: Path::new(folder),
        force,
    }
}

fn load_into(
    session: Session<'_, FakeEngine, FakeHost>,
    catalog: &Catalog,
    folder: &str,
    force: bool,
) -> anyhow::Result<Loaded> {
    let host = session.host;
    let options = options(folder, force);
    let checked = check(host, catalog, &options, &reporter())?;
    run(load(session, &checked, &options))
}

/// The files on the host, without the project's own.
fn written(host: &FakeHost) -> Vec<String> {
    host.files
        .borrow()
        .keys()
        .map(|path| path.display().to_string())
        .filter(|path| !path.starts_with("/project/"))
        .collect()
}

#[test]
fn a_spec_file_its_lock_and_its_local_parent_travel_to_another_engine() {
    let (engine, host, catalog) = project();
    let target = lab_target(&catalog);
    build(Session::quiet(&engine, &host), &target);
    let saved = save_to(Session::quiet(&engine, &host), &[target], OUTPUT).unwrap();

    // One file, no temporary left; the manifest says what it holds.
    assert_eq!(written(&host), [OUTPUT]);
    assert_eq!(
        host.files.borrow()[Path::new(OUTPUT)].len() as u64,
        saved.bytes
    );
    let manifest = &saved.manifest;
    let paths: Vec<&str> = manifest
        .parts
        .iter()
        .map(|part| part.path.as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "specs/team-base.yaml",
            "specs/lab.yaml",
            "specs/lab.lock",
            IMAGES_PART
        ]
    );
    let [image] = &manifest.images[..] else { panic!("one image: {:?}", manifest.images) };
    assert_eq!(image.tags.len(), 2);
    assert!(image.tags.iter().any(|tag| tag == "tfimg/lab:2.9.3"));
    assert_eq!(image.labels["io.tfimg.spec"], "lab");
    assert!(image.labels.keys().all(|key| key.starts_with("io.tfimg.")));
    let sources: Vec<(&str, SpecSource, bool)> = manifest
        .specs
        .iter()
        .map(|spec| (spec.name.as_str(), spec.source, spec.lock.is_some()))
        .collect();
    assert_eq!(
        sources,
        [
            ("team-base", SpecSource::Parent, false),
            ("lab", SpecSource::File, true)
        ]
    );
    // The daemon exported the image by its keyed tag only.
    let exports = engine.calls_to("export");
    assert_eq!(exports.len(), 1);
    assert!(
        exports[0].starts_with("export tfimg/lab:2.9.3-"),
        "{exports:?}"
    );

    // Another machine: its own engine, the bundle on its disk.
    let offline = FakeEngine::new();
    let loaded = load_into(
        Session::quiet(&offline, &host),
        &catalog,
        "/offline/images",
        false,
    )
    .unwrap();
    assert_eq!(loaded.images, manifest.images);
    let mut tags = offline.tags();
    tags.sort();
    let mut expected = image.tags.clone();
    expected.sort();
    assert_eq!(tags, expected, "the moving tag is set too");
    let files = host.files.borrow();
    assert_eq!(files[Path::new("/offline/images/lab.yaml")], LAB.as_bytes());
    assert_eq!(
        files[Path::new("/offline/images/lab.lock")],
        LOCK.as_bytes()
    );
    assert_eq!(
        files[Path::new("/offline/images/team-base.yaml")],
        TEAM_BASE.as_bytes()
    );
    assert_eq!(loaded.written.len(), 3);
}

#[test]
fn a_built_in_travels_as_its_resolved_spec_and_an_image_with_the_tag_asked_for() {
    let (engine, host, catalog) = project();
    let target = builtin_target(&catalog, "cpu-headless");
    build(Session::quiet(&engine, &host), &target);
    let other = engine.add_image(&["team/tool:1", "team/tool:latest"], &[("other", "x")]);
    let targets = [target, SaveTarget::Image("team/tool:1".to_string())];
    let saved = save_to(Session::quiet(&engine, &host), &targets, OUTPUT).unwrap();
    let manifest = &saved.manifest;
    assert_eq!(manifest.specs[0].source, SpecSource::BuiltIn);
    assert_eq!(manifest.specs[0].part, "specs/cpu-headless.resolved.yaml");
    let tool = manifest
        .images
        .iter()
        .find(|image| image.id == other)
        .unwrap();
    assert_eq!(tool.tags, ["team/tool:1"]);
    assert!(tool.labels.is_empty(), "only tfimg's labels are listed");

    // Loaded, a built-in writes no spec file (this tfimg has it) and resolves the same.
    let offline = FakeEngine::new();
    let options = options("/offline/images", false);
    let checked = check(&host, &catalog, &options, &reporter()).unwrap();
    assert!(checked.differing_builtins.is_empty());
    let loaded = run(load(Session::quiet(&offline, &host), &checked, &options)).unwrap();
    assert!(loaded.written.is_empty());
    assert!(offline.tags().contains(&"team/tool:1".to_string()));
    assert!(!offline.tags().contains(&"team/tool:latest".to_string()));
}

#[test]
fn nothing_is_written_when_a_target_is_missing_or_the_output_is_wrong() {
    let (engine, host, catalog) = project();
    // Never built: refused with the build hint.
    let error = save_to(
        Session::quiet(&engine, &host),
        &[lab_target(&catalog)],
        OUTPUT,
    )
    .unwrap_err();
    let input = error.downcast_ref::<crate::input::InputError>().unwrap();
    assert_eq!(
        input.message,
        "`lab` has no image for its current build key"
    );
    assert!(
        input.hint.contains("tfimg build /project/lab.yaml"),
        "{}",
        input.hint
    );
    let image = [SaveTarget::Image("team/none:1".to_string())];
    let error = save_to(Session::quiet(&engine, &host), &image, OUTPUT).unwrap_err();
    assert_eq!(error.to_string(), "no spec or image named `team/none:1`");
    let built = builtin_target(&catalog, "cpu-headless");
    build(Session::quiet(&engine, &host), &built);
    let error = save_to(
        Session::quiet(&engine, &host),
        std::slice::from_ref(&built),
        "/nowhere/x.tar",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`-o /nowhere/x.tar`: the folder `/nowhere` does not exist"
    );
    let error = save_to(Session::quiet(&engine, &host), &[built], "/out").unwrap_err();
    assert_eq!(error.to_string(), "`-o /out` is a folder");
    assert!(written(&host).is_empty(), "{:?}", written(&host));
    assert!(engine.calls_to("export").is_empty());
}

#[test]
fn an_export_that_fails_half_way_leaves_no_partial_bundle() {
    let (engine, host, catalog) = project();
    let target = builtin_target(&catalog, "cpu-headless");
    build(Session::quiet(&engine, &host), &target);
    engine.state.borrow_mut().export_failure = Some("connection reset".to_string());
    let error = save_to(Session::quiet(&engine, &host), &[target], OUTPUT).unwrap_err();
    assert!(error.to_string().contains("connection reset"), "{error}");
    assert!(written(&host).is_empty(), "{:?}", written(&host));
}

#[test]
fn an_altered_bundle_is_refused_before_the_engine_is_asked_anything() {
    let (engine, host, catalog) = project();
    let target = lab_target(&catalog);
    build(Session::quiet(&engine, &host), &target);
    save_to(Session::quiet(&engine, &host), &[target], OUTPUT).unwrap();
    let bundle = host.files.borrow()[Path::new(OUTPUT)].clone();
    let options = options("/offline/images", false);
    let position = bundle.len() - 4096;
    host.files.borrow_mut().get_mut(Path::new(OUTPUT)).unwrap()[position] ^= 1;
    let error = check(&host, &catalog, &options, &reporter()).unwrap_err();
    assert_eq!(
        error.to_string().split(" (expected").next().unwrap(),
        "`/out/lab.tar` is refused, nothing was loaded: part `images.tar` does not match its sha256 in the manifest"
    );
    host.files
        .borrow_mut()
        .insert(OUTPUT.into(), bundle[..bundle.len() / 2].to_vec());
    let error = check(&host, &catalog, &options, &reporter()).unwrap_err();
    assert!(
        error.to_string().starts_with("`/out/lab.tar` is refused, nothing was loaded: it is truncated: it ends inside part `images.tar`"),
        "{error}"
    );
}

#[test]
fn a_bundle_that_changes_after_its_check_is_cut_off_before_the_daemon_has_it_whole() {
    let (engine, host, catalog) = project();
    let target = lab_target(&catalog);
    build(Session::quiet(&engine, &host), &target);
    save_to(Session::quiet(&engine, &host), &[target], OUTPUT).unwrap();
    let options = options("/offline/images", false);
    let checked = check(&host, &catalog, &options, &reporter()).unwrap();
    let position = host.files.borrow()[Path::new(OUTPUT)].len() - 4096;
    host.files.borrow_mut().get_mut(Path::new(OUTPUT)).unwrap()[position] ^= 1;
    let offline = FakeEngine::new();
    let error = run(load(Session::quiet(&offline, &host), &checked, &options)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`/out/lab.tar` changed while it was loaded: part `images.tar` no longer matches its sha256"
    );
    assert!(offline.tags().is_empty());
    assert!(!written(&host)
        .iter()
        .any(|path| path.starts_with("/offline")));
}

#[test]
fn spec_files_already_there_are_kept_when_equal_and_refused_when_different() {
    let (engine, host, catalog) = project();
    let target = lab_target(&catalog);
    build(Session::quiet(&engine, &host), &target);
    save_to(Session::quiet(&engine, &host), &[target], OUTPUT).unwrap();
    host.files
        .borrow_mut()
        .insert("/offline/images/lab.yaml".into(), LAB.into());
    host.files.borrow_mut().insert(
        "/offline/images/lab.lock".into(),
        b"# another lock\n".to_vec(),
    );
    let offline = FakeEngine::new();
    let error = load_into(
        Session::quiet(&offline, &host),
        &catalog,
        "/offline/images",
        false,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`/offline/images/lab.lock` exists and differs from the bundle's `specs/lab.lock`"
    );
    assert!(
        offline.calls().is_empty(),
        "nothing was asked of the daemon"
    );
    let loaded = load_into(
        Session::quiet(&offline, &host),
        &catalog,
        "/offline/images",
        true,
    )
    .unwrap();
    assert_eq!(
        loaded.unchanged,
        [PathBuf::from("/offline/images/lab.yaml")]
    );
    assert!(loaded
        .written
        .contains(&PathBuf::from("/offline/images/lab.lock")));
    assert_eq!(
        host.files.borrow()[Path::new("/offline/images/lab.lock")],
        LOCK.as_bytes()
    );
}

#[test]
fn a_daemon_that_fails_to_load_is_reported_and_no_spec_is_written() {
    let (engine, host, catalog) = project();
    let target = lab_target(&catalog);
    build(Session::quiet(&engine, &host), &target);
    save_to(Session::quiet(&engine, &host), &[target], OUTPUT).unwrap();
    let offline = FakeEngine::new();
    offline.state.borrow_mut().load_failure = Some("no space left on device".to_string());
    let error = load_into(
        Session::quiet(&offline, &host),
        &catalog,
        "/offline/images",
        false,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "load the images failed: no space left on device"
    );
    assert!(!written(&host)
        .iter()
        .any(|path| path.starts_with("/offline")));
}

#[test]
fn sizes_read_as_people_read_them() {
    assert_eq!(human_size(80), "80 B");
    assert_eq!(human_size(512_000), "512 kB");
    assert_eq!(human_size(80_700_000), "81 MB");
    assert_eq!(human_size(1_276_695_552), "1.3 GB");
}

/// Trust boundary bundle bytes → tfimg: a bundle whose spec (here the local parent a
/// project kept in `images/cpu-base.yaml`, a built-in's hidden parent name) would take a
/// built-in's place in `./images` is refused before anything is imported or written, so
/// every built-in built on `cpu-base` keeps meaning what it means.
#[test]
fn a_bundle_never_replaces_a_built_in_not_even_a_hidden_parent() {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let host = FakeHost::new();
    host.paths.borrow_mut().insert(PathBuf::from("/out"));
    let cpu_base = "name: cpu-base\nabstract: true\nextends: base\ngpu: false\nenv: {HTTPS_PROXY: \"http://evil.example:3128\"}\n";
    let lab = "name: lab\nextends: cpu-base\n";
    host.files
        .borrow_mut()
        .insert("/project/lab.yaml".into(), lab.into());
    host.files
        .borrow_mut()
        .insert("/project/images/cpu-base.yaml".into(), cpu_base.into());
    let mut made_with = Catalog::builtin(PathBuf::from("/project"));
    made_with.add_local(
        "/project/images/cpu-base.yaml".into(),
        "images/cpu-base.yaml",
        Ok(cpu_base.into()),
    );
    let leaf = file_document("/project/lab.yaml", Ok(lab.into())).unwrap();
    let resolved = crate::spec::resolve_document(&made_with, leaf.clone()).unwrap();
    let chain = made_with.chain(leaf).unwrap();
    let target = SaveTarget::Spec(Box::new(spec_target(resolved, &chain)));
    build(Session::quiet(&engine, &host), &target);
    save_to(Session::quiet(&engine, &host), &[target], OUTPUT).unwrap();

    let elsewhere = Catalog::builtin(PathBuf::from("/elsewhere"));
    let before = engine.calls().len();
    let error = load_into(
        Session::quiet(&engine, &host),
        &elsewhere,
        "/elsewhere/images",
        false,
    )
    .unwrap_err();
    let error = error.downcast::<crate::input::InputError>().unwrap();
    assert_eq!(
        error.message,
        "the bundle's spec `cpu-base` has the name of a built-in spec: written to `images/`, it would replace the built-in `cpu-base` for every spec built on it"
    );
    assert_eq!(engine.calls().len(), before, "nothing imported");
    assert!(!written(&host)
        .iter()
        .any(|path| path.starts_with("/elsewhere")));
}

#[test]
fn save_targets_are_specs_where_the_catalog_knows_them_and_images_otherwise() {
    let catalog = Catalog::builtin(std::path::PathBuf::from("/project"));
    let targets = ["cpu-jupyter".to_string(), "team/tool:1".to_string()];
    let found =
        save::save_targets(&crate::host::fake::FakeHost::new(), &catalog, &targets).unwrap();
    assert!(matches!(&found[0], SaveTarget::Spec(spec) if spec.resolved.name == "cpu-jupyter"));
    assert!(matches!(&found[1], SaveTarget::Image(image) if image == "team/tool:1"));
    // A `.yaml` target is a spec file, never an image: a missing one is bad input.
    assert!(save::save_targets(
        &crate::host::fake::FakeHost::new(),
        &catalog,
        &["missing.yaml".to_string()]
    )
    .is_err());
}
