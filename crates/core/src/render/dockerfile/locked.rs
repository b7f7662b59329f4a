//! What a lock changes in the Dockerfile: apt packages pinned as `name=version` (the whole
//! closure apt resolved when the lock was made), and each pip layer installed from a
//! requirement file rendered from the lock with `--require-hashes --no-deps`, copied in
//! just before its layer so variants whose groups are equal keep sharing it.

use super::is_system;
use super::syntax::line;
use crate::render::files::requirements_file;
use crate::spec::ResolvedSpec;

/// The folder of the requirement files inside the image.
pub const LOCK_DIR: &str = "/opt/tfimg/lock";

/// The apt packages of the first (`system`) or the variant's layer: the lock's pinned
/// closure when a lock pins that layer, else the spec's names.
pub(super) fn apt_packages(spec: &ResolvedSpec, system: bool) -> Vec<String> {
    match crate::lock::pins(spec) {
        Some(pins) if system || pins.variant => {
            let apt = &pins.locked.file.apt;
            let packages = if system { &apt.system } else { &apt.variant };
            packages
                .iter()
                .map(|package| format!("{}={}", package.name, package.version))
                .collect()
        }
        _ => spec
            .packages
            .apt
            .iter()
            .filter(|package| is_system(package) == system)
            .cloned()
            .collect(),
    }
}

/// `COPY` of a group's requirement file, before the layer that installs it.
pub(super) fn copy_requirements(w: &mut String, group: &str) {
    line(
        w,
        &format!("COPY {} {LOCK_DIR}/{group}.txt", requirements_file(group)),
    );
}

/// `pip install` of a group from its requirement file: only the lock's files, each
/// checked against its sha256.
pub(super) fn pip_install(w: &mut String, lead: &str, pip: &str, group: &str, more: bool) {
    let tail = if more { " \\" } else { "" };
    line(
        w,
        &format!("{lead}{pip} install --require-hashes --no-deps -r {LOCK_DIR}/{group}.txt{tail}"),
    );
}
