//! `--gpus` and `--gpu-mode`: what the user asked for, and how it becomes one Docker
//! DeviceRequest (driver `nvidia` or `cdi`) or the `nvidia` runtime with
//! NVIDIA_VISIBLE_DEVICES. Pure.

use crate::input::source::printable;
use crate::input::InputError;

/// The largest `--gpus` count. Indices have at most three digits, so no host offers more,
/// and `--gpu-mode runtime` spells a count out as that many indices: an unchecked
/// `--gpus 4294967295` asked for a 100 GB list.
pub const MAX_GPU_COUNT: u32 = 1000;

/// What `--gpus` selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuSelection {
    None,
    All,
    Count(u32),
    /// Indices (`0`, `1`) or UUIDs (`GPU-...`, `MIG-...`), as the user wrote them.
    Devices(Vec<String>),
}

/// How the selection reaches the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuMode {
    /// CDI where the daemon supports it, else the `nvidia` device driver.
    Auto,
    /// A DeviceRequest for Docker's `nvidia` driver (the NVIDIA container toolkit's hook).
    Devices,
    /// A DeviceRequest for CDI devices (`nvidia.com/gpu=0`), Docker API 1.44 and later.
    Cdi,
    /// The `nvidia` runtime plus NVIDIA_VISIBLE_DEVICES, for hosts that only register it.
    Runtime,
}

/// The DeviceRequest fields (mirrors Docker's API; the engine converts it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRequestPlan {
    pub driver: String,
    /// `-1` for all; absent when devices are listed (never both).
    pub count: Option<i64>,
    pub device_ids: Vec<String>,
    pub capabilities: Vec<Vec<String>>,
}

/// GPU part of a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuPlan {
    None,
    Request(DeviceRequestPlan),
    /// `runtime: nvidia` with these environment variables.
    Runtime {
        visible_devices: String,
    },
}

impl GpuSelection {
    pub fn parse(text: &str) -> Result<GpuSelection, InputError> {
        let text = text.trim();
        // Docker's `device=1` always names devices; a bare `1` is a count.
        let (text, devices_only) = match text.strip_prefix("device=") {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let bad = |detail: &str| {
            InputError::new(
                printable(&format!("`--gpus {text}` is not valid: {detail}")),
                "use `--gpus all`, a count (`--gpus 2`), indices (`--gpus 0,1`), UUIDs (`--gpus GPU-3f2a...`), or `--gpus none`",
            )
        };
        match text {
            "" => return Err(bad("it is empty")),
            "all" => return Ok(GpuSelection::All),
            "none" => return Ok(GpuSelection::None),
            _ => {}
        }
        if !devices_only
            && !text.contains(',')
            && text.bytes().all(|b| b.is_ascii_digit())
            && !text.starts_with('0')
        {
            let count: u32 = text
                .parse()
                .ok()
                .filter(|count| *count <= MAX_GPU_COUNT)
                .ok_or_else(|| bad(&format!("the count is above {MAX_GPU_COUNT}")))?;
            return Ok(GpuSelection::Count(count));
        }
        let mut devices = Vec::new();
        for item in text.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(bad("an item is empty (`,,`, or a `,` at an end)"));
            }
            let is_index =
                !item.is_empty() && item.bytes().all(|b| b.is_ascii_digit()) && item.len() <= 3;
            let is_uuid = (item.starts_with("GPU-") || item.starts_with("MIG-"))
                && item.len() > 4
                && item[4..]
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == '-' || c == '/');
            if !(is_index || is_uuid) {
                return Err(bad(&format!(
                    "`{item}` is neither a GPU index nor a GPU-/MIG- UUID"
                )));
            }
            if devices.iter().any(|seen| seen == item) {
                return Err(bad(&format!("`{item}` is listed twice")));
            }
            devices.push(item.to_string());
        }
        Ok(GpuSelection::Devices(devices))
    }

    pub fn is_none(&self) -> bool {
        matches!(self, GpuSelection::None)
    }

    /// The label value and the text users see (`all`, `2`, `0,1`, `none`).
    pub fn describe(&self) -> String {
        match self {
            GpuSelection::None => "none".to_string(),
            GpuSelection::All => "all".to_string(),
            GpuSelection::Count(count) => count.to_string(),
            GpuSelection::Devices(devices) => devices.join(","),
        }
    }

    /// The plan for a resolved mode (`Auto` already decided by the caller).
    pub fn plan(&self, mode: GpuMode) -> Result<GpuPlan, InputError> {
        let gpu_capabilities = vec![vec!["gpu".to_string()]];
        Ok(match (self, mode) {
            (GpuSelection::None, _) => GpuPlan::None,
            (_, GpuMode::Runtime) => GpuPlan::Runtime {
                visible_devices: match self {
                    GpuSelection::All => "all".to_string(),
                    GpuSelection::Count(count) => (0..*count)
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    GpuSelection::Devices(devices) => devices.join(","),
                    GpuSelection::None => unreachable!("handled above"),
                },
            },
            (GpuSelection::Count(_), GpuMode::Cdi) => {
                return Err(InputError::new(
                    "CDI selects GPUs by name, not by count",
                    "use `--gpus all` or indices (`--gpus 0,1`) with `--gpu-mode cdi`",
                ))
            }
            (_, GpuMode::Cdi) => GpuPlan::Request(DeviceRequestPlan {
                driver: "cdi".to_string(),
                count: None,
                device_ids: match self {
                    GpuSelection::All => vec!["nvidia.com/gpu=all".to_string()],
                    GpuSelection::Devices(devices) => devices
                        .iter()
                        .map(|device| format!("nvidia.com/gpu={device}"))
                        .collect(),
                    _ => unreachable!("handled above"),
                },
                capabilities: Vec::new(),
            }),
            (GpuSelection::All, _) => GpuPlan::Request(DeviceRequestPlan {
                driver: "nvidia".to_string(),
                count: Some(-1),
                device_ids: Vec::new(),
                capabilities: gpu_capabilities,
            }),
            (GpuSelection::Count(count), _) => GpuPlan::Request(DeviceRequestPlan {
                driver: "nvidia".to_string(),
                count: Some(i64::from(*count)),
                device_ids: Vec::new(),
                capabilities: gpu_capabilities,
            }),
            (GpuSelection::Devices(devices), _) => GpuPlan::Request(DeviceRequestPlan {
                driver: "nvidia".to_string(),
                count: None,
                device_ids: devices.clone(),
                capabilities: gpu_capabilities,
            }),
        })
    }
}

