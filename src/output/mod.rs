//! Output conventions: data on stdout (tables or `--json`), progress and logs on stderr.
//! Tracing verbosity comes from `-v`/`-vv`, `RUST_LOG` overrides; `NO_COLOR` is honoured.

use std::io::Write;

use tabwriter::TabWriter;

use crate::input::source::printable;
use tracing_subscriber::EnvFilter;

pub mod exit;
pub mod gpus;
pub mod progress;
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
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(false)
        .try_init();
}

/// Text on stdout. A closed pipe (`tfimg show x | head`) is not an error.
pub fn print_text(text: &str) -> std::io::Result<()> {
    quiet_on_broken_pipe(std::io::stdout().lock().write_all(text.as_bytes()))
}

fn quiet_on_broken_pipe(result: std::io::Result<()>) -> std::io::Result<()> {
    match result {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// A container's output, passed through to this process's stdout or stderr as it comes.
pub fn pass_through(chunk: crate::engine::OutputChunk) {
    let result = match chunk {
        crate::engine::OutputChunk::Stdout(bytes) => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&bytes).and_then(|()| stdout.flush())
        }
        crate::engine::OutputChunk::Stderr(bytes) => {
            let mut stderr = std::io::stderr().lock();
            stderr.write_all(&bytes).and_then(|()| stderr.flush())
        }
    };
    // A closed pipe (`tfimg logs x | head`) ends nothing here: the stream just goes on.
    let _ = result;
}

/// Writes rows as aligned columns (two spaces apart) to stdout.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut writer = TabWriter::new(std::io::stdout().lock()).padding(2);
    writer.write_all(table(header, rows).as_bytes())?;
    quiet_on_broken_pipe(writer.flush())
}

/// `print_table` on stderr (beside a document printed on stdout).
pub fn eprint_table(header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut writer = TabWriter::new(std::io::stderr().lock()).padding(2);
    writer.write_all(table(header, rows).as_bytes())?;
    quiet_on_broken_pipe(writer.flush())
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

/// `bytes` on stdout as they are (a generated completion script or man page): success
/// (also when the reader closed the pipe early), or the exit code of a failed write.
pub fn write_stdout(bytes: &[u8]) -> std::process::ExitCode {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        // A reader that stopped early (`| head`) is not a failure.
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            std::process::ExitCode::SUCCESS
        }
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
