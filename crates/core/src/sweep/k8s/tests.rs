use std::path::Path;

use super::*;
use crate::sweep::parse;

fn sweep(text: &str) -> Sweep {
    parse(text, "sweep.yaml", Path::new("/lab")).unwrap()
}

fn options() -> K8sOptions {
    K8sOptions {
        file: "sweep.yaml".into(),
        image: "tfimg/cpu-headless:2.9.3".into(),
        registry: None,
        volume_size: DEFAULT_VOLUME_SIZE.into(),
    }
}

fn exported(text: &str) -> K8sExport {
    let sweep = sweep(text);
    export(&sweep, &sweep.trials(), &options()).unwrap()
}

/// The documents of the manifests, by kind.
fn document(export: &K8sExport, kind: &str) -> serde_yaml::Value {
    export
        .manifests
        .split("---\n")
        .skip(1)
        .map(|text| serde_yaml::from_str::<serde_yaml::Value>(text).unwrap())
        .find(|document| document["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {}", export.manifests))
}

/// What sh would make of `<index>.sh`, read back with shlex's POSIX rules: the exported
/// variables and the arguments of `set --`.
fn read_back(script: &str) -> (Vec<(String, String)>, Vec<String>) {
    let words = shlex::split(script).expect("the script splits into words");
    let mut env = Vec::new();
    let mut index = 0;
    while words[index] == "export" {
        let (name, value) = words[index + 1].split_once('=').unwrap();
        env.push((name.to_string(), value.to_string()));
        index += 2;
    }
    assert_eq!(words[index..index + 2], ["set", "--"], "{script}");
    (env, words[index + 2..].to_vec())
}

const SMALL: &str = concat!(
    "sweep: lab\nspec: cpu-headless\n",
    "command: [python, train.py, --lr, \"{lr}\", --note, \"{note}\"]\n",
    "env: {GREETING: \"it's $(HOME) and $$\"}\n",
    "params:\n  lr: [1e-3, 1e-4]\n  note: [plain, \"a b\"]\n",
    "max_parallel: 2\ncpus_per_trial: 1.5\nmemory: 2g\nretries: 1\nmax_failed: 2\n",
);

#[test]
fn a_small_sweep_s_manifests() {
    let export = exported(SMALL);
    assert_eq!((export.completions, export.parallelism), (4, 2));
    assert_eq!(
        (
            export.job.as_str(),
            export.config_map.as_str(),
            export.claim.as_str()
        ),
        ("lab", "lab-trials", "lab-runs")
    );
    insta::assert_snapshot!("small_sweep", export.manifests);
}

#[test]
fn a_gpu_pool_asks_each_pod_for_its_gpus_and_a_cpu_pool_for_none() {
    let gpu = exported(concat!(
        "sweep: lab\nspec: gpu-headless\ncommand: [python, \"{lr}\"]\nparams: {lr: [1, 2, 3]}\n",
        "gpus: [0, 1, 2, 3]\ngpus_per_trial: 2\n",
    ));
    let job = document(&gpu, "Job");
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], 2);
    assert_eq!(job["spec"]["parallelism"], 2, "four GPUs, two per trial");
    assert_eq!(job["spec"]["completions"], 3);
    assert_eq!(job["spec"]["completionMode"], "Indexed");

    let cpu = exported("sweep: lab\nspec: cpu-headless\ncommand: [python, \"{lr}\"]\nparams: {lr: [1, 2, 3]}\nmax_parallel: 8\n");
    let job = document(&cpu, "Job");
    assert_eq!(job["spec"]["parallelism"], 3, "never more pods than trials");
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert!(container.get("resources").is_none(), "{container:?}");
    assert!(!cpu.manifests.contains("nvidia.com/gpu"));
}

#[test]
fn shared_gpus_become_whole_gpus_with_a_note() {
    let export = exported(concat!(
        "sweep: lab\nspec: gpu-headless\ncommand: [python, \"{lr}\"]\nparams: {lr: [1, 2, 3, 4, 5, 6]}\n",
        "gpus: [0, 1]\ntrials_per_gpu: 2\n",
    ));
    assert_eq!(export.parallelism, 4);
    assert!(
        export.notes[0].starts_with("`trials_per_gpu: 2` does not share GPUs on Kubernetes"),
        "{:?}",
        export.notes
    );
    let job = document(&export, "Job");
    let limits = &job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
    assert_eq!(limits["nvidia.com/gpu"], 1);
}

