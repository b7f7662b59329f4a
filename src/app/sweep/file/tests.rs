//! `tfimg sweep FILE`'s story on the fake engine and host: `-d` refused while the sweep's
//! lock is held, the detached child given the command line without `-d` and the engine's
//! endpoint, a run here ended with its folder's results, a CPU pool's dry run without a
//! daemon.

use std::path::Path;

use super::*;
use crate::app::build::Network;
use crate::app::sweep::tests::{engine, sweep_text};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::output::ui::Recorded;
use crate::sweep::journal::StopReason;

/// The sweep of `sweep_text(trials, "")` (a CPU pool), loaded, with its file on the host.
fn loaded(host: &FakeHost, trials: usize) -> Loaded {
    let text = sweep_text(trials, "");
    host.files
        .borrow_mut()
        .insert("/lab/sweep.yaml".into(), text.as_bytes().to_vec());
    let sweep = crate::sweep::parse(&text, "sweep.yaml", Path::new("/lab")).unwrap();
    Loaded { sweep, spec: None }
}

fn options(detach: bool, argv: &[&str]) -> StartOptions {
    StartOptions {
        file: "/lab/sweep.yaml".into(),
        detach,
        resume: false,
        progress: Progress::Plain,
        argv: argv.iter().map(|arg| arg.to_string()).collect(),
    }
}

fn start_on(
    connect: impl AsyncFnOnce() -> anyhow::Result<FakeEngine>,
    host: &FakeHost,
    options: &StartOptions,
    loaded: Loaded,
    ui: &Recorded,
) -> anyhow::Result<Started> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let network = Network::default();
    runtime.block_on(start(connect, host, options, loaded, &network, ui))
}

#[test]
fn detaching_is_refused_while_the_sweeps_lock_is_held() {
    let host = FakeHost::new();
    let loaded = loaded(&host, 2);
    host.busy_locks
        .borrow_mut()
        .insert(super::super::lock_name(&loaded.sweep.output));
    let ui = Recorded::default();
    let argv = ["tfimg", "sweep", "-d", "sweep.yaml"];

    let error = start_on(
        async || Ok(engine()),
        &host,
        &options(true, &argv),
        loaded,
        &ui,
    )
    .err()
    .expect("a second run is refused");

    assert_eq!(error.to_string(), "sweep `lab` is already running");
    let input = error.downcast_ref::<InputError>().unwrap();
    assert_eq!(
        input.hint,
        "follow it with `tfimg sweep status /lab/runs/lab`"
    );
    assert!(host.spawned.borrow().is_empty(), "nothing was started");
    assert!(ui.notes.borrow().is_empty());
}

#[test]
fn the_detached_child_gets_the_command_line_without_detach_and_the_engines_endpoint() {
    let host = FakeHost::new();
    let loaded = loaded(&host, 2);
    let engine = engine();
    let ui = Recorded::default();
    let argv = ["tfimg", "sweep", "-d", "sweep.yaml", "--detach", "--json"];

    let started = start_on(
        async || Ok(engine),
        &host,
        &options(true, &argv),
        loaded,
        &ui,
    )
    .unwrap();

    assert!(matches!(started, Started::Detached));
    let spawned = host.spawned.borrow();
    let [(args, log, endpoint)] = spawned.as_slice() else {
        panic!("one child: {spawned:?}");
    };
    assert_eq!(args, &["sweep", "sweep.yaml", "--json"]);
    assert_eq!(log, Path::new("/lab/runs/lab/sweep.log"));
    assert_eq!(endpoint, "fake://engine");
    assert_eq!(
        *ui.notes.borrow(),
        [
            "sweep `lab` runs in the background (pid 4242); its output goes to `/lab/runs/lab/sweep.log`",
            "follow it: `tfimg sweep status /lab/runs/lab`; stop it: `tfimg sweep stop /lab/runs/lab`",
        ]
    );
}

#[test]
fn a_run_here_ends_with_its_folders_results_and_keeps_the_files_copy() {
    let host = FakeHost::new();
    let loaded = loaded(&host, 3);
    let ui = Recorded::default();

    let started = start_on(
        async || Ok(engine()),
        &host,
        &options(false, &["tfimg"]),
        loaded,
        &ui,
    )
    .unwrap();

    let Started::Ended(ended) = started else {
        panic!("it ran here");
    };
    assert_eq!(ended.finished.reason, StopReason::Finished);
    assert_eq!(ended.finished.counts.done, 3);
    assert_eq!(ended.results.rows.len(), 3);
    assert!(host.spawned.borrow().is_empty());
    let copy = host.files.borrow()[Path::new("/lab/runs/lab/sweep.yaml")].clone();
    assert_eq!(copy, sweep_text(3, "").into_bytes());
}

#[test]
fn an_unreadable_sweep_file_is_said_before_the_engine_is_asked() {
    let host = FakeHost::new();
    let text = sweep_text(1, "");
    let sweep = crate::sweep::parse(&text, "sweep.yaml", Path::new("/lab")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let connect = async || -> anyhow::Result<FakeEngine> { panic!("no engine is asked") };
    let started = runtime.block_on(start(
        connect,
        &host,
        &options(false, &["tfimg"]),
        Loaded { sweep, spec: None },
        &Network::default(),
        &Recorded::default(),
    ));

    let error = started.err().expect("the file is missing");
    assert!(
        error
            .to_string()
            .starts_with("cannot read sweep file `/lab/sweep.yaml`"),
        "{error}"
    );
}

#[test]
fn a_cpu_pools_dry_run_asks_no_daemon() {
    let host = FakeHost::new();
    let loaded = loaded(&host, 4);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let connect = async || -> anyhow::Result<FakeEngine> { panic!("no engine is asked") };

    let sinks = crate::app::session::Sinks::silent();
    let planned = runtime
        .block_on(dry_run(connect, &host, loaded, sinks))
        .unwrap();

    assert_eq!(planned.sweep.trials().len(), 4);
    assert!(!planned.slots.is_empty());
    assert!(planned.nvidia.is_none());
}
