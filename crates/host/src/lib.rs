//! The machine tfimg runs on, behind one trait: who we run as, GPUs and the driver, free
//! ports, random bytes, tfimg's data folder, SSH keys and known_hosts, mount folders,
//! locks, readiness probes on 127.0.0.1, and the user interrupting. Nothing here talks to
//! Docker. `Machine` is the real one; `fake` answers from memory for unit tests.
#![allow(async_fn_in_trait)]

pub mod archive;
pub mod confined;
pub mod debootstrap;
// The fakes the stories' unit tests run on: in this crate's tests, and in the binary's
// through the `fake` feature its dev-dependencies turn on.
#[cfg(any(test, feature = "fake"))]
pub mod fake;
mod files;
pub mod machine;
pub mod nvidia;
mod probe;
mod random;
mod ssh;
pub mod trusted;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tfimg_core::input::{Exit, Failure, InputError};
use tfimg_core::notice::Notice;
use tfimg_core::plan::sync::SyncPlan;
use tfimg_core::spec::compat::Date;

pub use archive::sync::SyncArchive;
pub use archive::unpack::UnpackSummary;
pub use machine::{
    current_ids, data_dir, free_bytes, home_dir, mounts_below, on_path, run_program, write_whole,
};
pub use nvidia::NvidiaFacts;
pub use ssh::SshKey;
pub use trusted::{TrustError, Untrusted};

/// The user interrupted the command (Ctrl-C, SIGTERM, SIGHUP) and tfimg cleaned up what
/// it had started; `what` says what was stopped and what is left.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: {what}")]
pub struct Interrupted {
    pub what: String,
}

/// A problem with this machine (driver, toolkit) found before anything was created.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    pub message: String,
    pub hint: String,
}

impl Failure for Interrupted {
    fn exit(&self) -> Exit {
        Exit::Interrupted
    }

    fn hint(&self) -> Option<&str> {
        None
    }
}

impl Failure for HostError {
    fn exit(&self) -> Exit {
        Exit::Failed
    }

    fn hint(&self) -> Option<&str> {
        Some(&self.hint)
    }
}

/// A file written in place: appended to, and patched where it was already written (a
/// bundle's manifest is written last, at its start).
pub trait OutputFile: std::io::Write + std::io::Seek {
    /// Everything written so far reaches the disk.
    fn sync(&mut self) -> std::io::Result<()>;
}

/// A file read in place.
pub trait InputFile: std::io::Read + std::io::Seek {}
impl<T: std::io::Read + std::io::Seek> InputFile for T {}

/// Bytes of a file in chunks, as the engine takes a request body.
pub type FileStream = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static>,
>;

/// A tar from a container, unpacked on this machine as it arrives.
pub trait Unpacker {
    /// Hands over the next chunk; `Break` once the unpacking has stopped (the tar ended,
    /// or it failed: `finish` says which).
    fn feed(&mut self, chunk: bytes::Bytes) -> std::ops::ControlFlow<()>;
    /// Waits for the unpacking to end; what it wrote.
    fn finish(self: Box<Self>) -> std::io::Result<UnpackSummary>;
}

/// A lock file taken (held until dropped), busy, or impossible here (no data folder):
/// then the work simply runs unserialised.
pub enum LockAttempt {
    Held(Box<dyn std::any::Any + Send>),
    Busy,
    Unavailable,
}

/// The host's roles and `Host` itself: what a story or a test brings into scope to call
/// the host's methods on a concrete host (`Machine`, `FakeHost`).
pub mod prelude {
    pub use super::{
        Clock, Confined, FileWrites, Files, Gpus, Host, Identity, Ports, Probes, Processes,
        Secrets, State, Trust,
    };
}

/// Who runs tfimg, and who containers run as.
pub trait Identity {
    /// The uid and gid tfimg runs as.
    fn ids(&self) -> Option<(u32, u32)>;
    /// The uid and gid containers run as (`plan::user`: root's own, without capabilities,
    /// as plain root).
    fn container_ids(&self) -> (u32, u32);
    /// The name of the user running tfimg (the one who ran sudo, under sudo), for the
    /// containers' owner label.
    fn user_name(&self) -> Option<String>;
}

