//! `tfimg sweep` on the real Engine: the 27-trial example grid trained for real on three
//! GPUs of the stand-in NVIDIA host (at most three at once, each on its own GPU, queued
//! trials starting as GPUs free, every trial's metrics, the results sorted by the
//! objective, the report in headless Chromium); Ctrl-C half-way, then running again;
//! a trial that fails once and passes on retry; `-d`, `status` and `stop`; `kill -9` of
//! tfimg with trials that finish while no tfimg watches (and one made just before the
//! kill), then `status`, `stop` and running again; a Ctrl-C-stopped attempt followed by
//! failures, ranked with `objective.use: best`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::gpu::gpu_engine_with;
use common::sweep::{journal, starts, sweep_containers, sweep_guard};
use common::{docker, docker_at, spawn_tfimg, tfimg, unique, wait_for};

const HANG: Duration = Duration::from_secs(900);

fn status(dir: &Path, trial: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(trial).join("status.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The example folder copied, its sweep file (`file`) renamed to `name`.
fn example(file: &str, name: &str) -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sweep");
    std::fs::create_dir_all(folder.path().join("code")).unwrap();
    std::fs::copy(
        examples.join("code/train.py"),
        folder.path().join("code/train.py"),
    )
    .unwrap();
    let text = std::fs::read_to_string(examples.join(file)).unwrap();
    let text = text
        .lines()
        .map(|line| match line.starts_with("sweep:") {
            true => format!("sweep: {name}"),
            false => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(folder.path().join("sweep.yaml"), text).unwrap();
    folder
}

/// The results table's rows as (trial, the value in `column`): columns are aligned, so a
/// cell starts where its header (`LAST VAL_ACCURACY`) does.
fn table(stdout: &str, column: &str) -> Vec<(String, f64)> {
    let mut lines = stdout.lines();
    let at = lines.next().unwrap().find(column).unwrap();
    lines
        .take_while(|line| !line.trim().is_empty())
        .map(|line| {
            let trial = line.split_whitespace().next().unwrap().to_string();
            let cell = line[at..].split_whitespace().next().unwrap();
            (trial, cell.parse().unwrap())
        })
        .collect()
}

#[test]
fn the_example_grid_trains_on_three_stand_in_gpus_one_trial_per_gpu() {
    let Some(gpu) = gpu_engine_with(&[
        "debian:bullseye-slim",
        "tfimg/cpu-headless:2.9.3",
        "tfimg/gpu-headless:2.9.3",
    ]) else {
        return;
    };
    let name = unique("t-grid").to_lowercase();
    let _guard = sweep_guard(&name).on(&gpu.host);
    let folder = example("sweep-gpu.yaml", &name);
    // The same CA as the image was built with (scripts/test), so the build key matches.
    let running = spawn_tfimg(
        folder.path(),
        &["sweep", "sweep.yaml", "--ca-cert", common::HOST_CA],
        &gpu.env(),
    );
    // A running trial as the daemon has it: one GPU by id, the user's CUDA cache mounted.
    let label = format!("label=io.tfimg.sweep={name}");
    wait_for("a running trial to inspect", HANG, || {
        let ids = docker_at(Some(&gpu.host), &["ps", "-q", "--filter", &label]);
        let Some(id) = ids.lines().next() else {
            return false;
        };
        let text = docker_at(Some(&gpu.host), &["inspect", id]);
        let Ok(inspected) = serde_json::from_str::<serde_json::Value>(&text) else {
            return false; // it ended in between
        };
        let container = &inspected[0];
        let request = &container["HostConfig"]["DeviceRequests"][0];
        assert_eq!(request["Driver"], "nvidia", "{request}");
        assert_eq!(
            request["DeviceIDs"].as_array().map(Vec::len),
            Some(1),
            "{request}"
        );
        assert!(
            request["Count"].as_i64().unwrap_or(0) == 0,
            "never a count: {request}"
        );
        let mounts = container["Mounts"].as_array().cloned().unwrap_or_default();
        assert!(
            mounts.iter().any(|mount| mount["Type"] == "volume"
                && mount["Destination"] == "/var/cache/tfimg/cuda"
                && mount["Name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("tfimg-cuda-cache-"))),
            "{mounts:?}"
        );
        true
    });
    let run = running.finish(HANG);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let dir = folder.path().join("runs").join(&name);
    // Every trial trained and reported its four epochs.
    let mut spans = Vec::new();
    for number in 1..=27 {
        let trial = format!("t{number:03}");
        let metrics = std::fs::read_to_string(dir.join(&trial).join("metrics.jsonl")).unwrap();
        assert_eq!(metrics.lines().count(), 4, "{trial}: {metrics}");
        assert!(metrics.contains("\"val_accuracy\""), "{trial}");
        let status = status(&dir, &trial);
        assert_eq!(status["exit_code"], 0, "{trial}");
        let gpus: Vec<String> = serde_json::from_value(status["gpus"].clone()).unwrap();
        assert_eq!(gpus.len(), 1, "{trial}: one GPU by id");
        // What the container saw: exactly its slot's GPU.
        let stdout = std::fs::read_to_string(dir.join(&trial).join("stdout.log")).unwrap();
        assert!(
            stdout.contains(&format!("NVIDIA_VISIBLE_DEVICES={} ", gpus[0])),
            "{trial} on {gpus:?}: {stdout}"
        );
        spans.push((
            trial,
            gpus[0].clone(),
            status["started_ms"].as_u64().unwrap(),
            status["finished_ms"].as_u64().unwrap(),
        ));
    }
    // At most three at once, never two on one GPU, and every GPU used.
    for (trial, gpu_id, start, _) in &spans {
        let overlapping: Vec<&(String, String, u64, u64)> = spans
            .iter()
            .filter(|(_, _, other_start, other_end)| other_start <= start && start < other_end)
            .collect();
        assert!(overlapping.len() <= 3, "{trial}: {overlapping:?}");
        let same_gpu = overlapping
            .iter()
            .filter(|(_, g, _, _)| g == gpu_id)
            .count();
        assert_eq!(same_gpu, 1, "{trial} shared GPU {gpu_id}: {overlapping:?}");
    }
    let used: std::collections::BTreeSet<&String> = spans.iter().map(|(_, g, _, _)| g).collect();
    assert_eq!(used.len(), 3);
    // Queued trials started as GPUs freed: the fourth only after one of the first three.
    let first_end = spans[..3].iter().map(|span| span.3).min().unwrap();
    assert!(spans[3].2 >= first_end, "{spans:?}");
    // The prestart hook ran for each trial, with the GPU it was given.
    let hooks = std::fs::read_to_string(common::gpu::HOOK_LOG).unwrap_or_default();
    for event in journal(&dir) {
        if event["event"] == "trial_started" {
            let id = event["container_id"].as_str().unwrap();
            assert!(
                hooks.contains(&format!("\"id\":\"{id}\"")),
                "no prestart hook for {}",
                event["trial"]
            );
        }
    }
    // The results, best first.
    let rows = table(&run.stdout, "LAST VAL_ACCURACY");
    assert_eq!(rows.len(), 27);
    assert!(
        rows.windows(2).all(|pair| pair[0].1 >= pair[1].1),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("best: {} last val_accuracy=", rows[0].0)),
        "{}",
        run.stdout
    );
    assert!(docker_at(
        Some(&gpu.host),
        &[
            "ps",
            "-aq",
            "--filter",
            &format!("label=io.tfimg.sweep={name}")
        ]
    )
    .trim()
    .is_empty());
    sweep_report::renders_in_chromium(folder.path(), &dir);
}

/// The report of a real sweep, in headless Chromium.
mod sweep_report {
    use std::path::Path;

    pub fn renders_in_chromium(folder: &Path, dir: &Path) {
        let out = folder.join("report.html");
        let run = super::tfimg(
            folder,
            &[
                "sweep",
                "report",
                dir.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(run.code, 0, "{}", run.tail());
        let html = std::fs::read_to_string(&out).unwrap();
        assert!(html.contains("<svg"), "the report has charts");
        let Some(chromium) = chromium() else {
            return;
        };
        let profile = tempfile::tempdir().unwrap();
        let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sweep-grid-report.png");
        let _ = std::fs::remove_file(&shot);
        let status = std::process::Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--screenshot={}", shot.display()))
            .arg("--window-size=1280,1800")
            .arg(format!("file://{}", out.display()))
            .env("HOME", profile.path())
            .output()
            .expect("chromium runs");
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        let size = std::fs::metadata(&shot).map(|meta| meta.len()).unwrap_or(0);
        assert!(
            size > 20_000,
            "a screenshot of the page ({size} bytes at {})",
            shot.display()
        );
        let dom = std::process::Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("file://{}", out.display()))
            .env("HOME", profile.path())
            .output()
            .expect("chromium runs");
        let dom = String::from_utf8_lossy(&dom.stdout);
        assert_eq!(dom.matches("<tr").count() - 1, 27, "one row per trial");
        assert!(dom.matches("<polyline").count() >= 27, "a curve per trial");
    }

    fn chromium() -> Option<&'static str> {
        let found = ["chromium", "chromium-browser"]
            .into_iter()
            .find(|program| {
                std::process::Command::new(program)
                    .arg("--version")
                    .output()
                    .is_ok_and(|output| output.status.success())
            });
        if found.is_none() {
            assert!(
                std::env::var("CI").map_or(true, |ci| ci != "true"),
                "chromium is missing (scripts/setup-machine installs it)"
            );
            eprintln!("skipping the browser check: no chromium");
        }
        found
    }
}

/// A sweep of `count` trials on the machine's daemon, each printing `acc=<n>` per second
/// for `seconds` seconds; `rest` is added to the file.
fn cpu_sweep(name: &str, count: usize, seconds: u32, rest: &str) -> tempfile::TempDir {
    let values: Vec<String> = (1..=count).map(|n| n.to_string()).collect();
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"for e in $(seq {seconds}); do echo epoch=$e acc={{n}}; sleep 1; done\"]\nparams:\n  n: [{}]\nmax_parallel: 2\nobjective: {{metric: acc, mode: max}}\n{rest}",
        values.join(", ")
    );
    common::scratch(&[("sweep.yaml", &text)])
}

#[test]
fn ctrl_c_half_way_leaves_no_container_and_running_again_finishes_only_the_rest() {
    let name = unique("t-ctrlc").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = cpu_sweep(&name, 6, 4, "");
    let dir = folder.path().join("runs").join(&name);
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]);
    wait_for("two trials done and two running", HANG, || {
        let events = journal(&dir);
        let done = events
            .iter()
            .filter(|e| e["event"] == "trial_finished")
            .count();
        done >= 2 && starts(&dir).len() >= 4
    });
    running.signal(libc::SIGINT);
    let run = running.finish(HANG);
    assert_eq!(run.code, 130, "{}", run.tail());
    assert!(
        run.stderr.contains("its trial containers removed"),
        "{}",
        run.stderr
    );
    assert_eq!(sweep_containers(&name).trim(), "", "no container is left");
    let done_before: Vec<String> = (1..=6)
        .map(|n| format!("t{n:03}"))
        .filter(|trial| dir.join(trial).join("status.json").exists())
        .filter(|trial| {
            let status = status(&dir, trial);
            status["exit_code"] == 0 && status["stopped"] == false
        })
        .collect();
    assert!(done_before.len() >= 2, "{done_before:?}");
    // A changed sweep file is refused with what changed; put back, the sweep goes on.
    let file = folder.path().join("sweep.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("n: [1, 2, 3, 4, 5, 6]", "n: [1, 2, 3, 4, 5, 7]"),
    )
    .unwrap();
    let refused = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(
        refused
            .stderr
            .contains("the sweep file changed since the sweep")
            && refused.stderr.contains("`params.n`"),
        "{}",
        refused.stderr
    );
    std::fs::write(&file, text).unwrap();
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let starts = starts(&dir);
    for trial in &done_before {
        assert_eq!(starts[trial], 1, "{trial} ran again: {starts:?}");
    }
    assert_eq!(starts.len(), 6);
    assert!(run.stderr.contains("going on with sweep"), "{}", run.tail());
    assert_eq!(table(&run.stdout, "LAST ACC").len(), 6);
    assert_eq!(sweep_containers(&name).trim(), "");
}

#[test]
fn a_trial_that_fails_once_passes_on_retry_and_ends_done_attempt_2() {
    let name = unique("t-retry").to_lowercase();
    let _guard = sweep_guard(&name);
    // Trial 2 fails the first time (it leaves a mark in a mounted folder), then passes.
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"if [ {{n}} = 2 ] && [ ! -e /state/failed ]; then touch /state/failed; echo broken >&2; exit 3; fi; echo acc={{n}}\"]\nmounts: [\"./state:/state\"]\nparams: {{n: [1, 2, 3]}}\nretries: 1\nobjective: {{metric: acc, mode: max}}\n"
    );
    let folder = common::scratch(&[("sweep.yaml", &text)]);
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let row = run
        .stdout
        .lines()
        .find(|line| line.starts_with("t002"))
        .unwrap();
    assert!(row.ends_with("done (attempt 2)"), "{}", run.stdout);
    assert!(
        run.stderr.contains("t002 failed (exit 3)"),
        "{}",
        run.stderr
    );
    let dir = folder.path().join("runs").join(&name);
    // The failed attempt's folder is kept beside the trial's.
    let aside = std::fs::read_to_string(dir.join("t002.before-attempt-2/stderr.log")).unwrap();
    assert_eq!(aside, "broken\n");
    assert_eq!(status(&dir, "t002")["attempt"], 2);
    let results = tfimg(folder.path(), &["sweep", "results", &name, "--json"]);
    assert_eq!(results.code, 0, "{}", results.tail());
    assert!(
        results.stdout.contains("\"done (attempt 2)\""),
        "{}",
        results.stdout
    );
}

