use super::*;
use crate::sweep::Pick;

fn objective(mode: Mode) -> Objective {
    Objective {
        metric: "acc".into(),
        mode,
        pick: Pick::Last,
    }
}

const ASHA_9: Rule = Rule::Asha {
    max_epochs: 9,
    grace: 1,
    reduction: 3,
    brackets: 1,
    cutoff: Cutoff::Quantile,
};

/// One report per epoch from 1: `acc` at each.
fn epochs(values: &[f64]) -> Vec<Point> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| Point {
            epoch: Some((index + 1) as f64),
            step: None,
            values: [("acc".to_string(), *value)].into(),
        })
        .collect()
}

#[test]
fn asha_rungs_grow_by_the_reduction_below_the_full_trial() {
    assert_eq!(ASHA_9.rungs(), [1, 3]);
    let rungs = |max_epochs, grace, reduction| {
        Rule::Asha {
            max_epochs,
            grace,
            reduction,
            brackets: 1,
            cutoff: Cutoff::Quantile,
        }
        .rungs()
    };
    assert_eq!(rungs(100, 1, 4), [1, 4, 16, 64]);
    assert_eq!(rungs(9, 2, 2), [2, 4, 8]);
    assert_eq!(rungs(3, 3, 3), Vec::<u32>::new());
    assert_eq!(rungs(u32::MAX, 1, u32::MAX), [1]);
    assert_eq!(
        ASHA_9.describe(),
        "asha (rungs at epoch 1, 3 of 9, each keeps the top 1/3)"
    );
}

#[test]
fn the_quantile_interpolates_as_numpy_does() {
    assert_eq!(quantile(&[], 0.5), None);
    assert_eq!(quantile(&[4.0], 0.9), Some(4.0));
    assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 0.5), Some(2.5));
    // numpy.percentile([0.1, 0.2, 0.3, 0.4], 75) = 0.325
    let q = quantile(&[0.1, 0.2, 0.3, 0.4], 0.75).unwrap();
    assert!((q - 0.325).abs() < 1e-12, "{q}");
    assert_eq!(quantile(&[1.0, f64::NAN, 3.0], 1.0), Some(3.0));
}

#[test]
fn asha_lets_the_first_trials_at_a_rung_go_on_and_stops_those_below_its_top_third() {
    let mut judge = Judge::new(ASHA_9, &objective(Mode::Max));
    for (trial, value) in [("t001", 0.5), ("t002", 0.6), ("t003", 0.7)] {
        let made = judge.judge(trial, 0, &epochs(&[value]));
        assert_eq!(made.len(), 1, "{trial}");
        assert!(!made[0].stop, "{trial}: {:?}", made[0]);
        assert_eq!(made[0].rung, Some(1));
    }
    // The 2/3 quantile of 0.5, 0.6, 0.7 is 0.6333...
    let made = judge.judge("t004", 0, &epochs(&[0.55]));
    assert_eq!(made.len(), 1);
    assert!(made[0].stop);
    assert!((made[0].cutoff.unwrap() - 0.633_333).abs() < 1e-6);
    assert_eq!(made[0].reason(), "epoch 1: 0.55 < rung 0.6333");
    // 0.9 is in the top third; it is recorded, and raises the bar for the next.
    let made = judge.judge("t005", 0, &epochs(&[0.9]));
    assert!(!made[0].stop);
    // Stopped trials' values stay recorded (as in Ray Tune): 0.5, 0.55, 0.6, 0.7, 0.9.
    let made = judge.judge("t006", 0, &epochs(&[0.65]));
    assert!(made[0].stop, "{:?}", made[0]);
    assert_eq!(made[0].reason(), "epoch 1: 0.65 < rung 0.6667");
}

#[test]
fn asha_judges_each_rung_once_and_never_at_the_full_trial() {
    let mut judge = Judge::new(ASHA_9, &objective(Mode::Max));
    let curve = [0.5, 0.6, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7];
    let made = judge.judge("t001", 0, &epochs(&curve[..2]));
    assert_eq!(made.iter().map(|j| j.rung).collect::<Vec<_>>(), [Some(1)]);
    // Read again, with more epochs: only the new rung is judged.
    let made = judge.judge("t001", 0, &epochs(&curve));
    assert_eq!(made.iter().map(|j| j.rung).collect::<Vec<_>>(), [Some(3)]);
    assert_eq!(made[0].at, 3.0);
    assert!(judge.judge("t001", 0, &epochs(&curve)).is_empty());
    // A trial whose first report is at epoch 3 is judged at rung 3 only.
    let late = vec![Point {
        epoch: Some(3.0),
        step: None,
        values: [("acc".to_string(), 0.1)].into(),
    }];
    let made = judge.judge("t002", 0, &late);
    assert_eq!(made.len(), 1);
    assert_eq!(made[0].rung, Some(3));
    assert!(made[0].stop, "0.1 is below the one value at rung 3 (0.7)");
}

