//! `tpe:`: a search that learns, the Tree-structured Parzen Estimator (Bergstra et al.,
//! "Algorithms for Hyper-Parameter Optimization", NeurIPS 2011), with the param syntax
//! of `random:`.
//!
//! Each trial is proposed when a slot is free to run it. The first `startup` are random
//! draws; every later one is proposed from the trials that ended so far: per param, the
//! ended trials are split into the best tenth and the rest, a density is fitted to each
//! (Parzen windows for numbers, on a log scale for `loguniform`; a histogram for
//! `choice`), and of 24 candidates drawn from the good density the one most likely under
//! it against the rest is taken. The estimator is the `tpe` crate's (sile/tpe:
//! maintained, on rand 0.10 as we are, one estimator per param as Optuna's default TPE).
//!
//! A proposal is a function of the trial's index, the seed, the ended trials (in trial
//! order) and the sets already proposed, never of a clock: the generator is ChaCha8
//! seeded with `seed` on stream `index`. With one slot, what ended before each proposal
//! is the same on every run, so a seed gives the same trials; with several it depends
//! on the order trials end. A set already proposed is not proposed again while the
//! space has others. Pure.

use std::collections::HashSet;

use rand::rngs::ChaCha8Rng;
use rand::SeedableRng;
use serde_yaml::Mapping;
use tpe::density_estimation::DefaultEstimatorBuilder;
use tpe::TpeOptimizer;

use crate::input::source::{Location, SpecError};
use crate::sweep::read::Places;
use crate::sweep::value::{set_text, Param, ParamValue};
use crate::sweep::Mode;

use super::random::{self, Distribution};
use super::{Search, MAX_TRIALS};

/// At most this many trials are random draws before TPE proposes (Optuna's default);
/// fewer when `count` is small (`DEFAULT_STARTUP_SHARE`).
pub const DEFAULT_STARTUP: usize = 10;

/// By default a third of the trials at most are random draws.
const DEFAULT_STARTUP_SHARE: usize = 3;

/// Proposals tried before a set already run is given up on for a random one.
const TRIES: usize = 32;

/// Random draws tried next, before the space is walked for a set not yet run.
const RANDOM_TRIES: usize = 1000;

/// The largest finite space walked for a set not yet run.
const WALK_LIMIT: u128 = 100_000;

/// `tpe:`, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Tpe {
    pub count: usize,
    pub seed: u64,
    /// Trials that are random draws before TPE proposes the rest.
    pub startup: usize,
    pub params: Vec<(String, Distribution)>,
    /// Where `tpe:` is, for errors found later (`--k8s`).
    pub location: Location,
}

/// An ended trial as TPE learns from it: its params and its objective value (NaN or an
/// infinity for one that diverged: told as the worst value seen).
pub type Ended<'a> = (&'a [Param], f64);

impl Tpe {
    /// The param set of trial `index` (from 0): a random draw among the first `startup`
    /// (or while nothing ended), else TPE's proposal from `ended` for `mode`; never one
    /// of `taken` while the space has another. The trials still running (`pending`) are
    /// told as if they had ended with the worst value seen (the "constant liar" of
    /// Ginsbourger et al., as Optuna's `TPESampler(constant_liar=True)` does): a second
    /// slot is then not proposed the very region the first is trying.
    pub fn propose(
        &self,
        index: usize,
        mode: Mode,
        ended: &[Ended<'_>],
        pending: &[&[Param]],
        taken: &[&[Param]],
    ) -> Vec<Param> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(index as u64);
        let taken: HashSet<String> = taken.iter().map(|set| set_text(set)).collect();
        let mut estimators = match index >= self.startup && !ended.is_empty() {
            true => self.estimators(mode, ended, pending),
            false => None,
        };
        for _ in 0..TRIES {
            let set = match estimators.as_mut() {
                Some(estimators) => self.ask(estimators, &mut rng),
                None => self.draw(&mut rng),
            };
            if !taken.contains(&set_text(&set)) {
                return set;
            }
        }
        for _ in 0..RANDOM_TRIES {
            let set = self.draw(&mut rng);
            if !taken.contains(&set_text(&set)) {
                return set;
            }
        }
        self.first_not_in(&taken)
            .unwrap_or_else(|| self.draw(&mut rng))
    }

