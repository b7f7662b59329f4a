//! `tfimg sweep report`, as a person would meet it: a sweep's folder (the copy of its
//! file, its journal, each trial's folder with `metrics.jsonl`) made by hand the way
//! `tfimg sweep` leaves it, the real binary writing the report, and a real headless
//! Chromium (Debian's `chromium`) opening it: a screenshot that shows the charts in their
//! colours, and the DOM with the table in the objective's order, the objective by each
//! param (a dot per trial, a mean per column), one curve per trial that reported metrics, a param that is markup shown as text and nothing loaded from the
//! network. The screenshot and the page stay in `target/test-artifacts/`.
//!
//! Then a real sweep run on the Engine, whose trials did not all run to their end (one
//! stopped early by ASHA, one that failed after two reports, one whose metric turned NaN):
//! every chart of its report marks each of them with its status, and the means of the
//! objective by param are those of the trials that ran to their end.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::sweep::sweep_guard;
use common::{scratch, tfimg, unique};
use tfimg_testing::sweep::report::{BEST_COLOR, POINT_COLOR};
use tfimg_testing::sweep::results::number_text;

const SWEEP_FILE: &str = r#"sweep: report-test
image: tfimg/cpu-headless:2.9.3
command: [python, train.py, --lr, "{lr}", --aug, "{aug}"]
params:
  lr: [0.001, 0.0001]
  aug: [low, "<b>&\"", high]
max_parallel: 2
retries: 1
objective: {metric: val_accuracy, mode: max}
"#;

/// The trials (in trial order) that finished, with their final `val_accuracy`:
/// t002 (lr 0.001, the markup param) is the best; t004 needed a second attempt.
const DONE: [(&str, f64); 4] = [
    ("t001", 0.81),
    ("t002", 0.93),
    ("t004", 0.74),
    ("t005", 0.88),
];

/// The table's order: by best `val_accuracy`, then the failed t003 and the queued t006.
const TABLE_ORDER: [&str; 6] = ["t002", "t005", "t001", "t004", "t003", "t006"];

const SCREEN: (u32, u32) = (1280, 1800);

/// `runs/report-test/` under `root`, as `tfimg sweep` would have left it after
/// a run that was stopped with t006 still queued.
fn sweep_folder(root: &Path) -> PathBuf {
    let dir = root.join("runs/report-test");
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("sweep.yaml", SWEEP_FILE);
    let start_ms: u64 = 1_795_000_000_000;
    let mut journal = format!(
        "{{\"event\":\"sweep_started\",\"sweep\":\"report-test\",\"trials\":6,\"fingerprint\":{{}},\"time_ms\":{start_ms}}}\n"
    );
    let mut attempt = |trial: &str, number: u32, gpu: &str, from_s: u64, to_s: u64, exit: i64| {
        journal += &format!(
            "{{\"event\":\"trial_started\",\"trial\":\"{trial}\",\"attempt\":{number},\"container\":\"report-test-{trial}\",\"container_id\":\"c{trial}{number}\",\"gpus\":[\"{gpu}\"],\"image\":\"sha256:abc\",\"time_ms\":{}}}\n",
            start_ms + from_s * 1000
        );
        journal += &format!(
            "{{\"event\":\"trial_finished\",\"trial\":\"{trial}\",\"attempt\":{number},\"exit_code\":{exit},\"time_ms\":{}}}\n",
            start_ms + to_s * 1000
        );
    };
    attempt("t001", 1, "0", 0, 95, 0);
    attempt("t002", 1, "1", 0, 102, 0);
    attempt("t003", 1, "0", 95, 97, 1);
    attempt("t004", 1, "1", 102, 110, 137);
    attempt("t004", 2, "0", 110, 200, 0);
    attempt("t005", 1, "1", 200, 290, 0);
    journal += &format!(
        "{{\"event\":\"sweep_stopped\",\"reason\":\"interrupted\",\"time_ms\":{}}}\n",
        start_ms + 300_000
    );
    write("journal.jsonl", &journal);
    for (trial, best) in DONE {
        let lines: String = (1..=6)
            .map(|epoch| {
                let f = f64::from(epoch) / 6.0;
                let accuracy = best * (0.55 + 0.45 * f);
                let loss = 1.6 * (1.0 - accuracy) + 0.05;
                format!(
                    "{{\"epoch\": {epoch}, \"loss\": {loss:.4}, \"accuracy\": {:.4}, \"val_loss\": {:.4}, \"val_accuracy\": {accuracy:.4}}}\n",
                    accuracy + 0.02,
                    loss + 0.1
                )
            })
            .collect();
        write(&format!("{trial}/metrics.jsonl"), &lines);
        write(&format!("{trial}/stdout.log"), "Epoch 1/6\n");
    }
    write(
        "t003/stderr.log",
        "Traceback (most recent call last):\nValueError: bad aug\n",
    );
    dir
}

