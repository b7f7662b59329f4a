//! A machine in memory, for the use cases' unit tests: the GPUs, ports and folders a test
//! says it has; folders made and removed are recorded, random values count up, probes
//! answer as told, sleeping takes no time, and the user never interrupts.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::prelude::*;

use super::{
    ExportError, ExportFile, FileStream, InputFile, LockAttempt, NvidiaFacts, OutputFile, SshKey,
    SyncArchive, TrustError, UnpackSummary, Unpacker,
};
use tfimg_core::input::InputError;
use tfimg_core::notice::Notice;
use tfimg_core::plan::sync::SyncPlan;

/// An exported file's (or folder's) mode and the owner it was given.
pub type Exported = (u32, Option<(u32, u32)>);

#[derive(Debug, Default)]
pub struct FakeHost {
    pub nvidia: NvidiaFacts,
    /// What `gpu_processes` answers.
    pub gpu_processes: Vec<crate::nvidia::GpuProcess>,
    /// Host ports some other program holds.
    pub held_ports: RefCell<BTreeSet<u16>>,
    /// Ports another program takes right after tfimg found them free (a race lost).
    pub raced_ports: RefCell<BTreeSet<u16>>,
    /// Paths that exist.
    pub paths: RefCell<BTreeSet<PathBuf>>,
    /// Folders tfimg made, and removed, in order.
    pub made: RefCell<Vec<PathBuf>>,
    pub removed: RefCell<Vec<PathBuf>>,
    /// What the HTTP probe answers (`None`: nothing listens).
    pub http: Option<u16>,
    /// Whether the gRPC probe finds a server.
    pub grpc: bool,
    /// What `http_get` answers for a path, in turn (the last one again and again); a
    /// path not listed answers `http` with an empty body. Paths asked, in order.
    pub http_answers: RefCell<std::collections::BTreeMap<String, Vec<(u16, String)>>>,
    pub http_asked: RefCell<Vec<String>>,
    pub prunes: RefCell<Vec<(String, String)>>,
    /// Files written through the host, by path.
    pub files: RefCell<std::collections::BTreeMap<PathBuf, Vec<u8>>>,
    /// Paths that are symbolic links.
    pub links: RefCell<BTreeSet<PathBuf>>,
    /// Folders' owner, group and mode (`folder_access`); the others answer `None`.
    pub access: RefCell<std::collections::BTreeMap<PathBuf, (u32, u32, u32)>>,
    /// Set to make `interrupted` resolve (the user's Ctrl-C).
    pub interrupt: std::cell::Cell<bool>,
    /// Each `spawn_detached`: its arguments, its log file and the engine it was given.
    pub spawned: RefCell<Vec<(Vec<String>, PathBuf, String)>>,
    /// Locks another process holds (`try_lock` answers busy); the others are taken.
    pub busy_locks: RefCell<BTreeSet<String>>,
    /// Each file and folder an export wrote, with its mode and the owner it was given
    /// (its bytes are in `files`).
    pub exported: RefCell<std::collections::BTreeMap<PathBuf, Exported>>,
    /// Folders another account owns or can write (`trusted_folder` refuses them and every
    /// path below them).
    pub untrusted: RefCell<std::collections::BTreeMap<PathBuf, super::Untrusted>>,
    /// Folders no other account can enter (`closed_folders`); the others are open.
    pub closed: RefCell<BTreeSet<PathBuf>>,
    counter: RefCell<u32>,
}

impl FakeHost {
    pub fn new() -> FakeHost {
        FakeHost {
            http: Some(200),
            grpc: true,
            ..FakeHost::default()
        }
    }

    fn next(&self) -> u32 {
        let mut counter = self.counter.borrow_mut();
        *counter += 1;
        *counter
    }
}

impl Identity for FakeHost {
    fn ids(&self) -> Option<(u32, u32)> {
        Some((4321, 4322))
    }
    fn container_ids(&self) -> (u32, u32) {
        (4321, 4322)
    }
    fn user_name(&self) -> Option<String> {
        Some("ana".to_string())
    }
}

impl Gpus for FakeHost {
    fn nvidia(&self) -> NvidiaFacts {
        self.nvidia.clone()
    }
    fn gpu_processes(&self) -> Vec<crate::nvidia::GpuProcess> {
        self.gpu_processes.clone()
    }
}

impl Ports for FakeHost {
    fn port_is_free(&self, _ip: &str, port: u16) -> bool {
        if self.held_ports.borrow().contains(&port) {
            return false;
        }
        if self.raced_ports.borrow_mut().remove(&port) {
            self.held_ports.borrow_mut().insert(port);
        }
        true
    }
    fn any_free_port(&self, _ip: &str) -> Option<u16> {
        // Kernel-chosen ports count up from 40000, never a held one.
        loop {
            let port = 40000 + self.next() as u16;
            if !self.held_ports.borrow().contains(&port) {
                return Some(port);
            }
        }
    }
}

