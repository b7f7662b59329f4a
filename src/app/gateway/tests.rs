//! Unit tests of `gateway` on the fakes: the story of `up` and `down` with a gateway.
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::app::team::UpReport;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::host::prelude::*;
use crate::labels;
use crate::spec::Catalog;
use crate::team::{self, Team};

use super::*;

fn gateway_team(members: &[&str]) -> Team {
    team_with_gateway(members, "{port: 9443}")
}

fn team_with_gateway(members: &[&str], gateway: &str) -> Team {
    let mut text = "team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n".to_string();
    for member in members {
        text.push_str(&format!("  - name: {member}\n"));
    }
    text.push_str(&format!("gateway: {gateway}\n"));
    team::parse(&text, "team.yaml", PathBuf::from("/project")).unwrap()
}

/// The containers (ids or names) joined to `network` after their create.
fn joined(engine: &FakeEngine, network: &str) -> Vec<String> {
    let state = engine.state.borrow();
    let found = state.networks.get(network);
    found
        .map(|network| network.connected.iter().cloned().collect())
        .unwrap_or_default()
}

fn up_once(session: Session<'_, FakeEngine, FakeHost>, team: &Team) -> UpReport {
    crate::app::testing::up_team(
        session,
        team,
        "cpu-jupyter",
        Some("tfimg/gateway:0123456789ab"),
    )
}

fn id_of(engine: &FakeEngine, name: &str) -> String {
    let state = engine.state.borrow();
    let found = state.containers.values().find(|c| c.name == name);
    found.unwrap().id.clone()
}

#[test]
fn an_ssh_member_publishes_only_its_ssh_port_beside_the_gateway() {
    let text = "team: lab\nmembers:\n  - name: carol\n    spec: cpu-ssh\ngateway: {port: 9443}\n";
    let team = team::parse(text, "team.yaml", PathBuf::from("/project")).unwrap();
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, "cpu-ssh").unwrap();
    let images = BTreeMap::from([("cpu-ssh".to_string(), "tfimg/cpu-ssh:x".to_string())]);
    let carol = &team.members[0];
    let mut request =
        crate::app::team::member_request(&team, carol, &resolved, &images, (4321, 4322)).unwrap();
    assert!(request.target.ports.contains_key("tensorboard"));
    place_member(&team, carol, &mut request);
    assert_eq!(request.target.ports.keys().collect::<Vec<_>>(), ["ssh"]);
    let network = request.network.unwrap();
    assert_eq!(network.name, "tfimg-lab.carol", "alone with the gateway");
    assert!(network.gateway.is_none(), "not behind the gateway");
}

