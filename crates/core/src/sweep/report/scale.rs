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

/// A tick label's width in SVG units, about, for `chars` characters of the 12px type.
pub fn label_width(chars: usize) -> f64 {
    chars as f64 * 7.0
}

/// The space kept between two labels.
const LABEL_GAP: f64 = 10.0;

/// Whether labels of `texts`, `spacing` apart, stand clear of each other.
fn clear<'a>(texts: impl IntoIterator<Item = &'a str>, spacing: f64) -> bool {
    let widest = texts
        .into_iter()
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0);
    spacing >= label_width(widest) + LABEL_GAP
}

/// An x axis of numbers `width` units long: round ticks (at most `most`, fewer where
/// their labels would touch) with their labels. On a `log` axis the ticks' values are
/// powers of ten (and 2 and 5 times them where they fit): `place` gives a value's
/// position in the axis's units (log10 of it).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub low: f64,
    pub high: f64,
    pub log: bool,
    /// (position, label).
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// Where `value` lies on the axis, in its units; `None` for a value it cannot place
    /// (not finite, or not positive on a log axis).
    pub fn place(&self, value: f64) -> Option<f64> {
        match self.log {
            true => (value > 0.0 && value.is_finite()).then(|| value.log10()),
            false => value.is_finite().then_some(value),
        }
    }

    /// A linear axis over `values` (non-finite ones ignored).
    pub fn linear(values: &[f64], most: usize, whole: bool, width: f64) -> Axis {
        let mut target = most.max(2);
        loop {
            let ticks = ticks(values.iter().copied(), target, whole);
            let labels: Vec<String> = ticks.values.iter().map(|v| ticks.label(*v)).collect();
            let spacing = width / (labels.len().max(2) - 1) as f64;
            if target <= 2 || clear(labels.iter().map(String::as_str), spacing) {
                return Axis {
                    low: ticks.low,
                    high: ticks.high,
                    log: false,
                    ticks: ticks.values.iter().copied().zip(labels).collect(),
                };
            }
            target -= 1;
        }
    }

    /// A log axis over the positive finite `values`, from the power of ten at or below the
    /// least to the one at or above the greatest.
    pub fn log(values: &[f64], width: f64) -> Axis {
        let (least, greatest) = values
            .iter()
            .filter(|value| value.is_finite() && **value > 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
                (low.min(*value), high.max(*value))
            });
        let (mut low, mut high) = match least <= greatest {
            true => (least.log10().floor(), greatest.log10().ceil()),
            false => (0.0, 1.0),
        };
        if high <= low {
            (low, high) = (low - 0.5, high + 0.5);
            (low, high) = (low.floor(), high.ceil());
        }
        let (first, last) = (low as i32, high as i32);
        let per_unit = width / (high - low);
        // Powers of ten, and 2 and 5 times them when their labels fit.
        let candidates = |mantissas: &[u8]| -> Vec<(f64, String)> {
            (first..=last)
                .flat_map(|exponent| mantissas.iter().map(move |m| (*m, exponent)))
                .map(|(mantissa, exponent)| {
                    let position = f64::from(exponent) + f64::from(mantissa).log10();
                    (position, decade_label(mantissa, exponent))
                })
                .filter(|(position, _)| *position <= high + 1e-9)
                .collect()
        };
        let fits = |ticks: &[(f64, String)]| {
            ticks.windows(2).all(|pair| {
                let spacing = (pair[1].0 - pair[0].0) * per_unit;
                clear([pair[0].1.as_str(), pair[1].1.as_str()], spacing)
            })
        };
        let with_minor = candidates(&[1, 2, 5]);
        let ticks = if last - first <= 2 && fits(&with_minor) {
            with_minor
        } else {
            // Every `stride`-th power of ten, the stride the least that fits.
            let powers = candidates(&[1]);
            (1..=powers.len().max(1))
                .map(|stride| powers.iter().step_by(stride).cloned().collect::<Vec<_>>())
                .find(|kept| fits(kept))
                .unwrap_or_default()
        };
        Axis {
            low,
            high,
            log: true,
            ticks,
        }
    }
}

/// `0.001`, `20`, `1e-5`, `5e6`: `mantissa` × 10^`exponent` as a tick's label.
fn decade_label(mantissa: u8, exponent: i32) -> String {
    match exponent {
        -4..=5 => {
            let value = f64::from(mantissa) * 10f64.powi(exponent);
            format!("{value:.*}", (-exponent).max(0) as usize)
        }
        _ => format!("{mantissa}e{exponent}"),
    }
}

#[cfg(test)]
mod tests;
