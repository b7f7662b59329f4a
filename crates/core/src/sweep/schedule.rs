//! Where and when trials run. `slots` turns the GPU pool into slots, each holding the GPU
//! ids one trial gets by DeviceIDs (never a count), so no two trials share a GPU unless
//! `trials_per_gpu` asks; CPU-only sweeps get `max_parallel` slots without GPUs.
//! `Scheduler` is the state machine the runner drives: queued trials take free slots
//! first in, first out; a finished trial frees its slot; a failure is retried (at the back
//! of the queue) while retries remain; `max_failed` failures or a stop end the starting.
//! Pure: the runner starts containers, waits for them and tells the scheduler.

use std::collections::VecDeque;

use crate::input::source::SpecError;
use crate::plan::gpus::{host_name, HostGpu};

use super::journal::{TrialHistory, TrialStatus};
use super::{GpuPool, Pool};

/// One place a trial runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// From 0.
    pub index: usize,
    /// The GPU ids the trial gets (DeviceIDs); empty on the CPU.
    pub gpus: Vec<String>,
}

impl Slot {
    /// `0`, `0,1`, or `none`.
    pub fn describe(&self) -> String {
        if self.gpus.is_empty() {
            "none".to_string()
        } else {
            self.gpus.join(",")
        }
    }
}

/// The slots of `pool`. `host_gpus` are the GPU indices of the engine's host (from
/// nvidia-smi), needed for `gpus: all` only; `engine_host` names that host in messages
/// (`plan::gpus::host_name`). Groups of `gpus_per_trial` GPUs are taken in pool order (GPUs
/// left over stay idle); with `trials_per_gpu` > 1 each group is handed out that many
/// times, round by round, so the first trials spread over all GPUs; `max_parallel` caps
/// the count.
pub fn slots(
    pool: &Pool,
    host_gpus: &[String],
    engine_host: Option<&str>,
) -> Result<Vec<Slot>, SpecError> {
    let name = host_name(engine_host);
    let gpus: Vec<String> = match &pool.gpus {
        GpuPool::Cpu => {
            let count = pool.max_parallel.unwrap_or(1) as usize;
            return Ok((0..count)
                .map(|index| Slot {
                    index,
                    gpus: Vec::new(),
                })
                .collect());
        }
        GpuPool::Devices(devices) => devices.clone(),
        // The GPUs chosen for it on the host; where there is none (a cluster, the checks
        // before a host is asked), as many placeholders.
        GpuPool::Count(count) if host_gpus.is_empty() => {
            (0..*count).map(|index| index.to_string()).collect()
        }
        GpuPool::Count(_) => host_gpus.to_vec(),
        GpuPool::All => {
            if host_gpus.is_empty() {
                return Err(SpecError::new(
                    Some(pool.location.clone()),
                    format!("`gpus: all`, but {name} has no GPU (nvidia-smi lists none)"),
                    "leave `gpus` out to run the trials on the CPU (`max_parallel` of them at once), or run the sweep on a GPU host",
                ));
            }
            host_gpus.to_vec()
        }
    };
    let per_trial = pool.gpus_per_trial as usize;
    if per_trial > gpus.len() {
        return Err(SpecError::new(
            Some(pool.location.clone()),
            format!(
                "`gpus_per_trial: {per_trial}` is more than the {} GPU(s) of {name}",
                gpus.len()
            ),
            "give each trial fewer GPUs, or run the sweep on a host with more",
        ));
    }
    let groups: Vec<&[String]> = gpus.chunks_exact(per_trial).collect();
    let mut slots = Vec::new();
    for _round in 0..pool.trials_per_gpu {
        for group in &groups {
            slots.push(Slot {
                index: slots.len(),
                gpus: group.to_vec(),
            });
        }
    }
    if let Some(limit) = pool.max_parallel {
        slots.truncate(limit as usize);
    }
    Ok(slots)
}

