use std::collections::HashSet;
use std::path::Path;

use super::*;
use crate::sweep::{parse, Sweep};

const OBJECTIVE: &str = "objective: {metric: acc, mode: max}\n";

/// A sweep whose command uses `{lr}`, with `rest` from line 4 on.
fn sweep(rest: &str) -> Result<Sweep, String> {
    let text = format!("sweep: lab\nspec: x\ncommand: [python, \"{{lr}}\"]\n{rest}");
    parse(&text, "sweep.yaml", Path::new("/lab"))
        .map_err(|error| format!("{error}\nhint: {}", error.hint))
}

fn tpe_of(rest: &str) -> Tpe {
    match sweep(rest).unwrap().search {
        Search::Tpe(tpe) => tpe,
        other => panic!("{other:?}"),
    }
}

/// Proposes `count` trials one after the other, each told every earlier one's
/// `score` (the way one slot runs them).
fn run_one_at_a_time(tpe: &Tpe, mode: Mode, score: impl Fn(&[Param]) -> f64) -> Vec<Vec<Param>> {
    let mut sets: Vec<Vec<Param>> = Vec::new();
    let mut scores: Vec<f64> = Vec::new();
    for index in 0..tpe.count {
        let ended: Vec<(&[Param], f64)> = sets
            .iter()
            .zip(&scores)
            .map(|(set, value)| (set.as_slice(), *value))
            .collect();
        let taken: Vec<&[Param]> = sets.iter().map(Vec::as_slice).collect();
        let set = tpe.propose(index, mode, &ended, &[], &taken);
        scores.push(score(&set));
        sets.push(set);
    }
    sets
}

fn number(set: &[Param], name: &str) -> f64 {
    set.iter()
        .find(|(param, _)| param == name)
        .and_then(|(_, value)| value.as_f64())
        .unwrap()
}

fn text(set: &[Param], name: &str) -> String {
    set.iter()
        .find(|(param, _)| param == name)
        .map(|(_, value)| value.text())
        .unwrap()
}

#[test]
fn tpe_reads_like_random_with_a_startup_that_defaults_to_a_third_of_count_at_most_ten() {
    let tpe = tpe_of(&format!(
        "tpe: {{count: 12, seed: 7, lr: {{loguniform: [1e-5, 1e-2]}}, aug: {{choice: [low, high]}}}}\n{OBJECTIVE}"
    ));
    assert_eq!((tpe.count, tpe.seed, tpe.startup), (12, 7, 4));
    assert_eq!(
        tpe.params,
        [
            ("lr".to_string(), Distribution::LogUniform(1e-5, 1e-2)),
            (
                "aug".to_string(),
                Distribution::Choice(vec![
                    ParamValue::Text("low".into()),
                    ParamValue::Text("high".into())
                ])
            ),
        ]
    );
    assert_eq!(default_startup(30), 10);
    assert_eq!(default_startup(100), 10);
    assert_eq!(default_startup(2), 1);
    let search = Search::Tpe(tpe);
    assert_eq!(search.describe(), "tpe 12 (seed 7)");
    assert_eq!(search.count(), 12);
    assert!(search.learns());
    assert_eq!(search.fingerprint()["tpe.startup"], "4");
    let given = tpe_of(&format!(
        "tpe: {{count: 12, startup: 2, lr: {{uniform: [0, 1]}}}}\n{OBJECTIVE}"
    ));
    assert_eq!(given.startup, 2);
}

