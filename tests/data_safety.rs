//! Data safety: whatever path a container takes out (`rm -f`, an attached run ending,
//! `stop` + `rm`, a failed `run`, `up` + `down`, a mount over the home folder), the host
//! side of a mount keeps every file it had, with its owner, mode, contents and time; only
//! what the container wrote is new.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use common::{container_state, scratch, tfimg_with_env, unique, wait_for, DockerGuard};

const HANG: Duration = Duration::from_secs(180);

/// path → (uid, gid, mode, size, mtime, contents or link target), never following links.
type Tree = BTreeMap<String, (u32, u32, u32, u64, i64, Vec<u8>)>;

fn tree(root: &Path) -> Tree {
    let mut entries = Tree::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        let contents = if metadata.is_symlink() {
            std::fs::read_link(&path)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else if metadata.is_file() {
            std::fs::read(&path).unwrap()
        } else {
            for child in std::fs::read_dir(&path).unwrap() {
                pending.push(child.unwrap().path());
            }
            Vec::new()
        };
        entries.insert(
            path.strip_prefix(root).unwrap().display().to_string(),
            (
                metadata.uid(),
                metadata.gid(),
                metadata.permissions().mode(),
                if metadata.is_dir() { 0 } else { metadata.len() },
                // A folder's time moves when the container adds a file to it.
                if metadata.is_dir() {
                    0
                } else {
                    metadata.mtime()
                },
                contents,
            ),
        );
    }
    entries
}

/// A folder of files with several owners and modes, a nested folder and a link that
/// points outside it (owners other than ours need root; otherwise they are all ours).
fn populate(root: &Path, outside: &Path) {
    let root_user = unsafe { libc::geteuid() } == 0;
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    let files: [(&str, u32, u32, u32); 5] = [
        ("kept.txt", 0, 0, 0o644),
        ("private.key", 0, 0, 0o600),
        ("colleague.ipynb", 1000, 1000, 0o640),
        ("sub/data.csv", 4321, 4322, 0o664),
        ("sub/deeper/run.sh", 2000, 2000, 0o755),
    ];
    for (path, uid, gid, mode) in files {
        let path = root.join(path);
        std::fs::write(&path, format!("contents of {}\n", path.display())).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        if root_user {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
        }
    }
    std::fs::set_permissions(root.join("sub"), std::fs::Permissions::from_mode(0o750)).unwrap();
    if root_user {
        // The folder is the (mapped) user's own, as a user's project folder is.
        std::os::unix::fs::chown(root, Some(4321), Some(4322)).unwrap();
        std::os::unix::fs::chown(root.join("sub/deeper"), Some(2000), Some(2000)).unwrap();
        std::os::unix::fs::chown(outside, Some(3000), Some(3000)).unwrap();
    }
    std::os::unix::fs::symlink(outside, root.join("outside-link")).unwrap();
}

/// Everything `before` had is unchanged in `after`; what is new is exactly `written`.
fn assert_only_added(before: &Tree, after: &Tree, written: &[&str], path: &str) {
    for (name, entry) in before {
        assert_eq!(
            after.get(name),
            Some(entry),
            "{path}: `{name}` changed or vanished"
        );
    }
    let added: Vec<&String> = after
        .keys()
        .filter(|name| !before.contains_key(*name))
        .collect();
    assert_eq!(added, written, "{path}: what is new on the host");
}

