//! Unit tests of `team`.
use super::*;
use crate::app::session::Session;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::notice::Notice;
use crate::spec::Catalog;
use crate::{plan, team};
use std::path::PathBuf;

const TEAM: &str = "team: lab\ndefaults:\n  spec: cpu-headless\nmembers:\n";

fn team(members: &str) -> Team {
    team::parse(
        &format!("{TEAM}{members}"),
        "team.yaml",
        PathBuf::from("/project"),
    )
    .unwrap()
}

fn up_once(session: Session<'_, FakeEngine, FakeHost>, team: &Team) -> UpReport {
    crate::app::testing::up_team(session, team, "cpu-headless", None)
}

fn actions(report: &UpReport) -> Vec<(&str, Action)> {
    report
        .actions
        .iter()
        .map(|(member, action)| (member.as_str(), *action))
        .collect()
}

#[test]
fn up_creates_keeps_recreates_and_removes_members_as_the_file_says() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let alice = "  - name: alice\n    command: [\"sleep\", \"300\"]\n";
    let bob = |value: &str| {
        format!("  - name: bob\n    command: [\"sleep\", \"300\"]\n    env: {{MODE: {value}}}\n")
    };
    let first = up_once(
        Session::quiet(&engine, &host),
        &team(&format!("{alice}{}", bob("a"))),
    );
    assert_eq!(
        actions(&first),
        [("alice", Action::Created), ("bob", Action::Created)]
    );
    assert_eq!(engine.container_names(), ["lab-alice", "lab-bob"]);
    let bob_plan = engine.plan_of("lab-bob").unwrap();
    assert!(bob_plan.env.contains(&"MODE=a".to_string()));
    assert_eq!(bob_plan.labels[labels::TEAM], "lab");

    // The same file again: nothing is created.
    let creates = engine.calls_to("create").len();
    let same = up_once(
        Session::quiet(&engine, &host),
        &team(&format!("{alice}{}", bob("a"))),
    );
    assert_eq!(
        actions(&same),
        [("alice", Action::Unchanged), ("bob", Action::Unchanged)]
    );
    assert!(same.started.is_empty() && same.removed.is_empty());
    assert_eq!(engine.calls_to("create").len(), creates);

    // bob changes: only bob is made again.
    let changed = up_once(
        Session::quiet(&engine, &host),
        &team(&format!("{alice}{}", bob("b"))),
    );
    assert_eq!(
        actions(&changed),
        [("alice", Action::Unchanged), ("bob", Action::Recreated)]
    );
    assert_eq!(engine.calls_to("create").len(), creates + 1);
    assert!(engine
        .plan_of("lab-bob")
        .unwrap()
        .env
        .contains(&"MODE=b".to_string()));

    // alice leaves the file: her container goes, bob stays.
    let removed = up_once(Session::quiet(&engine, &host), &team(&bob("b")));
    assert_eq!(removed.removed, ["alice"]);
    assert_eq!(actions(&removed), [("bob", Action::Unchanged)]);
    assert_eq!(engine.container_names(), ["lab-bob"]);
}

#[test]
fn members_take_different_ports_and_a_member_that_cannot_start_is_reported() {
    let file = "  - name: alice\n    spec: cpu-jupyter\n  - name: bob\n    spec: cpu-jupyter\n";
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let jupyter = crate::spec::resolve(&catalog, "cpu-jupyter").unwrap();
    let specs = BTreeMap::from([("cpu-jupyter".to_string(), jupyter)]);
    let images = TeamImages {
        specs: BTreeMap::from([("cpu-jupyter".to_string(), "tfimg/cpu-jupyter:x".to_string())]),
        gateway: None,
        ..Default::default()
    };
    let bring_up = |engine: &FakeEngine| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(up(
                Session::quiet(engine, &FakeHost::new()),
                &team(file),
                &specs,
                &images,
                (4321, 4322),
                Some(false),
            ))
            .unwrap()
    };
    let engine = FakeEngine::new();
    let report = bring_up(&engine);
    assert_eq!(report.started.len(), 2);
    let port = |member: &str| {
        let plan = engine.plan_of(member).unwrap();
        assert_eq!(plan.restart, Some(plan::RestartPolicy::UnlessStopped));
        plan.ports
            .iter()
            .find(|port| port.name == "jupyter")
            .unwrap()
            .host
    };
    assert_ne!(port("lab-alice"), port("lab-bob"), "both wanted 8888");

    let engine = FakeEngine::new();
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(crate::engine::StartFailure::Engine(EngineFailure::gone()));
    let report = bring_up(&engine);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(report.started.len(), 1);
    assert_eq!(
        engine.container_names().len(),
        1,
        "the failed member is removed"
    );
}

