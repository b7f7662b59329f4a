use super::*;
use crate::sweep::metrics::{parse_jsonl, Picked, Place};
use crate::sweep::results::RowStatus;
use crate::sweep::{Objective, ParamValue, Pick};

fn objective() -> Option<Objective> {
    Some(Objective {
        metric: "val_accuracy".into(),
        mode: Mode::Max,
        pick: Pick::Last,
    })
}

fn row(trial: &str, aug: &str, best: Option<f64>, status: RowStatus) -> ResultRow {
    ResultRow {
        trial: trial.into(),
        params: vec![
            ("lr".into(), ParamValue::Float(0.001)),
            ("aug".into(), ParamValue::Text(aug.into())),
        ],
        value: best.map(|value| Picked {
            value,
            place: Place {
                epoch: Some(3.0),
                step: None,
            },
        }),
        best,
        last: best,
        epochs: best.map(|_| 3),
        points: 3 * usize::from(best.is_some()),
        duration_ms: Some(65_000),
        gpus: vec!["0".into()],
        status,
        attempt: Some(1),
        exit_code: None,
        command: vec![
            "python".into(),
            "train.py".into(),
            "--aug".into(),
            aug.into(),
        ],
    }
}

/// `val_accuracy` and `loss` over three epochs, ending at `best`.
fn curve(best: f64) -> MetricsSummary {
    let text: String = (1..=3)
        .map(|epoch| {
            let accuracy = best - 0.1 * f64::from(3 - epoch);
            format!(
                "{{\"epoch\": {epoch}, \"val_accuracy\": {accuracy}, \"loss\": {}}}\n",
                1.0 - accuracy
            )
        })
        .collect();
    MetricsSummary::of(&parse_jsonl(&text))
}

/// Three trials: t002 best, t001 second, t003 failed with a param that is markup.
fn small() -> (Results, BTreeMap<String, MetricsSummary>) {
    let results = Results {
        objective: objective(),
        param_names: vec!["lr".into(), "aug".into()],
        rows: vec![
            row("t002", "high", Some(0.9), RowStatus::Done { attempt: 2 }),
            row("t001", "low", Some(0.75), RowStatus::Done { attempt: 1 }),
            row(
                "t003",
                "<script>alert(1)</script>\"&",
                None,
                RowStatus::Failed,
            ),
        ],
    };
    let metrics = BTreeMap::from([
        ("t001".to_string(), curve(0.75)),
        ("t002".to_string(), curve(0.9)),
    ]);
    (results, metrics)
}

/// What every report must be: no script, nothing to fetch, no number that is not one in
/// any attribute (a coordinate, a path). A title or a cell may say `NaN` as text.
fn assert_self_contained(html: &str) {
    let forbidden = [
        "<script", "http://", "https://", "url(", "@import", " src=", " href=",
    ];
    for forbidden in forbidden {
        assert!(!html.contains(forbidden), "`{forbidden}` in the report");
    }
    for attribute in html.split("=\"").skip(1) {
        let value = &attribute[..attribute.find('"').unwrap_or(attribute.len())];
        let words = value.split([' ', ',', 'M', 'L', '(', ')']);
        assert!(
            !value.contains("NaN")
                && !words
                    .into_iter()
                    .any(|w| w.trim_start_matches('-') == "inf"),
            "`{value}` in an attribute of the report"
        );
    }
}

#[test]
fn user_text_is_escaped_everywhere() {
    let (mut results, mut metrics) = small();
    // A metric name that is markup (a sweep file's objective is free text).
    let metric = "acc<u>\"&";
    results.objective.as_mut().unwrap().metric = metric.into();
    for summary in metrics.values_mut() {
        let curve = summary.curves.remove("val_accuracy").unwrap();
        summary.curves.insert(metric.into(), curve);
    }
    let html = render(
        "lab<i>",
        &results,
        &metrics,
        &BTreeMap::new(),
        "2026-11-22 17:03 UTC",
    );
    assert_self_contained(&html);
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;"),
        "{html}"
    );
    assert!(html.contains("sweep lab&lt;i&gt;: report"));
    assert!(!html.contains("<i>") && !html.contains("<u>"));
    assert!(html.contains("<h2>Last acc&lt;u&gt;&quot;&amp; per trial</h2>"));
    assert!(html.contains("aria-label=\"acc&lt;u&gt;&quot;&amp; by epoch\""));
    assert!(html.contains("<th class=\"num\">last acc&lt;u&gt;&quot;&amp;</th>"));
    // The failed trial's command is in its row's title attribute, quotes escaped.
    assert!(html.contains(
        "title=\"python train.py --aug '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;'\""
    ));
}

