//! Unit tests of locks: the file's round trip and strict reading, the comparison with a
//! spec, the requirement files, the expected distributions, pip's hash failures.
use super::*;
use crate::spec::locked::{self, AptGroups, AptPackage, Base, PipGroups};
use crate::spec::{self, Catalog, ResolvedSpec};

const HASH: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// `body` as the spec `lab`, extending `builtin:cpu-headless`, resolved.
pub(crate) fn spec(body: &str) -> ResolvedSpec {
    let catalog = Catalog::builtin(std::path::PathBuf::from("/project"));
    let text = format!("name: lab\nextends: builtin:cpu-headless\n{body}").into_bytes();
    let document = spec::load::file_document("images/lab.yaml", Ok(text)).unwrap();
    spec::resolve_document(&catalog, document).unwrap()
}

fn distribution(name: &str, version: &str, hashed: bool) -> Distribution {
    Distribution {
        name: name.to_string(),
        version: version.to_string(),
        sha256: hashed.then(|| HASH.to_string()),
    }
}

/// A lock of `spec` as `tfimg lock` would make it (with made-up resolutions).
pub(crate) fn sample(spec: &ResolvedSpec) -> LockFile {
    LockFile {
        lock: locked::FORMAT,
        spec: spec.name.clone(),
        inputs: check::inputs_of(spec),
        base: Base {
            reference: spec.base.clone(),
            id: "sha256:b45fab1e9762".to_string(),
        },
        apt: AptGroups {
            system: vec![AptPackage {
                name: "python3".to_string(),
                version: "3.9.2-3".to_string(),
            }],
            variant: Vec::new(),
        },
        pip: PipGroups {
            venv: vec![
                distribution("pip", "20.3.4", false),
                distribution("setuptools", "44.1.1", false),
            ],
            pip: vec![distribution("pip", "24.0", true)],
            tensorflow: vec![
                distribution("setuptools", "75.3.0", true),
                distribution("tensorflow-cpu", "2.9.3", true),
            ],
            packages: vec![distribution("requests", "2.32.3", true)],
        },
    }
}

#[test]
fn a_lock_reads_back_as_written_with_its_header() {
    let spec = spec("packages: {pip: [requests]}\n");
    let lock = sample(&spec);
    let text = to_text(&lock);
    assert!(text.starts_with("# written by tfimg lock: do not edit\n"));
    assert!(text.contains("\nlock: 1\n"), "{text}");
    assert_eq!(
        read::parse(&text, "images/lab.lock", Some("lab")).unwrap(),
        lock
    );
    // The digest is of the bytes, so the image label changes with any edit.
    let loaded = load(text.clone().into_bytes(), "images/lab.lock", "lab").unwrap();
    assert_eq!(loaded.digest, hex_digest(text.as_bytes()));
    assert!(loaded.digest.starts_with("sha256:") && loaded.digest.len() == 71);
}

/// The error of `text` as a lock of `lab`, as a user reads it.
fn error(text: &str) -> String {
    let error = read::parse(text, "images/lab.lock", Some("lab")).unwrap_err();
    let at = error.location.map(|at| at.to_string()).unwrap_or_default();
    format!("{at}: {} | {}", error.message, error.hint)
}

#[test]
fn bad_locks_are_refused_with_their_place() {
    let good = to_text(&sample(&spec("packages: {pip: [requests]}\n")));
    let unknown = good.replace("spec: lab\n", "spec: lab\nextra: 1\n");
    let message = error(&unknown);
    assert!(
        message.starts_with("`images/lab.lock`:5:1: unknown field `extra`"),
        "{message}"
    );
    let version = good.replace("lock: 1\n", "lock: 2\n");
    let message = error(&version);
    assert!(
        message.starts_with("`images/lab.lock`:3:7: lock format 2 is not one this tfimg reads"),
        "{message}"
    );
    let other = good.replace("spec: lab\n", "spec: cpu-ssh\n");
    let message = error(&other);
    assert!(
        message.starts_with("`images/lab.lock`:4:7: the lock is for spec `cpu-ssh`, not `lab`"),
        "{message}"
    );
    let hash = good.replacen(HASH, "0123", 1);
    let message = error(&hash);
    assert!(
        message.contains("the sha256 of `pip` is not 64 lowercase hexadecimal digits"),
        "{message}"
    );
    let injected = good.replace("name: python3\n", "name: python3 && curl x\n");
    let message = error(&injected);
    assert!(
        message.contains("is not a Debian package name"),
        "{message}"
    );
    let message = error("lock: 1\nspec: [\n");
    assert!(message.starts_with("`images/lab.lock`:"), "{message}");
    assert!(error("").contains("the lock file is empty"));
    assert!(
        error("- a\n- b\n").contains("invalid type"),
        "{}",
        error("- a\n")
    );
}

