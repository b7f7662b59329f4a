use std::path::Path;

use crate::sweep::{parse, Distribution, ParamValue, Search};

/// A sweep whose command uses `{lr}`, with `rest` from line 4 on.
fn sweep(rest: &str) -> Result<Search, String> {
    let text = format!("sweep: lab\nspec: x\ncommand: [python, \"{{lr}}\"]\n{rest}");
    parse(&text, "sweep.yaml", Path::new("/lab"))
        .map(|sweep| sweep.search)
        .map_err(|error| format!("{error}\nhint: {}", error.hint))
}

fn refused(rest: &str) -> String {
    sweep(rest).expect_err("refused")
}

#[test]
fn a_grid_keeps_file_order_and_typed_values() {
    let search = sweep("params:\n  lr: [1e-3, 5e-4]\n  aug: [low, \"1e-3\", true]\n").unwrap();
    assert_eq!(
        search,
        Search::Grid(vec![
            (
                "lr".into(),
                vec![ParamValue::Float(1e-3), ParamValue::Float(5e-4)]
            ),
            (
                "aug".into(),
                vec![
                    ParamValue::Text("low".into()),
                    ParamValue::Text("1e-3".into()),
                    ParamValue::Bool(true)
                ]
            ),
        ])
    );
    assert_eq!(search.count(), 6);
    assert_eq!(search.describe(), "grid 2 × 3");
}

