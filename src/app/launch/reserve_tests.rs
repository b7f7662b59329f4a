//! Unit tests of the GPU claim between choosing and creating (`reserve`): another launch
//! that chose the same GPU in the same instant is made to appear beside this one's create
//! (`FakeState::created_beside`), running, or still deciding before or after this one.

use super::*;
use crate::app::session::Session;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::engine::ContainerFacts;
use crate::host::fake::FakeHost;
use crate::plan::gpus::DeviceRequestPlan;
use crate::spec::Catalog;

const IMAGE: &str = "tfimg/cpu-headless:2.9.3-0123456789ab";

fn request(gpus: GpuSelection, share_gpus: bool) -> LaunchRequest {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, "cpu-headless").unwrap();
    LaunchRequest {
        target: crate::app::run::target_of_spec(&resolved, IMAGE.to_string()),
        command: vec!["true".to_string()],
        gpus: Some(gpus),
        share_gpus,
        ..crate::app::testing::request("cpu-headless")
    }
}

/// Another tfimg's container on GPU `gpu`, in `state`, created at `created_s` (`None`:
/// just after this launch's).
fn racer(state: &str, gpu: &str, created_s: Option<i64>) -> ContainerFacts {
    ContainerFacts {
        name: "their-run".to_string(),
        state: state.to_string(),
        labels: [(labels::GPUS.to_string(), gpu.to_string())].into(),
        created_s,
        ..ContainerFacts::default()
    }
}

/// Launches `--gpus 1` (or `share`) on a host of `gpus` GPUs beside `racer`; what it
/// ended as, and the GPUs of each container it created, in order.
fn launch_beside(
    gpus: u32,
    racer: ContainerFacts,
    starts_after: Option<usize>,
    share: bool,
) -> (anyhow::Result<Launched>, Vec<Vec<String>>) {
    let (engine, host) = (FakeEngine::gpu_server(IMAGE, gpus), FakeHost::new());
    let prepared = block_on(prepare(
        Session::quiet(&engine, &host),
        request(GpuSelection::Count(1), share),
        None,
    ))
    .unwrap();
    assert_eq!(prepared.gpus, GpuSelection::parse("0").unwrap());
    {
        let mut state = engine.state.borrow_mut();
        state.created_beside.push_back(racer);
        state.racers_start_after = starts_after;
    }
    let reserved = RefCell::new(BTreeSet::new());
    let launched = block_on(start(
        Session::quiet(&engine, &host),
        prepared,
        &reserved,
        false,
        |_| {},
    ));
    let created = engine
        .state
        .borrow()
        .created
        .iter()
        .map(|plan| match &plan.gpu {
            GpuPlan::Request(DeviceRequestPlan { device_ids, .. }) => device_ids.clone(),
            other => panic!("no device request: {other:?}"),
        })
        .collect();
    (launched, created)
}

#[test]
fn a_gpu_another_launch_started_on_meanwhile_is_let_go_and_another_is_taken() {
    let (launched, created) = launch_beside(4, racer("running", "0", None), None, false);
    let launched = launched.unwrap();
    assert_eq!(created, [vec!["0"], vec!["1"]]);
    assert!(
        launched.notes.iter().any(|note| note.text()
            == "GPU 0 was taken by `their-run` as `lab` started: it runs on GPU 1 instead"),
        "{:?}",
        launched.notes
    );
}

#[test]
fn a_launch_that_claimed_the_gpu_first_keeps_it_and_this_one_waits_for_it_to_start() {
    // Created one second before this one, still deciding for two listings, then running.
    let first = racer("created", "0", Some(0));
    let (launched, created) = launch_beside(4, first, Some(2), false);
    launched.unwrap();
    assert_eq!(created, [vec!["0"], vec!["1"]]);
}

#[test]
fn a_later_launch_that_had_not_seen_this_one_and_started_wins_the_gpu() {
    let later = racer("created", "0", None);
    let (launched, created) = launch_beside(4, later, Some(3), false);
    launched.unwrap();
    assert_eq!(created, [vec!["0"], vec!["1"]]);
}

#[test]
fn a_later_container_created_and_never_started_holds_no_gpu_and_is_waited_for_only_once() {
    let never = racer("created", "0", None);
    let (launched, created) = launch_beside(4, never, None, false);
    launched.unwrap();
    assert_eq!(created, [vec!["0"]]);
}

#[test]
fn an_earlier_container_created_and_never_started_is_waited_for_once_then_left_out() {
    let never = racer("created", "0", Some(0));
    let (launched, created) = launch_beside(4, never, None, false);
    launched.unwrap();
    // It let GPU 0 go once, waited, and took it again: a container created and not started
    // holds none.
    assert_eq!(created, [vec!["0"], vec!["0"]]);
}

#[test]
fn when_the_last_free_gpu_is_taken_meanwhile_the_launch_is_refused_naming_the_holder() {
    let (launched, created) = launch_beside(1, racer("running", "0", None), None, false);
    let error = format!("{:#}", launched.unwrap_err());
    assert!(
        error.contains("0 of the 1 GPUs") && error.contains("GPU 0 by `their-run`"),
        "{error}"
    );
    assert_eq!(created, [vec!["0"]]);
}

#[test]
fn a_launch_that_shares_its_gpus_keeps_them_beside_another() {
    let (launched, created) = launch_beside(4, racer("running", "0", None), None, true);
    launched.unwrap();
    assert_eq!(created, [vec!["0"]]);
}
