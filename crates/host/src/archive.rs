//! The build context as a deterministic tar: entries sorted by path, every header with the
//! same mtime, uid/gid 0 and explicit modes, so the same files give the same bytes (and
//! the same build key) on every machine. Streamed to the daemon in fixed-size chunks from
//! a blocking thread, so memory stays bounded whatever the context's size. `sync` builds
//! the same kind of tar from a `--sync` source (with folders, owned by the run's user);
//! `unpack` takes a container's files back out of one, safely.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures_util::Stream;
use sha2::{Digest, Sha256};

use tfimg_core::input::InputError;
use tfimg_core::render::Rendered;
use tfimg_core::spec::resolved::CopiedFiles;

/// Every entry's mtime: 2000-01-01T00:00:00Z (not 0, which some archivers refuse).
pub const FIXED_MTIME: u64 = 946_684_800;

/// Chunk size of the stream to the daemon.
const CHUNK: usize = 256 * 1024;

/// Chunks in flight between the tar thread and the HTTP body.
const CHANNEL_DEPTH: usize = 4;

#[derive(Debug, Clone)]
enum Source {
    Bytes(Bytes),
    /// A file on disk, read while streaming.
    File(PathBuf),
    /// A folder (build contexts have none: folders are implied by their files).
    Folder,
}

#[derive(Debug, Clone)]
struct Entry {
    path: String,
    mode: u32,
    source: Source,
}

/// The files of one build context.
#[derive(Debug, Clone, Default)]
pub struct BuildContext {
    entries: Vec<Entry>,
    /// The uid and gid of every entry: root's for a build context, the run's for a sync.
    owner: (u64, u64),
}

impl BuildContext {
    /// The Dockerfile and generated files of a render, plus the spec's `files:`.
    pub fn from_rendered(
        rendered: &Rendered,
        copied: &[CopiedFiles],
    ) -> Result<BuildContext, InputError> {
        let mut context = BuildContext::default();
        context.add_bytes(
            "Dockerfile",
            0o644,
            rendered.dockerfile.clone().into_bytes(),
        );
        for (path, file) in &rendered.files {
            context.add_bytes(path, file.mode, file.contents.clone());
        }
        for entry in copied {
            context.add_copied(entry)?;
        }
        Ok(context)
    }

    pub fn add_bytes(&mut self, path: &str, mode: u32, contents: Vec<u8>) {
        self.insert(Entry {
            path: path.to_string(),
            mode,
            source: Source::Bytes(Bytes::from(contents)),
        });
    }

    /// Adds a file from disk, keeping only its executable bit (0755 or 0644).
    pub fn add_file(&mut self, path: &str, executable: bool, source: PathBuf) {
        self.insert(Entry {
            path: path.to_string(),
            mode: if executable { 0o755 } else { 0o644 },
            source: Source::File(source),
        });
    }

    /// Adds a folder entry (0755).
    pub fn add_folder(&mut self, path: &str) {
        self.insert(Entry {
            path: path.to_string(),
            mode: 0o755,
            source: Source::Folder,
        });
    }

    /// Gives every entry to `uid`:`gid` (root's, 0:0, by default).
    pub fn set_owner(&mut self, uid: u32, gid: u32) {
        self.owner = (u64::from(uid), u64::from(gid));
    }

    fn insert(&mut self, entry: Entry) {
        match self
            .entries
            .binary_search_by(|existing| existing.path.cmp(&entry.path))
        {
            Ok(index) => self.entries[index] = entry,
            Err(index) => self.entries.insert(index, entry),
        }
    }