/// What the engine's host is known to have, to check a pool against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownGpus<'a> {
    /// The GPUs nvidia-smi listed.
    Listed(&'a [HostGpu]),
    /// The host has no NVIDIA driver, so no GPU a container can get; `why` says how that
    /// is known (`no working nvidia-smi, no /proc/driver/nvidia/version`).
    NoDriver { why: &'a str },
    /// Nothing could be learned (a driver that lists no GPU, a probe that did not run):
    /// nothing is refused.
    Unknown,
}

/// Refuses a pool the engine's host cannot give, before anything is built or created
/// (the dry run checks the same): GPUs of `gpus:` it does not have, all of them named,
/// or any GPU at all on a host without an NVIDIA driver. Placed on `gpus:`, the hint
/// names the sweep file's key (never `run`'s `--gpus`).
pub fn check_pool_against_host(
    pool: &Pool,
    known: KnownGpus<'_>,
    engine_host: Option<&str>,
) -> Result<(), SpecError> {
    let name = host_name(engine_host);
    let asked = match &pool.gpus {
        GpuPool::Cpu => return Ok(()),
        GpuPool::All => "`gpus: all`".to_string(),
        GpuPool::Devices(devices) => format!("`gpus: [{}]`", devices.join(", ")),
        GpuPool::Count(count) => format!("`gpus: {count}`"),
    };
    match known {
        KnownGpus::Unknown => Ok(()),
        KnownGpus::NoDriver { why } => Err(SpecError::new(
            Some(pool.location.clone()),
            format!("{asked} asks for GPUs, but {name} has no NVIDIA GPU or driver ({why})"),
            "leave `gpus:` out of the sweep file to run the trials on the CPU (`max_parallel` of them at once), or run the sweep where the GPUs are (`--host`, `DOCKER_HOST`); `tfimg doctor` shows what this host has",
        )),
        KnownGpus::Listed(host) => {
            if let GpuPool::Count(count) = pool.gpus {
                if count as usize > host.len() {
                    return Err(SpecError::new(
                        Some(pool.location.clone()),
                        format!("{asked}: {name} has {} GPU(s)", host.len()),
                        format!("ask for {} or fewer, or write `gpus: all`", host.len()),
                    ));
                }
                return Ok(());
            }
            let GpuPool::Devices(devices) = &pool.gpus else {
                return Ok(());
            };
            let missing: Vec<&str> = devices
                .iter()
                .filter(|device| {
                    !host.iter().any(|gpu| {
                        gpu.index.to_string() == **device
                            || gpu.uuid == **device
                            || device.starts_with("MIG-")
                    })
                })
                .map(String::as_str)
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            let known: Vec<String> = host
                .iter()
                .map(|gpu| format!("{} ({})", gpu.index, gpu.name))
                .collect();
            let (noun, ids) = match missing.as_slice() {
                [one] => ("GPU", format!("`{one}`")),
                more => ("GPUs", format!("`{}`", more.join("`, `"))),
            };
            Err(SpecError::new(
                Some(pool.location.clone()),
                format!("{asked}: {noun} {ids} not on {name}"),
                format!(
                    "{name} has: {}; list only those in `gpus:` in the sweep file (or `gpus: all`)",
                    known.join("; ")
                ),
            ))
        }
    }
}

/// Where a trial stands in the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    Queued,
    Running {
        slot: usize,
        attempt: u32,
    },
    Done {
        attempt: u32,
    },
    /// Failed with no retry left.
    Failed {
        attempt: u32,
    },
    /// Stopped by tfimg (Ctrl-C, `sweep stop`, `max_failed`).
    Stopped {
        attempt: u32,
    },
    /// Stopped by the `early_stop` rule: over, never run again.
    StoppedEarly {
        attempt: u32,
    },
}