#[test]
fn members_sit_behind_one_published_port_each_on_a_network_of_their_own() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let report = up_once(
        Session::quiet(&engine, &host),
        &gateway_team(&["alice", "bob"]),
    );
    assert_eq!(report.gateway, Some(GatewayAction::Created));
    // Every network exists before any member is created: the gateway's, and one per member.
    let calls = engine.calls();
    let first_create = calls.iter().position(|c| c.starts_with("create "));
    for network in ["tfimg-lab", "tfimg-lab.alice", "tfimg-lab.bob"] {
        let made = calls
            .iter()
            .position(|c| *c == format!("ensure-network {network}"));
        assert!(
            made.is_some() && made < first_create,
            "{network}: {calls:?}"
        );
    }

    // Host routing by default: each member its own origin under `<team>.localhost`.
    let alice = engine.plan_of("lab-alice").unwrap();
    assert!(alice.ports.is_empty(), "no host port: {:?}", alice.ports);
    assert_eq!(alice.network.as_deref(), Some("tfimg-lab.alice"));
    assert!(alice
        .env
        .contains(&format!("{}=/", labels::JUPYTER_BASE_URL_VARIABLE)));
    // On a host of its own, Jupyter keeps `__Host-` cookies no sibling host can toss it.
    assert!(alice
        .env
        .contains(&format!("{}=1", labels::JUPYTER_HOST_COOKIES_VARIABLE)));
    assert_eq!(alice.endpoints[0].0, "jupyter");
    assert!(alice.endpoints[0]
        .1
        .starts_with("https://alice.lab.localhost:9443/lab?token="));
    assert_eq!(
        alice.labels[&labels::url_label("tensorboard")],
        "https://alice.lab.localhost:9443/tensorboard/"
    );
    let bob = engine.plan_of("lab-bob").unwrap();
    assert_eq!(bob.network.as_deref(), Some("tfimg-lab.bob"));

    // No host port to probe: `up` waits for each Jupyter from inside its container.
    let probes = engine.calls_to("exec");
    assert_eq!(probes.len(), 2, "{probes:?}");
    assert!(probes.iter().all(|call| call.contains("python3 -c")
        && call.contains(labels::JUPYTER_BASE_URL_VARIABLE)
        && call.contains("http://127.0.0.1:8888")));

    // The gateway: on its own network, and the only container that joins the members'
    // (before it starts).
    let gateway = engine.plan_of("lab-gateway").unwrap();
    assert_eq!(gateway.network.as_deref(), Some("tfimg-lab"));
    let gateway_id = id_of(&engine, "lab-gateway");
    for network in ["tfimg-lab.alice", "tfimg-lab.bob"] {
        assert_eq!(
            joined(&engine, network),
            std::slice::from_ref(&gateway_id),
            "{network}"
        );
    }
    let calls = engine.calls();
    let joined_at = calls
        .iter()
        .position(|c| *c == format!("connect-network tfimg-lab.bob {gateway_id}"));
    let started_at = calls
        .iter()
        .position(|c| *c == format!("start {gateway_id}"));
    assert!(joined_at.is_some() && joined_at < started_at, "{calls:?}");
    assert_eq!(gateway.ports.len(), 1);
    assert_eq!(
        (
            gateway.ports[0].host_ip.as_str(),
            gateway.ports[0].host,
            gateway.ports[0].container
        ),
        ("127.0.0.1", 9443, 8443)
    );
    assert_eq!(gateway.user.as_deref(), Some("33:33"));
    assert_eq!(gateway.cap_drop, ["ALL"]);
    assert_eq!(gateway.labels[labels::GATEWAY], "lab");
    assert_eq!(
        gateway.labels[&labels::url_label("gateway")],
        "https://lab.localhost:9443/",
        "`ps` shows its address"
    );

    // Files go in before the start: the key only its owner reads.
    let state = engine.state.borrow();
    let (_, folder, entries) = state.uploads.last().unwrap();
    assert_eq!(folder, nginx::FOLDER);
    assert_eq!(
        entries,
        &[
            "cert.pem 33:33 644".to_string(),
            "key.pem 33:33 600".to_string(),
            "nginx.conf 33:33 644".to_string(),
        ]
    );
    drop(state);
    let key = host.data_dir().unwrap().join("teams/lab/gateway/key.pem");
    assert!(
        host.files.borrow().contains_key(&key),
        "the self-signed pair is kept"
    );
    let cert = host.data_dir().unwrap().join("teams/lab/gateway/cert.pem");
    assert_eq!(
        String::from_utf8_lossy(&host.files.borrow()[&cert]),
        "FAKE CERTIFICATE for localhost,127.0.0.1,lab.localhost,*.lab.localhost"
    );
}

#[test]
fn path_routing_is_there_when_asked_for() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    up_once(
        Session::quiet(&engine, &host),
        &team_with_gateway(&["alice"], "{port: 9443, route: path}"),
    );
    let alice = engine.plan_of("lab-alice").unwrap();
    assert_eq!(alice.network.as_deref(), Some("tfimg-lab.alice"));
    assert!(alice
        .env
        .contains(&format!("{}=/alice/", labels::JUPYTER_BASE_URL_VARIABLE)));
    // One origin for all: cookies scoped to the member's path, which `__Host-` ones cannot.
    assert!(!alice
        .env
        .iter()
        .any(|variable| variable.starts_with(labels::JUPYTER_HOST_COOKIES_VARIABLE)));
    assert!(alice.endpoints[0]
        .1
        .starts_with("https://127.0.0.1:9443/alice/lab?token="));
    let gateway = engine.plan_of("lab-gateway").unwrap();
    assert_eq!(
        gateway.labels[&labels::url_label("gateway")],
        "https://127.0.0.1:9443/"
    );

    // Routing by host afterwards: the kept certificate is made again for the new names.
    let again = up_once(Session::quiet(&engine, &host), &gateway_team(&["alice"]));
    assert_eq!(again.gateway, Some(GatewayAction::Created));
    let cert = host.data_dir().unwrap().join("teams/lab/gateway/cert.pem");
    assert_eq!(
        String::from_utf8_lossy(&host.files.borrow()[&cert]),
        "FAKE CERTIFICATE for localhost,127.0.0.1,lab.localhost,*.lab.localhost"
    );
}

