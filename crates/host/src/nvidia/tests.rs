use std::collections::BTreeMap;

use super::*;

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/nvidia")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn tables_of_four_driver_generations_parse() {
    let cases = [
        ("smi-418.87.01.txt", "418.87.01", "10.1", 1, "Tesla K20Xm"),
        ("smi-418.67.txt", "418.67", "10.1", 4, "Tesla V100-SXM2..."),
        (
            "smi-455.32.00.txt",
            "455.32.00",
            "11.1",
            2,
            "A100-PCIE-40GB",
        ),
        ("smi-470.57.02.txt", "470.57.02", "11.4", 2, ""),
        (
            "smi-535.104.05.txt",
            "535.104.05",
            "12.2",
            1,
            "NVIDIA A100-SXM4-40GB",
        ),
    ];
    for (file, driver, cuda, count, first_name) in cases {
        let table = parse_table(&fixture(file));
        assert_eq!(table.driver.as_deref(), Some(driver), "{file}");
        assert_eq!(table.driver_cuda.as_deref(), Some(cuda), "{file}");
        assert_eq!(table.gpus.len(), count, "{file}: {:?}", table.gpus);
        let indices: Vec<u32> = table.gpus.iter().map(|gpu| gpu.index).collect();
        assert_eq!(indices, (0..count as u32).collect::<Vec<_>>(), "{file}");
        if !first_name.is_empty() {
            assert_eq!(table.gpus[0].name, first_name, "{file}");
        }
    }
    assert_eq!(
        parse_table(&fixture("smi-455.32.00.txt")).gpus[1].memory_mib,
        Some(40536)
    );
}

/// Captured on a real host (driver 580, one H100) by `tests/fixtures/nvidia/capture.sh`:
/// the queries tfimg asks, its table, and the driver's version file.
#[test]
fn a_real_h100_on_driver_580_reads_as_it_is() {
    let real = |name: &str| fixture(&format!("h100-580.159.04/{name}"));
    let answer = |program: &str, args: &[&str]| {
        (program == "nvidia-smi").then(|| match args.first() {
            None => real("table.txt"),
            Some(query) if query.contains("compute_cap") => real("query-gpu-cc.csv"),
            Some(query) if query.contains("memory.used") => real("query-use.csv"),
            Some(_) => real("query-gpu.csv"),
        })
    };
    let found = facts(&answer, &|_| None, &|_| false);
    assert_eq!(found.driver.as_deref(), Some("580.159.04"));
    // A process held 1 GiB of it while the use was asked.
    assert_eq!(found.used_mib(), BTreeMap::from([(0, 1551)]));
    assert_eq!(found.driver_cuda.as_deref(), Some("13.0"));
    assert_eq!(found.gpus.len(), 1, "{:?}", found.gpus);
    let gpu = &found.gpus[0];
    assert_eq!(gpu.index, 0);
    assert_eq!(gpu.uuid, "GPU-bd7f583f-50f0-c144-ad6d-a1e676ec3a27");
    assert_eq!(gpu.name, "NVIDIA H100 80GB HBM3");
    assert_eq!(gpu.memory_mib, Some(81559));
    assert_eq!(
        gpu.compute_capability
            .map(|capability| capability.to_string()),
        Some("9.0".to_string())
    );
    // The table alone (an older query that fails) says the same.
    let table = parse_table(&real("table-busy.txt"));
    assert_eq!(table.driver.as_deref(), Some("580.159.04"));
    assert_eq!(table.gpus.len(), 1);
    assert_eq!(table.gpus[0].name, "NVIDIA H100 80GB HBM3");
    assert_eq!(table.gpus[0].memory_mib, Some(81559));
    assert_eq!(
        parse_proc_version(&real("proc-version.txt")).as_deref(),
        Some("580.159.04")
    );
}

#[test]
fn proc_versions_parse() {
    assert_eq!(
        parse_proc_version(&fixture("proc-version-470.57.02.txt")).as_deref(),
        Some("470.57.02")
    );
    assert_eq!(
        parse_proc_version(&fixture("proc-version-418.67.txt")).as_deref(),
        Some("418.67")
    );
    assert_eq!(parse_proc_version("garbage"), None);
}

#[test]
fn facts_prefer_nvidia_smi_then_proc_then_nothing() {
    let table = fixture("smi-455.32.00.txt");
    let run_table = |program: &str, _: &[&str]| (program == "nvidia-smi").then(|| table.clone());
    let none = |_: &str| None;
    let found = facts(&run_table, &none, &|program| program == "nvidia-ctk");
    assert_eq!(found.driver.as_deref(), Some("455.32.00"));
    assert_eq!(found.gpus.len(), 2);
    assert_eq!(found.source.as_deref(), Some("nvidia-smi"));
    assert_eq!(found.toolkit_programs, ["nvidia-ctk"]);

    let csv = "0, GPU-8a2b44f3-1c2d-3e4f-5a6b-7c8d9e0f1a2b, Tesla T4, 15360, 470.82.01\n";
    let run_csv = |_: &str, args: &[&str]| {
        Some(if args.is_empty() {
            table.clone()
        } else {
            csv.to_string()
        })
    };
    let found = facts(&run_csv, &none, &|_| false);
    assert_eq!(found.driver.as_deref(), Some("470.82.01"));
    assert_eq!(
        found.gpus[0].uuid,
        "GPU-8a2b44f3-1c2d-3e4f-5a6b-7c8d9e0f1a2b"
    );

    let proc = fixture("proc-version-470.57.02.txt");
    let found = facts(
        &|_, _| None,
        &|path: &str| (path == "/proc/driver/nvidia/version").then(|| proc.clone()),
        &|_| false,
    );
    assert_eq!(found.driver.as_deref(), Some("470.57.02"));
    assert_eq!(found.source.as_deref(), Some("/proc/driver/nvidia/version"));

    let nothing = facts(&|_, _| None, &none, &|_| false);
    assert_eq!(nothing, NvidiaFacts::default());
}

