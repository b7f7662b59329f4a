//! Why a bundle is refused, each naming the part it concerns, with the fix to print.
//! The messages leave out the bundle's own path: the use case puts it in front.

use crate::bundle::{CHECKSUM_PATH, MANIFEST_PATH};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("it is not a tfimg bundle: {reason}")]
    NotABundle { reason: String },
    #[error("it was written in bundle format {found}; this tfimg reads format {supported}")]
    NewerFormat { found: u32, supported: u32 },
    #[error("its `{MANIFEST_PATH}` is invalid: {reason}")]
    Manifest { reason: String },
    #[error("it is truncated: {where_}")]
    Truncated { where_: String },
    #[error("it holds {extra} byte(s) after its end")]
    Trailing { extra: u64 },
    #[error("part `{part}` does not match its sha256 in the manifest (expected `{expected}`, found `{found}`)")]
    Altered {
        part: String,
        expected: String,
        found: String,
    },
    #[error("`{MANIFEST_PATH}` does not match its sha256 in `{CHECKSUM_PATH}`")]
    ManifestAltered,
    #[error("the tar header of part `{part}` is damaged: {reason}")]
    Header { part: String, reason: String },
    #[error("the padding after part `{part}` was altered (it must be zero bytes)")]
    Padding { part: String },
    #[error("part `{part}` is {found} bytes, the manifest says {expected}")]
    Size {
        part: String,
        expected: u64,
        found: u64,
    },
    #[error("`{found}` is not a part the manifest lists (part `{expected}` comes here)")]
    Unexpected { found: String, expected: String },
    #[error("part `{found}` is out of place (the manifest puts part `{expected}` here)")]
    OutOfOrder { found: String, expected: String },
    #[error("part `{part}` is missing")]
    Missing { part: String },
    #[error("`{path}` is a {kind}; a bundle holds regular files only")]
    NotRegular { path: String, kind: String },
    #[error("part path `{path}` {reason}")]
    Path { path: String, reason: String },
}

impl BundleError {
    pub fn hint(&self) -> &'static str {
        match self {
            BundleError::NotABundle { .. } => {
                "give a file written by `tfimg save` (`tar -tf FILE` lists `manifest.json` first)"
            }
            BundleError::NewerFormat { .. } => {
                "load it with the tfimg version that saved it (the manifest's `tfimg` field), or a newer one"
            }
            BundleError::Path { .. } | BundleError::NotRegular { .. } => {
                "`tfimg save` never writes such a part: the file was made or changed by something else; do not load it"
            }
            BundleError::Truncated { .. } | BundleError::Trailing { .. } => {
                "the copy is incomplete or has bytes added: copy the bundle again and compare its size (and `sha256sum`) with the original"
            }
            _ => {
                "the bundle was altered or damaged after `tfimg save`: copy it again from where it was saved and compare `sha256sum` with the original"
            }
        }
    }
}
