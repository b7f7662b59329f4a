//! The NVIDIA side of the host: driver version and GPUs (with their compute capability
//! where the driver reports it) from `nvidia-smi` (its CSV query or, when only the human
//! table is available, that table), else the kernel module's
//! `/proc/driver/nvidia/version`; and whether the container toolkit's pieces are on PATH.
//! Parsing is pure and tested against outputs captured on real machines
//! (tests/fixtures/nvidia/).

use std::collections::BTreeMap;

use tfimg_core::plan::gpus::HostGpu;
use tfimg_core::spec::compat::ComputeCapability;

/// What the host says about its NVIDIA driver (as JSON too: a team's hub is handed its
/// engine host's facts, `app::hub`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NvidiaFacts {
    /// `455.32.00`, when a driver answered.
    pub driver: Option<String>,
    /// The CUDA version the driver supports (the table's `CUDA Version`).
    pub driver_cuda: Option<String>,
    pub gpus: Vec<HostGpu>,
    /// Each GPU's use now ([`USE_QUERY`]; empty when it was not asked or did not answer).
    pub usage: Vec<GpuUse>,
    /// Where the facts came from: `nvidia-smi`, `/proc/driver/nvidia/version`, or nothing.
    pub source: Option<String>,
    /// Toolkit programs found on PATH (`nvidia-container-runtime-hook`, `nvidia-ctk`).
    pub toolkit_programs: Vec<String>,
    /// `Some` when these are the facts of another host, the engine's, learned through a
    /// container there (its PATH says nothing here); `None`: this machine's.
    pub probe: Option<EngineProbe>,
}

impl NvidiaFacts {
    /// GPU memory in use now, MiB by GPU index.
    pub fn used_mib(&self) -> BTreeMap<u32, u64> {
        self.usage
            .iter()
            .filter_map(|gpu| Some((gpu.index, gpu.memory_used_mib?)))
            .collect()
    }
}

/// How the NVIDIA facts of an engine on another host were learned: a short `--gpus all`
/// container running nvidia-smi there.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineProbe {
    /// The engine's URL (`ssh://me@gpu-box`).
    pub engine: String,
    /// The image the container ran, when the engine had one to run.
    pub image: Option<String>,
    pub outcome: ProbeOutcome,
}

/// What became of the `--gpus all` container.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProbeOutcome {
    /// It ran nvidia-smi: Docker there hands GPUs to containers.
    Ran,
    /// Docker there refused the GPU request (it has no `nvidia` device driver: the
    /// NVIDIA container toolkit is missing); the daemon's message.
    Refused(String),
    /// The engine has no image to run it with.
    NoImage,
    /// It failed otherwise: what happened, as a clause (`a `--gpus all` container
    /// failed: ...`).
    Failed(String),
    /// The engine did not answer at all: nothing could be asked.
    Unreached,
}

/// Reads the facts through `run` (a program and its arguments → its stdout when it
/// succeeded) and `read` (a file's contents), so tests can stand in for the host.
pub fn facts(
    run: &dyn Fn(&str, &[&str]) -> Option<String>,
    read: &dyn Fn(&str) -> Option<String>,
    on_path: &dyn Fn(&str) -> bool,
) -> NvidiaFacts {
    let mut facts = NvidiaFacts {
        toolkit_programs: [
            "nvidia-container-runtime-hook",
            "nvidia-ctk",
            "nvidia-container-cli",
        ]
        .iter()
        .filter(|program| on_path(program))
        .map(|program| program.to_string())
        .collect(),
        ..NvidiaFacts::default()
    };
    let answer = SMI_QUERIES
        .iter()
        .find_map(|query| run("nvidia-smi", query).and_then(|output| read_answer(&output)));
    if let Some(mut answer) = answer {
        if answer.wants_table {
            if let Some(table) = run("nvidia-smi", &[]) {
                answer.add_table(&table);
            }
        }
        answer.fill(&mut facts, "nvidia-smi");
        if let Some(output) = run("nvidia-smi", &USE_QUERY) {
            facts.usage = parse_use(&output);
        }
        return facts;
    }
    if let Some(text) = read("/proc/driver/nvidia/version") {
        facts.driver = parse_proc_version(&text);
        if facts.driver.is_some() {
            facts.source = Some("/proc/driver/nvidia/version".to_string());
        }
    }
    facts
}

/// What tfimg asks nvidia-smi, with the compute capability where the driver knows it.
const QUERY_WITH_CAPABILITY: &str =
    "--query-gpu=index,uuid,name,memory.total,driver_version,compute_cap";
