//! `tfimg list`'s rows: every buildable spec of a catalog with its stack and support, and
//! the specs that do not resolve (reported, never hiding the others).

use serde::Serialize;

use super::compat::Date;
use super::support::{spec_support, SpecSupport};
use super::{Catalog, ResolvedSpec, SpecError};

/// One spec as `tfimg list` shows it (its `--json` too).
#[derive(Debug, Serialize)]
pub struct ListEntry {
    pub name: String,
    pub tensorflow: String,
    pub python: String,
    pub gpu: bool,
    pub cuda: Option<String>,
    pub cudnn: Option<String>,
    pub cuda_provider: Option<String>,
    pub service: String,
    pub base: String,
    pub source: String,
    pub image: String,
    pub description: String,
    /// Whether a part (base release, Python, TensorFlow line) is past its support.
    pub past_support: bool,
    pub support: SpecSupport,
}

/// The catalog's specs (abstract ones left out), resolved, with their support as of
/// `today`; and the problems: broken files and specs that do not resolve.
pub fn list(catalog: &Catalog, today: Date) -> (Vec<ListEntry>, Vec<SpecError>) {
    let mut entries = Vec::new();
    let mut problems: Vec<SpecError> = catalog.broken().cloned().collect();
    for document in catalog.documents() {
        if document.file.is_abstract == Some(true) {
            continue;
        }
        match super::resolve(catalog, &document.name) {
            Ok(resolved) => {
                let support = spec_support(catalog, &resolved, today);
                entries.push(entry(resolved, support));
            }
            Err(error) => problems.push(error),
        }
    }
    (entries, problems)
}

fn entry(resolved: ResolvedSpec, support: SpecSupport) -> ListEntry {
    ListEntry {
        past_support: support.is_past(),
        support,
        tensorflow: resolved.tensorflow.clone(),
        python: resolved.python.clone(),
        gpu: resolved.is_gpu(),
        cuda: resolved.gpu.as_ref().map(|gpu| gpu.cuda.clone()),
        cudnn: resolved.gpu.as_ref().map(|gpu| gpu.cudnn.clone()),
        cuda_provider: resolved
            .gpu
            .as_ref()
            .map(|gpu| gpu.provider.as_str().to_string()),
        service: resolved.service.as_str().to_string(),
        image: resolved.image_reference(),
        base: resolved.base,
        source: resolved.source,
        description: resolved.description,
        name: resolved.name,
    }
}

#[cfg(test)]
mod tests;
