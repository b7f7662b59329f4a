//! A sweep on a remote engine, through a real OpenSSH server on 127.0.0.1
//! (tests/common/sshd.rs) and the machine's own Docker behind it: no trial folder can be
//! mounted there, so each trial's `params.json` is copied in, its `metrics.jsonl` comes
//! back while it runs, and its whole folder comes back when it ends; nothing is left
//! running on the daemon or as ssh processes. A sweep file with `mounts:` is refused
//! with exit 1 before anything exists.

mod common;

use std::time::Duration;

use common::sshd::Sshd;
use common::sweep::{sweep_containers, sweep_guard};
use common::{scratch, unique, wait_for};

/// Time for ssh processes to go after tfimg exits (a hang catcher only).
const SETTLE: Duration = Duration::from_secs(20);

/// Each trial reads its params, writes one metric a second for 6 seconds into
/// `metrics.jsonl` and then a "model" file (no braces: they are the command's placeholders;
/// `n` is also its argument, unused).
const TRIAL: &str = "import json, os, time\nd = os.environ['TFIMG_TRIAL_DIR']\nn = json.load(open(d + '/params.json'))['n']\nfor step in range(1, 7):\n    with open(d + '/metrics.jsonl', 'a') as f:\n        f.write(json.dumps(dict(step=step, acc=n * step / 10)) + '\\n')\n    time.sleep(1)\nopen(d + '/model.txt', 'w').write('model of n=%s' % n)\nprint('trained', n)\n";

fn sweep_file(name: &str, rest: &str) -> String {
    format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [python, -c, {}, \"n={{n}}\"]\nparams:\n  n: [1, 2, 3]\nmax_parallel: 3\nobjective: {{metric: acc, mode: max}}\n{rest}",
        serde_json::to_string(TRIAL).unwrap()
    )
}

#[test]
fn a_sweep_over_ssh_copies_each_trial_folder_in_and_brings_it_back() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let name = unique("t-remote-sweep").to_lowercase();
    let guard = sweep_guard(&name);
    // A project that keeps JSON out of git: `params.json` must travel all the same.
    let folder = scratch(&[
        ("sweep.yaml", &sweep_file(&name, "")),
        (".gitignore", "*.json\n"),
    ]);
    let running = sshd.spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    let dir = folder.path().join("runs").join(&name);
    // While the trials run, their metrics come back from the remote container.
    let metrics = dir.join("t003/metrics.jsonl");
    wait_for(
        "t003's metrics while it runs",
        Duration::from_secs(120),
        || {
            std::fs::read_to_string(&metrics).is_ok_and(|text| text.lines().count() >= 2)
                && !sweep_containers(&name).trim().is_empty()
        },
    );
    assert!(
        !dir.join("t003/model.txt").exists(),
        "the model comes back at the end only"
    );
    let run = running.finish(Duration::from_secs(300));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let best = run
        .stderr
        .lines()
        .chain(run.stdout.lines())
        .find(|line| line.contains("best"))
        .unwrap_or_default()
        .to_string();
    assert!(best.contains("t003"), "{}\n{}", run.stdout, run.stderr);
    for n in 1..=3 {
        let trial = dir.join(format!("t00{n}"));
        let read = |file: &str| std::fs::read_to_string(trial.join(file)).unwrap();
        assert_eq!(read("model.txt"), format!("model of n={n}"));
        assert_eq!(
            read("metrics.jsonl").lines().count(),
            6,
            "{}",
            read("metrics.jsonl")
        );
        assert_eq!(read("stdout.log"), format!("trained {n}\n"));
        assert_eq!(read("params.json"), format!("{{\"n\": {n}}}\n"));
        assert!(
            read("status.json").contains("\"exit_code\": 0"),
            "{}",
            read("status.json")
        );
    }
    assert_eq!(
        sweep_containers(&name).trim(),
        "",
        "no trial container is left"
    );
    let left = sshd.settle(SETTLE);
    assert!(
        left.is_empty(),
        "the sweep left processes running: {left:#?}"
    );
    drop(guard);
}

#[test]
fn a_sweep_file_with_mounts_is_refused_on_a_remote_engine_before_anything_exists() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let name = unique("t-remote-sweep-mounts").to_lowercase();
    let guard = sweep_guard(&name);
    let folder = scratch(&[
        ("sweep.yaml", &sweep_file(&name, "mounts: [./data]\n")),
        ("data/x.txt", "1"),
    ]);
    let run = sshd.tfimg_in(folder.path(), &[], &["sweep", "sweep.yaml"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let endpoint = sshd.url(sshd.port);
    assert_eq!(
        run.stderr,
        format!("error: `sweep.yaml`:8:10: `mounts: ./data` names a folder on this machine, but the engine `{endpoint}` runs on another host\nhint: only copies (`--sync`, a sweep trial's own folder) and volumes (`--volume data:/tf/data`) reach an engine on another host; run tfimg on that host itself to use its folders\n")
    );
    assert!(!folder.path().join("runs").exists(), "nothing was written");
    assert_eq!(sweep_containers(&name).trim(), "");
    let left = sshd.settle(SETTLE);
    assert!(left.is_empty(), "left processes running: {left:#?}");
    drop(guard);
}
