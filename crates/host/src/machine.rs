//! This machine, read and written directly: who we run as, free ports, random bytes,
//! tfimg's data folder, programs on PATH, mounts, free space, private files, mount
//! folders, locks, signals.

/// The real uid and gid of this process, from /proc (no libc call needed).
pub fn current_ids() -> Option<(u32, u32)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u32> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("Uid:")?, field("Gid:")?))
}

/// Whether an executable is on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|folder| {
            let candidate = folder.join(program);
            candidate.is_file()
                && std::fs::metadata(&candidate)
                    .map(|meta| {
                        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0
                    })
                    .unwrap_or(false)
        })
    })
}

/// Mount points at or below `folder`, deepest first (from /proc/self/mounts).
pub fn mounts_below(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return Vec::new();
    };
    let mut found: Vec<std::path::PathBuf> = mounts
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .map(|target| std::path::PathBuf::from(target.replace("\\040", " ")))
        .filter(|target| target.starts_with(folder))
        .collect();
    found.sort_by_key(|path| std::cmp::Reverse(path.components().count()));
    found
}

/// Whether `ip:port` can be bound right now (TCP).
pub fn port_is_free(ip: &str, port: u16) -> bool {
    std::net::TcpListener::bind((ip, port)).is_ok()
}

/// A port the kernel hands out as free on `ip`.
pub fn any_free_port(ip: &str) -> Option<u16> {
    let listener = std::net::TcpListener::bind((ip, 0)).ok()?;
    listener.local_addr().ok().map(|address| address.port())
}

pub use crate::random::random_hex;

/// Free bytes on the file system holding `path` (statvfs), or `None` when unreadable.
pub fn free_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a valid NUL-terminated string and `stats` a valid out-pointer.
    let result = unsafe { libc::statvfs(path.as_ptr(), &mut stats) };
    (result == 0).then(|| stats.f_bavail as u64 * stats.f_frsize as u64)
}

/// tfimg's data folder: `$XDG_DATA_HOME/tfimg`, else `~/.local/share/tfimg`.
pub fn data_dir() -> std::path::PathBuf {
    if let Some(base) = std::env::var_os("XDG_DATA_HOME").filter(|value| !value.is_empty()) {
        return std::path::PathBuf::from(base).join("tfimg");
    }
    home_dir().join(".local/share/tfimg")
}

/// `data_dir`, made private (0700, its parents as the umask says) when missing, and
/// checked: tfimg keeps keys, locks and records there, so another account must not own
/// or be able to write it or a folder above it (`trusted`; a few `lstat`s each time).
pub fn trusted_data_dir() -> std::io::Result<std::path::PathBuf> {
    let folder = data_dir();
    if let Some(parent) = folder.parent() {
        std::fs::create_dir_all(parent)?;
    }
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(&folder) {
        Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => return Err(error),
        _ => {}
    }
    super::trusted::check(&folder, &super::trusted::Trusted::current())?;
    Ok(folder)
}

/// `trusted_data_dir`, its error as the user reads it.
pub fn data_folder() -> Result<std::path::PathBuf, tfimg_core::input::InputError> {
    trusted_data_dir().map_err(|error| {
        super::trusted::explained(error.into(), "tfimg's data folder", &data_dir())
    })
}

pub fn home_dir() -> std::path::PathBuf {
    std::env::var_os("HOME")
        .filter(|value| !value.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("/"))
}

/// A program's stdout when it ran and succeeded within 10 s (nvidia-smi can hang on a
/// wedged driver; a check must not).
pub fn run_program(program: &str, args: &[&str]) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut output = String::new();
                use std::io::Read;
                child.stdout.take()?.read_to_string(&mut output).ok()?;
                return status.success().then_some(output);
            }
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Writes `path` whole: the bytes go to a new file made with `mode` (less the umask)
/// beside it, synced, which then replaces `path` by a rename (`confined`). No reader ever
/// sees half a file, a crash leaves the old file or the new, and a `path` that was there
/// with a wider mode (or a link) never holds the new bytes: a file of secrets (tokens,
/// keys) written with 0600 is readable by its owner only from the moment it exists.
/// With `make_folders` its missing folders are made; otherwise a missing one is an error.
pub fn write_whole(
    path: &std::path::Path,
    bytes: &[u8],
    mode: u32,
    make_folders: bool,
) -> std::io::Result<()> {
    let (folder, name) = folder_and_name(path)?;
    let folder = match make_folders {
        true => super::confined::Confined::open_or_make(folder)?,
        false => super::confined::Confined::open(folder)?,
    };
    folder.write(name, bytes, mode)
}

