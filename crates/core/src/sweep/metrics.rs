//! What a trial reports: `metrics.jsonl` in its folder (one JSON object per line, numeric
//! fields, optional `epoch` and `step`), or, when the trial wrote no such file, lines of
//! `name=value` pairs on its stdout. Lines that say nothing readable are skipped, never
//! an error: a trial's output is not the user's input. Then a trial's summary: each
//! metric's curve, the objective's value as `objective.use` picks it (the best report or
//! the last) and where it was reported, how many epochs or points. Pure.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::{Objective, Pick};

/// A finite number as a key of a set or map: equal numbers (`0` and `-0` too) have
/// equal keys.
pub(crate) fn number_key(number: f64) -> u64 {
    // Adding 0.0 makes -0.0 +0.0 and leaves every other number as it is.
    (number + 0.0).to_bits()
}

/// One report of a trial: the values of one line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Point {
    pub epoch: Option<f64>,
    pub step: Option<f64>,
    /// Every other number of the line, by name: NaN and the infinities too (a metric
    /// that diverged is what it is, never the value before it).
    pub values: BTreeMap<String, f64>,
}

/// Whether `name` can name a metric: letters, digits, `_`, `.`, `/`, `-` (Keras's
/// `val_accuracy`, TensorBoard's `train/loss`), not starting with a digit or punctuation.
pub fn valid_metric_name(name: &str) -> bool {
    name.len() <= 128
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
}

/// The points of a `metrics.jsonl`. Python's `json.dumps` writes NaN and infinities as
/// bare `NaN`/`Infinity`, which JSON lacks: they are read as those numbers (as are the
/// strings `"NaN"`, `"Infinity"` and `"-Infinity"`), so a loss that diverged is seen as
/// such and does not hide the line's other metrics.
pub fn parse_jsonl(text: &str) -> Vec<Point> {
    text.lines()
        .filter_map(|line| jsonl_point(line.trim()))
        .collect()
}

fn jsonl_point(line: &str) -> Option<Point> {
    if !line.starts_with('{') {
        return None;
    }
    let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
        .or_else(|_| serde_json::from_str(&without_non_finite(line)))
        .ok()?;
    let mut point = Point::default();
    for (name, value) in object {
        let number = match &value {
            serde_json::Value::String(text) => non_finite(text),
            _ => value.as_f64(),
        };
        let Some(number) = number else {
            continue;
        };
        // `epoch` and `step` place a report: only a finite one does.
        if matches!(name.as_str(), "epoch" | "step") && !number.is_finite() {
            continue;
        }
        point.add(&name, number);
    }
    (!point.is_empty()).then_some(point)
}

