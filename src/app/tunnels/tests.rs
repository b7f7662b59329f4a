//! Unit tests of tunnels: the launcher on a remote fake engine, the records, `forward`.
use std::path::PathBuf;

use super::*;
use crate::app::launch::{LaunchRequest, TunnelMode};
use crate::app::session::Session;
use crate::app::testing::{block_on as run, prepare_and_start};
use crate::engine::fake::FakeEngine;
use crate::engine::EngineError;
use crate::host::fake::FakeHost;

fn request(spec: &str, tunnel: TunnelMode) -> LaunchRequest {
    LaunchRequest {
        tunnel,
        ..crate::app::testing::request(spec)
    }
}

fn remote_engine() -> FakeEngine {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    engine
}

fn record_path(id: &str) -> PathBuf {
    PathBuf::from(format!("/fake/data/tfimg/tunnels/{id}.json"))
}

#[test]
fn a_detached_notebook_on_a_remote_engine_is_tunneled_after_its_start_and_recorded() {
    let (engine, host) = (remote_engine(), FakeHost::new());
    let launched = prepare_and_start(
        Session::quiet(&engine, &host),
        request("cpu-jupyter", TunnelMode::Detached),
    )
    .unwrap();
    let id = launched.id.clone();
    assert_eq!(
        engine.calls(),
        [
            "create lab".to_string(),
            format!("start {id}"),
            format!("open-tunnel {id}"),
            "forward jupyter 8888->49152".to_string(),
            "forward tensorboard 6006->49153".to_string(),
        ]
    );
    // The remote daemon chose the remote port; the local one is the plan's.
    let plan = engine.plan_of("lab").unwrap();
    assert!(plan.ports.iter().all(|port| port.tunneled));
    assert!(launched.plan.endpoints[0]
        .1
        .starts_with("http://127.0.0.1:8888/lab?token="));
    let record = launched.tunnel.clone().unwrap();
    assert!(record.tunnel.detached);
    assert_eq!(record.endpoint, "fake://engine");
    let saved: TunnelRecord =
        serde_json::from_slice(&host.files.borrow()[&record_path(&id)]).unwrap();
    assert_eq!(saved, record);

    // `rm` closes it and drops the record.
    assert!(run(
        TunnelStore::of(Session::quiet(&engine, &host)).close(&id)
    ));
    assert_eq!(
        engine.calls().last().unwrap(),
        &format!("close-tunnel {}", record.tunnel.control.display())
    );
    assert!(!host.files.borrow().contains_key(&record_path(&id)));
    assert!(
        !run(TunnelStore::of(Session::quiet(&engine, &host)).close(&id)),
        "nothing left to close"
    );
}

#[test]
fn a_session_uses_the_engine_connection_and_a_taken_local_port_moves_every_address() {
    let (engine, host) = (remote_engine(), FakeHost::new());
    engine
        .tunnels
        .borrow_mut()
        .failures
        .push_back(ForwardFailure::LocalPortTaken(
            "Port forwarding failed".into(),
        ));
    let launched = prepare_and_start(
        Session::quiet(&engine, &host),
        request("cpu-jupyter", TunnelMode::Session),
    )
    .unwrap();
    let moved = launched.plan.ports[0].host;
    assert!(moved > 40000, "a kernel-chosen port: {moved}");
    assert_eq!(
        engine.calls()[2..],
        [
            "forward jupyter 8888->49152".to_string(),
            format!("forward jupyter {moved}->49152"),
            "forward tensorboard 6006->49153".to_string(),
        ]
    );
    assert!(launched.plan.endpoints[0]
        .1
        .starts_with(&format!("http://127.0.0.1:{moved}/lab?token=")));
    assert_eq!(
        launched.plan.labels[&labels::url_label("jupyter")],
        format!("http://127.0.0.1:{moved}/lab")
    );
    let record = launched.tunnel.unwrap();
    assert!(!record.tunnel.detached);
    // Closing a session's tunnel cancels its forwards; the session stays its tfimg's.
    run(TunnelStore::of(Session::quiet(&engine, &host)).close(&launched.id));
    assert_eq!(
        engine.calls()[engine.calls().len() - 2..],
        [
            format!("cancel jupyter {moved}"),
            "cancel tensorboard 6006".to_string()
        ]
    );
}

