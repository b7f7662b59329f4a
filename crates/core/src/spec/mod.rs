//! Specs: the YAML model, loading and `extends`, validation against the compatibility
//! table, and the resolved result every later stage works from.

pub mod compat;
pub mod listing;
pub mod load;
pub mod locked;
pub mod model;
pub mod resolved;
pub mod support;
pub mod syntax;
pub mod validate;

pub use crate::input::{Location, SpecError};
pub use load::{Catalog, SpecDocument};
pub use model::{CudaProvider, Service};
pub use resolved::ResolvedSpec;

/// Finds the spec named `wanted` in `catalog` and resolves it.
pub fn resolve(catalog: &Catalog, wanted: &str) -> Result<ResolvedSpec, SpecError> {
    resolve_document(catalog, catalog.find(wanted)?)
}

/// Resolves a spec document (a spec file named by path, or one of the catalog's) against
/// `catalog`: its `extends` chain merged and validated.
pub fn resolve_document(catalog: &Catalog, leaf: SpecDocument) -> Result<ResolvedSpec, SpecError> {
    let chain = catalog.chain(leaf)?;
    validate::resolve(&chain, catalog.current_dir())
}