#[test]
fn a_small_report_has_every_part() {
    let (results, metrics) = small();
    let html = render(
        "lab",
        &results,
        &metrics,
        &BTreeMap::new(),
        "2026-11-22 17:03 UTC",
    );
    assert_self_contained(&html);
    for part in [
        "<strong>2</strong> done",
        "<strong>1</strong> failed",
        "<strong>0</strong> queued",
        "Best trial <span class=\"trial\">t002</span>: last val_accuracy <span class=\"value\">0.9</span>",
        "<pre class=\"command\"><code>python train.py --aug high</code></pre>",
        "svg class=\"chart objective-chart\"",
        "<h2>val_accuracy by epoch</h2>",
        "<h2>loss by epoch</h2>",
        "done (attempt 2)",
    ] {
        assert!(html.contains(part), "no `{part}` in {html}");
    }
    assert!(
        !html.contains("count stopped"),
        "no stopped trial, no stopped count"
    );
    // Rows in table order, the best marked.
    let t002 = html.find("<tr class=\"best\" data-trial=\"t002\"").unwrap();
    let t001 = html.find("<tr data-trial=\"t001\"").unwrap();
    let t003 = html.find("<tr data-trial=\"t003\"").unwrap();
    assert!(t002 < t001 && t001 < t003);
    // Two curves per curve chart, the best in its colour; the failed trial is a cross.
    assert_eq!(
        html.matches("<g class=\"curve best\" data-trial=\"t002\" data-status=\"done\">")
            .count(),
        2
    );
    assert_eq!(
        html.matches("<g class=\"curve\" data-trial=\"t001\" data-status=\"done\">")
            .count(),
        2
    );
    assert!(html.contains(&format!("stroke=\"{BEST_COLOR}\"")));
    assert!(html.contains("<g class=\"missing\" data-trial=\"t003\" data-status=\"failed\""));
    assert!(
        CSS.contains(BEST_COLOR),
        "the style sheet's --best is BEST_COLOR"
    );
}

#[test]
fn the_small_report_as_html() {
    let (results, metrics) = small();
    let html = render(
        "lab",
        &results,
        &metrics,
        &BTreeMap::new(),
        "2026-11-22 17:03 UTC",
    );
    // One tag a line, so a change shows as a readable diff.
    insta::assert_snapshot!(html.replace("><", ">\n<"));
}

#[test]
fn no_metrics_no_objective_no_trials() {
    let (mut results, _) = small();
    for row in &mut results.rows {
        row.best = None;
        row.value = None;
        row.status = RowStatus::Queued;
        row.attempt = None;
    }
    let none = BTreeMap::new();
    let html = render("lab", &results, &none, &BTreeMap::new(), "now");
    assert_self_contained(&html);
    assert!(html.contains("No trial has reported <code>val_accuracy</code> yet."));
    assert!(html.contains("No trial has reported metrics yet"));
    assert!(!html.contains("<svg"));
    assert_eq!(html.matches("<tr data-trial=").count(), 3);

    let (mut results, metrics) = small();
    // What `results::results` gives without an objective: no best value.
    results.objective = None;
    for row in &mut results.rows {
        row.best = None;
        row.value = None;
    }
    let html = render("lab", &results, &metrics, &BTreeMap::new(), "now");
    assert_self_contained(&html);
    assert!(html.contains("no objective: trials are listed in order"));
    assert!(!html.contains("objective-chart"));
    // Without an objective every metric is charted, none highlighted as best.
    assert!(
        html.contains("<h2>val_accuracy by epoch</h2>") && html.contains("<h2>loss by epoch</h2>")
    );
    assert!(!html.contains("curve best"));

    results.rows.clear();
    let html = render("lab", &results, &BTreeMap::new(), &BTreeMap::new(), "now");
    assert_self_contained(&html);
    assert!(html.contains("The sweep has no trials."));
}