#[test]
fn a_detached_sweep_is_followed_with_status_and_stopped_with_stop() {
    let name = unique("t-detach").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = cpu_sweep(&name, 6, 30, "");
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml", "-d"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    assert!(
        run.stderr.contains("runs in the background"),
        "{}",
        run.stderr
    );
    let dir = folder.path().join("runs").join(&name);
    wait_for("two trials running", HANG, || {
        sweep_containers(&name).lines().count() == 2
    });
    let status = tfimg(folder.path(), &["sweep", "status", &name]);
    assert_eq!(status.code, 0, "{}", status.tail());
    assert!(
        status
            .stdout
            .contains(" running; its tfimg is running it\n"),
        "{}",
        status.stdout
    );
    // A second run of the same sweep is refused while the first runs.
    let second = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(second.code, 1, "{}", second.tail());
    assert!(
        second.stderr.contains("is already running"),
        "{}",
        second.stderr
    );
    let stop = tfimg(folder.path(), &["sweep", "stop", &name]);
    assert_eq!(stop.code, 0, "{}", stop.tail());
    assert_eq!(sweep_containers(&name).trim(), "");
    let status = tfimg(
        folder.path(),
        &["sweep", "status", dir.to_str().unwrap(), "--json"],
    );
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["running"], false);
    let log = std::fs::read_to_string(dir.join("sweep.log")).unwrap();
    assert!(log.contains("t001 stopped"), "{log}");
}

