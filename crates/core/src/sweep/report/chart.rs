//! The report's SVG charts, drawn inline: the objective's value per trial (one mark a
//! trial, in table order, on the base line where a trial has no finite value), that
//! value against each param ("which value should I pick": a numeric axis for numbers,
//! log where the search is, columns for other values, a mean where values repeat) and a
//! metric's curves over epochs (one line a trial). A trial that did not run to its end is
//! drawn with its status's mark (`mark`) in every chart and counts in no mean. Values
//! that are not numbers (NaN, infinities) never reach a coordinate: they go on an edge
//! with a mark. Axes carry round ticks whose labels never touch. Every text that comes
//! from the user (trial ids, metric names, params) goes through maud's escaping. Pure.

use maud::{html, Markup};

use super::mark::{self, Mark, Shape};
use super::scale::{self, coordinate, Axis, Linear, Ticks};
use super::{Look, ParamScale, BEST_COLOR, MISSING_COLOR, POINT_COLOR};
use crate::sweep::results::{number_text, ResultRow, Results, RowStatus};
use crate::sweep::{Objective, ParamValue};

/// The drawing's size and the margins around its plot area, in SVG units.
struct Frame {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    fn new(width: f64, height: f64, bottom: f64) -> Frame {
        Frame {
            width,
            height,
            left: 64.0,
            right: 18.0,
            top: 16.0,
            bottom,
        }
    }

    fn view_box(&self) -> String {
        format!("0 0 {} {}", self.width, self.height)
    }

    fn plot_right(&self) -> f64 {
        self.width - self.right
    }

    fn plot_bottom(&self) -> f64 {
        self.height - self.bottom
    }

    fn plot_width(&self) -> f64 {
        self.plot_right() - self.left
    }

    fn y(&self, ticks: &Ticks) -> Linear {
        Linear {
            domain: (ticks.low, ticks.high),
            range: (self.plot_bottom(), self.top),
        }
    }
}

/// A chart's width in SVG units: drawn at about that many pixels in a card of its own,
/// half the page (`WIDE` spans the page).
pub(super) const WIDTH: f64 = 600.0;
pub(super) const WIDE: f64 = 1200.0;
/// Trial labels under the objective chart: at most one per this many units, evenly thinned.
const TRIAL_LABEL_SPACING: f64 = 18.0;
/// Points drawn per curve: longer curves are thinned (the last point always kept).
const MAX_CURVE_POINTS: usize = 480;
/// A curve's points get markers when it has at most this many.
const MAX_MARKERS: usize = 60;

/// Horizontal grid lines, tick labels and the title of the y axis.
fn y_axis(frame: &Frame, ticks: &Ticks, title: &str) -> Markup {
    let y = frame.y(ticks);
    let middle = (frame.top + frame.plot_bottom()) / 2.0;
    html! {
        g.axis.y-axis {
            @for value in &ticks.values {
                @let at = coordinate(y.map(*value));
                line.grid x1=(coordinate(frame.left)) x2=(coordinate(frame.plot_right()))
                    y1=(at) y2=(at) stroke="#e3e7ec" {}
                text.tick x=(coordinate(frame.left - 8.0)) y=(at) text-anchor="end"
                    dominant-baseline="middle" { (ticks.label(*value)) }
            }
            text.axis-title x="18" y=(coordinate(middle)) text-anchor="middle"
                transform=(format!("rotate(-90 18 {})", coordinate(middle))) { (title) }
        }
    }
}

/// The x axis's base line, and its title centred under the plot at `title_y`.
fn x_base(frame: &Frame, title: &str, title_y: f64) -> Markup {
    let bottom = coordinate(frame.plot_bottom());
    html! {
        line.baseline x1=(coordinate(frame.left)) x2=(coordinate(frame.plot_right()))
            y1=(bottom) y2=(bottom) stroke="#8a949e" {}
        text.axis-title x=(coordinate(frame.left + frame.plot_width() / 2.0))
            y=(coordinate(title_y)) text-anchor="middle" { (title) }
    }
}

