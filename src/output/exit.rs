//! The exit-code contract (0 success, 1 bad input, 2 engine/daemon/host failure) and how
//! errors are printed: `error: ...` then a `hint: ...` line with the fix.

use std::process::ExitCode;

use crate::engine::EngineError;
use crate::host::HostError;
use crate::host::Interrupted;
use crate::input::{InputError, SpecError};

pub const EXIT_BAD_INPUT: u8 = 1;
pub const EXIT_ENGINE: u8 = 2;
/// 128 + SIGINT, as shells report an interrupted command.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Prints `error` (with its context chain) and its hint; returns the exit code its kind
/// calls for.
pub fn report(error: &anyhow::Error) -> ExitCode {
    let (hint, code) = classify(error);
    errln!("error: {error:#}");
    if let Some(hint) = hint {
        errln!("hint: {hint}");
    }
    ExitCode::from(code)
}

/// The hint and exit code of the first tfimg error in the chain.
pub fn classify(error: &anyhow::Error) -> (Option<String>, u8) {
    for cause in error.chain() {
        if let Some(spec) = cause.downcast_ref::<SpecError>() {
            return (Some(spec.hint.clone()), EXIT_BAD_INPUT);
        }
        if let Some(input) = cause.downcast_ref::<InputError>() {
            return (Some(input.hint.clone()), EXIT_BAD_INPUT);
        }
        if cause.downcast_ref::<Interrupted>().is_some() {
            return (None, EXIT_INTERRUPTED);
        }
        if let Some(host) = cause.downcast_ref::<HostError>() {
            return (Some(host.hint.clone()), EXIT_ENGINE);
        }
        if let Some(engine) = cause.downcast_ref::<EngineError>() {
            return (engine.hint().map(str::to_string), EXIT_ENGINE);
        }
    }
    (None, EXIT_ENGINE)
}
