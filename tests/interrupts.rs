//! Interruptions and mid-command changes, on the real Engine: SIGINT/SIGTERM to a build
//! in the middle of a step, to an attached run, and to `up`; and a base image removed
//! while a build runs. Each leaves exactly what the user was promised and nothing else.

mod common;

use std::io::Read;
use std::time::Duration;

use tfimg_testing::engine::Containers;

use common::{
    container_state, docker, scratch, silent_index, spawn_tfimg, unique, wait_for, DockerGuard,
};

/// Catches a hang; never a performance expectation.
const HANG: Duration = Duration::from_secs(180);

/// The ids of running containers whose environment mentions `needle` (a build step's
/// container inherits the Dockerfile's ENV, here the index URL).
fn containers_with_env(needle: &str) -> Vec<String> {
    docker(&["ps", "-q", "--no-trunc"])
        .split_whitespace()
        .filter(|id| docker(&["inspect", "--format", "{{.Config.Env}}", id]).contains(needle))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn sigint_and_sigterm_in_the_middle_of_a_build_step_leave_no_tag_and_no_build_container() {
    let Some(_engine) = common::engine().await else { return };
    for (signal, signal_name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let name = unique("interrupted").to_lowercase();
        let _guard = DockerGuard::images(&[&format!("tfimg/{name}")]);
        let folder = scratch(&[(
            "spec.yaml",
            &format!("name: {name}\nextends: cpu-headless\n"),
        )]);
        let (index, connected, _listener) = silent_index();
        let build = spawn_tfimg(
            folder.path(),
            &[
                "build",
                "./spec.yaml",
                "--pip-index-url",
                &index,
                "--progress",
                "plain",
            ],
            &[],
        );
        // pip has connected: the build is inside a RUN step, its container running.
        connected
            .recv_timeout(HANG)
            .expect("the build reaches its pip step");
        let host_port = index
            .trim_start_matches("http://")
            .trim_end_matches("/simple");
        let step_containers = containers_with_env(host_port);
        assert_eq!(
            step_containers.len(),
            1,
            "{signal_name}: one build container runs the step"
        );
        build.signal(signal);
        let run = build.finish(HANG);

        assert_eq!(run.code, 130, "{signal_name}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "error: interrupted: the build of `{name}` was stopped and nothing was tagged"
            )),
            "{signal_name}: {}",
            run.stderr
        );
        assert_eq!(
            container_state(&step_containers[0]),
            None,
            "{signal_name}: the step's container is gone"
        );
        assert_eq!(
            docker(&["images", "-q", &format!("tfimg/{name}")]).trim(),
            "",
            "{signal_name}: no tag"
        );
        assert_eq!(
            docker(&[
                "images",
                "-q",
                "--filter",
                &format!("label=io.tfimg.spec={name}")
            ])
            .trim(),
            "",
            "{signal_name}: no image of the spec"
        );
    }
}

#[tokio::test]
async fn a_base_image_removed_during_the_build_fails_it_clearly_and_tags_nothing() {
    let Some(_engine) = common::engine().await else { return };
    let name = unique("baseless").to_lowercase();
    let base = format!("tfimgtest-{name}/debian:bullseye-slim");
    let _guard = DockerGuard::images(&[
        &format!("tfimg/{name}"),
        &format!("tfimgtest-{name}/debian"),
    ]);
    docker(&["tag", "debian:bullseye-slim", &base]);
    // Locked like the built-in (the same image under another name): every layer comes
    // from its cache, so the build reaches verification in seconds, without the network.
    let folder = scratch(&[
        (
            "spec.yaml",
            &format!("name: {name}\nextends: cpu-headless\nbase: {base}\n"),
        ),
        (
            "spec.lock",
            &common::builtin_lock_for("cpu-headless", &name, Some(&base)),
        ),
    ]);
    let build = spawn_tfimg(
        folder.path(),
        &[
            "build",
            "./spec.yaml",
            "--ca-cert",
            common::HOST_CA,
            "--progress",
            "json",
        ],
        &[],
    );
    // Verification takes seconds (TensorFlow imports); the base goes away meanwhile.
    loop {
        let line = build
            .stdout_lines
            .recv_timeout(HANG)
            .expect("the build reaches verification");
        if line.contains("\"event\":\"status\"") && line.contains("verifying") {
            break;
        }
    }
    docker(&["rmi", &base]);
    let run = build.finish(HANG);

    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "error: the base image `{base}` was removed while `{name}` was building; nothing was tagged\n\
             hint: make sure `{base}` stays (`tfimg base bootstrap {base}` makes it) and build again"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(
        docker(&["images", "-q", &format!("tfimg/{name}")]).trim(),
        ""
    );
}

