//! Unit tests of the launcher's GPUs on an engine on another host: decided on that
//! host's facts (asked in `--gpus all` containers there), never on this machine's; not
//! asked at all when nothing GPU is involved; asked once when the caller already knows.

use super::*;
use crate::app::session::Session;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::host::nvidia::ProbeOutcome;
use crate::plan::gpus::{DeviceRequestPlan, HostGpu};
use crate::spec::Catalog;

const IMAGE: &str = "tfimg/cpu-headless:2.9.3-0123456789ab";

fn request(spec: &str, gpus: Option<GpuSelection>) -> LaunchRequest {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, spec).unwrap();
    let image = format!("tfimg/{spec}:2.9.3-0123456789ab");
    LaunchRequest {
        target: crate::app::run::target_of_spec(&resolved, image),
        command: vec!["true".to_string()],
        gpus,
        ..crate::app::testing::request(spec)
    }
}

/// An engine reached through ssh whose host has four H100s and the toolkit (its
/// containers run nvidia-smi), holding the CPU image.
fn gpu_box() -> FakeEngine {
    FakeEngine::gpu_server(IMAGE, 4)
}

/// This machine: a laptop with one small GPU and the toolkit, which must not matter.
fn laptop() -> FakeHost {
    let mut host = FakeHost::new();
    host.nvidia.driver = Some("535.104.05".into());
    host.nvidia.gpus = vec![HostGpu {
        index: 0,
        uuid: "GPU-laptop".into(),
        name: "NVIDIA T500".into(),
        memory_mib: Some(4096),
        compute_capability: None,
    }];
    host.nvidia.toolkit_programs = vec!["nvidia-container-runtime-hook".into()];
    host
}

#[test]
fn gpus_on_another_host_are_checked_and_given_on_its_facts() {
    let (engine, host) = (gpu_box(), laptop());
    let prepared = block_on(prepare(
        Session::quiet(&engine, &host),
        request("cpu-headless", Some(GpuSelection::Count(2))),
        None,
    ))
    .unwrap();
    // A count takes GPUs by index (the least-loaded free ones), never Docker's count.
    assert_eq!(prepared.gpus, GpuSelection::parse("0,1").unwrap());
    let nvidia = prepared.nvidia.clone().expect("the facts it decided on");
    assert_eq!(nvidia.gpus.len(), 4);
    assert_eq!(nvidia.probe.unwrap().outcome, ProbeOutcome::Ran);
    let probes = engine.state.borrow().one_offs_run.clone();
    assert_eq!(probes.len(), 2);
    assert!(probes
        .iter()
        .all(|probe| probe.image == IMAGE && probe.all_gpus));
    let reserved = RefCell::new(BTreeSet::new());
    let launched = block_on(start(
        Session::quiet(&engine, &host),
        prepared,
        &reserved,
        false,
        |_| {},
    ))
    .unwrap();
    assert_eq!(
        launched.plan.gpu,
        GpuPlan::Request(DeviceRequestPlan {
            driver: "nvidia".into(),
            count: None,
            device_ids: vec!["0".into(), "1".into()],
            capabilities: vec![vec!["gpu".into()]],
        })
    );
}

#[test]
fn more_gpus_than_the_other_host_has_are_refused_naming_it_before_anything_exists() {
    let (engine, host) = (gpu_box(), laptop());
    let error = block_on(prepare(
        Session::quiet(&engine, &host),
        request("cpu-headless", Some(GpuSelection::Count(7))),
        None,
    ))
    .unwrap_err();
    let error = error.downcast_ref::<InputError>().expect("bad input");
    assert_eq!(
        error.message,
        "`--gpus 7` asks for more GPUs than the engine's host `fake://engine` has (4)"
    );
    assert!(engine.calls_to("create").is_empty());
    // `--gpus 1` would pass on the laptop's one GPU; here it is the box's.
    let engine = gpu_box();
    let asked = request(
        "cpu-headless",
        Some(GpuSelection::Devices(vec!["3".into()])),
    );
    assert!(block_on(prepare(Session::quiet(&engine, &host), asked, None)).is_ok());
}