/// What the host offers GPU containers: the facts the default `--gpus` is decided on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuHost {
    /// The NVIDIA driver's version, when one answered (nvidia-smi or /proc).
    pub driver: Option<String>,
    /// GPUs nvidia-smi lists.
    pub gpus: usize,
    /// Whether Docker can hand GPUs to containers: the NVIDIA container toolkit's hook,
    /// the `nvidia` runtime registered with the daemon, or CDI spec folders.
    pub toolkit: bool,
    /// Why the driver cannot run the image's CUDA (too old), when it cannot.
    pub driver_problem: Option<String>,
}

/// The GPUs a run gets, and what to tell the user about it (one line for stderr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuChoice {
    pub selection: GpuSelection,
    pub note: Option<String>,
}

/// The GPUs of a run: what `--gpus` says when given (`none` opts out, silently); for a
/// GPU image without `--gpus`, all GPUs when the host has them and Docker can hand them
/// over (as `docker run --gpus all` in every guide), else the CPU with a note saying why
/// and how to get them; never any for other images. `host` is read only for that
/// default (the caller gathers it only then: see [`needs_host_facts`]).
pub fn choose(
    requested: Option<&GpuSelection>,
    gpu_image: bool,
    image: &str,
    host: Option<&GpuHost>,
) -> GpuChoice {
    let chosen = |selection: GpuSelection, note: Option<String>| GpuChoice { selection, note };
    if let Some(requested) = requested {
        return chosen(requested.clone(), None);
    }
    let Some(host) = host.filter(|_| gpu_image) else {
        return chosen(GpuSelection::None, None);
    };
    let on_the_cpu = |why: String, fix: &str| {
        chosen(
            GpuSelection::None,
            Some(format!(
                "note: `{image}` runs on the CPU: {why}; {fix} (`tfimg doctor` checks the host; `--gpus none` skips this note)"
            )),
        )
    };
    match &host.driver {
        None => on_the_cpu(
            "no NVIDIA driver answers on this host (no working `nvidia-smi`)".to_string(),
            "where a GPU, its driver and the NVIDIA Container Toolkit are installed, GPU images get all GPUs",
        ),
        Some(driver) if host.gpus == 0 => on_the_cpu(
            format!("the NVIDIA driver {driver} lists no GPU (`nvidia-smi`)"),
            "check `nvidia-smi`, or pick GPUs with `--gpus`",
        ),
        Some(_) if !host.toolkit => on_the_cpu(
            format!(
                "this host has {} but Docker cannot hand GPUs to containers (the NVIDIA Container Toolkit is missing)",
                gpu_count(host.gpus)
            ),
            "install it and restart Docker to get them",
        ),
        Some(_) => match &host.driver_problem {
            Some(problem) => on_the_cpu(
                problem.clone(),
                "upgrade the driver to use the GPUs",
            ),
            None => chosen(
                GpuSelection::All,
                Some(format!(
                    "note: `{image}` gets all {} of this host (the default for GPU images; `--gpus none` runs it on the CPU, `--gpus 0` picks one)",
                    gpu_count(host.gpus)
                )),
            ),
        },
    }
}

/// The note when the daemon refused the GPUs [`choose`] picked by default (its `nvidia`
/// device driver is missing: the toolkit was installed but Docker not restarted, or its
/// hook is on tfimg's PATH only); the run goes on on the CPU.
pub fn daemon_refused_note(image: &str, daemon_message: &str) -> String {
    format!(
        "note: `{image}` runs on the CPU: Docker could not hand it the GPUs ({}); install the NVIDIA Container Toolkit and restart Docker to get them (`tfimg doctor` checks the host; `--gpus none` skips this note)",
        printable(daemon_message.trim())
    )
}