#[test]
fn bad_grids_point_at_the_value() {
    let cases = [
        ("params: {}\n", "`sweep.yaml`:4:1: `params` is empty\nhint: give each param a list of values: `params: {lr: [0.001, 0.0001]}`"),
        ("params:\n  lr: []\n", "`sweep.yaml`:5:7: `params.lr` is an empty list\nhint: give it at least one value"),
        ("params:\n  lr: 0.1\n", "`sweep.yaml`:5:7: `params.lr` must be a list of values (a grid axis)\nhint: write `lr: [0.1]` for one value, or list several"),
        ("params:\n  lr: [0.1, [1, 2]]\n", "`sweep.yaml`:5:13: `params.lr[1]` is not a param value: it is a list, not a single value\nhint: a param value is one number, word or `true`/`false`"),
        ("params:\n  lr: [0.1, ~]\n", "`sweep.yaml`:5:13: `params.lr[1]` is not a param value: it is empty (`~` or nothing)\nhint: a param value is one number, word or `true`/`false`"),
        ("params:\n  lr: [0.001, 1e-3]\n", "`sweep.yaml`:5:15: `params.lr` lists 0.001 twice\nhint: list each value once: a repeated value would run the same trial twice"),
        ("params:\n  lr: [1]\n  learning-rate: [1]\n", "`sweep.yaml`:6:3: param name `learning-rate` is not valid\nhint: use letters, digits and `_`, starting with a letter, at most 64 characters: the trial gets it as `{name}` and `TFIMG_PARAM_<NAME>`"),
        ("params:\n  lr: [1]\n  LR: [2]\n", "`sweep.yaml`:6:3: params `lr` and `LR` would both be `TFIMG_PARAM_LR`\nhint: give the params names that differ in more than upper and lower case"),
        ("params: {lr: [1]}\nrandom: {count: 2}\n", "`sweep.yaml`:5:1: `random` and `params` both define the trials\nhint: keep one of `params` (a grid), `random`, `tpe` and `trials` (a list)"),
        ("params: [lr]\n", "`sweep.yaml`:4:9: params: invalid type: sequence, expected a YAML mapping\nhint: a sweep file has `sweep`, `spec` (or `image`), `command` and `params`, such as `sweep: lr`, `spec: cpu-headless`, `command: [python, train.py]`, `params: {lr: [0.1, 0.01]}`"),
    ];
    for (rest, message) in cases {
        assert_eq!(refused(rest), message, "{rest}");
    }
    let axes: String = (0..5)
        .map(|axis| {
            format!(
                "  p{axis}: [{}]\n",
                (0..10)
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    assert_eq!(
        refused(&format!("params:\n  lr: [1]\n{axes}")),
        "`sweep.yaml`:4:1: the grid makes 100000 trials, more than 10000\nhint: use fewer values, or `random:` with a `count` to sample the space"
    );
}

#[test]
fn random_draws_are_the_same_on_every_machine() {
    let search = sweep(concat!(
        "random:\n",
        "  count: 4\n",
        "  seed: 7\n",
        "  lr: {loguniform: [1e-5, 1e-2]}\n",
        "  wd: {uniform: [0, 0.1]}\n",
        "  layers: {int: [1, 4]}\n",
        "  aug: {choice: [low, high]}\n",
    ))
    .unwrap();
    let Search::Random {
        count,
        seed,
        params,
    } = &search
    else {
        panic!("random");
    };
    assert_eq!((*count, *seed), (4, 7));
    assert_eq!(params[0].1, Distribution::LogUniform(1e-5, 1e-2));
    let drawn: Vec<String> = crate::sweep::trials::param_sets(&search)
        .iter()
        .map(|set| crate::sweep::value::set_text(set))
        .collect();
    // Pinned: a change of generator or sampling would change a resumed sweep's trials.
    assert_eq!(
        drawn,
        [
            "{lr: 2.97432e-5, wd: 0.0167989, layers: 3, aug: low}",
            "{lr: 1.63491e-5, wd: 0.0810943, layers: 1, aug: low}",
            "{lr: 0.00353077, wd: 0.0364464, layers: 4, aug: low}",
            "{lr: 0.00162188, wd: 0.054346, layers: 4, aug: low}",
        ]
    );
    assert_eq!(search.describe(), "random 4 (seed 7)");
    let again = crate::sweep::trials::param_sets(&search);
    assert_eq!(again, crate::sweep::trials::param_sets(&search));
}

#[test]
fn bad_random_searches_point_at_the_value() {
    let cases = [
        ("random: {seed: 7, lr: {uniform: [0, 1]}}\n", "`sweep.yaml`:4:1: `random` has no `count`\nhint: say how many trials to draw: `random: {count: 20, seed: 7, lr: {loguniform: [1e-5, 1e-2]}}`"),
        ("random: {count: 0, lr: {uniform: [0, 1]}}\n", "`sweep.yaml`:4:17: `random.count` must be a whole number from 1 to 10000\nhint: say how many trials to draw, such as `count: 20`"),
        ("random: {count: 2, seed: -1, lr: {uniform: [0, 1]}}\n", "`sweep.yaml`:4:26: `random.seed` must be a whole number from 0 to 18446744073709551615\nhint: the seed makes the draws repeatable: any whole number, such as `seed: 7`"),
        ("random: {count: 2}\n", "`sweep.yaml`:4:1: `random` has no param to draw\nhint: add a distribution per param beside `count` and `seed`: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: [1, 2]}\n", "`sweep.yaml`:4:24: `random.lr` must be one distribution\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: {gaussian: [0, 1]}}\n", "`sweep.yaml`:4:25: `gaussian` is not a distribution\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: {uniform: [1, 0]}}\n", "`sweep.yaml`:4:34: `random.lr.uniform`: 1.0 is not below 0.0\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: {uniform: [0]}}\n", "`sweep.yaml`:4:34: `random.lr.uniform` must be two numbers `[low, high]`\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: {loguniform: [0, 1]}}\n", "`sweep.yaml`:4:37: `random.lr.loguniform` starts at 0.0; a log-uniform range starts above 0\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: {int: [1, 2.5]}}\n", "`sweep.yaml`:4:30: `random.lr.int` must be two whole numbers `[low, high]`\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: {choice: []}}\n", "`sweep.yaml`:4:33: `random.lr.choice` is an empty list\nhint: give it at least one value"),
        ("random: {count: 2, lr: {choice: [a, a]}}\n", "`sweep.yaml`:4:37: `random.lr.choice` lists a twice\nhint: list each value once: a repeated value would run the same trial twice"),
        ("random: {count: 2, lr: {uniform: [0, .inf]}}\n", "`sweep.yaml`:4:34: `random.lr.uniform` must be two numbers `[low, high]`\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
        ("random: {count: 2, lr: {uniform: [-1e308, 1e308]}}\n", "`sweep.yaml`:4:34: `random.lr.uniform`: the range from -1e308 to 1e308 is wider than a number can hold\nhint: write `{uniform: [a, b]}`, `{loguniform: [a, b]}` (a > 0), `{int: [a, b]}` or `{choice: [x, y, ...]}`"),
    ];
    for (rest, message) in cases {
        assert_eq!(refused(rest), message, "{rest}");
    }
}

#[test]
fn a_random_search_over_fewer_combinations_than_trials_warns() {
    let text = "sweep: lab\nspec: x\ncommand: [\"{lr}\"]\nrandom: {count: 9, lr: {choice: [a, b]}, n: {int: [1, 3]}}\n";
    let sweep = parse(text, "sweep.yaml", Path::new("/lab")).unwrap();
    assert_eq!(
        sweep.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "`sweep.yaml`:4:42: the command never uses `{n}`: the trial gets it only as `TFIMG_PARAM_N` and in params.json",
            "`sweep.yaml`:4:17: `random` draws 9 trials from 6 combinations: some trials repeat (`params:` runs each combination once)",
        ]
    );
}

#[test]
fn a_list_of_trials_sets_the_same_params_each_once() {
    let search = sweep("trials:\n  - {lr: 0.1, wd: 0}\n  - {wd: 1, lr: 0.01}\n").unwrap();
    let Search::List(sets) = &search else {
        panic!("a list");
    };
    // In the first trial's order.
    assert_eq!(sets[1][0], ("lr".into(), ParamValue::Float(0.01)));
    assert_eq!(search.names(), ["lr", "wd"]);
    let cases = [
        ("trials: []\n", "`sweep.yaml`:4:1: `trials` is an empty list\nhint: list param sets: `trials: [{lr: 0.1, wd: 0}, {lr: 0.01, wd: 0}]`"),
        ("trials:\n  - {lr: 1}\n  - 2\n", "`sweep.yaml`:6:5: `trials[1]` must be a mapping of param names to values\nhint: write each trial as `{lr: 0.1, wd: 0}`"),
        ("trials:\n  - {}\n", "`sweep.yaml`:5:5: `trials[0]` sets no param\nhint: write each trial as `{lr: 0.1, wd: 0}`"),
        ("trials:\n  - {lr: 1, wd: 0}\n  - {lr: 2}\n", "`sweep.yaml`:6:5: `trials[1]` does not set `wd`, which `trials[0]` sets\nhint: every trial sets the same params (the results table has one column per param)"),
        ("trials:\n  - {lr: 1}\n  - lr: 2\n    wd: 0\n", "`sweep.yaml`:7:5: `trials[1]` sets `wd`, which `trials[0]` does not\nhint: every trial sets the same params (the results table has one column per param)"),
        ("trials:\n  - {lr: 1, wd: 0}\n  - {lr: 2, wd: 0}\n  - {wd: 0, lr: 1}\n", "`sweep.yaml`:7:5: `trials[2]` repeats `trials[0]`: {lr: 1, wd: 0}\nhint: list each param set once: a repeated set would run the same trial twice"),
        ("trials:\n  - {lr: [1]}\n", "`sweep.yaml`:5:10: `trials[0].lr` is not a param value: it is a list, not a single value\nhint: a param value is one number, word or `true`/`false`"),
    ];
    for (rest, message) in cases {
        assert_eq!(refused(rest), message, "{rest}");
    }
}