#[test]
fn nothing_gpu_asks_no_host_and_known_facts_are_not_asked_again() {
    let (engine, host) = (gpu_box(), laptop());
    for gpus in [None, Some(GpuSelection::None)] {
        let prepared = block_on(prepare(
            Session::quiet(&engine, &host),
            request("cpu-headless", gpus),
            None,
        ))
        .unwrap();
        assert_eq!((prepared.gpus, prepared.nvidia), (GpuSelection::None, None));
    }
    let prepared = block_on(prepare(
        Session::quiet(&engine, &host),
        request("gpu-headless", Some(GpuSelection::None)),
        None,
    ))
    .unwrap();
    assert!(prepared.notes.is_empty());
    assert!(engine.calls().is_empty(), "{:?}", engine.calls());

    // A GPU image's default on the box: all of its GPUs, said so naming it.
    engine.add_image(&["tfimg/gpu-headless:2.9.3-0123456789ab"], &[]);
    let first = block_on(prepare(
        Session::quiet(&engine, &host),
        request("gpu-headless", None),
        None,
    ))
    .unwrap();
    assert_eq!(first.gpus, GpuSelection::All);
    assert_eq!(
        crate::output::shown(&first.notes),
        ["note: `gpu-headless` gets all 4 GPUs of the engine's host `fake://engine` (the default for GPU images; `--gpus none` runs it on the CPU, `--gpus 0` picks one)"]
    );
    // A second launch given those facts (a sweep's trial, a team's next member) asks
    // nothing more.
    let next = request(
        "gpu-headless",
        Some(GpuSelection::Devices(vec!["1".into()])),
    );
    let known = first.nvidia.clone();
    let asked = engine.calls_to("run-once").len();
    block_on(prepare(Session::quiet(&engine, &host), next, known)).unwrap();
    assert_eq!(engine.calls_to("run-once").len(), asked);
}

#[test]
fn a_daemon_there_without_the_toolkit_is_explained_before_anything_exists() {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    engine.add_image(&[IMAGE], &[]);
    {
        let mut state = engine.state.borrow_mut();
        state
            .one_offs
            .push_back(Err(EngineError::GpuToolkitMissing {
                message: "could not select device driver \"\" with capabilities: [[gpu]]".into(),
            }));
        // ... while its driver answers over ssh.
        state.host_programs.insert(
            "nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version,compute_cap --format=csv,noheader,nounits".into(),
            "0, GPU-0, NVIDIA H100 80GB HBM3, 81559, 580.65.06, 9.0\n".into(),
        );
    }
    let laptop = laptop();
    let error = block_on(prepare(
        Session::quiet(&engine, &laptop),
        request("cpu-headless", Some(GpuSelection::All)),
        None,
    ))
    .unwrap_err();
    let error = error.downcast_ref::<HostError>().expect("a host problem");
    assert_eq!(
        error.message,
        "cannot give GPUs to the container: the NVIDIA container toolkit is missing on `fake://engine`: Docker there refused a `--gpus all` container (could not select device driver \"\" with capabilities: [[gpu]])"
    );
    assert!(error
        .hint
        .starts_with("on `fake://engine`: install the NVIDIA Container Toolkit"));
    assert!(engine.calls_to("create").is_empty());
}

/// The GPUs tfimg's containers hold are read back from the engine (their labels): a count
/// takes free ones, a GPU held by another container is refused before anything exists,
/// naming it, and `--share-gpus` takes it anyway, labelled as sharing.
#[test]
fn counts_take_free_gpus_and_a_held_one_is_refused_naming_its_holder() {
    let (engine, host) = (gpu_box(), laptop());
    let reserved = RefCell::new(BTreeSet::new());
    // The host's facts are asked once, then passed on (as `up` does for its members).
    let known = RefCell::new(None);
    let launch = |name: &str, gpus: &str, share: bool| {
        let mut asked = request("cpu-headless", Some(GpuSelection::parse(gpus).unwrap()));
        asked.name = Some(name.to_string());
        asked.share_gpus = share;
        let facts = known.borrow().clone();
        let prepared = block_on(prepare(Session::quiet(&engine, &host), asked, facts))?;
        known.replace(prepared.nvidia.clone());
        block_on(start(
            Session::quiet(&engine, &host),
            prepared,
            &reserved,
            false,
            |_| {},
        ))
    };
    let ana = launch("ana", "1", false).unwrap();
    let bo = launch("bo", "2", false).unwrap();
    assert_eq!(ana.plan.labels[labels::GPUS], "0");
    assert_eq!(bo.plan.labels[labels::GPUS], "1,2");
    let before = engine.state.borrow().containers.len();
    let refused = launch("cy", "0,3", false).unwrap_err().to_string();
    assert_eq!(
        refused,
        "`--gpus 0,3`: GPU 0 of the engine's host `fake://engine` is held: GPU 0 by `ana`"
    );
    let refused = launch("cy", "2", false).unwrap_err().to_string();
    assert!(refused.contains("1 of the 4 GPUs"), "{refused}");
    assert_eq!(engine.state.borrow().containers.len(), before);
    let shared = launch("cy", "0", true).unwrap();
    assert_eq!(shared.plan.labels[labels::GPUS], "0");
    assert_eq!(shared.plan.labels[labels::GPUS_SHARED], "true");
    // Launched again under its name, a container does not hold against itself.
    let again = launch("ana", "0", false).unwrap_err().to_string();
    assert!(
        again.contains("`cy`") && !again.contains("`ana`"),
        "{again}"
    );
}
