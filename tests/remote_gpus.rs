//! GPU servers reached over ssh: GPU checks and choices are made on the engine's host,
//! never on this machine. A real OpenSSH server on 127.0.0.1 (tests/common/sshd.rs) puts
//! the stand-in NVIDIA host (tests/common/gpu.rs: a second dockerd whose containers get
//! GPUs, four H100s with driver 580, and whose toolkit hook puts the stand-in nvidia-smi
//! into them) behind `gpu_port`, the machine's own daemon (no toolkit) behind `port`, and
//! that daemon with the stand-in nvidia-smi on the session's PATH (a driver without the
//! toolkit) behind `driver_only_port`. This machine's tfimg never has the stand-in on its
//! PATH: here, no driver answers (or, where a test says so, a laptop's single small GPU).
//! The tests take turns (one stand-in, and its event log tells which run asked it).

mod common;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::cli::run_args;
use common::gpu::{gpu_engine, hook_ran_for, GpuEngine};
use common::sshd::Sshd;
use common::{scratch, unique, DockerGuard, Run, HOST_CA};

/// One test at a time: they share the stand-in, and a run's probes are told apart by time.
static TURN: Mutex<()> = Mutex::new(());

const H100: &str = "NVIDIA H100 80GB HBM3";

/// `tfimg ARGS` in `folder`, its engine the one behind `port` of the server.
fn tfimg(sshd: &Sshd, port: u16, folder: &Path, extra: &[(&str, String)], args: &[&str]) -> Run {
    let mut env = vec![("DOCKER_HOST", sshd.url(port))];
    env.extend(extra.iter().cloned());
    sshd.tfimg_in(folder, &env, args)
}

/// stderr without the notes a `--no-build` run may print about the warm image.
fn errors(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| !line.starts_with("note: "))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// `tfimg doctor --json` over ssh: each check's verdict and summary by name.
fn doctor(sshd: &Sshd, port: u16, spec: &str) -> (i32, Vec<(String, String, String)>) {
    let folder = scratch(&[]);
    let run = tfimg(
        sshd,
        port,
        folder.path(),
        &[],
        &["doctor", spec, "--json", "--ca-cert", HOST_CA],
    );
    let checks: Vec<serde_json::Value> = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|_| panic!("doctor --json: {}{}", run.stdout, run.stderr));
    let checks = checks
        .iter()
        .map(|check| {
            let text = |key: &str| check[key].as_str().unwrap_or_default().to_string();
            (text("check"), text("verdict"), text("summary"))
        })
        .collect();
    (run.code, checks)
}

/// The verdict and summary of `name`.
fn check<'a>(checks: &'a [(String, String, String)], name: &str) -> (&'a str, &'a str) {
    checks
        .iter()
        .find(|(check, _, _)| check == name)
        .map(|(_, verdict, summary)| (verdict.as_str(), summary.as_str()))
        .unwrap_or_else(|| panic!("no `{name}` in {checks:#?}"))
}

/// The stand-in nvidia-smi's UUID of GPU `index`.
fn uuid(index: u32) -> String {
    format!("GPU-5a1d0c3e-7b2f-4e91-a6d8-{index:012}")
}

/// This machine has no NVIDIA driver: its own facts could never say H100.
fn assert_no_driver_here() {
    assert!(
        std::process::Command::new("nvidia-smi").output().is_err(),
        "these tests need a machine without nvidia-smi on PATH"
    );
}

/// A laptop with one small GPU: a folder whose `bin/nvidia-smi` lists a T500 (and no
/// toolkit), and PATH with it first.
fn laptop() -> (tempfile::TempDir, String) {
    let folder = scratch(&[(
        "bin/nvidia-smi",
        "#!/bin/sh\necho '0, GPU-1a2b3c4d-0000-0000-0000-000000000001, NVIDIA T500, 4096, 535.104.05'\n",
    )]);
    use std::os::unix::fs::PermissionsExt;
    let program = folder.path().join("bin/nvidia-smi");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        folder.path().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    (folder, path)
}

/// Seconds since the epoch, as `docker events --since/--until` take them.
fn now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    format!("{}.{:09}", now.as_secs(), now.subsec_nanos())
}

