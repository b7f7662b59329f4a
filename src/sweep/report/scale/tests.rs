use super::*;

fn labels(ticks: &Ticks) -> Vec<String> {
    ticks
        .values
        .iter()
        .map(|value| ticks.label(*value))
        .collect()
}

#[test]
fn round_ends_and_steps() {
    let accuracy = ticks([0.61, 0.93, 0.72], 5, false);
    assert_eq!(
        (accuracy.low, accuracy.high, accuracy.step),
        (0.55, 0.95, 0.05)
    );
    assert_eq!(labels(&accuracy)[..3], ["0.55", "0.60", "0.65"]);
    let loss = ticks([0.05, 2.31], 5, false);
    assert_eq!(labels(&loss), ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5"]);
    let epochs = ticks([1.0, 2.0, 3.0], 6, true);
    assert_eq!(labels(&epochs), ["1", "2", "3"]);
    let steps = ticks([0.0, 12_000.0], 5, true);
    assert_eq!(
        labels(&steps),
        ["0", "2000", "4000", "6000", "8000", "10000", "12000"]
    );
    let tiny = ticks([1e-6, 5e-6], 4, false);
    assert_eq!(tiny.label(2e-6), "2e-6");
    let huge = ticks([0.0, 3e6], 3, false);
    assert_eq!(labels(&huge), ["0", "1e6", "2e6", "3e6", "4e6"]);
    let negative = ticks([-2.5, -0.4], 4, false);
    assert_eq!(
        labels(&negative),
        ["-3.0", "-2.5", "-2.0", "-1.5", "-1.0", "-0.5", "0.0"]
    );
}

#[test]
fn one_value_equal_values_and_nothing_still_make_an_axis() {
    let one = ticks([0.9], 5, false);
    assert!(one.low < 0.9 && one.high > 0.9, "{one:?}");
    let equal = ticks([3.0, 3.0, 3.0], 5, true);
    assert_eq!(labels(&equal), ["2", "3", "4"]);
    let zero = ticks([0.0], 5, false);
    assert!(zero.low < 0.0 && zero.high > 0.0);
    let none = ticks(std::iter::empty(), 5, false);
    assert_eq!((none.low, none.high), (0.0, 1.0));
    let stray = ticks([f64::NAN, f64::INFINITY, 2.0], 5, false);
    assert!(stray.values.iter().all(|value| value.is_finite()));
    assert!(stray.values.len() < 20);
}

#[test]
fn linear_maps_and_coordinates() {
    let y = Linear {
        domain: (0.0, 1.0),
        range: (300.0, 20.0),
    };
    assert_eq!(y.map(0.0), 300.0);
    assert_eq!(y.map(0.5), 160.0);
    let flat = Linear {
        domain: (2.0, 2.0),
        range: (0.0, 10.0),
    };
    assert_eq!(flat.map(2.0), 5.0);
    assert_eq!(coordinate(-0.04), "0.0");
    assert_eq!(coordinate(12.345), "12.3");
}
