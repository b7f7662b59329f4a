//! How every chart of the report marks a trial by its status. A done trial ran to its
//! end: its value is a filled dot and its curve a solid line. Every other trial's value
//! is partial (stopped early, failed or timed out, stopped by hand, still running) or not
//! a number (diverged): a hollow or crossed mark of its own shape and colour, a dashed
//! curve ending in that mark, and a legend line that says what it means; the means of
//! the objective by param leave them out. Marks are found by the status's word
//! (`RowStatus::word`), so a status added later needs only a line in `MARKS`; one without
//! a line still gets the `OTHER` mark, never the done one. Pure.

use maud::{html, Markup};

use super::scale::coordinate;
use super::{MISSING_COLOR, POINT_COLOR};
use crate::sweep::results::RowStatus;

/// The outline of a mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Dot,
    Ring,
    Cross,
    Square,
    Triangle,
    Diamond,
}

/// The mark of one status.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Mark {
    /// The status's word, as `RowStatus::word` says it: the `data-status` of every
    /// element that draws such a trial.
    pub word: &'static str,
    pub shape: Shape,
    pub color: &'static str,
    /// The legend's words for a trial of that status, its word first.
    pub meaning: &'static str,
}

/// The mark of each status, the done one first, in the legends' order.
const MARKS: [Mark; 7] = [
    Mark {
        word: "done",
        shape: Shape::Dot,
        color: POINT_COLOR,
        meaning: "ran to its end",
    },
    Mark {
        word: "stopped early",
        shape: Shape::Ring,
        color: "#b8860b",
        meaning: "stopped early by `early_stop`: its value when stopped",
    },
    Mark {
        word: "failed",
        shape: Shape::Cross,
        color: "#c0392b",
        meaning: "failed or timed out: its value before it ended",
    },
    Mark {
        word: "diverged",
        shape: Shape::Triangle,
        color: "#7768ae",
        meaning: "diverged: its value is not a number (NaN or infinite), drawn at the edge",
    },
    Mark {
        word: "stopped",
        shape: Shape::Square,
        color: "#5f6b76",
        meaning: "stopped before its end (Ctrl-C, `sweep stop`): its value so far",
    },
    Mark {
        word: "running",
        shape: Shape::Diamond,
        color: "#2e86ab",
        meaning: "running: its value so far",
    },
    Mark {
        word: "queued",
        shape: Shape::Cross,
        color: MISSING_COLOR,
        meaning: "queued",
    },
];

/// A status without a line in `MARKS`.
const OTHER: Mark = Mark {
    word: "other",
    shape: Shape::Diamond,
    color: MISSING_COLOR,
    meaning: "did not run to its end",
};

/// The mark of a trial of `status`.
pub(super) fn of(status: &RowStatus) -> &'static Mark {
    let word = status.word();
    MARKS
        .iter()
        .find(|mark| mark.word == word)
        .unwrap_or(&OTHER)
}

/// The marks in the legends' order, each once, of the statuses in `statuses`.
pub(super) fn present<'a>(statuses: impl IntoIterator<Item = &'a RowStatus>) -> Vec<&'static Mark> {
    let mut found: Vec<&'static Mark> = statuses.into_iter().map(of).collect();
    let order = |mark: &&Mark| {
        MARKS
            .iter()
            .position(|listed| listed == *mark)
            .unwrap_or(MARKS.len())
    };
    found.sort_by_key(order);
    found.dedup();
    found
}

impl Mark {
    /// A trial that ran to its end: its value counts in the means.
    pub fn ordinary(&self) -> bool {
        self.word == "done"
    }

    /// Its CSS class: `stopped-early`.
    pub fn class(&self) -> String {
        self.word.replace(' ', "-")
    }

    /// The mark drawn at (`x`, `y`), `size` its half width; a done trial's dot filled with
    /// `fill` (the best trial's colour, or the usual one).
    pub fn draw(&self, x: f64, y: f64, size: f64, fill: &str) -> Markup {
        let color = if self.ordinary() { fill } else { self.color };
        shape(self.shape, x, y, size, color)
    }

    /// The mark as a legend's swatch.
    pub fn swatch(&self) -> Markup {
        html! {
            svg.mark-swatch viewBox="0 0 14 14" width="14" height="14" aria-hidden="true" {
                (self.draw(7.0, 7.0, 5.0, POINT_COLOR))
            }
        }
    }

    /// The legend's line for it: `data-status` names the status.
    pub fn legend(&self) -> Markup {
        html! {
            li.mark data-status=(self.word) { (self.swatch()) " " (self.meaning) }
        }
    }
}

/// `shape` at (`x`, `y`) in `color`: a filled dot, else an outline on white.
pub(super) fn shape(shape: Shape, x: f64, y: f64, size: f64, color: &str) -> Markup {
    let at = |dx: f64, dy: f64| format!("{},{}", coordinate(x + dx), coordinate(y + dy));
    let outline = |points: Vec<String>| {
        html! {
            polygon points=(points.join(" ")) fill="#fff" stroke=(color) stroke-width="2" {}
        }
    };
    match shape {
        Shape::Dot => html! {
            circle cx=(coordinate(x)) cy=(coordinate(y)) r=(coordinate(size)) fill=(color) {}
        },
        Shape::Ring => html! {
            circle cx=(coordinate(x)) cy=(coordinate(y)) r=(coordinate(size * 0.9)) fill="#fff"
                stroke=(color) stroke-width="2" {}
        },
        Shape::Cross => {
            let s = size * 0.85;
            html! {
                path d=(format!("M{}L{}M{}L{}", at(-s, -s), at(s, s), at(-s, s), at(s, -s)))
                    stroke=(color) stroke-width="2.2" stroke-linecap="round" fill="none" {}
            }
        }
        Shape::Square => {
            let s = size * 0.8;
            outline(vec![at(-s, -s), at(s, -s), at(s, s), at(-s, s)])
        }
        Shape::Triangle => outline(vec![
            at(0.0, -size),
            at(size, size * 0.8),
            at(-size, size * 0.8),
        ]),
        Shape::Diamond => outline(vec![
            at(0.0, -size),
            at(size, 0.0),
            at(0.0, size),
            at(-size, 0.0),
        ]),
    }
}
