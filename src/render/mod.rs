//! Rendering: a resolved spec becomes a Dockerfile plus the context files it copies.
//! Pure and deterministic: the same spec gives byte-identical output everywhere. No I/O;
//! `tfimg render -o` and the build stage write or stream what this returns.

pub mod context;
pub mod dockerfile;

use std::collections::BTreeMap;

pub use context::ContextFile;

use crate::spec::ResolvedSpec;

/// The rendered build: the Dockerfile and every other file of the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub dockerfile: String,
    pub files: BTreeMap<String, ContextFile>,
}

pub fn render(spec: &ResolvedSpec) -> Rendered {
    let files = context::context_files(spec);
    let dockerfile = dockerfile::dockerfile(spec, &files);
    Rendered { dockerfile, files }
}
