//! GPUs without a GPU: `tfimg run --gpus` and a team member's `gpus:` against the stand-in
//! NVIDIA host (`scripts/gpu-standin`, tests/common/gpu.rs), a second dockerd that has
//! Docker's `nvidia` device driver because a stand-in toolkit hook is on its PATH. The
//! containers really start; each sees exactly the GPU ids it was given; no GPU work
//! happens. The machine's own daemon keeps having no toolkit (tests/run.rs proves that
//! path). Everything a test creates is removed from the daemon it was made on.

mod common;

use std::time::Duration;

use common::cli::run_args;
use common::gpu::{
    gpu_engine, gpu_engine_with, gpu_turn, hook_ran_for, GpuEngine, HOOK_LOG, STANDIN_IMAGES,
};
use common::{scratch, tfimg_with_env, unique, wait_for, DockerGuard, HOST_CA};

/// `tfimg ARGS` against the stand-in, with its nvidia-smi and hook on PATH and a data
/// folder of the test's own.
fn tfimg(gpu: &GpuEngine, folder: &std::path::Path, args: &[&str]) -> common::Run {
    let data = folder.join(".tfimg-data");
    let mut env = gpu.env();
    env.push(("XDG_DATA_HOME", data.to_str().unwrap()));
    tfimg_with_env(folder, args, &env)
}

/// A uid no other test uses, for a CUDA cache volume of the test's own.
fn unique_uid() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    40_000 + (std::process::id() * 8 + COUNTER.fetch_add(1, Ordering::Relaxed)) % 20_000
}

#[test]
fn gpus_start_on_the_stand_in_and_each_container_sees_exactly_its_ids() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let folder = scratch(&[]);
    let uuid = "GPU-5a1d0c3e-7b2f-4e91-a6d8-000000000002";
    // `--gpus`, what the container sees, the label `ps` shows.
    let cases = [
        ("0,1", "0,1", "0,1"),
        ("all", "all", "all"),
        ("2", "0,1", "0,1"),
        ("device=3", "3", "device=3"),
        (uuid, uuid, uuid),
    ];
    let names: Vec<String> = cases.iter().map(|_| unique("t-standin-gpus")).collect();
    let _guard = DockerGuard::containers(&names.iter().map(String::as_str).collect::<Vec<_>>())
        .on(&gpu.host);
    for ((gpus, expected, label), name) in cases.iter().zip(&names) {
        let ran = tfimg(
            &gpu,
            folder.path(),
            &run_args(
                "cpu-headless",
                &["--gpus", gpus, "--keep"],
                name,
                &["sh", "-c", "echo $NVIDIA_VISIBLE_DEVICES"],
            ),
        );
        assert_eq!(ran.code, 0, "--gpus {gpus}: {}", ran.stderr);
        assert_eq!(ran.stdout, format!("{expected}\n"), "--gpus {gpus}");
        let container = gpu.inspect(name);
        let request = &container["HostConfig"]["DeviceRequests"][0];
        assert_eq!(request["Driver"], "nvidia", "--gpus {gpus}: {request}");
        assert_eq!(container["Config"]["Labels"]["io.tfimg.gpus"], *label);
        // The daemon ran the toolkit's prestart hook for this very container.
        let id = container["Id"].as_str().unwrap();
        assert!(
            hook_ran_for(id),
            "no prestart hook for {name} in {HOOK_LOG}"
        );
        // A CPU image has no CUDA cache folder: no cache volume.
        let mounts = container["Mounts"].as_array().cloned().unwrap_or_default();
        assert!(
            mounts.iter().all(|mount| mount["Type"] != "volume"),
            "{mounts:?}"
        );
    }
}

