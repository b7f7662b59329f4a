//! `tfimg man` on a terminal: the page as a reader expects it, rendered and paged by
//! `man -l -` (man-db's and mandoc's way to read a page from stdin), so `MANPAGER` and
//! `PAGER` are honoured as for any other page. Piped or redirected (`tfimg man run >
//! tfimg-run.1`, `tfimg man | man -l -`) the roff is written as it is. A machine without
//! `man` (a slim container) gets the command's `--help`, which holds the same text, with a
//! note saying so rather than roff.

use std::io::{IsTerminal, Write};
use std::process::{ExitCode, Stdio};

use crate::output::exit::EXIT_ENGINE;

/// Shows `page`, the roff of `tfimg man WORDS`; `help` is the same command's `--help`.
pub fn show(page: &[u8], words: &[String], help: impl FnOnce() -> String) -> ExitCode {
    if !std::io::stdout().is_terminal() {
        return crate::output::write_stdout(page);
    }
    let started = std::process::Command::new("man")
        .args(["-l", "-"])
        .stdin(Stdio::piped())
        .spawn();
    let mut man = match started {
        Ok(man) => man,
        Err(error) => {
            let command = std::iter::once("tfimg")
                .chain(words.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            crate::output::note(format!(
                "`man` could not be started ({error}): this is `{command} --help`, which says the same; `{} > {}.1` writes the page",
                command.replacen("tfimg", "tfimg man", 1),
                command.replace(' ', "-"),
            ));
            return crate::output::write_stdout(help().as_bytes());
        }
    };
    if let Some(mut stdin) = man.stdin.take() {
        // A reader that quits early (`q` before the end) closes the pipe: not an error.
        let _ = stdin.write_all(page);
    }
    match man.wait() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        _ => ExitCode::from(EXIT_ENGINE),
    }
}
