//! The trait a story's progress goes through: the terminal's `Reporter` (or `Terminal`'s
//! plain lines) in a command, what a unit test records on the fakes.

use crate::engine::BuildEvent;

/// Where a story's progress and notes go: the terminal's [`Reporter`], or what a unit
/// test records (`ui::Recorded`).
pub trait Report {
    /// A line for the user (`base image debian:bullseye-slim found`).
    fn status(&self, message: &str);
    /// A note or a warning, as `output/` shows it.
    fn notice(&self, notice: &crate::notice::Notice) {
        self.status(&super::notice_line(notice));
    }
    /// A line of a subprocess or the daemon (shown in plain mode, summarised live).
    fn output(&self, line: &str);
    /// A step or a line of an image build.
    fn build_event(&self, event: &BuildEvent);
    /// An event of its own in JSON mode (`{"event": kind, ...value}`); nothing otherwise.
    fn event(&self, kind: &str, value: serde_json::Value);
    /// A summary line that replaces the last one on a terminal; nothing otherwise.
    fn live(&self, message: &str);
    /// The final result; in JSON mode this is the last event on stdout.
    fn result(&self, value: serde_json::Value);
    /// The live display taken away (before a container's own output, or the end).
    fn clear(&self);
    /// Whether every line goes out as JSON (`--progress json`).
    fn is_json(&self) -> bool;
}

/// A build step as plain progress shows it (`Step 2/9 : RUN pip install ...`).
pub fn step_line(
    index: &impl std::fmt::Display,
    total: &impl std::fmt::Display,
    instruction: &str,
) -> String {
    format!("Step {index}/{total} : {instruction}")
}