/// The value each row is ranked by (`objective.use`), in table order: a mark on a stem
/// per trial with a finite value (the best in its own colour; a trial that did not run
/// to its end in its status's mark), and its mark on the base line for a trial without
/// one (none yet, or not a number).
pub(super) fn objective(results: &Results, objective: &Objective, width: f64) -> Markup {
    let frame = Frame::new(width, 340.0, 78.0);
    let ticks = scale::ticks(results.rows.iter().filter_map(ResultRow::ranked), 5, false);
    let y = frame.y(&ticks);
    let count = results.rows.len().max(1);
    let band = frame.plot_width() / count as f64;
    let label_every = (TRIAL_LABEL_SPACING / band).ceil().max(1.0) as usize;
    let radius = (band * 0.32).clamp(2.0, 7.0);
    let best = results.best().map(|row| row.trial.as_str());
    let title = format!("{} per trial", objective.label());
    html! {
        svg.chart.objective-chart viewBox=(frame.view_box()) role="img" aria-label=(title) {
            (y_axis(&frame, &ticks, &objective.metric))
            @for (index, row) in results.rows.iter().enumerate() {
                @let x = frame.left + band * (index as f64 + 0.5);
                @match finite(row.ranked()) {
                    Some(value) => {
                        @let spot = Spot { x, y: y.map(value), base: frame.plot_bottom(), radius };
                        (dot(row, spot, best == Some(row.trial.as_str()), value, &objective.metric))
                    }
                    None => (missing(row, x, frame.plot_bottom() - 7.0, radius.max(4.0), &objective.metric)),
                }
                @if index % label_every == 0 {
                    @let label_y = frame.plot_bottom() + 14.0;
                    text.tick.trial-label x=(coordinate(x)) y=(coordinate(label_y)) text-anchor="end"
                        transform=(format!("rotate(-45 {} {})", coordinate(x), coordinate(label_y))) {
                        (row.trial)
                    }
                }
            }
            (x_base(&frame, "trials, best first (as in the table)", frame.height - 6.0))
        }
    }
}

/// `value` when it is a finite number.
fn finite(value: Option<f64>) -> Option<f64> {
    value.filter(|value| value.is_finite())
}

/// `0.93`, `NaN`, `inf`, `-inf`: a reported value as a title says it.
fn value_text(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value == f64::INFINITY {
        "inf".into()
    } else if value == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        number_text(value)
    }
}

/// `point`, `point best`, `point apart stopped-early`: a drawn trial's classes.
fn classes(base: &str, mark: &Mark, best: bool) -> String {
    let mut classes = base.to_string();
    if best {
        classes.push_str(" best");
    }
    if !mark.ordinary() {
        classes.push_str(" apart ");
        classes.push_str(&mark.class());
    }
    classes
}

/// Where a dot goes: its centre, the base line its stem starts from, its radius.
struct Spot {
    x: f64,
    y: f64,
    base: f64,
    radius: f64,
}

fn dot(row: &ResultRow, spot: Spot, best: bool, value: f64, metric: &str) -> Markup {
    let Spot { x, y, base, radius } = spot;
    let mark = mark::of(&row.status);
    let (fill, radius) = match best {
        true => (BEST_COLOR, radius * 1.35),
        false => (POINT_COLOR, radius),
    };
    let stem = if mark.ordinary() { fill } else { mark.color };
    html! {
        g class=(classes("point", mark, best)) data-trial=(row.trial) data-status=(row.status.word()) {
            title { (row.trial) ": " (metric) " " (number_text(value)) " (" (row.status) ")" }
            line.stem x1=(coordinate(x)) x2=(coordinate(x)) y1=(coordinate(base)) y2=(coordinate(y))
                stroke=(stem) stroke-opacity="0.35" stroke-width="1.5"
                stroke-dasharray=[(!mark.ordinary()).then_some("3 3")] {}
            (mark.draw(x, y, radius, fill))
        }
    }
}