/// This machine's NVIDIA driver and GPUs, and what runs on them.
pub trait Gpus {
    /// GPUs, driver and the NVIDIA toolkit's programs (nvidia-smi, /proc, PATH).
    fn nvidia(&self) -> NvidiaFacts;
    /// The processes using this machine's GPUs now, each with its container.
    fn gpu_processes(&self) -> Vec<nvidia::GpuProcess>;
}

/// Which ports of this machine are free.
pub trait Ports {
    /// Whether `ip:port` can be bound right now (TCP).
    fn port_is_free(&self, ip: &str, port: u16) -> bool;
    /// A port the kernel hands out as free on `ip`.
    fn any_free_port(&self, ip: &str) -> Option<u16>;
}

/// Whether a service on a local port answers (HTTP, SSH, gRPC).
pub trait Probes {
    /// The HTTP status of `GET path` on 127.0.0.1:`port`, or `None`.
    async fn http_status(&self, port: u16, path: &str) -> Option<u16>;
    /// The status and body of `GET path` on 127.0.0.1:`port` (a small answer: a model
    /// server's status or metadata), or `None` when nothing answers.
    async fn http_get(&self, port: u16, path: &str) -> Option<(u16, Vec<u8>)>;
    /// Whether an SSH server on 127.0.0.1:`port` sends its banner.
    async fn ssh_banner(&self, port: u16) -> bool;
    /// Whether a gRPC (HTTP/2) server on 127.0.0.1:`port` answers.
    async fn grpc_answers(&self, port: u16) -> bool;
}

/// Time, waiting, and the user's interrupts.
pub trait Clock {
    async fn sleep(&self, duration: Duration);
    /// Resolves when the user interrupts (Ctrl-C) or the session ends (SIGTERM, SIGHUP).
    async fn interrupted(&self);
    /// The wall clock (times in journals and status files).
    fn now(&self) -> std::time::SystemTime;
    /// The day support windows are judged on: the wall clock's UTC day.
    fn today(&self) -> Result<Date, InputError> {
        Ok(utc_day(self.now()))
    }
}

/// Trust boundaries **another local account → tfimg** and **member files → host**: whose folders tfimg may use.
pub trait Trust {
    /// Trust boundary **another local account → tfimg** (`trusted`): the folder `path`
    /// (made first with `make`'s mode when missing, with its parents) and every folder
    /// above it belong to the user running tfimg, root or sudo's user, and no other
    /// account can write them.
    /// `also`: one more account whose folders are trusted there (the one tfimg gives a
    /// member's folder to).
    fn trusted_folder(
        &self,
        path: &Path,
        make: Option<u32>,
        also: Option<u32>,
    ) -> Result<(), TrustError>;
    /// Trust boundary **member files → host**: `path` made real, and the folders at and
    /// above it that no account but a trusted one can enter (`trusted::closed_folders`).
    fn closed_folders(&self, path: &Path) -> std::io::Result<(PathBuf, Vec<PathBuf>)>;
    /// The owner, group and permission bits of the folder `path`; `None` when it is not
    /// a folder that can be read.
    fn folder_access(&self, path: &Path) -> Option<(u32, u32, u32)>;
}

/// tfimg's own data folder and the locks in it.
pub trait State {
    /// tfimg's data folder (keys, known_hosts, locks, where each sweep ran), made private
    /// (0700) when missing; refused (`trusted::untrusted_in` finds why) when another account
    /// owns or can write it or a folder above it.
    fn data_dir(&self) -> std::io::Result<PathBuf>;
    /// `data_dir`, its error as the user reads it (a refusal is bad input).
    fn data_folder(&self) -> Result<PathBuf, InputError> {
        self.data_dir().map_err(|error| {
            trusted::explained(error.into(), "tfimg's data folder", &machine::data_dir())
        })
    }
    /// Takes the lock file `name` in tfimg's data folder, shared or exclusive.
    fn try_lock(&self, name: &str, shared: bool) -> LockAttempt;
}