const QUERY: &str = "--query-gpu=index,uuid,name,memory.total,driver_version";
const FORMAT: &str = "--format=csv,noheader,nounits";

/// The questions put to nvidia-smi, in order, until one answers with a driver:
/// `compute_cap` first; drivers of the 470 branch and older refuse the whole query for
/// that field (`Field "compute_cap" is not a valid field to query.`, exit 2). When the
/// answer is the CSV, the table (nvidia-smi without arguments) is asked next for the CUDA
/// version the driver supports ([`SmiAnswer::wants_table`]).
pub const SMI_QUERIES: [&[&str]; 2] = [&[QUERY_WITH_CAPABILITY, FORMAT], &[QUERY, FORMAT]];

/// The facts in nvidia-smi's answer to one of [`SMI_QUERIES`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SmiAnswer {
    pub driver: String,
    pub driver_cuda: Option<String>,
    pub gpus: Vec<HostGpu>,
    /// The answer was the CSV: the CUDA version is only in the table.
    pub wants_table: bool,
}

impl SmiAnswer {
    /// Takes the CUDA version from nvidia-smi's table.
    pub fn add_table(&mut self, table: &str) {
        self.driver_cuda = parse_table(table).driver_cuda;
    }

    /// Writes the answer into `facts`, `source` naming where it came from.
    pub fn fill(self, facts: &mut NvidiaFacts, source: &str) {
        facts.driver = Some(self.driver);
        facts.driver_cuda = self.driver_cuda;
        facts.gpus = self.gpus;
        facts.source = Some(source.to_string());
    }
}

/// What an answer of nvidia-smi to one of [`SMI_QUERIES`] says; `None` when it names no
/// driver (an error, an unknown field).
pub fn read_answer(output: &str) -> Option<SmiAnswer> {
    if output.contains("NVIDIA-SMI") {
        // Some wrappers (and old drivers) print the table whatever they are asked.
        let table = parse_table(output);
        return Some(SmiAnswer {
            driver: table.driver?,
            driver_cuda: table.driver_cuda,
            gpus: table.gpus,
            wants_table: false,
        });
    }
    let rows = parse_query(output);
    let driver = rows.first().map(|(_, driver)| driver.clone())?;
    Some(SmiAnswer {
        driver,
        driver_cuda: None,
        gpus: rows.into_iter().map(|(gpu, _)| gpu).collect(),
        wants_table: true,
    })
}

/// `nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version[,compute_cap]
/// --format=csv,noheader,nounits` → (GPU, driver version) per line.
pub fn parse_query(text: &str) -> Vec<(HostGpu, String)> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let (index, uuid, name, memory, driver, capability) = match fields.as_slice() {
                [index, uuid, name, memory, driver] => (index, uuid, name, memory, driver, None),
                [index, uuid, name, memory, driver, capability] => {
                    (index, uuid, name, memory, driver, Some(capability))
                }
                _ => return None,
            };
            Some((
                HostGpu {
                    index: index.parse().ok()?,
                    uuid: uuid.to_string(),
                    name: name.to_string(),
                    memory_mib: memory.parse().ok(),
                    compute_capability: capability.and_then(|text| ComputeCapability::parse(text)),
                },
                driver.to_string(),
            ))
        })
        .collect()
}

/// What tfimg asks nvidia-smi of each GPU's use now.
pub const USE_QUERY: [&str; 2] = [
    "--query-gpu=index,uuid,memory.used,memory.total,utilization.gpu,utilization.memory",
    FORMAT,
];

/// One GPU's use now, as [`USE_QUERY`] answers it. A value the driver cannot report
/// (`[N/A]`, `[Not Supported]`) is `None`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GpuUse {
    pub index: u32,
    pub uuid: String,
    pub memory_used_mib: Option<u64>,
    pub memory_total_mib: Option<u64>,
    /// Percent of the last sample period a kernel ran.
    pub utilization_gpu: Option<u32>,
    pub utilization_memory: Option<u32>,
}

/// nvidia-smi's answer to [`USE_QUERY`]: a GPU per line; lines of another shape are
/// skipped.
pub fn parse_use(text: &str) -> Vec<GpuUse> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let [index, uuid, used, total, gpu, memory] = fields.as_slice() else {
                return None;
            };
            Some(GpuUse {
                index: index.parse().ok()?,
                uuid: uuid.to_string(),
                memory_used_mib: used.parse().ok(),
                memory_total_mib: total.parse().ok(),
                utilization_gpu: gpu.parse().ok(),
                utilization_memory: memory.parse().ok(),
            })
        })
        .collect()
}