#[tokio::test]
async fn no_removal_path_deletes_or_re_owns_anything_on_the_host_side_of_a_mount() {
    let Some(_engine) = common::engine().await else { return };
    let folder = scratch(&[]);
    let data = folder.path().join("data");
    let outside = folder.path().join("outside.txt");
    std::fs::write(&outside, "not mounted\n").unwrap();
    populate(&data, &outside);
    let outside_before = std::fs::symlink_metadata(&outside).unwrap().uid();
    let names: Vec<String> = (0..6).map(|i| unique(&format!("t-safe-{i}"))).collect();
    let team = format!("tsafe{}", std::process::id());
    let members = [format!("{team}-keeper")];
    let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
    all.push(&members[0]);
    let _guard = DockerGuard::containers(&all);
    let xdg = folder.path().join("xdg");
    // The folder is 4321's, who runs `sudo tfimg` in it: the containers run as 4321 (as
    // root they would run as the image's user, who may not write there).
    let env = [
        ("XDG_DATA_HOME", xdg.to_str().unwrap()),
        ("SUDO_UID", "4321"),
        ("SUDO_GID", "4322"),
    ];
    let tfimg = |args: &[&str]| tfimg_with_env(folder.path(), args, &env);

    // 1. Detached, writes a file, removed with `rm -f` while running.
    let before = tree(&data);
    let run = tfimg(&[
        "run",
        "cpu-headless",
        "-d",
        "--no-build",
        "--name",
        &names[0],
        "--mount",
        "./data",
        "--uid",
        "4321",
        "--gid",
        "4322",
        "--",
        "sh",
        "-c",
        "echo from-container > /tf/data/written-1.txt; sleep 300",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());
    wait_for("the container's file", HANG, || {
        data.join("written-1.txt").exists()
    });
    assert_eq!(tfimg(&["rm", "-f", &names[0]]).code, 0);
    assert_eq!(container_state(&names[0]), None);
    assert_only_added(&before, &tree(&data), &["written-1.txt"], "rm -f");
    let metadata = std::fs::metadata(data.join("written-1.txt")).unwrap();
    assert_eq!(
        (metadata.uid(), metadata.gid()),
        (4321, 4322),
        "written as the mapped user"
    );

    // 2. Attached: the run ends, tfimg removes the container.
    let before = tree(&data);
    let run = tfimg(&[
        "run",
        "cpu-headless",
        "--no-build",
        "--name",
        &names[1],
        "--mount",
        "./data",
        "--",
        "sh",
        "-c",
        "echo fg > /tf/data/written-2.txt",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());
    assert_eq!(container_state(&names[1]), None);
    assert_only_added(&before, &tree(&data), &["written-2.txt"], "attached run");

    // 3. `stop` then `rm` of a notebook.
    let before = tree(&data);
    let run = tfimg(&[
        "run",
        "cpu-jupyter",
        "-d",
        "--no-build",
        "--name",
        &names[2],
        "--mount",
        "./data",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());
    assert_eq!(tfimg(&["stop", &names[2]]).code, 0);
    assert_eq!(tfimg(&["rm", &names[2]]).code, 0);
    assert_only_added(&before, &tree(&data), &[], "stop + rm");

    // 4. Runs that fail: a port someone holds (before anything exists), and GPUs on a
    //    host without the NVIDIA toolkit (the container is created, then fails to start).
    let before = tree(&data);
    let holder = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let held = holder.local_addr().unwrap().port().to_string();
    let run = tfimg(&[
        "run",
        "cpu-jupyter",
        "-d",
        "--no-build",
        "--name",
        &names[3],
        "--mount",
        "./data",
        "-p",
        &format!("{held}:8888"),
    ]);
    assert_eq!(run.code, 1, "{}", run.tail());
    assert_eq!(container_state(&names[3]), None);
    let run = tfimg(&[
        "run",
        "cpu-headless",
        "-d",
        "--no-build",
        "--name",
        &names[4],
        "--mount",
        "./data",
        "--gpus",
        "all",
        "--",
        "sleep",
        "300",
    ]);
    if run.code != 0 {
        assert_eq!(
            container_state(&names[4]),
            None,
            "a failed run leaves no container"
        );
    }
    let _ = tfimg(&["rm", "-f", &names[4]]);
    assert_only_added(&before, &tree(&data), &[], "failed runs");

    // 5. The mount is the home folder itself: the entrypoint re-owns the image's home
    //    only when it is not a mount.
    let before = tree(&data);
    let run = tfimg(&[
        "run",
        "cpu-headless",
        "-d",
        "--no-build",
        "--name",
        &names[5],
        "--mount",
        "./data:/home/tf",
        "--uid",
        "4321",
        "--",
        "sleep",
        "300",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());
    wait_for("the container to run", HANG, || {
        container_state(&names[5]).as_deref() == Some("running")
    });
    assert_eq!(tfimg(&["rm", "-f", &names[5]]).code, 0);
    assert_only_added(&before, &tree(&data), &[], "mount over the home folder");

    // 6. A team member on the folder: `up`, then `down`.
    std::fs::write(
        folder.path().join("team.yaml"),
        format!(
            "team: {team}\nmembers:\n  - name: keeper\n    spec: cpu-headless\n    mounts: [\"./data:/tf/data\"]\n    command: [\"sleep\", \"300\"]\n"
        ),
    )
    .unwrap();
    let before = tree(&data);
    // A member's writable folder must be out of other accounts' reach (a setuid file she
    // leaves there would run as the members' uid): the project folder is made private,
    // as `up`'s hint asks.
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let up = tfimg(&["up", "team.yaml", "--ca-cert", common::HOST_CA]);
    assert_eq!(up.code, 0, "{}", up.tail());
    let down = tfimg(&["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.tail());
    assert_eq!(container_state(&members[0]), None);
    assert_only_added(&before, &tree(&data), &[], "up + down");

    // The file outside, reached only through a link, was never touched.
    assert_eq!(
        std::fs::symlink_metadata(&outside).unwrap().uid(),
        outside_before
    );
}

/// The entrypoint hands the image's home, workdir and `files:` to the mapped user. When
/// one of them lies *inside* a mount (a workdir `/mnt/tf` under `-v ./proj:/mnt`, the home
/// under `-v X:/home`, a `files:` destination under `--mount ./data:/data`), it is the
/// host's and is left alone whole; tfimg refuses such mounts where it can, and the image
/// itself stays safe when started by other tools (issue 12, item 1). A uid of 4294967295,
/// "unchanged" to setpriv, is refused by the image itself (item 2).
#[tokio::test]
async fn nothing_inside_a_mount_is_re_owned_even_when_the_mount_holds_the_workdir_or_home() {
    let Some(_engine) = common::engine().await else { return };
    let spec_name = unique("tdeep");
    let image = format!("tfimg/{spec_name}:2.9.3");
    let names: Vec<String> = (0..4).map(|i| unique(&format!("t-deep-{i}"))).collect();
    let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
    let repository = format!("tfimg/{spec_name}");
    all.push(&repository);
    let _images = DockerGuard::images(&[&repository]);
    let _containers = DockerGuard::containers(&all[..4]);
    let folder = scratch(&[
        (
            "images/deep.yaml",
            &format!("name: {spec_name}\nextends: cpu-headless\nworkdir: /mnt/tf\nfiles:\n  - ../code:/data/code\n"),
        ),
        ("code/train.py", "print('image copy')\n"),
    ]);
    let outside = folder.path().join("outside.txt");
    std::fs::write(&outside, "not mounted\n").unwrap();
    // Host folders whose insides look like the image's (owned by 1000, the image user's
    // ids, which the entrypoint re-owns in the image's own folders).
    let proj = folder.path().join("proj");
    let homes = folder.path().join("homes");
    let data = folder.path().join("data");
    populate(&proj.join("tf"), &outside);
    populate(&homes.join("tf"), &outside);
    populate(&data.join("code"), &outside);
    if unsafe { libc::geteuid() } == 0 {
        for root in [homes.join("tf"), data.join("code")] {
            std::os::unix::fs::chown(&root, Some(1000), Some(1000)).unwrap();
        }
    }
    let xdg = folder.path().join("xdg");
    let env = [("XDG_DATA_HOME", xdg.to_str().unwrap())];
    let tfimg = |args: &[&str]| tfimg_with_env(folder.path(), args, &env);
    let build = tfimg(&["build", "./images/deep.yaml", "--ca-cert", common::HOST_CA]);
    assert_eq!(build.code, 0, "{}", build.tail());
    let trees = || (tree(&proj), tree(&homes), tree(&data));
    let before = trees();

    // tfimg refuses a mount that would hold the workdir, before anything exists.
    let refused = tfimg(&[
        "run",
        "./images/deep.yaml",
        "--no-build",
        "--name",
        &names[0],
        "--mount",
        "./proj:/mnt",
        "--",
        "true",
    ]);
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(
        refused.stderr.ends_with("error: `--mount ./proj:/mnt`: the destination `/mnt` would hide the image's workdir `/mnt/tf`\nhint: mount at `/mnt/tf` itself or beside it, such as `--mount ./proj:/data`\n"),
        "{}",
        refused.stderr
    );
    assert_eq!(container_state(&names[0]), None);

    // A `files:` destination inside a mount: left to the host.
    let run = tfimg(&[
        "run",
        "./images/deep.yaml",
        "--no-build",
        "--name",
        &names[1],
        "--mount",
        "./data:/data",
        "--uid",
        "4321",
        "--gid",
        "4322",
        "--",
        "sh",
        "-c",
        "id -u; ls /data/code",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());
    assert!(run.stdout.starts_with("4321\n"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("tfimg: /data/code is on a mount: left as it is"),
        "{}",
        run.stderr
    );

    // Started by another tool as tfimg starts it (as root, to map the user): the image's
    // entrypoint alone keeps the host's files as they are.
    let started = std::process::Command::new("docker")
        .args([
            "run",
            "--name",
            &names[2],
            "--user",
            "root",
            "-e",
            "TFIMG_UID=4321",
            "-e",
            "TFIMG_GID=4322",
            "-v",
            &format!("{}:/mnt", proj.display()),
            "-v",
            &format!("{}:/home", homes.display()),
            &image,
            "sh",
            "-c",
            "id -u; touch /mnt/tf/written-by-container",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&started.stderr);
    assert!(started.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&started.stdout), "4321\n");
    for path in ["/home/tf", "/mnt/tf"] {
        assert!(
            stderr.contains(&format!("tfimg: {path} is on a mount: left as it is")),
            "{stderr}"
        );
    }
    let after = trees();
    assert_only_added(
        &before.0,
        &after.0,
        &["tf/written-by-container"],
        "workdir inside a mount",
    );
    assert_only_added(&before.1, &after.1, &[], "home inside a mount");
    assert_only_added(&before.2, &after.2, &[], "files: inside a mount");

    // (uid_t)-1 means "unchanged" to setpriv: the image refuses it instead of staying root.
    let root_asked = std::process::Command::new("docker")
        .args([
            "run",
            "--name",
            &names[3],
            "--user",
            "root",
            "-e",
            "TFIMG_UID=4294967295",
            "-e",
            "TFIMG_GID=4322",
            &image,
            "id",
            "-u",
        ])
        .output()
        .unwrap();
    assert_eq!(root_asked.status.code(), Some(64));
    assert_eq!(String::from_utf8_lossy(&root_asked.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&root_asked.stderr),
        "tfimg: TFIMG_UID and TFIMG_GID must be numbers from 0 to 2147483647, got '4294967295:4322'\n"
    );
}
