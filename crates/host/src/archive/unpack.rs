//! A container's files back on this machine: the tar the engine sends for a path (its
//! top entry named after the path) unpacked into a local folder, as it arrives, on a
//! thread of its own.
//!
//! Trust boundary **container → host**: the container chose every name, kind, mode and
//! size in the tar. All writing goes through `host::confined` (the one mechanism): the
//! destination is opened as a handle and nothing below it is reached through a link, so
//! nothing lands outside it (no `..`, no absolute path, no local link followed, links in
//! the tar skipped with a note; a hard link gets its own copy of the file it names).
//! Only folders and regular files are written; modes keep only the permission bits, the
//! owner's read and write always, less the user's umask (a container cannot make a file
//! 0777 or 000 here); runs of zeros become holes, so a sparse file stays sparse; the
//! unpack stops before the disk is left with less than `RESERVE_BYTES` free. A new or
//! changed file is written to a temporary file and renamed over the old one, so a reader
//! never sees half of it; nothing local is ever deleted. Names from the tar are shown
//! with control characters escaped.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use bytes::{Buf, Bytes};

use crate::confined::{self, Confined, Kind};
use crate::Unpacker;

/// Names from the tar as they may be printed (terminal escapes, new lines escaped).
fn printable(text: &str) -> String {
    tfimg_core::input::printable(text).into_owned()
}

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

/// The free space an unpack always leaves on the destination's file system.
pub const RESERVE_BYTES: u64 = 1 << 30;

/// How often (in bytes written) the free space is looked at again within a file.
const SPACE_CHECK_BYTES: u64 = 64 << 20;

/// Free bytes on the file system holding a path (statvfs), for the space check.
pub type FreeSpace = dyn Fn(&Path) -> Option<u64> + Send;

/// Unpacks the tar from `reader` into `destination`: the top entry's contents go into
/// `destination` (made when missing) when the top is a folder; a single file becomes
/// `destination`, or goes into it when `destination` is a folder.
pub fn unpack(reader: impl Read, destination: &Path) -> io::Result<UnpackSummary> {
    unpack_with(reader, destination, &crate::free_bytes)
}

/// `unpack`, with the free space read by `free`.
pub fn unpack_with(
    reader: impl Read,
    destination: &Path,
    free: &FreeSpace,
) -> io::Result<UnpackSummary> {
    let mut archive = tar::Archive::new(reader);
    let mut unpacking = Unpacking {
        destination,
        root: None,
        summary: UnpackSummary::default(),
        written: std::collections::HashMap::new(),
        free,
    };
    let mut top: Option<std::ffi::OsString> = None;
    // The engine's tar of `/` names its entries from the root (`/`, `/bin`, ...): then
    // they are taken below the destination without their leading `/`.
    let mut rooted: Option<bool> = None;
    for entry in archive.entries()? {
        let mut entry = entry?;
        let raw = entry.path_bytes().into_owned();
        let shown = printable(&String::from_utf8_lossy(&raw));
        let rooted = *rooted.get_or_insert(raw.as_slice() == b"/");
        let Some(parts) = tar_parts(&raw, rooted) else {
            unpacking
                .summary
                .note(format!("`{shown}` leads out of the folder: skipped"));
            continue;
        };
        let rest = match (rooted, parts.split_first()) {
            (true, _) => parts.as_slice(),
            (false, Some((first, rest))) => {
                if top.get_or_insert_with(|| first.to_os_string()).as_os_str() != *first {
                    unpacking
                        .summary
                        .note(format!("`{shown}` is outside the copied path: skipped"));
                    continue;
                }
                rest
            }
            (false, None) => continue,
        };
        let kind = entry.header().entry_type();
        let single_name = unpacking.root(rest.is_empty() && !kind.is_dir())?.1.clone();
        // A single file that becomes `destination` is named by the destination itself.
        let target: Vec<&OsStr> = match (rest.is_empty(), &single_name) {
            (true, Some(name)) => vec![name.as_os_str()],
            (true, None) if !kind.is_dir() => parts.clone(),
            _ => rest.to_vec(),
        };
        match kind {
            tar::EntryType::Directory => {
                if !target.is_empty() {
                    if let Err(error) = unpacking.folder_of(&target, true) {
                        unpacking.skipped(error)?;
                    }
                }
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mode = entry.header().mode().unwrap_or(0o644);
                let size = entry.header().size()?;
                if unpacking.file(&mut entry, &target, mode, size)? {
                    let from: PathBuf = parts.iter().collect();
                    unpacking.written.insert(from, target.iter().collect());
                }
            }
            tar::EntryType::Link => {
                let linked = entry
                    .link_name_bytes()
                    .map(|name| name.into_owned())
                    .unwrap_or_default();
                unpacking.hard_link(&linked, rooted, &target, &shown)?;
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            tar::EntryType::Symlink => {
                unpacking
                    .summary
                    .note(format!("`{}` is a link: skipped", display(&target, &shown)));
            }
            _ => unpacking.summary.note(format!(
                "`{}` is not a file or folder: skipped",
                display(&target, &shown)
            )),
        }
    }
    Ok(unpacking.summary)
}

/// One unpack under way.
struct Unpacking<'a> {
    destination: &'a Path,
    /// The folder written into, opened once (and, when the tar is one file that becomes
    /// `destination`, the name it takes there).
    root: Option<(Confined, Option<std::ffi::OsString>)>,
    summary: UnpackSummary,
    /// Each regular file's path in the tar and where it was written below the root, for
    /// the hard links that name it.
    written: std::collections::HashMap<PathBuf, PathBuf>,
    free: &'a FreeSpace,
}