#[test]
fn sweep_stop_ends_the_running_sweep_with_exit_1_saying_who_stopped_it_and_how_to_go_on() {
    let name = unique("t-stopfg").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = cpu_sweep(&name, 4, 60, "");
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]);
    wait_for("two trials running", HANG, || {
        sweep_containers(&name).lines().count() == 2
    });
    let stop = tfimg(folder.path(), &["sweep", "stop", &name]);
    assert_eq!(stop.code, 0, "{}", stop.tail());
    let run = running.finish(HANG);
    assert_eq!(run.code, 1, "{}", run.tail());
    assert!(
        run.stderr.contains(&format!(
            "error: sweep `{name}` was stopped by `tfimg sweep stop`, asked by "
        )) && run.stderr.contains(" (uid ")
            && run
                .stderr
                .contains(": its trial containers are removed and its results kept"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: `tfimg sweep sweep.yaml` goes on with the 4 trial(s) not done"),
        "{}",
        run.stderr
    );
    assert_eq!(sweep_containers(&name).trim(), "");
}

#[test]
fn stop_cleans_up_after_a_sweep_whose_tfimg_was_killed() {
    let name = unique("t-killed").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = cpu_sweep(&name, 4, 30, "");
    let dir = folder.path().join("runs").join(&name);
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]);
    wait_for("two trials running", HANG, || starts(&dir).len() == 2);
    running.signal(libc::SIGKILL);
    let run = running.finish(HANG);
    assert_eq!(run.code, 128 + libc::SIGKILL);
    // Its trials run on without it.
    assert_eq!(sweep_containers(&name).lines().count(), 2);
    // Running, and said to run on while no tfimg watches them.
    let status = tfimg(folder.path(), &["sweep", "status", &name]);
    assert!(
        status.stdout.contains("2 queued, 2 running; no tfimg is running it\n")
            && status.stdout.contains(&format!("running while no tfimg watches them: t001, t002; `tfimg sweep FILE` watches them again, `tfimg sweep stop {name}` stops them\n")),
        "{}",
        status.stdout
    );
    let stop = tfimg(folder.path(), &["sweep", "stop", &name]);
    assert_eq!(stop.code, 0, "{}", stop.tail());
    assert!(
        stop.stderr.contains("no tfimg was running the sweep"),
        "{}",
        stop.stderr
    );
    assert!(
        stop.stderr.contains("removed 2 trial container(s)")
            && stop
                .stderr
                .contains("t001: stopped; it runs again when the sweep goes on"),
        "{}",
        stop.stderr
    );
    assert_eq!(sweep_containers(&name).trim(), "");
    let stopped: Vec<serde_json::Value> = journal(&dir)
        .into_iter()
        .filter(|event| event["event"] == "trial_finished")
        .collect();
    assert_eq!(stopped.len(), 2, "{stopped:?}");
    assert!(stopped.iter().all(|event| event["stopped"] == true));
    // Their logs so far are kept.
    let log = std::fs::read_to_string(dir.join("t001/stdout.log")).unwrap();
    assert!(log.starts_with("epoch=1 acc=1\n"), "{log}");
}