/// What tfimg asks nvidia-smi of the processes using GPUs.
pub const PROCESSES_QUERY: [&str; 2] = [
    "--query-compute-apps=pid,gpu_uuid,used_memory,process_name",
    FORMAT,
];

/// A process using a GPU, as [`PROCESSES_QUERY`] answers, and the container it runs in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GpuProcess {
    /// Its pid on the host (nvidia-smi's, outside any container).
    pub pid: u32,
    pub gpu_uuid: String,
    /// `None` where the driver cannot say (`[N/A]`).
    pub used_mib: Option<u64>,
    pub name: String,
    /// The id of the container it runs in, from its cgroup, when it runs in one.
    pub container: Option<String>,
}

/// nvidia-smi's answer to [`PROCESSES_QUERY`]; `container` is left for the caller.
pub fn parse_processes(text: &str) -> Vec<GpuProcess> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(4, ',').map(str::trim);
            let pid = fields.next()?.parse().ok()?;
            let gpu_uuid = fields.next()?.to_string();
            let used_mib = fields.next()?.parse().ok();
            let name = fields.next()?.to_string();
            Some(GpuProcess {
                pid,
                gpu_uuid,
                used_mib,
                name,
                container: None,
            })
        })
        .collect()
}

/// The container a process runs in, from its `/proc/PID/cgroup`: the 64-hex id Docker
/// names its cgroup by (cgroup v2 `.../docker-ID.scope`, v1 `.../docker/ID`, or under a
/// daemon's own cgroup parent `/PARENT/ID`).
pub fn container_of_cgroup(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        path.split('/').rev().find_map(|part| {
            let id = part
                .strip_prefix("docker-")
                .and_then(|rest| rest.strip_suffix(".scope"))
                .unwrap_or(part);
            (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_string())
        })
    })
}

/// The processes using GPUs now, each with its container (read through `run` and `read`
/// as [`facts`] reads).
pub fn processes(
    run: &dyn Fn(&str, &[&str]) -> Option<String>,
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<GpuProcess> {
    let Some(output) = run("nvidia-smi", &PROCESSES_QUERY) else {
        return Vec::new();
    };
    let mut found = parse_processes(&output);
    for process in &mut found {
        process.container = read(&format!("/proc/{}/cgroup", process.pid))
            .as_deref()
            .and_then(container_of_cgroup);
    }
    found
}

/// The parts of nvidia-smi's default table tfimg uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SmiTable {
    pub driver: Option<String>,
    pub driver_cuda: Option<String>,
    /// UUIDs are not in the table: `uuid` is empty.
    pub gpus: Vec<HostGpu>,
}

pub fn parse_table(text: &str) -> SmiTable {
    let value_after = |label: &str| {
        text.lines().find_map(|line| {
            let rest = &line[line.find(label)? + label.len()..];
            rest.split_whitespace().next().map(str::to_string)
        })
    };
    let mut table = SmiTable {
        driver: value_after("Driver Version:"),
        driver_cuda: value_after("CUDA Version:"),
        gpus: Vec::new(),
    };
    let lines: Vec<&str> = text
        .lines()
        .take_while(|line| !line.contains("Processes:"))
        .collect();
    for (number, line) in lines.iter().enumerate() {
        // `|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |  0 |`
        let Some(first_cell) = line
            .strip_prefix('|')
            .and_then(|rest| rest.split('|').next())
        else {
            continue;
        };
        let words: Vec<&str> = first_cell.split_whitespace().collect();
        let (Some(index), Some(last)) = (words.first(), words.last()) else {
            continue;
        };
        if words.len() < 3 || !matches!(*last, "On" | "Off") {
            continue;
        }
        let Ok(index) = index.parse::<u32>() else {
            continue;
        };
        let memory_mib = lines.get(number + 1).and_then(|next| {
            let usage = next.split('|').nth(2)?;
            let total = usage.split('/').nth(1)?.trim().strip_suffix("MiB")?;
            total.trim().parse().ok()
        });
        table.gpus.push(HostGpu {
            index,
            uuid: String::new(),
            name: words[1..words.len() - 1].join(" "),
            memory_mib,
            compute_capability: None,
        });
    }
    table
}

/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.57.02  Tue Jul 13 ...` → `470.57.02`.
pub fn parse_proc_version(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find(|line| line.starts_with("NVRM version:"))?;
    line.split_whitespace()
        .find(|word| word.contains('.') && word.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

#[cfg(test)]
mod tests;
