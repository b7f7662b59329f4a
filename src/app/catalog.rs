//! The specs, team files and sweep files on this machine: the built-ins plus
//! `./images/*.yaml` (read here, parsed by `spec`), a spec file named by path, a team
//! file, a sweep file. The reading is here; everything about the text is in the pure
//! `spec`, `team` and `sweep` modules.

use std::path::{Path, PathBuf};

use crate::host::prelude::Files;
use crate::input::yaml::MAX_FILE_BYTES;
use crate::input::SpecError;
use crate::spec::load::{file_document, looks_like_path, SpecDocument, BUILTIN_PREFIX};
use crate::spec::{self, Catalog, ResolvedSpec};
use crate::sweep::{self, Sweep};
use crate::team::{self, Team};

/// The specs visible from the current folder: built-ins plus `images/*.yaml` there.
pub fn load(host: &impl Files, current_dir: &Path) -> Catalog {
    let mut catalog = Catalog::builtin(current_dir.to_path_buf());
    for path in local_spec_files(host, Path::new("images")) {
        let absolute = current_dir.join(&path);
        let read = read_file(host, &path).map_err(|error| error.to_string());
        catalog.add_local(absolute, &path.display().to_string(), read);
    }
    catalog
}

/// `wanted` resolved, with its lock when it has one (every build of it installs from
/// that), else the lock it inherits its lower layers from: a spec file when it names one,
/// else a spec of `catalog`.
pub fn resolve(
    host: &impl Files,
    catalog: &Catalog,
    wanted: &str,
) -> Result<ResolvedSpec, SpecError> {
    let mut resolved = resolve_unlocked(host, catalog, wanted)?;
    resolved.lock = super::lock::find(host, &resolved)?;
    if resolved.lock.is_none() {
        resolved.inherited = super::lock::inherited(host, &resolved);
    }
    Ok(resolved)
}

/// `wanted` resolved without looking at its lock (`tfimg lock` makes or checks it).
pub fn resolve_unlocked(
    host: &impl Files,
    catalog: &Catalog,
    wanted: &str,
) -> Result<ResolvedSpec, SpecError> {
    if !looks_like_path(wanted) {
        return spec::resolve(catalog, wanted);
    }
    let read = read_file(host, Path::new(wanted)).map_err(|error| error.to_string());
    spec::resolve_document(catalog, file_document(wanted, read)?)
}

/// The `extends` chain of `wanted` (root first, `wanted` last), each spec with where it
/// comes from.
pub fn chain(
    host: &impl Files,
    catalog: &Catalog,
    wanted: &str,
) -> Result<Vec<SpecDocument>, SpecError> {
    let leaf = if looks_like_path(wanted) {
        let read = read_file(host, Path::new(wanted)).map_err(|error| error.to_string());
        file_document(wanted, read)?
    } else {
        catalog.find(wanted)?
    };
    catalog.chain(leaf)
}

/// Whether `target` is a spec (a spec file, a spec name, or anything without `:` or `/`,
/// so a mistyped spec name gets the spec error) rather than an image reference.
pub fn is_spec(host: &impl Files, catalog: &Catalog, target: &str) -> bool {
    let path = Path::new(target);
    (host.exists(path) && !host.is_folder(path))
        || target.starts_with(BUILTIN_PREFIX)
        || !target.contains([':', '/'])
        || catalog.find(target).is_ok()
}

/// A team file, parsed; relative mounts start at its folder.
pub fn load_team(host: &impl Files, path: &Path) -> Result<Team, SpecError> {
    let display = path.display().to_string();
    let read = read_file(host, path).map_err(|error| error.to_string());
    team::parse_file(&display, read, folder_of(path))
}

/// A sweep file, parsed; relative mounts and its output folder start at its folder.
pub fn load_sweep(host: &impl Files, path: &Path) -> Result<Sweep, SpecError> {
    let read = read_file(host, path).map_err(|error| error.to_string());
    sweep::parse_file(&path.display().to_string(), read, &folder_of(path))
}

/// A sweep file's text, as `load_sweep` reads it: what an export reads the places of what
/// it cannot express from (`sweep::k8s::katib`).
pub fn sweep_text(host: &impl Files, path: &Path) -> Result<String, SpecError> {
    let display = path.display().to_string();
    let bytes = read_file(host, path).map_err(|error| {
        SpecError::new(
            None,
            format!("cannot read sweep file `{display}`: {error}"),
            format!(
                "give the path of a sweep YAML file; {}",
                crate::input::yaml::SWEEP_HINT
            ),
        )
    })?;
    crate::input::yaml::decode(bytes)
        .map_err(|problem| problem.error(&display, problem.place(), &crate::input::yaml::SWEEP))
}

/// The absolute folder of a file named by `path`.
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => std::path::absolute(parent),
        _ => std::path::absolute("."),
    }
    .unwrap_or_else(|_| PathBuf::from("."))
}

/// A spec, team or sweep file, read up to one byte past the size limit (a huge file is refused
/// without reading it all); `yaml::decode` checks the size and the encoding.
fn read_file(host: &impl Files, path: &Path) -> std::io::Result<Vec<u8>> {
    host.read_at_most(path, MAX_FILE_BYTES as u64 + 1)
}

/// `images/*.yaml` and `*.yml`, in name order.
fn local_spec_files(host: &impl Files, images_dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["yaml", "yml"]
        .iter()
        .flat_map(|extension| host.files_with_extension(images_dir, extension))
        .filter(|path| !host.is_folder(path))
        .collect();
    files.sort();
    files
}
