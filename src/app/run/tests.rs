//! Unit tests of `run`'s story on the fakes: what is left of a container once tfimg
//! stops following it (kept, removed, its tunnel closed, its files copied back), and the
//! refusals that come before anything is built.
use crate::app::session::Session;
use crate::host::prelude::*;
use std::path::PathBuf;

use super::*;
use crate::app::launch::TunnelMode;
use crate::app::testing::{block_on, prepare_and_start};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::output::ui::Recorded;
use crate::plan::sync::SyncRequest;

/// `tfimg run TARGET` with no flag.
fn options(target: &str) -> RunOptions {
    RunOptions {
        target: target.to_string(),
        launch: LaunchRequest::unaimed(Some((4321, 4322))),
        detach: false,
        no_wait: false,
        no_start: false,
        no_build: false,
        keep: false,
        sync_back: false,
    }
}

fn launched(
    session: Session<'_, FakeEngine, FakeHost>,
    spec: &str,
    tunnel: TunnelMode,
) -> Launched {
    let request = LaunchRequest {
        tunnel,
        ..crate::app::testing::request(spec)
    };
    prepare_and_start(session, request).unwrap()
}

fn exists(engine: &FakeEngine, name: &str) -> bool {
    engine
        .state
        .borrow()
        .containers
        .values()
        .any(|container| container.name == name)
}

#[test]
fn the_clean_up_keeps_a_detached_container_and_removes_the_others_unless_kept() {
    let cases = [
        // (outcome, keep, sync_back, tunneled) → (close tunnel, sync back, remove)
        (
            Some(RunEnd::Detached),
            false,
            false,
            true,
            (false, false, false),
        ),
        (
            Some(RunEnd::Exited(0)),
            false,
            false,
            true,
            (true, false, true),
        ),
        (
            Some(RunEnd::Exited(3)),
            true,
            true,
            false,
            (false, true, false),
        ),
        (
            Some(RunEnd::Interrupted),
            false,
            true,
            true,
            (true, true, true),
        ),
        (
            Some(RunEnd::Interrupted),
            true,
            false,
            false,
            (false, false, false),
        ),
        // Failed after the start (its service never answered): nothing is left, and
        // nothing ran to copy back, `--keep` or not.
        (None, true, true, true, (true, false, true)),
    ];
    for (outcome, keep, sync_back, tunneled, (close_tunnel, copy, remove)) in cases {
        assert_eq!(
            clean_up(outcome, keep, sync_back, tunneled),
            CleanUp {
                close_tunnel,
                sync_back: copy,
                remove
            },
            "{outcome:?} keep={keep} sync_back={sync_back} tunneled={tunneled}"
        );
    }
}

#[test]
fn a_detached_notebook_is_left_running_and_its_address_is_the_result() {
    let (engine, host, ui) = (FakeEngine::new(), FakeHost::new(), Recorded::default());
    let launched = launched(
        Session::quiet(&engine, &host),
        "cpu-jupyter",
        TunnelMode::Detached,
    );
    let options = RunOptions {
        detach: true,
        ..options("cpu-jupyter")
    };
    let after = block_on(follow(
        Session::new(&engine, &host, crate::app::session::Sinks::new(&ui, &ui)),
        &options,
        &launched,
    ))
    .unwrap();
    assert_eq!(after, RunEnd::Detached);
    assert_eq!(after.exit_code(), 0);
    assert!(exists(&engine, "lab"));
    let data = ui.data.borrow();
    assert_eq!(data[0], "container   lab");
    assert!(
        data[1].starts_with("jupyter     http://127.0.0.1:8888/lab?token="),
        "{data:?}"
    );
}

#[test]
fn a_foreground_container_passes_its_exit_code_on_and_is_removed_unless_kept() {
    for keep in [false, true] {
        let (engine, host, ui) = (FakeEngine::new(), FakeHost::new(), Recorded::default());
        let launched = launched(
            Session::quiet(&engine, &host),
            "cpu-headless",
            TunnelMode::Session,
        );
        engine
            .state
            .borrow_mut()
            .exits
            .insert("lab".to_string(), [3].into());
        let options = RunOptions {
            keep,
            ..options("cpu-headless")
        };
        let after = block_on(follow(
            Session::new(&engine, &host, crate::app::session::Sinks::new(&ui, &ui)),
            &options,
            &launched,
        ))
        .unwrap();
        assert_eq!((after, after.exit_code()), (RunEnd::Exited(3), 3));
        assert_eq!(exists(&engine, "lab"), keep, "--keep {keep}");
    }
}

#[test]
fn ctrl_c_stops_the_container_removes_it_and_ends_with_130() {
    let (engine, host, ui) = (FakeEngine::new(), FakeHost::new(), Recorded::default());
    let launched = launched(
        Session::quiet(&engine, &host),
        "cpu-headless",
        TunnelMode::Session,
    );
    engine.state.borrow_mut().held.insert("lab".to_string());
    host.interrupt.set(true);
    let after = block_on(follow(
        Session::new(&engine, &host, crate::app::session::Sinks::new(&ui, &ui)),
        &options("cpu-headless"),
        &launched,
    ));
    assert_eq!(after.unwrap().exit_code(), 130);
    let id = &launched.id;
    let calls = engine.calls();
    assert_eq!(
        calls[calls.len() - 2..],
        [format!("stop {id}"), format!("remove-container {id}")]
    );
    assert_eq!(ui.notes.borrow().last().unwrap(), "tfimg: stopping `lab`");
}

