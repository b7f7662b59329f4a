//! Unit tests of `lock` on the fakes: the resolution's container, the lock written and
//! found again, and a build refusing a lock that no longer fits its spec.
use super::*;
use crate::app::build::{build_spec, BuildOptions};
use crate::app::session::Session;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::engine::{BuildFailure, Finished};
use crate::host::fake::FakeHost;
use crate::spec::{self, Catalog};

const HASH: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn spec(body: &str) -> ResolvedSpec {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let text = format!("name: lab\nextends: builtin:cpu-headless\n{body}").into_bytes();
    let document = spec::load::file_document("images/lab.yaml", Ok(text)).unwrap();
    spec::resolve_document(&catalog, document).unwrap()
}

fn resolution_output() -> String {
    format!(
        "Get:1 http://deb.debian.org/debian bullseye InRelease\n{} {{\"apt_system\": [[\"python3\", \"3.9.2-3\"]], \"apt_variant\": [], \"venv\": [[\"pip\", \"20.3.4\"]], \"pip\": [{{\"name\": \"pip\", \"version\": \"24.0\", \"sha256\": \"{HASH}\"}}], \"tensorflow\": [{{\"name\": \"tensorflow-cpu\", \"version\": \"2.9.3\", \"sha256\": \"{HASH}\"}}], \"packages\": [{{\"name\": \"idna\", \"version\": \"3.10\", \"sha256\": \"{HASH}\"}}]}}\n",
        crate::lock::resolve::MARKER
    )
}

#[test]
fn a_spec_is_resolved_on_its_base_written_and_found_again() {
    let engine = FakeEngine::new();
    let base_id = engine.add_image(&["debian:bullseye-slim"], &[]);
    engine.state.borrow_mut().run_once = Some(Finished {
        exit_code: Some(0),
        output: resolution_output(),
        ..Finished::default()
    });
    let host = FakeHost::new();
    let resolved = spec("packages: {pip: [requests]}\n");
    let network = Network {
        render: crate::render::NetworkOptions {
            ca_certificates: Some(b"-----BEGIN CERTIFICATE-----\nx\n".to_vec()),
            ..Default::default()
        },
        ..Network::default()
    };
    let made = block_on(resolve(
        Session::quiet(&engine, &host),
        &resolved,
        &network,
        None,
    ))
    .unwrap();
    assert_eq!(engine.calls_to("run-once"), [format!("run-once {base_id}")]);
    assert_eq!(made.base.id, base_id);
    assert_eq!(made.pip.packages[0].name, "idna");

    let path = lock_path(&resolved).unwrap();
    assert_eq!(path, PathBuf::from("images/lab.lock"));
    let text = write(&host, &path, &made).unwrap();
    assert_eq!(host.files.borrow()[&path], text.as_bytes());
    let found = find(&host, &resolved).unwrap().unwrap();
    assert_eq!(found.file, made);
    assert_eq!(found.digest, crate::lock::hex_digest(text.as_bytes()));
    assert!(disagreement(&resolved, &found).is_none());

    // The spec gains a package: the lock no longer fits, and build refuses before it builds.
    let mut grown = spec("packages: {pip: [requests, rich]}\n");
    let error = disagreement(&grown, &found).unwrap();
    assert_eq!(
        error.message,
        "`images/lab.lock` does not fit spec `lab` any more:\n  - the spec adds pip package `rich`; the lock was made without it"
    );
    assert_eq!(error.hint, "make the lock again with `tfimg lock lab`");
    grown.lock = Some(found.clone());
    let built = block_on(build_spec(
        Session::quiet(&engine, &host),
        &grown,
        &Network::default(),
        &BuildOptions::default(),
    ));
    assert!(built
        .unwrap_err()
        .to_string()
        .contains("does not fit spec `lab`"));
    assert!(engine.calls_to("build").is_empty());
}

