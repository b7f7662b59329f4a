//! tfimg: declarative TensorFlow images and launches.
//!
//! The pipeline reads top to bottom: `spec` (load, merge, validate) → `render`
//! (Dockerfile and context) → `engine` (the Docker API). `commands` holds one thin module
//! per subcommand; `cli` only the flag definitions; `error` the exit-code contract.

// First: its `outln!` and `errln!` (stdout and stderr, where a closed pipe ends tfimg as
// a pipe expects) are for every module declared after it.
#[macro_use]
pub(crate) mod output;

// Each layer below the binary is its own crate (crates/): the engine, the host and the
// pure core; their modules keep their paths here (`crate::engine`, `crate::spec`, …).
// Nothing here is public but `main`: the integration tests run the binary, and reach the
// crates below it through their facade, crates/testing (tests/README.md).
pub(crate) use tfimg_engine as engine;
pub(crate) use tfimg_host as host;

pub(crate) mod app;
pub(crate) mod cli;
pub(crate) mod commands;
pub(crate) mod doctor;

pub(crate) use tfimg_core::{bundle, input, labels, lock, notice, plan, render, spec, sweep, team};

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Parse, run, and turn the outcome into the documented exit code; a reader of stdout
/// or stderr that went away ends tfimg as a pipe expects instead (`output::streams`).
pub fn main() -> ExitCode {
    let code = run();
    output::streams::end_if_reader_gone();
    code
}

fn run() -> ExitCode {
    // The shell asking what may follow at a TAB (`tfimg completions`' script).
    if let Some(code) = cli::complete::answer_the_shell() {
        return code;
    }
    let words: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // A flag's typed value refused by tfimg's own parser: said as every bad input
            // is (`error:` and `hint:`), not in clap's words.
            if let Some(input) = cli::refused_value(&error) {
                return output::exit::report(&anyhow::Error::from(input));
            }
            let error = cli::suggest::with_suggestion(
                error,
                &words,
                &<Cli as clap::CommandFactory>::command(),
            );
            if let Err(failed) = error.print() {
                if failed.kind() == std::io::ErrorKind::BrokenPipe {
                    output::streams::reader_gone();
                }
            }
            // Help and version are successes; every other usage problem is bad input (1).
            return if error.use_stderr() {
                ExitCode::from(output::exit::EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    output::init_tracing(cli.verbose);
    // The generated reference needs no engine, settings or host.
    match &cli.command {
        Command::Completions { shell } => {
            return output::write_stdout(&cli::reference::completions(*shell));
        }
        Command::Man { command } => {
            return match cli::reference::man_page(command) {
                Some(page) => {
                    cli::reference::show(&page, command, || cli::reference::long_help(command))
                }
                None => output::exit::report(&anyhow::Error::from(input::InputError::new(
                    format!(
                        "`tfimg man {}`: tfimg has no such command",
                        command.join(" ")
                    ),
                    "`tfimg --help` lists the commands; `tfimg man` alone prints tfimg's own page",
                ))),
            };
        }
        _ => {}
    }
    // What a command is run with besides its flags, captured once; resolved only by the
    // commands that need it.
    let environment = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let argv = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let settings = match app::settings::Settings::new(
        cli.engine.host.clone(),
        cli.engine.context.clone(),
        environment,
        std::env::current_dir(),
        argv,
    ) {
        Ok(settings) => settings,
        Err(error) => return output::exit::report(&anyhow::Error::from(error)),
    };
    let host = &host::Machine;
    let outcome = match cli.command {
        Command::List(args) => commands::list::run(&args, &settings, host),
        Command::Show(args) => commands::show::run(&args, &settings, host),
        Command::Render(args) => commands::render::run(&args, &settings, host),
        Command::Build(args) => commands::build::run(&args, &settings, host),
        Command::Lock(args) => commands::lock::run(&args, &settings, host),
        Command::Base(cli::BaseCommand::Bootstrap(args)) => {
            commands::base::run(&args, &settings, host)
        }
        Command::Run(args) => commands::run::run(&args, &settings, host),
        Command::Ps(args) => commands::containers::ps(&args, &settings, host),
        Command::Logs(args) => commands::containers::logs(&args, &settings, host),
        Command::Exec(args) => commands::containers::exec(&args, &settings, host),
        Command::Stop(args) => commands::containers::stop(&args, &settings, host),
        Command::Rm(args) => commands::containers::remove(&args, &settings, host),
        Command::PullFiles(args) => commands::files::pull_files(&args, &settings, host),
        Command::Forward(args) => commands::forward::run(&args, &settings, host),
        Command::Doctor(args) => commands::doctor::run(&args, &settings, host),
        Command::Up(args) => commands::team::up(&args, &settings, host),
        Command::Down(args) => commands::team::down(&args, &settings, host),
        Command::Hub(cli::HubCommand::Passwd(args)) => {
            commands::team::hub_passwd(&args, &settings, host)
        }
        Command::Hub(cli::HubCommand::Gpus) => commands::team::hub_gpus(&settings),
        Command::Compose(args) => commands::export::compose(&args, &settings, host),
        Command::Push(args) => commands::push::run(&args, &settings),
        Command::Save(args) => commands::bundle::save(&args, &settings, host),
        Command::Load(args) => commands::bundle::load(&args, &settings, host),
        Command::K8s(args) => commands::export::k8s(&args, &settings, host),
        Command::Sweep(args) => commands::sweep::run(&args, &settings, host),
        Command::Serve(args) => commands::serve::run(&args, &settings, host),
        // Answered above.
        Command::Completions { .. } | Command::Man { .. } => Ok(ExitCode::SUCCESS),
        Command::PruneSuperseded { name, key } => {
            commands::build::prune_command(&name, &key, &settings, host)
        }
    };
    match outcome {
        Ok(code) => code,
        Err(error) => output::exit::report(&error),
    }
}
