//! Unit tests of `plan`: slots laid out on another host's GPUs (asked once, in
//! containers there), the trials then launched without asking again; a CPU pool asks
//! nothing; a GPU the engine's host lacks, a host without a driver and a daemon that
//! refuses the GPUs are each said at `gpus:`, naming the sweep file's key.

use super::*;
use crate::app::session::Session;
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
    let (slots, nvidia) = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &sweep.pool,
        &images,
        "lr",
    ))
    .unwrap();
    let gpus: Vec<String> = slots.iter().map(|slot| slot.describe()).collect();
    assert_eq!(gpus, ["0", "1"]);
    assert_eq!(
        engine.calls_to("run-once").len(),
        2,
        "the query, then the table"
    );
    let run = crate::app::sweep::tests::image_run(sweep, slots, nvidia);
    let finished = block_on(crate::app::sweep::run(
        Session::quiet(&engine, &host),
        &run,
        &|_| {},
    ))
    .unwrap();
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
    let (slots, nvidia) = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &cpu.pool,
        &[],
        "lr",
    ))
    .unwrap();
    assert_eq!((slots.len(), nvidia), (2, None));
    assert!(engine.calls().is_empty(), "{:?}", engine.calls());

    let listed = sweep("gpus: [0, 5]\n");
    let images = [IMAGE.to_string()];
    let error = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &listed.pool,
        &images,
        "lr",
    ))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:6:7: `gpus: [0, 5]`: GPU `5` not on the engine's host `fake://engine`"
    );
}

#[test]
fn a_gpu_pool_on_a_host_without_a_driver_is_refused_at_gpus_before_anything_starts() {
    // This machine's engine, no NVIDIA driver (the fake host's facts are empty).
    let engine = FakeEngine::new();
    engine.add_image(&[IMAGE], &[]);
    let host = FakeHost::new();
    let sweep = sweep("gpus: [0, 1, 7]\n");
    let images = [IMAGE.to_string()];
    let error = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &sweep.pool,
        &images,
        "lr",
    ))
    .unwrap_err();
    let spec = error
        .downcast_ref::<crate::input::SpecError>()
        .expect("bad input, exit 1");
    assert_eq!(
        spec.to_string(),
        "`sweep.yaml`:6:7: `gpus: [0, 1, 7]` asks for GPUs, but this host has no NVIDIA GPU or driver (no working nvidia-smi, no /proc/driver/nvidia/version)"
    );
    assert!(spec.hint.contains("leave `gpus:` out of the sweep file"));
    assert!(!spec.hint.contains("--gpus"), "{}", spec.hint);
    assert_eq!(engine.calls_to("create").len(), 0);
}

#[test]
fn the_daemon_refusing_the_trials_gpus_is_said_at_gpus_with_the_sweep_file_s_key() {
    // The driver and the toolkit's hook are there, but Docker was not restarted.
    let engine = FakeEngine::new();
    engine.add_image(&[IMAGE], &[]);
    engine.state.borrow_mut().info.runtimes = vec!["runc".into()];
    engine
        .state
        .borrow_mut()
        .start_failures
        .push_back(crate::engine::StartFailure::GpuDriver(
            "could not select device driver \"nvidia\" with capabilities: [[gpu]]".into(),
        ));
    let mut host = FakeHost::new();
    host.nvidia.driver = Some("535.104.05".into());
    host.nvidia.gpus = vec![crate::plan::gpus::HostGpu {
        index: 0,
        uuid: "GPU-0".into(),
        name: "NVIDIA A100".into(),
        memory_mib: Some(40960),
        compute_capability: None,
    }];
    host.nvidia.toolkit_programs = vec!["nvidia-container-runtime-hook".into()];
    let sweep = sweep("gpus: [0]\n");
    let (slots, nvidia) = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &sweep.pool,
        &[IMAGE.to_string()],
        "lr",
    ))
    .unwrap();
    let run = crate::app::sweep::tests::image_run(sweep, slots, nvidia);
    let error = block_on(crate::app::sweep::run(
        Session::quiet(&engine, &host),
        &run,
        &|_| {},
    ))
    .unwrap_err();
    let (hint, code) = crate::output::exit::classify(&error);
    assert_eq!(
        format!("{error:#}"),
        "`sweep.yaml`:6:7: the trials cannot get the GPUs of `gpus:`: Docker has no NVIDIA device driver (could not select device driver \"nvidia\" with capabilities: [[gpu]])"
    );
    let hint = hint.unwrap();
    assert!(
        hint.ends_with("Without GPUs: leave `gpus:` out of the sweep file"),
        "{hint}"
    );
    assert!(!hint.contains("--gpus"), "{hint}");
    assert_eq!(code, 2);
}

