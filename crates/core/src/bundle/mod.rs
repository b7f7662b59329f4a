//! Offline bundles (`tfimg save`, `tfimg load`): the manifest that lists what a bundle
//! holds (`manifest`), how the bundle is laid out as a tar (`layout`), and the checks a
//! bundle passes before anything in it is used (`verify`). Pure: no file system, clock,
//! environment or Docker here; `app::bundle` reads and writes the files and talks to the
//! engine.

pub mod error;
pub mod layout;
pub mod manifest;
pub mod text;
pub mod verify;

pub use error::BundleError;
pub use manifest::{BundledImage, BundledSpec, Manifest, Part, SpecSource};
pub use verify::{Located, Verified, Verifier};

/// The first file of every bundle.
pub const MANIFEST_PATH: &str = "manifest.json";
/// The last file: the manifest's sha256, in `sha256sum` format.
pub const CHECKSUM_PATH: &str = "manifest.sha256";
/// What the manifest's `kind` says.
pub const KIND: &str = "tfimg-bundle";
/// The bundle format this tfimg writes and reads.
pub const FORMAT: u32 = 1;
/// A manifest larger than this is refused before it is parsed.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

#[cfg(test)]
mod tests;
