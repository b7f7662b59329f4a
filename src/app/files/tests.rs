//! Unit tests of `files`, on the fakes: a run with a sync, copied in and back; pull-files'
//! default path and its bad inputs.
use crate::app::session::Session;
use crate::host::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;

use super::*;
use crate::app::launch::{self, LaunchRequest};
use crate::app::testing::{block_on as run, prepare_and_start};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::plan::sync::SyncRequest;
use crate::spec::Catalog;

fn request_with_sync() -> LaunchRequest {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, "cpu-headless").unwrap();
    let target = crate::app::run::target_of_spec(&resolved, "tfimg/cpu-headless:2.9.3".into());
    let sync = SyncRequest {
        text: "./code".to_string(),
        source: PathBuf::from("/home/ana/code"),
        target: None,
        whole: false,
    };
    LaunchRequest {
        syncs: vec![sync],
        target,
        name: Some("train".to_string()),
        command: vec!["python".to_string(), "code/train.py".to_string()],
        ..crate::app::testing::request("cpu-headless")
    }
}

/// The fakes, and a run syncing `/home/ana/code` (which holds `a.py`) into `target`.
fn sync_into(target: &str) -> (FakeEngine, FakeHost, LaunchRequest) {
    let host = FakeHost::new();
    host.files
        .borrow_mut()
        .insert(PathBuf::from("/home/ana/code/a.py"), b"1".to_vec());
    let mut request = request_with_sync();
    request.syncs[0].target = Some(target.to_string());
    (FakeEngine::new(), host, request)
}

/// A tar of `/tf/code` as the daemon would send it.
fn code_tar(files: &[(&str, &str)]) -> Vec<u8> {
    let files: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(path, text)| (path.to_string(), text.as_bytes().to_vec()))
        .collect();
    crate::host::SyncArchive::from_files("code", &files, (4321, 4322))
        .to_bytes()
        .unwrap()
}

#[test]
fn a_synced_run_copies_in_before_the_start_and_back_afterwards() {
    let engine = FakeEngine::new();
    let host = FakeHost::new();
    let source = PathBuf::from("/home/ana/code");
    for (path, text) in [("train.py", "print(1)"), ("data.txt", "1 2 3")] {
        host.files
            .borrow_mut()
            .insert(source.join(path), text.into());
    }
    let launched = run(async {
        let prepared = launch::Launcher::of(Session::quiet(&engine, &host))
            .prepare(request_with_sync(), None)
            .await?;
        assert_eq!(
            crate::output::shown(&prepared.notes),
            ["syncing `./code` → `/tf/code` (2 files, 13 B)"]
        );
        let reserved = RefCell::new(BTreeSet::new());
        launch::Launcher::of(Session::quiet(&engine, &host))
            .start(prepared, &reserved, false, |_| {})
            .await
    })
    .unwrap();
    let id = launched.id.clone();
    let calls = engine.calls();
    let created = calls
        .iter()
        .position(|call| call == "create train")
        .unwrap();
    assert_eq!(
        calls[created + 1..],
        [
            format!("upload {id} /tf (3 entries)"),
            format!("start {id}"),
        ]
    );
    assert_eq!(
        engine.state.borrow().uploads[0].2,
        [
            "code 4321:4322 755",
            "code/data.txt 4321:4322 644",
            "code/train.py 4321:4322 644"
        ]
    );
    assert_eq!(
        engine.plan_of("train").unwrap().labels["io.tfimg.sync"],
        "/tf/code"
    );

    engine.state.borrow_mut().archives.insert(
        "/tf/code".to_string(),
        code_tar(&[
            ("train.py", "print(1)"),
            ("data.txt", "changed"),
            ("out/result.txt", "0.93"),
        ]),
    );
    let lines = run(sync_back(Session::quiet(&engine, &host), &launched)).unwrap();
    assert_eq!(
        crate::output::shown(&lines),
        ["synced back `/tf/code` → `./code` (1 new, 1 changed)"]
    );
    assert_eq!(
        host.read_file(&source.join("out/result.txt")).unwrap(),
        b"0.93"
    );
    assert_eq!(
        engine.calls().last().unwrap(),
        &format!("download {id} /tf/code")
    );

    engine.state.borrow_mut().archives.clear();
    let lines = run(sync_back(Session::quiet(&engine, &host), &launched)).unwrap();
    assert_eq!(
        crate::output::shown(&lines),
        ["note: `/tf/code` is no longer in the container: nothing to copy back into `./code`"]
    );
}