/// The values of attribute `name` on the elements whose opening tag starts with `open`
/// (`<tr `), in document order.
fn attribute_values(html: &str, open: &str, name: &str) -> Vec<String> {
    html.split(open)
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>')?];
            let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
            let end = tag[start..].find('"')? + start;
            Some(tag[start..end].to_string())
        })
        .collect()
}

/// The part of `html` from the element carrying `marker` to the end of its section.
fn section<'a>(html: &'a str, marker: &str) -> &'a str {
    element(html, marker, "</section>")
}

/// `target/test-artifacts/`, made when missing.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs headless Chromium on `page` with `extra` flags, at most a minute; its stdout. Its
/// profile, cache and crash reports go to a folder removed after (`HOME` and the XDG
/// folders point there), not to the user's own.
fn chromium(page: &Path, extra: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let (width, height) = SCREEN;
    let output = Command::new("timeout")
        .arg("60")
        .arg("chromium")
        .env("HOME", profile.path())
        .env("XDG_CONFIG_HOME", profile.path().join("config"))
        .env("XDG_CACHE_HOME", profile.path().join("cache"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.path().display()),
            &format!("--window-size={width},{height}"),
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The screenshot's size and RGB pixels.
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("a screenshot"));
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG file");
    let mut buffer = vec![0; reader.output_buffer_size().expect("a sane size")];
    let info = reader.next_frame(&mut buffer).expect("a PNG frame");
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Indexed => unreachable!("EXPAND turns a palette into RGB"),
    };
    let pixels = buffer[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|pixel| match channels {
            1 | 2 => [pixel[0]; 3],
            _ => [pixel[0], pixel[1], pixel[2]],
        })
        .collect();
    (info.width, info.height, pixels)
}

/// `#e4572e` as RGB.
fn rgb(hex: &str) -> [u8; 3] {
    let channel = |at: usize| u8::from_str_radix(&hex[at..at + 2], 16).unwrap();
    [channel(1), channel(3), channel(5)]
}

fn near(pixel: [u8; 3], colour: [u8; 3]) -> bool {
    pixel
        .iter()
        .zip(colour)
        .all(|(a, b)| (i16::from(*a) - i16::from(b)).abs() <= 10)
}

