//! A container's files back on this machine: the tar the engine sends for a path (its
//! top entry named after the path) unpacked into a local folder, as it arrives, on a
//! thread of its own. Only folders and regular files are written; nothing lands outside
//! the destination (no `..`, no absolute path, no local link followed below it, links in
//! the tar skipped with a note); setuid, setgid and sticky bits are dropped; a new or
//! changed file is written to a temporary file and renamed over the old one, so a reader
//! never sees half of it; nothing local is ever deleted.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use bytes::{Buf, Bytes};

use crate::host::Unpacker;

/// Notes kept about skipped entries; the rest are counted.
const MAX_NOTES: usize = 20;

/// Chunks in flight between the download and the unpacking thread.
const CHANNEL_DEPTH: usize = 8;

/// What an unpack wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnpackSummary {
    pub new: usize,
    pub changed: usize,
    pub unchanged: usize,
    /// Entries left out, and why (`out/latest` is a link: skipped).
    pub notes: Vec<String>,
}

impl UnpackSummary {
    pub fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(note);
        } else if self.notes.len() == MAX_NOTES {
            self.notes.push("more entries were skipped".to_string());
        }
    }
}

/// Unpacks the tar from `reader` into `destination`: the top entry's contents go into
/// `destination` (made when missing) when the top is a folder; a single file becomes
/// `destination`, or goes into it when `destination` is a folder.
pub fn unpack(reader: impl Read, destination: &Path) -> io::Result<UnpackSummary> {
    let mut archive = tar::Archive::new(reader);
    let mut summary = UnpackSummary::default();
    let mut top: Option<std::ffi::OsString> = None;
    for entry in archive.entries()? {
        let mut entry = entry?;
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let Some(parts) = clean_parts(&raw) else {
            summary.note(format!("`{shown}` leads out of the folder: skipped"));
            continue;
        };
        let Some((first, rest)) = parts.split_first() else {
            continue;
        };
        if top.get_or_insert_with(|| first.to_os_string()).as_os_str() != *first {
            summary.note(format!("`{shown}` is outside the copied path: skipped"));
            continue;
        }
        let kind = entry.header().entry_type();
        let (base, rest) = match rest {
            [] if !kind.is_dir() && destination.is_dir() => {
                (destination.to_path_buf(), parts.as_slice())
            }
            _ => (destination.to_path_buf(), rest),
        };
        match kind {
            tar::EntryType::Directory => {
                if let Err(note) = folders(&base, rest, true)? {
                    summary.note(note);
                }
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
                let size = entry.header().size()?;
                write_file(
                    &mut entry,
                    (base.as_path(), rest),
                    (mode, size),
                    &mut summary,
                )?;
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            tar::EntryType::Symlink | tar::EntryType::Link => {
                summary.note(format!("`{}` is a link: skipped", display(rest, &shown)));
            }
            _ => summary.note(format!(
                "`{}` is not a file or folder: skipped",
                display(rest, &shown)
            )),
        }
    }
    Ok(summary)
}

/// The path's normal components, or `None` when one is `..` or it is absolute.
fn clean_parts(raw: &[u8]) -> Option<Vec<&OsStr>> {
    let mut parts = Vec::new();
    for component in Path::new(OsStr::from_bytes(raw)).components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts)
}

