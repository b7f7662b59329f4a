//! Help that finds you (issue 45): examples in the main commands' `--help`, "did you
//! mean" for a mistyped command, `tfimg man` rendered on a terminal, and completion of
//! the names that exist only at run time (specs, containers, sweeps) in a real bash on a
//! real pseudo-terminal (rexpect), as a person presses TAB.

mod common;

use std::path::Path;
use std::process::Command;

use common::{scratch, tfimg};

/// A limit that only catches a hang.
const EXPECT_MS: u64 = 60_000;

/// The folder of the tfimg under test, to put first on a shell's PATH.
fn bin_folder() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_tfimg")).parent().unwrap()
}

#[test]
fn the_main_commands_help_ends_with_examples_of_that_command() {
    let folder = scratch(&[]);
    for command in [
        "run", "build", "up", "down", "sweep", "serve", "ps", "rm", "show", "doctor", "stop",
        "logs", "exec",
    ] {
        for flag in ["--help", "-h"] {
            let help = tfimg(folder.path(), &[command, flag]);
            assert_eq!(help.code, 0, "{}", help.stderr);
            let examples = help
                .stdout
                .split_once("\nExamples:\n")
                .unwrap_or_else(|| {
                    panic!("`tfimg {command} {flag}`: no examples:\n{}", help.stdout)
                })
                .1;
            let shown = examples
                .lines()
                .filter(|line| {
                    line.trim_start()
                        .starts_with(&format!("$ tfimg {command} "))
                })
                .count();
            assert!(shown >= 1, "`tfimg {command} {flag}`:\n{examples}");
        }
    }
    let run = tfimg(folder.path(), &["run", "--help"]);
    common::assert_contains(
        &run.stdout,
        "$ tfimg run cpu-jupyter -d --name \"$USER-lab\"",
    );
}

#[test]
fn a_mistyped_command_is_answered_with_the_one_meant() {
    let folder = scratch(&[]);
    for (typed, meant) in [("rnu", "run"), ("sotp", "stop"), ("buidl", "build")] {
        let answer = tfimg(folder.path(), &[typed]);
        assert_eq!(answer.code, 1, "{}", answer.stderr);
        assert!(answer.stdout.is_empty(), "{}", answer.stdout);
        common::assert_contains(
            &answer.stderr,
            &format!("tip: a similar subcommand exists: '{meant}'"),
        );
    }
}

/// `tfimg man run` on a terminal: `man` renders it and pages it with MANPAGER (`cat`
/// here, so the test does not wait on a pager); no roff reaches the screen.
#[test]
fn man_on_a_terminal_is_rendered_text_and_roff_only_when_piped() {
    let folder = scratch(&[]);
    let mut command = Command::new(env!("CARGO_BIN_EXE_tfimg"));
    command
        .args(["man", "run"])
        .current_dir(folder.path())
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .env_remove("RUST_LOG");
    let mut session = rexpect::session::spawn_command(command, Some(EXPECT_MS)).unwrap();
    let shown = session.exp_eof().unwrap();
    let status = session.process().wait().unwrap();
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 0)),
        "{status:?}: {shown}"
    );
    // Bold and underline may come as terminal escapes or overstrikes: read the letters.
    let text = plain(&shown);
    for wanted in [
        "NAME",
        "tfimg-run",
        "SYNOPSIS",
        "--idle-containers",
        "EXAMPLES",
        "$ tfimg run cpu-jupyter -d --name \"$USER-lab\"",
    ] {
        assert!(text.contains(wanted), "{wanted:?} is not in:\n{text}");
    }
    for roff in [".TH", "\\fB", ".SH", "\\-"] {
        assert!(
            !shown.contains(roff),
            "{roff:?} reached the terminal:\n{shown}"
        );
    }

    // Piped, the page is the roff the reference keeps (docs/reference/man/tfimg-run.1).
    let piped = tfimg(folder.path(), &["man", "run"]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    let kept = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference/man/tfimg-run.1"),
    )
    .unwrap();
    assert_eq!(piped.stdout, kept);
}

/// Without `man` on the PATH (a slim container), a terminal gets the command's `--help`
/// with a note, never roff.
#[test]
fn man_on_a_terminal_without_man_shows_the_help_text_with_a_note() {
    let folder = scratch(&[]);
    let empty = scratch(&[]);
    let mut command = Command::new(env!("CARGO_BIN_EXE_tfimg"));
    command
        .args(["man", "run"])
        .current_dir(folder.path())
        .env("PATH", empty.path())
        .env_remove("RUST_LOG");
    let mut session = rexpect::session::spawn_command(command, Some(EXPECT_MS)).unwrap();
    let shown = session.exp_eof().unwrap();
    let status = session.process().wait().unwrap();
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 0)),
        "{status:?}: {shown}"
    );
    common::assert_contains(&shown, "note: `man` could not be started");
    common::assert_contains(&shown, "`tfimg man run > tfimg-run.1` writes the page");
    common::assert_contains(&shown, "Usage: tfimg run [OPTIONS] [TARGET] [-- <CMD>...]");
    common::assert_contains(&shown, "Examples:");
    assert!(!shown.contains(".TH"), "{shown}");
}