/// The number a non-finite word stands for (`NaN`, `Infinity`, `-Infinity`, or what
/// `without_non_finite` made of them), or none.
fn non_finite(text: &str) -> Option<f64> {
    match text.trim_start_matches(NON_FINITE_MARK) {
        "NaN" | "nan" => Some(f64::NAN),
        "Infinity" | "inf" => Some(f64::INFINITY),
        "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// What marks a non-finite word made a string by `without_non_finite`.
const NON_FINITE_MARK: char = '\u{0}';

/// `line` with the bare words `NaN`, `Infinity` and `-Infinity` outside strings made
/// strings (`non_finite` reads them back).
fn without_non_finite(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if let Some(word) = ["-Infinity", "Infinity", "NaN"]
            .iter()
            .find(|word| rest.starts_with(**word))
        {
            out.push_str(&format!("\"\\u0000{word}\""));
            rest = &rest[word.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The longest line of a report file that is read as one: a longer one (a progress bar
/// redrawn with `\r` and never ended, a blob) is no report, and is skipped to its end
/// rather than read again each time the file grows.
pub const MAX_REPORT_LINE: usize = 1 << 20;

/// A running trial's report file (`metrics.jsonl` or `stdout.log`) read as it grows: each
/// read takes only the whole lines appended since the last, so a trial that reports every
/// step costs each look only its new lines, never its whole file again, and the points
/// are handed on, not kept. Up to `limit` bytes are taken (`METRICS_READ_LIMIT`, as a
/// whole read). A file found shorter than what was taken was written anew, and is read
/// again from its start. A line not ended yet waits for its end (a half-written
/// `val_accuracy=0.` is never read as 0).
#[derive(Debug, Clone)]
pub struct Tail {
    limit: u64,
    /// Bytes of the file taken: whole lines, and lines skipped as too long.
    taken: u64,
    /// What was taken ends inside a line too long to read: skipped to its end.
    skipping: bool,
    /// How many points the lines taken had.
    count: usize,
}

impl Tail {
    /// A file not read yet, of which at most `limit` bytes are taken.
    pub fn new(limit: u64) -> Tail {
        Tail {
            limit,
            taken: 0,
            skipping: false,
            count: 0,
        }
    }

    /// How many points the file had so far (since it was last written anew).
    pub fn count(&self) -> usize {
        self.count
    }

    /// Where the next read of the file, now `length` bytes long, starts and how many
    /// bytes it may take; none when nothing new can be taken.
    pub fn next_read(&mut self, length: u64) -> Option<(u64, u64)> {
        if length < self.taken {
            *self = Tail::new(self.limit);
        }
        (length > self.taken && self.taken < self.limit)
            .then(|| (self.taken, self.limit - self.taken))
    }

    /// Takes `bytes`, read from where `next_read` said: the points of its whole lines
    /// (`parse`).
    pub fn take(&mut self, bytes: &[u8], parse: fn(&str) -> Vec<Point>) -> Vec<Point> {
        let mut start = 0;
        if self.skipping {
            let Some(end) = bytes.iter().position(|&byte| byte == b'\n') else {
                self.taken += bytes.len() as u64;
                return Vec::new();
            };
            start = end + 1;
            self.skipping = false;
        }
        let rest = &bytes[start..];
        let whole = rest
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |end| end + 1);
        let added = parse(&String::from_utf8_lossy(&rest[..whole]));
        self.count += added.len();
        self.taken += (start + whole) as u64;
        // An unended line that can never be a report, or one the limit cuts: skipped.
        let open = rest.len() - whole;
        if open >= MAX_REPORT_LINE || self.taken + open as u64 >= self.limit {
            self.taken += open as u64;
            self.skipping = true;
        }
        added
    }
}

/// The objective's value as `objective.use` picks it once `values` (in report order) came
/// after the reports that gave `so_far`: a running trial's, read a look at a time, is
/// the one `MetricsSummary::pick` gives of all its reports.
pub fn pick_on(
    objective: &Objective,
    so_far: Option<f64>,
    mut values: impl DoubleEndedIterator<Item = f64>,
) -> Option<f64> {
    match objective.pick {
        Pick::Last => values.next_back().or(so_far),
        Pick::Best => so_far
            .into_iter()
            .chain(values)
            .reduce(|best, value| objective.mode.better_of(best, value)),
    }
}

/// The points of a trial's stdout: every line made only of `name=value` pairs (split by
/// spaces or commas) whose values are all numbers, such as `epoch=3 val_accuracy=0.91`.
pub fn parse_stdout(text: &str) -> Vec<Point> {
    text.lines().filter_map(stdout_point).collect()
}

fn stdout_point(line: &str) -> Option<Point> {
    let mut point = Point::default();
    for pair in line.split([' ', '\t', ',']).filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=')?;
        if !valid_metric_name(name) {
            return None;
        }
        let number: f64 = value.parse().ok()?;
        if matches!(name, "epoch" | "step") && !number.is_finite() {
            return None;
        }
        point.add(name, number);
    }
    (!point.is_empty()).then_some(point)
}

impl Point {
    /// Where the report places its values on a curve: its epoch, else its step, else its
    /// number from 1 (`index`: from 0, among the trial's reports).
    pub fn progress(&self, index: usize) -> f64 {
        self.epoch.or(self.step).unwrap_or((index + 1) as f64)
    }

    fn add(&mut self, name: &str, number: f64) {
        match name {
            "epoch" => self.epoch = Some(number),
            "step" => self.step = Some(number),
            _ if valid_metric_name(name) => {
                self.values.insert(name.to_string(), number);
            }
            _ => {}
        }
    }

    fn is_empty(&self) -> bool {
        self.epoch.is_none() && self.step.is_none() && self.values.is_empty()
    }
}

/// What a trial's reports so far say of the objective's metric.
#[derive(Debug, Clone, PartialEq)]
pub enum FirstReports {
    /// One of them has it.
    Objective,
    /// None has it, but one has a metric named like it (`val_acc` for `val_accuracy`): a
    /// misspelling, in the file or the script. Every metric they have, by name.
    Misspelled(Vec<String>),
    /// None has it nor one like it (nothing yet, or other metrics only: a training loss
    /// each step, the objective each epoch).
    Other,
}

/// Whether `points`, a trial's reports so far, have `metric` or a misspelling of it.
pub fn first_reports(metric: &str, points: &[Point]) -> FirstReports {
    if points.iter().any(|point| point.values.contains_key(metric)) {
        return FirstReports::Objective;
    }
    let reported: std::collections::BTreeSet<&str> = points
        .iter()
        .flat_map(|point| point.values.keys().map(String::as_str))
        .collect();
    match crate::input::closest(metric, reported.iter().copied()) {
        Some(_) => FirstReports::Misspelled(reported.into_iter().map(String::from).collect()),
        None => FirstReports::Other,
    }
}

/// A trial's metrics, summed up.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MetricsSummary {
    /// Lines read.
    pub points: usize,
    /// Distinct `epoch` values, when the trial reports epochs.
    pub epochs: Option<usize>,
    /// Each metric's curve: (x, value), x the epoch, else the step, else the point's
    /// number from 1, in report order.
    pub curves: BTreeMap<String, Vec<(f64, f64)>>,
    /// Where each value of each curve was reported (the same order as `curves`).
    #[serde(skip)]
    pub places: BTreeMap<String, Vec<Place>>,
}

/// Where on a trial's curve a value was reported: the `epoch` and `step` of its line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Place {
    pub epoch: Option<f64>,
    pub step: Option<f64>,
}

impl Place {
    /// `epoch 2`, `step 300`, or nothing when the line said neither.
    pub fn describe(&self) -> Option<String> {
        match (self.epoch, self.step) {
            (Some(epoch), _) => Some(format!("epoch {}", number_text(epoch))),
            (None, Some(step)) => Some(format!("step {}", number_text(step))),
            (None, None) => None,
        }
    }
}

/// The objective's value of one trial, as `objective.use` picks it, and where it was
/// reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Picked {
    pub value: f64,
    pub place: Place,
}

impl MetricsSummary {
    /// The summary of `points`, in one pass: a trial may report a million epochs.
    pub fn of(points: &[Point]) -> MetricsSummary {
        let mut curves: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        let mut places: BTreeMap<String, Vec<Place>> = BTreeMap::new();
        let mut epochs: HashSet<u64> = HashSet::new();
        for (index, point) in points.iter().enumerate() {
            let x = point.progress(index);
            if let Some(epoch) = point.epoch {
                epochs.insert(number_key(epoch));
            }
            for (name, value) in &point.values {
                curves.entry(name.clone()).or_default().push((x, *value));
                places.entry(name.clone()).or_default().push(Place {
                    epoch: point.epoch,
                    step: point.step,
                });
            }
        }
        MetricsSummary {
            points: points.len(),
            epochs: (!epochs.is_empty()).then_some(epochs.len()),
            curves,
            places,
        }
    }

    /// The objective's value as `objective.use` picks it: the best report of its metric
    /// (the first of equal ones) or the last, with where it was reported.
    pub fn pick(&self, objective: &Objective) -> Option<Picked> {
        let curve = self.curves.get(&objective.metric)?;
        let places = self.places.get(&objective.metric);
        let index = match objective.pick {
            Pick::Last => curve.len().checked_sub(1)?,
            Pick::Best => (0..curve.len()).reduce(|best, index| {
                if objective.mode.better(curve[index].1, curve[best].1) {
                    index
                } else {
                    best
                }
            })?,
        };
        Some(Picked {
            value: curve[index].1,
            place: places
                .and_then(|places| places.get(index))
                .copied()
                .unwrap_or_default(),
        })
    }

    /// The best value of the objective's metric (the highest for `max`).
    pub fn best(&self, objective: &Objective) -> Option<f64> {
        self.curves
            .get(&objective.metric)?
            .iter()
            .map(|(_, value)| *value)
            .reduce(|best, value| objective.mode.better_of(best, value))
    }

    /// The last reported value of `metric`.
    pub fn last(&self, metric: &str) -> Option<f64> {
        self.curves.get(metric)?.last().map(|(_, value)| *value)
    }
}

/// `0.9312`, `1.234e-5`: four decimals where that reads well, else an exponent.
pub fn number_text(value: f64) -> String {
    if value == 0.0 || (1e-3..1e6).contains(&value.abs()) {
        let text = format!("{value:.4}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        text.to_string()
    } else {
        format!("{value:.3e}")
    }
}

#[cfg(test)]
mod tests;