/// A trial without a finite value, on the base line: its status's mark (a grey cross for
/// a done trial that never reported the metric).
fn missing(row: &ResultRow, x: f64, y: f64, size: f64, metric: &str) -> Markup {
    let mark = mark::of(&row.status);
    let what = match row.ranked() {
        Some(value) => format!("{metric} {}", value_text(value)),
        None => format!("no {metric}"),
    };
    html! {
        g.missing data-trial=(row.trial) data-status=(row.status.word()) {
            title { (row.trial) ": " (row.status) ", " (what) }
            @if mark.ordinary() {
                (mark::shape(Shape::Cross, x, y, size, MISSING_COLOR))
            } @else {
                (mark.draw(x, y, size, MISSING_COLOR))
            }
        }
    }
}

/// One trial's curve of one metric.
#[derive(Clone)]
pub(super) struct Line<'a> {
    pub trial: &'a str,
    pub look: Look,
    /// (x, value), in report order; a value may be NaN or infinite.
    pub points: &'a [(f64, f64)],
    /// The hover text: the trial, its params.
    pub label: String,
    /// Its status: a trial that did not run to its end is dashed and ends in its mark.
    pub status: RowStatus,
}

/// `metric` over `x_title` (epoch or step): one line per trial, grey ones first and the
/// best last, so it is drawn on top. A value that is not a number breaks its line and is
/// marked at the plot's top edge.
pub(super) fn curves(metric: &str, lines: &[Line], x_title: &str) -> Markup {
    let frame = Frame::new(WIDTH, 320.0, 52.0);
    let all = || {
        lines
            .iter()
            .flat_map(|line| line.points.iter())
            .filter(|(x, _)| x.is_finite())
    };
    let whole = all().all(|(x, _)| x.fract() == 0.0);
    let xs: Vec<f64> = all().map(|(x, _)| *x).collect();
    let x_axis = Axis::linear(&xs, 8, whole, frame.plot_width());
    let y_ticks = scale::ticks(all().map(|(_, value)| *value), 5, false);
    let x = Linear {
        domain: (x_axis.low, x_axis.high),
        range: (frame.left, frame.plot_right()),
    };
    let y = frame.y(&y_ticks);
    let mut order: Vec<&Line> = lines.iter().collect();
    order.sort_by_key(|line| line.look.layer());
    let bottom = frame.plot_bottom();
    let place = Place {
        x,
        y,
        edge: frame.top,
        x_title,
    };
    html! {
        svg.chart.curve-chart viewBox=(frame.view_box()) role="img" aria-label=(format!("{metric} by {x_title}")) {
            (y_axis(&frame, &y_ticks, metric))
            @for (value, label) in &x_axis.ticks {
                @let at = coordinate(x.map(*value));
                line.tick-mark x1=(at) x2=(at) y1=(coordinate(bottom)) y2=(coordinate(bottom + 5.0)) stroke="#8a949e" {}
                text.tick.x-tick x=(at) y=(coordinate(bottom + 18.0)) text-anchor="middle" { (label) }
            }
            (x_base(&frame, x_title, frame.height - 8.0))
            @for line in order {
                (curve(line, &place))
            }
        }
    }
}

/// How a curve chart places its points: the maps, the y of its top edge (where values
/// that are not numbers go) and what its x counts.
struct Place<'a> {
    x: Linear,
    y: Linear,
    edge: f64,
    x_title: &'a str,
}

