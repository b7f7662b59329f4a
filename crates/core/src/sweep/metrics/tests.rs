use super::*;
use crate::sweep::Mode;

#[test]
fn jsonl_lines_keep_their_numbers_nan_too_and_bad_lines_are_skipped() {
    let text = concat!(
        "{\"epoch\": 1, \"loss\": 0.9, \"val_accuracy\": 0.5, \"note\": \"warm-up\"}\n",
        "not json\n",
        "{\"epoch\": 2, \"loss\": NaN, \"val_accuracy\": 0.7, \"text\": \"NaN inside\"}\n",
        "[1, 2]\n",
        "{\"epoch\": 3, \"loss\": 0.4, \"val_accuracy\": 0.65, \"ok\": true}\n",
        "{\"epoch\": 4, \"loss\": 0.3",
    );
    let points = parse_jsonl(text);
    assert_eq!(points.len(), 3);
    // A loss that diverged is NaN (never the value before it); a string is no number.
    assert!(points[1].values["loss"].is_nan());
    assert_eq!(points[1].values.get("text"), None);
    assert_eq!(points[1].values.get("val_accuracy"), Some(&0.7));
    let summary = MetricsSummary::of(&points);
    assert_eq!(summary.epochs, Some(3));
    let max = Objective {
        metric: "val_accuracy".into(),
        mode: Mode::Max,
        pick: Pick::Best,
    };
    let min = Objective {
        metric: "loss".into(),
        mode: Mode::Min,
        pick: Pick::Best,
    };
    assert_eq!(summary.best(&max), Some(0.7));
    assert_eq!(summary.best(&min), Some(0.4));
    assert_eq!(summary.last("val_accuracy"), Some(0.65));
    let loss = &summary.curves["loss"];
    assert_eq!((loss[0], loss[2]), ((1.0, 0.9), (3.0, 0.4)));
    assert!(loss[1].0 == 2.0 && loss[1].1.is_nan());
    // Infinities and quoted words too; an epoch that is not finite places nothing.
    let words = parse_jsonl(concat!(
        "{\"epoch\": 1, \"a\": Infinity, \"b\": -Infinity, \"c\": \"NaN\"}\n",
        "{\"epoch\": NaN, \"a\": 1}\n",
    ));
    assert_eq!(words[0].values["a"], f64::INFINITY);
    assert_eq!(words[0].values["b"], f64::NEG_INFINITY);
    assert!(words[0].values["c"].is_nan());
    assert_eq!((words[1].epoch, words[1].values["a"]), (None, 1.0));
    let missing = Objective {
        metric: "accuracy".into(),
        mode: Mode::Max,
        pick: Pick::Best,
    };
    assert_eq!(summary.best(&missing), None);
}

#[test]
fn the_objective_s_value_is_the_last_report_or_the_best_with_its_epoch_or_step() {
    let points = parse_jsonl(concat!(
        "{\"epoch\": 1, \"val_accuracy\": 0.5}\n",
        "{\"epoch\": 2, \"val_accuracy\": 0.9}\n",
        "{\"epoch\": 3, \"val_accuracy\": 0.9}\n",
        "{\"epoch\": 4, \"val_accuracy\": 0.7}\n",
    ));
    let summary = MetricsSummary::of(&points);
    let objective = |pick| Objective {
        metric: "val_accuracy".into(),
        mode: Mode::Max,
        pick,
    };
    let last = summary.pick(&objective(Pick::Last)).unwrap();
    assert_eq!((last.value, last.place.epoch), (0.7, Some(4.0)));
    // The first of equal best values: the epoch the best model was first reached.
    let best = summary.pick(&objective(Pick::Best)).unwrap();
    assert_eq!((best.value, best.place.epoch), (0.9, Some(2.0)));
    assert_eq!(best.place.describe().as_deref(), Some("epoch 2"));
    let steps = MetricsSummary::of(&parse_jsonl("{\"step\": 300, \"val_accuracy\": 0.4}\n"));
    let picked = steps.pick(&objective(Pick::Best)).unwrap();
    assert_eq!(picked.place.describe().as_deref(), Some("step 300"));
    let bare = MetricsSummary::of(&parse_jsonl("{\"val_accuracy\": 0.4}\n"));
    assert_eq!(
        bare.pick(&objective(Pick::Last)).unwrap().place.describe(),
        None
    );
}

#[test]
fn stdout_lines_of_numeric_pairs_only() {
    let text = "Epoch 1/3\nepoch=1 loss=0.8, val_accuracy=0.6\nlr=0.001 starting\nval_accuracy=0.72\nx=abc\nstep=10 loss=inf\n";
    let points = parse_stdout(text);
    assert_eq!(points.len(), 3);
    assert_eq!(points[0].epoch, Some(1.0));
    assert_eq!(points[2].values["loss"], f64::INFINITY);
    let summary = MetricsSummary::of(&points);
    // The second point has no epoch or step: its x is its number.
    assert_eq!(summary.curves["val_accuracy"], [(1.0, 0.6), (2.0, 0.72)]);
    assert_eq!(summary.epochs, Some(1));
}

#[test]
fn a_value_that_diverged_is_never_best_and_is_the_last_when_it_came_last() {
    let points = parse_jsonl(concat!(
        "{\"epoch\": 1, \"val_loss\": NaN}\n",
        "{\"epoch\": 2, \"val_loss\": 0.025}\n",
        "{\"epoch\": 3, \"val_loss\": NaN}\n",
    ));
    let summary = MetricsSummary::of(&points);
    let objective = |pick| Objective {
        metric: "val_loss".into(),
        mode: Mode::Min,
        pick,
    };
    assert!(summary.pick(&objective(Pick::Last)).unwrap().value.is_nan());
    let best = summary.pick(&objective(Pick::Best)).unwrap();
    assert_eq!((best.value, best.place.epoch), (0.025, Some(2.0)));
    assert_eq!(summary.best(&objective(Pick::Best)), Some(0.025));
}