#[test]
fn one_trial_and_equal_values_still_draw() {
    let results = Results {
        objective: objective(),
        param_names: vec!["lr".into(), "aug".into()],
        rows: vec![row(
            "t001",
            "low",
            Some(0.5),
            RowStatus::Done { attempt: 1 },
        )],
    };
    // One point only, at epoch 1.
    let metrics = BTreeMap::from([(
        "t001".to_string(),
        MetricsSummary::of(&parse_jsonl("{\"epoch\": 1, \"val_accuracy\": 0.5}\n")),
    )]);
    let html = render("lab", &results, &metrics, &BTreeMap::new(), "now");
    assert_self_contained(&html);
    // A lone point is a marker, not an invisible one-point line.
    assert!(html.contains(
        "<g class=\"curve best\" data-trial=\"t001\" data-status=\"done\"><title>t001 · lr=0.001 aug=low</title><circle"
    ));

    let mut results = results;
    results.rows = (1..=4)
        .map(|index| {
            row(
                &format!("t00{index}"),
                "same",
                Some(0.5),
                RowStatus::Done { attempt: 1 },
            )
        })
        .collect();
    let metrics = results
        .rows
        .iter()
        .map(|row| (row.trial.clone(), curve(0.5)))
        .collect();
    let html = render("lab", &results, &metrics, &BTreeMap::new(), "now");
    assert_self_contained(&html);
    assert_eq!(html.matches("class=\"point").count(), 4);
}

#[test]
fn hundreds_of_trials_stay_readable_and_small() {
    let rows: Vec<ResultRow> = (0..600)
        .map(|index| {
            let status = match index % 10 {
                9 => RowStatus::Failed,
                8 => RowStatus::Queued,
                _ => RowStatus::Done { attempt: 1 },
            };
            let best = matches!(status, RowStatus::Done { .. }).then(|| 0.99 - index as f64 * 1e-3);
            row(&format!("t{:04}", index + 1), "x", best, status)
        })
        .collect();
    let metrics: BTreeMap<String, MetricsSummary> = rows
        .iter()
        .filter_map(|row| {
            let best = row.best?;
            // 2,000 steps each, no epochs.
            let text: String = (0..2000)
                .map(|step| {
                    format!(
                        "{{\"step\": {step}, \"val_accuracy\": {}}}\n",
                        best * step as f64 / 2000.0
                    )
                })
                .collect();
            Some((row.trial.clone(), MetricsSummary::of(&parse_jsonl(&text))))
        })
        .collect();
    let results = Results {
        objective: objective(),
        param_names: vec!["lr".into(), "aug".into()],
        rows,
    };
    let html = render("big", &results, &metrics, &BTreeMap::new(), "now");
    assert_self_contained(&html);
    assert!(html.len() < 8_000_000, "{} bytes", html.len());
    // The chart spans the page; trial labels are thinned to one per 18 units of 1,200.
    assert!(html.contains("<section class=\"objective wide\">"));
    let labels = html.matches("trial-label").count();
    assert!((30..=67).contains(&labels), "{labels} trial labels");
    assert_eq!(html.matches("<g class=\"point").count(), 480);
    assert_eq!(html.matches("<g class=\"missing\"").count(), 120);
    assert_eq!(html.matches("<g class=\"curve").count(), 480);
    assert!(html.contains("<h2>val_accuracy by step</h2>"));
    // The legend names the best and the palette's trials, then counts the rest.
    assert!(
        html.contains("472 more trials"),
        "{}",
        &html[html.len() - 3000..]
    );
    assert_eq!(html.matches("<tr").count(), 601);
}