/// `text` without terminal escapes and overstrikes (`X\bX`, `_\bX`).
fn plain(text: &str) -> String {
    let escapes = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    let text = escapes.replace_all(text, "");
    let mut out: Vec<char> = Vec::new();
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
            continue;
        }
        out.push(c);
    }
    out.into_iter()
        .collect::<String>()
        .replace(['\u{2010}', '\u{2212}'], "-")
}

/// An interactive bash on a pseudo-terminal with `tfimg completions bash` sourced, as a
/// user's shell after the set-up docs/reference/cli.md gives; in `folder`.
fn completing_bash(folder: &Path) -> rexpect::session::PtySession {
    let mut command = Command::new("bash");
    command
        .args(["--norc", "--noprofile", "-i"])
        .current_dir(folder)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_folder().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", folder)
        .env("INPUTRC", "/dev/null")
        .env("PS1", "ready> ")
        .env("TERM", "dumb")
        .env_remove("RUST_LOG");
    let mut session = rexpect::session::spawn_command(command, Some(EXPECT_MS)).unwrap();
    session.exp_string("ready> ").unwrap();
    // Every candidate listed at once: no "Display all N possibilities?" question and no
    // `--More--` pager (other tests' containers may be many on a shared engine).
    // rexpect turns the terminal's echo off, and readline then shows nothing typed.
    for line in [
        "stty echo",
        "source <(tfimg completions bash)",
        "bind 'set completion-query-items -1'",
        "bind 'set page-completions off'",
    ] {
        session.send_line(line).unwrap();
        session.exp_string("ready> ").unwrap();
    }
    session
}

/// `typed` then TAB TAB: what bash shows (the candidates it lists) before the line is
/// cleared and a marker command answers.
fn tab_tab(session: &mut rexpect::session::PtySession, typed: &str) -> String {
    session.send(typed).unwrap();
    session.send("\t\t").unwrap();
    session.flush().unwrap();
    // Keys wait in the terminal while bash asks tfimg: these come after the listing.
    session.send_control('u').unwrap();
    session.send_line("echo listed-$((20 + 22))").unwrap();
    let shown = session.exp_string("listed-42").unwrap();
    session.exp_string("ready> ").unwrap();
    shown
}

#[test]
fn bash_completes_spec_and_sweep_names_at_tab() {
    let folder = scratch(&[
        ("runs/my-sweep/journal.jsonl", ""),
        ("runs/not-a-sweep/notes.txt", ""),
        ("images/vision.yaml", "name: vision\nextends: cpu-jupyter\n"),
        ("team.yaml", "team: t\n"),
    ]);
    let mut bash = completing_bash(folder.path());
    let specs = tab_tab(&mut bash, "tfimg run ");
    for wanted in [
        "cpu-jupyter",
        "gpu-headless",
        "tf218-cpu-ssh",
        "vision",
        "team.yaml",
    ] {
        assert!(specs.contains(wanted), "{wanted:?} is not in:\n{specs}");
    }
    assert!(!specs.contains("cpu-base"), "{specs}");
    let sweeps = tab_tab(&mut bash, "tfimg sweep status ");
    assert!(sweeps.contains("my-sweep"), "{sweeps}");
    assert!(!sweeps.contains("not-a-sweep "), "{sweeps}");
    // One candidate: completed in place.
    bash.send("tfimg show cpu-jup\t").unwrap();
    bash.flush().unwrap();
    bash.exp_string("tfimg show cpu-jupyter ").unwrap();
    bash.send_control('u').unwrap();
    bash.send_line("exit").unwrap();
    bash.exp_eof().unwrap();
}

/// `tfimg rm <TAB><TAB>` (and `logs`) offers a container tfimg made, on the real Engine.
#[tokio::test]
async fn bash_completes_the_containers_tfimg_made_at_tab() {
    let Some((_engine, name, _guard)) = common::container_test("t-complete").await else {
        return;
    };
    let folder = scratch(&[]);
    let started = tfimg(
        folder.path(),
        &common::cli::run_args("cpu-headless", &["-d"], &name, &["sleep", "300"]),
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    let mut bash = completing_bash(folder.path());
    let offered = tab_tab(&mut bash, "tfimg rm ");
    assert!(offered.contains(&name), "{name} is not in:\n{offered}");
    let logs = tab_tab(&mut bash, "tfimg logs ");
    assert!(logs.contains(&name), "{name} is not in:\n{logs}");
    bash.send_line("exit").unwrap();
    bash.exp_eof().unwrap();
}