/// Random names, certificates, SSH keys and pinned host keys.
pub trait Secrets: State {
    /// `bytes` random bytes as lowercase hex (tokens, names).
    fn random_hex(&self, bytes: usize) -> std::io::Result<String>;
    /// A new self-signed TLS certificate for `names` (host names or IP addresses) and its
    /// private key, both PEM.
    fn self_signed_certificate(&self, names: &[String]) -> std::io::Result<(String, String)>;
    /// The key a container admits: `--ssh-key`, the user's own, or one tfimg makes.
    fn ssh_key(&self, explicit: Option<&Path>) -> Result<SshKey, InputError>;
    /// A team member's own key pair (made once).
    fn member_ssh_key(&self, team: &str, member: &str) -> Result<SshKey, InputError>;
    /// Records a container's SSH host key for `[127.0.0.1]:port`.
    fn pin_host_key(&self, known_hosts: &Path, port: u16, host_key: &str) -> std::io::Result<()>;
    /// tfimg's own known_hosts, where containers' host keys are pinned.
    fn known_hosts(&self) -> Result<PathBuf, InputError> {
        Ok(self.data_folder()?.join("ssh").join("known_hosts"))
    }
}

/// Reading this machine's files and folders (the user's own, outside any trust boundary).
pub trait Files {
    fn exists(&self, path: &Path) -> bool;
    /// Whether `path` itself is a symbolic link (not followed).
    fn is_link(&self, path: &Path) -> bool;
    /// Whether `path` is a folder.
    fn is_folder(&self, path: &Path) -> bool;
    /// A file's bytes.
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>>;
    /// A file's first `limit` bytes at most (a huge file is never read whole).
    fn read_at_most(&self, path: &Path, limit: u64) -> std::io::Result<Vec<u8>>;
    /// The files in `folder` whose name ends in `.extension`, sorted; none when it cannot
    /// be read.
    fn files_with_extension(&self, folder: &Path, extension: &str) -> Vec<PathBuf>;
    /// The names of the entries of `folder`, sorted; none when it cannot be read.
    fn folder_entries(&self, folder: &Path) -> Vec<String>;
    /// A file to read, and its length.
    fn open_file(&self, path: &Path) -> std::io::Result<(Box<dyn InputFile + '_>, u64)>;
    /// `length` bytes of a file from `offset`, in chunks (a file that turns out shorter
    /// ends the stream early).
    fn file_stream(&self, path: &Path, offset: u64, length: u64) -> std::io::Result<FileStream>;
}

/// Writing this machine's files and folders (the user's own, outside any trust boundary).
pub trait FileWrites {
    /// Makes a missing mount folder (and, with `parents`, the folders above it), owned by
    /// `owner` when tfimg may give it away; a warning when it could not.
    fn make_folder(
        &self,
        path: &Path,
        parents: bool,
        owner: Option<(u32, u32)>,
    ) -> std::io::Result<Option<Notice>>;
    /// Removes a folder tfimg made, if it is still empty.
    fn remove_empty_folder(&self, path: &Path);
    /// Writes a whole file: a new file renamed over the old one, so a reader never sees
    /// half of it; the folders above it are made.
    fn write_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()>;
    /// `write_file` for a file only its owner may read (mode 0600 from the start; the
    /// folders made above it 0700).
    fn write_private_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()>;
    /// Appends to a file (made with its folders when missing); `durable`: flushed to the
    /// disk before it returns (what a journal needs to survive a killed terminal).
    fn append_file(&self, path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()>;
    /// Removes a file; one that is already gone is not an error.
    fn remove_file(&self, path: &Path) -> std::io::Result<()>;
    /// Renames a file or folder (on one file system).
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()>;
    /// Creates a new file (one that is there, or a link, is an error) to write in place.
    fn create_file(&self, path: &Path) -> std::io::Result<Box<dyn OutputFile + '_>>;
}

/// Trust boundary **container → host**: files in folders a container can write, only through directory handles that follow no link (`confined`).
pub trait Confined {
    /// At most `limit` bytes of the regular file `name` in `folder` from `offset`, a folder
    /// that a less trusted side can write (a trial's): never through a link, a FIFO or a
    /// device (`confined`).
    fn read_confined(
        &self,
        folder: &Path,
        name: &str,
        offset: u64,
        limit: u64,
    ) -> std::io::Result<confined::Bounded>;
    /// `write_file` for `name` in such a folder: a link there is replaced, never followed;
    /// the file belongs to the folder's owner (the container's user) even when tfimg runs
    /// as root.
    fn write_confined(&self, folder: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()>;
    /// `append_file` for `name` in such a folder (the folder itself must exist): a link,
    /// FIFO or device there is refused.
    fn append_confined(&self, folder: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()>;
    /// The length of the regular file `name` in such a folder, as `read_confined` would
    /// open it (none when it is missing, a link, a FIFO or a device): a cheap look at
    /// whether a trial wrote more.
    fn confined_len(&self, folder: &Path, name: &str) -> Option<u64>;
    /// Writes an export's files (Compose, Kubernetes, the gateway's folder) whole into
    /// `folder` through the folder's handle (`confined`): an output folder may be shared
    /// with other users, and a link one planted at a name is replaced or refused, never
    /// followed. The folder is made when missing, with the folders above it; with
    /// `folder_mode` it is made (and set) with that mode. With `owner`, the folder and the
    /// files are given to that uid:gid (root exporting for another user).
    fn write_export(
        &self,
        folder: &Path,
        folder_mode: Option<u32>,
        files: &[ExportFile],
        owner: Option<(u32, u32)>,
    ) -> Result<(), ExportError>;
    /// A `--sync` source walked into the archive the container receives (its entries
    /// owned by `owner`); nothing is read yet.
    fn sync_archive(&self, sync: &SyncPlan, owner: (u32, u32)) -> Result<SyncArchive, InputError>;
    /// Starts unpacking a container's tar into `destination` (see `archive::unpack`).
    fn unpacker(&self, destination: &Path) -> Box<dyn Unpacker + '_>;
}

/// Processes tfimg leaves running on its own (a pruner, a sweep's runner).
pub trait Processes {
    /// Starts this tfimg again with `args` against `engine`, detached from the terminal
    /// and its session, its output appended to `log`; its process id.
    fn spawn_detached(&self, args: &[String], log: &Path, engine: &str) -> std::io::Result<u32>;
    /// Starts `tfimg prune-superseded NAME KEY` in the background against `engine` (the
    /// endpoint this process uses, however it was chosen); false when it cannot.
    fn spawn_prune(&self, name: &str, key: &str, engine: &str) -> bool;
    /// This tfimg's own executable (a team's hub runs it to choose GPUs).
    fn executable(&self) -> std::io::Result<std::path::PathBuf>;
}

/// Everything tfimg asks of the machine it runs on: each role above. A story asks for
/// the roles it uses (`&(impl Files + Clock)`); `impl Host` stands for all of them.
pub trait Host:
    Identity
    + Gpus
    + Ports
    + Probes
    + Clock
    + Trust
    + State
    + Secrets
    + Files
    + FileWrites
    + Confined
    + Processes
{
}

impl<
        T: Identity
            + Gpus
            + Ports
            + Probes
            + Clock
            + Trust
            + State
            + Secrets
            + Files
            + FileWrites
            + Confined
            + Processes,
    > Host for T
{
}

/// This machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct Machine;

impl Identity for Machine {
    fn ids(&self) -> Option<(u32, u32)> {
        machine::current_ids()
    }
    fn container_ids(&self) -> (u32, u32) {
        let sudo_uid = std::env::var("SUDO_UID").ok();
        let sudo_gid = std::env::var("SUDO_GID").ok();
        tfimg_core::plan::container_ids(
            machine::current_ids(),
            (sudo_uid.as_deref(), sudo_gid.as_deref()),
        )
    }
    fn user_name(&self) -> Option<String> {
        ["SUDO_USER", "USER", "LOGNAME"]
            .iter()
            .filter_map(|variable| std::env::var(variable).ok())
            .map(|name| {
                name.trim()
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(64)
                    .collect::<String>()
            })
            .find(|name| !name.is_empty())
    }
}

impl Gpus for Machine {
    fn nvidia(&self) -> NvidiaFacts {
        nvidia::facts(
            &run_program,
            &|path| std::fs::read_to_string(path).ok(),
            &on_path,
        )
    }
    fn gpu_processes(&self) -> Vec<nvidia::GpuProcess> {
        nvidia::processes(&run_program, &|path| std::fs::read_to_string(path).ok())
    }
}

impl Ports for Machine {
    fn port_is_free(&self, ip: &str, port: u16) -> bool {
        machine::port_is_free(ip, port)
    }
    fn any_free_port(&self, ip: &str) -> Option<u16> {
        machine::any_free_port(ip)
    }
}

impl Probes for Machine {
    async fn http_status(&self, port: u16, path: &str) -> Option<u16> {
        probe::http_status(port, path).await
    }
    async fn http_get(&self, port: u16, path: &str) -> Option<(u16, Vec<u8>)> {
        probe::http_get(port, path).await
    }
    async fn ssh_banner(&self, port: u16) -> bool {
        probe::ssh_banner(port).await
    }
    async fn grpc_answers(&self, port: u16) -> bool {
        probe::http2_settings(port).await
    }
}

impl Clock for Machine {
    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
    async fn interrupted(&self) {
        machine::interrupted().await;
    }
    fn now(&self) -> std::time::SystemTime {
        std::time::SystemTime::now()
    }
    /// `TFIMG_TODAY` when set (checked: a real day as YYYY-MM-DD), else the clock's day.
    fn today(&self) -> Result<Date, InputError> {
        match std::env::var_os(tfimg_core::labels::TODAY_VARIABLE) {
            None => Ok(utc_day(self.now())),
            Some(value) => parse_today(&value.to_string_lossy()),
        }
    }
}

impl Trust for Machine {
    fn trusted_folder(
        &self,
        path: &Path,
        make: Option<u32>,
        also: Option<u32>,
    ) -> Result<(), TrustError> {
        let mut trusted = trusted::Trusted::current();
        if let Some(uid) = also {
            trusted = trusted.with(uid);
        }
        match make {
            Some(mode) => trusted::make_and_check(path, mode, &trusted),
            None => trusted::check(path, &trusted),
        }
    }
    fn closed_folders(&self, path: &Path) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
        trusted::closed_folders(path, &trusted::Trusted::current())
    }
    fn folder_access(&self, path: &Path) -> Option<(u32, u32, u32)> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path)
            .ok()
            .filter(|metadata| metadata.is_dir())?;
        Some((metadata.uid(), metadata.gid(), metadata.mode() & 0o7777))
    }
}

impl State for Machine {
    fn data_dir(&self) -> std::io::Result<PathBuf> {
        machine::trusted_data_dir()
    }
    fn try_lock(&self, name: &str, shared: bool) -> LockAttempt {
        machine::try_lock(name, shared)
    }
}

impl Secrets for Machine {
    fn random_hex(&self, bytes: usize) -> std::io::Result<String> {
        machine::random_hex(bytes)
    }
    fn self_signed_certificate(&self, names: &[String]) -> std::io::Result<(String, String)> {
        machine::self_signed_certificate(names)
    }
    fn ssh_key(&self, explicit: Option<&Path>) -> Result<SshKey, InputError> {
        ssh::ssh_key(explicit)
    }
    fn member_ssh_key(&self, team: &str, member: &str) -> Result<SshKey, InputError> {
        ssh::member_ssh_key(team, member)
    }
    fn pin_host_key(&self, known_hosts: &Path, port: u16, host_key: &str) -> std::io::Result<()> {
        ssh::pin_host_key(known_hosts, port, host_key)
    }
}

impl Files for Machine {
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn is_link(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_symlink())
    }
    fn is_folder(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    fn read_at_most(&self, path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let mut bytes = Vec::new();
        std::fs::File::open(path)?
            .take(limit)
            .read_to_end(&mut bytes)?;
        Ok(bytes)
    }
    fn files_with_extension(&self, folder: &Path, extension: &str) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.path())
                    .filter(|path| path.extension().is_some_and(|found| found == extension))
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    }
    fn folder_entries(&self, folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|entry| entry.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
    fn open_file(&self, path: &Path) -> std::io::Result<(Box<dyn InputFile + '_>, u64)> {
        let file = std::fs::File::open(path)?;
        let length = file.metadata()?.len();
        Ok((
            Box::new(std::io::BufReader::with_capacity(1 << 20, file)),
            length,
        ))
    }
    fn file_stream(&self, path: &Path, offset: u64, length: u64) -> std::io::Result<FileStream> {
        files::stream(path, offset, length)
    }
}