#[test]
fn asha_on_a_loss_stops_the_higher_values() {
    let mut judge = Judge::new(ASHA_9, &objective(Mode::Min));
    for (trial, loss) in [("t001", 0.5), ("t002", 0.4), ("t003", 0.3)] {
        assert!(!judge.judge(trial, 0, &epochs(&[loss]))[0].stop);
    }
    let made = judge.judge("t004", 0, &epochs(&[0.45]));
    assert!(made[0].stop, "{:?}", made[0]);
    // The cutoff is the loss only the best third is under: 0.3666...
    assert_eq!(made[0].reason(), "epoch 1: 0.45 > rung 0.3667");
    assert!(!judge.judge("t005", 0, &epochs(&[0.2]))[0].stop);
}

#[test]
fn a_judge_given_the_journal_decides_as_the_one_that_wrote_it() {
    let curves: [(&str, &[f64]); 5] = [
        ("t001", &[0.5, 0.6, 0.7]),
        ("t002", &[0.6, 0.65, 0.8]),
        ("t003", &[0.2, 0.3, 0.3]),
        ("t004", &[0.7, 0.75, 0.6]),
        ("t005", &[0.55, 0.7, 0.9]),
    ];
    let mut first = Judge::new(ASHA_9, &objective(Mode::Max));
    let mut journal = Vec::new();
    for (trial, curve) in &curves[..3] {
        for judgement in first.judge(trial, 0, &epochs(curve)) {
            journal.push((trial.to_string(), judgement));
        }
    }
    // Resumed: the journal's judgements, then the same reports read again.
    let mut resumed = Judge::new(ASHA_9, &objective(Mode::Max));
    for (trial, judgement) in &journal {
        resumed.recorded(trial, judgement);
    }
    for (trial, curve) in &curves[..3] {
        assert!(
            resumed.judge(trial, 0, &epochs(curve)).is_empty(),
            "{trial}"
        );
    }
    for (trial, curve) in &curves[3..] {
        assert_eq!(
            resumed.judge(trial, 0, &epochs(curve)),
            first.judge(trial, 0, &epochs(curve)),
            "{trial}"
        );
    }
    // The journal's text round-trips.
    let text = serde_json::to_string(&journal[0].1).unwrap();
    assert_eq!(
        serde_json::from_str::<Judgement>(&text).unwrap(),
        journal[0].1
    );
}

const MEDIAN: Rule = Rule::Median {
    grace: 2,
    min_trials: 3,
    max_epochs: None,
};

/// The median rule from epoch 2, once one other trial reached the epoch.
const MEDIAN_AGAINST_ONE: Rule = Rule::Median {
    grace: 2,
    min_trials: 1,
    max_epochs: None,
};

#[test]
fn the_median_rule_stops_a_trial_whose_best_is_below_the_others_running_averages() {
    let mut judge = Judge::new(MEDIAN, &objective(Mode::Max));
    // Running averages at epoch 2: 0.55, 0.65, 0.75; their median 0.65.
    judge.seen("t001", &epochs(&[0.5, 0.6, 0.7]));
    judge.seen("t002", &epochs(&[0.6, 0.7]));
    // Before grace nothing is judged; with fewer than 3 others reaching epoch 2 there is
    // nothing to compare with.
    let made = judge.judge("t004", 0, &epochs(&[0.1, 0.2]));
    assert_eq!(made.len(), 1);
    assert_eq!(
        (made[0].at, made[0].cutoff, made[0].stop),
        (2.0, None, false)
    );
    judge.seen("t003", &epochs(&[0.7, 0.8, 0.9]));
    // t004 counts too: 0.15, 0.55, 0.65, 0.75, whose median is 0.6.
    let made = judge.judge("t005", 0, &epochs(&[0.58, 0.5, 0.9]));
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(made[0].stop);
    assert_eq!(made[0].reason(), "epoch 2: 0.58 < median 0.6");
    // Its best so far counts (0.66), against a median of 0.55 now that t005 is there.
    let made = judge.judge("t006", 0, &epochs(&[0.66, 0.1]));
    assert!(!made[0].stop, "{:?}", made[0]);
    assert_eq!(made[0].reason(), "epoch 2: 0.66 > median 0.55");
    // Judged once per report.
    assert!(judge.judge("t006", 0, &epochs(&[0.66, 0.1])).is_empty());
}

