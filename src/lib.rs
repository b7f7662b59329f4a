//! tfimg: declarative TensorFlow images and launches.
//!
//! The pipeline reads top to bottom: `spec` (load, merge, validate) → `render`
//! (Dockerfile and context) → `engine` (the Docker API). `commands` holds one thin module
//! per subcommand; `cli` only the flag definitions; `error` the exit-code contract.

// The integration tests use the binary; the engine, the host and the specs' types (and
// the fuzzing properties) are the small public API they and the benches also call.
pub mod engine;
pub mod host;
pub mod lock;
pub mod spec;
pub mod sweep;

pub(crate) mod app;
pub(crate) mod bundle;
pub(crate) mod cli;
pub(crate) mod commands;
pub(crate) mod doctor;
pub(crate) mod input;
pub(crate) mod labels;
pub(crate) mod output;
pub(crate) mod plan;
pub(crate) mod render;

pub(crate) mod team;

/// The fuzzing properties, shared by `fuzz/` and tests/fuzz_inputs.rs: at the top, since
/// they reach every parser of the pure core.
#[doc(hidden)]
pub mod fuzzing;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Parse, run, and turn the outcome into the documented exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version are successes; every other usage problem is bad input (1).
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(output::exit::EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    output::init_tracing(cli.verbose);
    if let Err(error) = commands::choose_engine(&cli.engine) {
        return output::exit::report(&error);
    }
    let outcome = match cli.command {
        Command::List(args) => commands::list::run(&args),
        Command::Show(args) => commands::show::run(&args),
        Command::Render(args) => commands::render::run(&args),
        Command::Build(args) => commands::build::run(&args),
        Command::Lock(args) => commands::lock::run(&args),
        Command::Base(cli::BaseCommand::Bootstrap(args)) => commands::base::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Ps(args) => commands::containers::ps(&args),
        Command::Logs(args) => commands::containers::logs(&args),
        Command::Exec(args) => commands::containers::exec(&args),
        Command::Stop(args) => commands::containers::stop(&args),
        Command::Rm(args) => commands::containers::remove(&args),
        Command::PullFiles(args) => commands::files::pull_files(&args),
        Command::Forward(args) => commands::forward::run(&args),
        Command::Doctor(args) => commands::doctor::run(&args),
        Command::Up(args) => commands::team::up(&args),
        Command::Down(args) => commands::team::down(&args),
        Command::Compose(args) => commands::export::compose(&args),
        Command::Push(args) => commands::push::run(&args),
        Command::Save(args) => commands::bundle::save(&args),
        Command::Load(args) => commands::bundle::load(&args),
        Command::K8s(args) => commands::export::k8s(&args),
        Command::Sweep(args) => commands::sweep::run(&args),
        Command::Serve(args) => commands::serve::run(&args),
        Command::PruneSuperseded { name, key } => commands::build::prune_command(&name, &key),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => output::exit::report(&error),
    }
}