#[test]
fn the_report_shows_the_sweep_in_a_real_browser() {
    let root = scratch(&[]);
    let dir = sweep_folder(root.path());
    let page = root.path().join("out/report.html");
    let run = tfimg(
        root.path(),
        &[
            "sweep",
            "report",
            dir.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.tail());
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!("report written to `{}`\n", page.display())
    );
    let html = std::fs::read_to_string(&page).unwrap();
    std::fs::copy(&page, artifacts().join("sweep-report.html")).unwrap();
    // Escaped as written: the markup param is text in the table, the legend and the best
    // trial's command line.
    assert!(html.contains("<td>&lt;b&gt;&amp;&quot;</td>"), "{html}");
    assert!(html.contains("<code>python train.py --lr 0.001 --aug '&lt;b&gt;&amp;&quot;'</code>"));

    if !common::chromium_available() {
        return;
    }
    let screenshot = root.path().join("report.png");
    chromium(&page, &[format!("--screenshot={}", screenshot.display())]);
    std::fs::copy(&screenshot, artifacts().join("sweep-report.png")).unwrap();
    let (width, height, pixels) = decode_png(&screenshot);
    assert_eq!((width, height), SCREEN);
    let background = pixels[0];
    let drawn = pixels.iter().filter(|pixel| **pixel != background).count();
    assert!(
        drawn > pixels.len() / 20,
        "the page looks blank: {drawn} pixels differ from the background"
    );
    // The best trial's dot and curves (about 2,000 pixels here), and the other trials'
    // dots and the second trial's curves (about 600).
    for (name, colour, least) in [("best", BEST_COLOR, 1000), ("point", POINT_COLOR, 300)] {
        let count = pixels
            .iter()
            .filter(|pixel| near(**pixel, rgb(colour)))
            .count();
        assert!(
            count > least,
            "only {count} pixels of the {name} colour {colour} on screen"
        );
    }

    let dom = chromium(&page, &["--dump-dom".to_string()]);
    std::fs::write(artifacts().join("sweep-report.dom.html"), &dom).unwrap();
    // The table: one row per trial, sorted by the objective, the best first and marked.
    assert_eq!(attribute_values(&dom, "<tr ", "data-trial"), TABLE_ORDER);
    assert!(dom.contains("<tr class=\"best\" data-trial=\"t002\""));
    let table = section(&dom, "<section class=\"results\">");
    for status in ["done (attempt 2)", ">failed<", ">queued<"] {
        assert!(table.contains(status), "no `{status}` in the table");
    }
    // The markup param is text: no `<b>` element, the characters in a cell.
    assert!(!dom.contains("<b>"), "the param became markup");
    assert!(table.contains("<td>&lt;b&gt;&amp;\"</td>"));
    // The objective chart: a dot per done trial in table order, a cross per other.
    let objective = section(&dom, "<section class=\"objective\">");
    assert_eq!(
        attribute_values(objective, "<g class=\"point", "data-trial"),
        ["t002", "t005", "t001", "t004"]
    );
    assert_eq!(
        attribute_values(objective, "<g class=\"missing", "data-trial"),
        ["t003", "t006"]
    );
    // The objective by each param: a chart per param that varies, a dot per done trial
    // in its value's column, a bar at each column's mean (lr's columns by value).
    let params = section(&dom, "<section class=\"params-by wide\">");
    assert_eq!(
        attribute_values(params, "<svg class=\"chart param-chart\"", "data-param"),
        ["lr", "aug"]
    );
    for param in ["lr", "aug"] {
        let start = params.find(&format!("data-param=\"{param}\"")).unwrap();
        let chart = &params[start..start + params[start..].find("</svg>").unwrap()];
        let mut dots = attribute_values(chart, "<g class=\"point", "data-trial");
        dots.sort();
        assert_eq!(dots, ["t001", "t002", "t004", "t005"], "{param}");
        assert_eq!(
            attribute_values(chart, "<g class=\"mean\"", "data-value").len(),
            2,
            "{param}: a mean per column"
        );
        if param == "lr" {
            let columns = attribute_values(chart, "<g class=\"mean\"", "data-value");
            let values: Vec<f64> = columns.iter().map(|c| c.parse().unwrap()).collect();
            assert!(values[0] < values[1], "lr's columns by value: {columns:?}");
        }
    }
    // One curve per trial that reported metrics in each curve chart, the best marked.
    for metric in ["val_accuracy", "loss", "val_loss"] {
        let chart = section(&dom, &format!("data-metric=\"{metric}\""));
        let mut curves = attribute_values(chart, "<g class=\"curve", "data-trial");
        curves.sort();
        assert_eq!(curves, ["t001", "t002", "t004", "t005"], "{metric}");
        assert!(chart.contains("<g class=\"curve best\" data-trial=\"t002\""));
        assert!(
            chart.contains("t002 · lr=0.001 aug=&lt;b&gt;&amp;\" (best)"),
            "{metric} legend"
        );
    }
    // Nothing to fetch: no script, no stylesheet link, no image, no address at all.
    for forbidden in [
        "<script", "<link", "<img", "<iframe", "src=", "href=", "http://", "https://", "url(",
    ] {
        assert!(!dom.contains(forbidden), "`{forbidden}` in the page");
    }
}

