//! Unit tests of `gpu_host`: which host is asked (by the engine's place), the images a
//! probe may run in order, the containers it runs, a daemon without the toolkit, and
//! nvidia-smi over ssh then.
use super::*;
use crate::app::session::Session;
use crate::app::testing::block_on as run;
use crate::engine::fake::FakeEngine;
use crate::engine::Finished;
use crate::host::fake::FakeHost;
use crate::plan::gpus::HostGpu;

const H100: &str = "0, GPU-5a1d, NVIDIA H100 80GB HBM3, 81559, 580.65.06, 9.0\n\
                    1, GPU-5a1e, NVIDIA H100 80GB HBM3, 81559, 580.65.06, 9.0\n";
const TABLE: &str = "| NVIDIA-SMI 580.65.06    Driver Version: 580.65.06    CUDA Version: 13.0 |\n";

fn printed(stdout: &str) -> Result<Finished, EngineError> {
    Ok(Finished {
        exit_code: None,
        output: stdout.to_string(),
        stdout: stdout.to_string(),
    })
}

/// An engine on another host reached through ssh, holding `images`.
fn ssh_engine(images: &[&str]) -> FakeEngine {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    for image in images {
        engine.add_image(&[image], &[]);
    }
    engine
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|name| name.to_string()).collect()
}

#[test]
fn an_engine_on_this_machine_is_answered_by_this_machine_without_a_container() {
    let engine = FakeEngine::new();
    let mut host = FakeHost::new();
    host.nvidia.driver = Some("535.104.05".into());
    host.nvidia.toolkit_programs = names(&["nvidia-container-runtime-hook"]);
    let facts = run(engine_nvidia(
        Session::quiet(&engine, &host),
        &names(&["lab:1"]),
    ));
    assert_eq!(facts, host.nvidia);
    assert!(engine.calls().is_empty(), "{:?}", engine.calls());
}

#[test]
fn another_host_is_asked_in_a_gpus_all_container_of_the_launch_s_image() {
    let engine = ssh_engine(&["lab:1"]);
    {
        let mut state = engine.state.borrow_mut();
        state.one_offs.push_back(printed(H100));
        state.one_offs.push_back(printed(TABLE));
    }
    let facts = run(engine_nvidia(
        Session::quiet(&engine, &FakeHost::new()),
        &names(&["lab:1"]),
    ));
    assert_eq!(facts.driver.as_deref(), Some("580.65.06"));
    assert_eq!(facts.driver_cuda.as_deref(), Some("13.0"));
    let uuids: Vec<&str> = facts.gpus.iter().map(|gpu| gpu.uuid.as_str()).collect();
    assert_eq!(uuids, ["GPU-5a1d", "GPU-5a1e"]);
    assert_eq!(facts.source.as_deref(), Some(IN_CONTAINER));
    assert!(
        facts.toolkit_programs.is_empty(),
        "this machine's PATH says nothing"
    );
    assert_eq!(
        facts.probe,
        Some(EngineProbe {
            engine: "fake://engine".into(),
            image: Some("lab:1".into()),
            outcome: ProbeOutcome::Ran,
        })
    );
    let state = engine.state.borrow();
    let commands: Vec<String> = state
        .one_offs_run
        .iter()
        .map(|one_off| one_off.command.join(" "))
        .collect();
    assert_eq!(
        commands,
        [
            "--query-gpu=index,uuid,name,memory.total,driver_version,compute_cap --format=csv,noheader,nounits",
            "",
        ]
    );
    for one_off in &state.one_offs_run {
        assert_eq!(one_off.image, "lab:1");
        assert_eq!(one_off.entrypoint, Some(names(&["nvidia-smi"])));
        assert!(one_off.all_gpus && one_off.auto_remove && one_off.network_disabled);
        assert!(one_off.labels.contains_key(labels::GPU_PROBE));
    }
}

#[test]
fn a_driver_refusing_compute_cap_is_asked_again_without_it() {
    let engine = ssh_engine(&["lab:1"]);
    {
        let mut state = engine.state.borrow_mut();
        // nvidia-smi 470 says why on stderr: nothing on stdout.
        state.one_offs.push_back(Ok(Finished {
            exit_code: None,
            output: "Field \"compute_cap\" is not a valid field to query.\n".into(),
            stdout: String::new(),
        }));
        state.one_offs.push_back(printed(
            "0, GPU-8a2b, Tesla V100-PCIE-32GB, 32510, 470.57.02\n",
        ));
        state.one_offs.push_back(printed(TABLE));
    }
    let facts = run(engine_nvidia(
        Session::quiet(&engine, &FakeHost::new()),
        &names(&["lab:1"]),
    ));
    assert_eq!(facts.driver.as_deref(), Some("470.57.02"));
    assert_eq!(
        facts.gpus,
        [HostGpu {
            index: 0,
            uuid: "GPU-8a2b".into(),
            name: "Tesla V100-PCIE-32GB".into(),
            memory_mib: Some(32510),
            compute_capability: None,
        }]
    );
    assert_eq!(engine.state.borrow().one_offs_run.len(), 3);
}