#[test]
fn differences_name_what_the_spec_changed() {
    let locked = sample(&spec("packages: {pip: [requests]}\n"));
    assert!(differences(&spec("packages: {pip: [requests]}\n"), &locked).is_empty());
    let now = spec("packages: {pip: [requests, rich], apt: [git]}\n");
    assert_eq!(
        differences(&now, &locked),
        vec![
            "the spec adds pip package `rich`; the lock was made without it".to_string(),
            "the spec adds apt package `git`; the lock was made without it".to_string(),
        ]
    );
    let now = spec("tensorflow: \"2.8.4\"\n");
    let found = differences(&now, &locked);
    assert!(
        found.contains(
            &"the spec's TensorFlow is `2.8.4`; the lock was made for `2.9.3`".to_string()
        ),
        "{found:?}"
    );
    assert!(
        found.contains(
            &"the spec no longer has pip package `requests`; the lock was made with it".to_string()
        ),
        "{found:?}"
    );
}

#[test]
fn requirement_files_pin_each_file_by_hash() {
    let lock = sample(&spec("packages: {pip: [requests]}\n"));
    assert_eq!(
        requirements(&lock.pip.tensorflow),
        format!(
            "setuptools==75.3.0 --hash=sha256:{HASH}\ntensorflow-cpu==2.9.3 --hash=sha256:{HASH}\n"
        )
    );
}

#[test]
fn later_groups_replace_earlier_ones_in_what_the_image_holds() {
    let lock = sample(&spec("packages: {pip: [requests]}\n"));
    let expected = expected(&lock);
    assert_eq!(expected["pip"], "24.0");
    assert_eq!(expected["setuptools"], "75.3.0");
    assert_eq!(expected.len(), 4);
    assert_eq!(locked::normalize("Pkg_Resources"), "pkg-resources");
    assert_eq!(locked::normalize("zope.interface"), "zope-interface");
}

#[test]
fn pips_hash_failures_name_the_package() {
    let output: Vec<String> = [
        "Collecting idna==3.10",
        "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have tampered with them.",
        "    idna==3.10 from https://files.pythonhosted.org/packages/idna-3.10-py3-none-any.whl#sha256=946d:",
        "        Expected sha256 0000",
        "             Got        946d",
        "",
    ]
    .iter()
    .map(|line| line.to_string())
    .collect();
    assert_eq!(hash_mismatches(&output), vec!["idna==3.10".to_string()]);
    assert!(hash_mismatches(&output[..1]).is_empty());
}

#[test]
fn the_resolutions_result_reads_back_into_a_lock() {
    // The script that prints it: `render::lock_script`'s tests.
    let spec = spec("packages: {pip: [requests], apt: [git]}\n");
    let output = format!(
        "Reading package lists...\n{} {{\"apt_system\": [[\"python3\", \"3.9.2-3\"]], \"apt_variant\": [], \"venv\": [[\"pip\", \"20.3.4\"]], \"pip\": [{{\"name\": \"pip\", \"version\": \"24.0\", \"sha256\": \"{HASH}\"}}], \"tensorflow\": [], \"packages\": []}}\n",
        resolve::MARKER
    );
    let base = Base {
        reference: spec.base.clone(),
        id: "sha256:1".to_string(),
    };
    let lock = resolve::lock_from_output(&spec, base.clone(), &output, None).unwrap();
    assert_eq!(lock.apt.system[0].version, "3.9.2-3");
    assert_eq!(lock.pip.venv[0].sha256, None);
    assert_eq!(lock.inputs, check::inputs_of(&spec));
    let missing = resolve::lock_from_output(&spec, base, "E: Unable to locate package x\n", None);
    assert_eq!(missing.unwrap_err(), "the resolution printed no result");
}