/// `tfimg run cpu-headless --name NAME -- sleep 300`, attached, not waited for.
fn attached_sleeper(folder: &std::path::Path, name: &str) -> common::Running {
    spawn_tfimg(
        folder,
        &[
            "run",
            "cpu-headless",
            "--no-build",
            "--name",
            name,
            "--",
            "sleep",
            "300",
        ],
        &[],
    )
}

#[tokio::test]
async fn sigterm_to_an_attached_run_stops_and_removes_its_container() {
    let Some(_engine) = common::engine().await else { return };
    let name = unique("attached").to_lowercase();
    let _guard = DockerGuard::containers(&[&name]);
    let folder = scratch(&[]);
    let run = attached_sleeper(folder.path(), &name);
    wait_for("the container to run", HANG, || {
        container_state(&name).as_deref() == Some("running")
    });
    run.signal(libc::SIGTERM);
    let run = run.finish(HANG);
    assert_eq!(run.code, 130, "{}", run.tail());
    assert!(
        run.stderr.contains(&format!("tfimg: stopping `{name}`")),
        "{}",
        run.stderr
    );
    assert_eq!(container_state(&name), None, "the container is removed");
}

/// A signal that comes while `run` is still creating and starting the container (the
/// moment it exists, before tfimg attends it) is not lost: tfimg still stops and removes
/// it, and exits 130. Before tfimg installed its handlers at start-up, such a signal
/// killed tfimg and left the container running.
#[tokio::test]
async fn sigint_while_the_container_is_being_started_still_removes_it() {
    let Some(engine) = common::engine().await else { return };
    for attempt in 0..3 {
        let name = unique(&format!("starting{attempt}")).to_lowercase();
        let _guard = DockerGuard::containers(&[&name]);
        let folder = scratch(&[]);
        let run = attached_sleeper(folder.path(), &name);
        let deadline = std::time::Instant::now() + HANG;
        while engine.container(&name).await.unwrap().is_none() {
            assert!(std::time::Instant::now() < deadline, "never created");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        run.signal(libc::SIGINT);
        let run = run.finish(HANG);
        assert_eq!(run.code, 130, "attempt {attempt}: {}", run.stderr);
        assert_eq!(
            container_state(&name),
            None,
            "attempt {attempt}: the container is removed"
        );
    }
}

/// A team of two: `quick` is up as soon as it starts (a command, nothing to wait for);
/// `stuck` is a notebook whose Python hangs at start-up (a sitecustomize that sleeps), so
/// `up` is still waiting for it when the signal comes.
fn half_ready_team(team: &str) -> String {
    format!(
        "team: {team}\nmembers:\n\
         \x20 - name: quick\n    spec: cpu-headless\n    command: [\"sleep\", \"300\"]\n\
         \x20 - name: stuck\n    spec: cpu-jupyter\n    mounts: [\"./hang:/opt/hang:ro\"]\n    env: {{PYTHONPATH: /opt/hang}}\n"
    )
}

#[tokio::test]
async fn an_interrupted_up_keeps_only_fully_started_members_and_rollback_keeps_none() {
    let Some(_engine) = common::engine().await else { return };
    for rollback in [false, true] {
        let team = format!("t{}", &unique("up").replace('-', "")[2..])
            .chars()
            .take(20)
            .collect::<String>()
            .to_lowercase();
        let quick = format!("{team}-quick");
        let stuck = format!("{team}-stuck");
        let mut guard = DockerGuard::containers(&[&quick, &stuck]);
        // The members' networks go too (each member has one, issue 45).
        guard.container_label = Some(format!("io.tfimg.team={team}"));
        let folder = scratch(&[
            ("team.yaml", &half_ready_team(&team)),
            ("hang/sitecustomize.py", "import time\ntime.sleep(600)\n"),
        ]);
        let data = folder.path().join(".tfimg-data");
        let mut args = vec!["up", "team.yaml", "--ca-cert", common::HOST_CA];
        if rollback {
            args.push("--rollback");
        }
        let up = spawn_tfimg(
            folder.path(),
            &args,
            &[("XDG_DATA_HOME", data.to_str().unwrap())],
        );
        wait_for("both members to run", HANG, || {
            container_state(&quick).as_deref() == Some("running")
                && container_state(&stuck).as_deref() == Some("running")
        });
        // `quick` counts as up once its start returned; give tfimg that instant.
        std::thread::sleep(Duration::from_millis(500));
        up.signal(libc::SIGINT);
        let run = up.finish(HANG);

        assert_eq!(run.code, 130, "{}", run.tail());
        assert_eq!(
            container_state(&stuck),
            None,
            "the unfinished member is removed"
        );
        if rollback {
            assert!(
                run.stderr.contains(
                    "error: interrupted: `up` stopped; kept the member(s) that were fully up: none; \
                     removed the ones it had not finished starting or had started (--rollback): quick, stuck"
                ),
                "{}",
                run.stderr
            );
            assert_eq!(container_state(&quick), None, "--rollback removes everyone");
        } else {
            assert!(
                run.stderr.contains(
                    "error: interrupted: `up` stopped; kept the member(s) that were fully up: quick; \
                     removed the ones it had not finished starting: stuck"
                ),
                "{}",
                run.stderr
            );
            assert_eq!(container_state(&quick).as_deref(), Some("running"));
            // What is kept is a labelled member that `down` finds.
            let labels = docker(&["inspect", "--format", "{{json .Config.Labels}}", &quick]);
            assert!(
                labels.contains(&format!("\"io.tfimg.team\":\"{team}\"")),
                "{labels}"
            );
            let down = common::tfimg_with_env(
                folder.path(),
                &["down", "team.yaml"],
                &[("XDG_DATA_HOME", data.to_str().unwrap())],
            );
            assert_eq!(down.code, 0, "{}", down.tail());
            assert_eq!(container_state(&quick), None);
        }
    }
}

/// Which of tfimg's streams go to a pipe whose reader is gone.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Closed {
    Both,
    Stdout,
    Stderr,
}

