//! Offline bundles, the use cases: `save` gathers the targets' images (a spec's current
//! image, or an image as it is), their spec files and locks, refuses anything missing
//! before a byte is written, then streams one bundle into a temporary file beside the
//! output and renames it into place; `load` checks the whole bundle and the files it
//! would write before anything is imported, then streams the images into the daemon,
//! checks each arrived with its tags, and writes the specs. The layout and every check
//! are in the pure `bundle`; Docker is reached through the `Engine` traits and files
//! through the `Host`.

pub mod load;
pub mod save;
mod write;

pub use load::{check, load, LoadOptions};
pub use save::{check_output, save, save_targets, SaveOptions};

pub use crate::bundle::text::human_size;

/// How long one `--progress` update waits for the next.
const PROGRESS_EVERY_BYTES: u64 = 64 << 20;

#[cfg(test)]
mod tests;
