//! Unit tests of the `up` and `down` stories on the fakes: what `down` leaves (nothing of
//! the team's: containers, tunnels, networks), and the access `up` reads back.
use std::path::PathBuf;

use super::*;
use crate::app::session::Session;
use crate::app::testing::{block_on, up_team};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;

fn plain() -> crate::output::ui::Recorded {
    crate::output::ui::Recorded::default()
}

fn team(spec: &str) -> Team {
    let text = format!(
        "team: lab\ndefaults:\n  spec: {spec}\nmembers:\n  - name: ana\n  - name: bo\n    command: [\"sleep\", \"300\"]\n"
    );
    crate::team::parse(&text, "team.yaml", PathBuf::from("/project")).unwrap()
}

#[test]
fn down_removes_the_members_closes_their_tunnels_and_removes_the_networks() {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    let host = FakeHost::new();
    let team = team("cpu-jupyter");
    up_team(Session::quiet(&engine, &host), &team, "cpu-jupyter", None);
    let ids: Vec<String> = engine.state.borrow().containers.keys().cloned().collect();
    assert_eq!(ids.len(), 2);
    let calls_before = engine.calls().len();

    let removed = block_on(down(Session::quiet(&engine, &host), "lab")).unwrap();
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(engine.state.borrow().containers.is_empty());
    let calls = engine.calls()[calls_before..].to_vec();
    for id in &ids {
        let removed_at = calls
            .iter()
            .position(|call| *call == format!("remove-container {id}"));
        assert!(removed_at.is_some(), "{calls:?}");
    }
    assert!(
        calls.iter().any(|call| call.starts_with("close-tunnel ")),
        "the members' tunnels are closed: {calls:?}"
    );
    assert!(
        calls.last().unwrap().starts_with("remove-network "),
        "the networks go last: {calls:?}"
    );

    // A second `down` finds nothing to remove and still succeeds.
    assert!(block_on(down(Session::quiet(&engine, &host), "lab"))
        .unwrap()
        .is_empty());
}

#[test]
fn up_reads_back_each_member_s_access_and_state() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let team = team("cpu-jupyter");
    let report = up_team(Session::quiet(&engine, &host), &team, "cpu-jupyter", None);
    let rows = block_on(access(
        Session::quiet(&engine, &host),
        &team,
        &report.actions,
    ))
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0].member.as_str(), rows[0].action),
        ("ana", "created")
    );
    assert!(
        rows[0].access.starts_with("http://127.0.0.1:") && rows[0].access.contains("token="),
        "{rows:?}"
    );
    assert!(
        rows[0].tensorboard.starts_with("http://127.0.0.1:"),
        "{rows:?}"
    );

    // A member that exited shows its code; one that is gone shows `-`.
    {
        let mut state = engine.state.borrow_mut();
        for container in state.containers.values_mut() {
            if container.name == "lab-bo" {
                container.state = "exited".to_string();
                container.exit_code = Some(2);
            }
        }
        state
            .containers
            .retain(|_, container| container.name != "lab-ana");
    }
    let rows = block_on(access(
        Session::quiet(&engine, &host),
        &team,
        &BTreeMap::new(),
    ))
    .unwrap();
    assert_eq!(
        rows.iter()
            .map(|row| (row.action, row.access.as_str(), row.tensorboard.as_str()))
            .collect::<Vec<_>>(),
        [("unchanged", "-", "-"), ("unchanged", "exited (2)", "-")]
    );
}

/// Issue 44: two `up` of one team at once made each network twice. `up` and `down` of a
/// team now wait while another tfimg holds the team's lock; an interrupt while waiting
/// ends them before they touch the engine.
#[test]
fn up_and_down_wait_for_the_team_s_lock_and_touch_nothing_until_they_hold_it() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let team = team("cpu-jupyter");
    up_team(Session::quiet(&engine, &host), &team, "cpu-jupyter", None);
    let calls_before = engine.calls().len();
    host.busy_locks.borrow_mut().insert(lock_name("lab"));
    assert_eq!(lock_name("lab"), "team-lab.lock");
    host.interrupt.set(true);
    let waiting = "waiting for another `tfimg up` or `tfimg down` of team `lab` to finish";
    let error = block_on(down(Session::quiet(&engine, &host), "lab")).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("interrupted: stopped while {waiting}")
    );
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let specs = BTreeMap::from([(
        "cpu-jupyter".to_string(),
        crate::spec::resolve(&catalog, "cpu-jupyter").unwrap(),
    )]);
    let network = crate::app::build::Network::default();
    let ui = crate::output::ui::Recorded::default();
    let error = block_on(bring_up(
        Session::new(
            &engine,
            &host,
            crate::app::session::Sinks::new(&ui, &plain()),
        ),
        &team,
        &specs,
        &network,
        None,
    ))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("interrupted: stopped while {waiting}")
    );
    assert_eq!(engine.calls().len(), calls_before, "{:?}", engine.calls());
    assert_eq!(engine.container_names().len(), 2);

    // Free again: `down` goes on.
    host.busy_locks.borrow_mut().clear();
    host.interrupt.set(false);
    assert_eq!(
        block_on(down(Session::quiet(&engine, &host), "lab"))
            .unwrap()
            .len(),
        2
    );
}
