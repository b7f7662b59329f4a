//! The other accounts of a shared server (docs/architecture.md, "Trust boundaries":
//! another local account → tfimg, member files → host), played for real: root runs tfimg,
//! and a second account made for each test (`common::account`, removed after it) plants
//! folders, journals and links where root's tfimg will look, or runs what a team member
//! left in her folder. Each test fails on the tfimg before issue 44: root's `sweep`
//! followed a planted journal link and made the file it named, `sweep stop` stopped the
//! container a planted journal named, `compose` wrote the gateway's configuration into a
//! planted folder, and a member's setuid copy of `id` ran as the members' uid for anyone.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::account::Account;
use common::tfimg;
use tfimg_testing::engine::prelude::*;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A running container that is no sweep's trial (a member's Jupyter, say), by its id.
fn bystander(name: &str) -> String {
    let id = common::docker(&[
        "run",
        "-d",
        "--name",
        name,
        "debian:bullseye-slim",
        "sleep",
        "600",
    ]);
    assert!(!id.trim().is_empty(), "the bystander container started");
    id.trim().to_string()
}

/// A sweep's folder as another account would plant it: its sweep file and a journal whose
/// trial t001 runs in container `id`.
fn planted_journal(sweep: &str, id: &str) -> (String, String) {
    use tfimg_testing::sweep::journal::{Event, Fingerprint};
    let text = format!(
        "sweep: {sweep}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sleep, \"1\"]\ntrials: [{{n: 1}}]\n"
    );
    let events = [
        Event::SweepStarted {
            sweep: sweep.to_string(),
            trials: 1,
            fingerprint: Fingerprint(Default::default()),
            time_ms: 1_800_000_000_000,
        },
        Event::TrialStarted {
            trial: "t001".into(),
            attempt: 1,
            container: format!("{sweep}-t001"),
            container_id: id.to_string(),
            gpus: vec![],
            image: "sha256:abc".into(),
            time_ms: 1_800_000_001_000,
        },
    ];
    (text, events.iter().map(Event::line).collect())
}

