//! The GPUs of one host shared among tfimg's containers: which ones each container holds
//! (read back from the `io.tfimg.gpus` label the launch wrote, so the view survives
//! restarts and needs no daemon of tfimg's), and the GPUs a new launch takes given them.
//! A count takes the least-loaded free GPUs, by index, never Docker's count (which hands
//! out GPU 0 first every time); GPUs another container holds are refused unless the launch
//! shares them. Pure: the caller lists the containers and asks nvidia-smi.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{host_name, GpuSelection, HostGpu};
use crate::input::InputError;
use crate::labels;

/// A tfimg container that holds GPUs of the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub container: String,
    /// Who it is for, as messages name it (`team lab, member ana`), when its labels say.
    pub who: Option<String>,
    /// The host indices it holds.
    pub gpus: BTreeSet<u32>,
    /// It was started with `--share-gpus`.
    pub sharing: bool,
}

impl Holder {
    /// `` `nb-ana` (team lab, member ana) ``.
    fn named(&self) -> String {
        match &self.who {
            Some(who) => format!("`{}` ({who})", self.container),
            None => format!("`{}`", self.container),
        }
    }
}

/// The states in which a container holds its GPUs: it runs (a paused process keeps its
/// GPU memory). One created and not started (`--no-start`) holds none yet, as a stopped
/// one; a team's members prepared together are counted by `up` itself.
const HOLDING_STATES: [&str; 3] = ["running", "restarting", "paused"];

/// The GPUs a container holds, from its state and labels; `None` when it holds none. What
/// its `io.tfimg.gpus` label says is read against the host's GPUs: `all`, indices, UUIDs
/// (MIG slices and UUIDs the host does not list are not counted), and a count as Docker
/// hands one out (the first N), as launches before shared GPUs wrote it.
pub fn holder(
    name: &str,
    state: &str,
    container_labels: &HashMap<String, String>,
    host: &[HostGpu],
) -> Option<Holder> {
    if !HOLDING_STATES.contains(&state) {
        return None;
    }
    let selection = GpuSelection::parse(container_labels.get(labels::GPUS)?).ok()?;
    let gpus: BTreeSet<u32> = match selection {
        GpuSelection::None => BTreeSet::new(),
        GpuSelection::All => host.iter().map(|gpu| gpu.index).collect(),
        GpuSelection::Count(count) => {
            let mut indices: Vec<u32> = host.iter().map(|gpu| gpu.index).collect();
            indices.sort_unstable();
            indices.into_iter().take(count as usize).collect()
        }
        GpuSelection::Devices(devices) => devices
            .iter()
            .filter_map(|device| index_of(device, host))
            .collect(),
    };
    if gpus.is_empty() {
        return None;
    }
    let label = |key: &str| container_labels.get(key).map(String::as_str);
    let who = match (
        label(labels::TEAM),
        label(labels::MEMBER),
        label(labels::SWEEP),
    ) {
        (Some(team), Some(member), _) => Some(format!("team {team}, member {member}")),
        (_, _, Some(sweep)) => Some(match label(labels::TRIAL) {
            Some(trial) => format!("sweep {sweep}, trial {trial}"),
            None => format!("sweep {sweep}"),
        }),
        _ => label(labels::MODEL).map(|model| format!("serving {model}")),
    };
    Some(Holder {
        container: name.to_string(),
        who,
        gpus,
        sharing: label(labels::GPUS_SHARED) == Some("true"),
    })
}

/// The host index a device (an index or a `GPU-` UUID) names, when the host lists it.
pub fn index_of(device: &str, host: &[HostGpu]) -> Option<u32> {
    host.iter()
        .find(|gpu| gpu.index.to_string() == device || gpu.uuid == device)
        .map(|gpu| gpu.index)
}

/// What a launch may take: the host's GPUs, what each has in use (MiB of memory, by
/// index; empty when unknown), the containers holding some, and whether it shares.
#[derive(Debug, Clone)]
pub struct Sharing<'a> {
    pub host: &'a [HostGpu],
    pub used_mib: BTreeMap<u32, u64>,
    pub holders: &'a [Holder],
    pub share: bool,
    /// As in [`super::GpuHost`]: the engine's URL when the host is another one.
    pub engine_host: Option<&'a str>,
}

