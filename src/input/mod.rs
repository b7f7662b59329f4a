//! What the user gives tfimg, before it means anything: YAML text with the position of
//! every value (specs, team files), the errors that name a file's line and column or a
//! flag, each with a hint, and the escaping that keeps what the user wrote printable. Pure.

pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod paths;
pub mod source;
pub mod yaml;

pub use error::InputError;
pub use source::{printable, Location, SpecError};