#[test]
fn a_failed_resolution_writes_nothing_and_shows_its_output() {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    engine.state.borrow_mut().run_once = Some(Finished {
        exit_code: Some(1),
        output: "ERROR: No matching distribution found for nope\n".to_string(),
        ..Finished::default()
    });
    let host = FakeHost::new();
    let resolved = spec("packages: {pip: [nope]}\n");
    let error = block_on(resolve(
        Session::quiet(&engine, &host),
        &resolved,
        &Network::default(),
        None,
    ))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot lock `lab`: the resolution exited with 1:\n  | ERROR: No matching distribution found for nope"
    );
    assert!(host.files.borrow().is_empty());
}

#[test]
fn a_locked_build_that_pip_refuses_names_the_package() {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let host = FakeHost::new();
    let mut resolved = spec("packages: {pip: [requests]}\n");
    let made = crate::lock::resolve::lock_from_output(
        &resolved,
        crate::spec::locked::Base {
            reference: "debian:bullseye-slim".to_string(),
            id: "sha256:elsewhere".to_string(),
        },
        &resolution_output(),
        None,
    )
    .unwrap();
    let text = crate::lock::to_text(&made);
    resolved.lock = Some(crate::lock::load(text.into_bytes(), "images/lab.lock", "lab").unwrap());
    engine.state.borrow_mut().build_failure = Some(BuildFailure {
        step: Some((9, 20, "RUN pip install --require-hashes".into())),
        message: "The command returned a non-zero code: 1".into(),
        output: vec![
            "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.".into(),
            "    idna==3.10 from https://files.pythonhosted.org/idna-3.10-py3-none-any.whl:".into(),
            "        Expected sha256 0000".into(),
        ],
    });
    let error = block_on(build_spec(
        Session::quiet(&engine, &host),
        &resolved,
        &Network::default(),
        &BuildOptions::default(),
    ))
    .unwrap_err();
    let input = error.downcast_ref::<InputError>().expect("bad input");
    assert_eq!(
        input.message,
        "pip refused `idna==3.10`: its sha256 is not the lock's (`images/lab.lock`)"
    );
    assert!(
        input.hint.contains("only if you trust the change"),
        "{}",
        input.hint
    );
    assert!(engine.calls_to("tag").is_empty());
}

#[test]
fn a_built_in_has_no_lock_file_but_may_have_an_embedded_lock() {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = spec::resolve(&catalog, "cpu-headless").unwrap();
    assert_eq!(lock_path(&resolved), None);
    let ca = ca_parts(&"x".repeat(150_000).replace("xxxxxxxxxx", "xxxxxxxxx\n"));
    assert_eq!(ca.len(), 2);
    assert!(ca[0].starts_with("TFIMG_CA_PEM_0=") && ca[1].starts_with("TFIMG_CA_PEM_1="));
    assert!(ca.iter().all(|part| part.len() < 128 * 1024));
}

#[test]
fn every_embedded_lock_reads_fits_its_built_in_and_shares_its_family_s_tensorflow_group() {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let mut groups: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for name in crate::spec::load::builtin_lock_names() {
        let locked = builtin(name).unwrap().unwrap();
        let resolved = spec::resolve(&catalog, name).unwrap();
        assert!(disagreement(&resolved, &locked).is_none(), "{name}");
        // `cpu-ssh` is of family `cpu`, `tf218-gpu-ssh` of `tf218-gpu`.
        let family = name.rsplit_once('-').unwrap().0.to_string();
        let shared = format!(
            "{:?} {:?} {:?}",
            locked.file.apt.system, locked.file.pip.pip, locked.file.pip.tensorflow
        );
        groups.entry(family).or_default().push(shared);
    }
    assert!(groups.len() >= 4, "{groups:?}");
    for (family, shared) in groups {
        assert!(shared.windows(2).all(|pair| pair[0] == pair[1]), "{family}");
    }
}