/// Another account plants a sweep's folder where root's tfimg looks: `runs/NAME` in a
/// shared project folder (sticky and world-writable, as /tmp), whose journal is a link to
/// a file it wants root to make, or a journal naming a running container that is no
/// trial; and a folder at the path tfimg remembered for a sweep, after it was deleted.
/// `sweep`, `sweep stop NAME` from the project and from `/`: each refuses with exit 1,
/// naming the account and the mode; the linked file is never made, nothing is written
/// into the planted folders, and the container keeps running.
#[tokio::test]
async fn sweep_folders_another_account_planted_are_refused_and_the_container_they_name_runs_on() {
    let Some(_engine) = common::engine().await else { return };
    let Some(mallory) = Account::new() else { return };
    let name = common::unique("t-planted").to_lowercase();
    let victim_name = format!("{name}-jupyter");
    let _guard = common::DockerGuard::containers(&[&victim_name]);
    let _record = common::sweep::sweep_guard(&name);
    let victim = bystander(&victim_name);
    let folder = common::scratch(&[]);
    chmod(folder.path(), 0o755);
    let shared = folder.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let project = shared.join("proj");
    std::fs::create_dir(&project).unwrap();
    let sweep_file = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, 'echo acc=1']\ntrials: [{{n: 1}}]\n"
    );
    std::fs::write(project.join("sweep.yaml"), &sweep_file).unwrap();
    chmod(&project, 0o1777);

    // 1. `runs/NAME/journal.jsonl` a link to a file root would make.
    let made_by_root = folder.path().join("made-by-root");
    let planted = project.join("runs").join(&name);
    mallory.must(&format!(
        "mkdir -p {0} && ln -s {1} {0}/journal.jsonl",
        planted.display(),
        made_by_root.display()
    ));
    let run = tfimg(&project, &["sweep", "sweep.yaml"]);
    assert!(!made_by_root.exists(), "root made the file the link named");
    assert_eq!(run.code, 1, "{}", run.tail());
    let runs = project.join("runs");
    let refusal = format!(
        "error: `{}` belongs to `{}` (uid {}, mode 0755), not to you or root: tfimg uses a sweep's folder only where no other account can change it\n",
        runs.display(),
        mallory.name,
        mallory.uid
    );
    assert!(run.stderr.contains(&refusal), "{}", run.stderr);
    assert!(
        run.stderr.contains("hint: another account made it"),
        "{}",
        run.stderr
    );
    assert!(common::sweep::sweep_containers(&name).is_empty());

    // 2. A journal naming the running container: `sweep stop` by name, and by path.
    let (copy, journal) = planted_journal(&name, &victim);
    mallory.must(&format!(
        "rm {0}/journal.jsonl && printf '%s' '{1}' > {0}/journal.jsonl && printf '%s' '{2}' > {0}/sweep.yaml",
        planted.display(),
        journal.replace('\'', ""),
        copy.replace('\'', "")
    ));
    for target in [name.as_str(), "runs"] {
        let target = if target == "runs" {
            planted.display().to_string()
        } else {
            target.to_string()
        };
        let run = tfimg(&project, &["sweep", "stop", &target]);
        assert_eq!(
            common::container_state(&victim_name).as_deref(),
            Some("running"),
            "{target}: {}",
            run.tail()
        );
        assert_eq!(run.code, 1, "{target}: {}", run.tail());
        assert!(run.stderr.contains(&refusal), "{}", run.stderr);
    }
    assert_eq!(
        common::container_state(&victim_name).as_deref(),
        Some("running")
    );
    let mut entries: Vec<String> = std::fs::read_dir(&planted)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        ["journal.jsonl", "sweep.yaml"],
        "nothing written there"
    );

    // 3. The folder tfimg remembers for the sweep (it ran in `shared/gone`, since
    // deleted), planted again by the other account: `cd / && tfimg sweep stop NAME`.
    std::fs::remove_dir_all(&planted).unwrap();
    let gone = shared.join("gone").join("runs").join(&name);
    let record = tfimg_testing::host::machine::data_dir()
        .join("sweeps")
        .join(&name);
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    std::fs::write(&record, gone.display().to_string()).unwrap();
    mallory.must(&format!(
        "mkdir -p {0} && printf '%s' '{1}' > {0}/journal.jsonl && printf '%s' '{2}' > {0}/sweep.yaml",
        gone.display(),
        journal.replace('\'', ""),
        copy.replace('\'', "")
    ));
    let run = tfimg(Path::new("/"), &["sweep", "stop", &name]);
    assert_eq!(
        common::container_state(&victim_name).as_deref(),
        Some("running"),
        "{}",
        run.tail()
    );
    assert_eq!(run.code, 1, "{}", run.tail());
    let refusal = format!(
        "error: `{}` belongs to `{}` (uid {}, mode 0755), not to you or root",
        shared.join("gone").display(),
        mallory.name,
        mallory.uid
    );
    assert!(run.stderr.contains(&refusal), "{}", run.stderr);
    assert_eq!(
        common::container_state(&victim_name).as_deref(),
        Some("running")
    );
    assert!(
        !gone.join("t001").exists(),
        "nothing copied into the planted folder"
    );
}

