//! How a failed command is printed (`error: ...` then a `hint: ...` line with the fix) and
//! ends. The exit code is the error's own (`input::Failure`, the contract: 0 success, 1 bad
//! input, 2 engine, daemon or host failure, 130 interrupted).

use std::error::Error;
use std::process::ExitCode;

use crate::engine::EngineError;
use crate::host::{HostError, Interrupted};
pub use crate::input::failure::{EXIT_BAD_INPUT, EXIT_ENGINE};
use crate::input::{Exit, Failure, InputError, SpecError};

/// Prints `error` (with its context chain) and its hint; returns the exit code it carries.
pub fn report(error: &anyhow::Error) -> ExitCode {
    let (hint, code) = classify(error);
    errln!("error: {error:#}");
    if let Some(hint) = hint {
        errln!("hint: {hint}");
    }
    ExitCode::from(code)
}

/// The hint and exit code of the first tfimg error in the chain; an error that is none of
/// tfimg's (an I/O error without context, say) is a failure without a hint.
pub fn classify(error: &anyhow::Error) -> (Option<String>, u8) {
    match error.chain().find_map(failure) {
        Some(failure) => (failure.hint().map(str::to_string), failure.exit().code()),
        None => (None, Exit::Failed.code()),
    }
}

/// `cause` as a tfimg error, where it is one: the one list of the areas' error types.
fn failure<'a>(cause: &'a (dyn Error + 'static)) -> Option<&'a dyn Failure> {
    fn is<'a, E: Failure + 'static>(cause: &'a (dyn Error + 'static)) -> Option<&'a dyn Failure> {
        cause.downcast_ref::<E>().map(|error| error as &dyn Failure)
    }
    is::<SpecError>(cause)
        .or_else(|| is::<InputError>(cause))
        .or_else(|| is::<Interrupted>(cause))
        .or_else(|| is::<HostError>(cause))
        .or_else(|| is::<EngineError>(cause))
}
