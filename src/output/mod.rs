//! Output conventions: data on stdout (tables or `--json`), progress and logs on stderr.
//! Tracing verbosity comes from `-v`/`-vv`, `RUST_LOG` overrides; `NO_COLOR` is honoured.

use std::io::Write;

use tabwriter::TabWriter;

use crate::input::source::printable;
use crate::notice::Notice;
use tracing_subscriber::EnvFilter;

// First: its `outln!` and `errln!` are for every module declared after it.
#[macro_use]
pub mod streams;

pub mod exit;
pub mod gpus;
pub mod progress;
pub mod prompt;
pub mod report;
pub mod sinks;
pub mod ui;

pub fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "tfimg=debug,info",
        _ => "tfimg=trace,debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let color = std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| streams::TracingWriter)
        .with_ansi(color)
        .with_target(false)
        .try_init();
}

/// A notice as the user reads it: a status as it is, `note: ...` or `warning: ...`.
pub fn notice_line(notice: &Notice) -> String {
    match notice {
        Notice::Status(text) => text.clone(),
        Notice::Note(text) => format!("note: {text}"),
        Notice::Warning(text) => format!("warning: {text}"),
    }
}

/// Each notice as the user reads it (for the stories' unit tests).
#[cfg(test)]
pub fn shown(notices: &[Notice]) -> Vec<String> {
    notices.iter().map(notice_line).collect()
}

/// A note or a warning, on stderr.
pub fn notice(notice: &Notice) {
    errln!("{}", notice_line(notice));
}

/// A note, on stderr.
pub fn note(text: impl Into<String>) {
    notice(&Notice::note(text));
}

/// Text on stdout. A closed pipe (`tfimg show x | head`) ends tfimg as a pipe expects
/// (`streams`).
pub fn print_text(text: &str) -> std::io::Result<()> {
    streams::out(text.as_bytes())
}

/// A container's output, passed through to this process's stdout or stderr as it comes.
/// A closed pipe (`tfimg logs -f x | head`) ends the stream, and tfimg (`streams`).
pub fn pass_through(chunk: crate::engine::OutputChunk) {
    match chunk {
        crate::engine::OutputChunk::Stdout(bytes) => {
            let _ = streams::out(&bytes);
        }
        crate::engine::OutputChunk::Stderr(bytes) => streams::err(&bytes),
    }
}

/// Writes rows as aligned columns (two spaces apart) to stdout.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    streams::out(&aligned(header, rows)?)
}

/// `print_table` on stderr (beside a document printed on stdout).
pub fn eprint_table(header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    streams::err(&aligned(header, rows)?);
    Ok(())
}

/// The table's text, its columns aligned.
fn aligned(header: &[&str], rows: &[Vec<String>]) -> std::io::Result<Vec<u8>> {
    let mut writer = TabWriter::new(Vec::new()).padding(2);
    writer.write_all(table(header, rows).as_bytes())?;
    writer
        .into_inner()
        .map_err(|error| std::io::Error::other(error.to_string()))
}

/// The table's lines, cells separated by tabs. Every cell has its control and invisible
/// characters escaped: a newline in a local spec's description would forge a row, a tab
/// a column, an escape sequence would drive the terminal.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut text = header.join("\t");
    text.push('\n');
    for row in rows {
        let cells: Vec<_> = row.iter().map(|cell| printable(cell)).collect();
        text.push_str(&cells.join("\t"));
        text.push('\n');
    }
    text
}

/// `bytes` on stdout as they are (a generated completion script or man page): success,
/// or the exit code of a failed write (a reader that stopped early ends tfimg as a pipe
/// expects: `streams`).
pub fn write_stdout(bytes: &[u8]) -> std::process::ExitCode {
    match streams::out(bytes) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => exit::report(&anyhow::Error::from(error)),
    }
}

/// Pretty JSON on stdout, newline-terminated.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(print_text(&text)?)
}

#[cfg(test)]
mod tests;