fn curve(line: &Line, place: &Place) -> Markup {
    let points: Vec<(f64, f64)> = thin(line.points, MAX_CURVE_POINTS)
        .into_iter()
        .filter(|(x, _)| x.is_finite())
        .collect();
    // Runs of finite values, each its own polyline; the first value of each run of
    // others, marked at the edge.
    let mut runs: Vec<Vec<(String, String)>> = vec![Vec::new()];
    let mut off: Vec<(f64, f64)> = Vec::new();
    for (index, (px, value)) in points.iter().enumerate() {
        if value.is_finite() {
            let spot = (
                coordinate(place.x.map(*px)),
                coordinate(place.y.map(*value)),
            );
            runs.last_mut().expect("never empty").push(spot);
        } else {
            if !runs.last().expect("never empty").is_empty() {
                runs.push(Vec::new());
            }
            if index == 0 || points[index - 1].1.is_finite() {
                off.push((*px, *value));
            }
        }
    }
    runs.retain(|run| !run.is_empty());
    let look = line.look;
    let mark = mark::of(&line.status);
    let finite_count: usize = runs.iter().map(Vec::len).sum();
    let markers = finite_count == 1 || (matches!(look, Look::Best) && finite_count <= MAX_MARKERS);
    let last = points.iter().rev().find(|(_, value)| value.is_finite());
    let dashes = (!mark.ordinary()).then_some("6 4");
    let class = classes("curve", mark, look == Look::Best).replace(" apart", "");
    html! {
        g class=(class) data-trial=(line.trial) data-status=(line.status.word()) {
            title { (line.label) @if !mark.ordinary() { " (" (mark.word) ")" } }
            @for run in &runs {
                @if run.len() > 1 {
                    @let path: Vec<String> = run.iter().map(|(px, py)| format!("{px},{py}")).collect();
                    polyline points=(path.join(" ")) fill="none" stroke=(look.color())
                        stroke-width=(look.width()) stroke-opacity=(look.opacity())
                        stroke-dasharray=[dashes]
                        stroke-linejoin="round" stroke-linecap="round" {}
                }
                @if markers || run.len() == 1 {
                    @for (px, py) in run {
                        circle cx=(px) cy=(py) r="3.5" fill=(look.color()) {}
                    }
                }
            }
            @for (px, value) in &off {
                g.not-finite {
                    title { (line.trial) " " (place.x_title) " " (number_text(*px)) ": " (value_text(*value)) }
                    (mark::shape(Shape::Triangle, place.x.map(*px), place.edge + 6.0, 5.0, look.color()))
                }
            }
            @if let (false, Some((px, value))) = (mark.ordinary(), last) {
                g.stop-mark {
                    (mark.draw(place.x.map(*px), place.y.map(*value), 5.0, look.color()))
                }
            }
        }
    }
}

/// At most `max` of `points`, evenly spaced, the last one kept.
fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let stride = points.len().div_ceil(max - 1);
    let mut kept: Vec<(f64, f64)> = points.iter().step_by(stride).copied().collect();
    if !(points.len() - 1).is_multiple_of(stride) {
        kept.extend(points.last());
    }
    kept
}

#[cfg(test)]
mod tests;

/// Category labels longer than this are cut, the whole text in their hover title.
const MAX_LABEL_CHARS: usize = 16;

/// One trial in a param's chart.
struct Entry<'a> {
    row: &'a ResultRow,
    param: &'a ParamValue,
    /// Its finite ranked value, if any.
    value: Option<f64>,
    mark: &'static Mark,
}

/// How a param's chart places its values along x.
enum ParamAxis {
    /// One column a value, in the order the trials rank (strings, booleans, a mix).
    Columns(Vec<String>),
    /// A numeric axis: the search draws numbers (or lists only numbers).
    Numbers(Axis),
}

/// Whether `values` (a param's numbers) go on a log axis, `scale` saying how the search
/// drew them: `loguniform` does; a uniform or whole-number range does not; numbers the
/// search lists (a grid axis, a choice, `trials:`) do when they are positive and the
/// greatest is more than ten times the least.
fn log_axis(values: &[f64], scale: Option<ParamScale>) -> bool {
    let positive = values.iter().all(|value| *value > 0.0);
    let (least, greatest) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    match scale {
        Some(ParamScale::Log) => positive,
        Some(ParamScale::Linear) => false,
        Some(ParamScale::Listed) | Some(ParamScale::Categories) | None => {
            positive && greatest > least * LOG_SPAN
        }
    }
}

/// Listed positive numbers spanning more than this factor (a decade) go on a log axis.
const LOG_SPAN: f64 = 10.0;