#[test]
fn utc_texts() {
    assert_eq!(utc_text(0), "1970-01-01 00:00 UTC");
    assert_eq!(utc_text(951_782_400_000), "2000-02-29 00:00 UTC");
    assert_eq!(utc_text(1_795_398_245_000), "2026-11-23 01:44 UTC");
    assert_eq!(utc_text(4_102_444_799_000), "2099-12-31 23:59 UTC");
}

#[test]
fn trials_stopped_early_are_counted_apart_with_what_stopping_them_saved() {
    let stopped =
        RowStatus::StoppedEarly(crate::sweep::early_stop::Judgement::asha_stop(1, 0.1, 0.9));
    let results = Results {
        objective: objective(),
        param_names: vec!["lr".into(), "aug".into()],
        rows: vec![
            row("t001", "low", Some(0.9), RowStatus::Done { attempt: 1 }),
            row("t002", "high", Some(0.1), stopped),
        ],
    };
    let metrics = BTreeMap::from([
        ("t001".to_string(), curve(0.9)),
        ("t002".to_string(), curve(0.1)),
    ]);
    let html = render(
        "lab",
        &results,
        &metrics,
        &BTreeMap::new(),
        "2026-11-26 20:00 UTC",
    );
    assert!(html.contains("count stopped-early"), "{html}");
    // Its curve ends in a cross where it was stopped; the done trial's does not.
    assert!(
        html.contains(
            "<g class=\"curve stopped-early\" data-trial=\"t002\" data-status=\"stopped early\">"
        ),
        "{html}"
    );
    assert!(
        html.contains("<g class=\"curve best\" data-trial=\"t001\" data-status=\"done\">"),
        "{html}"
    );
    assert!(html.contains("class=\"stop-mark\""));
    assert!(
        html.contains("stopped early (epoch 1: 0.1 &lt; rung 0.9)"),
        "the row says why"
    );
    assert!(
        html.contains("early stopping stopped 1 of 2 trials: 6 of 6 trial-epochs run"),
        "{html}"
    );
}

#[test]
fn a_param_of_many_values_is_a_scatter_on_a_log_axis_when_they_span_decades() {
    let rows = |lr: fn(usize) -> f64| -> Vec<ResultRow> {
        (0..15)
            .map(|index| {
                let mut row = row(
                    &format!("t{:03}", index + 1),
                    "low",
                    Some(0.5 + index as f64 / 100.0),
                    RowStatus::Done { attempt: 1 },
                );
                row.params[0] = ("lr".into(), ParamValue::Float(lr(index)));
                row
            })
            .collect()
    };
    let chart = |rows| {
        let results = Results {
            objective: objective(),
            param_names: vec!["lr".into(), "aug".into()],
            rows,
        };
        chart::by_param(&results, results.objective.as_ref().unwrap(), "lr", None).into_string()
    };
    // 1e-5 to 1e-2: a log axis, its ticks powers of ten; no columns, so no means.
    let log = chart(rows(|index| 1e-5 * 10f64.powf(index as f64 * 3.0 / 14.0)));
    assert!(log.contains(">lr (log scale)</text>"), "{log}");
    assert!(log.contains(">0.001</text>"), "{log}");
    assert!(!log.contains("class=\"mean\""));
    assert_eq!(log.matches("<g class=\"point").count(), 15);
    // 0.1 to 0.24: a plain axis.
    let plain = chart(rows(|index| 0.1 + index as f64 / 100.0));
    assert!(plain.contains(">lr</text>"), "{plain}");
}

/// A ranked value as `results` reports it (at epoch 3).
fn picked(value: f64) -> Option<Picked> {
    Some(Picked {
        value,
        place: Place {
            epoch: Some(3.0),
            step: None,
        },
    })
}

