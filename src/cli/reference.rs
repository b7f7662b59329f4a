//! The reference generated from the command line itself: shell completions (clap_complete's
//! dynamic engine, `cli::complete`) and man pages (clap_mangen), one per command. Both come
//! from the same clap definitions the binary parses with, so they cannot drift from it;
//! the copies under `docs/reference/` are checked against them by the tests. On a terminal
//! a page is shown rendered (`terminal`).

use clap::CommandFactory;

use super::Cli;

mod terminal;
pub use terminal::show;

/// The shells `tfimg completions` writes for.
pub use clap_complete::Shell;

/// The completion script for `shell`, as `tfimg completions SHELL` prints it: it asks
/// `tfimg` at each TAB (`cli::complete`).
pub fn completions(shell: Shell) -> Vec<u8> {
    super::complete::registration(shell)
}

/// The `--help` of `tfimg WORDS` as plain text (what `tfimg man` shows without `man`).
pub fn long_help(words: &[String]) -> String {
    let root = built();
    let mut command = &root;
    for word in words {
        match command.find_subcommand(word) {
            Some(sub) => command = sub,
            None => break,
        }
    }
    command.clone().render_long_help().to_string()
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
    // The examples (`cli/examples.rs`) as their own section, kept as written: clap_mangen
    // would fill them into one paragraph.
    let examples = command.get_after_help().map(ToString::to_string);
    // Rendering into memory cannot fail.
    let _ = clap_mangen::Man::new(command.clone().after_help(None::<&str>)).render(&mut roff);
    if let Some(examples) = examples {
        let mut text = String::from_utf8_lossy(&roff).into_owned();
        let at = text.find("\n.SH VERSION").map_or(text.len(), |at| at + 1);
        text.insert_str(at, &examples_section(&examples));
        roff = text.into_bytes();
    }
    (format!("{name}.1"), roff)
}

/// `examples` (a heading line, then lines indented by two spaces) as a roff section
/// whose lines are shown as they are.
fn examples_section(examples: &str) -> String {
    let mut section = String::from(".SH EXAMPLES\n.nf\n");
    for line in examples.lines().skip(1) {
        let line = line.strip_prefix("  ").unwrap_or(line);
        let escaped = line.replace('\\', "\\e").replace('-', "\\-");
        if escaped.starts_with(['.', '\'']) {
            section.push_str("\\&");
        }
        section.push_str(&escaped);
        section.push('\n');
    }
    section.push_str(".fi\n");
    section
}

#[cfg(test)]
mod tests;