#[test]
fn the_median_rule_on_a_loss_and_at_steps() {
    let mut judge = Judge::new(
        Rule::Median {
            grace: 100,
            min_trials: 1,
            max_epochs: Some(300),
        },
        &objective(Mode::Min),
    );
    let steps = |values: &[(f64, f64)]| -> Vec<Point> {
        values
            .iter()
            .map(|(step, loss)| Point {
                epoch: None,
                step: Some(*step),
                values: [("acc".to_string(), *loss)].into(),
            })
            .collect()
    };
    judge.seen("t001", &steps(&[(100.0, 0.5), (200.0, 0.3), (300.0, 0.2)]));
    let made = judge.judge(
        "t002",
        0,
        &steps(&[(100.0, 0.9), (200.0, 0.8), (300.0, 0.7)]),
    );
    assert_eq!(made.len(), 1, "stopped at step 100: {made:?}");
    assert_eq!(made[0].reason(), "step 100: 0.9 > median 0.5");
}

/// Runs `work` on a thread of its own and fails when it has not finished within
/// `limit`: a catch for a quadratic blow-up, never a timing expectation.
fn within<T: Send + 'static>(
    limit: std::time::Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(work()));
    receiver
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("not done within {limit:?}: quadratic in the reports?"))
}

#[test]
fn a_trial_reporting_many_epochs_is_judged_once_per_report_without_a_blow_up() {
    // Issue 44: each report was judged against every report before it and the judged
    // ones were looked for in a list, so 200 000 epochs took hours.
    const EPOCHS: usize = 200_000;
    let made = within(std::time::Duration::from_secs(120), || {
        let mut judge = Judge::new(MEDIAN_AGAINST_ONE, &objective(Mode::Max));
        judge.seen("t001", &epochs(&vec![0.5; EPOCHS]));
        let mut rising = vec![0.6; EPOCHS];
        rising[EPOCHS - 1] = 0.9;
        let points = epochs(&rising);
        let made = judge.judge("t002", 0, &points);
        // The next look at the same reports judges nothing again.
        assert!(judge.judge("t002", 0, &points).is_empty());
        made
    });
    assert_eq!(made.len(), EPOCHS - 1);
    assert!(made.iter().all(|judgement| !judgement.stop));
    let last = made.last().unwrap();
    assert_eq!(last.reason(), "epoch 200000: 0.9 > median 0.5");
}

#[test]
fn a_trial_that_diverges_is_stopped_at_its_next_rung_and_its_judgement_survives_the_journal() {
    for mode in [Mode::Max, Mode::Min] {
        let mut judge = Judge::new(ASHA_9, &objective(mode));
        let good = if mode == Mode::Max { 0.5 } else { 0.9 };
        assert!(!judge.judge("t001", 0, &epochs(&[good]))[0].stop);
        let judged = judge.judge("t002", 0, &epochs(&[f64::NAN]));
        assert_eq!(judged.len(), 1);
        let nan = judged[0];
        assert!(nan.stop, "{mode:?}: {nan:?}");
        assert_eq!(nan.reason(), "epoch 1: NaN, diverged");
        // An infinite loss diverged as well, whichever its sign.
        let inf = judge.judge("t003", 0, &epochs(&[f64::NEG_INFINITY]))[0];
        assert!(inf.stop, "{mode:?}: {inf:?}");
        // JSON has no NaN: the journal writes null and reads NaN back.
        let line = serde_json::to_string(&nan).unwrap();
        assert!(line.contains("\"value\":null"), "{line}");
        let back: Judgement = serde_json::from_str(&line).unwrap();
        assert!(back.value.is_nan() && back.stop);
    }
    // Against a rung of diverged trials, a finite value goes on; the cutoff is no NaN.
    let mut judge = Judge::new(ASHA_9, &objective(Mode::Max));
    judge.judge("t001", 0, &epochs(&[f64::NAN]));
    judge.judge("t002", 0, &epochs(&[f64::NAN]));
    let fine = judge.judge("t003", 0, &epochs(&[0.1]))[0];
    assert!(!fine.stop, "{fine:?}");
}