impl Probes for FakeHost {
    async fn http_status(&self, _port: u16, _path: &str) -> Option<u16> {
        self.http
    }
    async fn http_get(&self, _port: u16, path: &str) -> Option<(u16, Vec<u8>)> {
        self.http_asked.borrow_mut().push(path.to_string());
        let mut answers = self.http_answers.borrow_mut();
        match answers.get_mut(path) {
            Some(queue) if !queue.is_empty() => {
                let (status, body) = match queue.len() {
                    1 => queue[0].clone(),
                    _ => queue.remove(0),
                };
                Some((status, body.into_bytes()))
            }
            _ => self.http.map(|status| (status, Vec::new())),
        }
    }
    async fn ssh_banner(&self, _port: u16) -> bool {
        true
    }
    async fn grpc_answers(&self, _port: u16) -> bool {
        self.grpc
    }
}

impl Clock for FakeHost {
    /// No time passes, but the task yields, as any sleep does.
    async fn sleep(&self, _duration: Duration) {
        tokio::task::yield_now().await;
    }
    async fn interrupted(&self) {
        while !self.interrupt.get() {
            tokio::task::yield_now().await;
        }
    }
    fn now(&self) -> std::time::SystemTime {
        // A clock that moves one second per question.
        std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000 + u64::from(self.next()))
    }
}

impl Trust for FakeHost {
    fn trusted_folder(
        &self,
        path: &Path,
        _make: Option<u32>,
        _also: Option<u32>,
    ) -> Result<(), TrustError> {
        match self
            .untrusted
            .borrow()
            .iter()
            .find(|(planted, _)| path.starts_with(planted))
        {
            Some((_, untrusted)) => Err(TrustError::Untrusted(untrusted.clone())),
            None => Ok(()),
        }
    }
    fn closed_folders(&self, path: &Path) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
        let closed = self.closed.borrow();
        let found = path
            .ancestors()
            .filter(|folder| closed.contains(*folder))
            .map(Path::to_path_buf)
            .collect();
        Ok((path.to_path_buf(), found))
    }
    fn folder_access(&self, path: &Path) -> Option<(u32, u32, u32)> {
        self.access.borrow().get(path).copied()
    }
}

impl State for FakeHost {
    fn data_dir(&self) -> std::io::Result<PathBuf> {
        let folder = PathBuf::from("/fake/data/tfimg");
        self.trusted_folder(&folder, None, None)?;
        Ok(folder)
    }
    fn try_lock(&self, name: &str, _shared: bool) -> LockAttempt {
        match self.busy_locks.borrow().contains(name) {
            true => LockAttempt::Busy,
            false => LockAttempt::Held(Box::new(())),
        }
    }
}

impl Secrets for FakeHost {
    fn random_hex(&self, bytes: usize) -> std::io::Result<String> {
        Ok(format!("{:0width$x}", self.next(), width = bytes * 2))
    }
    fn self_signed_certificate(&self, names: &[String]) -> std::io::Result<(String, String)> {
        Ok((
            format!("FAKE CERTIFICATE for {}", names.join(",")),
            format!("FAKE KEY {}", self.next()),
        ))
    }
    fn ssh_key(&self, _explicit: Option<&Path>) -> Result<SshKey, InputError> {
        Ok(SshKey {
            public_key: "ssh-ed25519 AAAAfake user".to_string(),
            identity: Some(PathBuf::from("/fake/home/.ssh/id_ed25519")),
        })
    }
    fn member_ssh_key(&self, team: &str, member: &str) -> Result<SshKey, InputError> {
        Ok(SshKey {
            public_key: format!("ssh-ed25519 AAAAfake {team}/{member}"),
            identity: Some(
                PathBuf::from("/fake/data/tfimg")
                    .join("teams")
                    .join(team)
                    .join(member),
            ),
        })
    }
    fn pin_host_key(&self, _known_hosts: &Path, _port: u16, _key: &str) -> std::io::Result<()> {
        Ok(())
    }
}

