//! Where a story's words go: its notes and result lines (`Ui`) and its progress
//! (`Report`), paired once by a command (or a test) and carried in its session.

use super::progress::Reporter;
use super::report::Report;
#[cfg(test)]
use super::ui::Silent;
use super::ui::{Terminal, Ui};

/// Where a story's words go, before there is an engine to pair them with (a story that
/// connects, or reads a connection that may have failed, takes these).
#[derive(Clone, Copy)]
pub struct Sinks<'a> {
    pub ui: &'a dyn Ui,
    pub report: &'a dyn Report,
}

impl<'a> Sinks<'a> {
    pub fn new(ui: &'a dyn Ui, report: &'a dyn Report) -> Self {
        Sinks { ui, report }
    }

    /// A command's words: its notes and result lines on the terminal, its progress on
    /// `reporter`.
    pub fn terminal(reporter: &'a Reporter) -> Self {
        Sinks::new(&Terminal, reporter)
    }

    /// The words of a command that shows no progress of its own: plain lines.
    pub fn plain() -> Sinks<'static> {
        Sinks::new(&Terminal, &Terminal)
    }

    /// Words nobody reads (a unit test that asserts on something else).
    #[cfg(test)]
    pub fn silent() -> Sinks<'static> {
        Sinks::new(&Silent, &Silent)
    }
}
