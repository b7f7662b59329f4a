//! `--gpus` and `--gpu-mode`: what the user asked for, and how it becomes one Docker
//! DeviceRequest (driver `nvidia` or `cdi`) or the `nvidia` runtime with
//! NVIDIA_VISIBLE_DEVICES. The default for runs without `--gpus` and the check against
//! the host's GPUs are in `host`. Pure.

use crate::input::source::printable;
use crate::input::InputError;

mod host;

pub use host::{
    check_against_host, choose, daemon_refused_note, host_name, needs_host_facts, GpuHost, HostGpu,
};

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
}
