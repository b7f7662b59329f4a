//! Early stopping: which running trials to stop because they are clearly losing, judged
//! on the objective each one reports as it trains (`early_stop:` of the sweep file).
//!
//! - **ASHA**, asynchronous successive halving (Li et al., "A System for Massively
//!   Parallel Hyperparameter Tuning", MLSys 2020), as Ray Tune's `ASHAScheduler` behaves:
//!   rungs at `grace`, `grace × reduction`, `grace × reduction²`, ... below `max_epochs`.
//!   A trial reaching a rung is compared with the values recorded there before it and
//!   goes on only when it is in their top `1 / reduction` (at or above their
//!   `1 - 1 / reduction` quantile); the first trial at a rung always goes on, and
//!   a stopped trial's value stays recorded. With `cutoff: rank`, as Optuna's
//!   `SuccessiveHalvingPruner` (and the ASHA paper's top-k) rank: a trial goes on when
//!   its value is among the top `max(1, n / reduction)` (rounded down) of the `n` values
//!   recorded there, its own included: until `2 × reduction` trials reached a rung, only
//!   one that beats all before it goes on, where the quantile lets through one that
//!   beats most. A value that is not finite is stopped there whatever came before. Over several `brackets` (asynchronous
//!   Hyperband, Ray Tune's `AsyncHyperBandScheduler`): bracket `b` (from 0) has its own
//!   rungs from `grace × reduction^b` and its own recorded values, and trial `i` (from 0,
//!   trial order) is judged in bracket `i mod brackets`, in turn, not drawn as Ray Tune
//!   does: a resumed sweep puts every trial in the same bracket, and the brackets share
//!   the trials evenly (bench/search/replay.md: a random draw lost a late bloomer in two
//!   seeds of five).
//! - **The median stopping rule** (Golovin et al., "Google Vizier", KDD 2017): from
//!   `grace` on, a trial whose best value so far is worse than the median of the other
//!   trials' running averages up to the same epoch is stopped, once at least
//!   `min_trials` others reached that epoch.
//!
//! A trial's progress is its reports' `epoch`, else their `step`, else the report's
//! number from 1 (the x of the report's curves). Every judgement that counts is journaled
//! (`Judgement`) before the runner acts on it, and a judge given the journal's
//! judgements again (`Judge::recorded`) judges nothing twice: a resumed sweep makes the
//! same decisions and never restarts a trial it stopped. Pure.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};

use super::metrics::{number_key, number_text, Point};
use super::{Mode, Objective};
use crate::input::source::Location;

/// `early_stop:` of a sweep file, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlyStop {
    pub rule: Rule,
    /// Where `early_stop:` is, for errors found later (`--k8s`).
    pub location: Location,
}

/// The rule and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Asynchronous successive halving.
    Asha {
        /// The epochs (or steps) a full trial reports.
        max_epochs: u32,
        /// The first rung: no trial is stopped before it.
        grace: u32,
        /// Each rung keeps the top `1 / reduction` (at least 2).
        reduction: u32,
        /// Brackets taken in turn (at least 1): bracket `b`'s first rung is
        /// `grace × reduction^b`.
        brackets: u32,
        /// How a rung's top `1 / reduction` is told.
        cutoff: Cutoff,
    },
    /// The median stopping rule.
    Median {
        /// No trial is judged before this epoch.
        grace: u32,
        /// Others that must have reached an epoch before a trial is judged there.
        min_trials: u32,
        /// Reports at or beyond it are not judged (the trial is finishing anyway).
        max_epochs: Option<u32>,
    },
}

/// How an ASHA rung tells its top `1 / reduction` (`cutoff:` of `early_stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cutoff {
    /// At or above the `1 - 1 / reduction` quantile of the values recorded before, linearly
    /// interpolated (Ray Tune's `ASHAScheduler`).
    #[default]
    Quantile,
    /// Among the top `max(1, n / reduction)` of the `n` values recorded, its own included
    /// (Optuna's `SuccessiveHalvingPruner`).
    Rank,
}

