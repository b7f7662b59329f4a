use std::collections::BTreeSet;

use super::*;
use crate::input::source::Location;
use crate::sweep::journal::{replay, Event, Fingerprint};

fn pool(gpus: GpuPool, per_trial: u32, per_gpu: u32, max_parallel: Option<u32>) -> Pool {
    Pool {
        gpus,
        gpus_per_trial: per_trial,
        trials_per_gpu: per_gpu,
        max_parallel,
        location: Location {
            file: "sweep.yaml".into(),
            line: 9,
            column: 7,
        },
    }
}

fn devices(ids: &[&str]) -> GpuPool {
    GpuPool::Devices(ids.iter().map(|id| id.to_string()).collect())
}

fn plan(pool: &Pool, host: &[&str]) -> Vec<String> {
    let host: Vec<String> = host.iter().map(|id| id.to_string()).collect();
    slots(pool, &host, None)
        .unwrap()
        .iter()
        .map(Slot::describe)
        .collect()
}

#[test]
fn pools_become_slots_of_gpu_ids() {
    assert_eq!(plan(&pool(GpuPool::Cpu, 1, 1, None), &[]), ["none"]);
    assert_eq!(
        plan(&pool(GpuPool::Cpu, 1, 1, Some(3)), &[]),
        ["none", "none", "none"]
    );
    assert_eq!(
        plan(&pool(devices(&["0", "1", "2"]), 1, 1, None), &[]),
        ["0", "1", "2"]
    );
    assert_eq!(
        plan(&pool(devices(&["0", "1", "2", "3", "4"]), 2, 1, None), &[]),
        ["0,1", "2,3"]
    );
    // Shared GPUs: the first trials spread over every GPU before any doubles up.
    assert_eq!(
        plan(&pool(devices(&["0", "GPU-ab"]), 1, 2, None), &[]),
        ["0", "GPU-ab", "0", "GPU-ab"]
    );
    assert_eq!(
        plan(&pool(devices(&["0", "1"]), 1, 2, Some(3)), &[]),
        ["0", "1", "0"]
    );
    assert_eq!(
        plan(&pool(GpuPool::All, 1, 1, None), &["0", "1"]),
        ["0", "1"]
    );
    assert_eq!(
        plan(&pool(GpuPool::All, 2, 1, None), &["0", "1", "2", "3"]),
        ["0,1", "2,3"]
    );
}

#[test]
fn no_gpu_is_in_two_slots_unless_shared() {
    for per_trial in 1..=4 {
        let ids: Vec<String> = (0..8).map(|index| index.to_string()).collect();
        let pool = pool(GpuPool::Devices(ids), per_trial, 1, None);
        let slots = slots(&pool, &[], None).unwrap();
        let mut seen = BTreeSet::new();
        for slot in &slots {
            assert_eq!(slot.gpus.len(), per_trial as usize);
            for gpu in &slot.gpus {
                assert!(seen.insert(gpu.clone()), "GPU {gpu} in two slots");
            }
        }
        assert_eq!(slots.len(), 8 / per_trial as usize);
    }
}

#[test]
fn all_gpus_need_a_host_that_has_them() {
    let error = slots(&pool(GpuPool::All, 1, 1, None), &[], None).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:9:7: `gpus: all`, but this host has no GPU (nvidia-smi lists none)"
    );
    let error = slots(
        &pool(GpuPool::All, 3, 1, None),
        &["0".into(), "1".into()],
        None,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:9:7: `gpus_per_trial: 3` is more than the 2 GPU(s) of this host"
    );
    let host = vec![HostGpu {
        index: 0,
        uuid: "GPU-aa".into(),
        name: "H100".into(),
        memory_mib: None,
        compute_capability: None,
    }];
    let listed = pool(devices(&["0", "GPU-aa"]), 1, 1, None);
    assert!(check_pool_against_host(&listed, KnownGpus::Listed(&host), None).is_ok());
    let one = pool(devices(&["1"]), 1, 1, None);
    assert!(check_pool_against_host(&one, KnownGpus::Unknown, None).is_ok());
    let error = check_pool_against_host(
        &pool(devices(&["0", "1"]), 1, 1, None),
        KnownGpus::Listed(&host),
        None,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:9:7: `gpus: [0, 1]`: GPU `1` not on this host"
    );
    assert_eq!(
        error.hint,
        "this host has: 0 (H100); list only those in `gpus:` in the sweep file (or `gpus: all`)"
    );
}