#[test]
fn a_spec_without_a_lock_inherits_from_its_nearest_locked_ancestor_first() {
    let mut catalog = Catalog::builtin(PathBuf::from("/project"));
    let parent = b"name: parent\nextends: builtin:cpu-jupyter\n".to_vec();
    catalog.add_local(
        PathBuf::from("/project/images/parent.yaml"),
        "images/parent.yaml",
        Ok(parent),
    );
    let text = b"name: lab\nextends: parent\npackages: {pip: [rich]}\n".to_vec();
    let document = spec::load::file_document("images/lab.yaml", Ok(text)).unwrap();
    let lab = spec::resolve_document(&catalog, document).unwrap();
    let host = FakeHost::new();

    // No lock beside it: the nearest built-in ancestor's, whose variant (git) it shares.
    let inherited = inherited(&host, &lab).unwrap();
    assert_eq!(inherited.locked.display, "builtin:cpu-jupyter.lock");
    assert!(inherited.variant && !inherited.packages);

    // Ancestors first, nearest first: the parent's lock beside it, then the built-in's,
    // before a sibling's sorted earlier.
    let parent_lock = builtin("cpu-jupyter").unwrap().unwrap().file;
    let mut renamed = parent_lock.clone();
    renamed.spec = "parent".to_string();
    let mut sibling = parent_lock.clone();
    sibling.spec = "aaa".to_string();
    write(&host, Path::new("images/parent.lock"), &renamed).unwrap();
    write(&host, Path::new("images/aaa.lock"), &sibling).unwrap();
    assert_eq!(
        inherited_display(&host, &lab),
        Some("images/parent.lock".to_string())
    );
    host.files
        .borrow_mut()
        .remove(Path::new("images/parent.lock"));
    assert_eq!(
        inherited_display(&host, &lab),
        Some("builtin:cpu-jupyter.lock".to_string())
    );

    // A parent's lock of another TensorFlow is passed over.
    let mut other = parent_lock;
    other.inputs.tensorflow = "2.8.4".to_string();
    write(&host, Path::new("images/parent.lock"), &other).unwrap();
    assert_eq!(
        inherited_display(&host, &lab),
        Some("builtin:cpu-jupyter.lock".to_string())
    );
}

fn inherited_display(host: &FakeHost, resolved: &ResolvedSpec) -> Option<String> {
    inherited(host, resolved).map(|inherited| inherited.locked.display)
}

#[test]
fn a_built_in_without_o_has_no_destination_and_a_spec_file_locks_beside_itself() {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let builtin = spec::resolve(&catalog, "cpu-headless").unwrap();
    let error = destination(&builtin, None).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`cpu-headless` is a built-in spec: it has no file to put a lock beside"
    );
    let given = destination(&builtin, Some(Path::new("my.lock"))).unwrap();
    assert_eq!(given, PathBuf::from("my.lock"));
    let own = destination(&spec(""), None).unwrap();
    assert_eq!(own, PathBuf::from("images/lab.lock"));
}

#[test]
fn check_names_the_missing_lock_file_and_passes_a_fitting_one() {
    let host = FakeHost::new();
    let resolved = spec("");
    let error = check(&host, &resolved, None).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`lab` has no lock: `images/lab.lock` does not exist"
    );
    let hint = |resolved: &ResolvedSpec| {
        check(&host, resolved, None)
            .unwrap_err()
            .downcast::<InputError>()
            .unwrap()
            .hint
    };
    assert_eq!(hint(&resolved), "make it with `tfimg lock lab`");
    // A spec file outside ./images is named by its path: `tfimg lock lab` would not find it.
    let mut elsewhere = spec("");
    elsewhere.source = "work/lab.yaml".to_string();
    assert_eq!(hint(&elsewhere), "make it with `tfimg lock work/lab.yaml`");
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let builtin = spec::resolve(&catalog, "cpu-headless").unwrap();
    let locked = check(&host, &builtin, None).unwrap();
    assert!(
        locked.display.contains("cpu-headless"),
        "{}",
        locked.display
    );
}
