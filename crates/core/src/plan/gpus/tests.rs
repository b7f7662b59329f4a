use super::*;

#[test]
fn selections_parse() {
    assert_eq!(GpuSelection::parse("all").unwrap(), GpuSelection::All);
    assert_eq!(GpuSelection::parse("none").unwrap(), GpuSelection::None);
    assert_eq!(GpuSelection::parse("2").unwrap(), GpuSelection::Count(2));
    assert_eq!(
        GpuSelection::parse("0,1").unwrap(),
        GpuSelection::Devices(vec!["0".into(), "1".into()])
    );
    assert_eq!(
        GpuSelection::parse("0").unwrap(),
        GpuSelection::Devices(vec!["0".into()])
    );
    assert_eq!(
        GpuSelection::parse("device=GPU-3f2a9c1e-0000-1111").unwrap(),
        GpuSelection::Devices(vec!["GPU-3f2a9c1e-0000-1111".into()])
    );
    assert_eq!(
        GpuSelection::parse("device=1").unwrap(),
        GpuSelection::Devices(vec!["1".into()])
    );
    for bad in ["", "two", "0,,1", "1,1", "gpu0", "-1", "99999999999"] {
        assert!(GpuSelection::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn counts_stop_at_the_largest_index() {
    let most = GpuSelection::parse("1000").unwrap();
    assert_eq!(most, GpuSelection::Count(MAX_GPU_COUNT));
    let GpuPlan::Runtime { visible_devices } = most.plan(GpuMode::Runtime).unwrap() else {
        panic!("runtime mode gives a runtime plan");
    };
    assert!(visible_devices.ends_with(",998,999"));
    // Found by `just fuzz`: the runtime plan of this count allocated ~100 GB.
    let error = GpuSelection::parse("4294967295").unwrap_err();
    assert_eq!(
        error.message,
        "`--gpus 4294967295` is not valid: the count is above 1000"
    );
    assert!(GpuSelection::parse("1001").is_err());
    for empty_item in ["0,,1", "0,", ",1", " , "] {
        assert_eq!(
            GpuSelection::parse(empty_item).unwrap_err().message,
            format!(
                "`--gpus {}` is not valid: an item is empty (`,,`, or a `,` at an end)",
                empty_item.trim()
            )
        );
    }
    let error = GpuSelection::parse("0,\t1x").unwrap_err();
    assert_eq!(
        error.message,
        "`--gpus 0,\\t1x` is not valid: `1x` is neither a GPU index nor a GPU-/MIG- UUID"
    );
}

#[test]
fn device_requests_never_mix_count_and_ids() {
    let request = |text: &str, mode| match GpuSelection::parse(text).unwrap().plan(mode).unwrap() {
        GpuPlan::Request(request) => request,
        other => panic!("{other:?}"),
    };
    let all = request("all", GpuMode::Devices);
    assert_eq!(
        (all.driver.as_str(), all.count, all.device_ids.len()),
        ("nvidia", Some(-1), 0)
    );
    assert_eq!(all.capabilities, vec![vec!["gpu".to_string()]]);
    assert_eq!(request("2", GpuMode::Devices).count, Some(2));
    let listed = request("0,1", GpuMode::Devices);
    assert_eq!(
        (listed.count, listed.device_ids),
        (None, vec!["0".to_string(), "1".to_string()])
    );
    let cdi = request("0,1", GpuMode::Cdi);
    assert_eq!(cdi.driver, "cdi");
    assert_eq!(cdi.device_ids, ["nvidia.com/gpu=0", "nvidia.com/gpu=1"]);
    assert!(GpuSelection::parse("2")
        .unwrap()
        .plan(GpuMode::Cdi)
        .is_err());
    assert_eq!(
        GpuSelection::parse("2")
            .unwrap()
            .plan(GpuMode::Runtime)
            .unwrap(),
        GpuPlan::Runtime {
            visible_devices: "0,1".into()
        }
    );
}

/// The label a container carries reads back as the GPUs it got: one index alone is written
/// as Docker writes it, since `1` alone is a count.
#[test]
fn a_description_reads_back_as_the_same_selection() {
    for text in [
        "all",
        "none",
        "2",
        "0",
        "0,1",
        "device=1",
        "device=12",
        "GPU-3f2a-0",
    ] {
        let selection = GpuSelection::parse(text).unwrap();
        assert_eq!(selection.describe(), text);
        assert_eq!(
            GpuSelection::parse(&selection.describe()).unwrap(),
            selection
        );
    }
    let one = GpuSelection::Devices(vec!["1".to_string()]);
    assert_eq!(one.describe(), "device=1");
}