/// An engine failure to script.
struct EngineFailure;

impl EngineFailure {
    fn gone() -> crate::engine::EngineError {
        crate::engine::EngineError::Failed {
            what: "start container".into(),
            message: "no such container".into(),
        }
    }
}

#[test]
fn a_member_s_mount_is_refused_on_a_remote_engine() {
    let lab = team("  - name: ada\n  - name: bob\n    mounts: [./data:/tf/data]\n");
    assert!(check_mounts_are_local(&lab, None).is_ok());
    let error = check_mounts_are_local(&lab, Some("ssh://gpu-box")).unwrap_err();
    assert_eq!(
        error.message,
        "member `bob`: the mount `./data` names a folder on this machine, but the engine `ssh://gpu-box` runs on another host"
    );
    assert!(
        error.hint.contains("run tfimg on that host itself"),
        "{}",
        error.hint
    );
    let without = team("  - name: ada\n");
    assert!(check_mounts_are_local(&without, Some("ssh://gpu-box")).is_ok());
}

/// Every member is prepared before any starts: a member's count takes none of the GPUs
/// the members prepared before it will hold, and a GPU they hold is refused by name.
#[test]
fn members_asking_one_gpu_each_get_different_ones() {
    let engine = FakeEngine::gpu_server("tfimg/cpu-headless:2.9.3-0123456789ab", 4);
    let host = FakeHost::new();
    let two = "  - name: alice\n    gpus: 1\n    command: [sleep, '9']\n  - name: bob\n    gpus: 1\n    command: [sleep, '9']\n";
    up_once(Session::quiet(&engine, &host), &team(two));
    let held: Vec<String> = ["lab-alice", "lab-bob"]
        .iter()
        .map(|name| {
            let state = engine.state.borrow();
            let container = state.containers.values().find(|c| c.name == *name);
            container.unwrap().labels[labels::GPUS].clone()
        })
        .collect();
    assert_eq!(held, ["0", "device=1"]);
    // A third asking for GPU 1 by index, in the same file, is refused naming bob.
    // Still running (the fake ends a command at once), they hold their GPUs; the second
    // `up` asks the server again.
    for container in engine.state.borrow_mut().containers.values_mut() {
        container.state = "running".to_string();
    }
    engine.answer_gpu_probe(4);
    let three = format!("{two}  - name: cy\n    gpus: [1]\n    command: [sleep, '9']\n");
    let refused = crate::app::testing::up_team_result(
        Session::quiet(&engine, &host),
        &team(&three),
        "cpu-headless",
        None,
    );
    let text = format!("{:#}", refused.unwrap_err());
    assert!(
        text.contains("GPU 1 by `lab-bob` (team lab, member bob)"),
        "{text}"
    );
    // `shared: true` takes it on purpose, labelled as sharing.
    engine.answer_gpu_probe(4);
    let sharing =
        format!("{two}  - name: cy\n    gpus: [1]\n    shared: true\n    command: [sleep, '9']\n");
    up_once(Session::quiet(&engine, &host), &team(&sharing));
    let state = engine.state.borrow();
    let cy = state
        .containers
        .values()
        .find(|c| c.name == "lab-cy")
        .unwrap();
    assert_eq!(cy.labels[labels::GPUS_SHARED], "true");
}

#[test]
fn members_on_a_gpu_server_are_checked_against_it_asking_it_once() {
    let engine = FakeEngine::gpu_server("tfimg/cpu-headless:2.9.3-0123456789ab", 2);
    // This machine has no GPU: only the server's facts let GPU 1 through.
    let host = FakeHost::new();
    let report = up_once(Session::quiet(&engine, &host),
        &team("  - name: alice\n    gpus: [0]\n    command: [sleep, '9']\n  - name: bob\n    gpus: [1]\n    command: [sleep, '9']\n"),
    );
    assert_eq!(
        actions(&report),
        [("alice", Action::Created), ("bob", Action::Created)]
    );
    assert_eq!(
        engine.calls_to("run-once").len(),
        2,
        "one query and one table for both members: {:?}",
        engine.calls()
    );
}