impl Files for FakeHost {
    fn exists(&self, path: &Path) -> bool {
        self.paths
            .borrow()
            .iter()
            .any(|known| known == path || known.starts_with(path))
    }
    fn is_link(&self, path: &Path) -> bool {
        self.links.borrow().contains(path)
    }
    fn is_folder(&self, path: &Path) -> bool {
        self.paths.borrow().contains(path)
    }
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.files
            .borrow()
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    }
    fn read_at_most(&self, path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
        let mut bytes = self.read_file(path)?;
        bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(bytes)
    }
    fn files_with_extension(&self, folder: &Path, extension: &str) -> Vec<PathBuf> {
        // A BTreeMap: already sorted.
        self.files
            .borrow()
            .keys()
            .filter(|path| {
                path.parent() == Some(folder)
                    && path.extension().is_some_and(|found| found == extension)
            })
            .cloned()
            .collect()
    }
    fn folder_entries(&self, folder: &Path) -> Vec<String> {
        let names: BTreeSet<String> = self
            .paths
            .borrow()
            .iter()
            .filter_map(|path| path.strip_prefix(folder).ok())
            .filter_map(|rest| rest.components().next())
            .filter_map(|first| first.as_os_str().to_str().map(str::to_string))
            .collect();
        names.into_iter().collect()
    }
    fn open_file(&self, path: &Path) -> std::io::Result<(Box<dyn InputFile + '_>, u64)> {
        let bytes = self.read_file(path)?;
        let length = bytes.len() as u64;
        Ok((Box::new(std::io::Cursor::new(bytes)), length))
    }
    fn file_stream(&self, path: &Path, offset: u64, length: u64) -> std::io::Result<FileStream> {
        let bytes = self.read_file(path)?;
        let start = (offset as usize).min(bytes.len());
        let end = (offset.saturating_add(length) as usize).min(bytes.len());
        let chunks: Vec<std::io::Result<bytes::Bytes>> = bytes[start..end]
            .chunks(777)
            .map(|chunk| Ok(bytes::Bytes::copy_from_slice(chunk)))
            .collect();
        Ok(Box::pin(futures_util::stream::iter(chunks)))
    }
}

impl FileWrites for FakeHost {
    fn make_folder(
        &self,
        path: &Path,
        _parents: bool,
        _owner: Option<(u32, u32)>,
    ) -> std::io::Result<Option<Notice>> {
        self.paths.borrow_mut().insert(path.to_path_buf());
        self.made.borrow_mut().push(path.to_path_buf());
        Ok(None)
    }
    fn remove_empty_folder(&self, path: &Path) {
        self.paths.borrow_mut().remove(path);
        self.removed.borrow_mut().push(path.to_path_buf());
    }
    fn write_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.files
            .borrow_mut()
            .insert(path.to_path_buf(), bytes.to_vec());
        Ok(())
    }
    fn write_private_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.write_file(path, bytes)
    }
    fn append_file(&self, path: &Path, bytes: &[u8], _durable: bool) -> std::io::Result<()> {
        self.files
            .borrow_mut()
            .entry(path.to_path_buf())
            .or_default()
            .extend_from_slice(bytes);
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        self.files.borrow_mut().remove(path);
        Ok(())
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        let mut files = self.files.borrow_mut();
        let moved: Vec<PathBuf> = files
            .keys()
            .filter(|path| path.starts_with(from))
            .cloned()
            .collect();
        if moved.is_empty() {
            return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
        }
        for path in moved {
            let bytes = files.remove(&path).expect("listed above");
            let rest = path.strip_prefix(from).expect("listed above");
            let moved = match rest.as_os_str().is_empty() {
                true => to.to_path_buf(),
                false => to.join(rest),
            };
            files.insert(moved, bytes);
        }
        Ok(())
    }
    fn create_file(&self, path: &Path) -> std::io::Result<Box<dyn OutputFile + '_>> {
        self.files
            .borrow_mut()
            .insert(path.to_path_buf(), Vec::new());
        Ok(Box::new(FakeFile {
            host: self,
            path: path.to_path_buf(),
            cursor: std::io::Cursor::new(Vec::new()),
        }))
    }
}

