//! Unit tests of `launch`.
use super::*;
use crate::app::session::Session;
use crate::app::testing::{block_on as run, request};
use crate::engine::fake::FakeEngine;
use crate::engine::Engine;
use crate::host::fake::FakeHost;
use crate::plan::gpus::HostGpu;
use crate::plan::ports::PortRequest;

/// Checks and creates in one go: `prepare`, then `start`.
async fn launch(
    session: Session<'_, impl Engine, impl Host>,
    request: LaunchRequest,
    no_start: bool,
) -> anyhow::Result<(Vec<Notice>, Launched)> {
    let prepared = prepare(session, request, None).await?;
    let notes = prepared.notes.clone();
    let launched = start(
        session,
        prepared,
        &RefCell::new(BTreeSet::new()),
        no_start,
        |_| {},
    )
    .await?;
    Ok((notes, launched))
}

/// A host with one GPU, a driver new enough for CUDA 11.8 and the toolkit's hook.
fn gpu_host() -> FakeHost {
    let mut host = FakeHost::new();
    host.nvidia.driver = Some("535.104.05".to_string());
    host.nvidia.gpus = vec![HostGpu {
        index: 0,
        uuid: "GPU-0f0e".to_string(),
        name: "Tesla T4".to_string(),
        memory_mib: Some(15360),
        compute_capability: None,
    }];
    host.nvidia.toolkit_programs = vec!["nvidia-container-runtime-hook".to_string()];
    host
}

#[test]
fn a_notebook_is_created_started_and_reachable_on_its_ports() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let (notes, launched) = run(launch(
        Session::quiet(&engine, &host),
        request("cpu-jupyter"),
        false,
    ))
    .unwrap();
    assert!(notes.is_empty());
    assert_eq!(
        engine.calls(),
        ["create lab".to_string(), format!("start {}", launched.id)]
    );
    assert_eq!(engine.container_names(), ["lab"]);
    let jupyter = &launched.plan.endpoints[0];
    assert_eq!(jupyter.0, "jupyter");
    assert!(jupyter.1.starts_with("http://127.0.0.1:8888/lab?token="));
}

#[test]
fn gpus_the_daemon_refuses_leave_no_container_and_no_folder() {
    let (engine, host) = (FakeEngine::new(), gpu_host());
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(StartFailure::GpuDriver(
            "could not select device driver \"nvidia\" with capabilities: [[gpu]]".into(),
        ));
    let mut request = request("gpu-headless");
    request.gpus = Some(GpuSelection::All);
    let source = PathBuf::from("/project/data");
    request.mounts =
        vec![crate::plan::mounts::parse_request("./data", &PathBuf::from("/project")).unwrap()];
    host.paths.borrow_mut().insert(PathBuf::from("/project"));
    let error = run(launch(Session::quiet(&engine, &host), request, false)).unwrap_err();
    assert!(
        matches!(
            error.downcast_ref::<EngineError>(),
            Some(EngineError::GpuToolkitMissing { .. })
        ),
        "{error:#}"
    );
    // It was created with every GPU, then removed; its new folder went with it.
    assert_eq!(engine.calls_to("create").len(), 1);
    assert_eq!(engine.calls_to("remove-container").len(), 1);
    assert!(engine.container_names().is_empty());
    assert_eq!(*host.made.borrow(), std::slice::from_ref(&source));
    assert_eq!(*host.removed.borrow(), [source]);
}

#[test]
fn gpus_a_host_cannot_give_are_refused_before_anything_exists() {
    // A driver and a GPU, but no container toolkit.
    let mut host = gpu_host();
    host.nvidia.toolkit_programs.clear();
    let engine = FakeEngine::new();
    let mut request = request("gpu-headless");
    request.gpus = Some(GpuSelection::All);
    let error = run(launch(Session::quiet(&engine, &host), request, false)).unwrap_err();
    assert!(error.downcast_ref::<HostError>().is_some(), "{error:#}");
    assert!(
        error.to_string().starts_with(
            "cannot give GPUs to the container: the NVIDIA container toolkit is missing"
        ),
        "{error}"
    );
    assert!(engine.calls_to("create").is_empty());
}