impl Rule {
    /// `asha`, `median`: as in the sweep file and the journal.
    pub fn name(&self) -> &'static str {
        match self {
            Rule::Asha { .. } => "asha",
            Rule::Median { .. } => "median",
        }
    }

    /// ASHA's rungs of its first bracket, lowest first (see `bracket_rungs`). None for
    /// the median rule.
    pub fn rungs(&self) -> Vec<u32> {
        self.bracket_rungs(0)
    }

    /// ASHA's rungs of `bracket` (from 0), lowest first: `grace × reduction^(b + k)` below
    /// `max_epochs` (a trial at `max_epochs` is done; it is never judged there). None for
    /// the median rule.
    pub fn bracket_rungs(&self, bracket: u32) -> Vec<u32> {
        let Rule::Asha {
            max_epochs,
            grace,
            reduction,
            ..
        } = *self
        else {
            return Vec::new();
        };
        let reduction = u64::from(reduction.max(2));
        let mut rung = u64::from(grace.max(1));
        for _ in 0..bracket {
            if rung >= u64::from(max_epochs) {
                return Vec::new();
            }
            rung *= reduction;
        }
        let mut rungs = Vec::new();
        while rung < u64::from(max_epochs) {
            rungs.push(rung as u32);
            rung *= reduction;
        }
        rungs
    }

    /// ASHA's brackets (1 for the median rule).
    pub fn brackets(&self) -> u32 {
        match *self {
            Rule::Asha { brackets, .. } => brackets.max(1),
            Rule::Median { .. } => 1,
        }
    }

    /// The bracket trial `index` (from 0, trial order) is judged in: in turn.
    pub fn bracket_of(&self, index: usize) -> u32 {
        (index % self.brackets() as usize) as u32
    }

    /// `asha (rungs at epoch 1, 3 of 9, each keeps the top 1/3)`, `asha over 2 brackets
    /// taken in turn (rungs at epoch 1, 3, 9 | 3, 9 of 12, ...)`, `median (from epoch 2,
    /// against at least 3 other trials)`: for the dry run and the report.
    pub fn describe(&self) -> String {
        match *self {
            Rule::Asha {
                max_epochs,
                reduction,
                cutoff,
                ..
            } => {
                let brackets = self.brackets();
                let rungs: Vec<String> = (0..brackets)
                    .map(|bracket| {
                        let rungs: Vec<String> = self
                            .bracket_rungs(bracket)
                            .iter()
                            .map(u32::to_string)
                            .collect();
                        match rungs.is_empty() {
                            true => "none".to_string(),
                            false => rungs.join(", "),
                        }
                    })
                    .collect();
                let over = match brackets {
                    1 => String::new(),
                    n => format!(" over {n} brackets taken in turn"),
                };
                let by = match cutoff {
                    Cutoff::Quantile => "",
                    Cutoff::Rank => " by rank",
                };
                format!(
                    "asha{over} (rungs at epoch {} of {max_epochs}, each keeps the top 1/{reduction}{by})",
                    rungs.join(" | ")
                )
            }
            Rule::Median {
                grace, min_trials, ..
            } => format!("median (from epoch {grace}, against at least {min_trials} other trials)"),
        }
    }
}

/// What a trial's progress is counted in: its reports' `epoch`, `step`, or their number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Epoch,
    Step,
    Report,
}

impl Unit {
    fn of(point: &Point) -> Unit {
        match (point.epoch, point.step) {
            (Some(_), _) => Unit::Epoch,
            (None, Some(_)) => Unit::Step,
            (None, None) => Unit::Report,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Epoch => "epoch",
            Unit::Step => "step",
            Unit::Report => "report",
        }
    }
}

