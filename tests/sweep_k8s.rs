//! `tfimg sweep FILE --k8s -o DIR` through the real binary: the examples' manifests pass
//! `kubernetes-validate --strict` (the Kubernetes release tfimg states as the least, 1.29,
//! and the newest the validator knows), and each pod's parameters resolve from its index:
//! a pod of the export is started as Kubernetes would start it, with the real Docker
//! Engine (its image and entrypoint, `args`, `env` as the kubelet expands it, the
//! ConfigMap's files where the pod mounts them, an empty folder for the pod's own and one
//! for the claim, its uid, no capability, `JOB_COMPLETION_INDEX`), and what the trial's
//! program received is compared byte for byte with the trial of that index.

mod common;
// Katib's rules, shared with the export's unit tests.
#[path = "../crates/core/src/sweep/k8s/katib/rules_tests.rs"]
mod katib;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{scratch, tfimg_with_env, unique, DockerGuard};

/// Exports need no daemon: none is reachable here.
const NO_DAEMON: (&str, &str) = ("DOCKER_HOST", "unix:///nonexistent/tfimg-sweep-k8s.sock");

/// The releases the manifests are validated against: the least tfimg states (per-index
/// retries, `backoffLimitPerIndex`, are on by default from 1.29) and the validator's newest.
const KUBERNETES_RELEASES: [Option<&str>; 2] = [Some("1.29.0"), None];

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/sweep")
        .join(name)
}

/// `tfimg sweep FILE --k8s -o out ARGS` in `folder`: its stderr and the manifests' documents.
fn export(folder: &Path, file: &Path, args: &[&str]) -> (String, Vec<serde_yaml::Value>, PathBuf) {
    let file = file.to_str().unwrap();
    let mut argv = vec!["sweep", file, "--k8s", "-o", "out"];
    argv.extend(args);
    let made = tfimg_with_env(folder, &argv, &[NO_DAEMON]);
    assert_eq!(made.code, 0, "{}", made.tail());
    assert_eq!(made.stdout, "", "the manifests go to the file");
    let written: Vec<PathBuf> = std::fs::read_dir(folder.join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let text = std::fs::read_to_string(&written[0]).unwrap();
    let documents = text
        .split("\n---\n")
        .skip(1)
        .map(|document| serde_yaml::from_str(document).unwrap())
        .collect();
    (made.stderr, documents, written[0].clone())
}

fn validate(manifests: &Path) {
    for release in KUBERNETES_RELEASES {
        let mut command = Command::new("kubernetes-validate");
        command.arg("--strict");
        if let Some(release) = release {
            command.args(["--kubernetes-version", release]);
        }
        let validated = command
            .arg(manifests)
            .output()
            .expect("kubernetes-validate is installed (scripts/setup-machine)");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&validated.stdout),
            String::from_utf8_lossy(&validated.stderr)
        );
        assert!(validated.status.success(), "{release:?}: {said}");
        assert_eq!(said.matches(" passed for resource ").count(), 3, "{said}");
    }
}

fn find<'a>(documents: &'a [serde_yaml::Value], kind: &str) -> &'a serde_yaml::Value {
    documents
        .iter()
        .find(|document| document["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {documents:?}"))
}

#[test]
fn the_examples_export_to_manifests_that_validate_strictly() {
    let folder = scratch(&[]);
    let (stderr, documents, path) = export(
        folder.path(),
        &example("sweep-gpu.yaml"),
        &[
            "--registry",
            "registry.example.com:5000",
            "--volume-size",
            "50Gi",
        ],
    );
    validate(&path);
    assert_eq!(path, folder.path().join("out/lr-grid-gpu.yaml"));
    let job = find(&documents, "Job");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(job["spec"]["completions"], 27);
    assert_eq!(
        job["spec"]["parallelism"], 3,
        "`gpus: [0, 1, 2]`, one per trial"
    );
    assert_eq!(job["spec"]["backoffLimitPerIndex"], 1, "`retries: 1`");
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    let container = &pod["containers"][0];
    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], 1);
    assert_eq!(container["resources"]["limits"]["cpu"], "2000m");
    assert_eq!(
        container["image"],
        "registry.example.com:5000/tfimg/gpu-headless:2.9.3"
    );
    let claim = find(&documents, "PersistentVolumeClaim");
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "50Gi");
    let data = find(&documents, "ConfigMap")["data"].as_mapping().unwrap();
    assert_eq!(
        data.len(),
        1 + 2 * 27,
        "the launcher, and a script and params per index"
    );
    // The code mount cannot come along: a note says how to bring the code.
    assert!(
        stderr.contains("note: mount `./code:/tf/code:ro` is not exported: a cluster has no `"),
        "{stderr}"
    );
    assert!(
        stderr.contains("start it with: kubectl apply -f out\n"),
        "{stderr}"
    );

    let folder = scratch(&[]);
    let (_, documents, path) = export(folder.path(), &example("sweep.yaml"), &[]);
    validate(&path);
    let job = find(&documents, "Job");
    assert_eq!(
        job["spec"]["parallelism"], 3,
        "`max_parallel: 3` on the CPU"
    );
    let limits = &job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
    assert!(limits.get("nvidia.com/gpu").is_none(), "{limits:?}");
    assert_eq!(
        find(&documents, "PersistentVolumeClaim")["spec"]["resources"]["requests"]["storage"],
        "10Gi"
    );
}