impl Unpacking<'_> {
    /// The root, opened on first use: `destination` (made when missing), or its parent
    /// when the tar is a single file (`single`) and `destination` is not a folder.
    fn root(&mut self, single: bool) -> io::Result<&(Confined, Option<std::ffi::OsString>)> {
        if self.root.is_none() {
            let opened = match (single, self.destination.is_dir()) {
                (true, false) => {
                    let parent = match self.destination.parent() {
                        Some(parent) if !parent.as_os_str().is_empty() => parent,
                        _ => Path::new("."),
                    };
                    let name = self.destination.file_name().ok_or_else(|| {
                        io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("`{}` names no file", self.destination.display()),
                        )
                    })?;
                    (
                        Confined::open_or_make(parent)?.owned_by_folder()?,
                        Some(name.to_os_string()),
                    )
                }
                _ => (
                    Confined::open_or_make(self.destination)?.owned_by_folder()?,
                    None,
                ),
            };
            self.root = Some(opened);
        }
        Ok(self.root.as_ref().expect("opened above"))
    }

    /// The folder `parts` (all of them with `all`, else all but the last) below the root,
    /// made when missing; an error when a link or file is in the way.
    fn folder_of(&mut self, parts: &[&OsStr], all: bool) -> io::Result<Confined> {
        let folders = if all {
            parts
        } else {
            &parts[..parts.len().saturating_sub(1)]
        };
        let path: PathBuf = folders.iter().collect();
        self.root(false)?.0.make_folders(&path, 0o777)
    }

    /// A hard link names an earlier entry (`linked`): `target` gets its own copy of the
    /// file that entry wrote, or a note when none was written.
    fn hard_link(
        &mut self,
        linked: &[u8],
        rooted: bool,
        target: &[&OsStr],
        shown: &str,
    ) -> io::Result<()> {
        // A link's name in the tar of `/` may also come without its leading `/`.
        let earlier = tar_parts(linked, rooted)
            .or_else(|| clean_parts(linked))
            .and_then(|parts| {
                self.written
                    .get(&parts.iter().collect::<PathBuf>())
                    .cloned()
            });
        let opened = earlier.map(|earlier| self.root(false)?.0.open_file(&earlier));
        let Some(Ok(file)) = opened else {
            self.summary.note(format!(
                "`{}` is a hard link to `{}`, which was not copied: skipped",
                display(target, shown),
                printable(&String::from_utf8_lossy(linked))
            ));
            return Ok(());
        };
        let metadata = file.metadata()?;
        let mode = std::os::unix::fs::MetadataExt::mode(&metadata);
        self.file(&mut io::BufReader::new(file), target, mode, metadata.len())?;
        Ok(())
    }

    /// A link or file in the way becomes a note; any other error stops the unpack.
    fn skipped(&mut self, error: io::Error) -> io::Result<()> {
        let Some(refused) = confined::refused(&error) else {
            return Err(error);
        };
        let root = self.root(false)?.0.path().to_path_buf();
        let below = refused.path.strip_prefix(&root).unwrap_or(&refused.path);
        let what = match refused.found {
            Kind::Link => "a link",
            Kind::File => "a file",
            _ => "not a folder",
        };
        let note = format!(
            "`{}` is {what} here: not replaced, nothing written through it",
            printable(&below.display().to_string())
        );
        self.summary.note(note);
        Ok(())
    }

    /// Writes one regular file of `size` bytes from `entry` at `parts` through a
    /// temporary file beside it, unless its contents are already there.
    fn file(
        &mut self,
        entry: &mut impl Read,
        parts: &[&OsStr],
        mode: u32,
        size: u64,
    ) -> io::Result<bool> {
        let Some(name) = parts.last().copied() else {
            return Ok(false);
        };
        let folder = match self.folder_of(parts, false) {
            Ok(folder) => folder,
            Err(error) => return self.skipped(error).map(|()| false),
        };
        let shown = display(parts, "");
        let existing = match folder.kind(Path::new(name))? {
            None => false,
            Some(Kind::File) => true,
            Some(kind) => {
                let what = kind.described();
                self.summary
                    .note(format!("`{shown}` is {what} here: not replaced"));
                return Ok(false);
            }
        };
        self.check_space(folder.path(), &shown)?;
        // The owner may always read and write the file; the umask applies (by the kernel,
        // to the mode the file is made with); setuid, setgid and sticky never come along.
        let (temporary, mut file) = folder.new_file(name, (mode & 0o777) | 0o600)?;
        let written = self.copy_sparse(entry, &mut file, size, folder.path(), &shown);
        let outcome = written.and_then(|()| {
            if existing && same_contents(&mut file, &folder.open_file(Path::new(name))?)? {
                return Ok(false);
            }
            file.sync_all()?;
            folder.replace(&temporary, name)?;
            Ok(true)
        });
        match outcome {
            Ok(true) if existing => self.summary.changed += 1,
            Ok(true) => self.summary.new += 1,
            Ok(false) => {
                let _ = folder.remove_file(Path::new(&temporary));
                self.summary.unchanged += 1;
            }
            Err(error) => {
                let _ = folder.remove_file(Path::new(&temporary));
                return Err(error);
            }
        }
        Ok(true)
    }

    /// Copies exactly `size` bytes, seeking over blocks of zeros (a hole) instead of
    /// writing them, and looking at the free space as it goes.
    fn copy_sparse(
        &self,
        entry: &mut impl Read,
        file: &mut std::fs::File,
        size: u64,
        folder: &Path,
        shown: &str,
    ) -> io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        let mut buffer = vec![0u8; BLOCK_BYTES];
        let (mut copied, mut since_check) = (0u64, 0u64);
        while copied < size {
            let want = (size - copied).min(BLOCK_BYTES as u64) as usize;
            entry.read_exact(&mut buffer[..want]).map_err(|error| {
                if error.kind() == io::ErrorKind::UnexpectedEof {
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the archive ended inside `{shown}`"),
                    )
                } else {
                    error
                }
            })?;
            if buffer[..want].iter().all(|&byte| byte == 0) {
                file.seek(SeekFrom::Current(want as i64))?;
            } else {
                file.write_all(&buffer[..want])?;
                since_check += want as u64;
                if since_check >= SPACE_CHECK_BYTES {
                    since_check = 0;
                    self.check_space(folder, shown)?;
                }
            }
            copied += want as u64;
        }
        // A file that ends in a hole still has its length.
        file.set_len(size)?;
        Ok(())
    }

    /// Stops the unpack when the file system holding `folder` is down to its reserve.
    fn check_space(&self, folder: &Path, shown: &str) -> io::Result<()> {
        match (self.free)(folder) {
            Some(free) if free < RESERVE_BYTES => Err(io::Error::new(
                io::ErrorKind::StorageFull,
                format!(
                    "stopped at `{shown}`: the disk holding `{}` has {} MiB free, and an unpack always leaves {} MiB",
                    folder.display(),
                    free >> 20,
                    RESERVE_BYTES >> 20
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// Bytes read and written at a time; a block of zeros this long becomes a hole.
const BLOCK_BYTES: usize = 64 * 1024;

/// An entry's (or a hard link's) path in the tar as its parts: below the root when the
/// tar is of `/` (`rooted`: its names start with `/`); `None` when it leads out.
fn tar_parts(raw: &[u8], rooted: bool) -> Option<Vec<&OsStr>> {
    match rooted {
        true => raw.strip_prefix(b"/").and_then(clean_parts),
        false => clean_parts(raw),
    }
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

/// The entry's path below the destination, for notes (control characters escaped).
fn display(rest: &[&OsStr], shown: &str) -> String {
    if rest.is_empty() {
        return shown.to_string();
    }
    printable(
        &rest
            .iter()
            .map(|part| part.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Whether the file just written (`first`, read from its start) holds `second`'s bytes.
fn same_contents(first: &mut std::fs::File, second: &std::fs::File) -> io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    if first.metadata()?.len() != second.metadata()?.len() {
        return Ok(false);
    }
    first.seek(SeekFrom::Start(0))?;
    let mut first = io::BufReader::new(first);
    let mut second = io::BufReader::new(second);
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