/// `idle:` reaches each member it applies to, not a member running a command, and `up`
/// says each setting is on: `kernels` as Jupyter's setting; `containers` as the idle
/// watch's variable and label, with `on-failure` (which leaves the container stopped when
/// the watch exits 0) in place of `unless-stopped`.
#[test]
fn idle_settings_reach_the_members_with_a_service_and_up_says_so() {
    let engine = FakeEngine::new();
    let host = FakeHost::new();
    let file = "team: lab\ndefaults: {spec: cpu-jupyter}\nidle: {kernels: 1h, containers: 12h}\nmembers:\n  - name: nb\n  - name: job\n    command: [sleep, '9']\n";
    let team = team::parse(file, "team.yaml", PathBuf::from("/project")).unwrap();
    let report =
        crate::app::testing::up_team(Session::quiet(&engine, &host), &team, "cpu-jupyter", None);
    for said in [
        "ran nothing for 1h (`idle: kernels`)",
        "nobody used for 12h",
        "`tfimg up` starts it again",
    ] {
        assert!(
            report.notes.iter().any(|note| note.text().contains(said)),
            "{said}: {:?}",
            report.notes
        );
    }
    let nb = engine.plan_of("lab-nb").unwrap();
    for variable in ["TFIMG_IDLE_KERNELS=3600", "TFIMG_IDLE_CONTAINERS=43200"] {
        assert!(nb.env.contains(&variable.to_string()), "{:?}", nb.env);
    }
    assert_eq!(
        nb.labels
            .get(crate::labels::IDLE_CONTAINERS)
            .map(String::as_str),
        Some("43200")
    );
    assert_eq!(
        nb.restart,
        Some(crate::plan::RestartPolicy::OnFailure(None))
    );
    let job = engine.plan_of("lab-job").unwrap();
    assert!(!job.env.iter().any(|entry| entry.starts_with("TFIMG_IDLE_")));
    assert!(!job.labels.contains_key(crate::labels::IDLE_CONTAINERS));
}

/// A member its idle watch stopped (exited, its output ending with the watch's line) is
/// started again by the next `up`, said as `restarted`; one that exited otherwise is
/// recreated as before.
#[test]
fn up_starts_a_member_stopped_idle_again() {
    let engine = FakeEngine::new();
    let host = FakeHost::new();
    let file = "team: lab\ndefaults: {spec: cpu-jupyter}\nidle: {containers: 12h}\nmembers:\n  - name: nb\n  - name: other\n";
    let team = team::parse(file, "team.yaml", PathBuf::from("/project")).unwrap();
    crate::app::testing::up_team(Session::quiet(&engine, &host), &team, "cpu-jupyter", None);
    {
        let mut state = engine.state.borrow_mut();
        for container in state.containers.values_mut() {
            container.state = "exited".to_string();
        }
        state.output.insert(
            "lab-nb".to_string(),
            "tfimg: stopping it\ntfimg: idle for 12h: stopped, with its data\n".to_string(),
        );
        state
            .output
            .insert("lab-other".to_string(), "[I] Shutting down\n".to_string());
    }
    let again =
        crate::app::testing::up_team(Session::quiet(&engine, &host), &team, "cpu-jupyter", None);
    assert_eq!(again.actions["nb"], Action::Woken);
    assert_eq!(again.actions["other"], Action::Recreated);
    let running: Vec<String> = engine
        .state
        .borrow()
        .containers
        .values()
        .filter(|c| c.state == "running")
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(running.len(), 2, "{running:?}");
}

/// Members' setuid files are kept out of other accounts' reach: a writable folder a
/// member mounts must lie below a folder no other account can enter and no member can
/// change. An open `mounts_root` is refused with the `chmod` that closes it, a closed
/// one (or one above it, as `/root` is) passes, a missing one is made closed (0700), and
/// a shared writable mount is refused the same way.
#[test]
fn members_folders_lie_below_a_folder_no_other_account_can_enter() {
    let host = FakeHost::new();
    let lab = team::parse(
        "team: lab\ndefaults:\n  spec: cpu-headless\n  mounts_root: ./work\nmembers:\n  - name: ada\n  - name: bob\n    mounts: [./shared:/tf/shared, ./data:/tf/data:ro]\n",
        "team.yaml",
        PathBuf::from("/project"),
    )
    .unwrap();
    // Nothing there yet: `mounts_root` is made closed; `./shared` (made open by the
    // launch) lies in `/project`, which others can enter.
    host.paths.borrow_mut().insert(PathBuf::from("/project"));
    let error = check_member_folders(&host, &lab).unwrap_err();
    assert_eq!(
        error.message,
        "member `bob`: other accounts on this machine can reach its folder `/project/shared`, where a program the member marks setuid would run as uid 4321 for any of them"
    );
    assert_eq!(
        error.hint,
        "make a folder on its way private: `chmod 700 /project` (the members' containers still reach their folders; only you and root can enter it)"
    );
    host.closed.borrow_mut().insert(PathBuf::from("/project"));
    check_member_folders(&host, &lab).unwrap();
    make_mounts_root(&host, &lab).unwrap();
    // An existing, open `mounts_root` below the closed `/project` is closed by it...
    host.paths
        .borrow_mut()
        .insert(PathBuf::from("/project/work"));
    check_member_folders(&host, &lab).unwrap();
    // ...unless a member mounts `/project` itself, writable: it could open it up.
    let wide = team::parse(
        "team: lab\ndefaults:\n  spec: cpu-headless\n  mounts_root: ./work\nmembers:\n  - name: ada\n  - name: bob\n    mounts: [/project:/tf/all]\n",
        "team.yaml",
        PathBuf::from("/project"),
    )
    .unwrap();
    let error = check_member_folders(&host, &wide).unwrap_err();
    assert_eq!(
        error.message,
        "member `ada`: other accounts on this machine can reach its folder `/project/work/ada`, where a program the member marks setuid would run as uid 4321 for any of them"
    );
    assert!(
        error.hint.contains("`chmod 700 /project/work`"),
        "{}",
        error.hint
    );
    // With `/project` open, an open `mounts_root` is refused naming itself.
    host.closed.borrow_mut().clear();
    host.closed
        .borrow_mut()
        .insert(PathBuf::from("/project/shared"));
    let error = check_member_folders(&host, &lab).unwrap_err();
    assert!(
        error.message.starts_with("member `ada`: other accounts"),
        "{}",
        error.message
    );
    assert!(
        error.hint.contains("`chmod 700 /project/work`"),
        "{}",
        error.hint
    );
}

