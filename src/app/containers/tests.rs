use super::*;
use crate::app::session::Session;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;

/// A serving container of `model` as `tfimg serve` leaves it.
fn serving(engine: &FakeEngine, name: &str, model: &str) {
    engine.add_container(
        name,
        "running",
        &[
            (labels::SPEC, "cpu-serving".to_string()),
            (labels::MODEL, model.to_string()),
        ],
    );
}

fn message(error: anyhow::Error) -> String {
    let error = error.downcast::<InputError>().expect("bad input");
    format!("{}\nhint: {}", error.message, error.hint)
}

#[test]
fn a_container_is_found_by_its_name_first() {
    let engine = FakeEngine::new();
    serving(&engine, "serve-fraud-fbca62", "fraud");
    // A container called as another container's model: its own name wins.
    serving(&engine, "fraud", "other");
    let found = block_on(find(&engine, "fraud")).unwrap();
    assert_eq!(found.name, "fraud");
    let found = block_on(find(&engine, "serve-fraud-fbca62")).unwrap();
    assert_eq!(found.name, "serve-fraud-fbca62");
}

/// Issue 28, item 9: `tfimg serve --name fraud` made `serve-fraud-<hash>`, which `rm
/// fraud`, `logs fraud` and `stop fraud` did not find.
#[test]
fn a_serving_container_is_found_by_its_model_s_name() {
    let engine = FakeEngine::new();
    serving(&engine, "serve-fraud-fbca62", "fraud");
    let found = block_on(find(&engine, "fraud")).unwrap();
    assert_eq!(found.name, "serve-fraud-fbca62");
}

#[test]
fn a_model_served_twice_names_both_containers() {
    let engine = FakeEngine::new();
    serving(&engine, "serve-fraud-fbca62", "fraud");
    serving(&engine, "lab-fraud", "fraud");
    assert_eq!(
        message(block_on(find(&engine, "fraud")).unwrap_err()),
        "2 containers serve the model `fraud`: `lab-fraud`, `serve-fraud-fbca62`\n\
         hint: name the container you mean"
    );
}

#[test]
fn other_containers_are_never_found() {
    let engine = FakeEngine::new();
    engine.add_container("web", "running", &[]);
    // Labelled with a model, but not started by tfimg.
    engine.add_container(
        "impostor",
        "running",
        &[(labels::MODEL, "fraud".to_string())],
    );
    assert_eq!(
        message(block_on(find(&engine, "web")).unwrap_err()),
        "`web` was not started by tfimg\n\
         hint: tfimg only manages its own containers; use `docker` for this one"
    );
    assert_eq!(
        message(block_on(find(&engine, "fraud")).unwrap_err()),
        "no container named `fraud`\n\
         hint: `tfimg ps` lists tfimg's containers"
    );
}

#[test]
fn rm_refuses_a_running_container_without_force_and_closes_the_tunnel_of_one_removed() {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    let host = crate::host::fake::FakeHost::new();
    let request = crate::app::testing::request("cpu-jupyter");
    let launched =
        crate::app::testing::prepare_and_start(Session::quiet(&engine, &host), request).unwrap();
    let error = block_on(remove(Session::quiet(&engine, &host), "lab", false)).unwrap_err();
    assert_eq!(
        message(error),
        "`lab` is running\nhint: stop it first (`tfimg stop lab`), or use `tfimg rm -f`"
    );
    assert!(
        block_on(find(&engine, "lab")).is_ok(),
        "nothing was removed"
    );

    let removed = block_on(remove(Session::quiet(&engine, &host), "lab", true)).unwrap();
    assert_eq!(removed, "lab");
    assert!(block_on(find(&engine, "lab")).is_err());
    let calls = engine.calls();
    let removed = calls
        .iter()
        .position(|call| *call == format!("remove-container {}", launched.id))
        .unwrap();
    assert!(
        calls[removed..]
            .iter()
            .any(|call| call.starts_with("cancel ")),
        "{calls:?}"
    );
}

#[test]
fn exec_runs_as_the_container_s_user_and_only_while_it_runs() {
    let engine = FakeEngine::new();
    engine.add_container("a", "running", &[(labels::UID, "1000:1000".to_string())]);
    engine.add_container("b", "exited", &[]);
    let state = engine.state.borrow();
    let by_name = |name: &str| {
        state
            .containers
            .values()
            .find(|container| container.name == name)
            .unwrap()
            .clone()
    };
    assert_eq!(exec_user(&by_name("a")).unwrap(), "1000:1000");
    let error = exec_user(&by_name("b")).unwrap_err();
    assert_eq!(error.message, "`b` is not running (exited)");
}

#[test]
fn ps_hides_jupyter_tokens_unless_asked() {
    let engine = FakeEngine::new();
    let host = crate::host::fake::FakeHost::new();
    let request = crate::app::testing::request("cpu-jupyter");
    crate::app::testing::prepare_and_start(Session::quiet(&engine, &host), request).unwrap();
    let (entries, hidden) = block_on(ps(Session::quiet(&engine, &host), None, false)).unwrap();
    assert!(hidden);
    assert_eq!(entries.len(), 1);
    assert!(
        !entries[0].urls["jupyter"].contains("token="),
        "{entries:?}"
    );
    let (entries, hidden) = block_on(ps(Session::quiet(&engine, &host), None, true)).unwrap();
    assert!(!hidden);
    assert!(entries[0].urls["jupyter"].contains("token="), "{entries:?}");
}