/// The entry's path below the destination, for notes.
fn display(rest: &[&OsStr], shown: &str) -> String {
    if rest.is_empty() {
        return shown.to_string();
    }
    rest.iter()
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Makes sure `base`/`parts` (without its last part unless `all`) are real folders,
/// making the missing ones: `Ok(Err(note))` when one is a link or a file here, which is
/// never followed or replaced.
fn folders(base: &Path, parts: &[&OsStr], all: bool) -> io::Result<Result<PathBuf, String>> {
    std::fs::create_dir_all(base)?;
    let folders = if all {
        parts
    } else {
        &parts[..parts.len().saturating_sub(1)]
    };
    let mut current = base.to_path_buf();
    for (index, part) in folders.iter().enumerate() {
        current.push(part);
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(metadata) => {
                let what = if metadata.is_symlink() {
                    "a link"
                } else {
                    "a file"
                };
                return Ok(Err(format!(
                    "`{}` is {what} here: not replaced, nothing written through it",
                    display(&folders[..=index], "")
                )));
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => std::fs::create_dir(&current)?,
            Err(error) => return Err(error),
        }
    }
    Ok(Ok(current))
}

/// Writes one regular file through a temporary file beside it, unless its contents are
/// already there.
fn write_file(
    entry: &mut impl Read,
    (base, parts): (&Path, &[&OsStr]),
    (mode, size): (u32, u64),
    summary: &mut UnpackSummary,
) -> io::Result<()> {
    // No parts: the archive is this one file, and `base` is where it goes.
    let path = match parts.last() {
        None => base.to_path_buf(),
        Some(name) => match folders(base, parts, false)? {
            Ok(folder) => folder.join(name),
            Err(note) => {
                summary.note(note);
                return Ok(());
            }
        },
    };
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent)?;
    let existing = match std::fs::symlink_metadata(&path) {
        Ok(metadata) if metadata.is_file() => true,
        Ok(metadata) => {
            let what = if metadata.is_dir() {
                "a folder"
            } else {
                "a link"
            };
            summary.note(format!(
                "`{}` is {what} here: not replaced",
                display(parts, &path.display().to_string())
            ));
            return Ok(());
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => false,
        Err(error) => return Err(error),
    };
    let mut temporary = tempfile::Builder::new()
        .prefix(".tfimg-pull-")
        .tempfile_in(parent)?;
    if io::copy(entry, temporary.as_file_mut())? != size {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the archive ended inside `{}`", path.display()),
        ));
    }
    if existing && same_contents(temporary.path(), &path)? {
        summary.unchanged += 1;
        return Ok(());
    }
    std::fs::set_permissions(temporary.path(), std::fs::Permissions::from_mode(mode))?;
    temporary.persist(&path).map_err(|error| error.error)?;
    if existing {
        summary.changed += 1;
    } else {
        summary.new += 1;
    }
    Ok(())
}

/// Whether two files hold the same bytes.
fn same_contents(first: &Path, second: &Path) -> io::Result<bool> {
    if std::fs::metadata(first)?.len() != std::fs::metadata(second)?.len() {
        return Ok(false);
    }
    let mut first = io::BufReader::new(std::fs::File::open(first)?);
    let mut second = io::BufReader::new(std::fs::File::open(second)?);
    let (mut a, mut b) = (vec![0; 64 * 1024], vec![0; 64 * 1024]);
    loop {
        let read = first.read(&mut a)?;
        if read == 0 {
            return Ok(true);
        }
        second.read_exact(&mut b[..read])?;
        if a[..read] != b[..read] {
            return Ok(false);
        }
    }
}

/// An unpack running on its own thread, fed chunk by chunk.
pub struct TarUnpacker {
    sender: Option<std::sync::mpsc::SyncSender<Bytes>>,
    thread: Option<std::thread::JoinHandle<io::Result<UnpackSummary>>>,
}

/// Starts unpacking into `destination` whatever tar is fed.
pub fn start(destination: PathBuf) -> TarUnpacker {
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Bytes>(CHANNEL_DEPTH);
    let thread = std::thread::spawn(move || {
        let reader = ChannelReader {
            receiver,
            current: Bytes::new(),
        };
        unpack(reader, &destination)
    });
    TarUnpacker {
        sender: Some(sender),
        thread: Some(thread),
    }
}

impl Unpacker for TarUnpacker {
    fn feed(&mut self, chunk: Bytes) -> ControlFlow<()> {
        match self.sender.as_ref().map(|sender| sender.send(chunk)) {
            Some(Ok(())) => ControlFlow::Continue(()),
            // The unpacking ended: the tar is complete, or it failed (`finish` says).
            _ => ControlFlow::Break(()),
        }
    }

    fn finish(mut self: Box<Self>) -> io::Result<UnpackSummary> {
        self.sender = None;
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(io::Error::other("the unpacking thread stopped")),
        }
    }
}

/// The chunks of a channel as one reader; the channel closing is the end.
struct ChannelReader {
    receiver: std::sync::mpsc::Receiver<Bytes>,
    current: Bytes,
}

impl Read for ChannelReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.receiver.recv() {
                Ok(chunk) => self.current = chunk,
                Err(_) => return Ok(0),
            }
        }
        let taken = buffer.len().min(self.current.len());
        buffer[..taken].copy_from_slice(&self.current[..taken]);
        self.current.advance(taken);
        Ok(taken)
    }
}

#[cfg(test)]
mod tests;
