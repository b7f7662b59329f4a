//! The files a spec copies into the image: each source relative to the spec's folder and
//! kept inside the project, each destination an absolute path of plain characters. Paths
//! are compared as written (`lexical`): a source may not exist yet when its spec is shown.

use std::path::{Component, Path, PathBuf};

use super::Resolver;
use crate::input::paths::lexical;
use crate::input::{Location, SpecError};
use crate::spec::load::{Origin, SpecDocument};
use crate::spec::model::FileEntry;
use crate::spec::resolved::CopiedFiles;

/// Where the entries of one `files` list copy from, and where errors about them point.
struct FilesOwner {
    /// The folder of the spec that names the files (absolute): sources start there.
    folder: PathBuf,
    /// Sources stay in the project: under the spec's folder, or under the current
    /// folder (`../code` from `images/`).
    roots: Vec<PathBuf>,
    /// The owner's `files` key.
    location: Option<Location>,
}

impl Resolver<'_> {
    pub(super) fn files(&self, workdir: &str) -> Result<Vec<CopiedFiles>, SpecError> {
        let Some(entries) = &self.merged.files else {
            return Ok(Vec::new());
        };
        // `files` never merge, so the nearest spec that names them owns every entry.
        let owner = self
            .chain
            .iter()
            .rev()
            .find(|document| document.file.files.is_some())
            .expect("merged files come from some spec");
        let folder = self.files_folder(owner)?;
        let current = lexical(self.current_dir);
        let owner = FilesOwner {
            roots: vec![folder.clone(), current],
            folder,
            location: owner.locate_key("files"),
        };
        entries
            .iter()
            .enumerate()
            .map(|(index, entry)| owner.copied(index, entry, workdir))
            .collect()
    }

    /// The folder of the spec that names the files, absolute; built-in specs have none.
    fn files_folder(&self, owner: &SpecDocument) -> Result<PathBuf, SpecError> {
        match &owner.origin {
            Origin::Local(path) | Origin::File(path) => {
                // `lab.yaml` has the parent `""`: the current folder, made absolute, so
                // the comparison below never sees a relative (match-everything) root.
                let parent = path.parent().unwrap_or(Path::new(""));
                Ok(lexical(&self.current_dir.join(parent)))
            }
            Origin::Builtin => Err(self.error(
                "files",
                "built-in specs cannot copy files",
                "copy files from a local spec",
            )),
        }
    }
}

impl FilesOwner {
    /// One entry, checked, as the build copies it (into `files/<index>` of the context).
    fn copied(
        &self,
        index: usize,
        entry: &FileEntry,
        workdir: &str,
    ) -> Result<CopiedFiles, SpecError> {
        let (source, destination, ignore) = entry.parts();
        self.check_source(&source)?;
        let destination =
            destination.unwrap_or_else(|| format!("{workdir}/{}", last_name(&source)));
        if !valid_destination(&destination) {
            return Err(self.bad(
                format!("`files` destination `{destination}` must be an absolute path of letters, digits, `-`, `_`, `.`"),
                "write it like `/tf/code`",
            ));
        }
        if let Some(pattern) = ignore.iter().find(|p| p.is_empty() || p.contains('\n')) {
            return Err(self.bad(
                format!("`files` ignore pattern `{pattern}` is not valid"),
                "write gitignore-style patterns such as `*.ckpt` or `data/`",
            ));
        }
        Ok(CopiedFiles {
            source: self.folder.join(&source),
            context_path: format!("files/{index}"),
            destination,
            ignore,
            location: self.location.clone(),
            roots: self.roots.clone(),
        })
    }

    /// A source is relative to the spec's folder and stays in the project.
    fn check_source(&self, source: &str) -> Result<(), SpecError> {
        if source.is_empty() || Path::new(source).is_absolute() {
            return Err(self.bad(
                format!("`files` source `{source}` must be a path relative to the spec file"),
                "write it relative to the folder of the spec file, such as `../code`",
            ));
        }
        let full = lexical(&self.folder.join(source));
        let roots: Vec<&Path> = self.roots.iter().map(PathBuf::as_path).collect();
        if !inside_any(&full, &roots) {
            return Err(self.bad(
                format!(
                    "`files` source `{source}` is outside the project (it is `{}`)",
                    full.display()
                ),
                "copy files from the spec's folder or the current folder, such as `../code` from `images/`",
            ));
        }
        Ok(())
    }

    fn bad(&self, message: String, hint: &str) -> SpecError {
        SpecError::new(self.location.clone(), message, hint)
    }
}

/// The last plain part of a source (`../code` → `code`), the name of its default
/// destination under the workdir.
fn last_name(source: &str) -> String {
    Path::new(source)
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .next_back()
        .unwrap_or("files")
        .to_string()
}

/// An absolute path of letters, digits, `/`, `-`, `_` and `.`, with no `..` part.
fn valid_destination(destination: &str) -> bool {
    destination.starts_with('/')
        && destination
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c))
        && !destination.split('/').any(|part| part == "..")
}

/// Whether the absolute, lexical `path` is one of `roots` or inside one. A relative root
/// is no root: every relative path would "start with" an empty one.
fn inside_any(path: &Path, roots: &[&Path]) -> bool {
    path.is_absolute()
        && roots
            .iter()
            .any(|root| root.is_absolute() && path.starts_with(lexical(root)))
}

#[cfg(test)]
mod tests;
