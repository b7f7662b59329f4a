//! Trust boundary **container → host** (and another user → this one): the one mechanism
//! for host-side file work inside a folder that a less trusted side can write.
//!
//! | folder                                   | who else writes it           |
//! | ---------------------------------------- | ---------------------------- |
//! | a sweep trial's folder (`runs/S/T/`)     | the trial's container        |
//! | a team's `mounts_root` and member folders | the members, other host users |
//! | an export's output folder (`compose -o`) | other host users             |
//! | a `--sync-back` / `pull-files` target    | the container's tar          |
//!
//! The other side controls every name inside the folder: it can put a link (to
//! `/etc/cron.d/x`, to `/dev/zero`), a FIFO, a device node or a huge file where tfimg
//! expects its own file, and swap one for another at any moment. A check before an open
//! (`symlink_metadata`, then `open`) loses that race, so there is none here: the folder is
//! opened once as a directory handle (cap-std's `Dir`, which uses `openat2` with
//! `RESOLVE_BENEATH` where the kernel has it), every name below it is resolved relative to
//! that handle one component at a time, and no component is ever a followed link
//! (`O_NOFOLLOW`). Files are read only when the opened descriptor is a regular file
//! (opened non-blocking, so a FIFO cannot hang tfimg) and never past a size bound; files
//! are written to a new name and renamed over the old one (a rename replaces a link, it
//! does not write through it); ownership and modes are changed on descriptors or with
//! `AT_SYMLINK_NOFOLLOW`. The folder itself (the root) is trusted: tfimg or its user chose
//! it, and links in its own path are followed as the user would expect.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, DirBuilderExt, File, OpenOptions, OpenOptionsExt};

/// A folder opened as a handle; every path given to its methods is relative to it.
#[derive(Debug)]
pub struct Confined {
    dir: Dir,
    /// Where it is, for messages.
    path: PathBuf,
    /// Who the files and folders tfimg makes here are given to (`owned_by_folder`).
    owner: Option<(u32, u32)>,
}

/// What a name in a confined folder is, as seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
    Link,
    /// A FIFO, socket or device.
    Other,
}

impl Kind {
    /// `a link`, `a folder`, ... for messages.
    pub fn described(self) -> &'static str {
        match self {
            Kind::File => "a file",
            Kind::Folder => "a folder",
            Kind::Link => "a link",
            Kind::Other => "not a regular file",
        }
    }
}

/// A name that is not what tfimg works with there: a link (never followed), or something
/// other than the folder or regular file it needed. Carried inside the `io::Error` (kind
/// `InvalidData`); `refused` finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub path: PathBuf,
    pub found: Kind,
    /// Whether a folder (else a regular file) was needed there.
    pub wanted_folder: bool,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match (self.found, self.wanted_folder) {
            (Kind::Link, _) => write!(formatter, "`{path}` is a link: not followed"),
            (found, true) => write!(formatter, "`{path}` is {}, not a folder", found.described()),
            (found, false) => write!(
                formatter,
                "`{path}` is {}: not read or written",
                found.described()
            ),
        }
    }
}

impl std::error::Error for Refused {}

/// The refusal inside `error`, when it is one.
pub fn refused(error: &io::Error) -> Option<&Refused> {
    error.get_ref()?.downcast_ref::<Refused>()
}

/// A file read with a bound: its first bytes, and whether more was there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    pub bytes: Vec<u8>,
    pub cut: bool,
}