fn param_axis(entries: &[Entry], scale: Option<ParamScale>, width: f64) -> ParamAxis {
    let numbers: Option<Vec<f64>> = entries.iter().map(|entry| entry.param.as_f64()).collect();
    match numbers {
        Some(numbers) if scale != Some(ParamScale::Categories) => {
            ParamAxis::Numbers(match log_axis(&numbers, scale) {
                true => Axis::log(&numbers, width),
                false => Axis::linear(&numbers, 6, false, width),
            })
        }
        _ => {
            let mut columns: Vec<String> = Vec::new();
            for entry in entries {
                let text = entry.param.text();
                if !columns.contains(&text) {
                    columns.push(text);
                }
            }
            ParamAxis::Columns(columns)
        }
    }
}

/// `text` cut to `MAX_LABEL_CHARS`, with an ellipsis.
fn shortened(text: &str) -> String {
    match text.chars().count() > MAX_LABEL_CHARS {
        true => format!(
            "{}…",
            text.chars().take(MAX_LABEL_CHARS - 1).collect::<String>()
        ),
        false => text.to_string(),
    }
}

/// The ranked value of each trial against param `name`: "which value should I pick".
/// A param the search draws as numbers is on a numeric axis (a log one where `scale`
/// says, see `log_axis`), whatever the count of its values; others (strings, booleans)
/// get a column a value. Where values repeat (a grid, a choice), a bar at each value's
/// mean over the trials that ran to their end, its number above it. Trials that did not
/// run to their end are drawn with their status's mark and left out of the means; a
/// trial without a finite value sits on the base line. The best trial in its own colour.
pub(super) fn by_param(
    results: &Results,
    objective: &Objective,
    name: &str,
    scale: Option<ParamScale>,
) -> Markup {
    let frame = Frame::new(WIDTH, 300.0, 56.0);
    let best = results.best().map(|row| row.trial.as_str());
    let entries: Vec<Entry> = results
        .rows
        .iter()
        .filter(|row| row.ranked().is_some() || row.attempt.is_some())
        .filter_map(|row| {
            let (_, param) = row.params.iter().find(|(param, _)| param == name)?;
            Some(Entry {
                row,
                param,
                value: finite(row.ranked()),
                mark: mark::of(&row.status),
            })
        })
        .collect();
    let ticks = scale::ticks(entries.iter().filter_map(|entry| entry.value), 5, false);
    let y = frame.y(&ticks);
    let base = frame.plot_bottom() - 7.0;
    let axis = param_axis(&entries, scale, frame.plot_width());
    // Each value's centre along x, in the order of the columns or of the numbers.
    let mut centres: Vec<(String, f64)> = Vec::new();
    match &axis {
        ParamAxis::Columns(columns) => {
            let band = frame.plot_width() / columns.len().max(1) as f64;
            for (index, column) in columns.iter().enumerate() {
                centres.push((column.clone(), frame.left + band * (index as f64 + 0.5)));
            }
        }
        ParamAxis::Numbers(numbers) => {
            let x = Linear {
                domain: (numbers.low, numbers.high),
                range: (frame.left, frame.plot_right()),
            };
            for entry in &entries {
                let text = entry.param.text();
                let at = entry
                    .param
                    .as_f64()
                    .and_then(|value| numbers.place(value))
                    .map_or(frame.left, |place| x.map(place));
                if !centres.iter().any(|(known, _)| *known == text) {
                    centres.push((text, at));
                }
            }
            centres.sort_by(|a, b| a.1.total_cmp(&b.1));
        }
    }
    // The room of a value's column: the least distance between two centres.
    let room = match &axis {
        ParamAxis::Columns(columns) => frame.plot_width() / columns.len().max(1) as f64,
        ParamAxis::Numbers(_) => centres
            .windows(2)
            .map(|pair| pair[1].1 - pair[0].1)
            .fold(frame.plot_width(), f64::min)
            .min(frame.plot_width() / 4.0),
    };
    let repeats = centres.len() < entries.len();
    let columns = matches!(axis, ParamAxis::Columns(_)) || repeats;
    let radius = 4.5;
    let title = format!("{} by {name}", objective.label());
    let spot = |entry: &Entry, x: f64| {
        let row = entry.row;
        let is_best = best == Some(row.trial.as_str());
        let fill = if is_best { BEST_COLOR } else { POINT_COLOR };
        let (y_at, size) = match entry.value {
            Some(value) => (y.map(value), if is_best { radius * 1.35 } else { radius }),
            None => (base, radius),
        };
        let value = match row.ranked() {
            Some(value) => value_text(value),
            None => "no value".into(),
        };
        let base_class = if entry.value.is_some() {
            "point"
        } else {
            "missing"
        };
        html! {
            g class=(classes(base_class, entry.mark, is_best)) data-trial=(row.trial) data-status=(row.status.word()) {
                title { (row.trial) " (" (row.status) "): " (name) " " (entry.param.text()) ", " (objective.metric) " " (value) }
                @if entry.value.is_none() && entry.mark.ordinary() {
                    (mark::shape(Shape::Cross, x, y_at, size, MISSING_COLOR))
                } @else {
                    (entry.mark.draw(x, y_at, size, fill))
                }
            }
        }
    };
    html! {
        svg.chart.param-chart data-param=(name) viewBox=(frame.view_box()) role="img" aria-label=(title) {
            (y_axis(&frame, &ticks, &objective.metric))
            @match &axis {
                ParamAxis::Columns(labels) => {
                    @let band = frame.plot_width() / labels.len().max(1) as f64;
                    @let widest = labels.iter().map(|label| shortened(label).chars().count()).max().unwrap_or(0);
                    @let every = ((scale::label_width(widest) + 10.0) / band).ceil().max(1.0) as usize;
                    @for (index, (label, centre)) in centres.iter().enumerate() {
                        @if index % every == 0 {
                            text.tick.x-tick x=(coordinate(*centre)) y=(coordinate(frame.plot_bottom() + 16.0)) text-anchor="middle" {
                                @if shortened(label) != *label { title { (label) } }
                                (shortened(label))
                            }
                        }
                    }
                }
                ParamAxis::Numbers(numbers) => {
                    @let x = Linear { domain: (numbers.low, numbers.high), range: (frame.left, frame.plot_right()) };
                    @for (value, label) in &numbers.ticks {
                        @let at = coordinate(x.map(*value));
                        line.tick-mark x1=(at) x2=(at) y1=(coordinate(frame.plot_bottom())) y2=(coordinate(frame.plot_bottom() + 5.0)) stroke="#8a949e" {}
                        text.tick.x-tick x=(at) y=(coordinate(frame.plot_bottom() + 18.0)) text-anchor="middle" { (label) }
                    }
                }
            }
            @for (value_text, centre) in &centres {
                @let members: Vec<&Entry> = entries.iter().filter(|entry| entry.param.text() == *value_text).collect();
                @for (position, entry) in members.iter().enumerate() {
                    // Spread across the middle half of the column, in table order.
                    @let offset = if members.len() > 1 && columns { (position as f64 / (members.len() - 1) as f64 - 0.5) * room * 0.5 } else { 0.0 };
                    (spot(entry, centre + offset))
                }
                @let counted: Vec<f64> = members.iter().filter(|entry| entry.mark.ordinary()).filter_map(|entry| entry.value).collect();
                @if columns && !counted.is_empty() {
                    @let mean = counted.iter().sum::<f64>() / counted.len() as f64;
                    @let at = y.map(mean);
                    @let half = (room * 0.36).min(40.0);
                    g.mean data-value=(value_text) {
                        title { (name) " " (value_text) ": mean " (number_text(mean)) " over " (counted.len()) " trial(s) that ran to their end" }
                        line x1=(coordinate(centre - half)) x2=(coordinate(centre + half)) y1=(coordinate(at)) y2=(coordinate(at)) stroke="#1f2933" stroke-width="2.5" {}
                        text.mean-label x=(coordinate(centre + half + 3.0)) y=(coordinate(at)) dominant-baseline="middle" { (number_text(mean)) }
                    }
                }
            }
            @let axis_title = match &axis { ParamAxis::Numbers(Axis { log: true, .. }) => format!("{name} (log scale)"), _ => name.to_string() };
            (x_base(&frame, &axis_title, frame.height - 8.0))
        }
    }
}
