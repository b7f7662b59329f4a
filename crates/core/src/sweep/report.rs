//! The sweep report: one self-contained HTML page (inline CSS and SVG, no script, no
//! address of any kind to load) that shows a sweep at a glance: what it optimises and
//! how far it got, the best trial with its params and command line, a chart of the
//! objective's value per trial (as `objective.use` picks it), that value by each param,
//! each trial's curve of the objective's metric (and of `loss`/`val_loss`) over epochs,
//! and the results table. Only a done trial is drawn as an ordinary one: every other
//! status has its mark in every chart (`mark`) and is left out of the means. The page is
//! written with maud's `html!`, which escapes every spliced value (param values,
//! commands, trial ids, metric names) by construction: only the constant style sheet
//! goes in unescaped. Pure: the caller reads the sweep's folder and passes the results,
//! each trial's metrics, how the search makes each param (`param_scales`) and the time
//! of writing as text.

mod chart;
mod mark;
mod scale;

use std::collections::{BTreeMap, BTreeSet};

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::metrics::MetricsSummary;
use super::results::{number_text, ResultRow, Results};
use super::search::{Distribution, Search};
use super::trials::command_line;
use super::{Mode, ParamValue, Pick};

/// The best trial's colour in every chart.
pub const BEST_COLOR: &str = "#e4572e";
/// The other trials' dots in the objective chart.
pub const POINT_COLOR: &str = "#2e86ab";
/// A trial without the objective's value (queued, running, stopped).
const MISSING_COLOR: &str = "#8a949e";
/// The curves of the trials ranked right after the best.
const PALETTE: [&str; 7] = [
    "#2e86ab", "#3bb273", "#7768ae", "#f3a712", "#1b998b", "#c2649a", "#5d6d7e",
];
/// The curves of every trial past the palette.
const OTHER_COLOR: &str = "#a3acb5";
/// Charted metrics when the sweep has no objective.
const MAX_CHARTS: usize = 4;

/// How a trial is drawn in every curve chart: the best in its own colour, the next ones
/// in the palette's, the rest in grey, so one trial keeps its colour from chart to chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Best,
    Palette(usize),
    Other,
}

impl Look {
    fn color(self) -> &'static str {
        match self {
            Look::Best => BEST_COLOR,
            Look::Palette(index) => PALETTE[index % PALETTE.len()],
            Look::Other => OTHER_COLOR,
        }
    }

    fn width(self) -> &'static str {
        match self {
            Look::Best => "3.5",
            Look::Palette(_) => "2",
            Look::Other => "1.25",
        }
    }

    fn opacity(self) -> &'static str {
        match self {
            Look::Other => "0.6",
            _ => "0.9",
        }
    }

    /// Drawing order: grey lines below, the best on top.
    fn layer(self) -> (u8, std::cmp::Reverse<usize>) {
        match self {
            Look::Other => (0, std::cmp::Reverse(0)),
            Look::Palette(index) => (1, std::cmp::Reverse(index)),
            Look::Best => (2, std::cmp::Reverse(0)),
        }
    }
}

/// How a sweep's search makes a param's values, which decides the x axis of its chart:
/// plain data, made from the sweep file's search by `param_scales`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamScale {
    /// Drawn from a range, evenly (`uniform`, `int`): a linear axis.
    Linear,
    /// Drawn from a range, evenly in its logarithm (`loguniform`): a log axis.
    Log,
    /// Listed numbers (a grid axis, a choice): a numeric axis, on a log scale when they are
    /// positive and span more than a decade.
    Listed,
    /// Listed values that are not all numbers: a column each.
    Categories,
}

/// The scale of each param of `search`, by name (`trials:` lists its values: none, the
/// chart then looks at the values as `Listed` ones).
pub fn param_scales(search: &Search) -> BTreeMap<String, ParamScale> {
    let listed = |values: &[ParamValue]| match values.iter().all(|v| v.as_f64().is_some()) {
        true => ParamScale::Listed,
        false => ParamScale::Categories,
    };
    let drawn = |distribution: &Distribution| match distribution {
        Distribution::Uniform(..) | Distribution::Int(..) => ParamScale::Linear,
        Distribution::LogUniform(..) => ParamScale::Log,
        Distribution::Choice(values) => listed(values),
    };
    match search {
        Search::Grid(axes) => axes
            .iter()
            .map(|(name, values)| (name.clone(), listed(values)))
            .collect(),
        Search::Random { params, .. } | Search::Tpe(super::search::Tpe { params, .. }) => params
            .iter()
            .map(|(name, distribution)| (name.clone(), drawn(distribution)))
            .collect(),
        Search::List(_) => BTreeMap::new(),
    }
}

