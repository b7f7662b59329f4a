//! Code and data without bind mounts, against the real Docker Engine: `--sync` copies a
//! folder in (what git and Docker ignore stays behind, the files belong to the run's
//! user), `--sync-back` brings the outputs home after the run and after Ctrl-C,
//! `pull-files` copies from a stopped detached run, and `--volume` keeps data between
//! runs, writable by the run's user from the first one. Each test names its containers
//! and volumes uniquely and removes them when it ends, failed or not.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use common::{docker, scratch, spawn_tfimg, tfimg_with_env, unique, DockerGuard, HOST_CA};

/// `tfimg <args>` from `folder`, with its own data folder; `run` gets this machine's CA
/// before any `--` (so the spec's build key is the warm cache's).
fn tfimg(folder: &Path, args: &[&str]) -> common::Run {
    let data = folder.join(".tfimg-data");
    tfimg_with_env(
        folder,
        &with_ca(args),
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    )
}

fn with_ca<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    if args.first() == Some(&"run") {
        let split = args
            .iter()
            .position(|arg| *arg == "--")
            .unwrap_or(args.len());
        all.splice(split..split, ["--ca-cert", HOST_CA]);
    }
    all
}

/// Checks what the container received, as the run's user, and writes its output.
const TRAIN: &str = r#"import os, sys
here = os.path.dirname(os.path.abspath(__file__))
def there(name):
    return os.path.exists(os.path.join(here, name))
problems = [name for name in ("big.bin", "secret.txt", ".git") if there(name)]
if not there("data.txt"):
    problems.append("no data.txt")
owner = os.stat(os.path.join(here, "data.txt")).st_uid
if (owner, os.getuid()) != (4321, 4321):
    problems.append("data.txt owned by %d, running as %d" % (owner, os.getuid()))
if problems:
    print("wrong: " + ", ".join(problems))
    sys.exit(3)
os.makedirs(os.path.join(here, "out"), exist_ok=True)
numbers = open(os.path.join(here, "data.txt")).read().split()
with open(os.path.join(here, "out", "result.txt"), "w") as out:
    out.write("sum %d\n" % sum(map(int, numbers)))
print("trained")
"#;

fn project() -> tempfile::TempDir {
    scratch(&[
        ("code/train.py", TRAIN),
        ("code/data.txt", "1 2 3\n"),
        ("code/.gitignore", "*.bin\n"),
        ("code/big.bin", "weights"),
        ("code/.dockerignore", "secret.txt\n"),
        ("code/secret.txt", "s3cret"),
        ("code/.git/HEAD", "ref: refs/heads/main\n"),
    ])
}

fn containers_named(name: &str) -> String {
    docker(&["ps", "-aq", "--filter", &format!("name=^{name}$")])
}

#[tokio::test]
async fn a_synced_folder_goes_in_without_ignored_files_and_its_outputs_come_back() {
    let Some((_, name, _guard)) = common::container_test("t-sync").await else { return };
    let folder = project();
    let outcome = tfimg(
        folder.path(),
        &[
            "run",
            "cpu-headless",
            "--no-build",
            "--name",
            &name,
            "--uid",
            "4321",
            "--gid",
            "4321",
            "--sync",
            "./code",
            "--sync-back",
            "--",
            "python",
            "code/train.py",
        ],
    );
    assert_eq!(outcome.code, 0, "{}{}", outcome.stdout, outcome.stderr);
    assert_eq!(outcome.stdout, "trained\n");
    assert!(
        outcome
            .stderr
            .contains("syncing `./code` → `/tf/code` (4 files, "),
        "{}",
        outcome.stderr
    );
    assert!(
        outcome
            .stderr
            .contains("synced back `/tf/code` → `./code` (1 new)\n"),
        "{}",
        outcome.stderr
    );
    let result = folder.path().join("code/out/result.txt");
    assert_eq!(std::fs::read_to_string(&result).unwrap(), "sum 6\n");
    // Written by tfimg, so the host user's; what stayed behind is untouched.
    // SAFETY: getuid(2) has no preconditions.
    let me = unsafe { libc::getuid() };
    assert_eq!(std::fs::metadata(&result).unwrap().uid(), me);
    for kept in ["big.bin", "secret.txt", ".git/HEAD"] {
        assert!(folder.path().join("code").join(kept).exists(), "{kept}");
    }
    assert_eq!(containers_named(&name), "", "the container is removed");
}

