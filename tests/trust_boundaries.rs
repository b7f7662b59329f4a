//! The trust boundaries (README "Trust boundaries"), tried as the other side would, on the
//! real Engine: trials that plant links, FIFOs and devices in their folders; containers
//! started by root that must hold no root; a container whose files come back with links,
//! hard links, odd modes, sparse holes and terminal escapes; exports and team folders where
//! another user planted links.

mod common;

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::Duration;

use common::sweep::{sweep_containers, sweep_guard};
use common::{spawn_tfimg, tfimg};

const HANG: Duration = Duration::from_secs(600);

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Every entry below `folder` (links not followed) with its owner's uid.
fn owners(folder: &Path) -> Vec<(String, u32)> {
    let mut found = Vec::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let shown = path.strip_prefix(folder).unwrap().display().to_string();
            found.push((shown, metadata.uid()));
            if metadata.is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Item 1: a trial replaces its `stdout.log` with a link to a host file, links its
/// `metrics.jsonl` to a host file only its owner may read, another to `/dev/zero`, a
/// third makes it a FIFO. tfimg writes nothing through the link, reads nothing through
/// any of them, does not hang, and the sweep ends with each trial's own results. Run as
/// root (CI), every file in the trials' folders then belongs to the user the trials ran
/// as, never to root.
#[tokio::test]
async fn a_trial_that_plants_links_and_fifos_in_its_folder_reaches_nothing_of_the_host() {
    let Some(_engine) = common::engine().await else {
        return;
    };
    let name = common::unique("t-hostile").to_lowercase();
    let _guard = sweep_guard(&name);
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "untouched\n").unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "{\"acc\": 0.999, \"password\": \"hunter2\"}\n").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    // Each trial waits a moment (tfimg starts its logs afresh as it attaches), plants its
    // trap, then reports a metric on stdout and keeps talking.
    let script = "cd \"$TFIMG_TRIAL_DIR\"; sleep 2; \
        case {kind} in \
          link) ln -s \"$VICTIM\" new.log && mv -f new.log stdout.log; ln -s \"$SECRET\" metrics.jsonl ;; \
          zero) ln -s /dev/zero metrics.jsonl ;; \
          fifo) mkfifo metrics.jsonl ;; \
        esac; \
        echo acc={n}; echo planted-{kind}; sleep 2; echo still-{kind}";
    let text = format!(
        "sweep: {name}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, {script:?}]\n\
         env: {{VICTIM: {victim:?}, SECRET: {secret:?}}}\n\
         trials: [{{kind: link, n: 1}}, {{kind: zero, n: 2}}, {{kind: fifo, n: 3}}]\n\
         max_parallel: 3\nobjective: {{metric: acc, mode: max}}\n",
        victim = victim.display().to_string(),
        secret = secret.display().to_string(),
    );
    let folder = common::scratch(&[("sweep.yaml", &text)]);
    let run = spawn_tfimg(folder.path(), &["sweep", "sweep.yaml"], &[]).finish(HANG);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched\n");
    assert!(
        !run.stdout.contains("hunter2") && !run.stdout.contains("0.999"),
        "{}",
        run.stdout
    );
    let results = tfimg(folder.path(), &["sweep", "results", &name, "--json"]);
    assert_eq!(results.code, 0, "{}", results.stderr);
    assert!(!results.stdout.contains("0.999"), "{}", results.stdout);

    let dir = folder.path().join("runs").join(&name);
    let trial = |id: &str| dir.join(id);
    // The link at stdout.log was replaced by the log itself, which has the trial's lines.
    let log = trial("t001").join("stdout.log");
    assert!(std::fs::symlink_metadata(&log).unwrap().is_file());
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("still-link"), "{log}");
    // The planted links and the FIFO are still there, untouched and unread.
    assert!(
        std::fs::symlink_metadata(trial("t001").join("metrics.jsonl"))
            .unwrap()
            .is_symlink()
    );
    assert!(
        std::fs::symlink_metadata(trial("t003").join("metrics.jsonl"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // Each trial's metric came from its own stdout, not through the traps.
    let json: serde_json::Value = serde_json::from_str(&results.stdout).unwrap();
    let values: Vec<String> = json["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| format!("{} {} {}", row["trial"], row["best"], row["status"]))
        .collect();
    assert_eq!(
        values,
        [
            "\"t003\" 3.0 \"done\"",
            "\"t002\" 2.0 \"done\"",
            "\"t001\" 1.0 \"done\""
        ],
        "{}",
        results.stdout
    );
    if running_as_root() {
        let owned_by_root: Vec<_> = owners(&dir)
            .into_iter()
            .filter(|(path, uid)| *uid == 0 && path.starts_with('t'))
            .collect();
        assert!(owned_by_root.is_empty(), "{owned_by_root:?}");
    }
    assert!(sweep_containers(&name).is_empty());
}