impl Confined for FakeHost {
    fn read_confined(
        &self,
        folder: &Path,
        name: &str,
        offset: u64,
        limit: u64,
    ) -> std::io::Result<super::confined::Bounded> {
        let mut bytes = self.read_file(&folder.join(name))?;
        bytes.drain(..(offset as usize).min(bytes.len()));
        let cut = bytes.len() as u64 > limit;
        bytes.truncate(limit as usize);
        Ok(super::confined::Bounded { bytes, cut })
    }
    fn write_confined(&self, folder: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.write_file(&folder.join(name), bytes)
    }
    fn append_confined(&self, folder: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.append_file(&folder.join(name), bytes, false)
    }
    fn confined_len(&self, folder: &Path, name: &str) -> Option<u64> {
        self.read_file(&folder.join(name))
            .ok()
            .map(|bytes| bytes.len() as u64)
    }
    fn write_export(
        &self,
        folder: &Path,
        folder_mode: Option<u32>,
        files: &[ExportFile],
        owner: Option<(u32, u32)>,
    ) -> Result<(), ExportError> {
        let mut exported = self.exported.borrow_mut();
        if let Some(mode) = folder_mode {
            exported.insert(folder.to_path_buf(), (mode, owner));
        }
        self.paths.borrow_mut().insert(folder.to_path_buf());
        for file in files {
            let path = folder.join(&file.name);
            exported.insert(path.clone(), (file.mode, owner));
            self.files.borrow_mut().insert(path, file.bytes.clone());
        }
        Ok(())
    }
    /// The files under the source in `files`; a source that is neither a file there nor
    /// a path in `paths` is missing.
    fn sync_archive(&self, sync: &SyncPlan, owner: (u32, u32)) -> Result<SyncArchive, InputError> {
        let files: Vec<(String, Vec<u8>)> = self
            .files
            .borrow()
            .iter()
            .filter_map(|(path, bytes)| {
                let relative = path.strip_prefix(&sync.source).ok()?;
                Some((relative.display().to_string(), bytes.clone()))
            })
            .collect();
        if files.is_empty() && !self.exists(&sync.source) {
            return Err(tfimg_core::plan::sync::missing_source(
                &sync.text,
                &sync.source,
            ));
        }
        Ok(SyncArchive::from_files(sync.name(), &files, owner))
    }
    fn unpacker(&self, destination: &Path) -> Box<dyn Unpacker + '_> {
        Box::new(FakeUnpacker {
            host: self,
            destination: destination.to_path_buf(),
            tar: Vec::new(),
        })
    }
}

impl Processes for FakeHost {
    fn spawn_detached(&self, args: &[String], log: &Path, engine: &str) -> std::io::Result<u32> {
        self.spawned
            .borrow_mut()
            .push((args.to_vec(), log.to_path_buf(), engine.to_string()));
        Ok(4242)
    }
    fn executable(&self) -> std::io::Result<std::path::PathBuf> {
        Ok(std::path::PathBuf::from("/usr/local/bin/tfimg"))
    }
    fn spawn_prune(&self, name: &str, key: &str, _engine: &str) -> bool {
        self.prunes
            .borrow_mut()
            .push((name.to_string(), key.to_string()));
        true
    }
}

/// Collects a tar, then writes its regular files into the host's `files` (the top entry
/// stripped, as the real unpacker does) and skips links with a note.
struct FakeUnpacker<'a> {
    host: &'a FakeHost,
    destination: PathBuf,
    tar: Vec<u8>,
}

impl Unpacker for FakeUnpacker<'_> {
    fn feed(&mut self, chunk: bytes::Bytes) -> std::ops::ControlFlow<()> {
        self.tar.extend_from_slice(&chunk);
        std::ops::ControlFlow::Continue(())
    }

    fn finish(self: Box<Self>) -> std::io::Result<UnpackSummary> {
        let mut summary = UnpackSummary::default();
        let mut archive = tar::Archive::new(self.tar.as_slice());
        for entry in archive.entries()? {
            let mut entry = entry?;
            let path = entry.path()?.into_owned();
            let rest: PathBuf = path.components().skip(1).collect();
            match entry.header().entry_type() {
                tar::EntryType::Regular => {}
                tar::EntryType::Symlink => {
                    summary.note(format!("`{}` is a link: skipped", rest.display()));
                    continue;
                }
                _ => continue,
            }
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes)?;
            let local = match rest.as_os_str().is_empty() {
                true => self.destination.clone(),
                false => self.destination.join(rest),
            };
            match self.host.files.borrow_mut().insert(local, bytes.clone()) {
                None => summary.new += 1,
                Some(old) if old == bytes => summary.unchanged += 1,
                Some(_) => summary.changed += 1,
            }
        }
        Ok(summary)
    }
}

/// A file being written through the fake host: its bytes land in `files` at every sync
/// and when it is dropped.
struct FakeFile<'a> {
    host: &'a FakeHost,
    path: PathBuf,
    cursor: std::io::Cursor<Vec<u8>>,
}

impl std::io::Write for FakeFile<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.cursor.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for FakeFile<'_> {
    fn seek(&mut self, position: std::io::SeekFrom) -> std::io::Result<u64> {
        self.cursor.seek(position)
    }
}

impl OutputFile for FakeFile<'_> {
    fn sync(&mut self) -> std::io::Result<()> {
        let bytes = self.cursor.get_ref().clone();
        self.host
            .files
            .borrow_mut()
            .insert(self.path.clone(), bytes);
        Ok(())
    }
}

impl Drop for FakeFile<'_> {
    fn drop(&mut self) {
        // A file removed while it was open stays removed.
        if let Some(stored) = self.host.files.borrow_mut().get_mut(&self.path) {
            *stored = self.cursor.get_ref().clone();
        }
    }
}