/// The report of sweep `sweep` as one HTML document. `metrics` holds each trial's summary
/// by trial id; `scales` how the search makes each param (`param_scales`; a param missing
/// there is charted from its values); `generated` says when the report was written
/// (`utc_text`).
pub fn render(
    sweep: &str,
    results: &Results,
    metrics: &BTreeMap<String, MetricsSummary>,
    scales: &BTreeMap<String, ParamScale>,
    generated: &str,
) -> String {
    let looks = looks(results, metrics);
    let charted = charted_metrics(results, metrics);
    // Beside the objective's chart, its metric's curves; below the table, the others.
    // Many trials make the objective's chart as wide as the page: then every chart comes
    // before the (long) table.
    let first_row = match wide(results) {
        true => charted.len(),
        false => charted.len().min(1),
    };
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "sweep " (sweep) ": report" }
                style { (PreEscaped(CSS)) }
            }
            body {
                main {
                    (header(sweep, results, generated))
                    div.charts {
                        (objective_section(results))
                        (params_section(results, scales))
                        @for metric in &charted[..first_row] {
                            (curve_section(metric, results, metrics, &looks))
                        }
                        @if metrics.is_empty() {
                            section.curves.empty {
                                h2 { "Curves" }
                                p.note { "No trial has reported metrics yet (`metrics.jsonl` in its folder, or `name=value` lines on its output)." }
                            }
                        }
                    }
                    (table(results))
                    @if charted.len() > first_row {
                        div.charts {
                            @for metric in &charted[first_row..] {
                                (curve_section(metric, results, metrics, &looks))
                            }
                        }
                    }
                    footer { "Written by tfimg on " (generated) "." }
                }
            }
        }
    };
    page.into_string()
}

/// The sweep's name, objective, counts and best trial.
fn header(sweep: &str, results: &Results, generated: &str) -> Markup {
    // Each status by its word; done, failed, running and queued always, the others when
    // a trial has them.
    let count = |word: &str| {
        results
            .rows
            .iter()
            .filter(|row| row.status.word() == word)
            .count()
    };
    let always = ["done", "failed", "running", "queued"];
    let counts: Vec<(&str, usize)> = [
        "done",
        "failed",
        "diverged",
        "running",
        "queued",
        "stopped",
        "stopped early",
    ]
    .into_iter()
    .map(|word| (word, count(word)))
    .filter(|(word, number)| *number > 0 || always.contains(word))
    .collect();
    html! {
        header {
            h1 { "Sweep " span.name { (sweep) } }
            p.meta {
                @match &results.objective {
                    Some(objective) => {
                        "objective: " strong.metric { (objective.metric) }
                        " (" (objective.mode.as_str()) ", " (direction(objective.mode)) ")"
                    }
                    None => "no objective: trials are listed in order, not ranked",
                }
                " · " (results.rows.len()) " trials · written " (generated)
            }
            ul.counts {
                @for (name, number) in counts {
                    li class=(format!("count {}", name.replace(' ', "-"))) { strong { (number) } " " (name) }
                }
            }
            @if let Some(savings) = results.savings() {
                p.savings { (savings.line()) }
            }
            (best_trial(results))
        }
    }
}

/// `Last val_accuracy`.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn direction(mode: Mode) -> &'static str {
    match mode {
        Mode::Max => "higher is better",
        Mode::Min => "lower is better",
    }
}

fn best_trial(results: &Results) -> Markup {
    let (Some(objective), Some(row)) = (&results.objective, results.best()) else {
        return html! {
            @if let Some(objective) = &results.objective {
                p.note.no-best { "No trial has reported " code { (objective.metric) } " yet." }
            }
        };
    };
    html! {
        section.best-trial {
            h2 {
                "Best trial " span.trial { (row.trial) } ": " (objective.label()) " "
                span.value { (row.ranked().map_or("-".to_string(), number_text)) }
                @if let Some(place) = row.value.and_then(|picked| picked.place.describe()).filter(|_| objective.pick == Pick::Best) {
                    " (" (place) ")"
                }
            }
            @if !row.params.is_empty() {
                dl.params {
                    @for (name, value) in &row.params {
                        div { dt { (name) } dd { (value.text()) } }
                    }
                }
            }
            pre.command { code { (command_line(&row.command)) } }
        }
    }
}

