//! Unit tests of `hub` on the fakes: `up` with a hub creates the hub (holding the engine's
//! socket, without capabilities, its state in a volume) and no member server, hands the
//! hub each member's planned server, and chooses GPUs by the launcher's rules.
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::app::team::{Action, TeamImages, UpReport};
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::plan::gpus::HostGpu;
use crate::spec::Catalog;
use crate::team::{self, Team};

use super::*;

const HUB_IMAGE: &str = "tfimg/hub:0123456789ab";
const MEMBER_IMAGE: &str = "tfimg/hub-member:ba9876543210";
const CHOICE_IMAGE: &str = "tfimg/hub-member:c40ce0000000";

fn hub_team(extra: &str) -> Team {
    let text = format!(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n  - name: alice\n    gpus: 1\n  - name: bob\n  - name: carol\n    spec: cpu-ssh\nhub:\n  admins: [bob]\n{extra}"
    );
    team::parse(&text, "team.yaml", PathBuf::from("/project")).unwrap()
}

/// A machine with four H100s, the driver and the toolkit.
fn gpu_host() -> FakeHost {
    let mut host = FakeHost::new();
    host.nvidia.driver = Some("580.65.06".into());
    host.nvidia.driver_cuda = Some("13.0".into());
    host.nvidia.gpus = (0..4)
        .map(|index| HostGpu {
            index,
            uuid: format!("GPU-{index}"),
            name: "NVIDIA H100 80GB HBM3".into(),
            memory_mib: Some(81559),
            compute_capability: None,
        })
        .collect();
    host.nvidia.toolkit_programs = vec!["nvidia-container-runtime-hook".into()];
    host
}

fn engine() -> FakeEngine {
    let engine = FakeEngine::new();
    engine
        .endpoint
        .set("unix:///var/run/docker.sock".to_string())
        .unwrap();
    engine
}

fn up(session: Session<'_, FakeEngine, FakeHost>, team: &Team) -> anyhow::Result<UpReport> {
    let mut catalog = Catalog::builtin(PathBuf::from("/project"));
    // A choice of its own: another workdir.
    let lab = b"name: lab\nextends: cpu-jupyter\nworkdir: /workspace\n".to_vec();
    catalog.add_local(
        PathBuf::from("/project/images/lab.yaml"),
        "images/lab.yaml",
        Ok(lab),
    );
    let specs: BTreeMap<String, crate::spec::ResolvedSpec> = ["cpu-jupyter", "cpu-ssh", "lab"]
        .into_iter()
        .map(|name| {
            (
                name.to_string(),
                crate::spec::resolve(&catalog, name).unwrap(),
            )
        })
        .collect();
    let images = TeamImages {
        specs: specs
            .keys()
            .map(|name| (name.clone(), format!("tfimg/{name}:2.9.3-0123456789ab")))
            .collect(),
        hub: Some(HUB_IMAGE.to_string()),
        hub_members: BTreeMap::from([
            ("cpu-jupyter".to_string(), MEMBER_IMAGE.to_string()),
            ("lab".to_string(), CHOICE_IMAGE.to_string()),
        ]),
        ..TeamImages::default()
    };
    block_on(crate::app::team::up(
        session,
        team,
        &specs,
        &images,
        (4321, 4322),
        Some(false),
    ))
}