impl FileWrites for Machine {
    fn make_folder(
        &self,
        path: &Path,
        parents: bool,
        owner: Option<(u32, u32)>,
    ) -> std::io::Result<Option<Notice>> {
        machine::make_folder(path, parents, owner)
    }
    fn remove_empty_folder(&self, path: &Path) {
        let _ = std::fs::remove_dir(path);
    }
    fn write_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        machine::write_whole(path, bytes, 0o666, true)
    }
    fn write_private_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        if let Some(folder) = path.parent() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(folder)?;
        }
        machine::write_whole(path, bytes, 0o600, false)
    }
    fn append_file(&self, path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
        machine::append(path, bytes, durable)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        match std::fs::remove_file(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        std::fs::rename(from, to)
    }
    fn create_file(&self, path: &Path) -> std::io::Result<Box<dyn OutputFile + '_>> {
        Ok(Box::new(files::create(path)?))
    }
}

impl Confined for Machine {
    fn read_confined(
        &self,
        folder: &Path,
        name: &str,
        offset: u64,
        limit: u64,
    ) -> std::io::Result<confined::Bounded> {
        confined::Confined::open(folder)?.read(Path::new(name), offset, limit)
    }
    fn write_confined(&self, folder: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        confined::Confined::open_or_make(folder)?
            .owned_by_folder()?
            .write(Path::new(name), bytes, 0o644)
    }
    fn append_confined(&self, folder: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        confined::Confined::open(folder)?
            .owned_by_folder()?
            .append(Path::new(name), bytes, false)
    }
    fn confined_len(&self, folder: &Path, name: &str) -> Option<u64> {
        let file = confined::Confined::open(folder)
            .ok()?
            .open_file(Path::new(name))
            .ok()?;
        file.metadata().ok().map(|metadata| metadata.len())
    }
    fn write_export(
        &self,
        folder: &Path,
        folder_mode: Option<u32>,
        files: &[ExportFile],
        owner: Option<(u32, u32)>,
    ) -> Result<(), ExportError> {
        machine::write_export(folder, folder_mode, files, owner)
    }
    fn sync_archive(&self, sync: &SyncPlan, owner: (u32, u32)) -> Result<SyncArchive, InputError> {
        archive::sync::sync_archive(sync, owner)
    }
    fn unpacker(&self, destination: &Path) -> Box<dyn Unpacker + '_> {
        Box::new(archive::unpack::start(destination.to_path_buf()))
    }
}