fn objective_section(results: &Results) -> Markup {
    let Some(objective) = &results.objective else {
        return html! {};
    };
    let missing = results
        .rows
        .iter()
        .filter(|row| !row.ranked().is_some_and(f64::is_finite))
        .count();
    let apart = mark::present(
        results
            .rows
            .iter()
            .map(|row| &row.status)
            .filter(|status| !mark::of(status).ordinary()),
    );
    let wide = wide(results);
    let width = if wide { chart::WIDE } else { chart::WIDTH };
    html! {
        section.objective.wide[wide] {
            h2 { (capitalized(&objective.label())) " per trial" }
            @if results.best().is_some() {
                (chart::objective(results, objective, width))
                ul.legend {
                    li { span.swatch.dot style=(format!("background:{BEST_COLOR}")) {} "best trial" }
                    li { span.swatch.dot style=(format!("background:{POINT_COLOR}")) {} "other trials that ran to their end" }
                    @for mark in &apart { (mark.legend()) }
                    @if missing > 0 {
                        li.missing { (missing) " without a value of " (objective.metric) " (none yet, or not a number): their mark on the base line" }
                    }
                }
            } @else {
                p.note { "No trial has reported " code { (objective.metric) } " yet." }
            }
        }
    }
}

/// Whether the objective's chart takes the page's width: past 36 trials.
/// "Which value should I pick": the ranked value against each param that varies.
fn params_section(results: &Results, scales: &BTreeMap<String, ParamScale>) -> Markup {
    let Some(objective) = &results.objective else {
        return html! {};
    };
    let varied: Vec<&String> = results
        .param_names
        .iter()
        .filter(|name| {
            let mut values = results
                .rows
                .iter()
                .filter(|row| row.ranked().is_some() || row.attempt.is_some())
                .filter_map(|row| {
                    row.params
                        .iter()
                        .find(|(param, _)| param == *name)
                        .map(|(_, value)| value.text())
                });
            let first = values.next();
            values.any(|value| Some(value) != first)
        })
        .collect();
    if varied.is_empty() {
        return html! {};
    }
    let drawn = results
        .rows
        .iter()
        .filter(|row| row.ranked().is_some() || row.attempt.is_some());
    let apart = mark::present(
        drawn
            .map(|row| &row.status)
            .filter(|status| !mark::of(status).ordinary()),
    );
    html! {
        section.params-by.wide {
            h2 { (capitalized(&objective.label())) " by param" }
            p.note {
                "Each mark is a trial; where a value repeats, a bar (and its number) is the mean of the trials that ran to their end with that value. Pick the value whose trials rank best."
                @if !apart.is_empty() {
                    " Trials that did not run to their end are drawn apart, with the marks below, and left out of the means."
                }
            }
            div.param-charts {
                @for name in varied {
                    figure.param {
                        figcaption { (name) }
                        (chart::by_param(results, objective, name, scales.get(name.as_str()).copied()))
                    }
                }
            }
            ul.legend {
                li { span.swatch.dot style=(format!("background:{BEST_COLOR}")) {} "best trial" }
                li { span.swatch.dot style=(format!("background:{POINT_COLOR}")) {} "trials that ran to their end" }
                @for mark in &apart { (mark.legend()) }
            }
        }
    }
}

fn wide(results: &Results) -> bool {
    results.objective.is_some() && results.rows.len() > 36
}

/// The objective's metric (when a trial reports it), then `loss` and `val_loss`; without
/// an objective, the first metrics by name.
fn charted_metrics(results: &Results, metrics: &BTreeMap<String, MetricsSummary>) -> Vec<String> {
    let present: BTreeSet<&str> = metrics
        .values()
        .flat_map(|summary| summary.curves.keys().map(String::as_str))
        .collect();
    let mut chosen: Vec<String> = Vec::new();
    let objective = results.objective.as_ref().map(|o| o.metric.as_str());
    let wanted = objective.into_iter().chain(["loss", "val_loss"]);
    for name in wanted.chain(present.iter().copied().filter(|_| objective.is_none())) {
        if present.contains(name) && !chosen.iter().any(|c| c == name) && chosen.len() < MAX_CHARTS
        {
            chosen.push(name.to_string());
        }
    }
    chosen
}

