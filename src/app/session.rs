//! What a story runs against: the container engine, this machine, and where its words go
//! (the command's notes and result lines, its progress), paired once where a command
//! starts (or a test makes its fakes) and handed down whole, so no story takes them as
//! separate parameters.

use crate::output::progress::Report;
pub use crate::output::sinks::Sinks;
use crate::output::ui::Ui;

/// The engine and the host a story uses, and its two sinks. Copy: it holds references.
pub struct Session<'a, E: ?Sized, H: ?Sized> {
    pub engine: &'a E,
    pub host: &'a H,
    /// Notes for the user, the command's result lines, a container's output.
    pub ui: &'a dyn Ui,
    /// Progress of long steps (builds, pulls, copies) and the JSON events.
    pub report: &'a dyn Report,
}

impl<'a, E: ?Sized, H: ?Sized> Session<'a, E, H> {
    /// The engine and the host, and where the story's words go.
    pub fn new(engine: &'a E, host: &'a H, sinks: Sinks<'a>) -> Self {
        Session {
            engine,
            host,
            ui: sinks.ui,
            report: sinks.report,
        }
    }

    /// A session on the fakes whose words nobody reads (a test that asserts on what the
    /// engine and the host were asked).
    #[cfg(test)]
    pub fn quiet(engine: &'a E, host: &'a H) -> Self {
        Session::new(engine, host, Sinks::silent())
    }
}

impl<E: ?Sized, H: ?Sized> Clone for Session<'_, E, H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: ?Sized, H: ?Sized> Copy for Session<'_, E, H> {}
