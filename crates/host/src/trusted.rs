//! Trust boundary **another local account → tfimg**: the one check of a folder tfimg keeps
//! its own state in or writes for its user (a sweep's folder and journal, an export's
//! `-o` folder and the gateway's folder in it, a team's `mounts_root` and member folders,
//! tfimg's data folder and its record of where each sweep ran).
//!
//! A shared server has other accounts, and any of them can make a folder where tfimg will
//! look (`/tmp/proj/runs/lr`, `./NAME` in a shared project folder, `<team>.gateway` beside
//! a shared Compose file) before tfimg does, or swap one under it when it can write the
//! folder above. So a folder is used only when nobody but the user running tfimg (and
//! root) could have made or changed what tfimg finds there: every folder on its path,
//! from `/` down, belongs to a trusted account (the user running tfimg, root, and under
//! sudo the user who ran sudo), and none of them can be written by another account:
//! neither by every account nor by a group with other members (a user-private group, whose
//! only member is the folder's owner, is as private as the owner: Debian's OpenSSH takes
//! the same rule for `~/.ssh`). A folder above that others may write is still fine when it
//! is sticky (`/tmp`): others can add names there but neither rename nor remove ours, and
//! the name below it must be ours. A link on the way is followed only when a trusted
//! account made it. Once a path passes, nobody else can change any part of it, so the
//! check does not race with its use; the folder's own contents that a container writes
//! (a trial's folder) are `confined`'s business.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use tfimg_core::input::InputError;

/// The accounts whose folders tfimg trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trusted {
    uids: Vec<u32>,
}

impl Trusted {
    /// The user running tfimg, root, and under sudo (as root) the user who ran sudo.
    pub fn current() -> Trusted {
        let me = rustix::process::geteuid().as_raw();
        let sudo = std::env::var("SUDO_UID")
            .ok()
            .and_then(|uid| uid.trim().parse::<u32>().ok());
        Trusted::of(me, sudo)
    }

    /// `me`, root, and `sudo_uid` when `me` is root.
    pub fn of(me: u32, sudo_uid: Option<u32>) -> Trusted {
        let mut uids = vec![me, 0];
        if me == 0 {
            uids.extend(sudo_uid);
        }
        uids.sort_unstable();
        uids.dedup();
        Trusted { uids }
    }

    /// These and `uid` too: the account tfimg itself gives a folder to (the gateway's
    /// folder belongs to the user nginx runs as).
    pub fn with(mut self, uid: u32) -> Trusted {
        self.uids.push(uid);
        self.uids.sort_unstable();
        self.uids.dedup();
        self
    }

    pub fn holds(&self, uid: u32) -> bool {
        self.uids.contains(&uid)
    }
}

/// Why a folder (or a link on its path) is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// It belongs to another account.
    Owner,
    /// A group with other members can write it.
    GroupWritable { group: String },
    /// Every account can write it.
    OthersWritable,
    /// A link on the way that another account made.
    Link,
}

/// A folder on the way that another account owns or can write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    pub path: PathBuf,
    pub uid: u32,
    /// The owner's name, or its uid when it has none.
    pub owner: String,
    pub mode: u32,
    pub finding: Finding,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        let (owner, uid, mode) = (&self.owner, self.uid, self.mode & 0o7777);
        match &self.finding {
            Finding::Owner => write!(
                formatter,
                "`{path}` belongs to `{owner}` (uid {uid}, mode {mode:04o}), not to you or root"
            ),
            Finding::GroupWritable { group } => write!(
                formatter,
                "`{path}` can be written by the members of group `{group}` (owner `{owner}`, mode {mode:04o})"
            ),
            Finding::OthersWritable => write!(
                formatter,
                "`{path}` can be written by every account (owner `{owner}`, mode {mode:04o})"
            ),
            Finding::Link => write!(
                formatter,
                "`{path}` is a link made by `{owner}` (uid {uid}), not by you or root"
            ),
        }
    }
}