#[test]
fn a_tunnel_that_cannot_be_made_removes_the_container_and_closes_what_was_opened() {
    let (engine, host) = (remote_engine(), FakeHost::new());
    engine
        .tunnels
        .borrow_mut()
        .failures
        .push_back(ForwardFailure::Engine(EngineError::Failed {
            what: "forward".into(),
            message: "administratively prohibited".into(),
        }));
    let error = prepare_and_start(
        Session::quiet(&engine, &host),
        request("cpu-jupyter", TunnelMode::Detached),
    )
    .unwrap_err();
    assert!(error.to_string().contains("forward failed"), "{error:#}");
    let calls = engine.calls();
    assert!(calls[calls.len() - 2].starts_with("close-tunnel /fake/t-1"));
    assert!(calls[calls.len() - 1].starts_with("remove-container"));
    assert!(engine.container_names().is_empty());
    assert!(host.files.borrow().is_empty(), "no record");
}

#[test]
fn a_local_engine_and_a_container_without_ports_have_no_tunnel() {
    let host = FakeHost::new();
    let engine = FakeEngine::new();
    let launched = prepare_and_start(
        Session::quiet(&engine, &host),
        request("cpu-jupyter", TunnelMode::Detached),
    )
    .unwrap();
    assert!(launched.tunnel.is_none());
    assert_eq!(engine.calls().len(), 2, "{:?}", engine.calls());
    let engine = remote_engine();
    let mut headless = request("cpu-headless", TunnelMode::Detached);
    headless.command = vec!["true".into()];
    let launched = prepare_and_start(Session::quiet(&engine, &host), headless).unwrap();
    assert!(launched.tunnel.is_none());
    assert!(engine.calls_to("open-tunnel").is_empty());
}

#[test]
fn stale_records_go_and_forward_reopens_on_the_ports_the_container_was_launched_with() {
    let (engine, host) = (remote_engine(), FakeHost::new());
    let launched = prepare_and_start(
        Session::quiet(&engine, &host),
        request("cpu-jupyter", TunnelMode::Detached),
    )
    .unwrap();
    let record = launched.tunnel.unwrap();
    // Its ssh ended (the network dropped): the record is dropped when next seen.
    engine.end_tunnel(&record.tunnel.control);
    let store = TunnelStore::of(Session::quiet(&engine, &host));
    run(store.collect_stale(std::slice::from_ref(&launched.id)));
    assert!(host.files.borrow().is_empty());

    let container = run(engine.container("lab")).unwrap().unwrap();
    let endpoints = run(reopen(Session::quiet(&engine, &host), &container)).unwrap();
    let token = labels::jupyter_token(&container.env).unwrap();
    assert_eq!(
        endpoints,
        [
            (
                "jupyter".to_string(),
                format!("http://127.0.0.1:8888/lab?token={token}")
            ),
            (
                "tensorboard".to_string(),
                "http://127.0.0.1:6006/".to_string()
            )
        ]
    );
    assert_eq!(
        engine.calls()[engine.calls().len() - 3..],
        [
            format!("open-tunnel {}", launched.id),
            "forward jupyter 8888->49152".to_string(),
            "forward tensorboard 6006->49153".to_string()
        ]
    );
    // Open: asked again, it only prints the addresses.
    let again = run(reopen(Session::quiet(&engine, &host), &container)).unwrap();
    assert_eq!(again, endpoints);
    assert_eq!(engine.calls_to("open-tunnel").len(), 2);

    // A record whose container is gone is closed.
    run(TunnelStore::of(Session::quiet(&engine, &host)).collect_stale(&[]));
    assert!(host.files.borrow().is_empty());
    assert!(engine.calls().last().unwrap().starts_with("close-tunnel"));
}

#[test]
fn forward_refuses_a_stopped_container() {
    let (engine, host) = (remote_engine(), FakeHost::new());
    engine.add_container("old", "exited", &[]);
    let container = run(engine.container("old")).unwrap().unwrap();
    let error = run(reopen(Session::quiet(&engine, &host), &container)).unwrap_err();
    let error = error.downcast_ref::<InputError>().unwrap();
    assert_eq!(error.message, "`old` is not running (exited)");
}

#[test]
fn forward_is_refused_on_a_local_engine() {
    let engine = FakeEngine::new();
    let host = FakeHost::new();
    let error = run(forward(Session::quiet(&engine, &host), "lab", false)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`forward` is for remote engines: the ports of `lab` are already on this machine"
    );
}

#[test]
fn forward_close_of_a_container_without_a_tunnel_says_none_was_open() {
    let engine = remote_engine();
    engine.add_container(
        "lab",
        "running",
        &[(labels::SPEC, "cpu-jupyter".to_string())],
    );
    let host = FakeHost::new();
    let closed = run(forward(Session::quiet(&engine, &host), "lab", true)).unwrap();
    assert_eq!(
        closed,
        Forwarded::Closed {
            name: "lab".to_string(),
            was_open: false
        }
    );
}