/// `ps` says `stopped (idle 12h)` only for a container whose idle watch stopped it: the
/// label and the watch's last line; an exit of its own, or a line earlier in the output
/// (it ran again since), keep Docker's words.
#[test]
fn ps_says_stopped_idle_only_for_what_the_idle_watch_stopped() {
    let engine = FakeEngine::new();
    let idle = [
        (labels::SPEC, "cpu-jupyter".to_string()),
        (labels::IDLE_CONTAINERS, "43200".to_string()),
    ];
    for name in ["watched", "exited-itself", "ran-again", "unwatched", "huge"] {
        let labels: &[(&str, String)] = if name == "unwatched" {
            &idle[..1]
        } else {
            &idle
        };
        engine.add_container(name, "exited", labels);
    }
    for container in engine.state.borrow_mut().containers.values_mut() {
        container.status = "Exited (0) 2 hours ago".to_string();
    }
    let stopped = "tfimg: nobody used this container for 12h: stopping it\ntfimg: idle for 12h: stopped, with its data\n";
    let mut state = engine.state.borrow_mut();
    for name in ["watched", "unwatched"] {
        state.output.insert(name.to_string(), stopped.to_string());
    }
    state.output.insert(
        "exited-itself".to_string(),
        "[I] Shutting down 0 kernels\n".to_string(),
    );
    state.output.insert(
        "ran-again".to_string(),
        format!("{stopped}[I] Jupyter Server is running\n"),
    );
    drop(state);
    let host = crate::host::fake::FakeHost::new();
    let (entries, _) = block_on(ps(Session::quiet(&engine, &host), None, false)).unwrap();
    let status: BTreeMap<&str, &str> = entries
        .iter()
        .map(|entry| (entry.name.as_str(), entry.status.as_str()))
        .collect();
    assert_eq!(status["watched"], "stopped (idle 12h) 2 hours ago");
    for name in ["exited-itself", "ran-again", "unwatched", "huge"] {
        assert_eq!(status[name], "Exited (0) 2 hours ago", "{name}");
    }
}

/// Issue 45: a second team's `up` that stopped half-way left its member labelled with an
/// address on the port of the first team's gateway, and `ps` showed it. A member's
/// address through a gateway is shown only while its own team's gateway runs and
/// publishes that port; its own published addresses always are.
#[test]
fn ps_shows_an_address_through_a_gateway_only_while_the_member_s_own_gateway_serves_it() {
    let engine = FakeEngine::new();
    let host = crate::host::fake::FakeHost::new();
    let gateway_ports = "gateway=127.0.0.1:8443->8443".to_string();
    let member = |name: &str, team: &str, url: &str| {
        engine.add_container(
            name,
            "running",
            &[
                (labels::SPEC, "cpu-jupyter".to_string()),
                (labels::TEAM, team.to_string()),
                (labels::MEMBER, name.rsplit('-').next().unwrap().to_string()),
                (&labels::url_label("jupyter"), url.to_string()),
                (
                    &labels::url_label("ssh"),
                    "ssh -p 2222 tf@127.0.0.1".to_string(),
                ),
            ],
        );
    };
    engine.add_container(
        "lab-gateway",
        "running",
        &[
            (labels::SPEC, "gateway".to_string()),
            (labels::TEAM, "lab".to_string()),
            (labels::GATEWAY, "lab".to_string()),
            (labels::PORTS, gateway_ports),
            (
                &labels::url_label("gateway"),
                "https://lab.localhost:8443/".to_string(),
            ),
        ],
    );
    member("lab-alice", "lab", "https://alice.lab.localhost:8443/lab");
    member(
        "other-erin",
        "other",
        "https://erin.other.localhost:8443/lab",
    );
    let urls = |engine: &FakeEngine| {
        let (entries, _) = block_on(ps(Session::quiet(engine, &host), None, false)).unwrap();
        entries
            .into_iter()
            .map(|entry| (entry.name, entry.urls.into_keys().collect::<Vec<_>>()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        urls(&engine),
        [
            (
                "lab-alice".to_string(),
                vec!["jupyter".to_string(), "ssh".to_string()]
            ),
            ("lab-gateway".to_string(), vec!["gateway".to_string()]),
            ("other-erin".to_string(), vec!["ssh".to_string()]),
        ]
    );
    engine
        .state
        .borrow_mut()
        .containers
        .values_mut()
        .filter(|container| container.name == "lab-gateway")
        .for_each(|container| container.state = "exited".to_string());
    assert_eq!(urls(&engine)[0].1, ["ssh"], "lab's gateway stopped");
    assert_eq!(urls(&engine)[1].1, Vec::<String>::new());
}

/// `logs` puts the container's output on the session's UI (the fake records it); `exec`
/// runs as the container's user and refuses a stopped container.
#[test]
fn logs_reach_the_session_s_ui_and_exec_runs_as_the_container_s_user() {
    let engine = FakeEngine::new();
    let host = crate::host::fake::FakeHost::new();
    let request = crate::app::testing::request("cpu-headless");
    let launched =
        crate::app::testing::prepare_and_start(Session::quiet(&engine, &host), request).unwrap();
    engine
        .state
        .borrow_mut()
        .output
        .insert("lab".to_string(), "step 1\n".to_string());
    let ui = crate::output::ui::Recorded::default();
    let sinks = crate::output::sinks::Sinks::new(&ui, &ui);
    let session = Session::new(&engine, &host, sinks);
    block_on(logs(session, "lab", false, None)).unwrap();
    assert_eq!(ui.output.borrow().as_slice(), b"step 1\n");

    let command = ["id".to_string()];
    assert_eq!(block_on(exec(session, "lab", &command)).unwrap(), 0);
    assert!(
        engine.calls().contains(&format!("exec {} id", launched.id)),
        "{:?}",
        engine.calls()
    );
    block_on(stop(session, "lab")).unwrap();
    let error = block_on(exec(session, "lab", &command)).unwrap_err();
    assert!(message(error).starts_with("`lab` is not running"));
}