/// `Host::write_export` on this machine.
pub fn write_export(
    folder: &std::path::Path,
    folder_mode: Option<u32>,
    files: &[super::ExportFile],
    owner: Option<(u32, u32)>,
) -> Result<(), super::ExportError> {
    use super::{ExportError, ExportStep};
    let failed = |step, path: &std::path::Path| {
        let path = path.to_path_buf();
        move |error| ExportError { step, path, error }
    };
    let handle = match folder_mode {
        None => super::confined::Confined::open_or_make(folder)
            .map_err(failed(ExportStep::MakeFolder, folder))?,
        Some(mode) => {
            let (parent, name) =
                folder_and_name(folder).map_err(failed(ExportStep::MakeFolder, folder))?;
            super::confined::Confined::open_or_make(parent)
                .and_then(|above| above.make_folders(name, mode))
                .map_err(failed(ExportStep::MakeFolder, folder))?
        }
    };
    // Another account's folder (or one it can write) on the way is refused before a byte
    // is written: it could read or swap what tfimg writes (`trusted`).
    let mut trusted = super::trusted::Trusted::current();
    if let Some((uid, _)) = owner {
        trusted = trusted.with(uid);
    }
    super::trusted::check(folder, &trusted)
        .map_err(|error| failed(ExportStep::MakeFolder, folder)(error.into()))?;
    if let Some(mode) = folder_mode {
        handle
            .set_mode(mode)
            .map_err(failed(ExportStep::MakeFolder, folder))?;
    }
    for file in files {
        handle
            .write(&file.name, &file.bytes, file.mode)
            .map_err(failed(ExportStep::Write, &folder.join(&file.name)))?;
    }
    if let Some((uid, gid)) = owner {
        let step = ExportStep::GiveAway(uid, gid);
        handle.set_owner(uid, gid).map_err(failed(step, folder))?;
        for file in files {
            handle
                .set_owner_of(&file.name, uid, gid)
                .map_err(failed(step, &folder.join(&file.name)))?;
        }
    }
    Ok(())
}

/// The folder `path` is in (`.` for a bare name) and its name.
fn folder_and_name(
    path: &std::path::Path,
) -> std::io::Result<(&std::path::Path, &std::path::Path)> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => std::path::Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("`{}` names no file", path.display()),
        )
    })?;
    Ok((folder, std::path::Path::new(name)))
}

/// Makes the mount folder `path` (and its parents, with `parents`), owned by `owner`
/// when that is not us: only root can give a folder away; others keep it and are told.
/// The folder is made and given away through a handle of the folder above it
/// (`confined`): a link planted at its name in between is refused, never followed, so
/// root never gives away what a link points at.
pub fn make_folder(
    path: &std::path::Path,
    parents: bool,
    owner: Option<(u32, u32)>,
) -> std::io::Result<Option<tfimg_core::notice::Notice>> {
    let (parent, name) = folder_and_name(path)?;
    if parents {
        std::fs::create_dir_all(parent)?;
    }
    let above = super::confined::Confined::open(parent)?;
    let made = above.make_folders(name, 0o777)?;
    let Some((uid, gid)) = owner else {
        return Ok(None);
    };
    if current_ids() == Some((uid, gid)) {
        return Ok(None);
    }
    Ok(made.set_owner(uid, gid).err().map(|error| {
        tfimg_core::notice::Notice::warning(format!(
            "created `{}` but could not give it to {uid}:{gid} ({error}); the container may not write to it",
            path.display()
        ))
    }))
}

/// The lock file `name` in tfimg's data folder, taken without waiting. The data folder is
/// used only while no other account can change it (`trusted_data_dir`), the `locks` folder
/// in it is made 0700, and the file is never opened through a link: another account could
/// otherwise hold every lock, or have root create a file where it points.
pub fn try_lock(name: &str, shared: bool) -> super::LockAttempt {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    // Inside the checked data folder (`trusted_data_dir`), which no other account can
    // write: nobody else can have made `locks` or put a name in it.
    let folder = trusted_data_dir().and_then(|data| {
        let folder = data.join("locks");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)?;
        Ok(folder)
    });
    let Ok(folder) = folder else {
        return super::LockAttempt::Unavailable;
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(folder.join(name));
    let Ok(file) = file else {
        return super::LockAttempt::Unavailable;
    };
    let attempt = if shared {
        file.try_lock_shared()
    } else {
        file.try_lock()
    };
    match attempt {
        Ok(()) => super::LockAttempt::Held(Box::new(file)),
        Err(std::fs::TryLockError::WouldBlock) => super::LockAttempt::Busy,
        Err(std::fs::TryLockError::Error(_)) => super::LockAttempt::Unavailable,
    }
}

/// `DOCKER_HOST` set to `engine`, the engine this process uses however it was chosen
/// (`--host`, `--context`, a context in the config), and `DOCKER_CONTEXT`, which it beats
/// in tfimg but not in every docker tool, removed.
fn same_engine<'a>(
    command: &'a mut std::process::Command,
    engine: &str,
) -> &'a mut std::process::Command {
    command
        .env("DOCKER_HOST", engine)
        .env_remove("DOCKER_CONTEXT")
}

