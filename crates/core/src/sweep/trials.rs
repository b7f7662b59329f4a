//! A sweep's trials, in order, each with a stable id (`t001`, `t002`, ...; more digits
//! past 999 trials), its params, its rendered command and its environment; the files of
//! a trial's folder; and the names its container takes. The order is the file's: a grid
//! varies its last param fastest (as nested loops written in file order), random trials
//! come in draw order, listed trials as listed; but a grid with `early_stop` runs in a
//! shuffled order (`shuffled_grid`), the same every run. Pure.

use super::search::{random, Search};
use super::value::{Param, ParamValue};
use super::{Sweep, TRIAL_DIR};
use crate::labels;

/// The files of a trial's folder (`<output>/<trial>/`).
pub const PARAMS_FILE: &str = "params.json";
pub const STDOUT_FILE: &str = "stdout.log";
pub const STDERR_FILE: &str = "stderr.log";
/// Exit code, start and end, GPU ids, image digest, attempt.
pub const STATUS_FILE: &str = "status.json";
/// What the trial appends, one JSON object per line (`$TFIMG_TRIAL_DIR/metrics.jsonl`).
pub const METRICS_FILE: &str = "metrics.jsonl";
/// The most of a trial's `metrics.jsonl` (or `stdout.log`) that is read: its container
/// writes it, so it may be endless (`/dev/zero` cannot be linked there: links are not
/// followed, but a file can still grow without end). Points past it are not read.
pub const METRICS_READ_LIMIT: u64 = 64 * 1024 * 1024;

/// TensorFlow's switch for taking GPU memory as needed: forced on when trials share a GPU
/// (two trials that each take all of it by default cannot share it).
pub const MEMORY_GROWTH_VARIABLE: &str = "TF_FORCE_GPU_ALLOW_GROWTH";

/// One run of the command with one set of params.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// `t001`: the folder and container name part.
    pub id: String,
    /// From 0, in trial order.
    pub index: usize,
    /// In the sweep's param order.
    pub params: Vec<Param>,
    /// The command with the params in place.
    pub command: Vec<String>,
    /// The sweep's `env:`, then `TFIMG_SWEEP`, `TFIMG_TRIAL`, `TFIMG_TRIAL_DIR` and
    /// `TFIMG_PARAM_<NAME>` for each param (and memory growth when GPUs are shared).
    pub env: Vec<(String, String)>,
}

impl Trial {
    /// The value of param `name`.
    pub fn param(&self, name: &str) -> Option<&ParamValue> {
        self.params
            .iter()
            .find(|(param, _)| param == name)
            .map(|(_, value)| value)
    }

    /// `params.json`: the params as one JSON object in param order, numbers as numbers.
    pub fn params_json(&self) -> String {
        let mut text = String::from("{");
        for (index, (name, value)) in self.params.iter().enumerate() {
            if index > 0 {
                text.push_str(", ");
            }
            text.push_str(&serde_json::Value::String(name.clone()).to_string());
            text.push_str(": ");
            text.push_str(&value.to_json().to_string());
        }
        text.push_str("}\n");
        text
    }

    /// The command as a shell would take it back (for printing, never for running).
    pub fn command_line(&self) -> String {
        command_line(&self.command)
    }
}

