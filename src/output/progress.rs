//! Progress of long operations (builds, bootstraps) on stderr, or as JSON events on
//! stdout with `--progress json`: a live spinner with the current step on a terminal,
//! the daemon's lines otherwise.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

pub use super::report::Report;
use super::ui::Terminal;
use crate::engine::BuildEvent;

/// How progress is shown (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Progress {
    /// A live display on a terminal, plain lines otherwise.
    Auto,
    /// The daemon's output line by line (for CI logs).
    Plain,
    /// One JSON event per line on stdout.
    Json,
}

/// Progress on this process's stderr (or JSON events on stdout).
pub struct Reporter {
    mode: Mode,
    started: Instant,
}

enum Mode {
    Live(ProgressBar),
    Plain,
    Json,
}

impl Reporter {
    pub fn new(progress: Progress) -> Reporter {
        let mode = match progress {
            Progress::Json => Mode::Json,
            Progress::Plain => Mode::Plain,
            Progress::Auto if std::io::stderr().is_terminal() => {
                let bar = ProgressBar::new_spinner();
                bar.set_style(
                    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                        .expect("a valid template"),
                );
                bar.enable_steady_tick(Duration::from_millis(120));
                Mode::Live(bar)
            }
            Progress::Auto => Mode::Plain,
        };
        Reporter {
            mode,
            started: Instant::now(),
        }
    }
}

impl Report for Reporter {
    fn is_json(&self) -> bool {
        matches!(self.mode, Mode::Json)
    }

    fn status(&self, message: &str) {
        match &self.mode {
            Mode::Live(bar) => bar.println(message),
            Mode::Plain => Terminal.status(message),
            Mode::Json => emit(json!({"event": "status", "message": message})),
        }
    }

    fn output(&self, line: &str) {
        match &self.mode {
            Mode::Live(bar) => bar.set_message(truncate(line, 100)),
            Mode::Plain => Terminal.output(line),
            Mode::Json => emit(json!({"event": "output", "line": line})),
        }
    }

    fn build_event(&self, event: &BuildEvent) {
        match (event, &self.mode) {
            (
                BuildEvent::Step {
                    index,
                    total,
                    instruction,
                },
                Mode::Live(bar),
            ) => {
                bar.set_message(format!(
                    "step {index}/{total}: {}",
                    truncate(instruction, 90)
                ));
            }
            (BuildEvent::Step { .. }, Mode::Plain) => Terminal.build_event(event),
            (
                BuildEvent::Step {
                    index,
                    total,
                    instruction,
                },
                Mode::Json,
            ) => emit(json!({
                "event": "step", "index": index, "total": total, "instruction": instruction,
            })),
            (BuildEvent::Output(_), Mode::Live(_)) | (BuildEvent::Container(_), _) => {}
            (BuildEvent::Output(line), _) => self.output(line),
        }
    }

    fn event(&self, kind: &str, value: serde_json::Value) {
        if let Mode::Json = self.mode {
            let mut value = value;
            value["event"] = json!(kind);
            emit(value);
        }
    }

    fn live(&self, message: &str) {
        if let Mode::Live(bar) = &self.mode {
            bar.set_message(truncate(message, 150));
        }
    }

    fn result(&self, value: serde_json::Value) {
        self.clear();
        if let Mode::Json = self.mode {
            let mut value = value;
            value["event"] = json!("result");
            value["seconds"] = json!(self.started.elapsed().as_secs_f64());
            emit(value);
        }
    }

    fn clear(&self) {
        if let Mode::Live(bar) = &self.mode {
            bar.finish_and_clear();
        }
    }
}

impl Reporter {
    /// How long since the command started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.clear();
    }
}

fn emit(value: serde_json::Value) {
    outln!("{value}");
}

fn truncate(text: &str, width: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let cut: String = text.chars().take(width - 1).collect();
        format!("{cut}…")
    }
}