#[test]
fn compute_capabilities_come_from_the_query_and_old_drivers_get_the_query_without_them() {
    let cc = |text| ComputeCapability::parse(text);
    let rows = parse_query(
        "0, GPU-5a1d, NVIDIA H100 80GB HBM3, 81559, 580.65.06, 9.0\n\
             1, GPU-5a1e, NVIDIA H100 80GB HBM3, 81559, 580.65.06, [N/A]\n\
             2, GPU-5a1f, Tesla T4, 15360, 470.82.01\n\
             garbage, line\n",
    );
    let capabilities: Vec<_> = rows.iter().map(|(gpu, _)| gpu.compute_capability).collect();
    assert_eq!(capabilities, [cc("9.0"), None, None]);
    assert_eq!(rows[0].0.memory_mib, Some(81559));

    // A 470 driver refuses `compute_cap` (exit 2, nothing on stdout): asked again
    // without it, the GPUs are still found.
    let asked = std::cell::RefCell::new(Vec::new());
    let run = |_: &str, args: &[&str]| {
        asked.borrow_mut().push(args.join(" "));
        let query = args.first().copied().unwrap_or_default();
        if query.contains("compute_cap") {
            None
        } else if query.starts_with("--query-gpu=") {
            Some("0, GPU-8a2b, Tesla V100-PCIE-32GB, 32510, 470.57.02\n".to_string())
        } else {
            Some(fixture("smi-470.57.02.txt"))
        }
    };
    let found = facts(&run, &|_| None, &|_| false);
    assert_eq!(found.driver.as_deref(), Some("470.57.02"));
    assert_eq!(found.driver_cuda.as_deref(), Some("11.4"));
    assert_eq!(found.gpus[0].compute_capability, None);
    assert_eq!(
            asked.borrow().as_slice(),
            [
                "--query-gpu=index,uuid,name,memory.total,driver_version,compute_cap --format=csv,noheader,nounits",
                "--query-gpu=index,uuid,name,memory.total,driver_version --format=csv,noheader,nounits",
                "",
                "--query-gpu=index,uuid,memory.used,memory.total,utilization.gpu,utilization.memory --format=csv,noheader,nounits",
            ]
        );
}

/// [`USE_QUERY`] as the real driver answered it (tests/fixtures/nvidia/capture.sh asks it
/// while a process holds 1 GiB), and the values a driver cannot report.
#[test]
fn gpu_use_reads_the_real_answer() {
    assert_eq!(
        USE_QUERY[0],
        "--query-gpu=index,uuid,memory.used,memory.total,utilization.gpu,utilization.memory"
    );
    let real = parse_use(&fixture("h100-580.159.04/query-use.csv"));
    assert_eq!(
        real,
        [GpuUse {
            index: 0,
            uuid: "GPU-bd7f583f-50f0-c144-ad6d-a1e676ec3a27".to_string(),
            memory_used_mib: Some(1551),
            memory_total_mib: Some(81559),
            utilization_gpu: Some(1),
            utilization_memory: Some(0),
        }]
    );
    let unsupported = parse_use("1, GPU-x, [N/A], 16384, [Not Supported], [N/A]\ngarbage\n");
    assert_eq!(unsupported.len(), 1);
    assert_eq!(unsupported[0].memory_used_mib, None);
    assert_eq!(unsupported[0].utilization_gpu, None);
    assert_eq!(unsupported[0].memory_total_mib, Some(16384));
}

/// [`PROCESSES_QUERY`] as the real driver answered it while a process held 1 GiB of the
/// H100 (not in a container), and the containers processes run in, from their cgroups.
#[test]
fn gpu_processes_read_the_real_answer_and_find_their_containers() {
    assert_eq!(
        PROCESSES_QUERY[0],
        "--query-compute-apps=pid,gpu_uuid,used_memory,process_name"
    );
    let real = parse_processes(&fixture("h100-580.159.04/compute-apps.csv"));
    assert_eq!(
        real,
        [GpuProcess {
            pid: 592,
            gpu_uuid: "GPU-bd7f583f-50f0-c144-ad6d-a1e676ec3a27".to_string(),
            used_mib: Some(1542),
            name: "python3".to_string(),
            container: None,
        }]
    );
    let id = "4f1c".repeat(16);
    for cgroup in [
        format!("0::/system.slice/docker-{id}.scope\n"),
        format!("12:memory:/docker/{id}\n11:cpu:/docker/{id}\n"),
        format!("0::/tfimg-gpu-standin/{id}\n"),
    ] {
        assert_eq!(container_of_cgroup(&cgroup), Some(id.clone()), "{cgroup}");
    }
    for outside in [
        "0::/user.slice/user-1000.slice/session-3.scope\n",
        "0::/\n",
        "",
    ] {
        assert_eq!(container_of_cgroup(outside), None, "{outside}");
    }
    let answer = |program: &str, args: &[&str]| {
        (program == "nvidia-smi" && args == PROCESSES_QUERY)
            .then(|| "77, GPU-1, [N/A], python, with, commas\n88, GPU-2, 300, sshd\n".to_string())
    };
    let read = |path: &str| {
        (path == "/proc/77/cgroup").then(|| format!("0::/docker/{}\n", "ab".repeat(32)))
    };
    let found = processes(&answer, &read);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].name, "python, with, commas");
    assert_eq!(found[0].used_mib, None);
    assert_eq!(found[0].container, Some("ab".repeat(32)));
    assert_eq!(found[1].container, None);
}