/// Probe containers the daemon at `host` created between `since` and `until`.
fn probes_created(host: Option<&str>, since: &str, until: &str) -> usize {
    common::docker_at(
        host,
        &[
            "events",
            "--since",
            since,
            "--until",
            until,
            "--filter",
            "label=io.tfimg.gpu-probe",
            "--filter",
            "event=create",
            "--format",
            "{{.Actor.ID}}",
        ],
    )
    .lines()
    .count()
}

/// No probe container is left on the daemon at `host` (the daemon removes each as it
/// exits; a hang catcher only).
fn assert_no_probe_left(host: Option<&str>) {
    common::wait_for(
        "the probe containers to go",
        Duration::from_secs(20),
        || {
            common::docker_at(host, &["ps", "-aq", "--filter", "label=io.tfimg.gpu-probe"])
                .trim()
                .is_empty()
        },
    );
}

/// Whether a container named `name` exists on the daemon at `host`.
fn exists(host: Option<&str>, name: &str) -> bool {
    !common::docker_at(host, &["ps", "-aq", "--filter", &format!("name=^{name}$")])
        .trim()
        .is_empty()
}

fn assert_nothing_left(sshd: &Sshd) {
    let left = sshd.settle(Duration::from_secs(20));
    assert!(left.is_empty(), "processes left running: {left:#?}");
}

/// This test's turn on the stand-in, the stand-in (its hook this checkout's), and the
/// server.
fn setup() -> Option<(MutexGuard<'static, ()>, GpuEngine, Sshd)> {
    let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let gpu = gpu_engine()?;
    gpu.assert_this_checkout_s_hook();
    let sshd = Sshd::start()?;
    assert_no_driver_here();
    Some((turn, gpu, sshd))
}

#[test]
fn doctor_over_ssh_reports_the_gpu_server_s_driver_and_gpus_from_a_container_there() {
    let Some((_turn, gpu, sshd)) = setup() else {
        return;
    };
    let url = sshd.url(sshd.gpu_port);
    let since = now();
    let (code, checks) = doctor(&sshd, sshd.gpu_port, "gpu-headless");
    let until = now();
    assert_eq!(code, 0, "{checks:#?}");
    let (verdict, docker_line) = check(&checks, "docker");
    assert_eq!(verdict, "pass");
    assert!(docker_line.contains(&format!("at {url} ")), "{docker_line}");
    assert_eq!(
        check(&checks, "nvidia-driver"),
        (
            "pass",
            format!("driver 580.65.06 on `{url}`, supports CUDA up to 13.0 (from nvidia-smi in a `--gpus all` container)").as_str()
        )
    );
    let gpus: Vec<String> = (0..4)
        .map(|index| format!("{index}: {H100} {} 81559 MiB", uuid(index)))
        .collect();
    assert_eq!(check(&checks, "gpus"), ("pass", gpus.join("; ").as_str()));
    // The probe ran the spec's image when the stand-in has it, else its base.
    let (verdict, toolkit) = check(&checks, "container-toolkit");
    assert_eq!(verdict, "pass");
    let ran = |image: &str| {
        format!("a `--gpus all` container ran nvidia-smi on `{url}` (image `{image}`)")
    };
    assert!(
        toolkit == ran("tfimg/gpu-headless:2.9.3") || toolkit == ran("debian:bullseye-slim"),
        "{toolkit}"
    );
    assert_eq!(
        check(&checks, "base-image"),
        (
            "pass",
            format!("`debian:bullseye-slim` is on `{url}`").as_str()
        )
    );
    // The driver against the spec's CUDA, and the H100 against TensorFlow 2.9's kernels.
    assert_eq!(check(&checks, "driver-vs-cuda").0, "pass");
    assert!(checks
        .iter()
        .any(|(name, _, summary)| name == "gpu-kernels" && summary.contains(H100)));
    // The CUDA version came from the table: two containers, both gone.
    assert_eq!(probes_created(Some(&gpu.host), &since, &until), 2);
    assert_no_probe_left(Some(&gpu.host));
    assert_nothing_left(&sshd);
}