/// `val_accuracy` over `epochs`, linear to `last`; `text` replaces the value of epoch 3
/// (a bare `NaN` or `Infinity`, as Python's `json.dumps` writes them).
fn curve_of(epochs: u32, last: f64, third: Option<&str>) -> MetricsSummary {
    let text: String = (1..=epochs)
        .map(|epoch| {
            let value = last * f64::from(epoch) / f64::from(epochs);
            let value = match (epoch, third) {
                (3, Some(text)) => text.to_string(),
                _ => value.to_string(),
            };
            format!("{{\"epoch\": {epoch}, \"val_accuracy\": {value}}}\n")
        })
        .collect();
    MetricsSummary::of(&parse_jsonl(&text))
}

/// A trial of every status, each but the queued one with a ranked value, in the order
/// `results` sorts them. t007 is diverged: done, but its ranked value is NaN.
fn every_status() -> (Results, BTreeMap<String, MetricsSummary>) {
    let stopped_early =
        RowStatus::StoppedEarly(crate::sweep::early_stop::Judgement::asha_stop(2, 0.2, 0.6));
    let rows = [
        ("t004", "high", Some(0.97), RowStatus::Failed, 2),
        ("t001", "low", Some(0.9), RowStatus::Done { attempt: 1 }, 6),
        ("t002", "high", Some(0.8), RowStatus::Done { attempt: 1 }, 6),
        ("t008", "low", Some(0.6), RowStatus::Running, 4),
        ("t006", "high", Some(0.5), RowStatus::Stopped, 3),
        ("t005", "low", Some(0.3), RowStatus::TimedOut(90_000), 5),
        ("t003", "low", Some(0.2), stopped_early, 2),
        (
            "t007",
            "high",
            Some(f64::NAN),
            RowStatus::Diverged { attempt: 1 },
            4,
        ),
        ("t009", "low", None, RowStatus::Queued, 0),
    ];
    let mut metrics = BTreeMap::new();
    let rows = rows
        .into_iter()
        .map(|(trial, aug, value, status, epochs)| {
            let mut row = row(trial, aug, value, status);
            row.value = value.and_then(picked);
            row.params[0].1 = ParamValue::Float(match trial {
                "t001" | "t003" | "t005" => 0.01,
                _ => 0.001,
            });
            if status == RowStatus::Queued {
                row.attempt = None;
            }
            if let Some(value) = value {
                let third = (trial == "t007").then_some("NaN");
                let last = if value.is_finite() { value } else { 0.7 };
                metrics.insert(trial.to_string(), curve_of(epochs, last, third));
            }
            row
        })
        .collect();
    // t007's curve turns NaN at epoch 3, comes back, and is -inf at epoch 5 and 6
    // (curves that keep what the trial reported, as the lead's `diverged` work makes
    // them).
    let diverging = vec![
        (1.0, 0.3),
        (2.0, 0.5),
        (3.0, f64::NAN),
        (4.0, 0.6),
        (5.0, f64::NEG_INFINITY),
        (6.0, f64::NEG_INFINITY),
    ];
    let summary = metrics.get_mut("t007").unwrap();
    summary.curves.insert("val_accuracy".into(), diverging);
    let results = Results {
        objective: objective(),
        param_names: vec!["lr".into(), "aug".into()],
        rows,
    };
    (results, metrics)
}

/// Each `data-trial` of `html` with the `data-status` of the same element.
fn statuses(html: &str) -> Vec<(String, String)> {
    html.split('<')
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>')?];
            let value = |name: &str| {
                let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
                let end = tag[start..].find('"')? + start;
                Some(tag[start..end].to_string())
            };
            Some((value("data-trial")?, value("data-status")?))
        })
        .collect()
}

/// The part of `html` from `marker` to the next `close`.
fn part<'a>(html: &'a str, marker: &str, close: &str) -> &'a str {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("no `{marker}` in {html}"));
    let end = html[start..]
        .find(close)
        .map_or(html.len(), |end| start + end);
    &html[start..end]
}