/// The pool leaves out the GPUs other tfimg containers hold: `gpus: all` is the free ones
/// (a member holds 0 and 1; a trial of this very sweep from an earlier run, on 2, does
/// not count), and a listed GPU a member holds is refused at `gpus:`, naming it.
#[test]
fn the_pool_is_the_free_gpus_and_a_held_one_is_refused_naming_its_holder() {
    let engine = FakeEngine::gpu_server(IMAGE, 4);
    let host = FakeHost::new();
    let member = |gpus: &str, name: &str| {
        vec![
            (labels::GPUS, gpus.to_string()),
            (labels::TEAM, "lab".to_string()),
            (labels::MEMBER, name.to_string()),
        ]
    };
    engine.add_container("lab-ana", "running", &member("0,1", "ana"));
    engine.add_container("lab-old", "exited", &member("3", "old"));
    engine.add_container(
        "lr-t001",
        "running",
        &[
            (labels::GPUS, "device=2".to_string()),
            (labels::SWEEP, "lr".to_string()),
        ],
    );
    let all = sweep("gpus: all\n");
    let images = [IMAGE.to_string()];
    let (slots, _) = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &all.pool,
        &images,
        "lr",
    ))
    .unwrap();
    let gpus: Vec<String> = slots.iter().map(|slot| slot.describe()).collect();
    assert_eq!(gpus, ["2", "3"]);

    engine.answer_gpu_probe(4);
    let listed = sweep("gpus: [1, 2]\n");
    let error = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &listed.pool,
        &images,
        "lr",
    ))
    .unwrap_err();
    let text = format!("{error:#}");
    assert!(
        text.contains("GPU 1 of the engine's host `fake://engine` is held by another container: GPU 1 by `lab-ana` (team lab, member ana)"),
        "{text}"
    );
    // Another sweep's trial holds GPU 2 as any container does.
    engine.answer_gpu_probe(4);
    let other = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &listed.pool,
        &images,
        "other",
    ))
    .unwrap_err();
    assert!(format!("{other:#}").contains("GPUs 1, 2"), "{other:#}");
}

/// `gpus: N` is that many of the free GPUs, the least-loaded first, chosen when the sweep
/// starts; more than are free is refused at `gpus:`, naming the holders.
#[test]
fn a_counted_pool_takes_the_least_loaded_free_gpus() {
    let engine = FakeEngine::gpu_server(IMAGE, 4);
    let host = FakeHost::new();
    engine.add_container(
        "lab-ana",
        "running",
        &[
            (labels::GPUS, "device=0".to_string()),
            (labels::TEAM, "lab".to_string()),
            (labels::MEMBER, "ana".to_string()),
        ],
    );
    let images = [IMAGE.to_string()];
    let two = sweep("gpus: 2\n");
    let (slots, _) = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &two.pool,
        &images,
        "lr",
    ))
    .unwrap();
    let gpus: Vec<String> = slots.iter().map(|slot| slot.describe()).collect();
    assert_eq!(gpus, ["1", "2"]);

    engine.answer_gpu_probe(4);
    let four = sweep("gpus: 4\n");
    let error = block_on(plan_slots(
        Session::quiet(&engine, &host),
        &four.pool,
        &images,
        "lr",
    ))
    .unwrap_err();
    let text = format!("{error:#}");
    assert!(
        text.contains("`gpus: 4`, but 3 of the 4 GPUs of the engine's host `fake://engine` are free: GPU 0 by `lab-ana` (team lab, member ana)"),
        "{text}"
    );
    let hint = &error
        .downcast_ref::<crate::input::source::SpecError>()
        .unwrap()
        .hint;
    assert!(hint.starts_with("ask for fewer (`gpus: 3`)"), "{hint}");
}