impl std::error::Error for Untrusted {}

impl Untrusted {
    /// The fix, for a `hint:` line.
    pub fn hint(&self) -> String {
        let path = self.path.display();
        match &self.finding {
            Finding::Owner => format!(
                "another account made it, and could change what tfimg finds there; use a folder of your own (one under your home folder), or move `{path}` away if you know why `{}` made it",
                self.owner
            ),
            Finding::GroupWritable { .. } | Finding::OthersWritable => format!(
                "make it yours alone with `chmod go-w {path}`, or use a folder under your home folder"
            ),
            Finding::Link => format!(
                "another account made the link, and chooses where it leads; remove it (`rm {path}`) or use another folder"
            ),
        }
    }

    /// The refusal as bad input (exit 1): `what` the folder was to be used for.
    pub fn refused(&self, what: &str) -> InputError {
        InputError::new(
            format!("{self}: tfimg uses {what} only where no other account can change it"),
            self.hint(),
        )
    }
}

/// An error from a trusted folder's use (`Host::data_dir`, `Host::trusted_folder`) as
/// the user reads it: a refusal is bad input with its fix; anything else says what
/// could not be done with `path`.
pub fn explained(error: TrustError, what: &str, path: &Path) -> InputError {
    match error {
        TrustError::Untrusted(untrusted) => untrusted.refused(what),
        TrustError::Io(error) => match untrusted_in(&error) {
            Some(untrusted) => untrusted.refused(what),
            None => InputError::new(
                format!("cannot use `{}` as {what}: {error}", path.display()),
                "check the folder's permissions, or choose another folder",
            ),
        },
    }
}

/// What the check found: an untrusted folder, or the path could not be walked (missing,
/// not a folder, unreadable).
#[derive(Debug)]
pub enum TrustError {
    Untrusted(Untrusted),
    Io(std::io::Error),
}

impl std::fmt::Display for TrustError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrustError::Untrusted(untrusted) => untrusted.fmt(formatter),
            TrustError::Io(error) => error.fmt(formatter),
        }
    }
}

impl std::error::Error for TrustError {}

impl From<std::io::Error> for TrustError {
    fn from(error: std::io::Error) -> TrustError {
        TrustError::Io(error)
    }
}

impl From<Untrusted> for TrustError {
    fn from(untrusted: Untrusted) -> TrustError {
        TrustError::Untrusted(untrusted)
    }
}

impl From<TrustError> for std::io::Error {
    fn from(error: TrustError) -> std::io::Error {
        match error {
            TrustError::Io(error) => error,
            TrustError::Untrusted(untrusted) => {
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, untrusted)
            }
        }
    }
}

/// The refusal inside `error`, when it is one.
pub fn untrusted_in(error: &std::io::Error) -> Option<&Untrusted> {
    error.get_ref()?.downcast_ref::<Untrusted>()
}

/// Links followed on one path before it counts as a loop (as the kernel's 40).
const MAX_LINKS: usize = 40;

/// Checks the folder `path` (relative to the current folder) and every folder above it.
pub fn check(path: &Path, trusted: &Trusted) -> Result<(), TrustError> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut pending: VecDeque<OsString> = parts(&absolute);
    let mut current = PathBuf::from("/");
    check_folder(
        &current,
        &std::fs::symlink_metadata(&current)?,
        trusted,
        pending.is_empty(),
    )?;
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            // `current` was reached without links and checked: its parent was too.
            current.pop();
            continue;
        }
        let next = current.join(&part);
        let metadata = std::fs::symlink_metadata(&next)?;
        if metadata.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Err(std::io::Error::from_raw_os_error(libc::ELOOP).into());
            }
            if !trusted.holds(metadata.uid()) {
                return Err(found(&next, &metadata, Finding::Link).into());
            }
            let target = std::fs::read_link(&next)?;
            if target.is_absolute() {
                current = PathBuf::from("/");
            }
            for part in parts(&target).into_iter().rev() {
                pending.push_front(part);
            }
            continue;
        }
        if !metadata.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("`{}` is not a folder", next.display()),
            )
            .into());
        }
        check_folder(&next, &metadata, trusted, pending.is_empty())?;
        current = next;
    }
    Ok(())
}

