//! The error for bad input that has no file position: a flag, a path, a value typed on
//! the command line. It carries the fix as a hint; it always means exit 1.

/// A problem with what the user gave (a flag, a file), with the fix.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    pub message: String,
    pub hint: String,
}

impl InputError {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        InputError {
            message: message.into(),
            hint: hint.into(),
        }
    }
}