#[test]
fn trials_that_did_not_run_to_their_end_are_marked_in_every_chart_and_left_out_of_the_means() {
    let (results, metrics) = every_status();
    let html = render("lab", &results, &metrics, &BTreeMap::new(), "now");
    assert_self_contained(&html);
    let word = |trial: &str| {
        let row = results.rows.iter().find(|row| row.trial == trial).unwrap();
        row.status.word().to_string()
    };
    let objective = part(&html, "<section class=\"objective", "</section>");
    let by_param = part(&html, "<section class=\"params-by", "</section>");
    let curves = part(&html, "data-metric=\"val_accuracy\"", "</section>");
    let charts = [
        ("objective", objective, objective),
        (
            "by lr",
            part(by_param, "data-param=\"lr\"", "</svg>"),
            by_param,
        ),
        (
            "by aug",
            part(by_param, "data-param=\"aug\"", "</svg>"),
            by_param,
        ),
        ("curves", curves, curves),
    ];
    for (chart, drawing, section) in charts {
        let marks = statuses(drawing);
        for row in &results.rows {
            // The queued trial has no value and no curve: only the objective's chart
            // shows it (on its base line).
            if row.status == RowStatus::Queued && chart != "objective" {
                continue;
            }
            let shown: Vec<&String> = marks
                .iter()
                .filter(|(trial, _)| *trial == row.trial)
                .map(|(_, status)| status)
                .collect();
            assert!(!shown.is_empty(), "{chart}: no mark of {}", row.trial);
            assert!(
                shown.iter().all(|status| **status == word(&row.trial)),
                "{chart}: {} is {}, marked {shown:?}",
                row.trial,
                row.status
            );
        }
        // The legend explains each mark of a trial that did not run to its end.
        let legend = part(section, "<ul class=\"legend", "</ul>");
        for status in ["stopped early", "failed", "stopped", "running"] {
            assert!(
                legend.contains(&format!("data-status=\"{status}\"")),
                "{chart}: `{status}` not in the legend {legend}"
            );
        }
    }
    // Curves of trials that did not end are dashed; t007's breaks where it turned NaN
    // and where it turned -inf, each marked once at the chart's edge.
    assert!(part(curves, "data-trial=\"t003\"", "</g>").contains("stroke-dasharray"));
    assert!(!part(curves, "data-trial=\"t001\"", "</g>").contains("stroke-dasharray"));
    let t007 = part(curves, "data-trial=\"t007\"", "</g></g>");
    assert_eq!(t007.matches("class=\"not-finite\"").count(), 2, "{t007}");
    assert!(
        t007.contains("epoch 3: NaN") && t007.contains("epoch 5: -inf"),
        "{t007}"
    );
    // The means: of the done trials with a value only (t001 at lr 0.01 and aug low,
    // t002 at 0.001 and high); the others' partial values and t007's NaN are left out.
    let means = |param: &str| -> Vec<(String, String)> {
        let chart = part(by_param, &format!("data-param=\"{param}\""), "</svg>");
        chart
            .split("<g class=\"mean\"")
            .skip(1)
            .map(|rest| {
                let value = &part(rest, "data-value=\"", "\">")["data-value=\"".len()..];
                let label = part(rest, "class=\"mean-label\"", "</text>");
                (
                    value.to_string(),
                    label[label.find('>').unwrap() + 1..].to_string(),
                )
            })
            .collect()
    };
    let pairs = |list: [(&str, &str); 2]| -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(means("aug"), pairs([("high", "0.8"), ("low", "0.9")]));
    assert_eq!(means("lr"), pairs([("0.001", "0.8"), ("0.01", "0.9")]));
    assert!(by_param.contains("left out of the means"), "{by_param}");
}

#[test]
fn a_sweep_of_every_status_as_html() {
    let (results, metrics) = every_status();
    let html = render(
        "lab",
        &results,
        &metrics,
        &BTreeMap::new(),
        "2026-11-22 17:03 UTC",
    );
    insta::assert_snapshot!(html.replace("><", ">\n<"));
}

/// The x tick labels of `chart` (a param's chart) with their centres, as shown.
fn x_labels(chart: &str) -> Vec<(f64, String)> {
    chart
        .split("<text class=\"tick x-tick\"")
        .skip(1)
        .map(|rest| {
            let x = part(rest, "x=\"", "\" ");
            let x: f64 = x[3..].parse().unwrap();
            let text = &rest[rest.find('>').unwrap() + 1..rest.find("</text>").unwrap()];
            // A cut label holds its whole text as a title first.
            let text = text.rsplit("</title>").next().unwrap();
            (x, text.to_string())
        })
        .collect()
}

