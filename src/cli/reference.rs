//! The reference generated from the command line itself: shell completions (clap_complete)
//! and man pages (clap_mangen), one per command. Both come from the same clap definitions
//! the binary parses with, so they cannot drift from it; the copies under `docs/reference/`
//! are checked against them by the tests.

use clap::CommandFactory;

use super::Cli;

/// The shells `tfimg completions` writes for.
pub use clap_complete::Shell;

/// The completion script for `shell`, as `tfimg completions SHELL` prints it.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "tfimg", &mut script);
    script
}

/// The page `tfimg man [COMMAND...]` prints: `tfimg.1` without words, else the command's
/// (`run`, `base bootstrap`); `None` for a command tfimg does not have.
pub fn man_page(words: &[String]) -> Option<Vec<u8>> {
    let root = built();
    let mut command = &root;
    for word in words {
        command = paged(command).find(|sub| sub.get_name() == word)?;
    }
    Some(page(command).1)
}

/// The command line with every command's display name (`tfimg-run`) filled in.
fn built() -> clap::Command {
    let mut command = Cli::command();
    command.build();
    command
}

/// The commands under `command` that get a page: not hidden, not `help`.
fn paged(command: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
}

/// One command's page: its file name and roff.
fn page(command: &clap::Command) -> (String, Vec<u8>) {
    let name = command
        .get_display_name()
        .unwrap_or_else(|| command.get_name());
    let mut roff = Vec::new();
    // Rendering into memory cannot fail.
    let _ = clap_mangen::Man::new(command.clone()).render(&mut roff);
    (format!("{name}.1"), roff)
}

#[cfg(test)]
mod tests;