    /// The first `startup` trials' sets: known before the sweep runs (the dry run shows
    /// them), as `propose` makes them.
    pub fn startup_sets(&self) -> Vec<Vec<Param>> {
        let mut sets: Vec<Vec<Param>> = Vec::new();
        for index in 0..self.startup {
            let taken: Vec<&[Param]> = sets.iter().map(Vec::as_slice).collect();
            let set = self.propose(index, Mode::Max, &[], &[], &taken);
            sets.push(set);
        }
        sets
    }

    /// How many param sets the space holds, when that is a finite number.
    pub fn size(&self) -> Option<u128> {
        self.params
            .iter()
            .try_fold(1u128, |size, (_, distribution)| {
                size.checked_mul(distribution.size()?)
            })
    }

    fn draw(&self, rng: &mut ChaCha8Rng) -> Vec<Param> {
        self.params
            .iter()
            .map(|(name, distribution)| (name.clone(), distribution.draw(rng)))
            .collect()
    }

    /// One estimator per param, told every ended trial (TPE minimizes: a `max`
    /// objective is told negated) and every pending one (as the worst); `None` when a
    /// range cannot be estimated over (an `int` range wider than a float tells apart),
    /// and the proposal is a random draw.
    fn estimators(
        &self,
        mode: Mode,
        ended: &[Ended<'_>],
        pending: &[&[Param]],
    ) -> Option<Vec<TpeOptimizer>> {
        let loss = |value: f64| match mode {
            Mode::Max => -value,
            Mode::Min => value,
        };
        // The worst finite loss: what a diverged trial and a pending one are told.
        let worst = ended
            .iter()
            .map(|(_, value)| loss(*value))
            .filter(|loss| loss.is_finite())
            .reduce(f64::max);
        let told: Vec<(&[Param], f64)> = ended
            .iter()
            .map(|(params, value)| (*params, loss(*value)))
            .chain(pending.iter().map(|params| (*params, f64::NAN)))
            .filter_map(|(params, loss)| match loss.is_finite() {
                true => Some((params, loss)),
                false => worst.map(|worst| (params, worst)),
            })
            .collect();
        let mut estimators = Vec::new();
        for (name, distribution) in &self.params {
            let (builder, range) = match distribution {
                Distribution::Uniform(low, high) => {
                    (tpe::parzen_estimator(), tpe::range(*low, *high))
                }
                Distribution::LogUniform(low, high) => {
                    (tpe::parzen_estimator(), tpe::range(low.ln(), high.ln()))
                }
                Distribution::Int(low, high) => (
                    tpe::parzen_estimator(),
                    tpe::range(*low as f64, *high as f64 + 1.0),
                ),
                Distribution::Choice(values) => (
                    tpe::histogram_estimator(),
                    tpe::categorical_range(values.len()),
                ),
            };
            let mut estimator = TpeOptimizer::<DefaultEstimatorBuilder>::new(builder, range.ok()?);
            for (params, loss) in &told {
                let found = params.iter().find(|(param, _)| param == name);
                let Some(x) = found.and_then(|(_, v)| coordinate(distribution, v)) else {
                    continue;
                };
                // Out of its range (a value written by hand): not learned from.
                let _ = estimator.tell(x, *loss);
            }
            estimators.push(estimator);
        }
        Some(estimators)
    }

    fn ask(&self, estimators: &mut [TpeOptimizer], rng: &mut ChaCha8Rng) -> Vec<Param> {
        self.params
            .iter()
            .zip(estimators.iter_mut())
            .map(|((name, distribution), estimator)| {
                let x = match estimator.ask(rng) {
                    Ok(x) => x,
                    Err(never) => match never {},
                };
                (name.clone(), value_at(distribution, x))
            })
            .collect()
    }

    /// The first set of a finite space of at most `WALK_LIMIT` sets not in `taken`.
    fn first_not_in(&self, taken: &HashSet<String>) -> Option<Vec<Param>> {
        let size = self.size().filter(|size| *size <= WALK_LIMIT)?;
        (0..size as u64).find_map(|mut number| {
            let set: Vec<Param> = self
                .params
                .iter()
                .map(|(name, distribution)| {
                    let count = distribution.size().unwrap_or(1) as u64;
                    let value = nth_value(distribution, number % count);
                    number /= count;
                    (name.clone(), value)
                })
                .collect();
            (!taken.contains(&set_text(&set))).then_some(set)
        })
    }
}

/// Where `value` lies on the axis the estimator of `distribution` works on.
fn coordinate(distribution: &Distribution, value: &ParamValue) -> Option<f64> {
    match distribution {
        Distribution::Uniform(..) => value.as_f64(),
        Distribution::LogUniform(..) => value.as_f64().filter(|x| *x > 0.0).map(f64::ln),
        // The middle of its unit on the axis, which `value_at` floors.
        Distribution::Int(..) => value.as_f64().map(|x| x + 0.5),
        Distribution::Choice(values) => values
            .iter()
            .position(|choice| choice.text() == value.text())
            .map(|index| index as f64),
    }
}

/// The value at `x` on the estimator's axis of `distribution`.
fn value_at(distribution: &Distribution, x: f64) -> ParamValue {
    match distribution {
        Distribution::Uniform(low, high) => ParamValue::rounded(x.clamp(*low, *high)),
        Distribution::LogUniform(low, high) => ParamValue::rounded(x.exp().clamp(*low, *high)),
        Distribution::Int(low, high) => ParamValue::Int((x.floor() as i64).clamp(*low, *high)),
        Distribution::Choice(values) => {
            let index = (x.max(0.0) as usize).min(values.len() - 1);
            values[index].clone()
        }
    }
}

/// The `n`th value of a finite distribution.
fn nth_value(distribution: &Distribution, n: u64) -> ParamValue {
    match distribution {
        Distribution::Int(low, _) => ParamValue::Int(low.saturating_add(n as i64)),
        Distribution::Choice(values) => values[n as usize % values.len()].clone(),
        // Not finite: never walked.
        Distribution::Uniform(low, _) | Distribution::LogUniform(low, _) => ParamValue::Float(*low),
    }
}

/// `tpe:` of a sweep file: `count`, `seed`, `startup` and a distribution per param.
pub(super) fn read(mapping: &Mapping, places: &Places) -> Result<Search, SpecError> {
    let mut startup = None;
    let (count, seed, params) = random::read_space(mapping, "tpe", places, |key, value| {
        if key != "startup" {
            return Ok(false);
        }
        startup = Some(random::whole(value, "tpe.startup", 1, MAX_TRIALS as u64, places)? as usize);
        Ok(true)
    })?;
    let tpe = Tpe {
        count,
        seed,
        startup: startup.unwrap_or_else(|| default_startup(count)),
        params,
        location: places.key("tpe"),
    };
    if tpe
        .params
        .iter()
        .all(|(_, distribution)| distribution.size() == Some(1))
    {
        return Err(places.bad_key(
            "tpe",
            "every param of `tpe` has one value: there is nothing for TPE to learn".into(),
            "give a param a range (`lr: {loguniform: [1e-5, 1e-2]}`) or several choices; to run one set of params, list it under `trials:`",
        ));
    }
    if let Some(size) = tpe.size().filter(|size| (count as u128) > *size) {
        return Err(places.bad(
            "tpe.count",
            format!("`tpe.count` is {count}, but the params of `tpe` have only {size} combinations"),
            format!("lower `count` to at most {size} (TPE runs each set of params once), or write the params as a grid under `params:` to run every one"),
        ));
    }
    if startup.is_some() && tpe.startup >= count {
        return Err(places.bad(
            "tpe.startup",
            format!(
                "`tpe.startup` is {}, not below `count` ({count}): every trial would be a random draw",
                tpe.startup
            ),
            "lower `startup` (the random draws TPE learns from first), or use `random:` for a random search",
        ));
    }
    Ok(Search::Tpe(tpe))
}

/// A third of `count` (rounded up), at most `DEFAULT_STARTUP`: a short search still
/// leaves most of its trials to TPE.
pub fn default_startup(count: usize) -> usize {
    count
        .div_ceil(DEFAULT_STARTUP_SHARE)
        .clamp(1, DEFAULT_STARTUP)
}

#[cfg(test)]
mod tests;