#[test]
fn each_index_holds_its_trial_byte_for_byte() {
    // Quotes, `$`, backquotes, backslashes, spaces, a glob, an option-like and an empty
    // value; a newline and `$(...)` in the command itself.
    let values = [
        "it's \"quoted\"",
        "$HOME $(id) `id` \\n",
        "  two  spaces ",
        "*",
        "-n",
        "",
        "naïve ☃",
    ];
    let list: Vec<String> = values.iter().map(|value| format!("{value:?}")).collect();
    let text = format!(
        "sweep: lab\nspec: cpu-headless\ncommand: [sh, -c, \"echo \\\"$0\\\"\\nprintf '%s' \\\"$1\\\"\", x, \"{{note}}\"]\nparams:\n  note: [{}]\n",
        list.join(", ")
    );
    let sweep = sweep(&text);
    let trials = sweep.trials();
    let export = export(&sweep, &trials, &options()).unwrap();
    let config_map = document(&export, "ConfigMap");
    for (index, value) in values.iter().enumerate() {
        let trial = &trials[index];
        let script = config_map["data"][format!("{index}.sh").as_str()]
            .as_str()
            .unwrap();
        let (env, arguments) = read_back(script);
        assert_eq!(arguments, trial.command, "{script}");
        assert_eq!(arguments[4], *value);
        assert_eq!(arguments[2], "echo \"$0\"\nprintf '%s' \"$1\"");
        assert_eq!(
            env,
            [
                ("TFIMG_TRIAL".to_string(), trial.id.clone()),
                ("TFIMG_PARAM_NOTE".to_string(), value.to_string())
            ]
        );
        let params = config_map["data"][format!("{index}.json").as_str()]
            .as_str()
            .unwrap();
        assert_eq!(params, trial.params_json());
        let json: serde_json::Value = serde_json::from_str(params).unwrap();
        assert_eq!(json["note"], *value);
    }
}