/// `args` quoted for a POSIX shell where needed: `python train.py --aug 'a b'`.
pub fn command_line(args: &[String]) -> String {
    shlex::try_join(args.iter().map(String::as_str)).unwrap_or_else(|_| {
        args.iter()
            .map(|arg| format!("{arg:?}"))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The id of trial `index` (from 0) of `count`: `t001`, or `t0001` past 999 trials.
pub fn trial_id(index: usize, count: usize) -> String {
    let width = count.to_string().len().max(3);
    format!("t{:0width$}", index + 1)
}

/// A trial's container name: `<sweep>-<trial>` (`resnet-lr-t001`).
pub fn container_name(sweep: &str, trial: &str) -> String {
    format!("{sweep}-{trial}")
}

/// The labels of a trial's container: `io.tfimg.sweep`, `io.tfimg.trial`,
/// `io.tfimg.attempt` (the launcher adds the spec's and the GPUs').
pub fn container_labels(sweep: &str, trial: &str, attempt: u32) -> Vec<(String, String)> {
    vec![
        (labels::SWEEP.to_string(), sweep.to_string()),
        (labels::TRIAL.to_string(), trial.to_string()),
        (labels::ATTEMPT.to_string(), attempt.to_string()),
    ]
}

/// The param sets of `search`, in trial order.
pub fn param_sets(search: &Search) -> Vec<Vec<Param>> {
    match search {
        Search::Grid(axes) => grid(axes),
        Search::Random {
            count,
            seed,
            params,
        } => random::draw(*count, *seed, params),
        // Known before the sweep runs: the random draws TPE starts from.
        Search::Tpe(tpe) => tpe.startup_sets(),
        Search::List(sets) => sets.clone(),
    }
}

/// Every combination, the last axis varying fastest.
fn grid(axes: &[(String, Vec<ParamValue>)]) -> Vec<Vec<Param>> {
    let count: usize = axes.iter().map(|(_, values)| values.len()).product();
    (0..count)
        .map(|mut number| {
            let mut set: Vec<Param> = axes
                .iter()
                .rev()
                .map(|(name, values)| {
                    let value = values[number % values.len()].clone();
                    number /= values.len();
                    (name.clone(), value)
                })
                .collect();
            set.reverse();
            set
        })
        .collect()
}

/// The seed of `sweep`'s grid order under `early_stop` (`shuffled_grid`): from its name
/// (the first 8 bytes of its SHA-256), so every run of a sweep (and a resumed one) gives
/// its trials the same ids, and two sweeps over grids of one shape do not share one
/// order (an order that sets the rungs' bars badly for one grid is not every sweep's).
pub fn grid_order_seed(sweep: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(sweep.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// Whether `sweep`'s trials run in a shuffled order: a grid whose trials `early_stop`
/// judges. Early stopping compares each trial with those that reached a rung (or an
/// epoch) before it, so it assumes trials come in no particular order: a grid in the
/// file's order lists one axis's values together, and when its first values are losers
/// they set the bar low for every trial after (bench/search/replay.md: on the late
/// bloomers' grid the default rule then runs 70% of the grid's trial-epochs, against 52%
/// shuffled). Random and TPE trials are in no order already; a list is run as listed.
pub fn shuffled_grid(sweep: &Sweep) -> bool {
    sweep.early_stop.is_some() && matches!(sweep.search, Search::Grid(_))
}

/// `items` in an order drawn from `seed`: Fisher-Yates over ChaCha8's `next_u64`, whose
/// output is specified, so the order never changes with a crate's version (a trial's id
/// must name the same params in every run of a sweep).
fn shuffle<T>(items: &mut [T], seed: u64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
    for last in (1..items.len()).rev() {
        let pick = (rng.next_u64() % (last as u64 + 1)) as usize;
        items.swap(last, pick);
    }
}

/// The trials of `sweep` known before it runs, in order: every trial, but for `tpe:`
/// its first `startup` (the rest are proposed as it runs).
pub fn expand(sweep: &Sweep) -> Vec<Trial> {
    let mut sets = param_sets(&sweep.search);
    if shuffled_grid(sweep) {
        shuffle(&mut sets, grid_order_seed(&sweep.name));
    }
    sets.into_iter()
        .enumerate()
        .map(|(index, params)| trial(sweep, index, params))
        .collect()
}

/// Trial `index` (from 0) of `sweep` with `params`; its id counts the sweep's trials.
pub fn trial(sweep: &Sweep, index: usize, params: Vec<Param>) -> Trial {
    let id = trial_id(index, sweep.search.count());
    let command = sweep.command.render(&params);
    let env = trial_env(sweep, &id, &params);
    Trial {
        id,
        index,
        params,
        command,
        env,
    }
}

fn trial_env(sweep: &Sweep, id: &str, params: &[Param]) -> Vec<(String, String)> {
    let shared = sweep.pool.trials_per_gpu > 1;
    let mut env: Vec<(String, String)> = sweep
        .env
        .iter()
        .filter(|(name, _)| !(shared && name == MEMORY_GROWTH_VARIABLE))
        .cloned()
        .collect();
    if shared {
        env.push((MEMORY_GROWTH_VARIABLE.to_string(), "true".to_string()));
    }
    env.push((labels::SWEEP_VARIABLE.to_string(), sweep.name.clone()));
    env.push((labels::TRIAL_VARIABLE.to_string(), id.to_string()));
    env.push((
        labels::TRIAL_DIR_VARIABLE.to_string(),
        TRIAL_DIR.to_string(),
    ));
    for (name, value) in params {
        env.push((labels::param_variable(name), value.text()));
    }
    env
}

#[cfg(test)]
mod tests;
