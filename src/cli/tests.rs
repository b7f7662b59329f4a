use clap::{CommandFactory, Parser};

use super::*;

/// Every `$ tfimg ...` line of every command's examples, with its command's name.
fn examples() -> Vec<(String, String)> {
    fn add(command: &clap::Command, found: &mut Vec<(String, String)>) {
        if let Some(help) = command.get_after_help() {
            for line in help.to_string().lines() {
                if let Some(example) = line.trim_start().strip_prefix("$ ") {
                    found.push((command.get_name().to_string(), example.to_string()));
                }
            }
        }
        for sub in command.get_subcommands() {
            add(sub, found);
        }
    }
    let mut found = Vec::new();
    add(&Cli::command(), &mut found);
    found
}

#[test]
fn every_example_in_the_help_is_a_command_line_tfimg_accepts() {
    let examples = examples();
    for command in [
        "run", "build", "up", "down", "sweep", "serve", "ps", "rm", "show", "doctor",
    ] {
        let count = examples.iter().filter(|(name, _)| name == command).count();
        assert!((2..=6).contains(&count), "`{command}`: {count} examples");
    }
    for (command, example) in &examples {
        let words = shlex::split(example).unwrap_or_else(|| panic!("{example}: quotes"));
        assert_eq!(words[0], "tfimg", "{example}");
        // Each shows its own command (an `up` may show the `ps` that follows it).
        assert!(
            words.iter().any(|word| word == command),
            "`{command}`'s example: {example}"
        );
        if let Err(error) = Cli::try_parse_from(&words) {
            panic!("{example}:\n{error}");
        }
    }
}