/// One judgement of one trial, as the journal keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Where the trial was judged: the report's epoch (step, number).
    pub at: f64,
    pub unit: Unit,
    /// ASHA: the rung the report reached (its value is recorded there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rung: Option<u32>,
    /// ASHA over several brackets: the trial's bracket (from 0); none with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bracket: Option<u32>,
    /// ASHA: the trial's value at `at`; median: its best value up to `at`. NaN when it
    /// was not finite (the journal's `null`).
    #[serde(with = "maybe_finite")]
    pub value: f64,
    /// What the value had to reach (ASHA: the rung's quantile; median: the others'
    /// median); none when there was nothing yet to compare with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cutoff: Option<f64>,
    /// The trial is stopped.
    pub stop: bool,
}

impl Judgement {
    /// `epoch 2: 0.31 < rung 0.55`, `epoch 4: 0.82 > median 0.61` (a loss): why the
    /// trial was stopped, or where it stood, in the objective's own values.
    pub fn reason(&self) -> String {
        let at = format!("{} {}", self.unit.as_str(), number_text(self.at));
        let against = if self.rung.is_some() {
            "rung"
        } else {
            "median"
        };
        if !self.value.is_finite() {
            return format!("{at}: {}, diverged", number_text(self.value));
        }
        match self.cutoff.filter(|cutoff| cutoff.is_finite()) {
            Some(cutoff) => {
                let sign = if self.value < cutoff {
                    "<"
                } else if self.value > cutoff {
                    ">"
                } else {
                    "="
                };
                let (value, cutoff) = distinct_texts(self.value, cutoff);
                format!("{at}: {value} {sign} {against} {cutoff}")
            }
            None => format!("{at}: {}", number_text(self.value)),
        }
    }
}

#[cfg(test)]
impl Judgement {
    /// ASHA's stop at the rung at `epoch` (one bracket): `value` below `cutoff`. For the
    /// tests of what shows a trial stopped early.
    pub(crate) fn asha_stop(epoch: u32, value: f64, cutoff: f64) -> Judgement {
        Judgement {
            at: f64::from(epoch),
            unit: Unit::Epoch,
            rung: Some(epoch),
            bracket: None,
            value,
            cutoff: Some(cutoff),
            stop: true,
        }
    }
}

/// `a` and `b` as text, with as many digits as it takes to tell two different numbers
/// apart (`0.19837 < 0.19843`, never `0.1984 < 0.1984`).
fn distinct_texts(a: f64, b: f64) -> (String, String) {
    let (short_a, short_b) = (number_text(a), number_text(b));
    if a == b || short_a != short_b {
        return (short_a, short_b);
    }
    (5..=17)
        .map(|digits| (format!("{a:.digits$}"), format!("{b:.digits$}")))
        .find(|(a, b)| a != b)
        .map(|(a, b)| {
            let trim = |text: String| text.trim_end_matches('0').trim_end_matches('.').to_string();
            (trim(a), trim(b))
        })
        .unwrap_or((format!("{a:e}"), format!("{b:e}")))
}

/// The judge of one sweep run: what the rule has seen and recorded so far. A trial may
/// report a million epochs: what is looked up for each report is kept in sets, and each
/// curve is sorted once (`Curve`), so judging is never quadratic in the reports.
#[derive(Debug, Clone)]
pub struct Judge {
    rule: Rule,
    /// The rule's rungs (ASHA), lowest first, by bracket.
    rule_rungs: Vec<Vec<u32>>,
    mode: Mode,
    metric: String,
    /// ASHA: by bracket and rung, each trial's value recorded there, in the order they
    /// came.
    rungs: BTreeMap<(u32, u32), Vec<(String, f64)>>,
    /// ASHA: the highest rung each trial has a value recorded at.
    reached: BTreeMap<String, u32>,
    /// The progress each trial was judged at (journaled; `metrics::number_key`), by trial.
    judged: BTreeMap<String, HashSet<u64>>,
    /// Trials a judgement stopped: never judged again.
    stopped: BTreeSet<String>,
    /// Every trial's curve of the objective's metric so far.
    curves: BTreeMap<String, Curve>,
    /// How many of each trial's points were taken into its curve: each look takes only
    /// the points that came since.
    fed: BTreeMap<String, usize>,
}