/// `path` made real (its links resolved), and the folders from it up to `/` that no other
/// account can enter: a trusted account owns each, and neither every account nor a group
/// with another member may search it. A file below such a folder is out of every other
/// account's reach, whatever its own mode says (a setuid bit included).
pub fn closed_folders(path: &Path, trusted: &Trusted) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
    let real = std::fs::canonicalize(path)?;
    let closed = real
        .ancestors()
        .filter(|folder| {
            std::fs::metadata(folder).is_ok_and(|metadata| {
                let mode = metadata.mode();
                trusted.holds(metadata.uid())
                    && mode & 0o001 == 0
                    && (mode & 0o010 == 0 || private_group(metadata.gid(), metadata.uid()))
            })
        })
        .map(Path::to_path_buf)
        .collect();
    Ok((real, closed))
}

/// The folder `path` (with its missing parents, made with `mode` less the umask), then
/// checked: a folder someone else made first on the way is refused.
pub fn make_and_check(path: &Path, mode: u32, trusted: &Trusted) -> Result<(), TrustError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(path)?;
    check(path, trusted)
}

/// The plain parts of `path`, `..` kept (resolved as the walk reaches it).
fn parts(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(part) => Some(part.to_os_string()),
            Component::ParentDir => Some(OsStr::new("..").to_os_string()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// One folder of the path: a trusted owner, and nobody else may write it (a sticky folder
/// above the last is fine: the name below it is checked in turn).
fn check_folder(
    path: &Path,
    metadata: &std::fs::Metadata,
    trusted: &Trusted,
    last: bool,
) -> Result<(), Untrusted> {
    if !trusted.holds(metadata.uid()) {
        return Err(found(path, metadata, Finding::Owner));
    }
    let mode = metadata.mode();
    let sticky_above = !last && mode & 0o1000 != 0;
    if mode & 0o002 != 0 && !sticky_above {
        return Err(found(path, metadata, Finding::OthersWritable));
    }
    if mode & 0o020 != 0 && !sticky_above && !private_group(metadata.gid(), metadata.uid()) {
        let group = group_name(metadata.gid()).unwrap_or_else(|| metadata.gid().to_string());
        return Err(found(path, metadata, Finding::GroupWritable { group }));
    }
    Ok(())
}

fn found(path: &Path, metadata: &std::fs::Metadata, finding: Finding) -> Untrusted {
    let uid = metadata.uid();
    Untrusted {
        path: path.to_path_buf(),
        uid,
        owner: user_name(uid).unwrap_or_else(|| uid.to_string()),
        mode: metadata.mode() & 0o7777,
        finding,
    }
}

/// Whether `gid` is `uid`'s own group: its primary group, with no member but it.
fn private_group(gid: u32, uid: u32) -> bool {
    let Some(user) = user_entry(uid) else {
        return false;
    };
    user.gid.as_raw() == gid
        && group_entry(gid).is_some_and(|group| group.mem.iter().all(|member| *member == user.name))
}

/// The name of account `uid`, from the system's user database.
pub fn user_name(uid: u32) -> Option<String> {
    user_entry(uid).map(|user| user.name)
}

fn group_name(gid: u32) -> Option<String> {
    group_entry(gid).map(|group| group.name)
}

/// The system's user database (through NSS: LDAP accounts too).
fn user_entry(uid: u32) -> Option<nix::unistd::User> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)).ok()?
}

fn group_entry(gid: u32) -> Option<nix::unistd::Group> {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid)).ok()?
}

#[cfg(test)]
mod tests;