#[test]
fn the_median_rule_stops_a_trial_that_diverged() {
    let rule = Rule::Median {
        grace: 1,
        min_trials: 2,
        max_epochs: None,
    };
    let mut judge = Judge::new(rule, &objective(Mode::Min));
    judge.seen("t001", &epochs(&[0.5, 0.4]));
    judge.seen("t002", &epochs(&[0.6, 0.5]));
    let judged = judge.judge("t003", 0, &epochs(&[0.45, f64::NAN]));
    assert!(!judged[0].stop, "{judged:?}");
    // Its best so far is finite (0.45): it goes on until its values say otherwise.
    assert!(!judged[1].stop, "{judged:?}");
    let judged = judge.judge("t004", 0, &epochs(&[f64::INFINITY]));
    assert!(judged[0].stop, "{judged:?}");
    assert_eq!(judged[0].reason(), "epoch 1: NaN, diverged");
}

#[test]
fn a_reason_never_rounds_two_different_values_into_one() {
    let judgement = |value, cutoff| Judgement {
        at: 1.0,
        unit: Unit::Epoch,
        rung: Some(1),
        bracket: None,
        value,
        cutoff: Some(cutoff),
        stop: value < cutoff,
    };
    assert_eq!(
        judgement(0.19837, 0.19843).reason(),
        "epoch 1: 0.19837 < rung 0.19843"
    );
    assert_eq!(
        judgement(0.1984, 0.1984).reason(),
        "epoch 1: 0.1984 = rung 0.1984"
    );
    assert_eq!(judgement(0.31, 0.55).reason(), "epoch 1: 0.31 < rung 0.55");
    assert_eq!(
        judgement(0.123456789, 0.1234567891).reason(),
        "epoch 1: 0.123456789 < rung 0.1234567891"
    );
}

/// ASHA over 2 brackets for 12 epochs: rungs 1, 3, 9 and 3, 9.
const HYPERBAND_12: Rule = Rule::Asha {
    max_epochs: 12,
    grace: 1,
    reduction: 3,
    brackets: 2,
    cutoff: Cutoff::Quantile,
};

#[test]
fn each_bracket_starts_a_reduction_later_and_the_dry_run_says_them_all() {
    assert_eq!(HYPERBAND_12.bracket_rungs(0), [1, 3, 9]);
    assert_eq!(HYPERBAND_12.bracket_rungs(1), [3, 9]);
    assert_eq!(HYPERBAND_12.bracket_rungs(2), [9]);
    assert_eq!(HYPERBAND_12.bracket_rungs(3), Vec::<u32>::new());
    assert_eq!(HYPERBAND_12.bracket_rungs(u32::MAX), Vec::<u32>::new());
    assert_eq!(
        HYPERBAND_12.describe(),
        "asha over 2 brackets taken in turn (rungs at epoch 1, 3, 9 | 3, 9 of 12, each keeps the top 1/3)"
    );
    let order: Vec<u32> = (0..5).map(|index| HYPERBAND_12.bracket_of(index)).collect();
    assert_eq!(order, [0, 1, 0, 1, 0]);
    assert_eq!(ASHA_9.bracket_of(7), 0);
}

#[test]
fn a_trial_in_the_second_bracket_is_not_judged_before_its_first_rung_nor_against_the_first_bracket()
{
    let mut judge = Judge::new(HYPERBAND_12, &objective(Mode::Max));
    // Bracket 0 (even indices): t001 sets rung 1 high.
    let made = judge.judge("t001", 0, &epochs(&[0.9]));
    assert_eq!((made[0].rung, made[0].bracket), (Some(1), Some(0)));
    // t003, bracket 0 too, is below it at epoch 1: stopped there.
    let made = judge.judge("t003", 2, &epochs(&[0.2]));
    assert!(made[0].stop, "{made:?}");
    // t002, bracket 1, with the same slow start: not judged at epochs 1 and 2.
    let late_bloomer = [0.2, 0.4, 0.8, 0.85];
    assert!(judge
        .judge("t002", 1, &epochs(&late_bloomer[..2]))
        .is_empty());
    // At epoch 3 it is the first of bracket 1's rung 3: it goes on, whatever bracket 0
    // recorded there.
    judge.judge("t001", 0, &epochs(&[0.9, 0.95, 0.99]));
    let made = judge.judge("t002", 1, &epochs(&late_bloomer[..3]));
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!((made[0].rung, made[0].bracket), (Some(3), Some(1)));
    assert!(!made[0].stop);
    assert_eq!(made[0].cutoff, None);
    // t004 (bracket 1) below t002 at rung 3 is stopped: compared within its bracket.
    let made = judge.judge("t004", 3, &epochs(&[0.5, 0.6, 0.7]));
    assert!(made[0].stop, "{made:?}");
    assert_eq!(made[0].reason(), "epoch 3: 0.7 < rung 0.8");
}

