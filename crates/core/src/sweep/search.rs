//! What decides the trials: a grid (`params:`), a seeded random search (`random:`), a
//! search that learns (`tpe:`) or an explicit list (`trials:`), read from the file's YAML values and checked with a place
//! for every error (the third value of an axis, the second trial's missing param). Pure.

pub mod random;
pub mod tpe;

use std::collections::BTreeMap;

use serde_yaml::{Mapping, Value};

use crate::input::source::SpecError;

use super::read::Places;
use super::template::valid_name;
use super::value::{list_text, set_text, Param, ParamValue};

pub use random::Distribution;
pub use tpe::Tpe;

/// At most this many trials in one sweep: a grid of ten axes of ten values is a typo,
/// not a plan.
pub const MAX_TRIALS: usize = 10_000;

/// The longest param name (it becomes `TFIMG_PARAM_<NAME>`).
pub const MAX_PARAM_NAME: usize = 64;

/// How the trials are made.
#[derive(Debug, Clone, PartialEq)]
pub enum Search {
    /// Every combination; axes in file order, the last varying fastest.
    Grid(Vec<(String, Vec<ParamValue>)>),
    /// `count` draws from a ChaCha8 generator seeded with `seed`, params drawn in file
    /// order within each trial.
    Random {
        count: usize,
        seed: u64,
        params: Vec<(String, Distribution)>,
    },
    /// `count` trials, each proposed by TPE from the trials that ended before it
    /// (`tpe`), so known only as the sweep runs (its journal records each).
    Tpe(Tpe),
    /// Param sets as listed, every one with the same names in the first one's order.
    List(Vec<Vec<Param>>),
}

impl Search {
    /// The param names, in the order trials list them.
    pub fn names(&self) -> Vec<String> {
        match self {
            Search::Grid(axes) => axes.iter().map(|(name, _)| name.clone()).collect(),
            Search::Random { params, .. } | Search::Tpe(Tpe { params, .. }) => {
                params.iter().map(|(name, _)| name.clone()).collect()
            }
            Search::List(sets) => sets
                .first()
                .map(|set| set.iter().map(|(name, _)| name.clone()).collect())
                .unwrap_or_default(),
        }
    }

    /// How many trials it makes.
    pub fn count(&self) -> usize {
        match self {
            Search::Grid(axes) => axes.iter().map(|(_, values)| values.len()).product(),
            Search::Random { count, .. } | Search::Tpe(Tpe { count, .. }) => *count,
            Search::List(sets) => sets.len(),
        }
    }

    /// Whether its trials are proposed as the sweep runs (`tpe:`), not known before.
    pub fn learns(&self) -> bool {
        matches!(self, Search::Tpe(_))
    }

    /// `grid 3 × 3 × 3`, `random 20 (seed 7)`, `tpe 30 (seed 7)`, `list of 4`.
    pub fn describe(&self) -> String {
        match self {
            Search::Grid(axes) => {
                let sizes: Vec<String> = axes.iter().map(|(_, v)| v.len().to_string()).collect();
                format!("grid {}", sizes.join(" × "))
            }
            Search::Random { count, seed, .. } => format!("random {count} (seed {seed})"),
            Search::Tpe(tpe) => format!("tpe {} (seed {})", tpe.count, tpe.seed),
            Search::List(sets) => format!("list of {}", sets.len()),
        }
    }

    /// What decides the trials, as `path → text` entries for the journal's fingerprint.
    pub fn fingerprint(&self) -> BTreeMap<String, String> {
        let mut entries = BTreeMap::new();
        match self {
            Search::Grid(axes) => {
                for (index, (name, values)) in axes.iter().enumerate() {
                    // The position matters: it decides the order of the trials.
                    entries.insert(
                        format!("params.{name}"),
                        format!("{} (axis {})", list_text(values), index + 1),
                    );
                }
            }
            Search::Random {
                count,
                seed,
                params,
            } => {
                entries.insert("random.count".into(), count.to_string());
                entries.insert("random.seed".into(), seed.to_string());
                for (index, (name, distribution)) in params.iter().enumerate() {
                    entries.insert(
                        format!("random.{name}"),
                        format!("{} (drawn {})", distribution.text(), index + 1),
                    );
                }
            }
            Search::Tpe(tpe) => {
                entries.insert("tpe.count".into(), tpe.count.to_string());
                entries.insert("tpe.seed".into(), tpe.seed.to_string());
                entries.insert("tpe.startup".into(), tpe.startup.to_string());
                for (index, (name, distribution)) in tpe.params.iter().enumerate() {
                    entries.insert(
                        format!("tpe.{name}"),
                        format!("{} (drawn {})", distribution.text(), index + 1),
                    );
                }
            }
            Search::List(sets) => {
                for (index, set) in sets.iter().enumerate() {
                    entries.insert(format!("trials[{index}]"), set_text(set));
                }
            }
        }
        entries
    }
}

