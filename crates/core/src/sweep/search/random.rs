//! `random:`: a count, a seed, and a distribution per param, and the draws from them.
//!
//! The generator is rand's ChaCha8Rng (the ChaCha stream cipher with 8 rounds, seeded
//! through rand_core's portable `seed_from_u64`): its output is specified, the same on
//! every machine and architecture, unlike `StdRng` whose algorithm may change. Floats are
//! drawn with rand's `random_range` and rounded to `RANDOM_DIGITS` significant digits; a
//! unit test pins the first draws of a seed, so an upgrade of rand that changed them
//! would fail it rather than change the trials of a sweep being resumed.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_yaml::{Mapping, Value};

use crate::input::source::SpecError;
use crate::sweep::read::Places;
use crate::sweep::value::{list_text, ParamValue};

use super::{param_name, values, Search, MAX_TRIALS};

/// Where a random param's values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// A float in `[low, high)`, rounded.
    Uniform(f64, f64),
    /// A float whose logarithm is uniform in `[ln low, ln high)`, rounded (`low > 0`).
    LogUniform(f64, f64),
    /// A whole number in `[low, high]`.
    Int(i64, i64),
    /// One of the values, each as likely.
    Choice(Vec<ParamValue>),
}

const DISTRIBUTION_HINT: &str =
    "write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`";

impl Distribution {
    /// `uniform [0.001, 0.1]`, `choice [low, high]`.
    pub fn text(&self) -> String {
        match self {
            Distribution::Uniform(low, high) => format!("uniform [{low:?}, {high:?}]"),
            Distribution::LogUniform(low, high) => format!("loguniform [{low:?}, {high:?}]"),
            Distribution::Int(low, high) => format!("int [{low}, {high}]"),
            Distribution::Choice(values) => format!("choice {}", list_text(values)),
        }
    }

    /// How many values it can give, when that is a finite number.
    pub fn size(&self) -> Option<u128> {
        match self {
            Distribution::Int(low, high) => Some((*high as i128 - *low as i128 + 1) as u128),
            Distribution::Choice(values) => Some(values.len() as u128),
            _ => None,
        }
    }

    pub(super) fn draw(&self, rng: &mut ChaCha8Rng) -> ParamValue {
        match self {
            Distribution::Uniform(low, high) => ParamValue::rounded(rng.random_range(*low..*high)),
            Distribution::LogUniform(low, high) => {
                ParamValue::rounded(rng.random_range(low.ln()..high.ln()).exp())
            }
            Distribution::Int(low, high) => ParamValue::Int(rng.random_range(*low..=*high)),
            Distribution::Choice(values) => {
                // u32, not usize: the draw is then the same on 32- and 64-bit machines.
                let index = rng.random_range(0..values.len() as u32);
                values[index as usize].clone()
            }
        }
    }
}

/// `count` param sets drawn from `params` with a generator seeded with `seed`: trial by
/// trial, each trial's params in order.
pub fn draw(
    count: usize,
    seed: u64,
    params: &[(String, Distribution)],
) -> Vec<Vec<(String, ParamValue)>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            params
                .iter()
                .map(|(name, distribution)| (name.clone(), distribution.draw(&mut rng)))
                .collect()
        })
        .collect()
}

pub(super) fn read(random: &Mapping, places: &Places) -> Result<Search, SpecError> {
    let (count, seed, params) = read_space(random, "random", places, |_, _| Ok(false))?;
    Ok(Search::Random {
        count,
        seed,
        params,
    })
}

/// The params a search draws from, in file order, each with its distribution.
pub type Space = Vec<(String, Distribution)>;