/// No two labels of `labels` overlap, each taken as 7.5 units a character (12px type).
fn assert_apart(labels: &[(f64, String)], chart: &str) {
    assert!(labels.len() >= 2, "{labels:?} in {chart}");
    for pair in labels.windows(2) {
        let ((x0, a), (x1, b)) = (&pair[0], &pair[1]);
        let room = (a.chars().count() + b.chars().count()) as f64 * 7.5 / 2.0;
        assert!(
            x1 - x0 >= room,
            "`{a}` at {x0} and `{b}` at {x1} overlap: {labels:?}"
        );
    }
}

/// 12 trials whose param `name` takes `values` (by trial), ranked by their index.
fn twelve(values: &[ParamValue]) -> Results {
    let rows = values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let mut row = row(
                &format!("t{:03}", index + 1),
                "low",
                Some(0.5 + index as f64 / 100.0),
                RowStatus::Done { attempt: 1 },
            );
            row.value = picked(0.5 + index as f64 / 100.0);
            row.params[0].1 = value.clone();
            row
        })
        .collect();
    Results {
        objective: objective(),
        param_names: vec!["lr".into(), "aug".into()],
        rows,
    }
}

#[test]
fn a_12_trial_loguniform_param_is_a_log_axis_with_labels_apart() {
    let drawn = crate::sweep::search::random::draw(
        12,
        7,
        &[(
            "lr".into(),
            crate::sweep::Distribution::LogUniform(1e-5, 1e-1),
        )],
    );
    let values: Vec<ParamValue> = drawn.into_iter().map(|mut set| set.remove(0).1).collect();
    let results = twelve(&values);
    let html = render("lab", &results, &BTreeMap::new(), &BTreeMap::new(), "now");
    assert_self_contained(&html);
    let chart = part(&html, "data-param=\"lr\"", "</svg>");
    assert!(chart.contains(">lr (log scale)</text>"), "{chart}");
    assert!(
        !chart.contains("class=\"mean\""),
        "12 values, 12 trials: no column"
    );
    assert_eq!(chart.matches("<g class=\"point").count(), 12);
    let labels = x_labels(chart);
    assert_apart(&labels, chart);
    assert!(labels.iter().any(|(_, text)| text == "0.001"), "{labels:?}");
}