/// The sections of a sweep file that define its trials, as written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sections<'a> {
    pub params: Option<&'a Mapping>,
    pub random: Option<&'a Mapping>,
    pub tpe: Option<&'a Mapping>,
    pub trials: Option<&'a Vec<Value>>,
}

/// The search the file defines: exactly one of `params`, `random`, `tpe` and `trials`.
pub(crate) fn read(sections: Sections<'_>, places: &Places) -> Result<Search, SpecError> {
    let Sections {
        params,
        random,
        tpe,
        trials,
    } = sections;
    let given: Vec<&str> = [
        ("params", params.is_some()),
        ("random", random.is_some()),
        ("tpe", tpe.is_some()),
        ("trials", trials.is_some()),
    ]
    .iter()
    .filter(|(_, given)| *given)
    .map(|(name, _)| *name)
    .collect();
    match given.as_slice() {
        [] => Err(places.bad_key(
            "sweep",
            "the sweep defines no trials".into(),
            "add `params:` (a grid: `lr: [0.001, 0.0001]`), `random:` (`count`, `seed` and a distribution per param), `tpe:` (the same, proposed from the trials that ended) or `trials:` (a list of param sets)",
        )),
        [first, second, ..] => Err(places.bad_key(
            second,
            format!("`{second}` and `{first}` both define the trials"),
            "keep one of `params` (a grid), `random`, `tpe` and `trials` (a list)",
        )),
        _ => match (params, random, tpe, trials) {
            (Some(params), ..) => grid(params, places),
            (_, Some(random), ..) => random::read(random, places),
            (_, _, Some(tpe), _) => tpe::read(tpe, places),
            (.., Some(trials)) => list(trials, places),
            _ => unreachable!("one of the four is given"),
        },
    }
}

/// A mapping key as a param name, checked: letters, digits and `_`, unique once upper-cased.
pub(crate) fn param_name(
    key: &Value,
    section: &str,
    seen: &[String],
    places: &Places,
) -> Result<String, SpecError> {
    let name = key_text(key);
    let path = format!("{section}.{name}");
    if !valid_name(&name) || name.len() > MAX_PARAM_NAME {
        return Err(places.bad_key(
            &path,
            format!("param name `{}` is not valid", shortened(&name)),
            format!("use letters, digits and `_`, starting with a letter, at most {MAX_PARAM_NAME} characters: the trial gets it as `{{name}}` and `TFIMG_PARAM_<NAME>`"),
        ));
    }
    if let Some(other) = seen.iter().find(|other| other.eq_ignore_ascii_case(&name)) {
        return Err(places.bad_key(
            &path,
            format!(
                "params `{other}` and `{name}` would both be `TFIMG_PARAM_{}`",
                name.to_ascii_uppercase()
            ),
            "give the params names that differ in more than upper and lower case",
        ));
    }
    Ok(name)
}

/// A mapping key as the text a path spells it with.
pub(crate) fn key_text(key: &Value) -> String {
    match key {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Null => "~".to_string(),
        _ => "?".to_string(),
    }
}

