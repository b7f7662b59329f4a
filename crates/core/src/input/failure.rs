//! The exit-code contract (0 success, 1 bad input, 2 engine, daemon or host failure, 130
//! interrupted), carried by the errors themselves: each area's error type says, through
//! [`Failure`], which code it means and the hint that fixes it. The binary prints the
//! first failure of an error's chain (`output/exit.rs`) and decides nothing by its type.

/// How a command that failed ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// What the user gave was wrong: a file, a flag, a value (exit 1).
    BadInput,
    /// The engine, the daemon or this machine failed (exit 2).
    Failed,
    /// The user interrupted the command and tfimg cleaned up (exit 130).
    Interrupted,
}

pub const EXIT_BAD_INPUT: u8 = 1;
pub const EXIT_ENGINE: u8 = 2;
/// 128 + SIGINT, as shells report an interrupted command.
pub const EXIT_INTERRUPTED: u8 = 130;

impl Exit {
    /// The process's exit status.
    pub fn code(self) -> u8 {
        match self {
            Exit::BadInput => EXIT_BAD_INPUT,
            Exit::Failed => EXIT_ENGINE,
            Exit::Interrupted => EXIT_INTERRUPTED,
        }
    }
}

/// An error of tfimg's: how the command ends, and the fix printed after it as `hint:`.
pub trait Failure: std::error::Error {
    fn exit(&self) -> Exit;
    /// The fix, where the error knows one.
    fn hint(&self) -> Option<&str>;
}

impl Failure for super::InputError {
    fn exit(&self) -> Exit {
        Exit::BadInput
    }

    fn hint(&self) -> Option<&str> {
        Some(&self.hint)
    }
}

impl Failure for super::SpecError {
    fn exit(&self) -> Exit {
        Exit::BadInput
    }

    fn hint(&self) -> Option<&str> {
        Some(&self.hint)
    }
}