#[test]
fn a_lock_of_the_same_tensorflow_lends_its_shared_layers() {
    let headless = sample(&spec(""));
    let jupyter = spec("packages: {pip: [rich], apt: [git]}\n");
    assert!(check::shares_layers(
        &check::inputs_of(&jupyter),
        &headless.inputs
    ));
    let other = spec("tensorflow: \"2.8.4\"\n");
    assert!(!check::shares_layers(
        &check::inputs_of(&other),
        &headless.inputs
    ));
    // The shared groups are installed from the lock, not resolved again (the script:
    // `render::lock_script`'s tests), and the new lock carries them as they were.
    let output = format!(
        "{} {{\"apt_system\": [], \"apt_variant\": [[\"git\", \"1:2.30.2-1\"]], \"venv\": [], \"pip\": [], \"tensorflow\": [], \"packages\": [{{\"name\": \"rich\", \"version\": \"15.0.0\", \"sha256\": \"{HASH}\"}}]}}\n",
        resolve::MARKER
    );
    let lock = resolve::lock_from_output(&jupyter, headless.base.clone(), &output, Some(&headless))
        .unwrap();
    assert_eq!(lock.pip.tensorflow, headless.pip.tensorflow);
    assert_eq!(lock.apt.system, headless.apt.system);
    assert_eq!(lock.pip.venv, headless.pip.venv);
    assert_eq!(lock.apt.variant[0].name, "git");
    assert_eq!(lock.pip.packages[0].name, "rich");
}

#[test]
fn a_spec_without_a_lock_inherits_the_layers_whose_inputs_match() {
    let headless = spec("");
    let loaded = |lock: &LockFile| load_any(to_text(lock).into_bytes(), "h.lock", None).unwrap();
    let lock = loaded(&sample(&headless));

    // Only a variable more: every layer is the lock's, the image is pinned whole.
    let same = check::inherit(&check::inputs_of(&spec("env: {A: \"1\"}\n")), lock.clone()).unwrap();
    assert!(same.variant && same.packages);
    // Its own pip package: the layers up to its packages are the lock's.
    let more_pip = spec("packages: {pip: [rich]}\n");
    let inherited = check::inherit(&check::inputs_of(&more_pip), lock.clone()).unwrap();
    assert!(inherited.variant && !inherited.packages);
    // Its own apt package: up to TensorFlow only (its pip packages follow its apt ones).
    let more_apt = spec("packages: {apt: [git]}\n");
    let inherited = check::inherit(&check::inputs_of(&more_apt), lock.clone()).unwrap();
    assert!(!inherited.variant && !inherited.packages);
    // Another TensorFlow or base shares nothing.
    for other in [
        "tensorflow: \"2.8.4\"\n",
        "base: example.org/debian:bullseye-slim\n",
    ] {
        assert_eq!(
            check::inherit(&check::inputs_of(&spec(other)), lock.clone()),
            None,
            "{other}"
        );
    }

    // What a build of it pins, and what it checks: the inherited groups, not the lock's own
    // pip packages.
    let mut resolved = more_pip;
    resolved.inherited = check::inherit(&check::inputs_of(&resolved), lock.clone());
    let inherited = pins(&resolved).unwrap();
    assert!(!inherited.own && !inherited.whole());
    let below = expected_below_packages(&lock.file);
    assert_eq!(
        below.get("tensorflow-cpu").map(String::as_str),
        Some("2.9.3")
    );
    assert_eq!(below.get("setuptools").map(String::as_str), Some("75.3.0"));
    assert!(!below.contains_key("requests"));
    assert!(expected(&lock.file).contains_key("requests"));
    // Its own lock wins over an inherited one.
    resolved.lock = Some(lock);
    let own = pins(&resolved).unwrap();
    assert!(own.own && own.whole());
}