/// A pod of the export, as Kubernetes would start it.
struct Pod {
    image: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    files: BTreeMap<String, String>,
    uid: u64,
    gid: u64,
}

impl Pod {
    fn of(documents: &[serde_yaml::Value]) -> Pod {
        let job = find(documents, "Job");
        let pod = &job["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        assert!(
            container.get("command").is_none(),
            "the image's entrypoint stays"
        );
        let text = |value: &serde_yaml::Value| value.as_str().unwrap().to_string();
        // The kubelet expands `$(NAME)` in env values (from the variables before them)
        // and in args, and turns `$$` into `$`.
        let mut env: Vec<(String, String)> = Vec::new();
        for entry in container["env"].as_sequence().unwrap() {
            let value = kubelet_expand(&text(&entry["value"]), &env);
            env.push((text(&entry["name"]), value));
        }
        let args = container["args"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|arg| kubelet_expand(&text(arg), &env))
            .collect();
        let files = find(documents, "ConfigMap")["data"]
            .as_mapping()
            .unwrap()
            .iter()
            .map(|(key, value)| (text(key), text(value)))
            .collect();
        let mounts: Vec<(String, String)> = container["volumeMounts"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|mount| (text(&mount["name"]), text(&mount["mountPath"])))
            .collect();
        assert_eq!(
            mounts[..3],
            [
                ("tfimg".to_string(), "/tfimg".to_string()),
                ("trials".into(), "/tfimg/trials".into()),
                ("runs".into(), "/tfimg/runs".into())
            ]
        );
        Pod {
            image: text(&container["image"]),
            args,
            env,
            files,
            uid: pod["securityContext"]["runAsUser"].as_u64().unwrap(),
            gid: pod["securityContext"]["runAsGroup"].as_u64().unwrap(),
        }
    }

    /// Runs the pod of completion `index` (none: no index) with the real engine: the
    /// ConfigMap's files at /tfimg/trials, an empty folder of the pod's own at /tfimg
    /// and `runs` as the claim at /tfimg/runs; `extra` adds `docker run` options.
    fn run(&self, index: Option<usize>, runs: &Path, extra: &[String]) -> Output {
        let root = tempfile::tempdir().unwrap();
        let (own, trials) = (root.path().join("pod"), root.path().join("trials"));
        std::fs::create_dir(&own).unwrap();
        std::fs::create_dir(&trials).unwrap();
        // An emptyDir is writable by the pod; the claim by its group (fsGroup).
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o777)).unwrap();
        for (key, value) in &self.files {
            std::fs::write(trials.join(key), value).unwrap();
        }
        let name = unique("t-sweep-k8s");
        let _guard = DockerGuard::containers(&[&name]);
        let mut run: Vec<String> = [
            "run",
            "--rm",
            "--name",
            &name,
            "--user",
            &format!("{}:{}", self.uid, self.gid),
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--network",
            "none",
            "-v",
            &format!("{}:/tfimg", own.display()),
            "-v",
            &format!("{}:/tfimg/trials:ro", trials.display()),
            "-v",
            &format!("{}:/tfimg/runs", runs.display()),
        ]
        .map(String::from)
        .to_vec();
        if let Some(index) = index {
            run.extend(["-e".into(), format!("JOB_COMPLETION_INDEX={index}")]);
        }
        for (name, value) in &self.env {
            run.extend(["-e".into(), format!("{name}={value}")]);
        }
        run.extend(extra.iter().cloned());
        run.push(self.image.clone());
        run.extend(self.args.iter().cloned());
        Command::new("docker").args(&run).output().unwrap()
    }
}