#[test]
fn run_over_ssh_gets_the_gpus_the_server_has_not_the_laptop_s() {
    let Some((_turn, gpu, sshd)) = setup() else {
        return;
    };
    let (_laptop, path) = laptop();
    let names = [unique("t-rgpu-cpu"), unique("t-rgpu-two")];
    let _guard = DockerGuard::containers(&[&names[0], &names[1]]).on(&gpu.host);
    let folder = scratch(&[]);
    let run = |name: &str, gpus: &[&str], command: &str| {
        let mut options = gpus.to_vec();
        options.push("--keep");
        tfimg(
            &sshd,
            sshd.gpu_port,
            folder.path(),
            &[("PATH", path.clone())],
            &run_args("cpu-headless", &options, name, &["sh", "-c", command]),
        )
    };

    // A CPU run asks no host about GPUs.
    let since = now();
    let cpu = run(&names[0], &[], "echo cpu");
    let until = now();
    assert_eq!(
        (cpu.code, cpu.stdout.as_str()),
        (0, "cpu\n"),
        "{}",
        cpu.stderr
    );
    assert_eq!(probes_created(Some(&gpu.host), &since, &until), 0);

    // Two GPUs: more than the laptop's one, half the server's four.
    let since = now();
    let two = run(
        &names[1],
        &["--gpus", "2"],
        "echo visible=$NVIDIA_VISIBLE_DEVICES; nvidia-smi --query-gpu=index,uuid --format=csv,noheader",
    );
    let until = now();
    assert_eq!(two.code, 0, "{}", two.tail());
    assert_eq!(
        two.stdout,
        format!("visible=0,1\n0, {}\n1, {}\n", uuid(0), uuid(1)),
        "{}",
        two.stderr
    );
    assert!(probes_created(Some(&gpu.host), &since, &until) >= 1);
    let container = gpu.inspect(&names[1]);
    let request = &container["HostConfig"]["DeviceRequests"][0];
    // A count takes the server's free GPUs by index, never Docker's count.
    assert_eq!(request["Driver"].as_str(), Some("nvidia"));
    assert_eq!(request["DeviceIDs"], serde_json::json!(["0", "1"]));
    assert_eq!(container["Config"]["Labels"]["io.tfimg.gpus"], "0,1");
    let id = container["Id"].as_str().unwrap();
    assert!(hook_ran_for(id), "no prestart hook for {id}");
    // Nothing of it on this machine's daemon.
    assert!(!exists(None, &names[1]));
    assert_no_probe_left(Some(&gpu.host));
    assert_nothing_left(&sshd);
}

#[test]
fn more_gpus_than_the_server_has_are_refused_with_its_count_and_nothing_is_created() {
    let Some((_turn, gpu, sshd)) = setup() else {
        return;
    };
    let (_laptop, path) = laptop();
    let url = sshd.url(sshd.gpu_port);
    let name = unique("t-rgpu-seven");
    let _guard = DockerGuard::containers(&[&name]).on(&gpu.host);
    let _here = DockerGuard::containers(&[&name]);
    let folder = scratch(&[]);
    let refused = tfimg(
        &sshd,
        sshd.gpu_port,
        folder.path(),
        &[("PATH", path)],
        &run_args("cpu-headless", &["--gpus", "7"], &name, &["true"]),
    );
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(refused.stdout.is_empty());
    let listed: Vec<String> = (0..4)
        .map(|index| format!("{index} ({}, {H100})", uuid(index)))
        .collect();
    assert_eq!(
        errors(&refused.stderr),
        format!(
            "error: `--gpus 7` asks for more GPUs than the engine's host `{url}` has (4)\n\
             hint: the engine's host `{url}` has: {}\n",
            listed.join("; ")
        )
    );
    assert!(!exists(Some(&gpu.host), &name) && !exists(None, &name));
    assert_no_probe_left(Some(&gpu.host));
    assert_nothing_left(&sshd);
}