/// How `program ARGS` ended with `closed` on a pipe whose read end is closed (as after
/// `| true`), and what it wrote on the other stream. `limit` only catches a hang.
fn with_reader_gone(
    program: &str,
    args: &[&str],
    closed: Closed,
    limit: Duration,
) -> (std::process::ExitStatus, String) {
    use std::process::Stdio;
    let folder = scratch(&[]);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let gone = || Stdio::from(writer.try_clone().unwrap());
    let mut child = std::process::Command::new(program)
        .args(args)
        .current_dir(folder.path())
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .env("TFIMG_CONFIG", "/dev/null")
        .env("TFIMG_TODAY", common::TODAY)
        .stdin(Stdio::null())
        .stdout(match closed {
            Closed::Stderr => Stdio::piped(),
            _ => gone(),
        })
        .stderr(match closed {
            Closed::Stdout => Stdio::piped(),
            _ => gone(),
        })
        .spawn()
        .unwrap();
    drop(writer);
    let mut open = child
        .stdout
        .take()
        .map(|pipe| Box::new(pipe) as Box<dyn std::io::Read + Send>)
        .or_else(|| {
            child
                .stderr
                .take()
                .map(|pipe| Box::new(pipe) as Box<dyn std::io::Read + Send>)
        });
    let reading = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = open.as_mut() {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`{program} {}` hung for {limit:?} with {closed:?} closed",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status, reading.join().unwrap())
}

fn killed_by_sigpipe(status: std::process::ExitStatus) -> bool {
    std::os::unix::process::ExitStatusExt::signal(&status) == Some(libc::SIGPIPE)
}

/// Issue 44: `tfimg ps 2>&1 | true` (and `list`, ...) exited 101 with a panic writing to
/// the closed stderr, and a closed stdout was passed over silently (exit 0). Now a
/// closed stdout or stderr ends tfimg as it ends `yes`: killed by SIGPIPE (141 in a
/// shell), with nothing printed.
#[tokio::test]
async fn a_closed_stdout_or_stderr_ends_tfimg_as_it_ends_yes() {
    let Some(_engine) = common::engine().await else { return };
    let tfimg = env!("CARGO_BIN_EXE_tfimg");
    let limit = Duration::from_secs(60);
    let (yes, _) = with_reader_gone("yes", &[], Closed::Both, limit);
    assert!(killed_by_sigpipe(yes), "yes: {yes:?}");
    // (args, writes on stdout, writes on stderr)
    let commands: [(&[&str], bool, bool); 8] = [
        (&["ps"], true, false),
        (&["ps", "--json"], true, false),
        (&["list"], true, true),
        (&["list", "--json"], true, false),
        (&["show", "cpu-headless"], true, true),
        (&["completions", "bash"], true, false),
        (&["--help"], true, false),
        (&["show", "nosuch"], false, true),
    ];
    for (args, on_stdout, on_stderr) in commands {
        let shown = args.join(" ");
        let (status, _) = with_reader_gone(tfimg, args, Closed::Both, limit);
        assert!(
            killed_by_sigpipe(status),
            "`tfimg {shown} >&- 2>&-`: {status:?}"
        );
        let (status, stderr) = with_reader_gone(tfimg, args, Closed::Stdout, limit);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "`tfimg {shown} | true`: {stderr}"
        );
        if on_stdout {
            assert!(
                killed_by_sigpipe(status),
                "`tfimg {shown} | true`: {status:?} {stderr}"
            );
        } else {
            assert_eq!(status.code(), Some(1), "`tfimg {shown} | true`: {stderr}");
            assert!(stderr.starts_with("error: "), "{stderr}");
        }
        // `ps` prints a note on stderr only when a Jupyter runs on this machine.
        if args[0] != "ps" {
            let (status, stdout) = with_reader_gone(tfimg, args, Closed::Stderr, limit);
            if on_stderr {
                assert!(
                    killed_by_sigpipe(status),
                    "`tfimg {shown} 2>&-`: {status:?}"
                );
            } else {
                assert_eq!(status.code(), Some(0), "`tfimg {shown}` with stderr closed");
                assert!(!stdout.is_empty());
            }
        }
    }
}