/// How an attempt ended, as the runner saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i64),
    /// The container vanished: counts as a failure.
    Unknown,
    /// tfimg stopped it: uses no retry.
    Stopped,
    /// The `early_stop` rule stopped it: the trial is over.
    StoppedEarly,
}

/// What the scheduler made of an ended attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Queued again, at the back: the trial's `retry`th retry (from 1; attempts stopped
    /// by tfimg are not retries, so this is not the attempt's number).
    Retry {
        retry: u32,
    },
    Failed,
    Stopped,
    StoppedEarly,
}

/// A trial to start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub trial: usize,
    pub slot: usize,
    pub attempt: u32,
}

/// Why nothing more starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    Stopped,
    MaxFailed,
}

/// What `restore` made of a trial's journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restored {
    Queued,
    Done,
    Failed,
    /// Stopped by the `early_stop` rule (its container, if the last run was killed
    /// before stopping it, is no one's: the runner removes it).
    StoppedEarly,
    /// Running in `slot`: reattach to its container.
    Reattach {
        slot: usize,
    },
    /// Running on GPUs no free slot has (the pool changed): stop its container, tell
    /// `finished(trial, Exit::Stopped)`; it stays queued.
    NoSlot,
}

/// The FIFO scheduler of one run of a sweep. Trials are indices (from 0, trial order).
#[derive(Debug, Clone)]
pub struct Scheduler {
    slots: Vec<Slot>,
    /// The trial in each slot.
    occupant: Vec<Option<usize>>,
    queue: VecDeque<usize>,
    progress: Vec<Progress>,
    /// Attempts started so far, per trial (the next takes the number after).
    attempts: Vec<u32>,
    failures: Vec<u32>,
    retries: u32,
    max_failed: Option<u32>,
    /// Trials failed for good in this run (what `max_failed` counts).
    failed: u32,
    halt: Option<Halt>,
}

impl Scheduler {
    /// Every trial queued in order, every slot free.
    pub fn new(slots: &[Slot], trials: usize, retries: u32, max_failed: Option<u32>) -> Scheduler {
        Scheduler {
            slots: slots.to_vec(),
            occupant: vec![None; slots.len()],
            queue: (0..trials).collect(),
            progress: vec![Progress::Queued; trials],
            attempts: vec![0; trials],
            failures: vec![0; trials],
            retries,
            max_failed,
            failed: 0,
            halt: None,
        }
    }

    /// Resume: what the journal says `trial` did, applied before the first `next_start`.
    /// Done trials stay done; failures count against retries (a trial out of retries
    /// stays failed, and does not count toward this run's `max_failed`); a running one
    /// takes the free slot with its GPUs.
    pub fn restore(&mut self, trial: usize, history: &TrialHistory) -> Restored {
        self.attempts[trial] = history.next_attempt() - 1;
        self.failures[trial] = history.failures();
        let last = history.last().map_or(0, |attempt| attempt.number);
        match history.status() {
            TrialStatus::Done { attempt } => {
                self.dequeue(trial);
                self.progress[trial] = Progress::Done { attempt };
                Restored::Done
            }
            TrialStatus::StoppedEarly => {
                self.dequeue(trial);
                self.progress[trial] = Progress::StoppedEarly { attempt: last };
                Restored::StoppedEarly
            }
            TrialStatus::Failed if self.failures[trial] > self.retries => {
                self.dequeue(trial);
                self.progress[trial] = Progress::Failed { attempt: last };
                Restored::Failed
            }
            TrialStatus::Running => {
                let gpus = history
                    .last()
                    .map(|attempt| attempt.gpus.clone())
                    .unwrap_or_default();
                let free = (0..self.slots.len())
                    .find(|slot| self.occupant[*slot].is_none() && self.slots[*slot].gpus == gpus);
                let Some(slot) = free else {
                    return Restored::NoSlot;
                };
                self.dequeue(trial);
                self.occupant[slot] = Some(trial);
                self.progress[trial] = Progress::Running {
                    slot,
                    attempt: last,
                };
                Restored::Reattach { slot }
            }
            _ => Restored::Queued,
        }
    }