/// `text` with what varies from run to run made fixed: the sweep's `name`, each duration
/// (`4s`, `1m05s`) with its digits as `#` (so columns stay aligned), and the note a run as
/// root adds.
fn redacted(text: &str, name: &str) -> String {
    let text = text.replace(name, "NAME");
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("note: tfimg runs as root") {
            continue;
        }
        let words: Vec<String> = line.split(' ').map(redacted_duration).collect();
        out.push_str(&words.join(" "));
    }
    out
}

/// `4s`, `12s;`, `1m05s:` with each digit as `#`; any other word as it is.
fn redacted_duration(word: &str) -> String {
    let bare = word.trim_end_matches([';', ':', ',', ')', '\n']);
    let duration = bare.len() > 1
        && bare.ends_with('s')
        && bare[..bare.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit() || c == 'm')
        && bare.starts_with(|c: char| c.is_ascii_digit());
    match duration {
        true => word
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect(),
        false => word.to_string(),
    }
}

#[test]
fn trials_that_finish_after_kill_9_keep_their_results_in_status_stop_and_the_next_run() {
    let name = unique("t-kill9").to_lowercase();
    let _guard = sweep_guard(&name);
    // Each trial appends four epochs to its metrics.jsonl, one a second.
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"for e in 1 2 3 4; do echo {{{{\\\\\\\"epoch\\\\\\\": $e, \\\\\\\"acc\\\\\\\": {{n}}}}}} >> $TFIMG_TRIAL_DIR/metrics.jsonl; sleep 1; done\"]\nparams:\n  n: [1, 2, 3, 4]\nmax_parallel: 2\nobjective: {{metric: acc, mode: max}}\n"
    );
    let folder = common::scratch(&[("sweep.yaml", &text)]);
    let dir = folder.path().join("runs").join(&name);
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]);
    wait_for("two trials started", HANG, || starts(&dir).len() == 2);
    running.signal(libc::SIGKILL);
    assert_eq!(running.finish(HANG).code, 128 + libc::SIGKILL);
    // A container the run made just before the kill, before its journal line: t003's
    // first attempt, labelled and mounted as tfimg makes it.
    let t003 = dir.join("t003");
    std::fs::create_dir_all(&t003).unwrap();
    std::fs::write(t003.join("params.json"), "{\"n\": 3}\n").unwrap();
    let owner = std::fs::metadata(dir.join("t001")).unwrap();
    use std::os::unix::fs::MetadataExt;
    std::os::unix::fs::chown(&t003, Some(owner.uid()), Some(owner.gid())).unwrap();
    let user = docker(&[
        "inspect",
        "--format",
        "{{.Config.User}}",
        &format!("{name}-t001"),
    ]);
    let made = std::process::Command::new("docker")
        .args(["run", "-d", "--name", &format!("{name}-t003")])
        .args(["--user", user.trim()])
        .args(["--label", &format!("io.tfimg.sweep={name}")])
        .args(["--label", "io.tfimg.trial=t003", "--label", "io.tfimg.attempt=1"])
        .args(["-e", "TFIMG_TRIAL_DIR=/tfimg/trial"])
        .args(["-v", &format!("{}:/tfimg/trial", t003.display())])
        .args(["tfimg/cpu-headless:2.9.3", "sh", "-c"])
        .arg("for e in 1 2 3 4; do echo \"{\\\"epoch\\\": $e, \\\"acc\\\": 3}\" >> /tfimg/trial/metrics.jsonl; sleep 1; done")
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    // All three finish while no tfimg watches.
    wait_for("the trials to finish", HANG, || {
        docker(&[
            "ps",
            "-q",
            "--filter",
            &format!("label=io.tfimg.sweep={name}"),
        ])
        .trim()
        .is_empty()
    });
    assert_eq!(sweep_containers(&name).lines().count(), 3);

    // `status` shows them done, the best by value, and says nothing is recorded yet.
    let shown = tfimg(folder.path(), &["sweep", "status", &name]);
    assert_eq!(shown.code, 0, "{}", shown.tail());
    insta::assert_snapshot!("status_after_kill_9", redacted(&shown.stdout, &name));
    let json = tfimg(folder.path(), &["sweep", "status", &name, "--json"]);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["best"], "t003", "{json:#}");
    assert_eq!(json["running"], false);
    let adopted: Vec<&serde_json::Value> = json["unwatched"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|unwatched| unwatched["adopted"] == true)
        .collect();
    assert_eq!(adopted.len(), 1, "{json:#}");
    assert_eq!(adopted[0]["trial"], "t003");
    assert_eq!(
        journal(&dir)
            .iter()
            .filter(|event| event["event"] == "trial_finished")
            .count(),
        0,
        "status records nothing"
    );

    // `stop` records the finished results as they are, never as stopped.
    let stop = tfimg(folder.path(), &["sweep", "stop", &name]);
    assert_eq!(stop.code, 0, "{}", stop.tail());
    insta::assert_snapshot!("stop_after_kill_9", redacted(&stop.stderr, &name));
    assert_eq!(sweep_containers(&name).trim(), "");
    let ends: Vec<(String, serde_json::Value, serde_json::Value)> = journal(&dir)
        .into_iter()
        .filter(|event| event["event"] == "trial_finished")
        .map(|event| {
            let trial = event["trial"].as_str().unwrap().to_string();
            (trial, event["exit_code"].clone(), event["stopped"].clone())
        })
        .collect();
    let null = serde_json::Value::Null;
    assert_eq!(
        ends,
        ["t001", "t002", "t003"].map(|trial| (
            trial.to_string(),
            serde_json::json!(0),
            null.clone()
        )),
        "exit 0, never `stopped`"
    );
    assert_eq!(status(&dir, "t003")["exit_code"], 0);

    // Running again runs only t004, and sets no finished folder aside.
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    assert_eq!(
        starts(&dir),
        BTreeMap::from(["t001", "t002", "t003", "t004"].map(|trial| (trial.to_string(), 1)))
    );
    let aside: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("before-attempt"))
        .collect();
    assert!(aside.is_empty(), "{aside:?}");
    let metrics = std::fs::read_to_string(t003.join("metrics.jsonl")).unwrap();
    assert_eq!(metrics.lines().count(), 4, "{metrics}");
    assert!(
        run.stdout.contains("\nbest: t004 last acc=4 (n=4): "),
        "{}",
        run.stdout
    );
    assert_eq!(sweep_containers(&name).trim(), "");
}