#[test]
fn a_sweep_named_from_its_parent_folder_gets_report_html_in_its_folder() {
    let root = scratch(&[]);
    let dir = sweep_folder(root.path());
    let run = tfimg(root.path(), &["sweep", "report", "report-test"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    assert_eq!(
        run.stderr,
        "report written to `runs/report-test/report.html`\n"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Written whole: no temporary file is left beside it.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "journal.jsonl",
            "report.html",
            "sweep.yaml",
            "t001",
            "t002",
            "t003",
            "t004",
            "t005"
        ]
    );
}

/// A trial that reports a million distinct epochs (a 30 MB `metrics.jsonl`): `sweep
/// results`, `status` and `report` read it in one pass. Issue 44: every epoch was looked
/// for among those before it (351 s in a release build here; a debug build had not
/// finished after 17 minutes). The 120 s limit only catches that blow-up.
#[test]
fn a_trial_with_a_million_epochs_is_read_in_one_pass() {
    const EPOCHS: u32 = 1_000_000;
    let root = scratch(&[]);
    let dir = sweep_folder(root.path());
    let mut lines = String::with_capacity(32 * EPOCHS as usize);
    for epoch in 1..=EPOCHS {
        let accuracy = if epoch == EPOCHS { 0.99 } else { 0.5 };
        lines.push_str(&format!(
            "{{\"epoch\": {epoch}, \"val_accuracy\": {accuracy}}}\n"
        ));
    }
    std::fs::write(dir.join("t001/metrics.jsonl"), &lines).unwrap();
    let limit = std::time::Duration::from_secs(120);
    let run = common::spawn_tfimg(
        root.path(),
        &["sweep", "results", "report-test", "--json"],
        &[],
    )
    .finish(limit);
    assert_eq!(run.code, 0, "{}", run.tail());
    let results: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let t001 = results["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["trial"] == "t001")
        .unwrap();
    assert_eq!(t001["epochs"], EPOCHS);
    assert_eq!(t001["points"], EPOCHS);
    assert_eq!(t001["value"], 0.99);
    assert_eq!(t001["epoch"], f64::from(EPOCHS));
    assert_eq!(results["best"], "t001");
    for command in ["status", "report"] {
        let run =
            common::spawn_tfimg(root.path(), &["sweep", command, "report-test"], &[]).finish(limit);
        assert_eq!(run.code, 0, "{command}: {}", run.tail());
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("data-trial=\"t001\""));
}

/// Six trials, one at a time, six epochs of a second each, each appending
/// `{"epoch": E, "acc": top * E / 6}` to its `metrics.jsonl`: three that run to their end
/// (each above those before it at every rung), one so low that ASHA stops it at its first
/// rung, one that exits 1 after two reports, and one whose `acc` is NaN at its third
/// report (Python's `json.dumps` writes it as bare `NaN`), after which it ends.
fn live_sweep(name: &str) -> tempfile::TempDir {
    let text = format!(
        r#"sweep: {name}
image: tfimg/cpu-headless:2.9.3
command:
  - python3
  - -c
  - |
    import json, os, sys, time
    d = os.environ['TFIMG_TRIAL_DIR']
    p = json.load(open(d + '/params.json'))
    for epoch in range(1, 7):
        acc = p['top'] * epoch / 6
        if p['kind'] == 'nan' and epoch == 3:
            acc = float('nan')
        with open(d + '/metrics.jsonl', 'a') as f:
            f.write(json.dumps(dict(epoch=epoch, acc=acc)) + '\n')
        if p['kind'] == 'nan' and epoch == 3:
            break
        if p['kind'] == 'fail' and epoch == 2:
            sys.exit(1)
        time.sleep(1)
trials:
  - {{kind: good, width: 16, lr: 0.01, top: 0.7}}
  - {{kind: good, width: 32, lr: 0.001, top: 0.8}}
  - {{kind: good, width: 32, lr: 0.0003, top: 0.9}}
  - {{kind: slow, width: 16, lr: 0.0001, top: 0.12}}
  - {{kind: fail, width: 32, lr: 0.03, top: 0.98}}
  - {{kind: nan, width: 16, lr: 0.003, top: 0.99}}
max_parallel: 1
objective: {{metric: acc, mode: max}}
early_stop: {{rule: asha, max_epochs: 6, grace: 1, reduction: 2, brackets: 1}}
"#
    );
    scratch(&[("sweep.yaml", &text)])
}

/// The status word of the trial whose `acc` turned NaN, as the results table says it.
const NAN_TRIAL_STATUS: &str = "diverged";

/// Each `data-trial` in `html` with the `data-status` of the same element, in document
/// order (elements without a status left out).
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
fn element<'a>(html: &'a str, marker: &str, close: &str) -> &'a str {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("no `{marker}` in the page"));
    let end = html[start..]
        .find(close)
        .map_or(html.len(), |end| start + end);
    &html[start..end]
}