impl Sharing<'_> {
    /// The host's GPUs no container holds (`held` false) or some container holds, in
    /// index order.
    fn indices(&self, held: bool) -> Vec<u32> {
        let mut indices: Vec<u32> = self
            .host
            .iter()
            .map(|gpu| gpu.index)
            .filter(|index| self.holders.iter().any(|h| h.gpus.contains(index)) == held)
            .collect();
        indices.sort_unstable();
        indices
    }

    /// The host's GPUs no container holds, in index order.
    pub fn free(&self) -> Vec<u32> {
        self.indices(false)
    }

    /// The held GPUs among the host's, in index order.
    pub fn held(&self) -> Vec<u32> {
        self.indices(true)
    }

    /// The held GPUs among `devices` (indices or UUIDs; those the host does not list are
    /// left to [`super::check_against_host`]).
    pub fn taken(&self, devices: &[String]) -> Vec<u32> {
        let held = self.held();
        devices
            .iter()
            .filter_map(|device| index_of(device, self.host))
            .filter(|index| held.contains(index))
            .collect()
    }

    /// The containers holding `index`.
    fn holders_of(&self, index: u32) -> Vec<&Holder> {
        self.holders
            .iter()
            .filter(|holder| holder.gpus.contains(&index))
            .collect()
    }

    /// `GPU 0 is held by `a` (...); GPU 2 by `b``: who holds the GPUs of `indices`.
    pub fn held_text(&self, indices: &[u32]) -> String {
        indices
            .iter()
            .map(|index| {
                let names: Vec<String> = self
                    .holders_of(*index)
                    .iter()
                    .map(|holder| holder.named())
                    .collect();
                format!("GPU {index} by {}", names.join(" and "))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `count` of `candidates`, the least-loaded first (memory in use, then index).
    fn least_loaded(&self, candidates: &[u32], count: usize) -> Vec<u32> {
        let mut ordered = candidates.to_vec();
        ordered.sort_by_key(|index| {
            (
                self.holders_of(*index).len(),
                self.used_mib.get(index).copied().unwrap_or(0),
                *index,
            )
        });
        let mut chosen: Vec<u32> = ordered.into_iter().take(count).collect();
        chosen.sort_unstable();
        chosen
    }

    /// The GPUs an explicit `--gpus` takes: a count becomes the least-loaded free
    /// indices; indices, UUIDs and `all` are kept as given. Refused (before anything is
    /// created) when they name GPUs other containers hold, or a count finds too few free,
    /// unless the launch shares.
    pub fn allocate(&self, requested: &GpuSelection) -> Result<GpuSelection, InputError> {
        let free = self.free();
        let name = host_name(self.engine_host);
        let how_to_share = "or share them with `--share-gpus` (a team member: `shared: true`; GPU images grow their memory as needed, so several containers fit on one GPU); `tfimg ps --gpus` shows who holds what";
        match requested {
            GpuSelection::None => Ok(GpuSelection::None),
            GpuSelection::Count(count) => {
                let count = *count as usize;
                let pool: Vec<u32> = if count <= free.len() {
                    free.clone()
                } else if self.share {
                    self.host.iter().map(|gpu| gpu.index).collect()
                } else {
                    let held = self.held();
                    return Err(InputError::new(
                        format!(
                            "`--gpus {count}`: {} of the {} GPUs of {name} {} free; {}",
                            free.len(),
                            self.host.len(),
                            is_are(free.len()),
                            self.held_text(&held),
                        ),
                        format!(
                            "ask for fewer (`--gpus {}`), {how_to_share}",
                            free.len().max(1)
                        ),
                    ));
                };
                Ok(devices(self.least_loaded(&pool, count)))
            }
            GpuSelection::Devices(listed) => {
                if !self.share {
                    let taken = self.taken(listed);
                    if !taken.is_empty() {
                        return Err(InputError::new(
                            format!(
                                "`--gpus {}`: {} of {name} {} held: {}",
                                requested.describe(),
                                plural_gpus(&taken),
                                is_are(taken.len()),
                                self.held_text(&taken)
                            ),
                            format!("pick a free one ({}), {how_to_share}", free_text(&free)),
                        ));
                    }
                }
                Ok(requested.clone())
            }
            GpuSelection::All => {
                let held = self.held();
                if held.is_empty() || self.share {
                    return Ok(GpuSelection::All);
                }
                Err(InputError::new(
                    format!(
                        "`--gpus all`: {} of {name} {} held: {}",
                        plural_gpus(&held),
                        is_are(held.len()),
                        self.held_text(&held)
                    ),
                    format!(
                        "take the free ones (`--gpus {}`), {how_to_share}",
                        if free.is_empty() {
                            "none".to_string()
                        } else {
                            free.len().to_string()
                        }
                    ),
                ))
            }
        }
    }
}

fn devices(indices: Vec<u32>) -> GpuSelection {
    GpuSelection::Devices(indices.iter().map(u32::to_string).collect())
}

/// The verb for `count` GPUs: `is` for one, `are` for none or several.
pub fn is_are(count: usize) -> &'static str {
    if count == 1 {
        "is"
    } else {
        "are"
    }
}

/// `GPU 0` or `GPUs 0, 2`.
pub fn plural_gpus(indices: &[u32]) -> String {
    let list = indices
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if indices.len() == 1 {
        format!("GPU {list}")
    } else {
        format!("GPUs {list}")
    }
}

/// `free: 1, 3` or `none is free`.
pub fn free_text(free: &[u32]) -> String {
    if free.is_empty() {
        "none is free".to_string()
    } else {
        format!(
            "free: {}",
            free.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

#[cfg(test)]
mod tests;