#[test]
fn up_creates_the_hub_holding_the_socket_and_hands_it_each_member_s_planned_server() {
    let (engine, host) = (engine(), gpu_host());
    let team = hub_team("idle: {containers: 1h}\n");
    let report = up(Session::quiet(&engine, &host), &team).unwrap();
    assert_eq!(report.hub, Some(HubAction::Created));
    assert_eq!(report.actions["alice"], Action::Hub);
    assert_eq!(report.actions["bob"], Action::Hub);
    assert_eq!(
        report.actions["carol"],
        Action::Created,
        "SSH: `up` runs her"
    );
    // No Jupyter member's container exists: the hub creates them when they sign in.
    let mut created = engine.created_names();
    created.sort();
    assert_eq!(created, ["lab-carol", "lab-hub"]);

    let hub = engine.plan_of("lab-hub").unwrap();
    assert_eq!(hub.image, HUB_IMAGE);
    assert_eq!(hub.user.as_deref(), Some("0:0"));
    assert_eq!(
        hub.cap_drop,
        ["ALL"],
        "root of its container, without capabilities"
    );
    let socket = hub
        .mounts
        .iter()
        .find(|mount| mount.target == "/var/run/docker.sock")
        .expect("the hub holds the engine's socket");
    assert_eq!(socket.source, PathBuf::from("/var/run/docker.sock"));
    assert!(socket.read_only);
    assert!(hub
        .mounts
        .iter()
        .any(|mount| mount.target == TFIMG_IN_HUB && mount.read_only));
    assert_eq!(hub.volumes[0].name, "tfimg-hub-lab");
    assert_eq!(hub.volumes[0].target, STATE);
    assert_eq!(hub.ports[0].host_ip, "127.0.0.1");
    assert_eq!(hub.network.as_deref(), Some("tfimg-lab"));
    assert_eq!(hub.labels[labels::HUB], "lab");
    // No member container holds the socket.
    let carol = engine.plan_of("lab-carol").unwrap();
    assert!(carol
        .mounts
        .iter()
        .all(|mount| !mount.source.ends_with("docker.sock")));

    // The settings go in before the start, private to the hub.
    let state = engine.state.borrow();
    let (_, folder, entries) = state.uploads.last().unwrap();
    assert_eq!(folder, FOLDER);
    assert_eq!(
        entries,
        &[
            "cert.pem 0:0 644".to_string(),
            "key.pem 0:0 600".to_string(),
            "team.json 0:0 600".to_string(),
        ]
    );
    let settings: serde_json::Value =
        serde_json::from_slice(&state.uploaded[&format!("{FOLDER}/team.json")]).unwrap();
    drop(state);
    assert_eq!(settings["admins"], serde_json::json!(["bob"]));
    assert_eq!(settings["idle_servers"], 3600);
    let members = settings["members"].as_object().unwrap();
    assert_eq!(members.keys().collect::<Vec<_>>(), ["alice", "bob"]);
    let alice = &members["alice"][0];
    assert_eq!(alice["image"], MEMBER_IMAGE);
    assert_eq!(alice["network"], "tfimg-lab.alice");
    assert_eq!(alice["gpus"], "1");
    assert_eq!(
        alice["labels"]["io.tfimg.gpus"], "none",
        "chosen when she starts"
    );
    assert_eq!(
        alice["binds"],
        serde_json::json!(["/project/work/alice:/tf/work:rw"])
    );
    let text = alice.to_string();
    assert!(
        !text.contains("TFIMG_JUPYTER_TOKEN") && !text.contains("docker.sock"),
        "{text}"
    );
    assert_eq!(
        settings["gpu_host"]["gpus"].as_array().map(Vec::len),
        Some(4),
        "the host's GPUs, for the choice at start"
    );
    assert!(
        host.paths
            .borrow()
            .contains(&PathBuf::from("/project/work/alice")),
        "her folder is made now, not by Docker as root"
    );

    // The hub joins every member's network (where it reaches their servers).
    let state = engine.state.borrow();
    let hub_id = state
        .containers
        .values()
        .find(|facts| facts.name == "lab-hub")
        .map(|facts| facts.id.clone())
        .unwrap();
    for member in ["alice", "bob", "carol"] {
        let network = &state.networks[&format!("tfimg-lab.{member}")];
        assert!(network.connected.contains(&hub_id), "{member}");
    }
    drop(state);

    // Nothing changed: the hub is left alone.
    let again = up(Session::quiet(&engine, &host), &team).unwrap();
    assert_eq!(again.hub, Some(HubAction::Unchanged));
    assert_eq!(again.actions["carol"], Action::Unchanged);
}

#[test]
fn a_hub_needs_the_engine_s_own_socket_on_this_machine() {
    let team = hub_team("");
    assert_eq!(
        socket(&team, "unix:///run/user/1000/docker.sock", false).unwrap(),
        Some(PathBuf::from("/run/user/1000/docker.sock"))
    );
    for (endpoint, remote) in [("ssh://gpu-box", true), ("tcp://127.0.0.1:2375", false)] {
        let error = socket(&team, endpoint, remote).unwrap_err();
        assert!(error.message.contains("needs its socket"), "{error:?}");
    }
    let plain = team::parse(
        "team: lab\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n",
        "team.yaml",
        PathBuf::from("/project"),
    )
    .unwrap();
    assert_eq!(socket(&plain, "ssh://gpu-box", true).unwrap(), None);
}

fn ask(name: &str, gpus: &str, shared: bool) -> GpuAsk {
    GpuAsk {
        name: name.to_string(),
        gpus: gpus.to_string(),
        shared,
        nvidia: gpu_host().nvidia,
    }
}

#[test]
fn a_server_takes_free_gpus_and_never_a_held_one_unless_both_share() {
    let engine = engine();
    engine.add_container("run-x", "running", &[(labels::GPUS, "0".to_string())]);
    engine.add_container(
        "lab-bob",
        "running",
        &[
            (labels::GPUS, "device=1".to_string()),
            (labels::GPUS_SHARED, "true".to_string()),
        ],
    );
    let grant = block_on(choose_gpus(&engine, &ask("lab-alice", "1", false))).unwrap();
    assert_eq!(grant.labels[labels::GPUS], "device=2");
    assert_eq!(
        grant.device_requests[0]["device_ids"],
        serde_json::json!(["2"])
    );
    assert_eq!(grant.device_requests[0]["driver"], "nvidia");
    let held = block_on(choose_gpus(&engine, &ask("lab-alice", "device=0", false))).unwrap_err();
    assert!(
        held.to_string()
            .contains("GPU 0 of this host is held: GPU 0 by `run-x`"),
        "{held:#}"
    );
    let shared = block_on(choose_gpus(&engine, &ask("lab-alice", "device=1", true))).unwrap();
    assert_eq!(shared.labels[labels::GPUS_SHARED], "true");
    // Her own container from before holds nothing against her.
    engine.add_container(
        "lab-alice",
        "exited",
        &[(labels::GPUS, "device=3".to_string())],
    );
    let again = block_on(choose_gpus(&engine, &ask("lab-alice", "device=3", false))).unwrap();
    assert_eq!(
        again.device_requests[0]["device_ids"],
        serde_json::json!(["3"])
    );
}