/// Kubernetes' expansion of `$(NAME)` references (k8s.io/kubernetes
/// third_party/forked/golang/expansion): `$$` is one `$`, `$(NAME)` of a variable defined
/// before is its value, anything else stays as written.
fn kubelet_expand(input: &str, env: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = input;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if after.is_empty() {
            out.push('$');
            rest = after;
        } else if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('(') {
            match tail.find(')') {
                Some(end) => {
                    let name = &tail[..end];
                    match env.iter().rev().find(|(key, _)| key == name) {
                        Some((_, value)) => out.push_str(value),
                        None => out.push_str(&format!("$({name})")),
                    }
                    rest = &tail[end + 1..];
                }
                None => {
                    out.push_str("$(");
                    rest = tail;
                }
            }
        } else {
            let next = after.chars().next().unwrap();
            out.push('$');
            out.push(next);
            rest = &after[next.len_utf8()..];
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn the_kubelet_expansion_this_test_applies_is_kubernetes_own() {
    let env = [("A".to_string(), "one".to_string())];
    for (input, expanded) in [
        (
            "$(A) $(B) $$(A) $$$$ $ $x $( a$",
            "one $(B) $(A) $$ $ $x $( a$",
        ),
        ("$$", "$"),
        ("$(A", "$(A"),
    ] {
        assert_eq!(kubelet_expand(input, &env), expanded, "{input}");
    }
}

/// Awkward params: quotes, `$`, backquotes, a backslash, spaces at both ends, a glob,
/// an option-like and an empty value. The command's program text has newlines, quotes
/// and `$` of its own; the sweep's env has `$(A)` and `$$`, which the kubelet would
/// expand if they were not escaped.
const NOTES: [&str; 6] = [
    "it's \"quoted\" $HOME $(id) `id` \\ end",
    "  two  spaces ",
    "*",
    "-n",
    "",
    "naïve ☃",
];

const REPORTER: &str = r#"import json, os, sys
WANTED = ("A", "B", "TFIMG_SWEEP", "TFIMG_TRIAL", "TFIMG_TRIAL_DIR")
trial = os.environ["TFIMG_TRIAL_DIR"]
with open(os.path.join(trial, "metrics.jsonl"), "a") as out:
    out.write(json.dumps(dict(step=1, val_accuracy=0.5)) + "\n")
print(json.dumps(dict(
    argv=sys.argv[1:],
    env=dict((k, v) for k, v in os.environ.items() if k.startswith("TFIMG_PARAM_") or k in WANTED),
    params=json.load(open(os.path.join(trial, "params.json"))),
    ids=[os.getuid(), os.getgid()],
    folder=os.path.realpath(trial),
    literal='$HOME "$(id)"',
)))
"#;

fn echo_sweep() -> String {
    let notes: Vec<String> = NOTES.iter().map(|note| format!("{note:?}")).collect();
    format!(
        "sweep: echo\nimage: tfimg/cpu-headless:2.9.3\ncommand:\n  - python\n  - -c\n  - |\n{}  - --note\n  - \"{{note}}\"\n  - --lr\n  - \"{{lr}}\"\nenv:\n  A: one\n  B: \"$(A) and $$ and `x`\"\nparams:\n  note: [{}]\n  lr: [1e-3]\nmax_parallel: 2\nretries: 2\n",
        REPORTER
            .lines()
            .map(|line| format!("    {line}\n"))
            .collect::<String>(),
        notes.join(", ")
    )
}

#[test]
fn each_pod_runs_exactly_its_index_s_trial() {
    let folder = scratch(&[("echo.yaml", &echo_sweep())]);
    let (_, documents, path) = export(folder.path(), &folder.path().join("echo.yaml"), &[]);
    validate(&path);
    let pod = Pod::of(&documents);
    assert_eq!(pod.image, "tfimg/cpu-headless:2.9.3");
    let runs = folder.path().join("claim");
    std::fs::create_dir(&runs).unwrap();
    std::fs::set_permissions(&runs, std::fs::Permissions::from_mode(0o777)).unwrap();
    for (index, note) in NOTES.iter().enumerate() {
        let output = pod.run(Some(index), &runs, &[]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "index {index}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let seen: serde_json::Value =
            serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("{stdout}"));
        let trial = format!("t00{}", index + 1);
        assert_eq!(
            seen["argv"],
            serde_json::json!(["--note", note, "--lr", "0.001"]),
            "index {index}"
        );
        assert_eq!(
            seen["env"],
            serde_json::json!({
                "A": "one",
                "B": "$(A) and $$ and `x`",
                "TFIMG_SWEEP": "echo",
                "TFIMG_TRIAL": trial,
                "TFIMG_TRIAL_DIR": "/tfimg/trial",
                "TFIMG_PARAM_NOTE": note,
                "TFIMG_PARAM_LR": "0.001",
            }),
            "index {index}"
        );
        assert_eq!(
            seen["params"],
            serde_json::json!({"note": note, "lr": 0.001})
        );
        assert_eq!(seen["ids"], serde_json::json!([pod.uid, pod.gid]));
        assert_eq!(
            seen["literal"], "$HOME \"$(id)\"",
            "the program text arrived whole"
        );
        // The trial's folder is its own on the claim, as `runs/<sweep>/<trial>/` locally.
        assert_eq!(seen["folder"], format!("/tfimg/runs/{trial}"));
        let kept = runs.join(&trial);
        let params: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(kept.join("params.json")).unwrap())
                .unwrap();
        assert_eq!(params, seen["params"]);
        assert_eq!(
            std::fs::read_to_string(kept.join("metrics.jsonl")).unwrap(),
            "{\"step\": 1, \"val_accuracy\": 0.5}\n"
        );
    }
    let mut kept: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["t001", "t002", "t003", "t004", "t005", "t006"]);
}