impl Confined {
    /// Opens the folder `root` (it must exist).
    pub fn open(root: &Path) -> io::Result<Confined> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(Confined {
            dir,
            path: root.to_path_buf(),
            owner: None,
        })
    }

    /// Opens the folder `root`, made first (with the folders above it) when missing.
    pub fn open_or_make(root: &Path) -> io::Result<Confined> {
        std::fs::create_dir_all(root)?;
        Confined::open(root)
    }

    /// From now on the files and folders made here (and below) are given to this folder's
    /// owner when that is not tfimg's user and tfimg may give files away (it runs as
    /// root): a trial's folder and a sync-back destination belong to the user the
    /// container runs as, and so does what tfimg writes into them.
    pub fn owned_by_folder(mut self) -> io::Result<Confined> {
        use cap_std::fs::MetadataExt;
        let metadata = self.dir.dir_metadata()?;
        let owner = (metadata.uid(), metadata.gid());
        let me = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        self.owner = (me.0 == 0 && owner != me).then_some(owner);
        Ok(self)
    }

    fn duplicate(&self) -> io::Result<Confined> {
        Ok(Confined {
            dir: self.dir.try_clone()?,
            path: self.path.clone(),
            owner: self.owner,
        })
    }

    /// Gives what tfimg just made to the folder's owner (see `owned_by_folder`).
    fn give(&self, made: &impl std::os::fd::AsFd) -> io::Result<()> {
        match self.owner {
            Some((uid, gid)) => std::os::unix::fs::fchown(made, Some(uid), Some(gid)),
            None => Ok(()),
        }
    }

    /// Where this folder is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder `name` below this one; a link anywhere on the way is refused.
    pub fn folder(&self, name: &Path) -> io::Result<Confined> {
        self.walk(&parts(name)?)
    }

    /// The folder `parts` below this one, one component at a time, none of them a link.
    fn walk(&self, parts: &[&OsStr]) -> io::Result<Confined> {
        let mut current = self.duplicate()?;
        for part in parts {
            current = current.child_folder(part)?;
        }
        Ok(current)
    }

    /// The folder `name` below this one, its missing parts made with `mode` (before the
    /// umask); a link or a file anywhere on the way is refused, never replaced.
    pub fn make_folders(&self, name: &Path, mode: u32) -> io::Result<Confined> {
        let parts = parts(name)?;
        let mut current = self.duplicate()?;
        for part in parts {
            let mut builder = cap_std::fs::DirBuilder::new();
            builder.mode(mode);
            let made = match current.dir.create_dir_with(part, &builder) {
                Ok(()) => true,
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => false,
                Err(error) => return Err(current.explained(part, error, true)),
            };
            current = current.child_folder(part)?;
            if made && current.owner.is_some() {
                current.give(&current.readable()?)?;
            }
        }
        Ok(current)
    }

    fn child_folder(&self, part: &OsStr) -> io::Result<Confined> {
        match self.dir.open_dir_nofollow(part) {
            Ok(dir) => Ok(Confined {
                dir,
                path: self.path.join(part),
                owner: self.owner,
            }),
            Err(error) => Err(self.explained(part, error, true)),
        }
    }

    /// What `name` is, without following it; `None` when nothing is there.
    pub fn kind(&self, name: &Path) -> io::Result<Option<Kind>> {
        let (folder, last) = self.parent_of(name)?;
        match folder.dir.symlink_metadata(last) {
            Ok(metadata) => Ok(Some(kind_of(&metadata.file_type()))),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The regular file `name`, opened to read (a link, FIFO, device or folder refused).
    pub fn open_file(&self, name: &Path) -> io::Result<std::fs::File> {
        let mut options = OpenOptions::new();
        options.read(true);
        Ok(self.open_regular(name, &mut options)?.1)
    }

    /// The regular file `name` opened with `options`, never through a link and without
    /// blocking (a FIFO or device is refused once opened); the folder it is in.
    fn open_regular(
        &self,
        name: &Path,
        options: &mut OpenOptions,
    ) -> io::Result<(Confined, std::fs::File)> {
        let (folder, last) = self.parent_of(name)?;
        options
            .follow(FollowSymlinks::No)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        let file = folder
            .dir
            .open_with(last, options)
            .map_err(|error| folder.explained(last, error, false))?;
        let file = folder.regular(last, file)?;
        Ok((folder, file))
    }

    /// At most `limit` bytes of the regular file `name`, from `offset` (a file that grows
    /// is read on from where the last read ended).
    pub fn read(&self, name: &Path, offset: u64, limit: u64) -> io::Result<Bounded> {
        let mut file = self.open_file(name)?;
        if offset > 0 {
            io::Seek::seek(&mut file, io::SeekFrom::Start(offset))?;
        }
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
        let cut = bytes.len() as u64 > limit;
        bytes.truncate(limit as usize);
        Ok(Bounded { bytes, cut })
    }

    /// Writes the file `name` whole, made with `mode` (less the umask): a new file beside
    /// it, synced, renamed over whatever was there (a link is replaced, never written
    /// through; a reader never sees half of it).
    pub fn write(&self, name: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        let (folder, last) = self.parent_of(name)?;
        let (temporary, mut file) = folder.new_file(last, mode)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .and_then(|()| folder.dir.rename(&temporary, &folder.dir, last));
        if written.is_err() {
            let _ = folder.dir.remove_file(&temporary);
        }
        written.map_err(|error| folder.explained(last, error, false))
    }

    /// Appends to the regular file `name` (made, 0644 before the umask, when missing);
    /// `durable`: on the disk before it returns.
    pub fn append(&self, name: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
        let mut options = OpenOptions::new();
        options.append(true).create(true).mode(0o644);
        let (folder, mut file) = self.open_regular(name, &mut options)?;
        if folder.owner.is_some() && file.metadata()?.len() == 0 {
            folder.give(&file)?;
        }
        file.write_all(bytes)?;
        if durable {
            file.sync_data()?;
        }
        Ok(())
    }

    /// A new, empty file beside `name` under a name no one else can know (`O_EXCL`, mode
    /// `mode`, given to the folder's owner with `owned_by_folder`), to be renamed over
    /// `name` with `replace`.
    pub fn new_file(&self, name: &OsStr, mode: u32) -> io::Result<(OsString, std::fs::File)> {
        for _ in 0..8 {
            let mut temporary = OsString::from(".");
            temporary.push(name);
            temporary.push(format!(".tfimg-{}", super::random::random_hex(8)?));
            let mut options = OpenOptions::new();
            options
                .read(true)
                .write(true)
                .create_new(true)
                .follow(FollowSymlinks::No)
                .mode(mode);
            match self.dir.open_with(&temporary, &options) {
                Ok(file) => {
                    let file = file.into_std();
                    self.give(&file)?;
                    return Ok((temporary, file));
                }
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(self.explained(name, error, false)),
            }
        }
        Err(io::Error::other("no free temporary name"))
    }

    /// Renames `from` over `to`, both in this folder (a link at `to` is replaced).
    pub fn replace(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        self.dir.rename(from, &self.dir, to)
    }

    /// Removes the file (or link: it is not followed) `name`; one that is gone is fine.
    pub fn remove_file(&self, name: &Path) -> io::Result<()> {
        let (folder, last) = self.parent_of(name)?;
        match folder.dir.remove_file_or_symlink(last) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// This folder's entries and what each is (unfollowed), sorted by name.
    pub fn entries(&self) -> io::Result<Vec<(OsString, Kind)>> {
        let mut found = Vec::new();
        for entry in self.dir.entries()? {
            let entry = entry?;
            found.push((entry.file_name(), kind_of(&entry.file_type()?)));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }

    /// Gives this folder to `uid:gid` (on its handle).
    pub fn set_owner(&self, uid: u32, gid: u32) -> io::Result<()> {
        std::os::unix::fs::fchown(self.readable()?, Some(uid), Some(gid))
    }

    /// Sets this folder's mode (on its handle).
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        rustix::fs::fchmod(self.readable()?, rustix::fs::Mode::from_raw_mode(mode))
            .map_err(io::Error::from)
    }

    /// This folder opened again for reading: cap-std's handles are `O_PATH`, on which
    /// `fchown` and `fchmod` fail. `.` relative to the handle is the same folder, whatever
    /// has happened to its path since.
    fn readable(&self) -> io::Result<std::os::fd::OwnedFd> {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::openat(
            &self.dir,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)
    }

    /// Gives the entry `name` to `uid:gid`; a link there is re-owned itself, never what it
    /// points at.
    pub fn set_owner_of(&self, name: &Path, uid: u32, gid: u32) -> io::Result<()> {
        let (folder, last) = self.parent_of(name)?;
        rustix::fs::chownat(
            &folder.dir,
            last,
            Some(rustix::fs::Uid::from_raw(uid)),
            Some(rustix::fs::Gid::from_raw(gid)),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .map_err(io::Error::from)
    }

    /// The folder holding `name` (reached without following a link) and its last part.
    fn parent_of<'n>(&self, name: &'n Path) -> io::Result<(Confined, &'n OsStr)> {
        let parts = parts(name)?;
        let Some((last, above)) = parts.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{}` names no file", name.display()),
            ));
        };
        Ok((self.walk(above)?, last))
    }

    /// `file`, when it is a regular file.
    fn regular(&self, name: &OsStr, file: File) -> io::Result<std::fs::File> {
        let file = file.into_std();
        let found = kind_of_std(&file.metadata()?.file_type());
        if found != Kind::File {
            return Err(self.refusal(name, found, false));
        }
        Ok(file)
    }

    fn refusal(&self, name: &OsStr, found: Kind, wanted_folder: bool) -> io::Error {
        let refused = Refused {
            path: self.path.join(name),
            found,
            wanted_folder,
        };
        io::Error::new(io::ErrorKind::InvalidData, refused)
    }

    /// An error about `name` that says when a link (or a non-folder) was in the way.
    fn explained(&self, name: &OsStr, error: io::Error, wanted_folder: bool) -> io::Error {
        let found = self
            .dir
            .symlink_metadata(name)
            .ok()
            .map(|metadata| kind_of(&metadata.file_type()));
        match (error.raw_os_error(), found) {
            (Some(libc::ELOOP | libc::ENOTDIR | libc::EMLINK), Some(Kind::Link)) => {
                self.refusal(name, Kind::Link, wanted_folder)
            }
            (Some(libc::ENOTDIR | libc::EEXIST), Some(found))
                if wanted_folder && found != Kind::Folder =>
            {
                self.refusal(name, found, true)
            }
            _ => io::Error::new(
                error.kind(),
                format!("`{}`: {error}", self.path.join(name).display()),
            ),
        }
    }
}

/// The plain parts of a relative name: `..`, an absolute path or an empty one is refused.
fn parts(name: &Path) -> io::Result<Vec<&OsStr>> {
    let mut parts = Vec::new();
    for component in name.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("`{}` leads out of the folder", name.display()),
                ))
            }
        }
    }
    Ok(parts)
}

fn kind_of(file_type: &cap_std::fs::FileType) -> Kind {
    kind(
        file_type.is_symlink(),
        file_type.is_dir(),
        file_type.is_file(),
    )
}

fn kind_of_std(file_type: &std::fs::FileType) -> Kind {
    kind(
        file_type.is_symlink(),
        file_type.is_dir(),
        file_type.is_file(),
    )
}

fn kind(link: bool, folder: bool, file: bool) -> Kind {
    match (link, folder, file) {
        (true, _, _) => Kind::Link,
        (_, true, _) => Kind::Folder,
        (_, _, true) => Kind::File,
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests;