/// At most 64 characters of `text`, then `…`.
pub(crate) fn shortened(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// One value of a param at `path`.
pub(crate) fn value(value: &Value, path: &str, places: &Places) -> Result<ParamValue, SpecError> {
    ParamValue::from_yaml(value).map_err(|why| {
        places.bad(
            path,
            format!("`{path}` is not a param value: {why}"),
            "a param value is one number, word or `true`/`false`",
        )
    })
}

/// Values of a list at `path`: at least one, each once.
pub(crate) fn values(
    list: &[Value],
    path: &str,
    places: &Places,
) -> Result<Vec<ParamValue>, SpecError> {
    if list.is_empty() {
        return Err(places.bad(
            path,
            format!("`{path}` is an empty list"),
            "give it at least one value",
        ));
    }
    let mut values: Vec<ParamValue> = Vec::new();
    for (index, item) in list.iter().enumerate() {
        let item_path = format!("{path}[{index}]");
        let parsed = value(item, &item_path, places)?;
        if values.iter().any(|seen| seen.text() == parsed.text()) {
            return Err(places.bad(
                &item_path,
                format!("`{path}` lists {} twice", parsed.yaml_text()),
                "list each value once: a repeated value would run the same trial twice",
            ));
        }
        values.push(parsed);
    }
    Ok(values)
}

fn too_many(
    count: Option<usize>,
    path: &str,
    what: &str,
    places: &Places,
) -> Result<usize, SpecError> {
    match count {
        Some(count) if count <= MAX_TRIALS => Ok(count),
        _ => Err(places.bad_key(
            path,
            format!(
                "{what} makes {} trials, more than {MAX_TRIALS}",
                count.map_or("too many".to_string(), |count| count.to_string())
            ),
            "use fewer values, or `random:` with a `count` to sample the space",
        )),
    }
}

fn grid(params: &Mapping, places: &Places) -> Result<Search, SpecError> {
    if params.is_empty() {
        return Err(places.bad_key(
            "params",
            "`params` is empty".into(),
            "give each param a list of values: `params: {lr: [0.001, 0.0001]}`",
        ));
    }
    let mut axes: Vec<(String, Vec<ParamValue>)> = Vec::new();
    let mut count: Option<usize> = Some(1);
    for (key, list) in params {
        let names: Vec<String> = axes.iter().map(|(name, _)| name.clone()).collect();
        let name = param_name(key, "params", &names, places)?;
        let path = format!("params.{name}");
        let Value::Sequence(list) = list else {
            let shown =
                ParamValue::from_yaml(list).map_or_else(|_| "...".to_string(), |v| v.yaml_text());
            return Err(places.bad(
                &path,
                format!("`{path}` must be a list of values (a grid axis)"),
                format!("write `{name}: [{shown}]` for one value, or list several"),
            ));
        };
        let values = values(list, &path, places)?;
        count = count.and_then(|count| count.checked_mul(values.len()));
        axes.push((name, values));
    }
    too_many(count, "params", "the grid", places)?;
    Ok(Search::Grid(axes))
}

fn list(trials: &[Value], places: &Places) -> Result<Search, SpecError> {
    if trials.is_empty() {
        return Err(places.bad_key(
            "trials",
            "`trials` is an empty list".into(),
            "list param sets: `trials: [{lr: 0.1, wd: 0}, {lr: 0.01, wd: 0}]`",
        ));
    }
    too_many(Some(trials.len()), "trials", "`trials`", places)?;
    let mut sets: Vec<Vec<Param>> = Vec::new();
    for (index, item) in trials.iter().enumerate() {
        let path = format!("trials[{index}]");
        let set = param_set(item, &path, sets.first(), places)?;
        if let Some(earlier) = sets.iter().position(|seen| same_set(seen, &set)) {
            return Err(places.bad(
                &path,
                format!("`{path}` repeats `trials[{earlier}]`: {}", set_text(&set)),
                "list each param set once: a repeated set would run the same trial twice",
            ));
        }
        sets.push(set);
    }
    Ok(Search::List(sets))
}

/// One `trials:` entry, in the first entry's name order (`first` is `None` for it).
fn param_set(
    item: &Value,
    path: &str,
    first: Option<&Vec<Param>>,
    places: &Places,
) -> Result<Vec<Param>, SpecError> {
    let Value::Mapping(mapping) = item else {
        return Err(places.bad(
            path,
            format!("`{path}` must be a mapping of param names to values"),
            "write each trial as `{lr: 0.1, wd: 0}`",
        ));
    };
    if mapping.is_empty() {
        return Err(places.bad(
            path,
            format!("`{path}` sets no param"),
            "write each trial as `{lr: 0.1, wd: 0}`",
        ));
    }
    let mut set: Vec<Param> = Vec::new();
    for (key, raw) in mapping {
        let names: Vec<String> = set.iter().map(|(name, _)| name.clone()).collect();
        let name = param_name(key, path, &names, places)?;
        if let Some(first) = first {
            if !first.iter().any(|(known, _)| *known == name) {
                return Err(places.bad_key(
                    &format!("{path}.{name}"),
                    format!("`{path}` sets `{name}`, which `trials[0]` does not"),
                    "every trial sets the same params (the results table has one column per param)",
                ));
            }
        }
        let parsed = value(raw, &format!("{path}.{name}"), places)?;
        set.push((name, parsed));
    }
    let Some(first) = first else {
        return Ok(set);
    };
    if let Some((missing, _)) = first
        .iter()
        .find(|(name, _)| !set.iter().any(|(n, _)| n == name))
    {
        return Err(places.bad(
            path,
            format!("`{path}` does not set `{missing}`, which `trials[0]` sets"),
            "every trial sets the same params (the results table has one column per param)",
        ));
    }
    // In the first trial's order, so every trial lists its params alike.
    Ok(first
        .iter()
        .filter_map(|(name, _)| set.iter().find(|(n, _)| n == name).cloned())
        .collect())
}

fn same_set(a: &[Param], b: &[Param]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((name_a, value_a), (name_b, value_b))| {
                name_a == name_b && value_a.text() == value_b.text()
            })
}

#[cfg(test)]
mod tests;