#[test]
fn a_resumed_judge_puts_each_recorded_value_back_in_its_own_bracket() {
    let mut first = Judge::new(HYPERBAND_12, &objective(Mode::Max));
    let mut journal = Vec::new();
    for (trial, index, curve) in [
        ("t001", 0, vec![0.9, 0.9, 0.9]),
        ("t002", 1, vec![0.1, 0.2, 0.3]),
    ] {
        for judgement in first.judge(trial, index, &epochs(&curve)) {
            let line = serde_json::to_string(&judgement).unwrap();
            journal.push((trial, serde_json::from_str::<Judgement>(&line).unwrap()));
        }
    }
    let mut resumed = Judge::new(HYPERBAND_12, &objective(Mode::Max));
    for (trial, judgement) in &journal {
        resumed.recorded(trial, judgement);
    }
    // Bracket 1's rung 3 holds t002's 0.3 only: 0.5 passes there, as in the first run,
    // though bracket 0 recorded 0.9.
    let curve = epochs(&[0.5, 0.5, 0.5]);
    assert_eq!(
        resumed.judge("t004", 3, &curve),
        first.judge("t004", 3, &curve)
    );
    assert!(!first.judge("t006", 5, &curve)[0].stop);
    // A one-bracket rule's judgements carry no bracket (journals written before brackets
    // read the same).
    let mut one = Judge::new(ASHA_9, &objective(Mode::Max));
    let made = one.judge("t001", 1, &epochs(&[0.5]));
    assert_eq!(made[0].bracket, None);
    assert!(!serde_json::to_string(&made[0]).unwrap().contains("bracket"));
}

#[test]
fn looking_at_reports_in_pieces_judges_as_looking_at_each_report() {
    let values = [0.30, 0.42, 0.40, 0.55, 0.50, 0.61, 0.58, 0.66, 0.70];
    for rule in [ASHA_9, MEDIAN] {
        let judges = || {
            let mut judge = Judge::new(rule, &objective(Mode::Max));
            judge.seen(
                "t001",
                &epochs(&[0.5, 0.6, 0.62, 0.64, 0.65, 0.66, 0.67, 0.68, 0.69]),
            );
            judge.seen("t002", &epochs(&[0.2, 0.3, 0.35, 0.4]));
            judge.seen("t003", &epochs(&[0.45, 0.5, 0.52]));
            judge
        };
        let mut each = judges();
        let one_by_one: Vec<Judgement> = (1..=values.len())
            .flat_map(|seen| each.judge("t004", 3, &epochs(&values[..seen])))
            .collect();
        let mut pieces = judges();
        let in_pieces: Vec<Judgement> = [2, 5, 9]
            .into_iter()
            .flat_map(|seen| pieces.judge("t004", 3, &epochs(&values[..seen])))
            .collect();
        assert!(!one_by_one.is_empty(), "{}", rule.name());
        assert_eq!(in_pieces, one_by_one, "{}", rule.name());
    }
}

#[test]
fn a_curve_given_reports_out_of_order_is_the_sorted_one() {
    let mut sorted = Curve::default();
    sorted.extend([(1.0, 0.2), (2.0, 0.5), (2.0, 0.4), (3.0, 0.3)].into_iter());
    let mut shuffled = Curve::default();
    shuffled.extend([(2.0, 0.5), (3.0, 0.3), (1.0, 0.2), (2.0, 0.4)].into_iter());
    assert_eq!(shuffled.xs, sorted.xs);
    assert_eq!(shuffled.scores, sorted.scores);
    assert_eq!(shuffled.sums, sorted.sums);
    assert_eq!(shuffled.bests, sorted.bests);
    assert_eq!(shuffled.best_up_to(2.0), Some(0.5));
    assert_eq!(shuffled.average_up_to(2.0), Some((0.2 + 0.5 + 0.4) / 3.0));
}

