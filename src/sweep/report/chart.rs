//! The report's SVG charts, drawn inline: the objective's best value per trial (one dot a
//! trial, in table order, a cross where a trial has no value) and a metric's curves over
//! epochs (one line a trial). Axes carry round ticks with labels. Every text that comes
//! from the user (trial ids, metric names, params) goes through maud's escaping. Pure.

use maud::{html, Markup};

use super::scale::{self, coordinate, Linear, Ticks};
use super::{Look, BEST_COLOR, MISSING_COLOR, POINT_COLOR};
use crate::sweep::results::{number_text, ResultRow, Results, RowStatus};
use crate::sweep::Objective;

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

/// The value each row is ranked by (`objective.use`), in table order: a dot on a stem per trial with
/// a value (the best in its own colour), a cross on the base line for the others.
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
                @match row.ranked() {
                    Some(value) => {
                        @let spot = Spot { x, y: y.map(value), base: frame.plot_bottom(), radius };
                        (dot(row, spot, best == Some(row.trial.as_str()), value, &objective.metric))
                    }
                    None => (cross(row, x, frame.plot_bottom() - 7.0, radius.max(4.0), &objective.metric)),
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

/// Where a dot goes: its centre, the base line its stem starts from, its radius.
struct Spot {
    x: f64,
    y: f64,
    base: f64,
    radius: f64,
}

fn dot(row: &ResultRow, spot: Spot, best: bool, value: f64, metric: &str) -> Markup {
    let Spot { x, y, base, radius } = spot;
    let (fill, radius) = match best {
        true => (BEST_COLOR, radius * 1.35),
        false => (POINT_COLOR, radius),
    };
    html! {
        g.point.best[best] data-trial=(row.trial) {
            title { (row.trial) ": " (metric) " " (number_text(value)) " (" (row.status) ")" }
            line.stem x1=(coordinate(x)) x2=(coordinate(x)) y1=(coordinate(base)) y2=(coordinate(y))
                stroke=(fill) stroke-opacity="0.35" stroke-width="1.5" {}
            circle cx=(coordinate(x)) cy=(coordinate(y)) r=(coordinate(radius)) fill=(fill) {}
        }
    }
}

fn cross(row: &ResultRow, x: f64, y: f64, size: f64, metric: &str) -> Markup {
    let colour = match row.status {
        RowStatus::Failed | RowStatus::TimedOut(_) => "#c0392b",
        _ => MISSING_COLOR,
    };
    let (x0, x1) = (coordinate(x - size), coordinate(x + size));
    let (y0, y1) = (coordinate(y - size), coordinate(y + size));
    html! {
        g.missing data-trial=(row.trial) data-status=(row.status.to_string()) stroke=(colour) stroke-width="2" {
            title { (row.trial) ": " (row.status) ", no " (metric) }
            line x1=(x0) y1=(y0) x2=(x1) y2=(y1) {}
            line x1=(x0) y1=(y1) x2=(x1) y2=(y0) {}
        }
    }
}

/// One trial's curve of one metric.
#[derive(Clone)]
pub(super) struct Line<'a> {
    pub trial: &'a str,
    pub look: Look,
    /// (x, value), in report order.
    pub points: &'a [(f64, f64)],
    /// The hover text: the trial, its params.
    pub label: String,
    /// The `early_stop` rule stopped the trial: its curve ends in a cross where it did.
    pub stopped_early: bool,
}

/// `metric` over `x_title` (epoch or step): one line per trial, grey ones first and the
/// best last, so it is drawn on top.
pub(super) fn curves(metric: &str, lines: &[Line], x_title: &str) -> Markup {
    let frame = Frame::new(WIDTH, 320.0, 52.0);
    let all = || lines.iter().flat_map(|line| line.points.iter());
    let whole = all().all(|(x, _)| x.fract() == 0.0);
    let x_ticks = scale::ticks(all().map(|(x, _)| *x), 8, whole);
    let y_ticks = scale::ticks(all().map(|(_, value)| *value), 5, false);
    let x = Linear {
        domain: (x_ticks.low, x_ticks.high),
        range: (frame.left, frame.plot_right()),
    };
    let y = frame.y(&y_ticks);
    let mut order: Vec<&Line> = lines.iter().collect();
    order.sort_by_key(|line| line.look.layer());
    let bottom = frame.plot_bottom();
    html! {
        svg.chart.curve-chart viewBox=(frame.view_box()) role="img" aria-label=(format!("{metric} by {x_title}")) {
            (y_axis(&frame, &y_ticks, metric))
            @for value in &x_ticks.values {
                @let at = coordinate(x.map(*value));
                line.tick-mark x1=(at) x2=(at) y1=(coordinate(bottom)) y2=(coordinate(bottom + 5.0)) stroke="#8a949e" {}
                text.tick x=(at) y=(coordinate(bottom + 18.0)) text-anchor="middle" { (x_ticks.label(*value)) }
            }
            (x_base(&frame, x_title, frame.height - 8.0))
            @for line in order {
                (curve(line, x, y))
            }
        }
    }
}