    fn dequeue(&mut self, trial: usize) {
        self.queue.retain(|queued| *queued != trial);
    }

    /// The next trial to start and its slot: the head of the queue in the lowest free
    /// slot; `None` when no slot is free, nothing is queued, or the sweep halted.
    pub fn next_start(&mut self) -> Option<Start> {
        if self.halt.is_some() {
            return None;
        }
        let slot = self.occupant.iter().position(Option::is_none)?;
        let trial = self.queue.pop_front()?;
        self.attempts[trial] += 1;
        let attempt = self.attempts[trial];
        self.occupant[slot] = Some(trial);
        self.progress[trial] = Progress::Running { slot, attempt };
        Some(Start {
            trial,
            slot,
            attempt,
        })
    }

    /// `trial`'s running attempt ended with `exit`: its slot is free again. Ignored (as
    /// `Outcome::Stopped`) for a trial that is not running.
    pub fn finished(&mut self, trial: usize, exit: Exit) -> Outcome {
        let Progress::Running { slot, attempt } = self.progress[trial] else {
            return Outcome::Stopped;
        };
        self.occupant[slot] = None;
        let outcome = match exit {
            Exit::Code(0) => Outcome::Done,
            Exit::Stopped => Outcome::Stopped,
            Exit::StoppedEarly => Outcome::StoppedEarly,
            Exit::Code(_) | Exit::Unknown => {
                self.failures[trial] += 1;
                if self.failures[trial] <= self.retries && self.halt.is_none() {
                    Outcome::Retry {
                        retry: self.failures[trial],
                    }
                } else {
                    Outcome::Failed
                }
            }
        };
        self.progress[trial] = match outcome {
            Outcome::Done => Progress::Done { attempt },
            Outcome::StoppedEarly => Progress::StoppedEarly { attempt },
            Outcome::Retry { .. } => {
                self.queue.push_back(trial);
                Progress::Queued
            }
            Outcome::Failed => {
                self.failed += 1;
                if self.max_failed.is_some_and(|max| self.failed >= max) {
                    self.halt.get_or_insert(Halt::MaxFailed);
                }
                Progress::Failed { attempt }
            }
            Outcome::Stopped => {
                // Stopped on purpose: queued again unless the sweep itself is stopping.
                if self.halt.is_none() {
                    self.queue.push_front(trial);
                    Progress::Queued
                } else {
                    Progress::Stopped { attempt }
                }
            }
        };
        outcome
    }

    /// Start nothing more (Ctrl-C, `sweep stop`); the runner stops what runs.
    pub fn stop(&mut self) {
        self.halt.get_or_insert(Halt::Stopped);
    }

    pub fn halted(&self) -> Option<Halt> {
        self.halt
    }

    /// Nothing runs and nothing more will start.
    pub fn is_finished(&self) -> bool {
        self.occupant.iter().all(Option::is_none) && (self.queue.is_empty() || self.halt.is_some())
    }

    pub fn progress(&self, trial: usize) -> Progress {
        self.progress[trial]
    }

    /// (trial, slot) of every running trial, by slot.
    pub fn running(&self) -> Vec<(usize, usize)> {
        self.occupant
            .iter()
            .enumerate()
            .filter_map(|(slot, trial)| trial.map(|trial| (trial, slot)))
            .collect()
    }

    /// Queued trials, in the order they will start.
    pub fn queued(&self) -> Vec<usize> {
        self.queue.iter().copied().collect()
    }

    pub fn slot(&self, slot: usize) -> &Slot {
        &self.slots[slot]
    }

    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// The slot's trials run on `gpus` from now on (another container took its own).
    pub fn move_slot(&mut self, slot: usize, gpus: Vec<String>) {
        self.slots[slot].gpus = gpus;
    }
}

#[cfg(test)]
mod tests;