#[test]
fn gpus_asked_of_a_host_without_a_driver_are_a_host_fact_before_anything_exists() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    for gpus in [
        GpuSelection::Count(3),
        GpuSelection::All,
        GpuSelection::Devices(vec!["0".into()]),
    ] {
        let mut request = request("cpu-headless");
        request.gpus = Some(gpus.clone());
        let error = run(launch(Session::quiet(&engine, &host), request, false)).unwrap_err();
        let host_error = error.downcast_ref::<HostError>().expect("a host fact");
        assert_eq!(
            host_error.message,
            format!(
                "`--gpus {}`: this host has no NVIDIA GPU or driver (no working `nvidia-smi`, no /proc/driver/nvidia/version)",
                gpus.describe()
            )
        );
        // The early check `run` and `serve` make before building says the same.
        let early = run(check_requested_gpus(
            Session::quiet(&engine, &host),
            Some(&gpus),
        ))
        .unwrap_err();
        assert_eq!(early.to_string(), host_error.message);
    }
    assert!(engine.calls_to("create").is_empty());
    // `none`, and nothing asked, need no driver.
    assert!(run(check_requested_gpus(
        Session::quiet(&engine, &host),
        Some(&GpuSelection::None)
    ))
    .unwrap()
    .is_none());
    assert!(
        run(check_requested_gpus(Session::quiet(&engine, &host), None))
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_port_lost_to_another_program_is_chosen_again() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    // Between tfimg's check and the daemon's bind, someone takes 8888.
    host.raced_ports.borrow_mut().insert(8888);
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(StartFailure::PortTaken(
            "Bind for 127.0.0.1:8888 failed: port is already allocated".into(),
        ));
    let (_, launched) = run(launch(
        Session::quiet(&engine, &host),
        request("cpu-jupyter"),
        false,
    ))
    .unwrap();
    assert_eq!(engine.calls_to("create").len(), 2);
    assert_eq!(engine.calls_to("remove-container").len(), 1);
    assert_eq!(engine.container_names(), ["lab"]);
    let jupyter = launched
        .plan
        .ports
        .iter()
        .find(|port| port.name == "jupyter")
        .unwrap();
    assert_ne!(jupyter.host, 8888, "the retry moved to a free port");
}

#[test]
fn a_port_the_user_named_is_not_retried() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(StartFailure::PortTaken("port is already allocated".into()));
    let mut request = request("cpu-jupyter");
    request.port_requests = vec![PortRequest::parse("8890:8888").unwrap()];
    let error = run(launch(Session::quiet(&engine, &host), request, false)).unwrap_err();
    assert!(
        error.to_string().starts_with("a published port is taken"),
        "{error}"
    );
    assert!(engine.container_names().is_empty());
}

#[test]
fn a_chosen_port_lost_beside_a_named_one_is_chosen_again() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    // The user names Jupyter's host port; tfimg chooses the extra port's, and loses it.
    host.raced_ports.borrow_mut().insert(9000);
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(StartFailure::PortTaken(
            "driver failed programming external connectivity on endpoint lab (0123): \
             Bind for 127.0.0.1:9000 failed: port is already allocated"
                .into(),
        ));
    let mut request = request("cpu-jupyter");
    request.port_requests = vec![
        PortRequest::parse("8890:8888").unwrap(),
        PortRequest::parse("9000").unwrap(),
    ];
    let (_, launched) = run(launch(Session::quiet(&engine, &host), request, false)).unwrap();
    assert_eq!(engine.calls_to("create").len(), 2);
    assert_eq!(engine.container_names(), ["lab"]);
    let host_of = |container: u16| {
        launched
            .plan
            .ports
            .iter()
            .find(|port| port.container == container)
            .unwrap()
            .host
    };
    assert_eq!(host_of(8888), 8890, "the named port stays");
    assert_ne!(host_of(9000), 9000, "the chosen port moved");
}

#[test]
fn a_named_port_the_daemon_could_not_bind_is_not_retried() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(StartFailure::PortTaken(
            "Bind for 127.0.0.1:8890 failed: port is already allocated".into(),
        ));
    let mut request = request("cpu-jupyter");
    request.port_requests = vec![
        PortRequest::parse("8890:8888").unwrap(),
        PortRequest::parse("9000").unwrap(),
    ];
    let error = run(launch(Session::quiet(&engine, &host), request, false)).unwrap_err();
    assert!(
        error.to_string().starts_with("a published port is taken"),
        "{error}"
    );
    assert_eq!(engine.calls_to("create").len(), 1);
    assert!(engine.container_names().is_empty());
}

#[test]
fn a_gpu_image_takes_every_gpu_by_default_and_gives_way_when_the_daemon_refuses() {
    let (engine, host) = (FakeEngine::new(), gpu_host());
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(StartFailure::GpuDriver(
            "could not select device driver".into(),
        ));
    let (notes, launched) = run(launch(
        Session::quiet(&engine, &host),
        request("gpu-headless"),
        false,
    ))
    .unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(launched.plan.gpu, GpuPlan::None);
    assert_eq!(launched.notes.len(), 1, "{:?}", launched.notes);
    assert_eq!(engine.calls_to("create").len(), 2);
}