#[test]
fn bad_tpe_sections_point_at_their_place() {
    let cases = [
        (
            "tpe: {count: 5, lr: {choice: [0.1]}, wd: {choice: [0]}}\n".to_string() + OBJECTIVE,
            "`sweep.yaml`:4:1: every param of `tpe` has one value: there is nothing for TPE to learn\nhint: give a param a range (`lr: {loguniform: [1e-5, 1e-2]}`) or several choices; to run one set of params, list it under `trials:`",
        ),
        (
            "tpe: {count: 30, lr: {choice: [1, 2, 3]}, wd: {int: [1, 3]}}\n".to_string() + OBJECTIVE,
            "`sweep.yaml`:4:14: `tpe.count` is 30, but the params of `tpe` have only 9 combinations\nhint: lower `count` to at most 9 (TPE runs each set of params once), or write the params as a grid under `params:` to run every one",
        ),
        (
            "tpe: {count: 8, startup: 8, lr: {uniform: [0, 1]}}\n".to_string() + OBJECTIVE,
            "`sweep.yaml`:4:26: `tpe.startup` is 8, not below `count` (8): every trial would be a random draw\nhint: lower `startup` (the random draws TPE learns from first), or use `random:` for a random search",
        ),
        (
            "tpe: {count: 8, startup: 0, lr: {uniform: [0, 1]}}\n".to_string() + OBJECTIVE,
            "`sweep.yaml`:4:26: `tpe.startup` must be a whole number from 1 to 10000\nhint: say how many trials are random draws before TPE proposes the rest, such as `startup: 5`",
        ),
        (
            "tpe: {count: 8, lr: {uniform: [0, 1]}}\n".to_string(),
            "`sweep.yaml`:4:1: `tpe` needs an `objective`: it proposes each trial from how the ended ones scored\nhint: add the metric the trials report, such as `objective: {metric: val_accuracy, mode: max}`",
        ),
        (
            "tpe: {seed: 1, lr: {uniform: [0, 1]}}\n".to_string() + OBJECTIVE,
            "`sweep.yaml`:4:1: `tpe` has no `count`\nhint: say how many trials to draw: `tpe: {count: 20, seed: 7, lr: {loguniform: [1e-5, 1e-2]}}`",
        ),
        (
            "tpe: {count: 8, lr: {normal: [0, 1]}}\n".to_string() + OBJECTIVE,
            "`sweep.yaml`:4:22: `normal` is not a distribution\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`",
        ),
        (
            "random: {count: 2, lr: {uniform: [0, 1]}}\ntpe: {count: 8, lr: {uniform: [0, 1]}}\n".to_string() + OBJECTIVE,
            "`sweep.yaml`:5:1: `tpe` and `random` both define the trials\nhint: keep one of `params` (a grid), `random`, `tpe` and `trials` (a list)",
        ),
    ];
    for (rest, message) in cases {
        assert_eq!(sweep(&rest).expect_err("refused"), message, "{rest}");
    }
}

#[test]
fn a_proposal_depends_on_the_seed_the_index_and_what_ended_never_on_anything_else() {
    let tpe = tpe_of(&format!(
        "tpe: {{count: 20, seed: 7, startup: 4, lr: {{loguniform: [1e-5, 1e-1]}}, aug: {{choice: [low, medium, high]}}}}\n{OBJECTIVE}"
    ));
    let score = |set: &[Param]| -(number(set, "lr").log10() + 3.0).abs();
    let once = run_one_at_a_time(&tpe, Mode::Max, score);
    assert_eq!(run_one_at_a_time(&tpe, Mode::Max, score), once);
    // The random draws are what the dry run shows, whatever ended.
    assert_eq!(tpe.startup_sets(), once[..4]);
    // Another seed, other trials.
    let other = Tpe {
        seed: 8,
        ..tpe.clone()
    };
    assert_ne!(run_one_at_a_time(&other, Mode::Max, score), once);
    // A value rounded as random draws are: what commands and the journal carry.
    for set in &once {
        let lr = number(set, "lr");
        assert_eq!(ParamValue::rounded(lr), ParamValue::Float(lr));
        assert!((1e-5..=1e-1).contains(&lr), "{lr}");
    }
}

#[test]
fn tpe_moves_toward_the_best_values_where_random_draws_do_not() {
    // Best at lr = 1e-3 (on a log scale) with `aug: high`.
    let tpe = tpe_of(&format!(
        "tpe: {{count: 40, seed: 3, startup: 10, lr: {{loguniform: [1e-6, 1e-0]}}, aug: {{choice: [low, medium, high]}}}}\n{OBJECTIVE}"
    ));
    let score = |set: &[Param]| {
        let miss = (number(set, "lr").log10() + 3.0).abs();
        let aug = if text(set, "aug") == "high" { 0.0 } else { 1.0 };
        -(miss + aug)
    };
    let sets = run_one_at_a_time(&tpe, Mode::Max, score);
    let miss = |sets: &[Vec<Param>]| {
        sets.iter()
            .map(|set| (number(set, "lr").log10() + 3.0).abs())
            .sum::<f64>()
            / sets.len() as f64
    };
    let high = |sets: &[Vec<Param>]| sets.iter().filter(|set| text(set, "aug") == "high").count();
    let (draws, learned) = (&sets[..10], &sets[30..]);
    // Uniform over six decades, a draw misses 1e-3 by about 1.5 decades on average.
    assert!(
        miss(learned) < miss(draws) / 2.0,
        "{} vs {}",
        miss(learned),
        miss(draws)
    );
    assert!(high(learned) >= 7, "{learned:?}");

    // Minimizing the same score goes the other way: away from 1e-3 and `high`.
    let sets = run_one_at_a_time(&tpe, Mode::Min, score);
    let learned = &sets[30..];
    assert!(
        miss(learned) > miss(draws),
        "{} vs {}",
        miss(learned),
        miss(draws)
    );
    assert!(high(learned) <= 3, "{learned:?}");
}

