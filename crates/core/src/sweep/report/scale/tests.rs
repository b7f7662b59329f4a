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

#[test]
fn log_axes_tick_powers_of_ten_and_thin_them_to_fit() {
    let labels = |axis: &Axis| -> Vec<String> {
        axis.ticks.iter().map(|(_, label)| label.clone()).collect()
    };
    // Within a decade: 1, 2 and 5 times its powers.
    let narrow = Axis::log(&[0.002, 0.008], 518.0);
    assert_eq!(labels(&narrow), ["0.001", "0.002", "0.005", "0.01"]);
    assert_eq!(narrow.place(0.01), Some(-2.0));
    assert_eq!(narrow.place(0.0), None);
    assert_eq!(narrow.place(f64::NAN), None);
    // Twelve decades on a short axis: every other power, exponents where they are long.
    let wide = Axis::log(&[1e-9, 1e3], 300.0);
    assert!(wide.ticks.len() < 13, "{:?}", wide.ticks);
    assert_eq!(labels(&wide)[0], "1e-9");
    for pair in wide.ticks.windows(2) {
        let spacing = (pair[1].0 - pair[0].0) * 300.0 / (wide.high - wide.low);
        let widest = pair[0].1.len().max(pair[1].1.len());
        assert!(spacing >= label_width(widest), "{:?}", wide.ticks);
    }
    // One value, and nothing: still an axis.
    assert_eq!(
        (Axis::log(&[1.0], 500.0).low, Axis::log(&[1.0], 500.0).high),
        (-1.0, 1.0)
    );
    assert!(Axis::log(&[], 500.0).ticks.len() >= 2);
    // A linear axis takes fewer ticks where its labels would touch.
    let steps = Axis::linear(&[0.0, 1_234_567.0], 8, true, 200.0);
    assert!(steps.ticks.len() <= 4, "{:?}", steps.ticks);
}