#[test]
fn passwd_needs_the_running_hub_and_copies_the_password_in_privately() {
    let engine = engine();
    let team = hub_team("");
    let missing = block_on(passwd(&engine, &team, "alice", "first-pass")).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("the hub of team `lab` is not running"),
        "{missing}"
    );
    let id = engine.add_container("lab-hub", "running", &[(labels::HUB, "lab".to_string())]);
    let said = block_on(passwd(&engine, &team, "alice", "first-pass")).unwrap();
    assert_eq!(
        said,
        "`alice` signs in at https://127.0.0.1:8443/hub/login with it, then changes it at /hub/change-password"
    );
    let short = block_on(passwd(&engine, &team, "alice", "short")).unwrap_err();
    assert!(short.to_string().contains("8 to 72 bytes"), "{short}");
    let state = engine.state.borrow();
    let (_, folder, entries) = state.uploads.last().unwrap();
    assert_eq!(folder, FOLDER);
    assert_eq!(entries, &[format!("{PASSWORD_FILE} 0:0 600")]);
    assert!(state
        .calls
        .iter()
        .any(|call| call == &format!("exec {id} python3 {SHARE}/{PASSWD} alice")));
    drop(state);
    assert!(check_password("short").is_err());
    assert!(check_password(&"x".repeat(73)).is_err());
    assert!(check_password("two\nlines").is_err());
    assert!(check_password("eight ch").is_ok());
}

#[test]
fn a_team_that_drops_its_hub_gets_its_members_own_containers_again() {
    let (engine, host) = (engine(), gpu_host());
    let team = hub_team("");
    up(Session::quiet(&engine, &host), &team).unwrap();
    // Bob's server, as the hub made it from his profile (his member hash among its labels).
    let settings: serde_json::Value =
        serde_json::from_slice(&engine.state.borrow().uploaded[&format!("{FOLDER}/team.json")])
            .unwrap();
    let labels: Vec<(String, String)> = serde_json::from_value::<BTreeMap<String, String>>(
        settings["members"]["bob"][0]["labels"].clone(),
    )
    .unwrap()
    .into_iter()
    .collect();
    let labels: Vec<(&str, String)> = labels
        .iter()
        .map(|(key, value)| (key.as_str(), value.clone()))
        .collect();
    engine.add_container("lab-bob", "running", &labels);
    let text = "team: lab\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n  - name: alice\n    gpus: 1\n  - name: bob\n  - name: carol\n    spec: cpu-ssh\n";
    let plain = team::parse(text, "team.yaml", PathBuf::from("/project")).unwrap();
    let report = up(Session::quiet(&engine, &host), &plain).unwrap();
    assert_eq!(report.hub, Some(HubAction::Removed));
    assert_eq!(
        report.actions["bob"],
        Action::Recreated,
        "not the hub's server"
    );
    let bob = engine.plan_of("lab-bob").unwrap();
    assert!(!bob.labels.contains_key(labels::HUB));
    assert!(bob
        .env
        .iter()
        .any(|pair| pair.starts_with("TFIMG_JUPYTER_TOKEN=")));
}

#[test]
fn a_member_with_choices_gets_one_profile_per_spec_her_spec_first() {
    let (engine, host) = (engine(), gpu_host());
    let text = "team: lab\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n  - name: alice\n    gpus: 1\n    choices: [lab]\n  - name: bob\nhub:\n  admins: [bob]\n";
    let team = team::parse(text, "team.yaml", PathBuf::from("/project")).unwrap();
    let report = up(Session::quiet(&engine, &host), &team).unwrap();
    assert_eq!(report.actions["alice"], Action::Hub);
    let settings: serde_json::Value =
        serde_json::from_slice(&engine.state.borrow().uploaded[&format!("{FOLDER}/team.json")])
            .unwrap();
    let alice = settings["members"]["alice"].as_array().unwrap();
    let picked = |index: usize, key: &str| alice[index][key].as_str().unwrap().to_string();
    assert_eq!(
        (picked(0, "spec"), picked(0, "image")),
        ("cpu-jupyter".to_string(), MEMBER_IMAGE.to_string())
    );
    assert_eq!(
        (picked(1, "spec"), picked(1, "image")),
        ("lab".to_string(), CHOICE_IMAGE.to_string())
    );
    // Each is her launch on that spec: its folder at that spec's workdir, the same GPUs
    // asked, the same container name (she runs one server at a time).
    assert_eq!(
        alice[1]["binds"],
        serde_json::json!(["/project/work/alice:/workspace/work:rw"])
    );
    assert_eq!(alice[1]["gpus"], "1");
    assert_eq!(alice[0]["name"], alice[1]["name"]);
    assert_eq!(settings["members"]["bob"].as_array().map(Vec::len), Some(1));
}