#[test]
fn every_gpu_container_gets_its_user_s_cuda_cache_and_no_other_container_does() {
    let (engine, host) = (FakeEngine::new(), gpu_host());
    // Each container here shares the GPUs the ones before it hold.
    let request = |spec: &str| LaunchRequest {
        share_gpus: true,
        ..request(spec)
    };
    let cache = |launched: &Launched| -> Vec<(String, String)> {
        launched
            .plan
            .volumes
            .iter()
            .map(|volume| (volume.name.clone(), volume.target.clone()))
            .collect()
    };
    let expected = vec![(
        "tfimg-cuda-cache-4321".to_string(),
        "/var/cache/tfimg/cuda".to_string(),
    )];
    // The default (every GPU) and an explicit `--gpus 0` both mount it.
    let (_, launched) = run(launch(
        Session::quiet(&engine, &host),
        request("gpu-headless"),
        true,
    ))
    .unwrap();
    assert_eq!(cache(&launched), expected);
    assert_eq!(
        launched.plan.volumes[0].labels["io.tfimg.cuda-cache"],
        "4321"
    );
    let mut pinned = request("gpu-headless");
    pinned.name = Some("pinned".to_string());
    pinned.gpus = Some(GpuSelection::parse("0").unwrap());
    let (_, launched) = run(launch(Session::quiet(&engine, &host), pinned, true)).unwrap();
    assert_eq!(cache(&launched), expected);
    // On the CPU (`--gpus none`), a CPU image, or a GPU default the daemon refused: none.
    let mut cpu = request("gpu-headless");
    cpu.name = Some("cpu".to_string());
    cpu.gpus = Some(GpuSelection::None);
    let (_, launched) = run(launch(Session::quiet(&engine, &host), cpu, true)).unwrap();
    assert!(launched.plan.volumes.is_empty());
    let mut cpu_image = request("cpu-headless");
    cpu_image.name = Some("cpu-image".to_string());
    cpu_image.gpus = Some(GpuSelection::All);
    let (_, launched) = run(launch(Session::quiet(&engine, &host), cpu_image, true)).unwrap();
    assert!(
        launched.plan.volumes.is_empty(),
        "no cache folder in a CPU image"
    );
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(StartFailure::GpuDriver(
            "could not select device driver".into(),
        ));
    let mut refused = request("gpu-headless");
    refused.name = Some("refused".to_string());
    let (_, launched) = run(launch(Session::quiet(&engine, &host), refused, false)).unwrap();
    assert!(launched.plan.volumes.is_empty());
    // `--user root` runs as uid 0, whose cache is its own.
    let mut root = request("gpu-headless");
    root.name = Some("root".to_string());
    root.ids = None;
    let (_, launched) = run(launch(Session::quiet(&engine, &host), root, true)).unwrap();
    assert_eq!(launched.plan.volumes[0].name, "tfimg-cuda-cache-0");
}

#[test]
fn a_new_volume_s_root_goes_to_the_run_s_user_once() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let mut request = request("cpu-headless");
    request.volumes = vec![
        crate::plan::volumes::parse("data:/tf/data").unwrap(),
        crate::plan::volumes::parse("models:/models:ro").unwrap(),
    ];
    let (_, launched) = run(launch(
        Session::quiet(&engine, &host),
        request.clone(),
        false,
    ))
    .unwrap();
    let id = &launched.id;
    assert_eq!(
        engine.calls(),
        [
            "create lab".to_string(),
            format!("upload {id} /tf (1 entries)"),
            format!("start {id}")
        ]
    );
    assert_eq!(engine.state.borrow().uploads[0].2, ["data 4321:4322 755"]);
    let plan = engine.plan_of("lab").unwrap();
    let volumes: Vec<_> = plan
        .volumes
        .iter()
        .map(|volume| {
            (
                volume.name.as_str(),
                volume.target.as_str(),
                volume.read_only,
            )
        })
        .collect();
    assert_eq!(
        volumes,
        [("data", "/tf/data", false), ("models", "/models", true)]
    );
    // The next run finds the volume as the first left it.
    request.name = Some("lab-2".to_string());
    run(launch(Session::quiet(&engine, &host), request, false)).unwrap();
    assert_eq!(engine.calls_to("upload").len(), 1);
}