/// One trial's curve of the objective as scores (higher is better), ordered by progress
/// (reports of equal progress in report order), with the running sums and bests the
/// median rule asks for at any progress. Reports come in order of progress: each is
/// added at the end in constant time (one out of order costs the reports after it).
#[derive(Debug, Clone, Default)]
struct Curve {
    /// Progress, ascending.
    xs: Vec<f64>,
    /// The scores, in `xs`'s order.
    scores: Vec<f64>,
    /// `sums[i]`: the scores of the first `i + 1` reports (in `xs`'s order) added up.
    sums: Vec<f64>,
    /// `bests[i]`: the highest score among the first `i + 1`.
    bests: Vec<f64>,
}

impl Curve {
    /// Adds (progress, score) pairs in report order.
    fn extend(&mut self, points: impl Iterator<Item = (f64, f64)>) {
        for (x, score) in points {
            // After the reports of equal progress: they keep their order.
            let at = self.xs.partition_point(|seen| seen.total_cmp(&x).is_le());
            self.xs.insert(at, x);
            self.scores.insert(at, score);
            self.sums.truncate(at);
            self.bests.truncate(at);
            let (mut sum, mut best) = match at.checked_sub(1) {
                Some(last) => (self.sums[last], self.bests[last]),
                None => (0.0, f64::NEG_INFINITY),
            };
            for score in &self.scores[at..] {
                sum += score;
                best = best.max(*score);
                self.sums.push(sum);
                self.bests.push(best);
            }
        }
    }

    /// How many reports are at or before `at`.
    fn up_to(&self, at: f64) -> usize {
        self.xs.partition_point(|x| *x <= at)
    }

    /// The best score of the reports at or before `at`.
    fn best_up_to(&self, at: f64) -> Option<f64> {
        self.up_to(at).checked_sub(1).map(|last| self.bests[last])
    }

    /// The mean score of the reports at or before `at`.
    fn average_up_to(&self, at: f64) -> Option<f64> {
        let count = self.up_to(at);
        count
            .checked_sub(1)
            .map(|last| self.sums[last] / count as f64)
    }

    /// Whether a report reached `at`.
    fn reaches(&self, at: f64) -> bool {
        self.xs.last().is_some_and(|last| *last >= at)
    }
}

impl Judge {
    pub fn new(rule: Rule, objective: &Objective) -> Judge {
        Judge {
            rule,
            rule_rungs: (0..rule.brackets())
                .map(|bracket| rule.bracket_rungs(bracket))
                .collect(),
            mode: objective.mode,
            metric: objective.metric.clone(),
            rungs: BTreeMap::new(),
            reached: BTreeMap::new(),
            judged: BTreeMap::new(),
            stopped: BTreeSet::new(),
            curves: BTreeMap::new(),
            fed: BTreeMap::new(),
        }
    }

    /// A judgement the journal holds: it is not made again, and an ASHA rung keeps its
    /// value.
    pub fn recorded(&mut self, trial: &str, judgement: &Judgement) {
        self.judged
            .entry(trial.to_string())
            .or_default()
            .insert(number_key(judgement.at));
        if judgement.stop {
            self.stopped.insert(trial.to_string());
        }
        if let Some(rung) = judgement.rung {
            let reached = self.reached.entry(trial.to_string()).or_insert(rung);
            *reached = rung.max(*reached);
            self.rungs
                .entry((judgement.bracket.unwrap_or(0), rung))
                .or_default()
                .push((trial.to_string(), judgement.value));
        }
    }

    /// What `trial` reported so far (its whole metrics, read again), for comparisons with
    /// other trials; judges nothing. For trials that ended, and on resume.
    pub fn seen(&mut self, trial: &str, points: &[Point]) {
        self.feed(trial, 0, points);
    }