#[test]
fn a_service_that_never_answers_is_removed_and_the_error_says_so() {
    let engine = FakeEngine::new();
    let mut host = FakeHost::new();
    host.http = None;
    let ui = Recorded::default();
    let launched = launched(
        Session::quiet(&engine, &host),
        "cpu-jupyter",
        TunnelMode::Session,
    );
    let error = block_on(follow(
        Session::new(&engine, &host, crate::app::session::Sinks::new(&ui, &ui)),
        &options("cpu-jupyter"),
        &launched,
    ))
    .unwrap_err();
    assert!(
        format!("{error:#}").contains("`lab` did not come up; its output:"),
        "{error:#}"
    );
    assert!(!exists(&engine, "lab"));
}

#[test]
fn sync_back_copies_the_files_back_then_removes_and_a_failed_copy_keeps_the_container() {
    let run_with_sync = |archive: Vec<u8>| {
        let (engine, host, ui) = (FakeEngine::new(), FakeHost::new(), Recorded::default());
        let source = PathBuf::from("/home/ana/code");
        host.files
            .borrow_mut()
            .insert(source.join("a.py"), b"1".to_vec());
        let sync = SyncRequest {
            text: "./code".to_string(),
            source,
            target: None,
            whole: false,
        };
        let request = LaunchRequest {
            syncs: vec![sync],
            ..crate::app::testing::request("cpu-headless")
        };
        let launched = prepare_and_start(Session::quiet(&engine, &host), request).unwrap();
        engine
            .state
            .borrow_mut()
            .archives
            .insert("/tf/code".to_string(), archive);
        let options = RunOptions {
            sync_back: true,
            ..options("cpu-headless")
        };
        let after = block_on(follow(
            Session::new(&engine, &host, crate::app::session::Sinks::new(&ui, &ui)),
            &options,
            &launched,
        ));
        (engine, host, ui, after)
    };

    let files = [("a.py".to_string(), b"2".to_vec())];
    let archive = crate::host::SyncArchive::from_files("code", &files, (4321, 4322))
        .to_bytes()
        .unwrap();
    let (engine, host, ui, after) = run_with_sync(archive);
    assert_eq!(after.unwrap(), RunEnd::Exited(0));
    assert_eq!(
        host.read_file(&PathBuf::from("/home/ana/code/a.py"))
            .unwrap(),
        b"2"
    );
    assert_eq!(
        ui.notes.borrow().last().unwrap(),
        "synced back `/tf/code` → `./code` (1 changed)"
    );
    assert!(!exists(&engine, "lab"));

    // What the daemon sent back is not a tar: the container keeps the run's files.
    let (engine, _host, ui, after) = run_with_sync(b"not a tar".to_vec());
    let error = after.unwrap_err();
    assert!(
        format!("{error:#}").starts_with("copying the synced folders back failed"),
        "{error:#}"
    );
    assert!(exists(&engine, "lab"));
    assert!(ui.notes.borrow()[0].starts_with("note: `lab` is kept so its files are not lost"));
}

#[test]
fn a_session_tunnel_is_closed_when_the_run_ends_and_a_detached_one_stays() {
    for detach in [false, true] {
        let engine = FakeEngine::new();
        engine.tunnels.borrow_mut().remote = true;
        let (host, ui) = (FakeHost::new(), Recorded::default());
        let mode = match detach {
            true => TunnelMode::Detached,
            false => TunnelMode::Session,
        };
        let launched = launched(Session::quiet(&engine, &host), "cpu-jupyter", mode);
        let options = RunOptions {
            detach,
            ..options("cpu-jupyter")
        };
        block_on(follow(
            Session::new(&engine, &host, crate::app::session::Sinks::new(&ui, &ui)),
            &options,
            &launched,
        ))
        .unwrap();
        let closed = engine.calls().contains(&"cancel jupyter 8888".to_string());
        assert_eq!(closed, !detach, "detach {detach}: {:?}", engine.calls());
    }
}

#[test]
fn mounts_on_a_remote_engine_are_refused_before_anything_is_built_or_created() {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    let (host, ui) = (FakeHost::new(), Recorded::default());
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = what_to_run(&FakeHost::new(), &catalog, "cpu-headless").unwrap();
    let mut options = options("cpu-headless");
    options.launch.mounts =
        vec![crate::plan::mounts::parse_request("./data", &PathBuf::from("/work")).unwrap()];
    let reporter = crate::output::ui::Recorded::default();
    let error = block_on(run(
        Session::new(
            &engine,
            &host,
            crate::app::session::Sinks::new(&ui, &reporter),
        ),
        &options,
        resolved.as_ref(),
        &Network::default(),
    ))
    .unwrap_err();
    assert!(format!("{error:#}").contains("./data"), "{error:#}");
    assert!(engine.calls().is_empty(), "{:?}", engine.calls());
}

#[test]
fn a_target_that_is_neither_a_spec_nor_an_image_is_bad_input() {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    assert!(what_to_run(&FakeHost::new(), &catalog, "cpu-jupyter")
        .unwrap()
        .is_some());
    assert!(
        what_to_run(&FakeHost::new(), &catalog, "tfimg/cpu-jupyter:2.9.3")
            .unwrap()
            .is_none()
    );
    let error = what_to_run(&FakeHost::new(), &catalog, "tfimg/Lab:1").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("is neither a spec nor an image reference"),
        "{error}"
    );
}