/// A member folder another account planted (or owns) in `mounts_root` is refused naming
/// the owner before anything is created.
#[test]
fn a_member_folder_another_account_owns_is_refused() {
    let host = FakeHost::new();
    let lab = team::parse(
        "team: lab\ndefaults:\n  spec: cpu-headless\n  mounts_root: ./work\nmembers:\n  - name: ada\n",
        "team.yaml",
        PathBuf::from("/project"),
    )
    .unwrap();
    host.paths
        .borrow_mut()
        .insert(PathBuf::from("/project/work/ada"));
    host.closed.borrow_mut().insert(PathBuf::from("/project"));
    host.untrusted.borrow_mut().insert(
        PathBuf::from("/project/work/ada"),
        crate::host::Untrusted {
            path: PathBuf::from("/project/work/ada"),
            uid: 1001,
            owner: "mallory".into(),
            mode: 0o755,
            finding: crate::host::trusted::Finding::Owner,
        },
    );
    let error = check_member_folders(&host, &lab).unwrap_err();
    assert_eq!(
        error.message,
        "`/project/work/ada` belongs to `mallory` (uid 1001, mode 0755), not to you or root: tfimg uses member `ada`'s folder only where no other account can change it"
    );
}

/// The whole refusal as a user reads it.
fn refusal(result: anyhow::Result<UpReport>) -> String {
    let error = result.unwrap_err();
    match error.downcast::<crate::input::InputError>() {
        Ok(input) => format!("{}\nhint: {}", input.message, input.hint),
        Err(other) => format!("{other:#}"),
    }
}

/// Issue 45: a member asking for one GPU in the file, refused because every GPU is
/// held, was told to "ask for fewer (`--gpus 1`)", a flag `up` does not have. Every
/// refusal of a member names the team file's keys (`gpus:`, `shared: true`), never a flag.
#[test]
fn a_member_s_gpu_refusal_names_the_file_s_keys_never_a_flag() {
    let engine = FakeEngine::gpu_server("tfimg/cpu-headless:2.9.3-0123456789ab", 1);
    let host = FakeHost::new();
    let one = "  - name: alice\n    gpus: 1\n    command: [sleep, '9']\n";
    up_once(Session::quiet(&engine, &host), &team(one));
    for container in engine.state.borrow_mut().containers.values_mut() {
        container.state = "running".to_string();
    }
    for asked in ["1", "[0]", "all"] {
        engine.answer_gpu_probe(1);
        let both = format!("{one}  - name: bob\n    gpus: {asked}\n    command: [sleep, '9']\n");
        let text = refusal(crate::app::testing::up_team_result(
            Session::quiet(&engine, &host),
            &team(&both),
            "cpu-headless",
            None,
        ));
        assert!(
            text.starts_with("member `bob`: `gpus: "),
            "the member and its key: {text}"
        );
        assert!(text.contains("`shared: true`"), "{text}");
        assert!(
            !text.contains("`--") && !text.contains("`-p"),
            "no flag: {text}"
        );
    }
    assert_eq!(
        members::in_file_terms(
            "choose another with `-p OTHER:8888`, or leave `-p` out and tfimg picks a free one"
        ),
        "choose another in the member's `ports:`, or remove it from the member's `ports:` and tfimg picks a free one"
    );
    assert_eq!(
        member_note(
            "bob",
            &Notice::note("port 8888 (jupyter) is in use, so it is on 40001 instead (`-p HOST:8888` chooses)")
        ),
        Notice::note("`bob`: port 8888 (jupyter) is in use, so it is on 40001 instead (the member's `ports:` chooses)")
    );
}