#[test]
fn a_changed_team_reloads_the_gateway_and_an_unchanged_one_does_nothing() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    up_once(Session::quiet(&engine, &host), &gateway_team(&["alice"]));
    let gateway_id = id_of(&engine, "lab-gateway");
    let again = up_once(Session::quiet(&engine, &host), &gateway_team(&["alice"]));
    assert_eq!(again.gateway, Some(GatewayAction::Unchanged));
    let reloads = || -> Vec<String> {
        let execs = engine.calls_to("exec").into_iter();
        execs.filter(|call| call.contains(" nginx ")).collect()
    };
    assert!(reloads().is_empty());

    let more = up_once(
        Session::quiet(&engine, &host),
        &gateway_team(&["alice", "bob"]),
    );
    assert_eq!(more.gateway, Some(GatewayAction::Reloaded));
    assert_eq!(id_of(&engine, "lab-gateway"), gateway_id);
    assert_eq!(
        reloads(),
        [format!(
            "exec {gateway_id} nginx -c /etc/tfimg-gateway/nginx.conf -s reload"
        )]
    );
    // bob's network was made before bob, and the gateway joined it before reloading.
    assert_eq!(
        joined(&engine, "tfimg-lab.bob"),
        std::slice::from_ref(&gateway_id)
    );
    let calls = engine.calls();
    let joined_at = calls
        .iter()
        .position(|c| *c == format!("connect-network tfimg-lab.bob {gateway_id}"));
    let reloaded_at = calls.iter().position(|c| c.contains(" -s reload"));
    assert!(joined_at.is_some() && joined_at < reloaded_at, "{calls:?}");
    // The same certificate: made once per team.
    let certificates = host
        .files
        .borrow()
        .keys()
        .filter(|path| path.ends_with("cert.pem"))
        .count();
    assert_eq!(certificates, 1);
    // bob leaves: his network goes with him (the gateway taken off it first).
    let fewer = up_once(Session::quiet(&engine, &host), &gateway_team(&["alice"]));
    assert_eq!(fewer.gateway, Some(GatewayAction::Reloaded));
    let networks: Vec<String> = engine.state.borrow().networks.keys().cloned().collect();
    assert_eq!(networks, ["tfimg-lab", "tfimg-lab.alice"]);
    assert!(engine
        .calls()
        .contains(&"remove-network tfimg-lab.bob".to_string()));
}

/// Without its gateway the team keeps one network a member (issue 45: members without a
/// gateway are kept apart too); the gateway's own network goes with it.
#[test]
fn a_team_file_without_its_gateway_removes_it_and_its_network() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    up_once(Session::quiet(&engine, &host), &gateway_team(&["alice"]));
    let without = team::parse(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: alice\n",
        "team.yaml",
        PathBuf::from("/project"),
    )
    .unwrap();
    let report = up_once(Session::quiet(&engine, &host), &without);
    assert_eq!(report.gateway, Some(GatewayAction::Removed));
    assert_eq!(engine.container_names(), ["lab-alice"]);
    let alice = engine.plan_of("lab-alice").unwrap();
    assert_eq!(alice.network.as_deref(), Some("tfimg-lab.alice"));
    assert_eq!(
        alice.ports.len(),
        2,
        "jupyter and tensorboard published again"
    );
    let networks: Vec<String> = engine.state.borrow().networks.keys().cloned().collect();
    assert_eq!(networks, ["tfimg-lab.alice"]);
}

/// Issue 45: members of a team without a gateway shared Docker's default bridge. Each is
/// alone on a network of its own (`tfimg-<team>.<member>`), made before either is created
/// and removed with the member.
#[test]
fn members_without_a_gateway_are_each_alone_on_a_network() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let lab = |members: &str| {
        team::parse(
            &format!("team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n{members}"),
            "team.yaml",
            PathBuf::from("/project"),
        )
        .unwrap()
    };
    up_once(
        Session::quiet(&engine, &host),
        &lab("  - name: alice\n  - name: bob\n"),
    );
    for member in ["alice", "bob"] {
        let plan = engine.plan_of(&format!("lab-{member}")).unwrap();
        assert_eq!(plan.network, Some(format!("tfimg-lab.{member}")));
    }
    let networks: Vec<String> = engine.state.borrow().networks.keys().cloned().collect();
    assert_eq!(networks, ["tfimg-lab.alice", "tfimg-lab.bob"]);
    up_once(Session::quiet(&engine, &host), &lab("  - name: alice\n"));
    let networks: Vec<String> = engine.state.borrow().networks.keys().cloned().collect();
    assert_eq!(networks, ["tfimg-lab.alice"], "bob's went with him");
}

#[test]
fn a_remote_engine_is_refused_before_anything_is_built() {
    let error = check_local(&gateway_team(&["alice"]), Some("ssh://gpu-box")).unwrap_err();
    assert_eq!(
        error.message,
        "a team gateway runs on this machine's engine only, not on `ssh://gpu-box`"
    );
    assert!(check_local(&gateway_team(&["alice"]), None).is_ok());
}
