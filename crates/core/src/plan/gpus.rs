//! `--gpus` and `--gpu-mode`: what the user asked for, and how it becomes one Docker
//! DeviceRequest (driver `nvidia` or `cdi`) or the `nvidia` runtime with
//! NVIDIA_VISIBLE_DEVICES. The default for runs without `--gpus` and the check against
//! the host's GPUs are in `host`. Pure.

use crate::input::source::printable;
use crate::input::InputError;

mod host;
pub mod share;

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

    /// The label value and the text users see (`all`, `2`, `0,1`, `none`), which
    /// [`GpuSelection::parse`] reads back as it is: GPU 1 alone is `device=1`, as Docker
    /// writes it (`1` is a count).
    pub fn describe(&self) -> String {
        match self {
            GpuSelection::None => "none".to_string(),
            GpuSelection::All => "all".to_string(),
            GpuSelection::Count(count) => count.to_string(),
            GpuSelection::Devices(devices) => {
                let text = devices.join(",");
                match GpuSelection::parse(&text) {
                    Ok(GpuSelection::Devices(_)) => text,
                    _ => format!("device={text}"),
                }
            }
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
mod tests;