#[tokio::test]
async fn an_interrupted_run_still_syncs_back_what_it_wrote() {
    let Some((_, name, _guard)) = common::container_test("t-sync-int").await else { return };
    let folder = project();
    let data = folder.path().join(".tfimg-data");
    let script = "mkdir -p code/out && echo partial > code/out/checkpoint.txt && echo written && exec sleep 300";
    let args = with_ca(&[
        "run",
        "cpu-headless",
        "--no-build",
        "--name",
        &name,
        "--sync",
        "./code",
        "--sync-back",
        "--",
        "sh",
        "-c",
        script,
    ]);
    let running = spawn_tfimg(
        folder.path(),
        &args,
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    let line = running.stdout_lines.recv_timeout(Duration::from_secs(120));
    assert_eq!(line.as_deref(), Ok("written"));
    running.signal(libc::SIGINT);
    let outcome = running.finish(Duration::from_secs(120));
    assert_eq!(outcome.code, 130, "{}", outcome.tail());
    assert!(
        outcome
            .stderr
            .contains("synced back `/tf/code` → `./code` (1 new)"),
        "{}",
        outcome.stderr
    );
    let checkpoint = folder.path().join("code/out/checkpoint.txt");
    assert_eq!(std::fs::read_to_string(checkpoint).unwrap(), "partial\n");
    assert_eq!(containers_named(&name), "");
}

#[tokio::test]
async fn pull_files_copies_from_a_stopped_detached_run() {
    let Some((_, name, _guard)) = common::container_test("t-pull").await else { return };
    let folder = project();
    let script = "mkdir -p code/out && echo done > code/out/result.txt";
    let started = tfimg(
        folder.path(),
        &[
            "run",
            "cpu-headless",
            "--no-build",
            "-d",
            "--name",
            &name,
            "--sync",
            "./code",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    common::wait_for("the detached run to exit", Duration::from_secs(60), || {
        common::container_state(&name).as_deref() == Some("exited")
    });

    let pulled = tfimg(folder.path(), &["pull-files", &name, "./pulled"]);
    assert_eq!(pulled.code, 0, "{}", pulled.tail());
    assert_eq!(
        pulled.stderr,
        format!("copied `/tf/code` from `{name}` → `./pulled` (5 new)\n")
    );
    let read = |path: &str| std::fs::read_to_string(folder.path().join(path)).unwrap();
    assert_eq!(read("pulled/out/result.txt"), "done\n");
    assert_eq!(read("pulled/data.txt"), "1 2 3\n");

    let one = tfimg(
        folder.path(),
        &[
            "pull-files",
            &name,
            "./result.txt",
            "--from",
            "/tf/code/out/result.txt",
        ],
    );
    assert_eq!(one.code, 0, "{}", one.tail());
    assert_eq!(read("result.txt"), "done\n");

    let missing = tfimg(
        folder.path(),
        &["pull-files", &name, "./x", "--from", "/nope"],
    );
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.starts_with(&format!(
            "error: `/nope` does not exist in `{name}`\nhint: "
        )),
        "{}",
        missing.stderr
    );
    assert!(!folder.path().join("x").exists());
    assert_eq!(tfimg(folder.path(), &["rm", &name]).code, 0);
}

#[tokio::test]
async fn a_sync_into_a_folder_the_image_lacks_is_refused_and_removed() {
    let Some((_, name, _guard)) = common::container_test("t-sync-nofolder").await else {
        return;
    };
    let folder = project();
    let outcome = tfimg(
        folder.path(),
        &[
            "run",
            "cpu-headless",
            "--no-build",
            "--name",
            &name,
            "--sync",
            "./code:/opt/nothere/code",
            "--",
            "true",
        ],
    );
    assert_eq!(outcome.code, 1, "{}", outcome.tail());
    assert!(
        outcome.stderr.contains(
            "error: `--sync ./code:/opt/nothere/code`: the folder `/opt/nothere` does not exist in the image\nhint: choose a DST whose folder exists in the image, such as `/tf/code` (the workdir)\n"
        ),
        "{}",
        outcome.stderr
    );
    assert_eq!(containers_named(&name), "");
}

#[tokio::test]
async fn a_volume_is_writable_from_the_first_run_and_keeps_its_files() {
    let Some(_engine) = common::engine().await else { return };
    let folder = scratch(&[]);
    let names = [unique("t-vol"), unique("t-vol")];
    let volume = unique("tfimg-test-vol");
    let mut guard = DockerGuard::containers(&[&names[0], &names[1]]);
    guard.volumes = vec![volume.clone()];
    let mount = format!("{volume}:/tf/data");
    let run = |name: &str, script: &str| {
        tfimg(
            folder.path(),
            &[
                "run",
                "cpu-headless",
                "--no-build",
                "--name",
                name,
                "--uid",
                "4321",
                "--gid",
                "4321",
                "--volume",
                &mount,
                "--",
                "sh",
                "-c",
                script,
            ],
        )
    };
    let first = run(
        &names[0],
        "echo kept > /tf/data/note.txt && stat -c %u /tf/data",
    );
    assert_eq!(first.code, 0, "{}", first.tail());
    assert_eq!(first.stdout, "4321\n");
    let second = run(&names[1], "cat /tf/data/note.txt");
    assert_eq!(second.code, 0, "{}", second.tail());
    assert_eq!(second.stdout, "kept\n");
    let label = docker(&[
        "volume",
        "inspect",
        "--format",
        "{{index .Labels \"io.tfimg.volume\"}}",
        &volume,
    ]);
    assert_eq!(label.trim(), volume, "the removed runs left the volume");
}