#[test]
fn a_gpu_image_on_the_stand_in_mounts_its_user_s_cuda_cache_which_the_user_writes_and_keeps() {
    let mut images = STANDIN_IMAGES.to_vec();
    images.push("tfimg/gpu-headless:2.9.3");
    let Some(gpu) = gpu_engine_with(&images) else {
        return;
    };
    let _turn = gpu_turn();
    let labels = gpu.docker(&[
        "image",
        "inspect",
        "--format",
        "{{index .Config.Labels \"io.tfimg.cuda-cache\"}}",
        "tfimg/gpu-headless:2.9.3",
    ]);
    assert_eq!(
        labels.trim(),
        "/var/cache/tfimg/cuda",
        "the stand-in's gpu-headless predates the CUDA cache: build it (`tfimg build gpu-headless`, as scripts/test does) so the stand-in gets the current one"
    );
    let folder = scratch(&[]);
    let uid = unique_uid().to_string();
    let volume = format!("tfimg-cuda-cache-{uid}");
    let names = [unique("t-standin-cache"), unique("t-standin-cache")];
    let mut guard = DockerGuard::containers(&[&names[0], &names[1]]).on(&gpu.host);
    guard.volumes = vec![volume.clone()];
    let run_as_user = |name: &str, script: &str| {
        tfimg(
            &gpu,
            folder.path(),
            &run_args(
                "gpu-headless",
                &["--gpus", "device=1", "--uid", &uid, "--gid", &uid, "--keep"],
                name,
                &["sh", "-c", script],
            ),
        )
    };
    // The image says NVIDIA_VISIBLE_DEVICES=void; the daemon's request wins.
    let first = run_as_user(
        &names[0],
        "echo $NVIDIA_VISIBLE_DEVICES; echo $CUDA_CACHE_PATH $CUDA_CACHE_MAXSIZE; id -u; \
         echo kernels > $CUDA_CACHE_PATH/compiled && stat -c '%u %a' $CUDA_CACHE_PATH $CUDA_CACHE_PATH/compiled",
    );
    assert_eq!(first.code, 0, "{}", first.tail());
    assert_eq!(
        first.stdout,
        format!("1\n/var/cache/tfimg/cuda 4294967296\n{uid}\n0 1777\n{uid} 644\n"),
        "{}",
        first.stderr
    );
    let container = gpu.inspect(&names[0]);
    let cache = container["Mounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|mount| mount["Type"] == "volume")
        .cloned()
        .unwrap_or_else(|| panic!("no volume in {}", container["Mounts"]));
    assert_eq!(cache["Name"], volume.as_str());
    assert_eq!(cache["Destination"], "/var/cache/tfimg/cuda");
    assert_eq!(cache["RW"], true);
    let volume_label = gpu.docker(&[
        "volume",
        "inspect",
        "--format",
        "{{index .Labels \"io.tfimg.cuda-cache\"}}",
        &volume,
    ]);
    assert_eq!(volume_label.trim(), uid);
    // The next container of the same user finds what the first one compiled.
    let second = run_as_user(&names[1], "cat $CUDA_CACHE_PATH/compiled");
    assert_eq!(second.code, 0, "{}", second.tail());
    assert_eq!(second.stdout, "kernels\n");
}

#[test]
fn a_team_member_s_gpus_start_on_the_stand_in_with_exactly_its_ids() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let team = unique("t-standin-team");
    let file = format!(
        "team: {team}\nmembers:\n  - name: trainer\n    spec: cpu-headless\n    gpus: [1]\n    command: [\"sh\", \"-c\", \"echo visible=$NVIDIA_VISIBLE_DEVICES\"]\n  - name: pair\n    spec: cpu-headless\n    gpus: [2, 3]\n    command: [\"sh\", \"-c\", \"echo visible=$NVIDIA_VISIBLE_DEVICES\"]\n"
    );
    let folder = scratch(&[("team.yaml", &file)]);
    let mut guard = DockerGuard::default().on(&gpu.host);
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    let up = tfimg(
        &gpu,
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
    );
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    for (member, expected) in [("trainer", "visible=1"), ("pair", "visible=2,3")] {
        let name = format!("{team}-{member}");
        wait_for(
            &format!("{name} to finish"),
            Duration::from_secs(60),
            || {
                gpu.docker(&["inspect", "--format", "{{.State.Status}}", &name])
                    .trim()
                    == "exited"
            },
        );
        assert_eq!(gpu.docker(&["logs", &name]).trim(), expected, "{member}");
        let container = gpu.inspect(&name);
        assert_eq!(
            container["HostConfig"]["DeviceRequests"][0]["DeviceIDs"],
            serde_json::json!(expected
                .trim_start_matches("visible=")
                .split(',')
                .collect::<Vec<_>>())
        );
    }
    let down = tfimg(&gpu, folder.path(), &["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.tail());
    assert!(gpu
        .docker(&[
            "ps",
            "-aq",
            "--filter",
            &format!("label=io.tfimg.team={team}")
        ])
        .trim()
        .is_empty());
}

#[test]
fn on_the_machine_s_own_daemon_a_created_gpu_container_has_the_cache_the_user_can_write() {
    // This daemon has no `nvidia` driver: the container is created, never started. The
    // image is the built-in GPU image under a name of the test's own (built on the warm
    // cache: only tfimg's last layers), so no built-in tag moves.
    if common::docker(&["version", "--format", "{{.Server.Version}}"]).is_empty() {
        panic!("the machine's Docker daemon must answer");
    }
    let spec = unique("t-cache-main");
    let folder = scratch(&[(
        "images/lab.yaml",
        &format!("name: {spec}\nextends: gpu-headless\n"),
    )]);
    let uid = unique_uid().to_string();
    let volume = format!("tfimg-cuda-cache-{uid}");
    let name = unique("t-cache-main");
    let mut guard = DockerGuard::images(&[&format!("tfimg/{spec}")]);
    guard.containers = vec![name.clone()];
    guard.volumes = vec![volume.clone()];
    let path = common::gpu::standin_path();
    let data = folder.path().join(".tfimg-data");
    let created = tfimg_with_env(
        folder.path(),
        &[
            "run",
            &spec,
            "--gpus",
            "0",
            "--uid",
            &uid,
            "--gid",
            &uid,
            "--no-start",
            "--name",
            &name,
            "--ca-cert",
            HOST_CA,
        ],
        &[("PATH", &path), ("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    assert_eq!(created.code, 0, "{}", created.tail());
    let inspected: serde_json::Value =
        serde_json::from_str(&common::docker(&["inspect", &name])).unwrap();
    let container = &inspected[0];
    assert_eq!(container["State"]["Status"], "created");
    assert_eq!(
        container["HostConfig"]["DeviceRequests"][0]["DeviceIDs"],
        serde_json::json!(["0"])
    );
    let mounts = container["Mounts"].as_array().unwrap();
    let cache = mounts
        .iter()
        .find(|mount| mount["Type"] == "volume")
        .unwrap_or_else(|| panic!("no cache volume in {mounts:?}"));
    assert_eq!(cache["Name"], volume.as_str());
    assert_eq!(cache["Destination"], "/var/cache/tfimg/cuda");
    let config = container["Config"]["Env"].as_array().unwrap();
    assert!(config.contains(&serde_json::json!("CUDA_CACHE_PATH=/var/cache/tfimg/cuda")));
    assert!(config.contains(&serde_json::json!("CUDA_CACHE_MAXSIZE=4294967296")));
    // The volume takes the image folder's mode: the mapped uid writes into it.
    let written = common::docker(&[
        "run",
        "--rm",
        "--user",
        &format!("{uid}:{uid}"),
        "--entrypoint",
        "sh",
        "-v",
        &format!("{volume}:/var/cache/tfimg/cuda"),
        &format!("tfimg/{spec}:2.9.3"),
        "-c",
        "touch /var/cache/tfimg/cuda/kernel && stat -c '%u %a' /var/cache/tfimg/cuda /var/cache/tfimg/cuda/kernel",
    ]);
    assert_eq!(written, format!("0 1777\n{uid} 644\n"));
}

/// The shared GPU server: the GPUs tfimg's containers hold are read back from the
/// stand-in's containers. Members asking one GPU each get different ones, the least-loaded
/// free ones (GPU 0 is busy with a process tfimg did not start, as the stand-in's
/// nvidia-smi reports); a count then takes what is left; a GPU a member holds is refused
/// by name before anything is created, and taken with `--share-gpus`; `all` is refused
/// while any GPU is held.
#[test]
fn members_get_different_free_gpus_and_a_held_gpu_is_refused_naming_its_holder() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let team = unique("t-share");
    let member = |name: &str| {
        format!(
            "  - name: {name}\n    spec: cpu-headless\n    gpus: 1\n    command: [sleep, '300']\n"
        )
    };
    let file = format!("team: {team}\nmembers:\n{}{}", member("ana"), member("bo"));
    let folder = scratch(&[("team.yaml", &file)]);
    let (counted, refused, shared) = (
        unique("t-share-count"),
        unique("t-share-refused"),
        unique("t-share-shared"),
    );
    let mut guard = DockerGuard::containers(&[&counted, &refused, &shared]).on(&gpu.host);
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    let data = folder.path().join(".tfimg-data");
    let mut env = gpu.env();
    env.push(("XDG_DATA_HOME", data.to_str().unwrap()));
    env.push(("TFIMG_STANDIN_USE", "0:30000:80"));
    let tfimg = |args: &[&str]| tfimg_with_env(folder.path(), args, &env);
    let create = |name: &str, gpus: &[&str]| {
        let mut args = vec!["run", "cpu-headless", "-d", "--no-build", "--name", name];
        args.extend_from_slice(gpus);
        args.extend_from_slice(&["--", "sleep", "300"]);
        tfimg(&args)
    };
    let device_ids =
        |name: &str| gpu.inspect(name)["HostConfig"]["DeviceRequests"][0]["DeviceIDs"].clone();

    let up = tfimg(&["up", "team.yaml", "--ca-cert", HOST_CA]);
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    assert_eq!(device_ids(&format!("{team}-ana")), serde_json::json!(["1"]));
    assert_eq!(device_ids(&format!("{team}-bo")), serde_json::json!(["2"]));
    // `up`'s table says which GPU each got, not the count asked.
    for (member, given) in [("ana", "device=1"), ("bo", "device=2")] {
        let row = up
            .stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(member))
            .unwrap_or_default();
        assert_eq!(row.split_whitespace().nth(3), Some(given), "{}", up.stdout);
    }

    let count = create(&counted, &["--gpus", "1"]);
    assert_eq!(count.code, 0, "{}", count.tail());
    assert_eq!(device_ids(&counted), serde_json::json!(["3"]));

    let taken = create(&refused, &["--gpus", "device=1"]);
    assert_eq!(taken.code, 1, "{}", taken.tail());
    assert!(
        taken.stderr.contains(&format!(
            "`--gpus device=1`: GPU 1 of this host is held: GPU 1 by `{team}-ana` (team {team}, member ana)"
        )),
        "{}",
        taken.stderr
    );
    assert!(taken.stderr.contains("--share-gpus"), "{}", taken.stderr);
    let all = create(&refused, &["--gpus", "all"]);
    assert_eq!(all.code, 1, "{}", all.tail());
    assert!(
        all.stderr
            .contains("`--gpus all`: GPUs 1, 2, 3 of this host are held"),
        "{}",
        all.stderr
    );
    assert!(
        gpu.docker(&["ps", "-aq", "--filter", &format!("name=^{refused}$")])
            .trim()
            .is_empty(),
        "a refused launch created nothing"
    );

    let sharing = create(&shared, &["--gpus", "device=1", "--share-gpus"]);
    assert_eq!(sharing.code, 0, "{}", sharing.tail());
    assert_eq!(device_ids(&shared), serde_json::json!(["1"]));
    let labels = gpu.inspect(&shared)["Config"]["Labels"].clone();
    assert_eq!(labels["io.tfimg.gpus-shared"], "true");
    assert_eq!(labels["io.tfimg.gpus"], "device=1");

    // `ps --gpus`: the stand-in's nvidia-smi reports a process of ana's container (its
    // real pid on this machine, mapped back through its cgroup) using 2 GiB of GPU 1.
    let ana = format!("{team}-ana");
    let pid = gpu.docker(&["inspect", "--format", "{{.State.Pid}}", &ana]);
    let apps = format!("{}:1:2048:python3", pid.trim());
    let mut seen_env = env.clone();
    seen_env.retain(|(key, _)| *key != "TFIMG_STANDIN_USE");
    seen_env.push(("TFIMG_STANDIN_USE", "0:30000:80,1:2100:37"));
    seen_env.push(("TFIMG_STANDIN_APPS", &apps));
    let shown = tfimg_with_env(folder.path(), &["ps", "--gpus", "--json"], &seen_env);
    assert_eq!(shown.code, 0, "{}", shown.tail());
    let view: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let gpu_line = |index: usize| view["gpus"][index].clone();
    assert_eq!(gpu_line(0)["memory_used_mib"], 30000);
    assert_eq!(gpu_line(0)["held_by"], serde_json::json!([]));
    assert_eq!(gpu_line(1)["utilization"], 37);
    let held_by_1: Vec<String> = serde_json::from_value(gpu_line(1)["held_by"].clone()).unwrap();
    assert!(
        held_by_1.contains(&ana) && held_by_1.contains(&shared),
        "{held_by_1:?}"
    );
    let containers = view["containers"].as_array().unwrap();
    let ana_row = containers
        .iter()
        .find(|c| c["name"] == ana.as_str())
        .expect("ana is shown");
    assert_eq!(ana_row["gpus"], serde_json::json!([1]));
    assert_eq!(ana_row["memory_used_mib"], 2048);
    assert_eq!(ana_row["processes"], 1);
    assert_eq!(ana_row["utilization"], 37);
    assert_eq!(ana_row["member"], "ana");
    // Its owner: the host user who ran `up`.
    let me = std::env::var("SUDO_USER")
        .or_else(|_| std::env::var("USER"))
        .unwrap_or_default();
    if !me.is_empty() {
        assert_eq!(ana_row["owner"], me.as_str());
    }
    let shared_row = containers
        .iter()
        .find(|c| c["name"] == shared.as_str())
        .unwrap();
    assert_eq!(shared_row["sharing"], true);
    assert_eq!(shared_row["memory_used_mib"], 0);
    let table = tfimg_with_env(folder.path(), &["ps", "--gpus"], &seen_env);
    assert_eq!(table.code, 0, "{}", table.tail());
    let ana_line = table
        .stdout
        .lines()
        .find(|line| line.starts_with(&ana))
        .unwrap_or_default();
    assert!(
        ana_line.contains(&format!("{team}/ana"))
            && ana_line.contains("2048 MiB")
            && ana_line.contains("37%"),
        "{}",
        table.stdout
    );

    let down = tfimg(&["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.tail());
}

/// Two members asking for one GPU each and a sweep on a pool of two (`gpus: 2`) get four
/// different GPUs: the sweep's pool is taken from the GPUs no other tfimg container holds;
/// a sweep listing a GPU a member holds, or asking for more than are free, is refused at
/// `gpus:`, naming the holders, before any trial exists.
#[test]
fn members_and_a_sweep_on_a_pool_of_two_get_four_different_gpus() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let team = unique("t-share-lab");
    let sweep = unique("t-share-sweep").to_lowercase();
    let member = |name: &str| {
        format!(
            "  - name: {name}\n    spec: cpu-headless\n    gpus: 1\n    command: [sleep, '300']\n"
        )
    };
    let file = format!("team: {team}\nmembers:\n{}{}", member("ana"), member("bo"));
    let pool = |gpus: &str| {
        format!(
            "sweep: {sweep}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"echo acc={{n}} gpu=$NVIDIA_VISIBLE_DEVICES\"]\nparams: {{n: [1, 2, 3, 4]}}\nobjective: {{metric: acc, mode: max}}\n{gpus}"
        )
    };
    let folder = scratch(&[
        ("team.yaml", &file),
        ("sweep.yaml", &pool("gpus: 2\n")),
        ("held.yaml", &pool("gpus: [0, 2]\n")),
        ("three.yaml", &pool("gpus: 3\n")),
    ]);
    let mut members_guard = DockerGuard::default().on(&gpu.host);
    members_guard.container_label = Some(format!("io.tfimg.team={team}"));
    let _trials_guard = common::sweep::sweep_guard(&sweep).on(&gpu.host);
    let up = tfimg(
        &gpu,
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
    );
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    let device_ids =
        |name: &str| gpu.inspect(name)["HostConfig"]["DeviceRequests"][0]["DeviceIDs"].clone();
    assert_eq!(device_ids(&format!("{team}-ana")), serde_json::json!(["0"]));
    assert_eq!(device_ids(&format!("{team}-bo")), serde_json::json!(["1"]));

    let refused = tfimg(&gpu, folder.path(), &["sweep", "held.yaml"]);
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(
        refused.stderr.contains(&format!(
            "GPU 0 of this host is held by another container: GPU 0 by `{team}-ana` (team {team}, member ana)"
        )),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("free: 2, 3"), "{}", refused.stderr);

    let swept = tfimg(&gpu, folder.path(), &["sweep", "sweep.yaml"]);
    assert_eq!(swept.code, 0, "{}{}", swept.stdout, swept.stderr);
    let runs = folder.path().join("runs").join(&sweep);
    let mut used = std::collections::BTreeSet::new();
    for trial in ["t001", "t002", "t003", "t004"] {
        let text = std::fs::read_to_string(runs.join(trial).join("status.json")).unwrap();
        let status: serde_json::Value = serde_json::from_str(&text).unwrap();
        let gpus: Vec<String> = serde_json::from_value(status["gpus"].clone()).unwrap();
        let stdout = std::fs::read_to_string(runs.join(trial).join("stdout.log")).unwrap();
        assert!(
            stdout.contains(&format!("gpu={}", gpus.join(","))),
            "{trial}: {stdout}"
        );
        used.extend(gpus);
    }
    assert_eq!(used, ["2", "3"].map(String::from).into_iter().collect());

    let three = tfimg(&gpu, folder.path(), &["sweep", "three.yaml"]);
    assert_eq!(three.code, 1, "{}", three.tail());
    assert!(
        three
            .stderr
            .contains("`gpus: 3`, but 2 of the 4 GPUs of this host are free"),
        "{}",
        three.stderr
    );

    let down = tfimg(&gpu, folder.path(), &["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.tail());
}

/// Issue 32: a GPU member idle past `idle: {containers: 10s}` (a headless one: no session,
/// no process left running) stops itself and lets go of its GPU, which a `run` asking
/// for exactly that GPU then gets; `ps` says `stopped (idle 10s)`; the next `up` starts
/// the member again (`restarted`) on a GPU still free, with what it wrote on its mount.
#[test]
fn an_idle_member_lets_go_of_its_gpu_and_up_brings_it_back_with_its_data() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let team = unique("t-idle");
    let file = format!(
        "team: {team}\ndefaults:\n  mounts_root: ./work\nidle: {{containers: 10s}}\n\
         members:\n  - name: ana\n    spec: cpu-headless\n    gpus: 1\n"
    );
    let folder = scratch(&[("team.yaml", &file)]);
    let taker = unique("t-idle-taker");
    let mut guard = DockerGuard::containers(&[&taker]).on(&gpu.host);
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    let tfimg = |args: &[&str]| tfimg(&gpu, folder.path(), args);
    let ana = format!("{team}-ana");
    let device_ids =
        |name: &str| gpu.inspect(name)["HostConfig"]["DeviceRequests"][0]["DeviceIDs"].clone();
    let state = || {
        gpu.inspect(&ana)["State"]["Status"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };

    let up = tfimg(&["up", "team.yaml", "--ca-cert", HOST_CA]);
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    let first = device_ids(&ana)[0].as_str().unwrap().to_string();
    let wrote = tfimg(&["exec", &ana, "--", "sh", "-c", "echo notes > work/kept.txt"]);
    assert_eq!(wrote.code, 0, "{}", wrote.tail());
    // `ps --gpus` says how long nobody has used it, from what its idle watch keeps.
    let shown = tfimg(&["ps", "--gpus", "--json", "--team", &team]);
    assert_eq!(shown.code, 0, "{}", shown.tail());
    let view: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let idle = view["containers"][0]["idle_seconds"].as_u64();
    assert!(
        state() != "running" || idle.is_some_and(|seconds| seconds <= 10),
        "{view}"
    );

    wait_for(
        "the idle member to stop itself",
        Duration::from_secs(90),
        || state() == "exited",
    );
    let ps = tfimg(&["ps", "--team", &team]);
    assert_eq!(ps.code, 0, "{}", ps.tail());
    assert!(
        ps.stdout
            .lines()
            .any(|line| line.starts_with(&ana) && line.contains("stopped (idle 10s)")),
        "{}",
        ps.stdout
    );
    let taken = tfimg(&[
        "run",
        "cpu-headless",
        "-d",
        "--no-build",
        "--name",
        &taker,
        "--gpus",
        &format!("device={first}"),
        "--",
        "sleep",
        "300",
    ]);
    assert_eq!(taken.code, 0, "its GPU is free again: {}", taken.tail());

    let again = tfimg(&["up", "team.yaml", "--ca-cert", HOST_CA]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert!(
        again
            .stdout
            .lines()
            .any(|line| line.split_whitespace().take(3).collect::<Vec<_>>()
                == ["ana", "cpu-headless", "restarted"]),
        "{}",
        again.stdout
    );
    assert_eq!(state(), "running");
    let now = device_ids(&ana)[0].as_str().unwrap().to_string();
    assert_ne!(now, first, "GPU {first} is the other container's now");
    let read = tfimg(&["exec", &ana, "--", "cat", "work/kept.txt"]);
    assert_eq!(read.stdout.trim(), "notes", "{}", read.tail());
    let down = tfimg(&["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.tail());
}

/// Issue 32: `ps --gpus --watch` in a real terminal redraws in place: a container that
/// takes GPU 2 after it started shows up on a later screen, holding GPU 2; Ctrl-C ends it
/// (exit 130, as any interrupted command).
#[test]
fn ps_gpus_watch_redraws_in_a_terminal_until_ctrl_c() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let name = unique("t-watch");
    let _guard = DockerGuard::containers(&[&name]).on(&gpu.host);
    let folder = scratch(&[]);
    let data = folder.path().join(".tfimg-data");
    let mut env = gpu.env();
    env.push(("XDG_DATA_HOME", data.to_str().unwrap()));
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tfimg"));
    command
        .args(["ps", "--gpus", "--watch"])
        .current_dir(folder.path())
        .env_remove("RUST_LOG")
        .envs(env.iter().cloned());
    let mut session = rexpect::session::spawn_command(command, Some(60_000)).unwrap();
    session.exp_string("every 2s, Ctrl-C ends").unwrap();
    session.exp_string("NVIDIA H100 80GB HBM3").unwrap();
    let taken = tfimg_with_env(
        folder.path(),
        &[
            "run",
            "cpu-headless",
            "-d",
            "--no-build",
            "--name",
            &name,
            "--gpus",
            "device=2",
            "--",
            "sleep",
            "300",
        ],
        &env,
    );
    assert_eq!(taken.code, 0, "{}", taken.tail());
    // A later screen: the container in GPU 2's HELD BY column, then its own line.
    session.exp_string("\x1b[H\x1b[2J").unwrap();
    session
        .exp_regex(&format!("\n2 +NVIDIA H100 80GB HBM3 [^\n]*{name}"))
        .unwrap();
    let (_, row) = session
        .exp_regex(&format!("CONTAINER [^\n]*\n{name} [^\n]*"))
        .unwrap();
    assert!(row.contains(" 2 ") && row.contains("running"), "{row}");
    session.send_control('c').unwrap();
    session.exp_eof().unwrap();
    let status = session.process().wait().unwrap();
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 130)),
        "{status:?}"
    );
}

/// Issue 32: `run --gpus 0` while a sweep's trial holds GPU 0 is refused before anything
/// is created, naming the trial; the sweep is then interrupted as a user would (Ctrl-C),
/// which removes its trial.
#[test]
fn a_gpu_a_trial_holds_is_refused_naming_the_trial() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let sweep = unique("t-held").to_lowercase();
    let refused = unique("t-held-run");
    let file = format!(
        "sweep: {sweep}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"sleep 120; echo acc=1\"]\nparams: {{n: [1]}}\nobjective: {{metric: acc, mode: max}}\ngpus: [0]\n"
    );
    let folder = scratch(&[("sweep.yaml", &file)]);
    let _trials = common::sweep::sweep_guard(&sweep).on(&gpu.host);
    let _refused = DockerGuard::containers(&[&refused]).on(&gpu.host);
    let data = folder.path().join(".tfimg-data");
    let mut env = gpu.env();
    env.push(("XDG_DATA_HOME", data.to_str().unwrap()));
    let mut swept = std::process::Command::new(env!("CARGO_BIN_EXE_tfimg"))
        .args(["sweep", "sweep.yaml"])
        .current_dir(folder.path())
        .env_remove("RUST_LOG")
        .envs(env.iter().cloned())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let trial = format!("{sweep}-t001");
    wait_for("the trial to run on GPU 0", Duration::from_secs(60), || {
        gpu.inspect(&trial)["State"]["Status"] == "running"
    });

    let taken = tfimg_with_env(
        folder.path(),
        &[
            "run",
            "cpu-headless",
            "--no-build",
            "--name",
            &refused,
            "--gpus",
            "0",
            "--",
            "true",
        ],
        &env,
    );
    assert_eq!(taken.code, 1, "{}", taken.tail());
    assert!(
        taken.stderr.contains(&format!(
            "GPU 0 of this host is held: GPU 0 by `{trial}` (sweep {sweep}, trial t001)"
        )),
        "{}",
        taken.stderr
    );
    assert!(
        gpu.docker(&["ps", "-aq", "--filter", &format!("name=^{refused}$")])
            .trim()
            .is_empty(),
        "a refused launch created nothing"
    );

    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &swept.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    swept.wait().unwrap();
    assert!(
        gpu.docker(&["ps", "-aq", "--filter", &format!("name=^{trial}$")])
            .trim()
            .is_empty(),
        "the interrupted sweep removed its trial"
    );
}

/// A scratch folder holding `files` (name, text).
fn scratch_of(files: &[(String, String)]) -> tempfile::TempDir {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    scratch(&refs)
}

/// `job` of each of `items`, each on a thread of its own, all released by one barrier
/// (commands started in the same instant); their results in order.
fn released_together<T: Sync, R: Send>(items: &[T], job: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let start = std::sync::Barrier::new(items.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .iter()
            .map(|item| {
                let (start, job) = (&start, &job);
                scope.spawn(move || {
                    start.wait();
                    job(item)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// The DeviceIDs each of `names` was created with on the stand-in (`None`: it does not
/// exist), and whether it runs.
fn gpus_of(gpu: &GpuEngine, name: &str) -> Option<(Vec<String>, bool)> {
    let listed = gpu.docker(&["ps", "-aq", "--filter", &format!("name=^{name}$")]);
    if listed.trim().is_empty() {
        return None;
    }
    let inspected = gpu.inspect(name);
    let ids =
        serde_json::from_value(inspected["HostConfig"]["DeviceRequests"][0]["DeviceIDs"].clone())
            .unwrap_or_default();
    Some((ids, inspected["State"]["Running"] == true))
}

/// Eight `tfimg run --gpus 1 -d` started in the same instant on the stand-in's four free
/// GPUs: each reads the same free GPUs, yet exactly four start, on four different GPUs,
/// and the other four are refused naming the containers that hold them. (Before the claim
/// was read again after the create, all eight took GPU 0.)
#[test]
fn eight_runs_started_together_on_four_free_gpus_take_four_different_gpus_and_four_are_refused() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let folder = scratch(&[]);
    let names: Vec<String> = (0..8).map(|i| unique(&format!("t-race{i}"))).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let _guard = DockerGuard::containers(&refs).on(&gpu.host);
    let runs = released_together(&names, |name| {
        tfimg(
            &gpu,
            folder.path(),
            &[
                "run",
                "cpu-headless",
                "-d",
                "--no-build",
                "--name",
                name,
                "--gpus",
                "1",
                "--",
                "sleep",
                "300",
            ],
        )
    });
    let mut taken = Vec::new();
    let mut refusals = Vec::new();
    for (name, run) in names.iter().zip(&runs) {
        match run.code {
            0 => {
                let (ids, running) = gpus_of(&gpu, name).expect("a started run exists");
                assert!(running, "{name}: {}", run.tail());
                assert_eq!(ids.len(), 1, "{name}: {ids:?}");
                taken.push(ids[0].clone());
            }
            1 => {
                assert!(gpus_of(&gpu, name).is_none(), "a refused run left {name}");
                refusals.push(run.stderr.clone());
            }
            code => panic!("{name}: exit {code}: {}", run.tail()),
        }
    }
    taken.sort();
    assert_eq!(taken, ["0", "1", "2", "3"], "{runs:#?}");
    assert_eq!(refusals.len(), 4);
    for refusal in &refusals {
        assert!(
            refusal.contains("`--gpus 1`: 0 of the 4 GPUs of this host are free"),
            "{refusal}"
        );
        let holders = names
            .iter()
            .filter(|name| refusal.contains(&format!("by `{name}`")))
            .count();
        assert_eq!(holders, 4, "each holder is named: {refusal}");
    }
}

/// Three `tfimg up` of three teams of two `gpus: 1` members started together on four free
/// GPUs: whatever runs in the end holds a GPU no other container holds.
#[test]
fn three_teams_brought_up_together_never_give_one_gpu_twice() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let teams: Vec<String> = (0..3).map(|i| unique(&format!("t-upr{i}"))).collect();
    let member = |name: &str| {
        format!(
            "  - name: {name}\n    spec: cpu-headless\n    gpus: 1\n    command: [sleep, '300']\n"
        )
    };
    let files: Vec<(String, String)> = teams
        .iter()
        .map(|team| {
            (
                format!("{team}.yaml"),
                format!("team: {team}\nmembers:\n{}{}", member("ana"), member("bo")),
            )
        })
        .collect();
    let folder = scratch_of(&files);
    let _guards: Vec<DockerGuard> = teams
        .iter()
        .map(|team| {
            let mut guard = DockerGuard::default().on(&gpu.host);
            guard.container_label = Some(format!("io.tfimg.team={team}"));
            guard
        })
        .collect();
    let ups = released_together(&files, |(file, _)| {
        tfimg(&gpu, folder.path(), &["up", file, "--ca-cert", HOST_CA])
    });
    let mut held = Vec::new();
    for (team, up) in teams.iter().zip(&ups) {
        // A team that could not have its GPUs ends with 1 (refused before anything was
        // made) or 2 (a member did not start).
        assert!(matches!(up.code, 0..=2), "{team}: {}", up.tail());
        for name in ["ana", "bo"] {
            let container = format!("{team}-{name}");
            match gpus_of(&gpu, &container) {
                Some((ids, true)) => held.extend(ids),
                Some((_, false)) | None => {
                    assert_ne!(
                        up.code,
                        0,
                        "{container} of a team that came up: {}",
                        up.tail()
                    )
                }
            }
        }
        if up.code != 0 {
            assert!(
                up.stderr.contains("GPUs of this host are free"),
                "{team}: {}",
                up.stderr
            );
        }
    }
    let mut distinct = held.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        held.len(),
        "a GPU given twice: {held:?} {ups:#?}"
    );
    assert!(ups.iter().any(|up| up.code == 0), "{ups:#?}");
    for (team, _) in teams.iter().zip(&ups) {
        let _ = tfimg(&gpu, folder.path(), &["down", &format!("{team}.yaml")]);
    }
}

/// Two sweeps of one trial each on a pool of one GPU (`gpus: 1`), started in the same
/// instant: both pools are GPU 0 when they start (each is the least-loaded free GPU then),
/// and the trials, running together, end on two different GPUs: the one whose claim came
/// second moves its slot to a free GPU and says so.
#[test]
fn two_sweeps_started_together_run_their_trials_on_different_gpus() {
    let Some(gpu) = gpu_engine() else {
        return;
    };
    let _turn = gpu_turn();
    let sweeps: Vec<String> = (0..2)
        .map(|i| unique(&format!("t-sweeprace{i}")).to_lowercase())
        .collect();
    let file = |sweep: &str| {
        format!(
            "sweep: {sweep}\nimage: tfimg/cpu-headless:2.9.3\ncommand: [sh, -c, \"echo acc={{n}} gpu=$NVIDIA_VISIBLE_DEVICES; sleep 4\"]\nparams: {{n: [1]}}\nobjective: {{metric: acc, mode: max}}\ngpus: 1\n"
        )
    };
    let files: Vec<(String, String)> = sweeps
        .iter()
        .map(|sweep| (format!("{sweep}.yaml"), file(sweep)))
        .collect();
    let folder = scratch_of(&files);
    let _guards: Vec<DockerGuard> = sweeps
        .iter()
        .map(|sweep| common::sweep::sweep_guard(sweep).on(&gpu.host))
        .collect();
    let swept = released_together(&files, |(file, _)| {
        tfimg(&gpu, folder.path(), &["sweep", file])
    });
    let mut used = Vec::new();
    for (sweep, run) in sweeps.iter().zip(&swept) {
        assert_eq!(run.code, 0, "{sweep}: {}", run.tail());
        let trial = folder.path().join("runs").join(sweep).join("t001");
        let stdout = std::fs::read_to_string(trial.join("stdout.log")).unwrap();
        let text = std::fs::read_to_string(trial.join("status.json")).unwrap();
        let status: serde_json::Value = serde_json::from_str(&text).unwrap();
        let gpus: Vec<String> = serde_json::from_value(status["gpus"].clone()).unwrap();
        assert!(
            stdout.contains(&format!("gpu={}", gpus.join(","))),
            "{sweep}: {stdout}"
        );
        used.extend(gpus);
    }
    assert_eq!(used.len(), 2, "{used:?}");
    assert_ne!(used[0], used[1], "{swept:#?}");
}
