//! What tfimg tells the user beside a command's result: a status (what it is doing), a
//! note (what it chose and why, what to do next) or a warning (what may go wrong). A
//! notice holds its words only; the binary's `output/` shows it (`note: ...`,
//! `warning: ...` on stderr), so no story or plan writes those prefixes itself.

/// A line for the user, in words, of one of three kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// What tfimg is doing (`syncing ./data → /tf/data (3 files, 2 KB)`): shown as it is.
    Status(String),
    /// How something was decided, or what the user may do next.
    Note(String),
    /// Something that may go wrong, or already has, without failing the command.
    Warning(String),
}

impl Notice {
    pub fn status(text: impl Into<String>) -> Self {
        Notice::Status(text.into())
    }

    pub fn note(text: impl Into<String>) -> Self {
        Notice::Note(text.into())
    }

    pub fn warning(text: impl Into<String>) -> Self {
        Notice::Warning(text.into())
    }

    /// Its words, without the kind.
    pub fn text(&self) -> &str {
        match self {
            Notice::Status(text) | Notice::Note(text) | Notice::Warning(text) => text,
        }
    }
}