/// `compose -o` into an output folder other accounts share: the other account made the
/// gateway's folder `<team>.gateway` there first. With the shared folder writable by
/// every account, the export is refused naming it; with the folder root's own but the
/// gateway's folder the other account's, refused naming that account. Either way no
/// byte is written into the planted folder and it stays the other account's.
#[test]
fn a_gateway_folder_another_account_planted_beside_a_compose_file_is_refused() {
    let Some(mallory) = Account::new() else { return };
    let team = "planted";
    let team_file = format!(
        "team: {team}\ndefaults:\n  spec: cpu-jupyter\ngateway: {{domain: lab.example.org}}\nmembers:\n  - name: alice\n"
    );
    let folder = common::scratch(&[("team.yaml", &team_file)]);
    chmod(folder.path(), 0o755);
    let out = folder.path().join("out");
    std::fs::create_dir(&out).unwrap();
    chmod(&out, 0o1777);
    let gateway = out.join(format!("{team}.gateway"));
    mallory.must(&format!("mkdir {}", gateway.display()));
    let no_daemon = [("DOCKER_HOST", "unix:///nonexistent/docker.sock")];
    let compose = || {
        common::tfimg_with_env(
            folder.path(),
            &["compose", "team.yaml", "-o", "out/team.yaml"],
            &no_daemon,
        )
    };
    let untouched = || {
        assert_eq!(std::fs::metadata(&gateway).unwrap().uid(), mallory.uid);
        assert_eq!(
            std::fs::read_dir(&gateway).unwrap().count(),
            0,
            "written into"
        );
    };
    // The shared folder itself is refused first, before anything is made in it.
    let run = compose();
    untouched();
    assert_eq!(run.code, 1, "{}", run.tail());
    assert!(
        run.stderr.contains(&format!(
            "error: `{}` can be written by every account (owner `root`, mode 1777): tfimg uses an export's folder only where no other account can change it\n\
             hint: make it yours alone with `chmod go-w {0}`",
            out.display()
        )),
        "{}",
        run.stderr
    );
    untouched();
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        1,
        "only the planted folder"
    );

    chmod(&out, 0o755);
    let run = compose();
    assert_eq!(run.code, 1, "{}", run.tail());
    assert!(
        run.stderr.contains(&format!(
            "error: `{}` belongs to `{}` (uid {}, mode 0755), not to you or root: tfimg uses an export's folder only where no other account can change it\n",
            gateway.display(),
            mallory.name,
            mallory.uid
        )),
        "{}",
        run.stderr
    );
    untouched();
}

/// A member's folder under `mounts_root` that another account made (or owns) is refused
/// by `up` and `compose` before anything is created, naming the account; the folder is
/// left as it was.
#[tokio::test]
async fn a_member_folder_another_account_owns_is_refused_before_anything_is_created() {
    let Some(engine) = common::engine().await else { return };
    let Some(mallory) = Account::new() else { return };
    let name = common::unique("t-plantm").replace('-', "");
    let team = format!("t{}", &name[name.len() - 12..]).to_lowercase();
    let _guard = common::DockerGuard::containers(&[&format!("{team}-alice")]);
    let team_file = format!(
        "team: {team}\ndefaults:\n  spec: cpu-headless\n  mounts_root: ./work\nmembers:\n  - name: alice\n"
    );
    let folder = common::scratch(&[("team.yaml", &team_file)]);
    let work = folder.path().join("work");
    std::fs::create_dir(&work).unwrap();
    chmod(&work, 0o700);
    let alice = work.join("alice");
    std::fs::create_dir(&alice).unwrap();
    std::fs::write(alice.join("notes.txt"), "mallory's\n").unwrap();
    std::os::unix::fs::chown(&alice, Some(mallory.uid), Some(mallory.uid)).unwrap();
    let before = std::fs::metadata(&alice).unwrap().mode();
    for args in [
        vec!["up", "team.yaml", "--ca-cert", common::HOST_CA],
        vec!["compose", "team.yaml", "-o", "out/team.yaml"],
    ] {
        let run = tfimg(folder.path(), &args);
        assert_eq!(
            common::container_state(&format!("{team}-alice")),
            None,
            "{args:?}"
        );
        assert_eq!(run.code, 1, "{args:?}: {}", run.tail());
        let refusal = format!(
            "error: `{}` belongs to `{}` (uid {}, mode 0755), not to you or root: tfimg uses member `alice`'s folder only where no other account can change it\n",
            alice.display(),
            mallory.name,
            mallory.uid
        );
        assert!(run.stderr.contains(&refusal), "{args:?}: {}", run.stderr);
    }
    assert!(engine
        .container(&format!("{team}-alice"))
        .await
        .unwrap()
        .is_none());
    assert!(!folder.path().join("out").exists());
    let metadata = std::fs::metadata(&alice).unwrap();
    assert_eq!((metadata.uid(), metadata.mode()), (mallory.uid, before));
}