#[test]
fn a_pod_without_its_index_or_past_the_last_one_stops_saying_so() {
    let folder = scratch(&[(
        "plain.yaml",
        "sweep: plain\nimage: debian:bullseye-slim\ncommand: [sh, -c, 'printf \"%s|\" \"$@\"', sh, \"{x}\"]\nparams: {x: [\"a b\", \"$c\"]}\n",
    )]);
    let (_, documents, _) = export(folder.path(), &folder.path().join("plain.yaml"), &[]);
    let pod = Pod::of(&documents);
    let runs = folder.path().join("claim");
    std::fs::create_dir(&runs).unwrap();
    std::fs::set_permissions(&runs, std::fs::Permissions::from_mode(0o777)).unwrap();
    // An image without tfimg's entrypoint: the launcher runs under its plain sh (dash).
    let output = pod.run(Some(1), &runs, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "$c|");
    let output = pod.run(None, &runs, &[]);
    assert_eq!(output.status.code(), Some(64));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("tfimg: JOB_COMPLETION_INDEX is '', not an index"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = pod.run(Some(2), &runs, &[]);
    assert_eq!(output.status.code(), Some(64));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("tfimg: no trial has index 2 in /tfimg/trials"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A trial of the CPU example really trains in its pod, with the example's code where the
/// export's note says to put it (here mounted read-only, as if baked into the image), and
/// its metrics land in its own folder on the claim.
#[test]
fn a_pod_of_the_example_trains_its_trial_into_the_claim() {
    let folder = scratch(&[]);
    let (_, documents, _) = export(folder.path(), &example("sweep.yaml"), &[]);
    let pod = Pod::of(&documents);
    let runs = folder.path().join("claim");
    std::fs::create_dir(&runs).unwrap();
    std::fs::set_permissions(&runs, std::fs::Permissions::from_mode(0o777)).unwrap();
    let code = format!("{}:/tf/code:ro", example("code").display());
    // Index 13 is t014: lr 5e-4, wd 5e-5, aug medium (the grid varies `aug` fastest).
    let output = pod.run(Some(13), &runs, &["-v".to_string(), code]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{said}");
    let trial = runs.join("t014");
    let params: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(trial.join("params.json")).unwrap()).unwrap();
    assert_eq!(
        params,
        serde_json::json!({"lr": 0.0005, "wd": 0.00005, "aug": "medium"})
    );
    let metrics = std::fs::read_to_string(trial.join("metrics.jsonl")).unwrap();
    let epochs: Vec<serde_json::Value> = metrics
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(epochs.len(), 4, "{metrics}");
    assert!(
        epochs.iter().all(|epoch| epoch["val_accuracy"].is_f64()),
        "{metrics}"
    );
    assert!(trial.join("tensorboard").is_dir(), "{said}");
}

/// A TPE sweep with ASHA on GPUs: a Katib Experiment, ASHA written as medianstop and said
/// so on stderr and in the file; the Experiment passes Katib's rules, and its trial Job,
/// with a trial's values in place as Katib puts them, passes Kubernetes' schema.
#[test]
fn a_sweep_that_learns_exports_to_a_katib_experiment() {
    let folder = scratch(&[(
        "learn.yaml",
        concat!(
            "sweep: learn\nspec: gpu-headless\n",
            "command: [python, /tf/code/train.py, --lr, \"{lr}\", --opt, \"{opt}\"]\n",
            "objective: {metric: val_accuracy, mode: max}\n",
            "tpe: {count: 24, seed: 5, lr: {loguniform: [1e-5, 1e-2]}, opt: {choice: [adam, sgd]}}\n",
            "early_stop: {rule: asha, max_epochs: 9, grace: 1, reduction: 3}\n",
            "gpus: [0, 1]\nmax_failed: 4\n",
        ),
    )]);
    let (stderr, documents, path) = export(
        folder.path(),
        &folder.path().join("learn.yaml"),
        &["--registry", "registry.example.com:5000"],
    );
    assert_eq!(path, folder.path().join("out/learn.yaml"));
    let asha = "note: `early_stop: {rule: asha}` has no Katib equivalent: written as Katib's `medianstop`, the nearest it has";
    assert!(stderr.contains(asha), "{stderr}");
    assert!(
        stderr.contains("note: Katib's `tpe` is hyperopt's TPE"),
        "{stderr}"
    );
    assert!(
        stderr.contains("wrote `out/learn.yaml`: Katib Experiment `learn` (tpe with medianstop early stopping, 24 trial(s), 2 at once, 1 GPU(s) each, image `registry.example.com:5000/tfimg/gpu-headless:2.9.3`)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "start it with: kubectl apply -f out (Katib must be installed on the cluster)\n"
        ),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let header: Vec<&str> = text
        .lines()
        .take_while(|line| line.starts_with('#'))
        .collect();
    assert!(
        header
            .iter()
            .any(|line| line.contains("`early_stop: {rule: asha}` has no Katib equivalent")),
        "{text}"
    );
    assert_eq!(documents.len(), 1);
    let experiment = serde_json::to_value(&documents[0]).unwrap();
    assert_eq!(katib::problems(&experiment), Vec::<String>::new(), "{text}");
    let spec = &experiment["spec"];
    assert_eq!(experiment["kind"], "Experiment");
    assert_eq!(spec["algorithm"]["algorithmName"], "tpe");
    assert_eq!(spec["earlyStopping"]["algorithmName"], "medianstop");
    assert_eq!(spec["maxFailedTrialCount"], 4);

    // The trial Job as Katib makes it for one trial: values in place, its name set.
    let mut job = spec["trialTemplate"]["trialSpec"].to_string();
    for (name, value) in [
        ("lr", "0.000316"),
        ("opt", "sgd"),
        ("tfimg-trial", "learn-x7k2p9qz"),
    ] {
        job = job.replace(&format!("${{trialParameters.{name}}}"), value);
    }
    let mut job: serde_json::Value = serde_json::from_str(&job).unwrap();
    job["metadata"]["name"] = "learn-x7k2p9qz".into();
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], 1);
    assert!(
        container["command"][2]
            .as_str()
            .unwrap()
            .ends_with("python /tf/code/train.py --lr '0.000316' --opt 'sgd'"),
        "{container}"
    );
    let trial_job = folder.path().join("trial-job.yaml");
    std::fs::write(&trial_job, serde_yaml::to_string(&job).unwrap()).unwrap();
    for release in KUBERNETES_RELEASES {
        let mut command = Command::new("kubernetes-validate");
        command.arg("--strict");
        if let Some(release) = release {
            command.args(["--kubernetes-version", release]);
        }
        let validated = command.arg(&trial_job).output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&validated.stdout),
            String::from_utf8_lossy(&validated.stderr)
        );
        assert!(validated.status.success(), "{release:?}: {said}");
        assert_eq!(said.matches(" passed for resource ").count(), 1, "{said}");
    }
}

#[test]
fn what_katib_cannot_express_is_refused_before_anything_is_written() {
    let folder = scratch(&[(
        "listed.yaml",
        "sweep: listed\nimage: tfimg/cpu-headless:2.9.3\ncommand: [python, \"{a}\"]\nobjective: {metric: acc, mode: max}\nearly_stop: {rule: median}\ntrials:\n  - {a: 1}\n  - {a: 2}\n",
    )]);
    let made = tfimg_with_env(
        folder.path(),
        &["sweep", "listed.yaml", "--k8s", "-o", "out"],
        &[NO_DAEMON],
    );
    assert_eq!(made.code, 1, "{}", made.tail());
    assert_eq!(
        made.stderr,
        "error: `listed.yaml`:6:1: a `trials:` list cannot go to Katib, which has no algorithm that runs given param sets\nhint: for `--k8s`, write the params as `params:` (a grid) or `random:`; or run the sweep with `tfimg sweep FILE`\n"
    );
    assert!(!folder.path().join("out").exists());
}
