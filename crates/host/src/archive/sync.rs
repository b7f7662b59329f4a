//! A `--sync` source as the tar the container receives: the folder (or file) under the
//! name it takes there, its folders and files in name order, each owned by the run's
//! uid:gid (so the container's user can change them) with 0755/0644 modes and a fixed
//! mtime. What git would not commit stays behind (`.gitignore`, `.ignore`, git's own
//! excludes), so does what Docker would not send (`.dockerignore` at the source, its
//! patterns anchored at the source as Docker's are), and `.git` always. Links are
//! followed only where they stay inside the source: a link to `~/.ssh` must not travel.

use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::BuildContext;
use crate::FileStream;
use tfimg_core::input::source::printable;
use tfimg_core::input::InputError;
use tfimg_core::plan::sync::SyncPlan;

/// The walked source of one sync, ready to stream (files are read while streaming).
#[derive(Debug, Clone)]
pub struct SyncArchive {
    context: BuildContext,
    /// Regular files in it and their bytes.
    pub files: usize,
    pub bytes: u64,
}

impl SyncArchive {
    /// One folder entry `name`, owned by `owner`: what makes a new volume's root the run
    /// user's (Docker creates it as root when the image has no folder there).
    pub fn folder(name: &str, owner: (u32, u32)) -> SyncArchive {
        let mut archive = SyncArchive::empty(owner);
        archive.context.add_folder(name);
        archive
    }

    /// Folder entries, each a path under the folder the archive lands in (parents
    /// first), owned by `owner`: the folders a destination lies in when the image has
    /// none there. No names: an empty archive (uploading it asks whether a folder exists).
    pub fn folders(names: &[String], owner: (u32, u32)) -> SyncArchive {
        let mut archive = SyncArchive::empty(owner);
        for name in names {
            archive.context.add_folder(name);
        }
        archive
    }

    fn empty(owner: (u32, u32)) -> SyncArchive {
        let mut context = BuildContext::default();
        context.set_owner(owner.0, owner.1);
        SyncArchive {
            context,
            files: 0,
            bytes: 0,
        }
    }

    /// An archive of files given in memory (relative paths under `name`), for tests.
    #[cfg(any(test, feature = "fake"))]
    pub fn from_files(name: &str, files: &[(String, Vec<u8>)], owner: (u32, u32)) -> SyncArchive {
        let mut archive = SyncArchive::folder(name, owner);
        for (path, bytes) in files {
            archive.bytes += bytes.len() as u64;
            archive.files += 1;
            let path = format!("{name}/{path}");
            archive.context.add_bytes(&path, 0o644, bytes.clone());
        }
        archive
    }

    /// Entries (folders and files).
    pub fn entries(&self) -> usize {
        self.context.len()
    }

    pub fn into_stream(self) -> FileStream {
        Box::pin(self.context.into_stream())
    }

    /// The tar in memory (tests and small archives).
    pub fn to_bytes(&self) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.context.write_tar(&mut bytes)?;
        Ok(bytes)
    }
}

/// Walks `sync`'s source into an archive whose entries sit under the destination's name
/// and belong to `owner`. Creates nothing; a link leading out of the source, a name that
/// is not UTF-8 or an unreadable file is bad input naming the flag.
pub fn sync_archive(sync: &SyncPlan, owner: (u32, u32)) -> Result<SyncArchive, InputError> {
    let source = &sync.source;
    let flag = format!("`--sync {}`", printable(&sync.text));
    let metadata = std::fs::metadata(source)
        .map_err(|_| tfimg_core::plan::sync::missing_source(&sync.text, source))?;
    if !metadata.is_dir() {
        let mut archive = SyncArchive::empty(owner);
        archive.add_file(sync.name(), source, &metadata);
        return Ok(archive);
    }
    let mut archive = SyncArchive::folder(sync.name(), owner);
    let root = source
        .canonicalize()
        .map_err(|error| unreadable(&flag, source, &error))?;
    let walker = walker(source, &flag, !sync.whole)?;
    for item in walker {
        let entry = item.map_err(|error| walk_error(&flag, source, &root, &error))?;
        if entry.path_is_symlink() {
            check_link(&flag, entry.path(), source, &root)?;
        }
        let relative = entry.path().strip_prefix(source).unwrap_or(entry.path());
        if relative.as_os_str().is_empty() {
            continue;
        }
        let Some(relative) = relative.to_str() else {
            return Err(InputError::new(
                format!(
                    "{flag}: `{}` has a name that is not UTF-8",
                    entry.path().display()
                ),
                "rename it, or leave it out with `.dockerignore`",
            ));
        };
        let path = format!("{}/{relative}", sync.name());
        match entry.file_type() {
            Some(kind) if kind.is_dir() => archive.context.add_folder(&path),
            Some(kind) if kind.is_file() => {
                let metadata = entry
                    .metadata()
                    .map_err(|error| walk_error(&flag, source, &root, &error))?;
                archive.add_file(&path, entry.path(), &metadata);
            }
            // Sockets, pipes and devices are no data to copy.
            _ => {}
        }
    }
    Ok(archive)
}

