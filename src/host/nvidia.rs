//! The NVIDIA side of the host: driver version and GPUs (with their compute capability
//! where the driver reports it) from `nvidia-smi` (its CSV query or, when only the human
//! table is available, that table), else the kernel module's
//! `/proc/driver/nvidia/version`; and whether the container toolkit's pieces are on PATH.
//! Parsing is pure and tested against outputs captured on real machines
//! (tests/fixtures/nvidia/).

use crate::plan::gpus::HostGpu;
use crate::spec::compat::ComputeCapability;

/// What the host says about its NVIDIA driver.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NvidiaFacts {
    /// `455.32.00`, when a driver answered.
    pub driver: Option<String>,
    /// The CUDA version the driver supports (the table's `CUDA Version`).
    pub driver_cuda: Option<String>,
    pub gpus: Vec<HostGpu>,
    /// Where the facts came from: `nvidia-smi`, `/proc/driver/nvidia/version`, or nothing.
    pub source: Option<String>,
    /// Toolkit programs found on PATH (`nvidia-container-runtime-hook`, `nvidia-ctk`).
    pub toolkit_programs: Vec<String>,
    /// `Some` when these are the facts of another host, the engine's, learned through a
    /// container there (its PATH says nothing here); `None`: this machine's.
    pub probe: Option<EngineProbe>,
}

/// How the NVIDIA facts of an engine on another host were learned: a short `--gpus all`
/// container running nvidia-smi there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineProbe {
    /// The engine's URL (`ssh://me@gpu-box`).
    pub engine: String,
    /// The image the container ran, when the engine had one to run.
    pub image: Option<String>,
    pub outcome: ProbeOutcome,
}

/// What became of the `--gpus all` container.
#[derive(Debug, Clone, PartialEq, Eq)]
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
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/nvidia")
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
                Some(_) => real("query-gpu.csv"),
            })
        };
        let found = facts(&answer, &|_| None, &|_| false);
        assert_eq!(found.driver.as_deref(), Some("580.159.04"));
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
        let run_table =
            |program: &str, _: &[&str]| (program == "nvidia-smi").then(|| table.clone());
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
            ]
        );
    }
}
