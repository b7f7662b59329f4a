//! "did you mean" for a mistyped command. clap suggests a command whose Jaro similarity to
//! what was typed is above 0.7, which finds `buidl` → `build` and `dcotor` → `doctor`
//! but never a swap in a short name: Jaro's match window is 0 for three letters, so `rnu`
//! scores 0.56 against `run` and `tfimg rnu` got no suggestion. Where clap has none, the
//! command one edit away (Damerau–Levenshtein: a swap, a letter left out, added or
//! changed) is suggested, in clap's own words. clap's suggestions also name hidden
//! commands (the internal `prune-superseded`); those are left out.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// `error`, with a suggestion added when it is a mistyped command clap found none for.
/// `words`: the command line (the program's name first), `command`: tfimg's definitions.
pub fn with_suggestion(
    error: clap::Error,
    words: &[String],
    command: &clap::Command,
) -> clap::Error {
    if error.kind() != ErrorKind::InvalidSubcommand {
        return error;
    }
    let Some(ContextValue::String(typed)) = error.get(ContextKind::InvalidSubcommand) else {
        return error;
    };
    let typed = typed.clone();
    let Some(parent) = parent_of(command, words, &typed) else {
        return error;
    };
    let shown: Vec<&str> = parent
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .flat_map(|sub| std::iter::once(sub.get_name()).chain(sub.get_visible_aliases()))
        .collect();
    // clap's own, less the hidden commands it also suggests (`prune-superseded`).
    let mut near: Vec<String> = match error.get(ContextKind::SuggestedSubcommand) {
        Some(ContextValue::Strings(found)) => found
            .iter()
            .filter(|name| shown.contains(&name.as_str()))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    if near.is_empty() {
        near = shown
            .iter()
            .filter(|name| strsim::damerau_levenshtein(&typed, name) <= 1)
            .map(|name| name.to_string())
            .collect();
    }
    // Made again, so that no hidden name clap put in its suggestions is left behind.
    let mut answer = clap::Error::new(ErrorKind::InvalidSubcommand).with_cmd(parent);
    answer.insert(ContextKind::InvalidSubcommand, ContextValue::String(typed));
    if !near.is_empty() {
        answer.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(near),
        );
    }
    if let Some(usage) = error.get(ContextKind::Usage) {
        answer.insert(ContextKind::Usage, usage.clone());
    }
    answer
}

/// The command whose subcommand `typed` was meant to be: the one reached by the words
/// before it (flags and their values skipped).
fn parent_of<'a>(
    command: &'a clap::Command,
    words: &[String],
    typed: &str,
) -> Option<&'a clap::Command> {
    let mut current = command;
    for word in words.iter().skip(1) {
        if word == typed {
            return Some(current);
        }
        if let Some(sub) = current.find_subcommand(word) {
            current = sub;
        }
    }
    None
}

#[cfg(test)]
mod tests;