    /// Adds a spec's `files:` entry: a file, or a folder walked in name order without
    /// following links, minus its ignore patterns (and `.git`).
    pub fn add_copied(&mut self, copied: &CopiedFiles) -> Result<(), InputError> {
        let source = &copied.source;
        let at = copied
            .location
            .as_ref()
            .map(|location| format!("{location}: "))
            .unwrap_or_default();
        if !source.exists() {
            return Err(InputError::new(
                format!("{at}`files` source `{}` does not exist", source.display()),
                "paths in `files` are relative to the spec file's folder",
            ));
        }
        let overrides = ignore_patterns(copied, &at)?;
        // Links are followed, but every one must land inside the project (a link to
        // `~/.ssh/id_rsa` would otherwise put a secret in the image).
        let project = ProjectRoots::new(&copied.roots);
        project.check(source, source, &at)?;
        let walker = ignore::WalkBuilder::new(source)
            .standard_filters(false)
            .follow_links(true)
            .overrides(overrides)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for item in walker {
            let entry = match item {
                Ok(entry) => entry,
                Err(error) => {
                    // A link that leads nowhere (or in a circle) gets its own message.
                    if let Some(path) = error_path(&error) {
                        if path.is_symlink() {
                            project.check(path, source, &at)?;
                        }
                    }
                    return Err(InputError::new(
                        format!("{at}cannot read `files` source: {error}"),
                        "check the permissions, and that no link leads to a folder above it",
                    ));
                }
            };
            if entry.path_is_symlink() {
                project.check(entry.path(), source, &at)?;
            }
            let Some(kind) = entry.file_type() else {
                continue;
            };
            if !kind.is_file() {
                continue;
            }
            let path = context_path(copied, entry.path(), &at)?;
            let executable = entry
                .metadata()
                .map(|meta| {
                    std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0
                })
                .unwrap_or(false);
            self.add_file(&path, executable, entry.path().to_path_buf());
        }
        Ok(())
    }

    /// Writes the context's files into `folder` (what `tfimg render -o` produces),
    /// through `confined`: a link someone planted in the output folder is replaced or
    /// refused, never followed.
    pub fn unpack_into(&self, folder: &std::path::Path) -> io::Result<()> {
        let root = super::confined::Confined::open_or_make(folder)?;
        for entry in &self.entries {
            let path = std::path::Path::new(&entry.path);
            let bytes = match &entry.source {
                Source::Folder => {
                    root.make_folders(path, 0o755)?;
                    continue;
                }
                Source::Bytes(bytes) => bytes.to_vec(),
                Source::File(source) => std::fs::read(source).map_err(|error| {
                    io::Error::new(error.kind(), format!("`{}`: {error}", source.display()))
                })?,
            };
            if let Some(parent) = path
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
            {
                root.make_folders(parent, 0o755)?;
            }
            root.write(path, &bytes, entry.mode & 0o777)?;
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the tar to `writer`.
    pub fn write_tar(&self, writer: impl Write) -> io::Result<()> {
        let mut builder = tar::Builder::new(writer);
        for entry in &self.entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(entry.mode);
            header.set_uid(self.owner.0);
            header.set_gid(self.owner.1);
            header.set_mtime(FIXED_MTIME);
            match &entry.source {
                Source::Folder => {
                    header.set_entry_type(tar::EntryType::Directory);
                    header.set_size(0);
                    builder.append_data(&mut header, &entry.path, io::empty())?;
                }
                Source::Bytes(bytes) => {
                    header.set_size(bytes.len() as u64);
                    builder.append_data(&mut header, &entry.path, bytes.as_ref())?;
                }
                Source::File(path) => {
                    let file = std::fs::File::open(path).map_err(|error| {
                        io::Error::new(error.kind(), format!("`{}`: {error}", path.display()))
                    })?;
                    header.set_size(file.metadata()?.len());
                    builder.append_data(&mut header, &entry.path, file)?;
                }
            }
        }
        builder.into_inner()?.flush()
    }

    /// sha256 of the tar, without keeping it in memory.
    pub fn digest(&self) -> io::Result<[u8; 32]> {
        let mut hasher = HashWriter(Sha256::new());
        self.write_tar(&mut hasher)?;
        Ok(hasher.0.finalize().into())
    }

    /// The tar as a stream of chunks, produced on a blocking thread.
    pub fn into_stream(self) -> impl Stream<Item = Result<Bytes, io::Error>> + Send + 'static {
        let (sender, receiver) =
            tokio::sync::mpsc::channel::<Result<Bytes, io::Error>>(CHANNEL_DEPTH);
        tokio::task::spawn_blocking(move || {
            let mut writer = ChunkWriter {
                buffer: Vec::with_capacity(CHUNK),
                sender: sender.clone(),
            };
            let result = self
                .write_tar(&mut writer)
                .and_then(|()| writer.send_buffer());
            if let Err(error) = result {
                // The receiver may be gone already (the daemon hung up): nothing to tell.
                let _ = sender.blocking_send(Err(error));
            }
        });
        futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|item| (item, receiver))
        })
    }
}

