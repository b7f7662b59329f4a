use std::collections::HashMap;

use super::*;
use crate::plan::gpus::share;

fn gpu(index: u32) -> HostGpu {
    HostGpu {
        index,
        uuid: format!("GPU-{index}"),
        name: "NVIDIA H100 80GB HBM3".into(),
        memory_mib: Some(81559),
        compute_capability: None,
    }
}

fn used(index: u32, mib: u64, percent: u32) -> GpuUse {
    GpuUse {
        index,
        uuid: format!("GPU-{index}"),
        memory_used_mib: Some(mib),
        memory_total_mib: Some(81559),
        utilization_gpu: Some(percent),
        utilization_memory: Some(0),
    }
}

fn container(id: &str, name: &str, labels: &[(&str, &str)]) -> ContainerFacts {
    ContainerFacts {
        id: id.to_string(),
        name: name.to_string(),
        state: "running".to_string(),
        labels: labels
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect::<HashMap<_, _>>(),
        ..ContainerFacts::default()
    }
}

fn process(pid: u32, gpu: u32, mib: u64, container: Option<&str>) -> GpuProcess {
    GpuProcess {
        pid,
        gpu_uuid: format!("GPU-{gpu}"),
        used_mib: Some(mib),
        name: "python3".into(),
        container: container.map(str::to_string),
    }
}

#[test]
fn each_gpu_shows_its_use_and_holders_and_each_container_what_its_processes_use() {
    let gpus: Vec<HostGpu> = (0..3).map(gpu).collect();
    let usage = [used(0, 30_000, 80), used(1, 2_048, 37), used(2, 0, 0)];
    let ana = container(
        "aaaa",
        "lab-ana",
        &[
            (labels::SPEC, "gpu-jupyter"),
            (labels::GPUS, "device=1"),
            (labels::TEAM, "lab"),
            (labels::MEMBER, "ana"),
            (labels::OWNER, "ana"),
        ],
    );
    let idle = container(
        "bbbb",
        "idle",
        &[(labels::SPEC, "cpu-headless"), (labels::GPUS, "none")],
    );
    let containers = [ana.clone(), idle];
    let holders: Vec<Holder> = containers
        .iter()
        .filter_map(|c| share::holder(&c.name, &c.state, &c.labels, &gpus))
        .collect();
    // Two of ana's processes on GPU 1; GPU 0's process is no container's.
    let processes = [
        process(10, 1, 1_500, Some("aaaa")),
        process(11, 1, 500, Some("aaaa")),
        process(12, 0, 29_000, None),
    ];
    let view = build(
        &gpus,
        &usage,
        &processes,
        &containers,
        &holders,
        "nvidia-smi".into(),
    );
    assert_eq!(view.gpus.len(), 3);
    assert_eq!(view.gpus[1].held_by, ["lab-ana"]);
    assert_eq!(view.gpus[1].memory_used_mib, Some(2_048));
    assert_eq!(view.gpus[0].utilization, Some(80));
    assert!(view.gpus[0].held_by.is_empty());
    assert_eq!(
        view.containers.len(),
        1,
        "a container with no GPU is not shown"
    );
    let shown = &view.containers[0];
    assert_eq!(
        (
            shown.name.as_str(),
            shown.gpus.as_slice(),
            shown.memory_used_mib,
            shown.processes,
            shown.utilization
        ),
        ("lab-ana", [1].as_slice(), Some(2_000), 2, Some(37))
    );
    assert_eq!(
        gpu_rows(&view),
        [
            [
                "0",
                "NVIDIA H100 80GB HBM3",
                "30000 / 81559 MiB",
                "80%",
                "free"
            ],
            [
                "1",
                "NVIDIA H100 80GB HBM3",
                "2048 / 81559 MiB",
                "37%",
                "lab-ana"
            ],
            ["2", "NVIDIA H100 80GB HBM3", "0 / 81559 MiB", "0%", "free"],
        ]
    );
    assert_eq!(
        container_rows(&view),
        [["lab-ana", "ana", "lab/ana", "1", "2000 MiB", "37%", "-", "running"]]
    );
    // Under the idle watch, how long nobody used it: seconds, then whole minutes.
    let mut watched = view.clone();
    for (seconds, shown) in [(45, "45s"), (7_290, "2h 1m")] {
        watched.containers[0].idle_seconds = Some(seconds);
        assert_eq!(container_rows(&watched)[0][6], shown);
    }
}

/// A process of a container on a GPU it does not hold (started with `--gpus all`
/// before, or by hand) still shows; without use (an engine elsewhere) memory is unknown.
#[test]
fn a_process_shows_its_container_even_on_a_gpu_it_does_not_hold() {
    let gpus: Vec<HostGpu> = (0..2).map(gpu).collect();
    let stray = container(
        "cccc",
        "stray",
        &[(labels::SPEC, "gpu-headless"), (labels::GPUS, "none")],
    );
    let view = build(
        &gpus,
        &[used(0, 100, 5), used(1, 0, 0)],
        &[process(20, 0, 100, Some("cccc"))],
        std::slice::from_ref(&stray),
        &[],
        "nvidia-smi".into(),
    );
    assert_eq!(view.containers[0].gpus, [0]);
    let unknown = build(&gpus, &[], &[], &[], &[], "elsewhere".into());
    assert_eq!(gpu_rows(&unknown)[0][2], "- / 81559 MiB");
    assert_eq!(gpu_rows(&unknown)[0][3], "-");
}