/// The colour of each trial that reported metrics, in table order.
fn looks<'a>(
    results: &'a Results,
    metrics: &BTreeMap<String, MetricsSummary>,
) -> BTreeMap<&'a str, Look> {
    let best = results.best().map(|row| row.trial.as_str());
    let mut next = 0;
    results
        .rows
        .iter()
        .filter(|row| metrics.contains_key(&row.trial))
        .map(|row| {
            let look = if best == Some(row.trial.as_str()) {
                Look::Best
            } else if next < PALETTE.len() {
                next += 1;
                Look::Palette(next - 1)
            } else {
                Look::Other
            };
            (row.trial.as_str(), look)
        })
        .collect()
}

/// `t003 · lr=0.001 wd=1e-4`.
fn trial_label(row: &ResultRow) -> String {
    let params: Vec<String> = row
        .params
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    match params.is_empty() {
        true => row.trial.clone(),
        false => format!("{} · {}", row.trial, params.join(" ")),
    }
}

fn curve_section(
    metric: &str,
    results: &Results,
    metrics: &BTreeMap<String, MetricsSummary>,
    looks: &BTreeMap<&str, Look>,
) -> Markup {
    let lines: Vec<(chart::Line, &ResultRow)> = results
        .rows
        .iter()
        .filter_map(|row| {
            let points = metrics.get(&row.trial)?.curves.get(metric)?;
            let look = *looks.get(row.trial.as_str())?;
            let line = chart::Line {
                trial: &row.trial,
                look,
                points,
                label: trial_label(row),
                status: row.status,
            };
            Some((line, row))
        })
        .collect();
    let by_epoch = results
        .rows
        .iter()
        .any(|row| metrics.get(&row.trial).is_some_and(|s| s.epochs.is_some()));
    let x_title = if by_epoch { "epoch" } else { "step" };
    let greys = lines
        .iter()
        .filter(|(line, _)| line.look == Look::Other)
        .count();
    let drawn: Vec<chart::Line> = lines.iter().map(|(line, _)| line.clone()).collect();
    let apart = mark::present(
        lines
            .iter()
            .map(|(_, row)| &row.status)
            .filter(|status| !mark::of(status).ordinary()),
    );
    let off_chart = lines
        .iter()
        .any(|(line, _)| line.points.iter().any(|(_, value)| !value.is_finite()));
    html! {
        section.curves data-metric=(metric) {
            h2 { (metric) " by " (x_title) }
            (chart::curves(metric, &drawn, x_title))
            ul.legend {
                @for (line, row) in lines.iter().filter(|(line, _)| line.look != Look::Other) {
                    li class=[(line.look == Look::Best).then_some("best")] {
                        span.swatch style=(format!("background:{}", line.look.color())) {}
                        (trial_label(row))
                        @if line.look == Look::Best { " (best)" }
                    }
                }
                @if greys > 0 {
                    li { span.swatch style=(format!("background:{OTHER_COLOR}")) {} (greys) " more trials" }
                }
                @if !apart.is_empty() {
                    li.dashed { span.swatch.dashes {} "dashed: a trial that did not run to its end, its curve ending in its status's mark:" }
                    @for mark in &apart { (mark.legend()) }
                }
                @if off_chart {
                    li.not-finite { "▲ at the top edge: a value that is not a number (NaN or infinite), where the curve breaks" }
                }
            }
        }
    }
}