#[test]
fn the_search_decides_a_param_s_axis_whatever_the_count_of_its_values() {
    use crate::sweep::Distribution;
    let chart = |values: Vec<ParamValue>, scale: Option<ParamScale>| {
        let results = twelve(&values);
        chart::by_param(&results, results.objective.as_ref().unwrap(), "lr", scale).into_string()
    };
    let floats = |values: &[f64]| -> Vec<ParamValue> {
        values
            .iter()
            .map(|value| ParamValue::Float(*value))
            .collect()
    };
    let spread: Vec<f64> = (0..12).map(|index| 0.001 + index as f64 * 0.09).collect();
    // `uniform: [0.001, 1]`: 12 values over three decades, on a linear axis as drawn.
    let search = Search::Random {
        count: 12,
        seed: 1,
        params: vec![("lr".into(), Distribution::Uniform(0.001, 1.0))],
    };
    let scales = param_scales(&search);
    assert_eq!(scales["lr"], ParamScale::Linear);
    let uniform = chart(floats(&spread), Some(scales["lr"]));
    assert!(
        uniform.contains(">lr</text>") && !uniform.contains("log scale"),
        "{uniform}"
    );
    assert_apart(&x_labels(&uniform), &uniform);
    // The same values listed (a grid, a choice) or unknown: a log axis, as they are
    // positive and span more than a decade.
    let listed = chart(floats(&spread), None);
    assert!(listed.contains(">lr (log scale)</text>"), "{listed}");
    // A grid of three numbers a decade apart, four trials each: a log axis, with a mean
    // at each value.
    let grid: Vec<f64> = (0..12).map(|index| 10f64.powi(-(index % 3) - 2)).collect();
    let search = Search::Grid(vec![("lr".into(), floats(&[1e-2, 1e-3, 1e-4]))]);
    assert_eq!(param_scales(&search)["lr"], ParamScale::Listed);
    let columns = chart(floats(&grid), Some(ParamScale::Listed));
    assert!(columns.contains(">lr (log scale)</text>"), "{columns}");
    assert_eq!(columns.matches("<g class=\"mean\"").count(), 3);
    // A grid of numbers within a decade: linear; `int:` too.
    let narrow: Vec<f64> = (0..12)
        .map(|index| 0.1 + (index % 4) as f64 * 0.1)
        .collect();
    assert!(chart(floats(&narrow), Some(ParamScale::Listed)).contains(">lr</text>"));
    let tpe = Search::Tpe(crate::sweep::search::Tpe {
        count: 12,
        seed: 1,
        startup: 4,
        params: vec![("lr".into(), Distribution::Int(1, 1000))],
        location: crate::input::source::Location {
            file: "sweep.yaml".into(),
            line: 1,
            column: 1,
        },
    });
    assert_eq!(param_scales(&tpe)["lr"], ParamScale::Linear);
    // A choice of strings: a column each; 30 long ones have their labels thinned and cut.
    let search = Search::Random {
        count: 30,
        seed: 1,
        params: vec![(
            "lr".into(),
            Distribution::Choice(vec![ParamValue::Text("a".into())]),
        )],
    };
    assert_eq!(param_scales(&search)["lr"], ParamScale::Categories);
    let words: Vec<ParamValue> = (0..30)
        .map(|index| ParamValue::Text(format!("optimizer-number-{index:02}")))
        .collect();
    let rows = twelve(&words[..12]);
    let mut results = rows.clone();
    results.rows = (0..30)
        .map(|index| {
            let mut row = rows.rows[index % 12].clone();
            row.trial = format!("t{:03}", index + 1);
            row.params[0].1 = words[index].clone();
            row
        })
        .collect();
    let many =
        chart::by_param(&results, results.objective.as_ref().unwrap(), "lr", None).into_string();
    let labels = x_labels(&many);
    assert!(labels.len() < 30, "{labels:?}");
    assert_apart(&labels, &many);
    assert!(labels[0].1.ends_with('…'), "{labels:?}");
}

#[test]
fn every_status_has_a_mark_of_its_own_and_only_done_is_ordinary() {
    let judgement = crate::sweep::early_stop::Judgement::asha_stop(1, 0.1, 0.9);
    // Every status, once. The match is exhaustive: a status added to `RowStatus` stops
    // the build here until it is listed (the one arm a new status needs in the report;
    // its mark is found by its word, `mark::MARKS` has `diverged`).
    let every = [
        RowStatus::Done { attempt: 1 },
        RowStatus::Diverged { attempt: 1 },
        RowStatus::Failed,
        RowStatus::Running,
        RowStatus::Queued,
        RowStatus::Stopped,
        RowStatus::StoppedEarly(judgement),
        RowStatus::TimedOut(1000),
    ];
    for status in &every {
        match status {
            RowStatus::Done { .. }
            | RowStatus::Diverged { .. }
            | RowStatus::Failed
            | RowStatus::Running
            | RowStatus::Queued
            | RowStatus::Stopped
            | RowStatus::StoppedEarly(_)
            | RowStatus::TimedOut(_) => {}
        }
        let mark = mark::of(status);
        assert_eq!(mark.word, status.word(), "{status}");
        assert_eq!(mark.ordinary(), matches!(status, RowStatus::Done { .. }));
    }
    // Marks tell statuses apart by shape or colour.
    let marks = mark::present(&every);
    for (index, a) in marks.iter().enumerate() {
        for b in &marks[index + 1..] {
            assert!(
                a.shape != b.shape || a.color != b.color,
                "{} and {}",
                a.word,
                b.word
            );
        }
    }
}