#[test]
fn every_missing_gpu_is_named_and_a_host_without_a_driver_refuses_any_gpu_pool() {
    let host = [HostGpu {
        index: 0,
        uuid: "GPU-aa".into(),
        name: "H100".into(),
        memory_mib: None,
        compute_capability: None,
    }];
    let three = pool(devices(&["0", "1", "7"]), 1, 1, None);
    let error = check_pool_against_host(&three, KnownGpus::Listed(&host), None).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`sweep.yaml`:9:7: `gpus: [0, 1, 7]`: GPUs `1`, `7` not on this host"
    );
    let no_driver = KnownGpus::NoDriver {
        why: "no working nvidia-smi, no /proc/driver/nvidia/version",
    };
    for (pool, asked) in [
        (three, "`gpus: [0, 1, 7]`"),
        (pool(GpuPool::All, 1, 1, None), "`gpus: all`"),
    ] {
        let error = check_pool_against_host(&pool, no_driver, Some("ssh://gpu-box")).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("`sweep.yaml`:9:7: {asked} asks for GPUs, but the engine's host `ssh://gpu-box` has no NVIDIA GPU or driver (no working nvidia-smi, no /proc/driver/nvidia/version)")
        );
        assert!(
            error
                .hint
                .starts_with("leave `gpus:` out of the sweep file"),
            "{}",
            error.hint
        );
        assert!(!error.hint.contains("--gpus"), "{}", error.hint);
    }
    let cpu = pool(GpuPool::Cpu, 1, 1, Some(2));
    assert!(check_pool_against_host(&cpu, no_driver, None).is_ok());
}

/// 27 trials over 3 GPU slots, each finishing in a different order from how it started:
/// never more than 3 run, no GPU holds two trials, queued trials start as slots free and
/// in trial order.
#[test]
fn twenty_seven_trials_over_three_slots_first_in_first_out() {
    let slots = slots(&pool(devices(&["0", "1", "2"]), 1, 1, None), &[], None).unwrap();
    let mut scheduler = Scheduler::new(&slots, 27, 0, None);
    let mut started = Vec::new();
    let mut step = 0usize;
    loop {
        while let Some(start) = scheduler.next_start() {
            assert_eq!(start.attempt, 1);
            started.push(start.trial);
        }
        let running = scheduler.running();
        assert!(running.len() <= 3);
        let gpus: BTreeSet<String> = running
            .iter()
            .map(|(_, slot)| scheduler.slot(*slot).describe())
            .collect();
        assert_eq!(gpus.len(), running.len(), "two trials on one GPU");
        if !scheduler.queued().is_empty() {
            assert_eq!(running.len(), 3, "a slot idles while trials wait");
        }
        if running.is_empty() {
            break;
        }
        // Finish the running trial chosen by a fixed stride, not the oldest.
        step += 1;
        let (trial, _) = running[step * 7 % running.len()];
        assert_eq!(scheduler.finished(trial, Exit::Code(0)), Outcome::Done);
    }
    assert_eq!(started, (0..27).collect::<Vec<_>>());
    assert!(scheduler.is_finished());
    assert!((0..27).all(|trial| scheduler.progress(trial) == Progress::Done { attempt: 1 }));
}

#[test]
fn failures_retry_at_the_back_of_the_queue_until_retries_run_out() {
    let slots = slots(&pool(GpuPool::Cpu, 1, 1, Some(1)), &[], None).unwrap();
    let mut scheduler = Scheduler::new(&slots, 3, 1, None);
    let first = scheduler.next_start().unwrap();
    assert_eq!(scheduler.next_start(), None, "one slot");
    assert_eq!(
        scheduler.finished(first.trial, Exit::Code(1)),
        Outcome::Retry { retry: 1 }
    );
    assert_eq!(scheduler.queued(), [1, 2, 0]);
    let order: Vec<(usize, u32)> = (0..3)
        .map(|_| {
            let start = scheduler.next_start().unwrap();
            let exit = if start.trial == 0 {
                Exit::Unknown
            } else {
                Exit::Code(0)
            };
            scheduler.finished(start.trial, exit);
            (start.trial, start.attempt)
        })
        .collect();
    assert_eq!(order, [(1, 1), (2, 1), (0, 2)]);
    assert_eq!(scheduler.progress(0), Progress::Failed { attempt: 2 });
    assert!(scheduler.is_finished());
}

