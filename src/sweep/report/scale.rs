//! The numbers behind a chart's axis: a domain widened to round tick values (1, 2 or 5
//! times a power of ten), the ticks and their labels, and the linear map from values to
//! the drawing's coordinates. Pure arithmetic on finite numbers; whatever comes in (one
//! value, equal values, nothing, a stray infinity), what comes out is finite.

/// An axis: its round ends, the ticks between them and the step of those ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    pub low: f64,
    pub high: f64,
    pub step: f64,
    pub values: Vec<f64>,
}

/// Ticks for `values` (non-finite ones ignored), about `target` of them, a little wider
/// than the values. Equal values get room around them; no values at all give 0 to 1. With `whole`, the step is never below 1
/// (epochs).
pub fn ticks(values: impl IntoIterator<Item = f64>, target: usize, whole: bool) -> Ticks {
    let (mut low, mut high) = values
        .into_iter()
        .filter(|value| value.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
            (low.min(value), high.max(value))
        });
    let empty = low > high;
    if empty {
        (low, high) = (0.0, 1.0);
    }
    if high - low <= high.abs().max(low.abs()) * 1e-9 {
        let pad = if whole || low == 0.0 {
            1.0
        } else {
            low.abs() * 0.1
        };
        (low, high) = (low - pad, high + pad);
    }
    if !whole && !empty {
        // Room above and below, so no value sits on the frame.
        // A side that does not cross zero by itself does not by the room either.
        let pad = (high - low) * 0.04;
        let below = if low >= 0.0 {
            (low - pad).max(0.0)
        } else {
            low - pad
        };
        let above = if high <= 0.0 {
            (high + pad).min(0.0)
        } else {
            high + pad
        };
        (low, high) = (below, above);
    }
    let mut step = nice_step((high - low) / target.max(1) as f64);
    if whole {
        step = step.max(1.0);
    }
    let low = (low / step).floor() * step;
    let high = (high / step).ceil() * step;
    let count = ((high - low) / step).round() as usize;
    let values = (0..=count)
        .map(|index| clean(low + index as f64 * step, step))
        .collect();
    Ticks {
        low: clean(low, step),
        high: clean(high, step),
        step,
        values,
    }
}

/// The round step nearest `raw`: 1, 2, 5 or 10 times a power of ten.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let fraction = raw / magnitude;
    let nice = if fraction < 1.5 {
        1.0
    } else if fraction < 3.0 {
        2.0
    } else if fraction < 7.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// `value` without the float noise of repeated addition (`0.30000000000000004`).
fn clean(value: f64, step: f64) -> f64 {
    let text = format!("{value:.*}", decimals(step) + 2);
    let value: f64 = text.parse().unwrap_or(value);
    if value == 0.0 {
        0.0
    } else {
        value
    }
}

/// Decimals that show a multiple of `step` exactly (0 for steps of 1 and up).
fn decimals(step: f64) -> usize {
    if step >= 1.0 || !step.is_finite() || step <= 0.0 {
        0
    } else {
        (-step.log10().floor()).clamp(0.0, 15.0) as usize
    }
}

impl Ticks {
    /// A tick's label: `0.25`, `12`, `1e-6`, `2.5e6`; as many decimals as the step needs.
    pub fn label(&self, value: f64) -> String {
        let largest = self.low.abs().max(self.high.abs());
        if self.step < 1e-4 || largest >= 1e6 {
            let text = format!("{value:e}");
            return if value == 0.0 { "0".into() } else { text };
        }
        format!("{value:.*}", decimals(self.step))
    }
}

/// A linear map from a domain of values onto a range of coordinates (which may run
/// backwards: a y axis grows upwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    pub domain: (f64, f64),
    pub range: (f64, f64),
}

impl Linear {
    pub fn map(&self, value: f64) -> f64 {
        let (d0, d1) = self.domain;
        let (r0, r1) = self.range;
        if d1 == d0 {
            return (r0 + r1) / 2.0;
        }
        r0 + (value - d0) / (d1 - d0) * (r1 - r0)
    }
}

/// A coordinate as SVG text: one decimal, no `-0.0`.
pub fn coordinate(value: f64) -> String {
    let text = format!("{value:.1}");
    match text.as_str() {
        "-0.0" => "0.0".into(),
        _ => text,
    }
}

#[cfg(test)]
mod tests;