#[test]
fn what_all_trials_share_is_in_the_job_with_each_dollar_doubled() {
    let export = exported(SMALL);
    let job = document(&export, "Job");
    let env = &job["spec"]["template"]["spec"]["containers"][0]["env"];
    let env: Vec<(String, String)> = env
        .as_sequence()
        .unwrap()
        .iter()
        .map(|entry| {
            let name = entry["name"].as_str().unwrap().to_string();
            (name, entry["value"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(
        env,
        [
            ("GREETING".to_string(), "it's $$(HOME) and $$$$".to_string()),
            (labels::SWEEP_VARIABLE.into(), "lab".into()),
            (labels::TRIAL_DIR_VARIABLE.into(), TRIAL_DIR.into()),
        ]
    );
    // Nothing else in the pod spec holds a `$` Kubernetes would expand.
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["args"][1], "/tfimg/trials/launch.sh");
    assert!(!serde_yaml::to_string(&container["args"])
        .unwrap()
        .contains('$'));
}

#[test]
fn retries_max_failed_and_limits_map_to_the_job() {
    let job = document(&exported(SMALL), "Job");
    assert_eq!(job["spec"]["backoffLimitPerIndex"], 1);
    assert_eq!(
        job["spec"]["maxFailedIndexes"], 1,
        "the second failure fails the Job"
    );
    assert!(job["spec"].get("backoffLimit").is_none());
    let limits = &job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
    assert_eq!(limits["cpu"], "1500m");
    assert_eq!(limits["memory"], "2048Mi");
    // More failures allowed than there are trials: no limit (Kubernetes refuses it).
    let job = document(
        &exported("sweep: lab\nspec: x\ncommand: [\"{a}\"]\nparams: {a: [1, 2]}\nmax_failed: 5\n"),
        "Job",
    );
    assert!(job["spec"].get("maxFailedIndexes").is_none());
    assert_eq!(job["spec"]["backoffLimitPerIndex"], 0);
}

#[test]
fn pods_are_unprivileged_and_their_folders_nest_in_the_pod_s_own() {
    let export = exported(SMALL);
    let pod = &document(&export, "Job")["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["securityContext"]["runAsUser"], POD_UID);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let container = &pod["containers"][0];
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    assert_eq!(
        container["securityContext"]["capabilities"]["drop"][0],
        "ALL"
    );
    assert_eq!(Path::new(TRIAL_DIR).parent(), Some(Path::new(POD_FOLDER)));
    for folder in [TRIALS_FOLDER, RUNS_FOLDER] {
        assert_eq!(Path::new(folder).parent(), Some(Path::new(POD_FOLDER)));
    }
    let claim = document(&export, "PersistentVolumeClaim");
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "10Gi");
    for kind in ["PersistentVolumeClaim", "ConfigMap", "Job"] {
        assert_eq!(
            document(&export, kind)["metadata"]["labels"][labels::SWEEP],
            "lab"
        );
    }
}

#[test]
fn what_a_cluster_cannot_have_is_refused_at_its_place() {
    let refused = |text: &str| {
        let sweep = sweep(text);
        let error = export(&sweep, &sweep.trials(), &options()).unwrap_err();
        format!("{error}")
    };
    let head = "sweep: lab\nspec: cpu-headless\ncommand: [python, \"{lr}\"]\nparams: {lr: [1]}\n";
    assert_eq!(
        refused(&format!("{head}gpus: all\n")),
        "`sweep.yaml`:5:7: `gpus: all` means this host's GPUs, which a cluster does not have"
    );
    assert_eq!(
        refused(&format!("{head}mounts:\n  - ./code:/tf/code:ro\n  - ./out:/tf/out\n")),
        "`sweep.yaml`:7:5: `./out:/tf/out` is a writable mount: on a cluster the trials would write into their pods, and what they wrote would be lost"
    );
    let sweep = sweep(&format!("{head}mounts: [\"./code:/tf/code:ro\"]\n"));
    let export = export(&sweep, &sweep.trials(), &options()).unwrap();
    assert!(
        export.notes[0].starts_with(
            "mount `./code:/tf/code:ro` is not exported: a cluster has no `/lab/code`"
        ),
        "{:?}",
        export.notes
    );
    assert!(!export.manifests.contains("/lab/code"));
}

#[test]
fn a_config_map_over_kubernetes_limit_is_refused() {
    let sweep = sweep(concat!(
        "sweep: lab\nspec: cpu-headless\n",
        "command: [python, /tf/code/a-long-path/to/the/training/script.py, --lr, \"{lr}\", --wd, \"{wd}\"]\n",
        "random: {count: 10000, seed: 1, lr: {loguniform: [1e-5, 1e-2]}, wd: {uniform: [0, 1]}}\n",
    ));
    let error = export(&sweep, &sweep.trials(), &options()).unwrap_err();
    assert!(
        error
            .message
            .starts_with("sweep file `sweep.yaml`: its 10000 trials need a ConfigMap of "),
        "{error}"
    );
}

#[test]
fn the_registry_prefixes_the_image_and_flags_are_checked() {
    let sweep = sweep(SMALL);
    let mut options = options();
    options.registry = Some("registry.example.com:5000/".into());
    let export = export(&sweep, &sweep.trials(), &options).unwrap();
    assert_eq!(
        export.image,
        "registry.example.com:5000/tfimg/cpu-headless:2.9.3"
    );
    assert_eq!(
        document(&export, "Job")["spec"]["template"]["spec"]["containers"][0]["image"],
        export.image.as_str()
    );
    assert!(check_flags(Some("registry.example.com:5000"), "10Gi").is_ok());
    for size in ["500Mi", "1.5Ti", "1", "1G"] {
        assert!(check_flags(None, size).is_ok(), "{size}");
    }
    for size in ["", "10GB", "0", "0Gi", "-1Gi", "1.Gi", "ten", "1 Gi"] {
        let error = check_flags(None, size).unwrap_err();
        assert_eq!(
            error.message,
            format!("`--volume-size {size}` is not a Kubernetes size")
        );
    }
    for registry in ["", "a b", "host/path?", "héllo"] {
        assert!(check_flags(Some(registry), "10Gi").is_err(), "{registry}");
    }
}

#[test]
fn an_indexed_job_refuses_early_stopping_at_its_key_and_points_to_katib() {
    let sweep = sweep(concat!(
        "sweep: lab\nspec: x\ncommand: [\"{a}\"]\nparams: {a: [1, 2]}\n",
        "objective: {metric: acc, mode: max}\n",
        "early_stop: {rule: median}\n",
    ));
    let error = export(&sweep, &sweep.trials(), &options()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:6:1: `early_stop: {rule: median}` cannot go to Kubernetes: an Indexed Job runs every trial to its end, and nothing there watches the trials to stop the losing ones"
    );
    assert!(
        error
            .hint
            .contains("writes such a sweep as a Katib Experiment"),
        "{}",
        error.hint
    );
}

#[test]
fn an_indexed_job_refuses_tpe_at_its_key_and_points_to_katib() {
    let sweep = sweep(concat!(
        "sweep: lab\nspec: x\ncommand: [\"{a}\"]\n",
        "objective: {metric: acc, mode: max}\n",
        "tpe: {count: 9, a: {uniform: [0, 1]}}\n",
    ));
    let error = export(&sweep, &sweep.trials(), &options()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:5:1: `tpe:` cannot go to Kubernetes: an Indexed Job's trials are fixed when it is created, and TPE proposes each trial from the ones that ended"
    );
    assert!(
        error
            .hint
            .contains("writes such a sweep as a Katib Experiment"),
        "{}",
        error.hint
    );
}

#[test]
fn a_timeout_is_each_pod_s_deadline() {
    let export = exported(concat!(
        "sweep: lab\nspec: x\ncommand: [\"{a}\"]\nparams: {a: [1, 2]}\n",
        "timeout: 1h 30m\n",
    ));
    let job = document(&export, "Job");
    assert_eq!(
        job["spec"]["template"]["spec"]["activeDeadlineSeconds"],
        serde_yaml::Value::from(5400)
    );
    let export = exported("sweep: lab\nspec: x\ncommand: [\"{a}\"]\nparams: {a: [1, 2]}\n");
    let job = document(&export, "Job");
    assert!(job["spec"]["template"]["spec"]
        .get("activeDeadlineSeconds")
        .is_none());
}