#[test]
fn a_trial_looked_at_after_every_few_reports_costs_only_its_new_ones() {
    // The runner looks at a running trial each time its file grows: a trial reporting
    // every step is looked at thousands of times. Each look takes the reports that came
    // since the last, never the whole curve again.
    const STEPS: usize = 200_000;
    let made = within(std::time::Duration::from_secs(120), || {
        let mut judge = Judge::new(MEDIAN_AGAINST_ONE, &objective(Mode::Max));
        judge.seen("t001", &epochs(&vec![0.5; STEPS]));
        let points = epochs(&vec![0.6; STEPS]);
        (100..=STEPS)
            .step_by(100)
            .map(|seen| judge.judge("t002", 1, &points[..seen]).len())
            .sum::<usize>()
    });
    assert_eq!(made, STEPS - 1);
}

#[test]
fn the_rank_cutoff_keeps_only_the_best_so_far_until_a_rung_holds_twice_the_reduction() {
    let rank = Rule::Asha {
        max_epochs: 9,
        grace: 1,
        reduction: 3,
        brackets: 1,
        cutoff: Cutoff::Rank,
    };
    let mut judge = Judge::new(rank, &objective(Mode::Max));
    // 0.5 goes on (first); 0.7 beats it; 0.6 is not the best of three, where the
    // quantile (0.6333 of 0.5, 0.7) would stop it too, but 0.65 of four is not the best
    // either: the quantile of 0.5, 0.6, 0.7 (0.6333) would let it on.
    let decisions: Vec<(f64, bool)> = [0.5, 0.7, 0.6, 0.65, 0.72, 0.69]
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let made = judge.judge(&format!("t{index}"), index, &epochs(&[*value]));
            (*value, made[0].stop)
        })
        .collect();
    assert_eq!(
        decisions,
        [
            (0.5, false),
            (0.7, false),
            (0.6, true),
            (0.65, true),
            (0.72, false),
            // Six at the rung: the top 2 go on; 0.69 is third (0.72, 0.7 above it).
            (0.69, true),
        ]
    );
    let mut quantile = Judge::new(ASHA_9, &objective(Mode::Max));
    for (index, value) in [0.5, 0.7, 0.6].iter().enumerate() {
        quantile.judge(&format!("t{index}"), index, &epochs(&[*value]));
    }
    assert!(!quantile.judge("t3", 3, &epochs(&[0.65]))[0].stop);
    assert_eq!(
        judge.judge("t6", 6, &epochs(&[0.4]))[0].reason(),
        "epoch 1: 0.4 < rung 0.7"
    );
    assert_eq!(
        rank.describe(),
        "asha (rungs at epoch 1, 3 of 9, each keeps the top 1/3 by rank)"
    );
}

/// Optuna's SuccessiveHalvingPruner's own decisions on seeded random reports
/// (bench/search/optuna_sh_decisions.py wrote them).
const OPTUNA_SH: &str = include_str!("optuna_sh.json");

#[test]
fn the_rank_cutoff_stops_exactly_the_trials_optunas_successive_halving_pruner_stops() {
    let fixture: serde_json::Value = serde_json::from_str(OPTUNA_SH).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 4);
    let mut stops_seen = 0;
    for (number, case) in cases.iter().enumerate() {
        let whole = |key: &str| case[key].as_u64().unwrap() as u32;
        let rule = Rule::Asha {
            max_epochs: whole("steps"),
            grace: whole("min_resource"),
            reduction: whole("reduction"),
            brackets: 1,
            cutoff: Cutoff::Rank,
        };
        let mode = match case["direction"].as_str().unwrap() {
            "maximize" => Mode::Max,
            _ => Mode::Min,
        };
        let mut judge = Judge::new(rule, &objective(mode));
        let mut reported: BTreeMap<String, Vec<Point>> = BTreeMap::new();
        let mut stopped = Vec::new();
        for report in case["reports"].as_array().unwrap() {
            let trial = format!("t{}", report[0]);
            let epoch = report[1].as_f64().unwrap();
            let value = report[2].as_f64().unwrap_or(f64::NAN);
            let points = reported.entry(trial.clone()).or_default();
            points.push(Point {
                epoch: Some(epoch),
                step: None,
                values: [("acc".to_string(), value)].into(),
            });
            let index = report[0].as_u64().unwrap() as usize;
            let made = judge.judge(&trial, index, points);
            if made.last().is_some_and(|judgement| judgement.stop) {
                stopped.push(serde_json::json!([report[0], report[1]]));
            }
        }
        let expected = case["pruned"].as_array().unwrap();
        assert_eq!(&stopped, expected, "case {number}");
        stops_seen += stopped.len();
    }
    assert!(stops_seen > 40, "{stops_seen}");
}
