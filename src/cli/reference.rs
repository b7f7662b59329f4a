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

/// Every man page: `tfimg.1`, then one per command (`tfimg-run.1`, `tfimg-base-bootstrap.1`),
/// hidden and help commands left out; (file name, roff).
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    let mut command = Cli::command();
    command.build();
    let mut pages = Vec::new();
    add_pages(&command, &mut pages);
    pages
}

fn add_pages(command: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) {
    let name = command
        .get_display_name()
        .unwrap_or_else(|| command.get_name())
        .to_string();
    let mut roff = Vec::new();
    // Rendering into memory cannot fail.
    let _ = clap_mangen::Man::new(command.clone()).render(&mut roff);
    pages.push((format!("{name}.1"), roff));
    for sub in command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
    {
        add_pages(sub, pages);
    }
}

/// The page `tfimg man [COMMAND...]` prints: `tfimg.1` without words, else the command's
/// (`run`, `base bootstrap`); `None` for a command tfimg does not have.
pub fn man_page(words: &[String]) -> Option<Vec<u8>> {
    let wanted = std::iter::once("tfimg".to_string())
        .chain(words.iter().cloned())
        .collect::<Vec<_>>()
        .join("-");
    man_pages()
        .into_iter()
        .find(|(file, _)| *file == format!("{wanted}.1"))
        .map(|(_, roff)| roff)
}

#[cfg(test)]
mod tests;