    /// Takes `trial`'s reports from number `first` (from 0) on into its curve: the
    /// objective's (progress, value, unit) of those, in report order. A `first` below the
    /// reports taken before: they started over (a new attempt, a file written anew), and
    /// so does its curve.
    fn feed(&mut self, trial: &str, first: usize, points: &[Point]) -> Vec<(f64, f64, Unit)> {
        let fed = self.fed.entry(trial.to_string()).or_default();
        if first < *fed {
            self.curves.remove(trial);
        }
        *fed = first + points.len();
        let new: Vec<(f64, f64, Unit)> = points
            .iter()
            .enumerate()
            .filter_map(|(offset, point)| {
                let value = *point.values.get(&self.metric)?;
                Some((point.progress(first + offset), value, Unit::of(point)))
            })
            .collect();
        let mode = self.mode;
        self.curves
            .entry(trial.to_string())
            .or_default()
            .extend(new.iter().map(|(x, value, _)| (*x, score(mode, *value))));
        new
    }

    /// The judgements due for the running `trial` (`index` from 0, in trial order: its
    /// ASHA bracket), given everything it reported so far, in report order; the last one
    /// stops it when any does. Each is to be journaled before the runner acts on it. Only
    /// the reports that came since the last look are judged: a report once looked at is
    /// judged then or never (a median judgement is made at every report from `grace`, an
    /// ASHA one at the first report at or past a rung).
    pub fn judge(&mut self, trial: &str, index: usize, points: &[Point]) -> Vec<Judgement> {
        let fed = self.fed.get(trial).copied().unwrap_or(0);
        let first = if points.len() < fed { 0 } else { fed };
        self.judge_reports(trial, index, first, &points[first..])
    }

    /// `judge` given only the reports that came since the last look: the trial's reports
    /// from number `first` (from 0) on (`first` 0 again: they started over).
    pub fn judge_reports(
        &mut self,
        trial: &str,
        index: usize,
        first: usize,
        points: &[Point],
    ) -> Vec<Judgement> {
        let curve = self.feed(trial, first, points);
        let mut made = Vec::new();
        if self.stopped.contains(trial) {
            return made;
        }
        for (at, value, unit) in curve {
            let judgement = match self.rule {
                Rule::Asha { .. } => self.asha(trial, self.rule.bracket_of(index), at, value, unit),
                Rule::Median {
                    grace,
                    min_trials,
                    max_epochs,
                } => self.median(trial, at, unit, grace, min_trials, max_epochs),
            };
            if let Some(judgement) = judgement {
                self.recorded(trial, &judgement);
                let stop = judgement.stop;
                made.push(judgement);
                if stop {
                    break;
                }
            }
        }
        made
    }

    fn was_judged(&self, trial: &str, at: f64) -> bool {
        self.judged
            .get(trial)
            .is_some_and(|judged| judged.contains(&number_key(at)))
    }

    /// `value` as higher-is-better.
    fn score(&self, value: f64) -> f64 {
        score(self.mode, value)
    }

    /// The objective's value of `score`: NaN for the score of one that diverged.
    fn unscore(&self, score: f64) -> f64 {
        match (score.is_finite(), self.mode) {
            (false, _) => f64::NAN,
            (true, Mode::Max) => score,
            (true, Mode::Min) => -score,
        }
    }

    fn asha(
        &self,
        trial: &str,
        bracket: u32,
        at: f64,
        value: f64,
        unit: Unit,
    ) -> Option<Judgement> {
        let Rule::Asha {
            max_epochs,
            reduction,
            cutoff: by,
            ..
        } = self.rule
        else {
            return None;
        };
        if at >= f64::from(max_epochs) {
            return None;
        }
        // The highest rung the report reached, above every rung the trial was recorded at.
        let recorded_up_to = self.reached.get(trial).copied();
        let rung = self
            .rule_rungs
            .get(bracket as usize)?
            .iter()
            .copied()
            .filter(|rung| f64::from(*rung) <= at && Some(*rung) > recorded_up_to)
            .max()?;
        let scores: Vec<f64> = self
            .rungs
            .get(&(bracket, rung))
            .map(|values| values.iter().map(|(_, v)| self.score(*v)).collect())
            .unwrap_or_default();
        let score = self.score(value);
        let (cutoff, stop) = match by {
            Cutoff::Quantile => {
                let cutoff = quantile(&scores, 1.0 - 1.0 / f64::from(reduction));
                (cutoff, cutoff.is_some_and(|cutoff| score < cutoff))
            }
            Cutoff::Rank => {
                let cutoff = ranked_cutoff(&scores, score, reduction);
                (
                    cutoff,
                    !score.is_finite() || cutoff.is_some_and(|cutoff| score < cutoff),
                )
            }
        };
        Some(Judgement {
            at,
            unit,
            rung: Some(rung),
            bracket: (self.rule_rungs.len() > 1).then_some(bracket),
            value,
            cutoff: cutoff.map(|score| self.unscore(score)),
            stop,
        })
    }

