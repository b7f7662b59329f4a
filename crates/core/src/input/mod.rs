//! What the user gives tfimg, before it means anything: YAML text with the position of
//! every value (specs, team files), the errors that name a file's line and column or a
//! flag, each with a hint, and the escaping that keeps what the user wrote printable. Pure.

pub mod error;
pub mod failure;
#[doc(hidden)]
pub mod paths;
pub mod source;
pub mod text_proto;
pub mod yaml;

pub use error::InputError;
pub use failure::{Exit, Failure};
pub use source::{printable, Location, SpecError};

/// The known name closest to `wanted`, when one is close enough to be what was meant
/// (Jaro-Winkler similarity of at least 0.8, as clap suggests flags): `cpu-jupiter` →
/// `cpu-jupyter`, `mount_root` → `mounts_root`.
pub fn closest<'a>(wanted: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|name| (strsim::jaro_winkler(wanted, name), name))
        .filter(|(score, name)| *score >= 0.8 && *name != wanted)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// `did you mean `NAME`? ` for a mistyped name, else nothing (a prefix for a hint).
pub fn did_you_mean<'a>(wanted: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(wanted, known)
        .map(|name| format!("did you mean `{name}`? "))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