/// The entry's ignore patterns (and `.git`) as the walker's overrides.
fn ignore_patterns(
    copied: &CopiedFiles,
    at: &str,
) -> Result<ignore::overrides::Override, InputError> {
    let mut overrides = ignore::overrides::OverrideBuilder::new(&copied.source);
    for pattern in copied.ignore.iter().map(String::as_str).chain([".git/"]) {
        overrides.add(&format!("!{pattern}")).map_err(|error| {
            InputError::new(
                format!("{at}`files` ignore pattern `{pattern}`: {error}"),
                "write gitignore-style patterns such as `*.ckpt` or `data/`",
            )
        })?;
    }
    overrides.build().map_err(|error| {
        InputError::new(
            format!("{at}`files` ignore patterns: {error}"),
            "check the patterns",
        )
    })
}

/// Where a copied file sits in the context: `files/0` for a file entry, `files/0/a/b.py`
/// for one in a folder entry.
fn context_path(copied: &CopiedFiles, path: &Path, at: &str) -> Result<String, InputError> {
    let relative = path.strip_prefix(&copied.source).unwrap_or(path);
    let Some(relative) = relative.to_str() else {
        return Err(InputError::new(
            format!("{at}`{}` has a name that is not UTF-8", path.display()),
            "rename it, or add it to `ignore`",
        ));
    };
    Ok(if relative.is_empty() {
        copied.context_path.clone()
    } else {
        format!("{}/{relative}", copied.context_path)
    })
}

/// The file a walk error is about.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::Loop { child, .. } => Some(child),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

/// The project's folders, links resolved, that copied files must stay inside.
struct ProjectRoots(Vec<PathBuf>);

impl ProjectRoots {
    fn new(roots: &[PathBuf]) -> ProjectRoots {
        ProjectRoots(
            roots
                .iter()
                .filter_map(|root| root.canonicalize().ok())
                .collect(),
        )
    }

    /// Refuses `path` (the `files:` source or a link under it) when, links resolved, it
    /// leaves the project or leads nowhere.
    fn check(&self, path: &Path, source: &Path, at: &str) -> Result<(), InputError> {
        let shown = match path.strip_prefix(source) {
            Ok(relative) if !relative.as_os_str().is_empty() => {
                format!("`{}` in `{}`", relative.display(), source.display())
            }
            _ => format!("`{}`", path.display()),
        };
        let hint =
            "copy the file into the project, or leave the link out with the entry's `ignore`";
        let real = path.canonicalize().map_err(|error| {
            InputError::new(
                format!("{at}`files`: the link {shown} leads nowhere ({error})"),
                hint,
            )
        })?;
        if self.0.iter().any(|root| real.starts_with(root)) {
            return Ok(());
        }
        Err(InputError::new(
            format!(
                "{at}`files`: {shown} leads outside the project, to `{}`",
                real.display()
            ),
            hint,
        ))
    }
}

struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.0.update(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct ChunkWriter {
    buffer: Vec<u8>,
    sender: tokio::sync::mpsc::Sender<Result<Bytes, io::Error>>,
}

impl ChunkWriter {
    fn send_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK));
        self.sender
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the daemon stopped reading the context",
                )
            })
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = CHUNK - self.buffer.len();
        let taken = room.min(data.len());
        self.buffer.extend_from_slice(&data[..taken]);
        if self.buffer.len() == CHUNK {
            self.send_buffer()?;
        }
        Ok(taken)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub mod sync;
pub mod unpack;

#[cfg(test)]
mod tests;
