//! Output conventions: data on stdout (tables or `--json`), progress and logs on stderr.
//! Tracing verbosity comes from `-v`/`-vv`, `RUST_LOG` overrides; `NO_COLOR` is honoured.

use std::io::Write;

use tabwriter::TabWriter;
use tracing_subscriber::EnvFilter;

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

/// Writes rows as aligned columns (two spaces apart) to stdout.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut writer = TabWriter::new(std::io::stdout().lock()).padding(2);
    writeln!(writer, "{}", header.join("\t"))?;
    for row in rows {
        writeln!(writer, "{}", row.join("\t"))?;
    }
    quiet_on_broken_pipe(writer.flush())
}

/// Pretty JSON on stdout, newline-terminated.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(print_text(&text)?)
}
