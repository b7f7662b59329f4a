//! Rendering: a resolved spec becomes a Dockerfile plus the context files it copies (and,
//! for `tfimg lock`, the script that resolves its versions: `lock_script`).
//! Pure and deterministic: the same spec gives byte-identical output everywhere. No I/O;
//! `tfimg render -o` and the build stage write or stream what this returns.

pub mod dockerfile;
pub mod files;
pub mod lock_script;
pub mod network;

use std::collections::BTreeMap;

pub use files::ContextFile;

use crate::spec::ResolvedSpec;

/// The rendered build: the Dockerfile and every other file of the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub dockerfile: String,
    pub files: BTreeMap<String, ContextFile>,
}

/// Settings for restricted networks. They change what is built (the CA lands in the
/// image, the mirrors are written into apt's sources and pip's environment), so they are
/// rendered into the Dockerfile and covered by the build key. Proxies are not: they never
/// enter the image (see `build`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkOptions {
    /// Extra CA certificates (PEM), trusted by apt, pip and curl at build and run time.
    pub ca_certificates: Option<Vec<u8>>,
    /// Replaces `http://deb.debian.org/debian` (and Ubuntu's archive) in apt's sources.
    pub apt_mirror: Option<String>,
    /// pip's index (PIP_INDEX_URL); must not carry credentials.
    pub pip_index_url: Option<String>,
}

pub fn render(spec: &ResolvedSpec, network: &NetworkOptions) -> Rendered {
    let files = files::context_files(spec, network);
    let dockerfile = dockerfile::dockerfile(spec, network, &files);
    Rendered { dockerfile, files }
}