/// Starts `tfimg prune-superseded NAME KEY` detached; false when it cannot be started.
pub fn spawn_prune(name: &str, key: &str, engine: &str) -> bool {
    let Ok(program) = std::env::current_exe() else {
        return false;
    };
    same_engine(&mut std::process::Command::new(program), engine)
        .args(["prune-superseded", name, key])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

/// What the signal listener has seen, once `listen_for_interrupts` installed it.
struct Interrupts {
    /// Whether the command cleans up on an interrupt (else the first one exits).
    handled: bool,
    seen: std::sync::atomic::AtomicBool,
    notify: tokio::sync::Notify,
}

static INTERRUPTS: std::sync::OnceLock<Interrupts> = std::sync::OnceLock::new();

/// Installs tfimg's handlers for SIGINT, SIGTERM and SIGHUP at once, inside the runtime,
/// before a command creates anything: an interrupt is never lost between two places that
/// wait for one (`interrupted` stays resolved once one came). A command that cleans up
/// (`handled`) gets the first signal through `interrupted` and a second one exits at once
/// with 128 + its number; any other command exits so on the first, as a shell expects.
pub fn listen_for_interrupts(handled: bool) {
    use tokio::signal::unix::{signal, SignalKind};
    let state = INTERRUPTS.get_or_init(|| Interrupts {
        handled,
        seen: std::sync::atomic::AtomicBool::new(false),
        notify: tokio::sync::Notify::new(),
    });
    let kinds = [
        (SignalKind::interrupt(), 130),
        (SignalKind::terminate(), 143),
        (SignalKind::hangup(), 129),
    ];
    for (kind, code) in kinds {
        // Registered here, synchronously: from now on the signal is tfimg's.
        let Ok(mut stream) = signal(kind) else {
            continue;
        };
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                let again = state.seen.swap(true, std::sync::atomic::Ordering::SeqCst);
                if !state.handled || again {
                    std::process::exit(code);
                }
                state.notify.notify_waiters();
            }
        });
    }
}

/// An interrupt that is no signal: the reader of this process's stdout or stderr went
/// away (`output::streams`). A command that cleans up gets it as it gets Ctrl-C (true);
/// false for any other, which the caller then ends at once.
pub fn interrupt_from_within() -> bool {
    let Some(state) = INTERRUPTS.get().filter(|state| state.handled) else {
        return false;
    };
    state.seen.store(true, std::sync::atomic::Ordering::SeqCst);
    state.notify.notify_waiters();
    true
}

/// Resolves when the user interrupts (Ctrl-C) or the session ends (SIGTERM, SIGHUP), so a
/// command can clean up what it started before exiting; at once when that already
/// happened.
pub async fn interrupted() {
    let Some(state) = INTERRUPTS.get() else {
        return listen_here().await;
    };
    loop {
        let notified = state.notify.notified();
        if state.seen.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        notified.await;
    }
}

/// Without `listen_for_interrupts` (a use case called from elsewhere): listen from now on.
async fn listen_here() {
    use tokio::signal::unix::{signal, SignalKind};
    async fn on(kind: SignalKind) {
        match signal(kind) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = on(SignalKind::terminate()) => {}
        _ = on(SignalKind::hangup()) => {}
    }
}

/// Appends `bytes` to `path` (made, with its folders, when missing) and syncs it; a link,
/// FIFO or device at its name is refused, never written through (`confined`).
pub fn append(path: &std::path::Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let (folder, name) = folder_and_name(path)?;
    super::confined::Confined::open_or_make(folder)?.append(name, bytes, durable)
}

/// Starts this program again with `args` in a session of its own (a closed terminal
/// does not hang it up), stdin from /dev/null, stdout and stderr appended to `log`.
pub fn spawn_detached(
    args: &[String],
    log: &std::path::Path,
    engine: &str,
) -> std::io::Result<u32> {
    use std::os::unix::process::CommandExt;
    let program = std::env::current_exe()?;
    if let Some(folder) = log.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let output = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let mut command = std::process::Command::new(program);
    same_engine(&mut command, engine)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(output);
    // SAFETY: setsid is async-signal-safe and touches no memory of this process.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(command.spawn()?.id())
}

/// A self-signed certificate (ECDSA P-256, from rcgen) for `names` and its key, PEM.
pub(super) fn self_signed_certificate(names: &[String]) -> std::io::Result<(String, String)> {
    let made = rcgen::generate_simple_self_signed(names.to_vec()).map_err(std::io::Error::other)?;
    Ok((made.cert.pem(), made.signing_key.serialize_pem()))
}

#[cfg(test)]
mod tests;