#[test]
fn the_probe_runs_the_first_image_the_engine_has_else_any_tfimg_built() {
    let probe_image_of = |engine: &FakeEngine, wanted: &[&str]| {
        engine.state.borrow_mut().one_offs.push_back(printed(H100));
        let facts = run(engine_nvidia(
            Session::quiet(engine, &FakeHost::new()),
            &names(wanted),
        ));
        facts.probe.unwrap().image
    };
    // The spec's image is missing, its base is there.
    let engine = ssh_engine(&["debian:bullseye-slim"]);
    assert_eq!(
        probe_image_of(&engine, &["tfimg/lab:1", "debian:bullseye-slim"]).as_deref(),
        Some("debian:bullseye-slim")
    );
    // Neither: an image tfimg built, the first by name.
    let engine = ssh_engine(&[]);
    engine.add_image(
        &["tfimg/gpu-jupyter:2.9.3"],
        &[(labels::SPEC, "gpu-jupyter")],
    );
    engine.add_image(
        &["tfimg/cpu-headless:2.9.3"],
        &[(labels::SPEC, "cpu-headless")],
    );
    engine.add_image(&["alpine:3"], &[]);
    assert_eq!(
        probe_image_of(&engine, &["tfimg/lab:1", "debian:bullseye-slim"]).as_deref(),
        Some("tfimg/cpu-headless:2.9.3")
    );
    // Nothing to run: no container, and the facts say so.
    let engine = ssh_engine(&["alpine:3"]);
    let facts = run(engine_nvidia(
        Session::quiet(&engine, &FakeHost::new()),
        &names(&["tfimg/lab:1"]),
    ));
    assert_eq!(facts.probe.unwrap().outcome, ProbeOutcome::NoImage);
    assert_eq!(facts.driver, None);
    assert!(engine.calls_to("run-once").is_empty());
}

#[test]
fn a_daemon_without_the_toolkit_refuses_and_ssh_asks_the_host_for_the_driver() {
    let refusal = "could not select device driver \"nvidia\" with capabilities: [[gpu]]";
    let engine = ssh_engine(&["lab:1"]);
    {
        let mut state = engine.state.borrow_mut();
        state
            .one_offs
            .push_back(Err(EngineError::GpuToolkitMissing {
                message: refusal.into(),
            }));
        state.host_programs.insert(
            "nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version,compute_cap --format=csv,noheader,nounits".into(),
            H100.into(),
        );
        state
            .host_programs
            .insert("nvidia-smi".into(), TABLE.into());
    }
    let facts = run(engine_nvidia(
        Session::quiet(&engine, &FakeHost::new()),
        &names(&["lab:1"]),
    ));
    assert_eq!(
        facts.probe.unwrap().outcome,
        ProbeOutcome::Refused(refusal.into())
    );
    assert_eq!(
        engine.calls_to("run-once").len(),
        1,
        "refused once is enough"
    );
    assert_eq!(facts.driver.as_deref(), Some("580.65.06"));
    assert_eq!(facts.driver_cuda.as_deref(), Some("13.0"));
    assert_eq!(facts.gpus.len(), 2);
    assert_eq!(facts.source.as_deref(), Some(OVER_SSH));

    // Over tcp there is no ssh to ask: no driver known.
    let engine = FakeEngine::new();
    engine.add_image(&["lab:1"], &[]);
    engine.state.borrow_mut().tcp_elsewhere = true;
    engine
        .state
        .borrow_mut()
        .one_offs
        .push_back(Err(EngineError::GpuToolkitMissing {
            message: refusal.into(),
        }));
    let facts = run(engine_nvidia(
        Session::quiet(&engine, &FakeHost::new()),
        &names(&["lab:1"]),
    ));
    assert_eq!((facts.driver, facts.source), (None, None));
    assert!(matches!(
        facts.probe.unwrap().outcome,
        ProbeOutcome::Refused(_)
    ));
    assert!(engine.calls_to("run-on-host").is_empty());
}

#[test]
fn any_other_failure_is_reported_as_it_came() {
    let engine = ssh_engine(&["lab:1"]);
    engine
        .state
        .borrow_mut()
        .one_offs
        .push_back(Err(EngineError::Failed {
            what: "start container".into(),
            message: "exec: \"nvidia-smi\": executable file not found in $PATH".into(),
        }));
    let facts = run(engine_nvidia(
        Session::quiet(&engine, &FakeHost::new()),
        &names(&["lab:1"]),
    ));
    assert_eq!(
        facts.probe.unwrap().outcome,
        ProbeOutcome::Failed(
            "a `--gpus all` container failed: start container failed: exec: \"nvidia-smi\": executable file not found in $PATH"
                .into()
        )
    );
    assert_eq!(facts.driver, None);
    assert!(engine.calls_to("run-on-host").is_empty());
}

/// `ps --gpus` on another host: the GPUs' use is asked in one more `--gpus all` container
/// of the probe's image (the use query), never on this machine; on this machine's engine
/// `Host::nvidia` has it already and nothing runs.
#[test]
fn the_use_of_another_host_s_gpus_is_asked_in_a_container_there() {
    let engine = ssh_engine(&["lab:1"]);
    {
        let mut state = engine.state.borrow_mut();
        state.one_offs.push_back(printed(H100));
        state.one_offs.push_back(printed(TABLE));
        state.one_offs.push_back(printed(
            "0, GPU-5a1d, 2100, 81559, 37, 5\n1, GPU-5a1e, 0, 81559, 0, 0\n",
        ));
    }
    let host = FakeHost::new();
    let mut facts = run(engine_nvidia(
        Session::quiet(&engine, &host),
        &names(&["lab:1"]),
    ));
    run(engine_gpu_use(Session::quiet(&engine, &host), &mut facts));
    assert_eq!(facts.used_mib().get(&0), Some(&2100));
    assert_eq!(facts.usage[0].utilization_gpu, Some(37));
    let state = engine.state.borrow();
    let last = state.one_offs_run.last().unwrap();
    assert_eq!(last.command, USE_QUERY.map(String::from));
    assert!(last.all_gpus && last.auto_remove && last.image == "lab:1");
    drop(state);

    let local = FakeEngine::new();
    let mut facts = host.nvidia.clone();
    run(engine_gpu_use(Session::quiet(&local, &host), &mut facts));
    assert!(local.calls().is_empty(), "{:?}", local.calls());
}