/// The results table, in the order of `tfimg sweep results`.
fn table(results: &Results) -> Markup {
    let metric = results.objective.as_ref().map(|o| o.label());
    let params = results.param_names.len();
    // Columns right-aligned: the objective's value, epochs, time.
    let numeric =
        |column: usize| column > params && column <= params + 2 + metric.is_some() as usize;
    let best = results.best().map(|row| row.trial.as_str());
    html! {
        section.results {
            h2 { "Results" }
            @if results.rows.is_empty() {
                p.note { "The sweep has no trials." }
            } @else {
                table {
                    thead { tr {
                        th { "trial" }
                        @for name in &results.param_names { th.param { (name) } }
                        @if let Some(metric) = &metric { th.num { (metric) } }
                        th.num { "epochs" } th.num { "time" } th { "GPUs" } th { "status" }
                    } }
                    tbody {
                        @for (row, cells) in results.rows.iter().zip(results.table_rows()) {
                            tr class=[(best == Some(row.trial.as_str())).then_some("best")] data-trial=(row.trial) title=(command_line(&row.command)) {
                                @for (column, cell) in cells.iter().enumerate() {
                                    @if column + 1 == cells.len() {
                                        td.status { span class=(format!("chip {}", row.status.word().replace(' ', "-"))) { (cell) } }
                                    } @else {
                                        td class=[numeric(column).then_some("num")] { (cell) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `2026-11-22 17:03 UTC` for milliseconds since the Unix epoch.
pub fn utc_text(unix_ms: u64) -> String {
    let seconds = unix_ms / 1000;
    format!(
        "{} {:02}:{:02} UTC",
        crate::spec::compat::Date::from_unix_seconds(seconds),
        seconds % 86_400 / 3600,
        seconds % 3600 / 60
    )
}

/// The page's whole style: system fonts only (nothing to fetch).
const CSS: &str = r#"
:root { color-scheme: light; --ink: #1f2933; --muted: #5f6b76; --line: #dde3e9; --best: #e4572e; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f8fa; color: var(--ink);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 28px 24px 40px; }
header h1 { margin: 0 0 4px; font-size: 26px; }
header .name { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; }
.meta { margin: 0 0 14px; color: var(--muted); }
.counts { display: flex; flex-wrap: wrap; gap: 8px; list-style: none; padding: 0; margin: 0 0 18px; }
.count { padding: 4px 12px; border-radius: 999px; background: #fff; border: 1px solid var(--line); }
.count.done strong { color: #2d8a4e; } .count.failed strong { color: #c0392b; }
.count.running strong { color: #2e86ab; } .count.queued strong, .count.stopped strong { color: var(--muted); }
.count.stopped-early strong { color: #b8860b; } .count.diverged strong { color: #7768ae; }
.savings { margin: 0 0 14px; color: #80600b; }
.param-charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(360px, 1fr)); gap: 8px 18px; }
figure.param { margin: 0; } figure.param figcaption { font-weight: 600; margin: 0 0 4px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px; margin: 0 0 18px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 0 18px; }
.charts section.wide { grid-column: 1 / -1; }
h2 { margin: 0 0 10px; font-size: 18px; }
.best-trial { border-left: 6px solid var(--best); }
.best-trial .value { color: var(--best); }
.params { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 0 0 10px; }
.params div { display: flex; gap: 6px; } .params dt { color: var(--muted); } .params dd { margin: 0; font-weight: 600; }
pre.command { margin: 0; padding: 10px 12px; background: #1f2933; color: #f5f7fa; border-radius: 6px;
  white-space: pre-wrap; word-break: break-all; font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
svg.chart { display: block; width: 100%; max-width: 720px; height: auto; margin: 0 auto; }
.wide svg.chart { max-width: 1200px; }
svg text { font-size: 12px; fill: #4a5560; }
svg .axis-title { font-size: 13px; fill: var(--ink); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; list-style: none; padding: 0; margin: 8px 0 0;
  font-size: 13px; color: var(--muted); }
.legend li.best { color: var(--ink); font-weight: 600; }
.swatch { display: inline-block; width: 18px; height: 4px; border-radius: 2px; margin-right: 6px; vertical-align: middle; }
.swatch.dot { width: 10px; height: 10px; border-radius: 50%; }
.cross { color: #c0392b; font-weight: 700; margin-right: 6px; }
.note { color: var(--muted); margin: 0; }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
td { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
th { color: var(--muted); font-weight: 600; } th.num, td.num { text-align: right; }
tbody tr:nth-child(even) { background: #fafbfc; }
tr.best { background: #fff4ef !important; } tr.best td:first-child { box-shadow: inset 4px 0 var(--best); }
.chip { padding: 1px 8px; border-radius: 999px; font-family: system-ui, sans-serif; font-size: 12px; }
.chip.done { background: #e3f4e8; color: #216e3c; } .chip.failed { background: #fbe4e1; color: #a8322a; }
.chip.running { background: #e1f0f7; color: #22698a; } .chip.queued, .chip.stopped { background: #eef1f4; color: #4a5560; }
.chip.stopped-early { background: #fbf1dc; color: #80600b; }
.chip.diverged { background: #efeaf7; color: #5b4a8f; }
.swatch.dashes { height: 0; border-top: 3px dashed var(--muted); background: none; }
.mark-swatch { vertical-align: middle; }
svg text.mean-label { font-size: 11px; fill: var(--ink); font-weight: 600; }
footer { color: var(--muted); font-size: 13px; text-align: center; }
"#;

#[cfg(test)]
mod tests;
