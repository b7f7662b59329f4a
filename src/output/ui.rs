//! Where a use case's words go: notes for the user (stderr), the command's result
//! (stdout), a container's output as it streams. The terminal is one sink; the use cases'
//! unit tests read what a `Recorded` sink was told.

use super::report::Report;
use crate::engine::OutputChunk;
use crate::notice::Notice;

/// A use case's output sink.
pub trait Ui {
    /// A line for the user, on stderr.
    fn note(&self, line: &str);
    /// A note or a warning, on stderr as `output/` shows it.
    fn notice(&self, notice: &Notice) {
        self.note(&super::notice_line(notice));
    }
    /// A line of the command's result, on stdout.
    fn data(&self, line: &str);
    /// A container's output, passed through as it comes.
    fn output(&self, chunk: OutputChunk);
}

/// This process's stdout and stderr.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal;

impl Ui for Terminal {
    fn note(&self, line: &str) {
        errln!("{line}");
    }

    fn data(&self, line: &str) {
        let _ = super::print_text(&format!("{line}\n"));
    }

    fn output(&self, chunk: OutputChunk) {
        super::pass_through(chunk);
    }
}

/// Progress as plain lines on stderr, for a command that shows none of its own (and for
/// `Reporter` in plain mode): each status and daemon line, each build step; no live
/// summary and no JSON events.
impl Report for Terminal {
    fn status(&self, message: &str) {
        errln!("{message}");
    }

    fn output(&self, line: &str) {
        errln!("{line}");
    }

    fn build_event(&self, event: &crate::engine::BuildEvent) {
        match event {
            crate::engine::BuildEvent::Step {
                index,
                total,
                instruction,
            } => errln!("{}", super::report::step_line(index, total, instruction)),
            crate::engine::BuildEvent::Output(line) => errln!("{line}"),
            crate::engine::BuildEvent::Container(_) => {}
        }
    }

    fn event(&self, _: &str, _: serde_json::Value) {}
    fn live(&self, _: &str) {}
    fn result(&self, _: serde_json::Value) {}
    fn clear(&self) {}
    fn is_json(&self) -> bool {
        false
    }
}

/// What a use case said, kept for a unit test to read: its notes and status lines (as
/// the user reads them), its result lines, the output it passed through, and its
/// progress (`Report`): the daemon's lines, the live summaries and the JSON events.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct Recorded {
    pub notes: std::cell::RefCell<Vec<String>>,
    pub data: std::cell::RefCell<Vec<String>>,
    pub output: std::cell::RefCell<Vec<u8>>,
    /// Lines of a subprocess or the daemon, and build steps (`Step 2/9 : RUN ...`).
    pub lines: std::cell::RefCell<Vec<String>>,
    pub live: std::cell::RefCell<Vec<String>>,
    /// `(kind, value)` of each event, the result's as `result`.
    pub events: std::cell::RefCell<Vec<(String, serde_json::Value)>>,
    pub cleared: std::cell::Cell<usize>,
}

#[cfg(test)]
impl Report for Recorded {
    fn status(&self, message: &str) {
        self.notes.borrow_mut().push(message.to_string());
    }

    fn output(&self, line: &str) {
        self.lines.borrow_mut().push(line.to_string());
    }

    fn build_event(&self, event: &crate::engine::BuildEvent) {
        match event {
            crate::engine::BuildEvent::Step {
                index,
                total,
                instruction,
            } => self
                .lines
                .borrow_mut()
                .push(super::report::step_line(index, total, instruction)),
            crate::engine::BuildEvent::Output(line) => super::progress::Report::output(self, line),
            crate::engine::BuildEvent::Container(_) => {}
        }
    }

    fn event(&self, kind: &str, value: serde_json::Value) {
        self.events.borrow_mut().push((kind.to_string(), value));
    }

    fn live(&self, message: &str) {
        self.live.borrow_mut().push(message.to_string());
    }

    fn result(&self, value: serde_json::Value) {
        self.clear();
        self.event("result", value);
    }

    fn clear(&self) {
        self.cleared.set(self.cleared.get() + 1);
    }

    fn is_json(&self) -> bool {
        false
    }
}

#[cfg(test)]
impl Ui for Recorded {
    fn note(&self, line: &str) {
        self.notes.borrow_mut().push(line.to_string());
    }

    fn data(&self, line: &str) {
        self.data.borrow_mut().push(line.to_string());
    }

    fn output(&self, chunk: OutputChunk) {
        let (OutputChunk::Stdout(bytes) | OutputChunk::Stderr(bytes)) = chunk;
        self.output.borrow_mut().extend_from_slice(&bytes);
    }
}

/// Words nobody reads: a story's notes and progress in a unit test that asserts on
/// something else.
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

#[cfg(test)]
impl Ui for Silent {
    fn note(&self, _: &str) {}
    fn data(&self, _: &str) {}
    fn output(&self, _: OutputChunk) {}
}

#[cfg(test)]
impl Report for Silent {
    fn status(&self, _: &str) {}
    fn output(&self, _: &str) {}
    fn build_event(&self, _: &crate::engine::BuildEvent) {}
    fn event(&self, _: &str, _: serde_json::Value) {}
    fn live(&self, _: &str) {}
    fn result(&self, _: serde_json::Value) {}
    fn clear(&self) {}
    fn is_json(&self) -> bool {
        false
    }
}