/// Whether [`choose`] reads the host: only for a GPU image started without `--gpus`
/// (asking nvidia-smi and the daemon costs time nothing else needs).
pub fn needs_host_facts(requested: Option<&GpuSelection>, gpu_image: bool) -> bool {
    requested.is_none() && gpu_image
}

fn gpu_count(gpus: usize) -> String {
    if gpus == 1 {
        "1 GPU".to_string()
    } else {
        format!("{gpus} GPUs")
    }
}

/// A GPU the host reports (nvidia-smi).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostGpu {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub memory_mib: Option<u64>,
}

/// Refuses indices, UUIDs or counts the host does not have (when its GPUs are known).
pub fn check_against_host(selection: &GpuSelection, host: &[HostGpu]) -> Result<(), InputError> {
    let known = || {
        host.iter()
            .map(|gpu| format!("{} ({}, {})", gpu.index, gpu.uuid, gpu.name))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match selection {
        GpuSelection::Count(count) if *count as usize > host.len() => Err(InputError::new(
            format!(
                "`--gpus {count}` asks for more GPUs than this host has ({})",
                host.len()
            ),
            format!("this host has: {}", known()),
        )),
        GpuSelection::Devices(devices) => {
            for device in devices {
                let found = host.iter().any(|gpu| {
                    gpu.index.to_string() == *device
                        || gpu.uuid == *device
                        || device.starts_with("MIG-")
                });
                if !found {
                    return Err(InputError::new(
                        format!("GPU `{device}` does not exist on this host"),
                        if host.is_empty() {
                            "nvidia-smi lists no GPU here; run `tfimg doctor`".to_string()
                        } else {
                            format!("this host has: {}", known())
                        },
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
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
        let request =
            |text: &str, mode| match GpuSelection::parse(text).unwrap().plan(mode).unwrap() {
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

    #[test]
    fn gpu_images_default_to_every_gpu_only_where_docker_can_hand_them_over() {
        let working = GpuHost {
            driver: Some("535.104.05".into()),
            gpus: 2,
            toolkit: true,
            driver_problem: None,
        };
        let choice = choose(None, true, "gpu-jupyter", Some(&working));
        assert_eq!(choice.selection, GpuSelection::All);
        assert_eq!(
            choice.note.as_deref(),
            Some("note: `gpu-jupyter` gets all 2 GPUs of this host (the default for GPU images; `--gpus none` runs it on the CPU, `--gpus 0` picks one)")
        );

        let cpu = |host: GpuHost| {
            let choice = choose(None, true, "gpu-jupyter", Some(&host));
            assert_eq!(choice.selection, GpuSelection::None, "{host:?}");
            choice.note.expect("a note says why")
        };
        assert_eq!(
            cpu(GpuHost::default()),
            "note: `gpu-jupyter` runs on the CPU: no NVIDIA driver answers on this host (no working `nvidia-smi`); where a GPU, its driver and the NVIDIA Container Toolkit are installed, GPU images get all GPUs (`tfimg doctor` checks the host; `--gpus none` skips this note)"
        );
        // A driver but no toolkit: `--gpus all` would fail with "could not select device
        // driver"; the default runs on the CPU and says what is missing.
        assert_eq!(
            cpu(GpuHost {
                toolkit: false,
                gpus: 1,
                ..working.clone()
            }),
            "note: `gpu-jupyter` runs on the CPU: this host has 1 GPU but Docker cannot hand GPUs to containers (the NVIDIA Container Toolkit is missing); install it and restart Docker to get them (`tfimg doctor` checks the host; `--gpus none` skips this note)"
        );
        assert!(cpu(GpuHost {
            gpus: 0,
            ..working.clone()
        })
        .contains("the NVIDIA driver 535.104.05 lists no GPU"));
        let old = cpu(GpuHost {
            driver_problem: Some("driver 418.87.01 is too old for CUDA 11.8".into()),
            ..working.clone()
        });
        assert!(old.contains(
            "runs on the CPU: driver 418.87.01 is too old for CUDA 11.8; upgrade the driver"
        ));

        // `--gpus` always wins, `none` silently; other images never get GPUs by default.
        for requested in [GpuSelection::None, GpuSelection::Count(1)] {
            let choice = choose(Some(&requested), true, "gpu-jupyter", Some(&working));
            assert_eq!((choice.selection, choice.note), (requested, None));
        }
        let plain = choose(None, false, "cpu-jupyter", Some(&working));
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
        }];
        assert!(check_against_host(&GpuSelection::parse("0").unwrap(), &host).is_ok());
        assert!(check_against_host(&GpuSelection::parse("GPU-aaaa").unwrap(), &host).is_ok());
        let error = check_against_host(&GpuSelection::parse("0,1").unwrap(), &host).unwrap_err();
        assert_eq!(error.message, "GPU `1` does not exist on this host");
        assert!(check_against_host(&GpuSelection::Count(2), &host).is_err());
    }
}
