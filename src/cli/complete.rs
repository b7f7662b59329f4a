//! Completion at each TAB, with clap_complete's dynamic engine (`CompleteEnv`): the script
//! `tfimg completions SHELL` prints asks `tfimg` itself, with `COMPLETE=SHELL` and the
//! words typed so far, what may come next. Commands and flags come from the same
//! definitions the binary parses with; the completers here add what exists only at run
//! time: the specs (`tfimg list`'s names and spec files), the containers tfimg made
//! (`tfimg ps`), the teams and the sweeps (`app::names`).
//!
//! Why the dynamic engine rather than the generated scripts (which knew commands and
//! flags only) or a completer of our own: the names change with every `run` and `rm`, so
//! only a question asked at TAB time can know them, and one engine answers bash, zsh,
//! fish, elvish and PowerShell alike. A completer never fails and never prints an error:
//! what it cannot learn (no daemon, an engine silent for 3 s) it leaves out, and the shell
//! offers the rest.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use clap::CommandFactory;
use clap_complete::engine::{CompletionCandidate, PathCompleter, ValueCompleter};

use super::Cli;
use crate::app::names;
use crate::app::settings::Settings;

/// The variable the shell sets when it asks (`COMPLETE=bash tfimg -- tfimg run ''`).
const VARIABLE: &str = "COMPLETE";

/// The longest a TAB waits for the engine.
const ENGINE_WAIT: Duration = Duration::from_secs(3);

/// Answers the shell when it is the one asking (`COMPLETE` set): the exit code, after
/// the candidates are written; `None` for a normal run.
pub fn answer_the_shell() -> Option<std::process::ExitCode> {
    let args = std::env::args_os();
    let current_dir = std::env::current_dir().ok();
    match clap_complete::CompleteEnv::with_factory(Cli::command)
        .var(VARIABLE)
        .try_complete(args, current_dir.as_deref())
    {
        Ok(true) => Some(std::process::ExitCode::SUCCESS),
        Ok(false) => None,
        Err(error) => {
            let _ = error.print();
            Some(std::process::ExitCode::from(
                crate::output::exit::EXIT_BAD_INPUT,
            ))
        }
    }
}

/// The script `tfimg completions SHELL` prints: it registers a function that asks
/// `tfimg` (found on PATH, so the script stays right when tfimg is upgraded or moved).
pub fn registration(shell: clap_complete::Shell) -> Vec<u8> {
    let name = shell.to_string();
    let mut script = Vec::new();
    if let Some(shell) = clap_complete::env::Shells::builtins().completer(&name) {
        // Writing into memory cannot fail.
        let _ = shell.write_registration(VARIABLE, "tfimg", "tfimg", "tfimg", &mut script);
    }
    script
}

/// A spec: a name from `tfimg list` (built-ins and `./images/*.yaml`), or a spec file.
pub fn spec(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(current_dir) = std::env::current_dir().ok() else {
        return Vec::new();
    };
    let mut candidates = starting_with(
        current,
        names::specs(&crate::host::Machine, &current_dir)
            .into_iter()
            .map(CompletionCandidate::new),
    );
    candidates.extend(yaml_file(current));
    candidates
}

/// A YAML file (a team file, a sweep file, a spec file) or a folder on the way to one.
pub fn yaml_file(current: &OsStr) -> Vec<CompletionCandidate> {
    PathCompleter::any()
        .filter(|path: &Path| {
            path.is_dir()
                || path
                    .extension()
                    .is_some_and(|extension| extension == "yaml" || extension == "yml")
        })
        .complete(current)
}

/// A container tfimg made, by name (with its spec and status as its description).
pub fn container(current: &OsStr) -> Vec<CompletionCandidate> {
    let found = on_engine(|engine| async move { names::containers(&engine).await });
    starting_with(
        current,
        found
            .unwrap_or_default()
            .into_iter()
            .map(|named| CompletionCandidate::new(named.name).help(Some(named.about.into()))),
    )
}

/// A team whose containers the engine holds.
pub fn team(current: &OsStr) -> Vec<CompletionCandidate> {
    let found = on_engine(|engine| async move { names::teams(&engine).await });
    starting_with(
        current,
        found
            .unwrap_or_default()
            .into_iter()
            .map(CompletionCandidate::new),
    )
}

/// A sweep: a name `tfimg sweep status NAME` finds, or a folder.
pub fn sweep(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(current_dir) = std::env::current_dir().ok() else {
        return Vec::new();
    };
    // Where tfimg remembers each sweep it ran; not made here (completing creates nothing).
    let remembered = crate::host::machine::data_dir().join("sweeps");
    let mut candidates = starting_with(
        current,
        names::sweeps(&crate::host::Machine, &current_dir, Some(&remembered))
            .into_iter()
            .map(CompletionCandidate::new),
    );
    candidates.extend(PathCompleter::dir().complete(current));
    candidates
}

/// The candidates whose value starts with what was typed.
fn starting_with(
    current: &OsStr,
    candidates: impl Iterator<Item = CompletionCandidate>,
) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    candidates
        .filter(|candidate| candidate.get_value().to_string_lossy().starts_with(&*typed))
        .collect()
}

/// `ask` answered by the engine the environment names (`DOCKER_HOST`, `DOCKER_CONTEXT`,
/// the docker CLI's current context), within `ENGINE_WAIT`; `None` on any failure.
fn on_engine<T, F, Asked>(ask: F) -> Option<T>
where
    F: FnOnce(crate::engine::Docker) -> Asked,
    Asked: std::future::Future<Output = anyhow::Result<T>>,
{
    let environment = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let settings =
        Settings::new(None, None, environment, std::env::current_dir(), Vec::new()).ok()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .ok()?;
    let answer = runtime.block_on(async {
        tokio::time::timeout(ENGINE_WAIT, async {
            let engine = settings.connect().await?;
            ask(engine).await
        })
        .await
    });
    // An engine that did not answer may hold a task: leave it behind rather than wait.
    runtime.shutdown_background();
    answer.ok()?.ok()
}
