use super::*;
use crate::notice::Notice;

#[test]
fn gpu_images_default_to_every_gpu_only_where_docker_can_hand_them_over() {
    let working = GpuHost {
        driver: Some("535.104.05".into()),
        gpus: 2,
        toolkit: true,
        driver_problem: None,
        engine_host: None,
    };
    let choice = choose(None, true, "gpu-jupyter", Some(&working), None);
    assert_eq!(choice.selection, GpuSelection::All);
    assert_eq!(
            choice.note,
            Some(Notice::note("`gpu-jupyter` gets all 2 GPUs of this host (the default for GPU images; `--gpus none` runs it on the CPU, `--gpus 0` picks one)"))
        );

    let cpu = |host: GpuHost| {
        let choice = choose(None, true, "gpu-jupyter", Some(&host), None);
        assert_eq!(choice.selection, GpuSelection::None, "{host:?}");
        choice.note.expect("a note says why")
    };
    assert_eq!(
            cpu(GpuHost::default()),
            Notice::note("`gpu-jupyter` runs on the CPU: no NVIDIA driver answers on this host (no working `nvidia-smi`); where a GPU, its driver and the NVIDIA Container Toolkit are installed, GPU images get all GPUs (`tfimg doctor` checks the host; `--gpus none` skips this note)")
        );
    // A driver but no toolkit: `--gpus all` would fail with "could not select device
    // driver"; the default runs on the CPU and says what is missing.
    assert_eq!(
            cpu(GpuHost {
                toolkit: false,
                gpus: 1,
                ..working.clone()
            }),
            Notice::note("`gpu-jupyter` runs on the CPU: this host has 1 GPU but Docker cannot hand GPUs to containers (the NVIDIA Container Toolkit is missing); install it and restart Docker to get them (`tfimg doctor` checks the host; `--gpus none` skips this note)")
        );
    assert!(cpu(GpuHost {
        gpus: 0,
        ..working.clone()
    })
    .text()
    .contains("the NVIDIA driver 535.104.05 lists no GPU"));
    let old = cpu(GpuHost {
        driver_problem: Some("driver 418.87.01 is too old for CUDA 11.8".into()),
        ..working.clone()
    });
    assert!(old.text().contains(
        "runs on the CPU: driver 418.87.01 is too old for CUDA 11.8; upgrade the driver"
    ));

    // `--gpus` always wins, `none` silently; other images never get GPUs by default.
    for requested in [GpuSelection::None, GpuSelection::Count(1)] {
        let choice = choose(Some(&requested), true, "gpu-jupyter", Some(&working), None);
        assert_eq!((choice.selection, choice.note), (requested, None));
    }
    let remote = GpuHost {
        engine_host: Some("ssh://me@gpu-box".into()),
        ..working.clone()
    };
    assert_eq!(
            choose(None, true, "gpu-jupyter", Some(&remote), None).note,
            Some(Notice::note("`gpu-jupyter` gets all 2 GPUs of the engine's host `ssh://me@gpu-box` (the default for GPU images; `--gpus none` runs it on the CPU, `--gpus 0` picks one)"))
        );
    let plain = choose(None, false, "cpu-jupyter", Some(&working), None);
    assert_eq!((plain.selection, plain.note), (GpuSelection::None, None));
    assert!(needs_host_facts(None, true));
    assert!(!needs_host_facts(None, false));
    assert!(!needs_host_facts(Some(&GpuSelection::None), true));
}

#[test]
fn unknown_host_gpus_are_refused() {
    let host = vec![HostGpu {
        index: 0,
        uuid: "GPU-aaaa".into(),
        name: "Tesla T4".into(),
        memory_mib: Some(15360),
        compute_capability: None,
    }];
    assert!(check_against_host(&GpuSelection::parse("0").unwrap(), &host, None).is_ok());
    assert!(check_against_host(&GpuSelection::parse("GPU-aaaa").unwrap(), &host, None).is_ok());
    let error = check_against_host(&GpuSelection::parse("0,1").unwrap(), &host, None).unwrap_err();
    assert_eq!(error.message, "GPU `1` does not exist on this host");
    assert!(check_against_host(&GpuSelection::Count(2), &host, None).is_err());
    // Another host's GPUs: the messages name the engine.
    let error =
        check_against_host(&GpuSelection::Count(7), &host, Some("ssh://me@gpu-box")).unwrap_err();
    assert_eq!(
        (error.message.as_str(), error.hint.as_str()),
        (
            "`--gpus 7` asks for more GPUs than the engine's host `ssh://me@gpu-box` has (1)",
            "the engine's host `ssh://me@gpu-box` has: 0 (GPU-aaaa, Tesla T4)"
        )
    );
}

/// A GPU image's default takes the GPUs no other tfimg container holds: all of them when
/// none is held, the free ones otherwise, and the CPU (naming the holders) when none is
/// free; with `--share-gpus`, all.
#[test]
fn the_default_takes_only_free_gpus_and_names_the_holders() {
    let working = GpuHost {
        driver: Some("580.65.06".into()),
        gpus: 3,
        toolkit: true,
        driver_problem: None,
        engine_host: None,
    };
    let gpus: Vec<HostGpu> = (0..3)
        .map(|index| HostGpu {
            index,
            uuid: format!("GPU-{index}"),
            name: "NVIDIA H100 80GB HBM3".into(),
            memory_mib: Some(81559),
            compute_capability: None,
        })
        .collect();
    let holder = |name: &str, indices: &[u32]| share::Holder {
        container: name.to_string(),
        who: Some(format!("team lab, member {name}")),
        gpus: indices.iter().copied().collect(),
        sharing: false,
    };
    let choose_with = |holders: &[share::Holder], share: bool| {
        let sharing = Sharing {
            host: &gpus,
            used_mib: Default::default(),
            holders,
            share,
            engine_host: None,
        };
        choose(None, true, "gpu-jupyter", Some(&working), Some(&sharing))
    };
    assert_eq!(choose_with(&[], false).selection, GpuSelection::All);
    let some = choose_with(&[holder("ana", &[1])], false);
    assert_eq!(some.selection, GpuSelection::parse("0,2").unwrap());
    assert_eq!(
        some.note,
        Some(Notice::note("`gpu-jupyter` gets the free GPUs 0, 2 of this host (GPU 1 held: GPU 1 by `ana` (team lab, member ana); `--share-gpus` takes them too)"))
    );
    let every = [holder("ana", &[0, 1]), holder("bo", &[2])];
    let none = choose_with(&every, false);
    assert_eq!(none.selection, GpuSelection::None);
    let note = none.note.unwrap();
    assert!(
        note.text().starts_with("`gpu-jupyter` runs on the CPU: every GPU of this host is held by another container (GPU 0 by `ana` (team lab, member ana); GPU 1 by `ana` (team lab, member ana); GPU 2 by `bo` (team lab, member bo))"),
        "{note:?}"
    );
    assert!(
        note.text().contains("`--share-gpus` shares them"),
        "{note:?}"
    );
    assert_eq!(choose_with(&every, true).selection, GpuSelection::All);
}