fn curve(line: &Line, x: Linear, y: Linear) -> Markup {
    let points = thin(line.points, MAX_CURVE_POINTS);
    let placed: Vec<(String, String)> = points
        .iter()
        .map(|(px, value)| (coordinate(x.map(*px)), coordinate(y.map(*value))))
        .collect();
    let path: Vec<String> = placed.iter().map(|(px, py)| format!("{px},{py}")).collect();
    let look = line.look;
    let markers = placed.len() == 1 || (matches!(look, Look::Best) && placed.len() <= MAX_MARKERS);
    html! {
        g.curve.best[matches!(look, Look::Best)].stopped-early[line.stopped_early] data-trial=(line.trial) {
            title { (line.label) @if line.stopped_early { " (stopped early here)" } }
            @if placed.len() > 1 {
                polyline points=(path.join(" ")) fill="none" stroke=(look.color())
                    stroke-width=(look.width()) stroke-opacity=(look.opacity())
                    stroke-linejoin="round" stroke-linecap="round" {}
            }
            @if markers {
                @for (px, py) in &placed {
                    circle cx=(px) cy=(py) r="3.5" fill=(look.color()) {}
                }
            }
            @if let (true, Some((px, py))) = (line.stopped_early, points.last()) {
                @let (cx, cy) = (x.map(*px), y.map(*py));
                g.stop-mark stroke=(look.color()) stroke-width="2" {
                    line x1=(coordinate(cx - 4.0)) y1=(coordinate(cy - 4.0)) x2=(coordinate(cx + 4.0)) y2=(coordinate(cy + 4.0)) {}
                    line x1=(coordinate(cx - 4.0)) y1=(coordinate(cy + 4.0)) x2=(coordinate(cx + 4.0)) y2=(coordinate(cy - 4.0)) {}
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
    if kept.last() != points.last() {
        kept.extend(points.last());
    }
    kept
}

#[cfg(test)]
mod tests;

/// A param that takes at most this many values is drawn as columns (a grid axis).
const MAX_COLUMNS: usize = 12;
/// Positive values spanning this factor or more go on a log axis (a `loguniform` draw).
const LOG_SPAN: f64 = 20.0;

/// How the x axis of a param's chart places its values.
enum ParamAxis {
    /// One column a value, in this order (numbers by value, others as written).
    Columns(Vec<String>),
    /// A scatter over the values, on a log10 axis when `log`.
    Range { log: bool },
}

fn param_axis(values: &[(&crate::sweep::ParamValue, f64)]) -> ParamAxis {
    let mut distinct: Vec<&crate::sweep::ParamValue> = Vec::new();
    for (value, _) in values {
        if !distinct.contains(value) {
            distinct.push(value);
        }
    }
    let numbers: Option<Vec<f64>> = distinct.iter().map(|value| value.as_f64()).collect();
    match numbers {
        Some(numbers) if distinct.len() > MAX_COLUMNS => {
            let (low, high) = numbers
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                    (l.min(*v), h.max(*v))
                });
            ParamAxis::Range {
                log: low > 0.0 && high / low >= LOG_SPAN,
            }
        }
        Some(_) => {
            distinct.sort_by(|a, b| {
                a.as_f64()
                    .unwrap_or(0.0)
                    .total_cmp(&b.as_f64().unwrap_or(0.0))
            });
            ParamAxis::Columns(distinct.iter().map(|value| value.text()).collect())
        }
        None => ParamAxis::Columns(distinct.iter().map(|value| value.text()).collect()),
    }
}

/// The ranked value of every trial that has one against param `name`: columns with each
/// trial's dot and the column's mean as a bar for a param of a few values (a grid axis,
/// a choice), else a scatter over its range, on a log axis when its values span 20× or
/// more. The best trial in its own colour.
pub(super) fn by_param(results: &Results, objective: &Objective, name: &str) -> Markup {
    let frame = Frame::new(WIDTH, 300.0, 56.0);
    let best = results.best().map(|row| row.trial.as_str());
    let points: Vec<(&ResultRow, &crate::sweep::ParamValue, f64)> = results
        .rows
        .iter()
        .filter_map(|row| {
            let value = row.ranked()?;
            let (_, param) = row.params.iter().find(|(param, _)| param == name)?;
            Some((row, param, value))
        })
        .collect();
    let pairs: Vec<(&crate::sweep::ParamValue, f64)> = points
        .iter()
        .map(|(_, param, value)| (*param, *value))
        .collect();
    let ticks = scale::ticks(points.iter().map(|(_, _, value)| *value), 5, false);
    let y = frame.y(&ticks);
    let radius = 4.5;
    let title = format!("{} by {name}", objective.label());
    let spot = |row: &ResultRow, x: f64, value: f64| {
        let is_best = best == Some(row.trial.as_str());
        let fill = if is_best { BEST_COLOR } else { POINT_COLOR };
        html! {
            g.point.best[is_best] data-trial=(row.trial) {
                title { (row.trial) ": " (name) " " (row.params.iter().find(|(p, _)| p == name).map_or(String::new(), |(_, v)| v.text())) ", " (objective.metric) " " (number_text(value)) }
                circle cx=(coordinate(x)) cy=(coordinate(y.map(value))) r=(coordinate(if is_best { radius * 1.35 } else { radius })) fill=(fill) fill-opacity="0.85" {}
            }
        }
    };
    let axis = param_axis(&pairs);
    html! {
        svg.chart.param-chart data-param=(name) viewBox=(frame.view_box()) role="img" aria-label=(title) {
            (y_axis(&frame, &ticks, &objective.metric))
            @match &axis {
                ParamAxis::Columns(columns) => {
                    @let band = frame.plot_width() / columns.len().max(1) as f64;
                    @for (index, column) in columns.iter().enumerate() {
                        @let centre = frame.left + band * (index as f64 + 0.5);
                        @let members: Vec<&(&ResultRow, &crate::sweep::ParamValue, f64)> = points.iter().filter(|(_, param, _)| param.text() == *column).collect();
                        @for (position, (row, _, value)) in members.iter().enumerate() {
                            // Spread across the middle half of the column, in trial order.
                            @let offset = if members.len() > 1 { (position as f64 / (members.len() - 1) as f64 - 0.5) * band * 0.5 } else { 0.0 };
                            (spot(row, centre + offset, *value))
                        }
                        @if !members.is_empty() {
                            @let mean = members.iter().map(|(_, _, value)| *value).sum::<f64>() / members.len() as f64;
                            @let at = coordinate(y.map(mean));
                            g.mean data-value=(column) {
                                title { (name) " " (column) ": mean " (number_text(mean)) " over " (members.len()) " trial(s)" }
                                line x1=(coordinate(centre - band * 0.36)) x2=(coordinate(centre + band * 0.36)) y1=(at) y2=(at) stroke="#1f2933" stroke-width="2.5" {}
                            }
                        }
                        text.tick x=(coordinate(centre)) y=(coordinate(frame.plot_bottom() + 16.0)) text-anchor="middle" { (column) }
                    }
                }
                ParamAxis::Range { log } => {
                    @let place = |value: f64| if *log { value.log10() } else { value };
                    @let x_ticks = scale::ticks(points.iter().filter_map(|(_, param, _)| param.as_f64()).map(place), 5, false);
                    @let x = Linear { domain: (x_ticks.low, x_ticks.high), range: (frame.left, frame.plot_right()) };
                    @for value in &x_ticks.values {
                        @let label = if *log { number_text(10f64.powf(*value)) } else { x_ticks.label(*value) };
                        text.tick x=(coordinate(x.map(*value))) y=(coordinate(frame.plot_bottom() + 16.0)) text-anchor="middle" { (label) }
                    }
                    @for (row, param, value) in &points {
                        @if let Some(number) = param.as_f64() {
                            (spot(row, x.map(place(number)), *value))
                        }
                    }
                }
            }
            @let axis_title = match &axis { ParamAxis::Range { log: true } => format!("{name} (log scale)"), _ => name.to_string() };
            (x_base(&frame, &axis_title, frame.height - 8.0))
        }
    }
}
