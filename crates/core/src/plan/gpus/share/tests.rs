use super::*;

fn gpus(count: u32) -> Vec<HostGpu> {
    (0..count)
        .map(|index| HostGpu {
            index,
            uuid: format!("GPU-0000-{index}"),
            name: "NVIDIA H100 80GB HBM3".to_string(),
            memory_mib: Some(81559),
            compute_capability: None,
        })
        .collect()
}

fn labelled(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

fn held(container: &str, indices: &[u32]) -> Holder {
    Holder {
        container: container.to_string(),
        who: None,
        gpus: indices.iter().copied().collect(),
        sharing: false,
    }
}

fn sharing<'a>(
    host: &'a [HostGpu],
    used: &'a BTreeMap<u32, u64>,
    holders: &'a [Holder],
    share: bool,
) -> Sharing<'a> {
    Sharing {
        host,
        used_mib: used.clone(),
        holders,
        share,
        engine_host: None,
    }
}

fn indices(selection: &GpuSelection) -> Vec<String> {
    match selection {
        GpuSelection::Devices(devices) => devices.clone(),
        other => panic!("not devices: {other:?}"),
    }
}

#[test]
fn a_container_holds_what_its_label_names_while_it_runs() {
    let host = gpus(4);
    let member = labelled(&[
        (labels::GPUS, "1,GPU-0000-3"),
        (labels::TEAM, "lab"),
        (labels::MEMBER, "ana"),
    ]);
    let ana = holder("nb-ana", "running", &member, &host).unwrap();
    assert_eq!(ana.gpus, BTreeSet::from([1, 3]));
    assert_eq!(ana.who.as_deref(), Some("team lab, member ana"));
    assert!(!ana.sharing);
    // Stopped, it holds nothing; `none`, no label, MIG slices and unknown ids neither.
    assert_eq!(holder("nb-ana", "exited", &member, &host), None);
    assert_eq!(holder("nb-ana", "created", &member, &host), None);
    for label in ["none", "MIG-1234", "5,9", "GPU-ffff"] {
        let labels = labelled(&[(labels::GPUS, label)]);
        assert_eq!(holder("x", "running", &labels, &host), None, "{label}");
    }
    assert_eq!(holder("x", "running", &HashMap::new(), &host), None);
    // `all` holds every GPU; a count the first N, as Docker hands a count out.
    let all = labelled(&[(labels::GPUS, "all"), (labels::GPUS_SHARED, "true")]);
    let holder_all = holder("x", "paused", &all, &host).unwrap();
    assert_eq!(holder_all.gpus, BTreeSet::from([0, 1, 2, 3]));
    assert!(holder_all.sharing);
    let count = labelled(&[(labels::GPUS, "2")]);
    assert_eq!(
        holder("x", "running", &count, &host).unwrap().gpus,
        BTreeSet::from([0, 1])
    );
    let trial = labelled(&[
        (labels::GPUS, "0"),
        (labels::SWEEP, "lr"),
        (labels::TRIAL, "t003"),
    ]);
    assert_eq!(
        holder("lr-t003", "running", &trial, &host)
            .unwrap()
            .who
            .as_deref(),
        Some("sweep lr, trial t003")
    );
}

#[test]
fn a_count_takes_the_least_loaded_free_gpus_never_gpu_0_by_habit() {
    let host = gpus(4);
    let none = BTreeMap::new();
    let holders = [held("nb-ana", &[0])];
    let one = sharing(&host, &none, &holders, false)
        .allocate(&GpuSelection::Count(1))
        .unwrap();
    assert_eq!(indices(&one), ["1"]);
    // Memory in use decides among the free ones (a process tfimg did not start).
    let used = BTreeMap::from([(1, 30_000), (2, 10), (3, 0)]);
    let two = sharing(&host, &used, &holders, false)
        .allocate(&GpuSelection::Count(2))
        .unwrap();
    assert_eq!(indices(&two), ["2", "3"]);
}

#[test]
fn members_asking_one_each_get_different_gpus() {
    let host = gpus(4);
    let none = BTreeMap::new();
    let mut holders = Vec::new();
    for member in ["ana", "bo", "cy", "di"] {
        let chosen = sharing(&host, &none, &holders, false)
            .allocate(&GpuSelection::Count(1))
            .unwrap();
        let index: u32 = indices(&chosen)[0].parse().unwrap();
        holders.push(held(member, &[index]));
    }
    let taken: BTreeSet<u32> = holders.iter().flat_map(|h| h.gpus.clone()).collect();
    assert_eq!(taken, BTreeSet::from([0, 1, 2, 3]));
    // The fifth finds none free, and learns who holds them and how to share.
    let error = sharing(&host, &none, &holders, false)
        .allocate(&GpuSelection::Count(1))
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("0 of the 4 GPUs of this host are free"),
        "{text}"
    );
    assert!(text.contains("GPU 2 by `cy`"), "{text}");
    assert!(error.hint.contains("--share-gpus"), "{}", error.hint);
    // Sharing, it takes the least shared.
    let shared = sharing(&host, &none, &holders[..3], true)
        .allocate(&GpuSelection::Count(2))
        .unwrap();
    assert_eq!(indices(&shared), ["0", "3"]);
}

#[test]
fn a_held_gpu_is_refused_by_name_unless_shared() {
    let host = gpus(4);
    let none = BTreeMap::new();
    let holders = [Holder {
        who: Some("sweep lr, trial t001".to_string()),
        ..held("lr-t001", &[0])
    }];
    let asked = GpuSelection::parse("0,1").unwrap();
    let error = sharing(&host, &none, &holders, false)
        .allocate(&asked)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`--gpus 0,1`: GPU 0 of this host is held: GPU 0 by `lr-t001` (sweep lr, trial t001)"
    );
    assert!(error.hint.contains("free: 1, 2, 3"), "{}", error.hint);
    // By UUID too.
    let by_uuid = GpuSelection::parse("GPU-0000-0").unwrap();
    assert!(sharing(&host, &none, &holders, false)
        .allocate(&by_uuid)
        .is_err());
    assert_eq!(
        sharing(&host, &none, &holders, true)
            .allocate(&asked)
            .unwrap(),
        asked
    );
    assert_eq!(
        sharing(&host, &none, &holders, false)
            .allocate(&GpuSelection::parse("2,3").unwrap())
            .unwrap(),
        GpuSelection::parse("2,3").unwrap()
    );
}

#[test]
fn all_is_refused_while_any_gpu_is_held() {
    let host = gpus(2);
    let none = BTreeMap::new();
    assert_eq!(
        sharing(&host, &none, &[], false)
            .allocate(&GpuSelection::All)
            .unwrap(),
        GpuSelection::All
    );
    let holders = [held("nb-ana", &[1])];
    let error = sharing(&host, &none, &holders, false)
        .allocate(&GpuSelection::All)
        .unwrap_err();
    assert!(
        error.to_string().contains("GPU 1 of this host is held"),
        "{error}"
    );
    assert!(error.hint.contains("`--gpus 1`"), "{}", error.hint);
    assert_eq!(
        sharing(&host, &none, &holders, true)
            .allocate(&GpuSelection::All)
            .unwrap(),
        GpuSelection::All
    );
}