impl SyncArchive {
    fn add_file(&mut self, path: &str, source: &Path, metadata: &std::fs::Metadata) {
        let executable =
            std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o111 != 0;
        self.context
            .add_file(path, executable, source.to_path_buf());
        self.files += 1;
        self.bytes += metadata.len();
    }
}

/// The source's walk: ignore files as git reads them (without needing a repository),
/// `.dockerignore` at the source, never `.git`, links followed, names sorted.
/// The walk of `source`, leaving out what the ignore files say when `ignores` (else
/// `.git` only).
fn walker(source: &Path, flag: &str, ignores: bool) -> Result<ignore::Walk, InputError> {
    let dockerignore = match ignores {
        true => dockerignore(source, flag)?,
        false => Gitignore::empty(),
    };
    let root = source.to_path_buf();
    Ok(ignore::WalkBuilder::new(source)
        .standard_filters(false)
        .hidden(false)
        .parents(ignores)
        .ignore(ignores)
        .git_ignore(ignores)
        .git_global(ignores)
        .git_exclude(ignores)
        .require_git(false)
        .follow_links(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            let relative = entry.path().strip_prefix(&root).unwrap_or(entry.path());
            entry.file_name() != ".git" && !dockerignore.matched(relative, is_dir).is_ignore()
        })
        .build())
}

/// `.dockerignore` at the source, every pattern anchored at the source (Docker matches
/// them against the whole path from the context's root: `*.log` is only the top folder's
/// logs, `**/*.log` every one).
fn dockerignore(source: &Path, flag: &str) -> Result<Gitignore, InputError> {
    let path = source.join(".dockerignore");
    let mut builder = GitignoreBuilder::new(source);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(unreadable(flag, &path, &error)),
    };
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (negation, pattern) = match line.strip_prefix('!') {
            Some(pattern) => ("!", pattern),
            None => ("", line),
        };
        let pattern = pattern.trim_start_matches("./").trim_start_matches('/');
        builder
            .add_line(None, &format!("{negation}/{pattern}"))
            .map_err(|error| {
                InputError::new(
                    format!("`{}`:{}: {error}", path.display(), index + 1),
                    "write patterns as Docker reads them, such as `data/` or `**/*.ckpt`",
                )
            })?;
    }
    builder.build().map_err(|error| {
        InputError::new(
            format!("`{}`: {error}", path.display()),
            "write patterns as Docker reads them, such as `data/` or `**/*.ckpt`",
        )
    })
}

/// Refuses a link under the source that, resolved, leads out of it or nowhere.
fn check_link(flag: &str, path: &Path, source: &Path, root: &Path) -> Result<(), InputError> {
    let shown = path
        .strip_prefix(source)
        .unwrap_or(path)
        .display()
        .to_string();
    let hint = "copy what it leads to into the folder, give it its own `--sync`, or leave the link out with `.dockerignore`";
    let real = path.canonicalize().map_err(|error| {
        InputError::new(
            format!("{flag}: the link `{shown}` leads nowhere ({error})"),
            hint,
        )
    })?;
    if real.starts_with(root) {
        return Ok(());
    }
    Err(InputError::new(
        format!(
            "{flag}: the link `{shown}` leads outside `{}`, to `{}`",
            source.display(),
            real.display()
        ),
        hint,
    ))
}

/// A walk error: a link's own message when a link is the cause (one that leads nowhere,
/// or in a circle), else what could not be read.
fn walk_error(flag: &str, source: &Path, root: &Path, error: &ignore::Error) -> InputError {
    if let Some(path) = super::error_path(error).filter(|path| path.is_symlink()) {
        if let Err(problem) = check_link(flag, path, source, root) {
            return problem;
        }
    }
    InputError::new(
        format!("{flag}: cannot read the source: {error}"),
        "check the permissions, and that no link leads to a folder above it; or leave the file out with `.dockerignore`",
    )
}

fn unreadable(flag: &str, path: &Path, error: &std::io::Error) -> InputError {
    InputError::new(
        format!("{flag}: cannot read `{}`: {error}", path.display()),
        "check the permissions, or leave the file out with `.dockerignore`",
    )
}

#[cfg(test)]
mod tests;
