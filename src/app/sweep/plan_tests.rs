//! Unit tests of `plan`: slots laid out on another host's GPUs (asked once, in
//! containers there), the trials then launched without asking again; a CPU pool asks
//! nothing; a GPU the engine's host lacks is refused naming it.

use super::*;
use crate::app::sweep::SweepRun;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::engine::Finished;
use crate::host::fake::FakeHost;

const IMAGE: &str = "tfimg/cpu-headless:2.9.3";

fn sweep(pool: &str) -> crate::sweep::Sweep {
    let text = format!(
        "sweep: lab\nimage: {IMAGE}\ncommand: [sh, -c, \"echo acc={{n}}\"]\nparams: {{n: [1, 2, 3]}}\nobjective: {{metric: acc, mode: max}}\n{pool}"
    );
    crate::sweep::parse(&text, "sweep.yaml", std::path::Path::new("/lab")).unwrap()
}

/// An engine on another host (ssh) with the sweep's image, whose nvidia-smi lists two
/// GPUs.
fn remote_engine() -> FakeEngine {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    engine.add_image(&[IMAGE], &[]);
    let printed = |stdout: &str| {
        Ok(Finished {
            stdout: stdout.to_string(),
            ..Finished::default()
        })
    };
    let mut state = engine.state.borrow_mut();
    state.one_offs.push_back(printed(
        "0, GPU-a, NVIDIA H100 80GB HBM3, 81559, 580.65.06, 9.0\n\
         1, GPU-b, NVIDIA H100 80GB HBM3, 81559, 580.65.06, 9.0\n",
    ));
    state.one_offs.push_back(printed(
        "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |\n",
    ));
    drop(state);
    engine
}

#[test]
fn all_gpus_of_another_host_are_asked_once_and_its_trials_are_not_asked_again() {
    let engine = remote_engine();
    let host = FakeHost::new();
    let sweep = sweep("gpus: all\n");
    let images = images_to_probe(&sweep.source, None);
    assert_eq!(images, [IMAGE]);
    let (slots, nvidia) = block_on(plan_slots(&engine, &host, &sweep.pool, &images)).unwrap();
    let gpus: Vec<String> = slots.iter().map(|slot| slot.describe()).collect();
    assert_eq!(gpus, ["0", "1"]);
    assert_eq!(
        engine.calls_to("run-once").len(),
        2,
        "the query, then the table"
    );
    let image = crate::engine::ImageFacts {
        id: "sha256:abc".into(),
        tags: vec![IMAGE.into()],
        working_dir: "/tf".into(),
        ..Default::default()
    };
    let run = SweepRun {
        file: "sweep.yaml".into(),
        file_bytes: Vec::new(),
        target: crate::app::run::target_of_image(IMAGE, &image),
        slots,
        nvidia,
        ids: Some((1000, 1000)),
        resume_only: false,
        sweep,
    };
    let finished = block_on(crate::app::sweep::run(&engine, &host, &run, &|_| {})).unwrap();
    assert_eq!(finished.counts.done, 3);
    assert_eq!(
        engine.calls_to("run-once").len(),
        2,
        "no trial asked again: {:?}",
        engine.calls()
    );
    assert_eq!(engine.calls_to("create").len(), 3);
}

#[test]
fn a_cpu_pool_asks_no_host_and_a_gpu_the_engine_s_host_lacks_is_refused() {
    let engine = remote_engine();
    let host = FakeHost::new();
    let cpu = sweep("max_parallel: 2\n");
    let (slots, nvidia) = block_on(plan_slots(&engine, &host, &cpu.pool, &[])).unwrap();
    assert_eq!((slots.len(), nvidia), (2, None));
    assert!(engine.calls().is_empty(), "{:?}", engine.calls());

    let listed = sweep("gpus: [0, 5]\n");
    let images = [IMAGE.to_string()];
    let error = block_on(plan_slots(&engine, &host, &listed.pool, &images)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:6:7: GPU `5` of the pool does not exist on the engine's host `fake://engine`"
    );
}