#[test]
fn a_failure_after_a_stopped_attempt_is_the_first_retry_not_the_attempt_s_number() {
    let slots = slots(&pool(GpuPool::Cpu, 1, 1, Some(1)), &[], None).unwrap();
    let mut scheduler = Scheduler::new(&slots, 1, 1, None);
    let first = scheduler.next_start().unwrap();
    assert_eq!(
        scheduler.finished(first.trial, Exit::Stopped),
        Outcome::Stopped
    );
    let second = scheduler.next_start().unwrap();
    assert_eq!(second.attempt, 2);
    assert_eq!(
        scheduler.finished(second.trial, Exit::Code(1)),
        Outcome::Retry { retry: 1 }
    );
    let third = scheduler.next_start().unwrap();
    assert_eq!(third.attempt, 3);
    assert_eq!(
        scheduler.finished(third.trial, Exit::Code(1)),
        Outcome::Failed
    );
}

#[test]
fn max_failed_and_stop_halt_the_starting() {
    let slots = slots(&pool(GpuPool::Cpu, 1, 1, Some(2)), &[], None).unwrap();
    let mut scheduler = Scheduler::new(&slots, 5, 0, Some(1));
    let a = scheduler.next_start().unwrap();
    let b = scheduler.next_start().unwrap();
    assert_eq!(scheduler.finished(a.trial, Exit::Code(2)), Outcome::Failed);
    assert_eq!(scheduler.halted(), Some(Halt::MaxFailed));
    assert_eq!(scheduler.next_start(), None);
    assert!(!scheduler.is_finished(), "b still runs");
    assert_eq!(scheduler.finished(b.trial, Exit::Stopped), Outcome::Stopped);
    assert_eq!(
        scheduler.progress(b.trial),
        Progress::Stopped { attempt: 1 }
    );
    assert!(scheduler.is_finished());
    assert_eq!(scheduler.progress(4), Progress::Queued);

    let mut scheduler = Scheduler::new(&slots, 5, 3, None);
    let a = scheduler.next_start().unwrap();
    scheduler.stop();
    assert_eq!(scheduler.next_start(), None);
    // A failure while stopping is not retried.
    assert_eq!(scheduler.finished(a.trial, Exit::Code(1)), Outcome::Failed);
    assert_eq!(
        scheduler.finished(a.trial, Exit::Code(0)),
        Outcome::Stopped,
        "not running"
    );
    assert!(scheduler.is_finished());
}

fn started(trial: &str, attempt: u32, gpus: &[&str]) -> Event {
    Event::TrialStarted {
        trial: trial.into(),
        attempt,
        container: format!("lab-{trial}"),
        container_id: format!("id-{trial}-{attempt}"),
        gpus: gpus.iter().map(|gpu| gpu.to_string()).collect(),
        image: "sha256:1".into(),
        time_ms: 1000,
    }
}

fn finished(trial: &str, attempt: u32, exit_code: Option<i64>, stopped: bool) -> Event {
    Event::TrialFinished {
        trial: trial.into(),
        attempt,
        exit_code,
        stopped,
        time_ms: 2000,
    }
}