#[test]
fn metric_names() {
    for name in ["val_accuracy", "train/loss", "top-5.acc", "_x"] {
        assert!(valid_metric_name(name), "{name}");
    }
    for name in ["", "1x", "a b", "a=b", "-x"] {
        assert!(!valid_metric_name(name), "{name}");
    }
}

#[test]
fn epochs_are_counted_once_each_whatever_their_order() {
    let line = |epoch: f64| Point {
        epoch: Some(epoch),
        step: None,
        values: [("acc".to_string(), 0.5)].into(),
    };
    // A resumed trial reports epochs 2 and 3 again; 0 and -0 are one epoch.
    let points: Vec<Point> = [0.0, -0.0, 1.0, 2.0, 3.0, 2.0, 3.0, 4.0, 0.5]
        .into_iter()
        .map(line)
        .collect();
    let summary = MetricsSummary::of(&points);
    assert_eq!(summary.epochs, Some(6));
    assert_eq!(summary.points, 9);
    assert_eq!(MetricsSummary::of(&[]).epochs, None);
}

#[test]
fn first_reports_tell_the_objective_a_misspelling_of_it_or_other_metrics() {
    let points = parse_stdout("epoch=1 val_acc=0.5 loss=1.2\n");
    assert_eq!(
        first_reports("val_accuracy", &points),
        FirstReports::Misspelled(vec!["loss".into(), "val_acc".into()])
    );
    assert_eq!(first_reports("val_acc", &points), FirstReports::Objective);
    assert_eq!(first_reports("top5", &points), FirstReports::Other);
    assert_eq!(first_reports("val_accuracy", &[]), FirstReports::Other);
}

/// Reads `file` as a `Tail` does while a trial writes it: `length` bytes of it are there
/// at this look. The points of the lines it took.
fn look(tail: &mut Tail, file: &[u8], length: usize, parse: fn(&str) -> Vec<Point>) -> Vec<Point> {
    let Some((offset, limit)) = tail.next_read(length as u64) else {
        return Vec::new();
    };
    let end = (offset + limit).min(length as u64) as usize;
    tail.take(&file[offset as usize..end], parse)
}

#[test]
fn a_tail_read_in_any_pieces_has_the_points_of_the_whole_lines() {
    let file = concat!(
        "{\"epoch\": 1, \"val_accuracy\": 0.5}\n",
        "noise\n",
        "{\"epoch\": 2, \"val_accuracy\": NaN}\n",
        "{\"epoch\": 3, \"val_accuracy\": 0.7}\n",
        "{\"epoch\": 4, \"val_acc",
    )
    .as_bytes();
    let open = "{\"epoch\": 4, \"val_acc".len();
    let whole = parse_jsonl(std::str::from_utf8(&file[..file.len() - open]).unwrap());
    assert_eq!(whole.len(), 3);
    for step in 1..file.len() {
        let mut tail = Tail::new(1 << 20);
        let mut read = Vec::new();
        for length in (step..file.len()).step_by(step).chain([file.len()]) {
            read.extend(look(&mut tail, file, length, parse_jsonl));
        }
        assert_eq!(
            format!("{read:?}"),
            format!("{whole:?}"),
            "pieces of {step}"
        );
        assert_eq!(tail.count(), 3);
        // The unended line is not taken: the next read starts at it.
        let taken = (file.len() - open) as u64;
        assert_eq!(
            tail.next_read(file.len() as u64),
            Some((taken, (1 << 20) - taken))
        );
    }
}

#[test]
fn a_half_written_value_is_not_read_before_its_line_ends() {
    let mut tail = Tail::new(1 << 20);
    let file = b"epoch=1 val_accuracy=0.91\n";
    assert!(look(&mut tail, file, 23, parse_stdout).is_empty());
    let read = look(&mut tail, file, file.len(), parse_stdout);
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].values["val_accuracy"], 0.91);
}

#[test]
fn an_endless_line_is_skipped_to_its_end_and_never_read_again() {
    let mut tail = Tail::new(64 << 20);
    // A progress bar redrawn with `\r`, never ended, then a report.
    let mut file = b"loss=0.5\n".to_vec();
    file.extend(std::iter::repeat_n(b"12/94 [==>...] \r".as_slice(), 70_000).flatten());
    assert_eq!(look(&mut tail, &file, file.len(), parse_stdout).len(), 1);
    let next = tail.next_read(file.len() as u64 + 1).unwrap().0;
    assert_eq!(
        next,
        file.len() as u64,
        "the open line is taken as skipped, not read again"
    );
    file.extend(b"\nepoch=1 val_accuracy=0.8\n");
    let read = look(&mut tail, &file, file.len(), parse_stdout);
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].values["val_accuracy"], 0.8);
    assert_eq!(tail.count(), 2);
}

#[test]
fn a_tail_stops_at_its_limit_and_starts_over_on_a_file_written_anew() {
    let line = b"{\"epoch\": 1, \"val_accuracy\": 0.5}\n";
    let file: Vec<u8> = line.iter().copied().cycle().take(line.len() * 10).collect();
    // A limit in the middle of the fourth line: three are read, and then nothing more.
    let mut tail = Tail::new(line.len() as u64 * 3 + 5);
    assert_eq!(look(&mut tail, &file, file.len(), parse_jsonl).len(), 3);
    assert_eq!(tail.next_read(file.len() as u64), None);
    // Written anew, shorter: read from its start.
    assert_eq!(look(&mut tail, &file, line.len() * 2, parse_jsonl).len(), 2);
    assert_eq!(tail.count(), 2);
}
