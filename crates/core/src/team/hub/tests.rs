//! Unit tests of `hub`: the checks of `hub:` and what the hub reads at start.
use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use crate::plan::cache::VolumePlan;
use crate::plan::gpus::GpuPlan;
use crate::plan::mounts::MountPlan;
use crate::team::{parse, Team};

fn cpu_jupyter() -> crate::spec::ResolvedSpec {
    let catalog = crate::spec::Catalog::builtin(PathBuf::from("/"));
    crate::spec::resolve(&catalog, "cpu-jupyter").unwrap()
}

fn team(text: &str) -> Result<Team, String> {
    parse(text, "team.yaml", PathBuf::from("/lab")).map_err(|error| error.to_string())
}

const MEMBERS: &str = "members:\n  - name: alice\n  - name: bob\n";

fn with_hub(hub: &str) -> Result<Team, String> {
    team(&format!(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\n{MEMBERS}hub:\n{hub}"
    ))
}

#[test]
fn defaults_are_native_sign_in_on_loopback_with_a_self_signed_certificate() {
    let hub = with_hub("  admins: [alice]\n").unwrap().hub.unwrap();
    assert_eq!(
        hub,
        Hub {
            auth: Auth::Native,
            admins: vec!["alice".to_string()],
            port: DEFAULT_PORT,
            public: false,
            tls: Tls::SelfSigned,
        }
    );
    assert_eq!(hub.login_url(), "https://127.0.0.1:8443/hub/login");
    let public = with_hub("  auth: native\n  port: 9443\n  public: true\n")
        .unwrap()
        .hub
        .unwrap();
    assert_eq!(public.address(), "https://0.0.0.0:9443/");
    assert!(public.admins.is_empty());
}

#[test]
fn bad_hubs_are_refused_at_their_line_with_a_hint() {
    for (hub, expected) in [
        (
            "  auth: ldap\n",
            "`team.yaml`:8:9: hub `auth: ldap` is not one tfimg knows",
        ),
        (
            "  admins: [carol]\n",
            "`team.yaml`:8:11: hub admin `carol` is not a member of the team",
        ),
        (
            "  port: 70000\n",
            "`team.yaml`:8:9: hub port 70000 is out of range",
        ),
        (
            "  tls: homemade\n",
            "`team.yaml`:8:8: hub `tls: homemade` is not `self-signed`",
        ),
        (
            "  pasword: x\n",
            "`team.yaml`:8:3: hub: unknown field `pasword`, expected one of `auth`, `admins`, `port`, `public`, `tls`",
        ),
    ] {
        let error = with_hub(hub).unwrap_err();
        assert!(error.starts_with(expected), "{hub:?}: {error}");
    }
    let both = team(
        "team: lab\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\ngateway: {}\nhub: {}\n",
    )
    .unwrap_err();
    assert!(
        both.starts_with("`team.yaml`:6:1: a team has a `gateway:` or a `hub:`, not both"),
        "{both}"
    );
    let named_hub =
        team("team: lab\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: hub\nhub: {}\n")
            .unwrap_err();
    assert!(named_hub.contains("member `hub` has the name of the team's hub container"));
    let port = team(
        "team: lab\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    ports: {jupyter: 8890}\nhub: {}\n",
    )
    .unwrap_err();
    assert!(
        port.contains("member `alice`: `jupyter` is reached through the hub"),
        "{port}"
    );
}

pub(super) fn plan() -> LaunchPlan {
    LaunchPlan {
        name: "lab-alice".to_string(),
        image: "tfimg/cpu-jupyter:2.9.3-abc".to_string(),
        command: Vec::new(),
        env: vec![
            "TFIMG_GID=1000".to_string(),
            "TFIMG_JUPYTER_BASE_URL=/".to_string(),
            "TFIMG_JUPYTER_TOKEN=secret-token-of-alice".to_string(),
            "TFIMG_UID=1000".to_string(),
            "WANDB_MODE=offline".to_string(),
        ],
        labels: BTreeMap::from([
            ("io.tfimg.member".to_string(), "alice".to_string()),
            (
                "io.tfimg.url.jupyter".to_string(),
                "http://127.0.0.1:8888/lab".to_string(),
            ),
        ]),
        user: None,
        mounts: vec![MountPlan {
            source: PathBuf::from("/lab/work/alice"),
            target: "/tf/work".to_string(),
            read_only: false,
        }],
        volumes: vec![VolumePlan {
            name: "datasets".to_string(),
            target: "/data".to_string(),
            read_only: true,
            labels: BTreeMap::new(),
        }],
        ports: Vec::new(),
        gpu: GpuPlan::None,
        memory: Some(1 << 30),
        nano_cpus: None,
        shm_size: 1 << 28,
        restart: None,
        cap_drop: vec!["ALL".to_string()],
        security_opt: vec!["no-new-privileges".to_string()],
        network: Some("tfimg-lab-alice".to_string()),
        jupyter_inside: None,
        endpoints: Vec::new(),
    }
}

