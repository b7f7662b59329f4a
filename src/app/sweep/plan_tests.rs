//! Unit tests of `plan`: slots laid out on another host's GPUs (asked once, in
//! containers there), the trials then launched without asking again; a CPU pool asks
//! nothing; a GPU the engine's host lacks is refused naming it.

use super::*;
use crate::app::sweep::SweepRun;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;

const IMAGE: &str = "tfimg/cpu-headless:2.9.3";

fn sweep(pool: &str) -> crate::sweep::Sweep {
    let text = format!(
        "sweep: lab\nimage: {IMAGE}\ncommand: [sh, -c, \"echo acc={{n}}\"]\nparams: {{n: [1, 2, 3]}}\nobjective: {{metric: acc, mode: max}}\n{pool}"
    );
    crate::sweep::parse(&text, "sweep.yaml", std::path::Path::new("/lab")).unwrap()
}

#[test]
fn all_gpus_of_another_host_are_asked_once_and_its_trials_are_not_asked_again() {
    let engine = FakeEngine::gpu_server(IMAGE, 2);
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
    let engine = FakeEngine::gpu_server(IMAGE, 2);
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