#[test]
fn overlapping_places_and_volumes_over_the_home_are_refused_before_anything_exists() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let mut over_home = request("cpu-headless");
    over_home.volumes = vec![crate::plan::volumes::parse("data:/home").unwrap()];
    let error = run(launch(Session::quiet(&engine, &host), over_home, false)).unwrap_err();
    assert_eq!(
        error.downcast_ref::<InputError>().unwrap().message,
        "`--volume data:/home`: the destination `/home` would hide the image's home folder `/home/tf`"
    );
    let project = PathBuf::from("/project");
    let mut overlapping = request("cpu-headless");
    overlapping.mounts = vec![crate::plan::mounts::parse_request("./data", &project).unwrap()];
    let sync = crate::plan::sync::parse_request("./more:/tf/data/more", &project).unwrap();
    overlapping.syncs = vec![sync];
    host.paths.borrow_mut().insert(project.join("data"));
    let error = run(launch(Session::quiet(&engine, &host), overlapping, false)).unwrap_err();
    assert_eq!(
        error.downcast_ref::<InputError>().unwrap().message,
        "`--mount ./data` and `--sync ./more:/tf/data/more` overlap at `/tf/data/more`"
    );
    assert!(engine.calls_to("create").is_empty());
}

#[test]
fn a_mount_is_refused_on_a_remote_engine_before_anything_exists() {
    use crate::engine::prelude::*;
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    engine.tunnels.borrow_mut().remote = true;
    let mut request = request("cpu-headless");
    let text = "/home/me/runs/trial-3:/tfimg/trial".to_string();
    request.mounts =
        vec![crate::plan::mounts::parse_request(&text, &PathBuf::from("/project")).unwrap()];
    let error = run(launch(Session::quiet(&engine, &host), request, false)).unwrap_err();
    let error = error.downcast_ref::<InputError>().expect("bad input");
    assert_eq!(
        error.message,
        format!(
            "`--mount /home/me/runs/trial-3:/tfimg/trial` names a folder on this machine, but the engine `{}` runs on another host",
            engine.endpoint()
        )
    );
    assert!(engine.calls_to("create").is_empty());
    assert!(host.made.borrow().is_empty());
}

#[test]
fn a_writable_mount_the_container_s_user_cannot_write_is_warned_about_not_re_owned() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let project = PathBuf::from("/project");
    for folder in ["data", "shared", "theirs"] {
        host.paths.borrow_mut().insert(project.join(folder));
    }
    let mut access = host.access.borrow_mut();
    access.insert(project.join("data"), (0, 0, 0o755)); // root made it
    access.insert(project.join("shared"), (0, 4322, 0o775)); // the user's group may write
    access.insert(project.join("theirs"), (0, 0, 0o755)); // mounted read-only
    drop(access);
    let mut request = request("cpu-headless");
    request.ids = Some((4321, 4322));
    request.mounts = ["./data", "./shared", "./theirs:ro"]
        .iter()
        .map(|text| crate::plan::mounts::parse_request(text, &project).unwrap())
        .collect();
    let (notes, _) = run(launch(Session::quiet(&engine, &host), request, true)).unwrap();
    assert_eq!(
        crate::output::shown(&notes),
        ["warning: `--mount ./data`: the folder belongs to 0:0 (mode 755) and the container runs as 4321:4322, so it cannot write there; `chown -R 4321:4322` it, run tfimg as the folder's owner (or with sudo), or mount it `:ro`"]
    );
}

#[test]
fn root_s_ids_on_a_mount_other_accounts_can_enter_are_warned_about() {
    let (engine, host) = (FakeEngine::new(), FakeHost::new());
    let project = PathBuf::from("/project");
    for folder in ["open", "closed/work", "closed"] {
        host.paths.borrow_mut().insert(project.join(folder));
        host.access
            .borrow_mut()
            .insert(project.join(folder), (0, 0, 0o755));
    }
    // Only root may enter `closed` (a 0700 project folder, `/root`).
    host.closed.borrow_mut().insert(project.join("closed"));
    let mut request = request("cpu-headless");
    request.ids = Some((0, 0));
    request.mounts = ["./open", "./closed/work", "./open:/tf/ro:ro"]
        .iter()
        .map(|text| crate::plan::mounts::parse_request(text, &project).unwrap())
        .collect();
    // Said once the container exists (never in front of a refusal): the launch's notes.
    let (prepared_notes, launched) =
        run(launch(Session::quiet(&engine, &host), request, true)).unwrap();
    assert!(prepared_notes.is_empty(), "{prepared_notes:?}");
    assert_eq!(
        crate::output::shown(&launched.notes),
        ["warning: `--mount ./open`: the container writes there as root (0:0, without capabilities) and other accounts can enter the folder, where a setuid file it leaves would run as root for them; close it (`chmod go-rwx /project/open`), run tfimg as yourself (or with sudo), or mount it `:ro`"]
    );
}