#[test]
fn trials_that_did_not_run_to_their_end_are_marked_in_every_chart_and_left_out_of_the_means() {
    let name = unique("t-report-marks").to_lowercase();
    let _guard = sweep_guard(&name);
    let folder = live_sweep(&name);
    let dir = folder.path().join("runs").join(&name);
    let run = tfimg(folder.path(), &["sweep", "sweep.yaml"]);
    assert!(run.code <= 1, "{}", run.tail());
    let results = tfimg(
        folder.path(),
        &["sweep", "results", dir.to_str().unwrap(), "--json"],
    );
    assert_eq!(results.code, 0, "{}", results.tail());
    let results: serde_json::Value = serde_json::from_str(&results.stdout).unwrap();
    let rows = results["trials"].as_array().unwrap();
    let row = |trial: &str| rows.iter().find(|row| row["trial"] == trial).unwrap();
    let word = |trial: &str| {
        let status = row(trial)["status"].as_str().unwrap();
        let word = status.split(" (").next().unwrap();
        word.to_string()
    };
    let expected: BTreeMap<&str, String> = [
        ("t001", "done"),
        ("t002", "done"),
        ("t003", "done"),
        ("t004", "stopped early"),
        ("t005", "failed"),
        ("t006", NAN_TRIAL_STATUS),
    ]
    .into_iter()
    .map(|(trial, word)| (trial, word.to_string()))
    .collect();
    for (trial, status) in &expected {
        assert_eq!(
            &word(trial),
            status,
            "{trial}: {}\n{}",
            row(trial),
            run.tail()
        );
    }
    // The trials stopped early and failed reported values: the defect drew those as
    // ordinary dots and counted them in the means.
    for trial in ["t004", "t005"] {
        assert!(row(trial)["value"].is_f64(), "{trial}: {}", row(trial));
    }

    let page = folder.path().join("report.html");
    let report = tfimg(
        folder.path(),
        &[
            "sweep",
            "report",
            dir.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(report.code, 0, "{}", report.tail());
    std::fs::copy(&page, artifacts().join("sweep-report-marks.html")).unwrap();
    if !common::chromium_available() {
        return;
    }
    let dom = chromium(&page, &["--dump-dom".to_string()]);
    std::fs::write(artifacts().join("sweep-report-marks.dom.html"), &dom).unwrap();

    // Every chart: the objective per trial, each param's, the curves of `acc`; each with
    // the legend of its section.
    let objective = section(&dom, "<section class=\"objective");
    let by_param = section(&dom, "<section class=\"params-by");
    let curves = section(&dom, "data-metric=\"acc\"");
    let mut charts: Vec<(String, &str, &str)> = vec![("objective".into(), objective, objective)];
    for param in ["kind", "width", "lr", "top"] {
        let chart = element(by_param, &format!("data-param=\"{param}\""), "</svg>");
        charts.push((format!("by {param}"), chart, by_param));
    }
    charts.push(("acc curves".into(), curves, curves));
    for (chart, drawing, around) in &charts {
        let marks = statuses(drawing);
        for (trial, status) in &expected {
            let of_trial: Vec<&String> = marks
                .iter()
                .filter(|(marked, _)| marked == trial)
                .map(|(_, status)| status)
                .collect();
            assert!(!of_trial.is_empty(), "{chart}: no mark of {trial}");
            assert!(
                of_trial.iter().all(|shown| shown == &status),
                "{chart}: {trial} is {status}, marked {of_trial:?}"
            );
        }
        // The legend says what the marks of the trials that did not end mean.
        let legend = element(around, "<ul class=\"legend", "</ul>");
        for status in ["stopped early", "failed"] {
            assert!(
                legend.contains(&format!("data-status=\"{status}\"")),
                "{chart}: the legend does not explain `{status}`: {legend}"
            );
        }
    }
    assert!(by_param.contains("left out of the means"));

    // The means of the objective by param: over the trials that ran to their end only,
    // as the page shows them (a number beside each mean's bar).
    for param in ["kind", "width"] {
        let html = element(by_param, &format!("data-param=\"{param}\""), "</svg>");
        let shown: BTreeMap<String, String> = html
            .split("<g class=\"mean\"")
            .skip(1)
            .map(|rest| {
                let value = rest.split("data-value=\"").nth(1).unwrap();
                let value = value[..value.find('"').unwrap()].to_string();
                let label = element(rest, "class=\"mean-label\"", "</text>");
                let number = label[label.find('>').unwrap() + 1..].to_string();
                (value, number)
            })
            .collect();
        let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        for row in rows
            .iter()
            .filter(|row| row["status"].as_str().unwrap().starts_with("done"))
        {
            let value = match &row["params"][param] {
                serde_json::Value::String(text) => text.clone(),
                number => number.to_string(),
            };
            let sum = sums.entry(value).or_default();
            sum.0 += row["value"].as_f64().unwrap();
            sum.1 += 1;
        }
        let wanted: BTreeMap<String, String> = sums
            .into_iter()
            .map(|(value, (sum, count))| (value, number_text(sum / count as f64)))
            .collect();
        assert_eq!(shown, wanted, "{param}: the means shown");
    }
    // A param of numbers is drawn on a numeric axis, `lr` on a log one (its values span
    // more than a decade), whatever their count.
    let lr = element(by_param, "data-param=\"lr\"", "</svg>");
    assert!(lr.contains("lr (log scale)"), "{lr}");
}