/// Issue 45: the ports the file names are checked before anything is created: a member's
/// `ports:` held by another process, or a gateway's `gateway.port`, is refused naming the
/// key, and the engine was asked to create nothing (no container, no network). A port
/// the team's own running containers publish is the team's.
#[test]
fn taken_ports_the_file_names_are_refused_before_anything_is_created() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    host.held_ports.borrow_mut().insert(9001);
    let file = "  - name: alice\n    command: [sleep, '9']\n  - name: bob\n    spec: cpu-jupyter\n    ports: {jupyter: 9001}\n";
    let text = refusal(crate::app::testing::up_team_result(
        Session::quiet(&engine, &host),
        &team(file),
        "cpu-headless",
        None,
    ));
    assert_eq!(
        text,
        "member `bob`: host port 9001 (`jupyter: 9001` in its `ports:` in `team.yaml`) is already in use\nhint: choose another in member `bob`'s `ports:`, or remove `jupyter` there and tfimg picks a free one"
    );
    let gateway = format!("{TEAM}  - name: alice\ngateway:\n  port: 9001\n");
    let gateway = team::parse(&gateway, "team.yaml", PathBuf::from("/project")).unwrap();
    let text = refusal(crate::app::testing::up_team_result(
        Session::quiet(&engine, &host),
        &gateway,
        "cpu-headless",
        Some("tfimg/gateway:x"),
    ));
    assert!(
        text.starts_with(
            "the gateway's port 9001 (`gateway.port` in `team.yaml`) is already in use"
        ) && text.contains("hint: give the gateway a free port: `gateway.port` in `team.yaml`"),
        "{text}"
    );
    let made: Vec<_> = engine
        .calls()
        .into_iter()
        .filter(|call| call.starts_with("create") || call.contains("network"))
        .collect();
    assert!(made.is_empty(), "{made:?}");
}

/// Issue 45: a failure after the first create rolls back what this `up` made when
/// nothing of the team existed before (containers and networks); `--no-rollback` keeps
/// the members that came up; where members already ran, the default keeps them.
#[test]
fn a_failed_up_of_a_new_team_rolls_back_by_default() {
    let file =
        "  - name: alice\n    command: [sleep, '9']\n  - name: bob\n    command: [sleep, '9']\n";
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, "cpu-headless").unwrap();
    let specs = BTreeMap::from([("cpu-headless".to_string(), resolved)]);
    let images = TeamImages {
        specs: BTreeMap::from([(
            "cpu-headless".to_string(),
            "tfimg/cpu-headless:x".to_string(),
        )]),
        gateway: None,
        ..Default::default()
    };
    let bring_up = |engine: &FakeEngine, lab: &Team, rollback: Option<bool>| {
        crate::app::testing::block_on(up(
            Session::quiet(engine, &FakeHost::new()),
            lab,
            &specs,
            &images,
            (4321, 4322),
            rollback,
        ))
        .unwrap()
    };
    let failing = |engine: &FakeEngine| {
        engine
            .state
            .borrow_mut()
            .start_failures
            .push_back(crate::engine::StartFailure::Engine(EngineFailure::gone()));
    };
    let engine = FakeEngine::new();
    failing(&engine);
    let report = bring_up(&engine, &team(file), None);
    assert!(report.rollback && report.failures.len() == 1, "{report:?}");
    assert_eq!(report.rolled_back, 1);
    assert!(engine.container_names().is_empty());

    let engine = FakeEngine::new();
    failing(&engine);
    let report = bring_up(&engine, &team(file), Some(false));
    assert!(!report.rollback);
    assert_eq!(engine.container_names().len(), 1, "--no-rollback keeps it");

    // alice already ran; bob is new and fails: alice stays.
    let engine = FakeEngine::new();
    let alice = "  - name: alice\n    command: [sleep, '9']\n";
    bring_up(&engine, &team(alice), None);
    for container in engine.state.borrow_mut().containers.values_mut() {
        container.state = "running".to_string();
    }
    failing(&engine);
    let report = bring_up(&engine, &team(file), None);
    assert!(!report.rollback && report.failures.len() == 1, "{report:?}");
    assert_eq!(engine.container_names(), ["lab-alice"]);
}
