//! What a story runs against: the container engine and this machine, paired once where a
//! command starts (or a test makes its fakes) and handed down whole, so no story takes
//! them as two parameters.

/// The engine and the host a story uses. Copy: it holds two references.
pub struct Session<'a, E: ?Sized, H: ?Sized> {
    pub engine: &'a E,
    pub host: &'a H,
}

impl<'a, E: ?Sized, H: ?Sized> Session<'a, E, H> {
    /// The pair.
    pub fn new(engine: &'a E, host: &'a H) -> Self {
        Session { engine, host }
    }
}

impl<E: ?Sized, H: ?Sized> Clone for Session<'_, E, H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: ?Sized, H: ?Sized> Copy for Session<'_, E, H> {}