#[test]
fn a_server_without_the_toolkit_is_named_and_its_driver_learned_over_ssh() {
    let Some((_turn, _gpu, sshd)) = setup() else {
        return;
    };

    // The machine's daemon (no toolkit) on a host without a driver.
    let url = sshd.url(sshd.port);
    let (code, checks) = doctor(&sshd, sshd.port, "cpu-headless");
    assert_eq!(code, 0, "warnings only: {checks:#?}");
    // A CPU spec does not need the NVIDIA side: its warnings are information.
    let (verdict, toolkit) = check(&checks, "container-toolkit");
    assert_eq!(verdict, "info");
    assert!(
        toolkit.starts_with(&format!("the NVIDIA container toolkit is missing on `{url}`: Docker there refused a `--gpus all` container (")) && toolkit.contains("could not select device driver"),
        "{toolkit}"
    );
    assert_eq!(
        check(&checks, "nvidia-driver"),
        (
            "info",
            format!("no NVIDIA driver found on `{url}` (Docker there cannot hand GPUs over, and no nvidia-smi answered over ssh): GPU images will run on the CPU only").as_str()
        )
    );

    // The same daemon on a host whose driver answers: the toolkit is what is missing.
    let url = sshd.url(sshd.driver_only_port);
    let (code, checks) = doctor(&sshd, sshd.driver_only_port, "cpu-headless");
    assert_eq!(code, 1, "{checks:#?}");
    assert_eq!(
        check(&checks, "nvidia-driver"),
        (
            "pass",
            format!(
                "driver 580.65.06 on `{url}`, supports CUDA up to 13.0 (from nvidia-smi over ssh)"
            )
            .as_str()
        )
    );
    assert_eq!(check(&checks, "gpus").0, "pass");
    assert_eq!(check(&checks, "container-toolkit").0, "fail");

    // And `run --gpus` there is refused before anything exists.
    let name = unique("t-rgpu-notoolkit");
    let _guard = DockerGuard::containers(&[&name]);
    let folder = scratch(&[]);
    let refused = tfimg(
        &sshd,
        sshd.driver_only_port,
        folder.path(),
        &[],
        &run_args("cpu-headless", &["--gpus", "1"], &name, &["true"]),
    );
    assert_eq!(refused.code, 2, "{}", refused.tail());
    let stderr = errors(&refused.stderr);
    assert!(
        stderr.starts_with(&format!("error: cannot give GPUs to the container: the NVIDIA container toolkit is missing on `{url}`: Docker there refused a `--gpus all` container (")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "\nhint: on `{url}`: install the NVIDIA Container Toolkit"
        )),
        "{stderr}"
    );
    assert!(!exists(None, &name));
    assert_no_probe_left(None);
    assert_nothing_left(&sshd);
}

/// Issue 32: `ps --gpus` over ssh shows the server's GPUs and what each has in use, read
/// by nvidia-smi in short `--gpus all` containers there (the stand-in's, which report
/// 0 MiB and 0 % where nothing is set: numbers, not the unknown of a GPU never asked),
/// never on this machine, and leaves no container behind.
#[test]
fn ps_gpus_over_ssh_reads_the_server_s_gpu_use_from_a_container_there() {
    let Some((_turn, gpu, sshd)) = setup() else {
        return;
    };
    let folder = scratch(&[]);
    let url = sshd.url(sshd.gpu_port);
    let since = now();
    let shown = tfimg(
        &sshd,
        sshd.gpu_port,
        folder.path(),
        &[],
        &["ps", "--gpus", "--json"],
    );
    let until = now();
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let view: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let gpus = view["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 4, "{view}");
    for (index, line) in gpus.iter().enumerate() {
        assert_eq!(line["uuid"], uuid(index as u32).as_str(), "{view}");
        assert_eq!(line["memory_total_mib"], 81559, "{view}");
        assert_eq!(line["memory_used_mib"], 0, "{view}");
        assert_eq!(line["utilization"], 0, "{view}");
    }
    assert!(view["source"].as_str().unwrap().contains(&url), "{view}");
    // The GPUs, the driver's table, then their use: three containers, all gone.
    assert_eq!(probes_created(Some(&gpu.host), &since, &until), 3);
    assert_no_probe_left(Some(&gpu.host));
    assert_nothing_left(&sshd);
}