#[test]
fn a_small_finite_space_is_run_once_each_even_when_count_fills_it() {
    let tpe = tpe_of(&format!(
        "tpe: {{count: 6, seed: 1, startup: 2, lr: {{choice: [1, 2, 3]}}, wd: {{int: [0, 1]}}}}\n{OBJECTIVE}"
    ));
    // The same score everywhere: TPE would keep proposing the one it likes.
    let sets = run_one_at_a_time(&tpe, Mode::Max, |_| 1.0);
    let distinct: HashSet<String> = sets.iter().map(|set| set_text(set)).collect();
    assert_eq!(distinct.len(), 6, "{sets:?}");
}

#[test]
fn values_written_by_hand_outside_the_space_are_not_learned_from() {
    let tpe = tpe_of(&format!(
        "tpe: {{count: 5, seed: 1, startup: 1, lr: {{uniform: [0, 1]}}, aug: {{choice: [a, b]}}}}\n{OBJECTIVE}"
    ));
    let outside = vec![
        ("lr".to_string(), ParamValue::Float(7.0)),
        ("aug".to_string(), ParamValue::Text("zzz".into())),
    ];
    let inside = vec![
        ("lr".to_string(), ParamValue::Float(0.5)),
        ("aug".to_string(), ParamValue::Text("a".into())),
    ];
    let ended: Vec<(&[Param], f64)> = vec![
        (outside.as_slice(), f64::NAN),
        (outside.as_slice(), 3.0),
        (inside.as_slice(), f64::INFINITY),
        (inside.as_slice(), 1.0),
    ];
    let set = tpe.propose(1, Mode::Max, &ended, &[], &[]);
    assert!((0.0..=1.0).contains(&number(&set, "lr")), "{set:?}");
    assert!(["a", "b"].contains(&text(&set, "aug").as_str()), "{set:?}");
}

#[test]
fn trials_still_running_are_told_as_the_worst_so_a_second_slot_looks_elsewhere() {
    // Twelve ended trials over lr in [0, 1], the best near 0.8; then, over 200 seeds, how
    // many proposals land near 0.8 with no trial running, and with three running there.
    let set = |lr: f64| vec![("lr".to_string(), ParamValue::Float(lr))];
    let ended_sets: Vec<Vec<Param>> = (0..12).map(|n| set(f64::from(n) / 11.0)).collect();
    let ended: Vec<(&[Param], f64)> = ended_sets
        .iter()
        .map(|set| {
            let lr = set[0].1.as_f64().unwrap();
            (set.as_slice(), -(lr - 0.8) * (lr - 0.8))
        })
        .collect();
    let near = |pending_lrs: &[f64]| {
        let pending_sets: Vec<Vec<Param>> = pending_lrs.iter().map(|lr| set(*lr)).collect();
        let pending: Vec<&[Param]> = pending_sets.iter().map(Vec::as_slice).collect();
        (0..200)
            .filter(|seed| {
                let tpe = tpe_of(&format!(
                    "tpe: {{count: 20, seed: {seed}, startup: 2, lr: {{uniform: [0, 1]}}}}\n{OBJECTIVE}"
                ));
                let proposed = tpe.propose(14, Mode::Max, &ended, &pending, &[]);
                (number(&proposed, "lr") - 0.8).abs() < 0.1
            })
            .count()
    };
    let alone = near(&[]);
    let beside = near(&[0.78, 0.8, 0.82]);
    assert!(
        beside < alone,
        "near 0.8: {alone} alone, {beside} beside three running"
    );
}