/// What `random:` and `tpe:` (`section`) share: `count`, `seed` (0 when left out) and
/// a distribution per param, in file order. `own` is offered every other key first and
/// says whether it took it (`tpe.startup`).
pub(super) fn read_space(
    mapping: &Mapping,
    section: &str,
    places: &Places,
    mut own: impl FnMut(&str, &Value) -> Result<bool, SpecError>,
) -> Result<(usize, u64, Space), SpecError> {
    let mut count = None;
    let mut seed = 0;
    let mut params: Vec<(String, Distribution)> = Vec::new();
    for (key, value) in mapping {
        match key.as_str() {
            Some("count") => {
                let path = format!("{section}.count");
                count = Some(whole(value, &path, 1, MAX_TRIALS as u64, places)? as usize)
            }
            Some("seed") => seed = whole(value, &format!("{section}.seed"), 0, u64::MAX, places)?,
            Some(key) if own(key, value)? => {}
            _ => {
                let names: Vec<String> = params.iter().map(|(name, _)| name.clone()).collect();
                let name = param_name(key, section, &names, places)?;
                let distribution = distribution(value, &format!("{section}.{name}"), places)?;
                params.push((name, distribution));
            }
        }
    }
    let Some(count) = count else {
        return Err(places.bad_key(
            section,
            format!("`{section}` has no `count`"),
            format!("say how many trials to draw: `{section}: {{count: 20, seed: 7, lr: {{loguniform: [1e-5, 1e-2]}}}}`"),
        ));
    };
    if params.is_empty() {
        return Err(places.bad_key(
            section,
            format!("`{section}` has no param to draw"),
            format!("add a distribution per param beside `count` and `seed`: {DISTRIBUTION_HINT}"),
        ));
    }
    Ok((count, seed, params))
}

/// A whole number from `low` to `high` at `path`.
pub(super) fn whole(
    value: &Value,
    path: &str,
    low: u64,
    high: u64,
    places: &Places,
) -> Result<u64, SpecError> {
    match value.as_u64() {
        Some(number) if (low..=high).contains(&number) => Ok(number),
        _ => Err(places.bad(
            path,
            format!("`{path}` must be a whole number from {low} to {high}"),
            if path.ends_with(".seed") {
                "the seed makes the draws repeatable: any whole number, such as `seed: 7`"
            } else if path.ends_with(".startup") {
                "say how many trials are random draws before TPE proposes the rest, such as `startup: 5`"
            } else {
                "say how many trials to draw, such as `count: 20`"
            },
        )),
    }
}

fn distribution(value: &Value, path: &str, places: &Places) -> Result<Distribution, SpecError> {
    let entry = match value {
        Value::Mapping(mapping) if mapping.len() == 1 => mapping.iter().next(),
        _ => None,
    };
    let Some((kind, range)) = entry else {
        return Err(places.bad(
            path,
            format!("`{path}` must be one distribution"),
            DISTRIBUTION_HINT,
        ));
    };
    let kind_text = super::key_text(kind);
    let path = format!("{path}.{kind_text}");
    if kind_text == "choice" {
        let Value::Sequence(list) = range else {
            return Err(places.bad(
                &path,
                format!("`{path}` must be a list of values"),
                DISTRIBUTION_HINT,
            ));
        };
        return Ok(Distribution::Choice(values(list, &path, places)?));
    }
    if !matches!(kind_text.as_str(), "uniform" | "loguniform" | "int") {
        return Err(places.bad_key(
            &path,
            format!("`{}` is not a distribution", super::shortened(&kind_text)),
            DISTRIBUTION_HINT,
        ));
    }
    let bounds = match range {
        Value::Sequence(items) if items.len() == 2 => Some((&items[0], &items[1])),
        _ => None,
    };
    let bad = |message: String| places.bad(&path, message, DISTRIBUTION_HINT);
    let Some((low, high)) = bounds else {
        return Err(bad(format!("`{path}` must be two numbers `[low, high]`")));
    };
    if kind_text == "int" {
        let (Some(low), Some(high)) = (low.as_i64(), high.as_i64()) else {
            return Err(bad(format!(
                "`{path}` must be two whole numbers `[low, high]`"
            )));
        };
        if low >= high {
            return Err(bad(format!("`{path}`: {low} is not below {high}")));
        }
        return Ok(Distribution::Int(low, high));
    }
    let finite = |value: &Value| value.as_f64().filter(|number| number.is_finite());
    let (Some(low), Some(high)) = (finite(low), finite(high)) else {
        return Err(bad(format!("`{path}` must be two numbers `[low, high]`")));
    };
    if low >= high {
        return Err(bad(format!("`{path}`: {low:?} is not below {high:?}")));
    }
    // Drawing takes `high - low`: a range wider than the largest float cannot be drawn
    // from (rand would panic on it).
    if kind_text == "uniform" && !(high - low).is_finite() {
        return Err(bad(format!(
            "`{path}`: the range from {low:?} to {high:?} is wider than a number can hold"
        )));
    }
    if kind_text == "loguniform" {
        if low <= 0.0 {
            return Err(bad(format!(
                "`{path}` starts at {low:?}; a log-uniform range starts above 0"
            )));
        }
        return Ok(Distribution::LogUniform(low, high));
    }
    Ok(Distribution::Uniform(low, high))
}