#[test]
fn a_stopped_attempt_then_failures_count_retries_and_rank_by_the_best_epoch() {
    let name = unique("t-retry-best").to_lowercase();
    let _guard = sweep_guard(&name);
    // Trial 2 hangs the first time (until Ctrl-C), then fails; the others report three
    // epochs whose best is the second.
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"if [ {{n}} = 2 ]; then if [ -e /state/hung ]; then echo broken >&2; exit 3; fi; touch /state/hung; sleep 120; fi; echo epoch=1 acc=$(({{n}}*10)); echo epoch=2 acc=$(({{n}}*10+5)); echo epoch=3 acc=$(({{n}}*10+1))\"]\nmounts: [\"./state:/state\"]\nparams: {{n: [1, 2, 3]}}\nmax_parallel: 3\nretries: 1\nobjective: {{metric: acc, mode: max, use: best}}\n"
    );
    let folder = common::scratch(&[("sweep.yaml", &text)]);
    let dir = folder.path().join("runs").join(&name);
    let running = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]);
    wait_for("t001 and t003 done, t002 hanging", HANG, || {
        let finished = journal(&dir)
            .iter()
            .filter(|event| event["event"] == "trial_finished")
            .count();
        finished == 2 && folder.path().join("state/hung").exists()
    });
    running.signal(libc::SIGINT);
    assert_eq!(running.finish(HANG).code, 130);
    // Going on: t002's attempt 2 fails (its first retry), attempt 3 fails for good.
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("t002 failed (exit 3) after ")
            && run.stderr.contains("; queued again (retry 1 of 1)\n")
            && !run.stderr.contains("retry 2 of 1"),
        "{}",
        run.stderr
    );
    insta::assert_snapshot!(
        "results_ranked_by_the_best_epoch",
        redacted(&run.stdout, &name)
    );
    let folder_text = folder.path().display().to_string();
    insta::assert_snapshot!(
        "a_failure_after_a_stopped_attempt",
        redacted(&run.stderr, &name).replace(&folder_text, "FOLDER")
    );
    let status = tfimg(folder.path(), &["sweep", "status", &name, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["best"], "t003", "{status:#}");
    assert_eq!(
        status["objective"],
        serde_json::json!({"metric": "acc", "mode": "max", "use": "best"})
    );
    let t002 = &status["trials"][1];
    assert_eq!(
        (
            &t002["trial"],
            &t002["status"],
            &t002["attempt"],
            &t002["exit_code"]
        ),
        (
            &serde_json::json!("t002"),
            &serde_json::json!("failed"),
            &serde_json::json!(3),
            &serde_json::json!(3)
        ),
        "{status:#}"
    );
    assert_eq!(
        (&status["trials"][2]["value"], &status["trials"][2]["epoch"]),
        (&serde_json::json!(35.0), &serde_json::json!(2.0))
    );
    let results = tfimg(folder.path(), &["sweep", "results", &name, "--json"]);
    let results: serde_json::Value = serde_json::from_str(&results.stdout).unwrap();
    let failed = results["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["trial"] == "t002")
        .unwrap();
    assert_eq!(
        (&failed["attempt"], &failed["exit_code"]),
        (&serde_json::json!(3), &serde_json::json!(3))
    );
}

#[test]
fn a_gpu_pool_the_host_cannot_give_is_refused_at_gpus_naming_the_sweep_file_s_key() {
    let name = unique("t-gpus").to_lowercase();
    let _guard = sweep_guard(&name);
    let file = |gpus: &str| {
        format!(
            "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"echo acc={{n}}\"]\nparams: {{n: [1, 2, 3]}}\n{gpus}\n"
        )
    };
    let folder = common::scratch(&[
        ("missing.yaml", &file("gpus: [0, 1, 7]")),
        ("listed.yaml", &file("gpus: [0, 1]")),
    ]);
    let stderr = |run: &common::Run| redacted(&run.stderr, &name);
    // This machine has no NVIDIA driver: the dry run refuses as the run does, at `gpus:`.
    let driver = std::path::Path::new("/proc/driver/nvidia/version").exists();
    if driver {
        eprintln!("skipping the driverless half: this machine has an NVIDIA driver");
    } else {
        for args in [
            &["sweep", "missing.yaml", "--dry-run"][..],
            &["sweep", "missing.yaml"],
        ] {
            let run = tfimg(folder.path(), args);
            assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
            assert_eq!(run.stdout, "", "{args:?}");
            insta::assert_snapshot!("gpus_on_a_host_without_a_driver", stderr(&run));
        }
        assert!(!folder.path().join("runs").exists(), "nothing was created");
    }
    // Four GPUs (the stand-in nvidia-smi): every id it lacks is named.
    let path = common::gpu::standin_path();
    let env = [("PATH", path.as_str())];
    let run = common::tfimg_with_env(folder.path(), &["sweep", "missing.yaml", "--dry-run"], &env);
    assert_eq!(run.code, 1, "{}", run.tail());
    insta::assert_snapshot!("gpus_the_host_lacks", stderr(&run));
    // The toolkit's hook is on tfimg's PATH but this daemon has no NVIDIA device driver
    // (installed, Docker not restarted): the daemon's refusal is said at `gpus:`.
    let run = common::tfimg_with_env(folder.path(), &["sweep", "listed.yaml"], &env);
    assert_eq!(run.code, 2, "{}", run.tail());
    insta::assert_snapshot!("gpus_the_daemon_refuses", stderr(&run));
    assert!(!run.stderr.contains("--gpus"), "{}", run.tail());
    assert_eq!(sweep_containers(&name).trim(), "");
}

#[test]
fn a_trial_past_its_timeout_is_stopped_retried_and_counted_as_failed() {
    let name = unique("t-timeout").to_lowercase();
    let _guard = sweep_guard(&name);
    // t002 would run a minute; `timeout: 3s` stops each of its two attempts.
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"if [ {{n}} = 2 ]; then sleep 60; fi; echo acc={{n}}\"]\nparams: {{n: [1, 2]}}\nmax_parallel: 2\nretries: 1\ntimeout: 3s\nobjective: {{metric: acc, mode: max}}\n"
    );
    let folder = common::scratch(&[("sweep.yaml", &text)]);
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let row = run
        .stdout
        .lines()
        .find(|line| line.starts_with("t002"))
        .unwrap();
    assert!(row.contains("failed (timed out after "), "{}", run.stdout);
    assert_eq!(
        run.stderr.matches("t002 timed out after ").count(),
        2,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("(`timeout: 3s`)"), "{}", run.tail());
    assert!(
        run.stderr.contains("queued again (retry 1 of 1)"),
        "{}",
        run.stderr
    );
    let dir = folder.path().join("runs").join(&name);
    assert_eq!(starts(&dir)["t002"], 2);
    // Stopped mid-sleep: it never got to report.
    let log = std::fs::read_to_string(dir.join("t002/stdout.log")).unwrap();
    assert_eq!(log, "", "{log}");
    let timed_out = journal(&dir)
        .iter()
        .filter(|event| event["event"] == "trial_timed_out")
        .count();
    assert_eq!(timed_out, 2);
    assert_eq!(sweep_containers(&name).trim(), "", "no container is left");
}