    fn median(
        &self,
        trial: &str,
        at: f64,
        unit: Unit,
        grace: u32,
        min_trials: u32,
        max_epochs: Option<u32>,
    ) -> Option<Judgement> {
        if at < f64::from(grace)
            || max_epochs.is_some_and(|max| at >= f64::from(max))
            || self.was_judged(trial, at)
        {
            return None;
        }
        let best = self.curves.get(trial)?.best_up_to(at)?;
        let mut averages: Vec<f64> = self
            .curves
            .iter()
            .filter(|(name, curve)| name.as_str() != trial && curve.reaches(at))
            .filter_map(|(_, curve)| curve.average_up_to(at))
            .collect();
        let cutoff = if averages.len() >= min_trials.max(1) as usize {
            averages.sort_by(f64::total_cmp);
            quantile(&averages, 0.5)
        } else {
            None
        };
        Some(Judgement {
            at,
            unit,
            rung: None,
            bracket: None,
            value: self.unscore(best),
            cutoff: cutoff.map(|score| self.unscore(score)),
            stop: cutoff.is_some_and(|cutoff| best < cutoff),
        })
    }
}

/// `value` as higher-is-better under `mode`; a value that is not finite (a trial that
/// diverged: NaN, an infinite loss) scores below every finite one.
fn score(mode: Mode, value: f64) -> f64 {
    if !value.is_finite() {
        return f64::NEG_INFINITY;
    }
    match mode {
        Mode::Max => value,
        Mode::Min => -value,
    }
}

/// A judgement's value in the journal: JSON has no NaN nor infinity, so those are
/// written `null` and read back as NaN (a value that diverged, whichever it was).
mod maybe_finite {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        match value.is_finite() {
            true => serializer.serialize_f64(*value),
            false => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
    }
}

/// `cutoff: rank`'s cutoff for `score` arriving at a rung where `before` were recorded
/// (scores, higher is better): the `k`-th best of them all, its own included, `k` being
/// `max(1, n / reduction)` of the `n`; none when it is the first there with a finite
/// value (it goes on).
fn ranked_cutoff(before: &[f64], score: f64, reduction: u32) -> Option<f64> {
    // A value that diverged was stopped, not ranked (as Optuna prunes a NaN before it
    // records it).
    let mut all: Vec<f64> = before.iter().copied().filter(|s| s.is_finite()).collect();
    if all.is_empty() {
        return None;
    }
    all.push(score);
    all.sort_by(|a, b| b.total_cmp(a));
    let keep = (all.len() / reduction.max(1) as usize).max(1);
    Some(all[keep - 1])
}

/// The `q` quantile of `values` (0 ≤ q ≤ 1), interpolated linearly between the two
/// nearest ranks as numpy's `percentile` does (what Ray Tune's ASHA uses); none of none.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lower = position.floor() as usize;
    let upper = position.ceil() as usize;
    let fraction = position - lower as f64;
    let (low, high) = (sorted[lower], sorted[upper]);
    if fraction == 0.0 || low == high {
        return Some(low);
    }
    // Between a diverged trial's score (minus infinity) and a finite one, no
    // interpolation makes a number: the finite one, which every diverged trial is below.
    if !low.is_finite() {
        return Some(high);
    }
    Some(low + (high - low) * fraction)
}

#[cfg(test)]
mod tests;
