//! Specs: the YAML model, loading and `extends`, validation against the compatibility
//! table, and the resolved result every later stage works from.

pub mod compat;
pub mod load;
pub mod model;
pub mod resolved;
pub mod syntax;
pub mod validate;

pub use crate::input::{Location, SpecError};
pub use load::{Catalog, SpecDocument};
pub use model::{CudaProvider, Service};
pub use resolved::ResolvedSpec;

/// Finds `wanted` (a name or a path) in `catalog` and resolves it.
pub fn resolve(catalog: &Catalog, wanted: &str) -> Result<ResolvedSpec, SpecError> {
    let leaf = catalog.find(wanted)?;
    let chain = catalog.chain(leaf)?;
    validate::resolve(&chain)
}