#[test]
fn a_resumed_sweep_keeps_what_finished_and_reattaches_what_runs() {
    let events = vec![
        Event::SweepStarted {
            sweep: "lab".into(),
            trials: 6,
            fingerprint: Fingerprint::default(),
            time_ms: 0,
        },
        started("t001", 1, &["0"]),
        finished("t001", 1, Some(0), false),
        started("t002", 1, &["1"]),
        finished("t002", 1, Some(1), false),
        started("t002", 2, &["1"]),
        finished("t002", 2, Some(1), false),
        started("t003", 1, &["0"]),
        started("t004", 1, &["1"]),
        finished("t004", 1, None, true),
        started("t005", 1, &["7"]),
        started("t006", 1, &["1"]),
        finished("t006", 1, Some(3), false),
    ];
    let replay = replay(&events);
    let slots = slots(&pool(devices(&["0", "1"]), 1, 1, None), &[], None).unwrap();
    let mut scheduler = Scheduler::new(&slots, 6, 1, None);
    let restored: Vec<Restored> = (0..6)
        .map(|index| scheduler.restore(index, &replay.trial(&format!("t00{}", index + 1))))
        .collect();
    assert_eq!(
        restored,
        [
            Restored::Done,
            Restored::Failed,
            Restored::Reattach { slot: 0 },
            Restored::Queued,
            Restored::NoSlot,
            Restored::Queued,
        ]
    );
    // t004 was stopped (no retry used), t005 ran on a GPU the pool lost, t006 failed once.
    assert_eq!(scheduler.queued(), [3, 4, 5]);
    assert_eq!(
        scheduler.next_start(),
        Some(Start {
            trial: 3,
            slot: 1,
            attempt: 2
        })
    );
    assert_eq!(scheduler.next_start(), None);
    assert_eq!(scheduler.finished(2, Exit::Code(0)), Outcome::Done);
    assert_eq!(
        scheduler.next_start(),
        Some(Start {
            trial: 4,
            slot: 0,
            attempt: 2
        })
    );
    // Its first attempt was stopped: this failure is its first retry, not its second.
    assert_eq!(
        scheduler.finished(4, Exit::Code(1)),
        Outcome::Retry { retry: 1 }
    );
    assert_eq!(
        scheduler.next_start(),
        Some(Start {
            trial: 5,
            slot: 0,
            attempt: 2
        })
    );
    assert_eq!(
        scheduler.finished(5, Exit::Code(1)),
        Outcome::Failed,
        "its one retry is spent"
    );
}

fn judged(trial: &str, attempt: u32, stop: bool) -> Event {
    Event::TrialJudged {
        trial: trial.into(),
        attempt,
        judgement: crate::sweep::early_stop::Judgement {
            at: 1.0,
            unit: crate::sweep::early_stop::Unit::Epoch,
            rung: Some(1),
            bracket: None,
            value: 0.1,
            cutoff: stop.then_some(0.9),
            stop,
        },
        time_ms: 1500,
    }
}

#[test]
fn a_trial_stopped_early_frees_its_slot_for_good_and_stays_stopped_on_resume() {
    let one = slots(&pool(GpuPool::Cpu, 1, 1, Some(1)), &[], None).unwrap();
    let mut scheduler = Scheduler::new(&one, 2, 1, None);
    assert_eq!(scheduler.next_start().map(|start| start.trial), Some(0));
    assert_eq!(
        scheduler.finished(0, Exit::StoppedEarly),
        Outcome::StoppedEarly
    );
    assert_eq!(scheduler.progress(0), Progress::StoppedEarly { attempt: 1 });
    // Not queued again, no retry used: the next trial takes the slot.
    assert_eq!(scheduler.queued(), [1]);
    assert_eq!(scheduler.next_start().map(|start| start.trial), Some(1));

    // From the journal: judged and stopped (t001), judged to stop but killed before its
    // end was written (t002), judged to go on and done (t003).
    let events = vec![
        started("t001", 1, &[]),
        judged("t001", 1, true),
        finished("t001", 1, Some(143), true),
        started("t002", 1, &[]),
        judged("t002", 1, true),
        started("t003", 1, &[]),
        judged("t003", 1, false),
        finished("t003", 1, Some(0), false),
    ];
    let replay = replay(&events);
    let two = slots(&pool(GpuPool::Cpu, 1, 1, Some(2)), &[], None).unwrap();
    let mut scheduler = Scheduler::new(&two, 3, 1, None);
    let restored: Vec<Restored> = (0..3)
        .map(|index| scheduler.restore(index, &replay.trial(&format!("t00{}", index + 1))))
        .collect();
    assert_eq!(
        restored,
        [
            Restored::StoppedEarly,
            Restored::StoppedEarly,
            Restored::Done
        ]
    );
    assert_eq!(scheduler.next_start(), None);
    assert!(scheduler.is_finished());
    assert_eq!(
        replay
            .trial("t002")
            .stopped_early()
            .map(|judgement| judgement.cutoff),
        Some(Some(0.9))
    );
}
