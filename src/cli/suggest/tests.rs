use clap::{CommandFactory, Parser};

use super::*;
use crate::cli::Cli;

/// What clap prints for `words`, after `with_suggestion`.
fn rendered(words: &[&str]) -> String {
    let words: Vec<String> = words.iter().map(|word| word.to_string()).collect();
    let error = Cli::try_parse_from(&words).expect_err("a mistyped command");
    with_suggestion(error, &words, &Cli::command()).to_string()
}

#[test]
fn a_swap_in_a_short_command_gets_the_command_meant() {
    let text = rendered(&["tfimg", "rnu"]);
    assert!(
        text.contains("tip: a similar subcommand exists: 'run'"),
        "{text}"
    );
    let text = rendered(&["tfimg", "-v", "sotp", "x"]);
    assert!(
        text.contains("tip: a similar subcommand exists: 'stop'"),
        "{text}"
    );
    let text = rendered(&["tfimg", "base", "bootstarp", "debian:11"]);
    assert!(
        text.contains("tip: a similar subcommand exists: 'bootstrap'"),
        "{text}"
    );
}

#[test]
fn clap_s_own_suggestions_are_kept_and_nothing_far_is_suggested() {
    let text = rendered(&["tfimg", "dcotor"]);
    assert!(
        text.contains("tip: a similar subcommand exists: 'doctor'"),
        "{text}"
    );
    let text = rendered(&["tfimg", "xyzzy"]);
    assert!(!text.contains("tip:"), "{text}");
    // The hidden internal command is never suggested.
    let text = rendered(&["tfimg", "prune-superseder"]);
    assert!(!text.contains("prune-superseded"), "{text}");
}