#[test]
fn a_sync_into_a_folder_the_image_lacks_removes_the_container() {
    let (engine, host, request) = sync_into("/missing/code");
    let error = prepare_and_start(Session::quiet(&engine, &host), request).unwrap_err();
    let input = error.downcast_ref::<InputError>().unwrap();
    assert_eq!(
        input.message,
        "`--sync ./code`: the folder `/missing` does not exist in the image"
    );
    assert_eq!(engine.calls_to("start"), Vec::<String>::new());
    assert_eq!(engine.calls_to("remove-container").len(), 1);
    assert!(engine.container_names().is_empty());
}

#[test]
fn pull_files_copies_the_first_sync_else_the_workdir_and_names_bad_paths() {
    let engine = FakeEngine::new();
    let host = FakeHost::new();
    let image = engine.add_image(&["tfimg/cpu-headless:2.9.3"], &[]);
    engine
        .state
        .borrow_mut()
        .images
        .get_mut(&image)
        .unwrap()
        .working_dir = "/tf".to_string();
    let synced = engine.add_container(
        "trained",
        "exited",
        &[
            ("io.tfimg.spec", "cpu-headless".into()),
            ("io.tfimg.sync", "/tf/code,/data".into()),
        ],
    );
    let plain = engine.add_container(
        "plain",
        "running",
        &[("io.tfimg.spec", "cpu-headless".into())],
    );
    engine
        .state
        .borrow_mut()
        .containers
        .get_mut(&plain)
        .unwrap()
        .image = "tfimg/cpu-headless:2.9.3".to_string();
    engine
        .state
        .borrow_mut()
        .archives
        .insert("/tf/code".to_string(), code_tar(&[("out.txt", "1")]));
    let container = |id: &str| engine.state.borrow().containers[id].clone();
    let into = PathBuf::from("/home/ana/out");
    let lines = run(pull_files(
        Session::quiet(&engine, &host),
        &container(&synced),
        &into,
        None,
    ))
    .unwrap();
    assert_eq!(
        crate::output::shown(&lines),
        ["copied `/tf/code` from `trained` → `/home/ana/out` (1 new)"]
    );
    assert_eq!(host.read_file(&into.join("out.txt")).unwrap(), b"1");
    let again = run(pull_files(
        Session::quiet(&engine, &host),
        &container(&synced),
        &into,
        Some("/tf/code/"),
    ))
    .unwrap();
    assert_eq!(
        crate::output::shown(&again),
        ["copied `/tf/code` from `trained` → `/home/ana/out` (nothing new or changed)"]
    );

    let missing = run(pull_files(
        Session::quiet(&engine, &host),
        &container(&plain),
        &into,
        None,
    ))
    .unwrap_err();
    let missing = missing.downcast_ref::<InputError>().unwrap();
    assert_eq!(missing.message, "`/tf` does not exist in `plain`");
    assert_eq!(
        engine.calls().last().unwrap(),
        &format!("download {plain} /tf")
    );
    let relative = run(pull_files(
        Session::quiet(&engine, &host),
        &container(&plain),
        &into,
        Some("out"),
    ))
    .unwrap_err();
    assert_eq!(
        relative.downcast_ref::<InputError>().unwrap().message,
        "`--from out`: give an absolute path in the container"
    );
}

#[test]
fn a_sync_that_may_make_its_folders_makes_only_the_missing_ones_as_roots() {
    let (engine, host, mut request) = sync_into("/missing/deeper/code");
    request.make_sync_parents = true;
    prepare_and_start(Session::quiet(&engine, &host), request).unwrap();
    let uploads: Vec<(String, Vec<String>)> = engine
        .state
        .borrow()
        .uploads
        .iter()
        .map(|(_, folder, entries)| (folder.clone(), entries.clone()))
        .collect();
    let strings = |items: &[&str]| items.iter().map(|item| item.to_string()).collect();
    assert_eq!(
        uploads,
        [
            // Empty uploads asked: neither `/missing/deeper` nor `/missing` exists; the
            // missing folders are made as root's.
            (
                "/".to_string(),
                strings(&["missing 0:0 755", "missing/deeper 0:0 755"])
            ),
            (
                "/missing/deeper".to_string(),
                strings(&["code 4321:4322 755", "code/a.py 4321:4322 644"])
            ),
        ]
    );
    assert_eq!(engine.calls_to("start").len(), 1);
}