/// A member copies `id` into her folder and marks it setuid (no capability needed: it is
/// her file). Members run as one uid; another account runs her copy and must not get that
/// uid. `mounts_root` is made private (0700) under a project folder everyone can enter, so
/// the copy is out of the other account's reach, while the member keeps using her folder.
/// A `mounts_root` that other accounts can enter is then refused by `up` with the `chmod`
/// that closes it. (A probe first shows that setuid works on this file system, so the
/// test could fail: before issue 44 the other account got the members' uid.)
#[tokio::test]
async fn a_member_s_setuid_file_gives_another_account_no_uid() {
    let Some(_engine) = common::engine().await else { return };
    let Some(mallory) = Account::new() else { return };
    let name = common::unique("t-setuid").replace('-', "");
    let team = format!("t{}", &name[name.len() - 12..]).to_lowercase();
    let member = format!("{team}-alice");
    let _guard = common::DockerGuard::containers(&[&member]);
    let team_file = format!(
        "team: {team}\ndefaults:\n  spec: cpu-headless\n  mounts_root: ./work\nmembers:\n  - name: alice\n"
    );
    let folder = common::scratch(&[("team.yaml", &team_file)]);
    // A project folder as on a lab server (/srv/lab): every account may enter it.
    chmod(folder.path(), 0o755);
    let run = tfimg(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", common::HOST_CA],
    );
    assert_eq!(run.code, 0, "{}", run.tail());
    let work = folder.path().join("work");
    let members_uid = std::fs::metadata(work.join("alice")).unwrap().uid();
    assert_ne!(members_uid, mallory.uid);

    // The probe: a setuid copy of `id` owned by the members' uid where the account can
    // reach it runs as that uid.
    let probe = folder.path().join("probe-id");
    std::fs::copy("/usr/bin/id", &probe).unwrap();
    std::os::unix::fs::chown(&probe, Some(members_uid), None).unwrap();
    chmod(&probe, 0o4755);
    let output = mallory.run(&format!("{} -u", probe.display()));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        members_uid.to_string(),
        "setuid works on this file system: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::remove_file(&probe).unwrap();

    // The member leaves her setuid copy in her folder.
    let made = common::docker(&[
        "exec",
        "-u",
        &members_uid.to_string(),
        &member,
        "sh",
        "-c",
        "cp /usr/bin/id /tf/work/id && chmod 4755 /tf/work/id && ls -l /tf/work/id",
    ]);
    assert!(made.starts_with("-rwsr-xr-x"), "{made}");
    let copy = work.join("alice").join("id");
    assert_eq!(std::fs::metadata(&copy).unwrap().mode() & 0o7777, 0o4755);
    let output = mallory.run(&format!("{} -u", copy.display()));
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        !output.status.success() && printed.trim().is_empty(),
        "another account ran the member's setuid file: {printed}"
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("Permission denied"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::metadata(&work).unwrap().mode() & 0o7777, 0o700);
    let down = tfimg(folder.path(), &["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.tail());

    // A `mounts_root` other accounts can enter is refused, with the fix.
    chmod(&work, 0o755);
    let run = tfimg(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", common::HOST_CA],
    );
    assert_eq!(run.code, 1, "{}", run.tail());
    let shown = work.join("alice").display().to_string();
    assert!(
        run.stderr.contains(&format!(
            "error: member `alice`: other accounts on this machine can reach its folder `{shown}`, where a program the member marks setuid would run as uid {members_uid} for any of them\n\
             hint: make a folder on its way private: `chmod 700 {}`",
            work.display()
        )),
        "{}",
        run.stderr
    );
    assert_eq!(common::container_state(&member), None);
}