/// A command that cleans up ends as it does on Ctrl-C: an attached `run` whose stdout
/// reader went away stops and removes its container, then ends by SIGPIPE; `logs -f`
/// of a container that keeps printing ends too. Before, both went on for ever.
#[tokio::test]
async fn a_closed_stdout_stops_an_attached_run_and_ends_logs_follow() {
    let Some(_engine) = common::engine().await else { return };
    let tfimg = env!("CARGO_BIN_EXE_tfimg");
    let name = unique("closed-run").to_lowercase();
    let _guard = DockerGuard::containers(&[&name]);
    let ticking = ["sh", "-c", "while :; do echo tick; sleep 0.1; done"];
    let mut args = vec!["run", "cpu-headless", "--no-build", "--name", &name, "--"];
    args.extend(ticking);
    let (status, stderr) = with_reader_gone(tfimg, &args, Closed::Stdout, HANG);
    assert!(killed_by_sigpipe(status), "{status:?}: {stderr}");
    assert!(
        stderr.contains(&format!("tfimg: stopping `{name}`")),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(container_state(&name), None, "the container is removed");

    let detached = {
        let mut args = vec![
            "run",
            "-d",
            "cpu-headless",
            "--no-build",
            "--name",
            &name,
            "--",
        ];
        args.extend(ticking);
        common::tfimg(scratch(&[]).path(), &args)
    };
    assert_eq!(detached.code, 0, "{}", detached.tail());
    let (status, stderr) = with_reader_gone(tfimg, &["logs", "-f", &name], Closed::Stdout, HANG);
    assert!(killed_by_sigpipe(status), "{status:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