#[test]
fn a_profile_is_the_launch_plan_less_the_token_and_addresses() {
    let team = with_hub("  admins: [alice]\n").unwrap();
    let mut alice = team.members[0].clone();
    alice.gpus = crate::plan::gpus::GpuSelection::Count(1);
    let profile = profile("lab", &plan(), &alice, &cpu_jupyter());
    assert_eq!(profile.spec, "cpu-jupyter");
    assert!(
        profile.description.contains("JupyterLab"),
        "{}",
        profile.description
    );
    assert_eq!(profile.gpus.as_deref(), Some("1"));
    assert!(!profile.shared_gpus);
    assert_eq!(
        profile.env.keys().collect::<Vec<_>>(),
        ["TFIMG_GID", "TFIMG_HUB", "TFIMG_UID", "WANDB_MODE"]
    );
    assert_eq!(profile.env["TFIMG_HUB"], "1");
    assert_eq!(
        profile.labels,
        BTreeMap::from([
            ("io.tfimg.hub".to_string(), "lab".to_string()),
            ("io.tfimg.member".to_string(), "alice".to_string()),
        ])
    );
    assert_eq!(
        profile.binds,
        ["/lab/work/alice:/tf/work:rw", "datasets:/data:ro"]
    );
    assert_eq!(profile.network, "tfimg-lab-alice");
    assert_eq!(profile.mem_limit, Some(1 << 30));
    let hub = team.hub.clone().unwrap();
    let json = settings(
        &team,
        &hub,
        BTreeMap::from([("alice".to_string(), vec![profile])]),
        None,
    )
    .to_json();
    assert!(!json.contains("secret-token-of-alice"), "{json}");
    let read: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(read["hub_host"], "lab-hub");
    assert_eq!(read["admins"][0], "alice");
    assert_eq!(
        read["members"]["alice"][0]["image"],
        "tfimg/cpu-jupyter:2.9.3-abc"
    );
}

#[test]
fn a_member_s_choices_are_her_other_specs_and_need_a_hub() {
    let text = |extra: &str, choices: &str| {
        format!("team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: alice\n    choices: {choices}\n  - name: bob\n{extra}")
    };
    let hub = "hub:\n  auth: native\n";
    let lab = team(&text(hub, "[tf218-cpu-jupyter, lab]")).unwrap();
    assert_eq!(
        lab.members[0].specs().collect::<Vec<_>>(),
        ["cpu-jupyter", "tf218-cpu-jupyter", "lab"]
    );
    assert_eq!(
        (
            lab.members[0].choices_location.line,
            lab.members[0].choices_location.column
        ),
        (6, 5)
    );
    assert_eq!(lab.members[1].specs().collect::<Vec<_>>(), ["cpu-jupyter"]);
    assert_eq!(lab.members[0].with_spec("lab").spec, "lab");

    let refused = |extra: &str, choices: &str| team(&text(extra, choices)).unwrap_err();
    let without_hub = refused("", "[lab]");
    assert!(
        without_hub.starts_with(
            "`team.yaml`:6:5: member `alice` has `choices:`, which only a team with `hub:` offers"
        ),
        "{without_hub}"
    );
    let hint = parse(&text("", "[lab]"), "team.yaml", PathBuf::from("/lab"))
        .unwrap_err()
        .hint;
    assert!(hint.contains("add `hub: {auth: native}`"), "{hint}");
    let own = refused(hub, "[cpu-jupyter]");
    assert!(
        own.starts_with(
            "`team.yaml`:6:5: member `alice`: `cpu-jupyter` is her `spec` and one of her `choices`"
        ),
        "{own}"
    );
    let twice = refused(hub, "[lab, lab]");
    assert!(twice.contains("choice `lab` is listed twice"), "{twice}");
    let empty = refused(hub, "['']");
    assert!(empty.contains("a choice is empty"), "{empty}");
    let not_a_list = refused(hub, "lab");
    assert!(not_a_list.starts_with("`team.yaml`:6:"), "{not_a_list}");
    let command = team(&format!(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: alice\n    command: [python, train.py]\n    choices: [lab]\n{hub}"
    ))
    .unwrap_err();
    assert!(
        command.starts_with("`team.yaml`:7:5: member `alice` runs a `command` and has `choices:`"),
        "{command}"
    );
}