impl Processes for Machine {
    fn spawn_detached(&self, args: &[String], log: &Path, engine: &str) -> std::io::Result<u32> {
        machine::spawn_detached(args, log, engine)
    }
    fn spawn_prune(&self, name: &str, key: &str, engine: &str) -> bool {
        machine::spawn_prune(name, key, engine)
    }
    fn executable(&self) -> std::io::Result<std::path::PathBuf> {
        std::env::current_exe()
    }
}

/// A file of an export: its name in the export's folder, its bytes and its mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFile {
    pub name: PathBuf,
    pub bytes: Vec<u8>,
    pub mode: u32,
}

/// What failed while an export was written, and where.
#[derive(Debug)]
pub struct ExportError {
    pub step: ExportStep,
    pub path: PathBuf,
    pub error: std::io::Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportStep {
    MakeFolder,
    Write,
    GiveAway(u32, u32),
}

/// The UTC day of a wall-clock time (a clock before 1970 counts as 1970-01-01).
pub fn utc_day(time: std::time::SystemTime) -> Date {
    let seconds = time
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0);
    Date::from_unix_seconds(seconds)
}

/// The value of `TFIMG_TODAY`, which must be a day that exists, written `YYYY-MM-DD`.
pub fn parse_today(value: &str) -> Result<Date, InputError> {
    let variable = tfimg_core::labels::TODAY_VARIABLE;
    Date::parse(value).ok_or_else(|| {
        let shown = if value.is_empty() {
            "empty".to_string()
        } else {
            format!("`{}`", value.escape_debug())
        };
        InputError::new(
            format!("`{variable}` is {shown}, which is not a day written YYYY-MM-DD"),
            format!(
                "set `{variable}` to a day such as 2026-11-22 to judge support windows on it, or unset it to use today's date"
            ),
        )
    })
}

#[cfg(test)]
mod tests;
