//! A Docker daemon on another machine, reached as the docker CLI reaches it: the user's
//! own `ssh` (their config, agent, jump hosts and known_hosts) runs `docker system
//! dial-stdio` there, and its stdin and stdout carry the API. One ssh master connection
//! per tfimg process authenticates once; every API connection is a channel of it
//! (`dial`), kept alive in a small pool, so a command pays for one handshake.
//!
//! Every ssh process tfimg starts is in a session of its own (a Ctrl-C in the terminal
//! reaches tfimg, which then cleans up over the transport, not ssh) and dies with tfimg
//! (`PR_SET_PDEATHSIG`); the master ends and its socket goes when the `Session` is dropped.

mod argv;
mod dial;
mod problem;
mod tunnel;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use argv::{control_args, parse_check_pid, ControlOp, SshCommand};
pub(crate) use dial::client;
pub use problem::{last_line, Phase, SshProblem};
pub use tunnel::master_alive;

use crate::endpoint::SshTarget;

/// sshd's `MaxSessions` is 10 by default: tfimg keeps below it on one master.
const CHANNELS: usize = 8;

/// The last few KiB of what a process wrote on stderr (as the docker CLI's commandconn
/// keeps): enough for the message, bounded whatever it writes.
#[derive(Debug, Default)]
pub(crate) struct Tail(String);

impl Tail {
    const LIMIT: usize = 4096;

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.0.push_str(&String::from_utf8_lossy(bytes));
        if self.0.len() > Self::LIMIT {
            let mut cut = self.0.len() - Self::LIMIT;
            while !self.0.is_char_boundary(cut) {
                cut += 1;
            }
            self.0.drain(..cut);
        }
    }

    pub(crate) fn text(&self) -> String {
        self.0.clone()
    }
}

pub(crate) type SharedTail = Arc<Mutex<Tail>>;

fn read_tail(tail: &SharedTail) -> String {
    tail.lock().map(|tail| tail.text()).unwrap_or_default()
}

/// One ssh master connection and what is needed to open channels on it.
pub struct Session {
    target: SshTarget,
    command: SshCommand,
    control: PathBuf,
    master: Mutex<std::process::Child>,
    master_log: SharedTail,
    channels: Arc<tokio::sync::Semaphore>,
    /// The last failure seen on the transport (a dial's, or the master going away).
    problem: Arc<Mutex<Option<SshProblem>>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Session")
            .field("target", &self.target)
            .field("control", &self.control)
            .finish()
    }
}

/// A control socket name no other session has: `s-` and 16 random hex digits (as a
/// detached master's `t-` name), short enough for `sun_path` with ssh's temporary suffix.
fn control_name() -> String {
    format!("s-{}", tunnel::random_hex())
}

impl Session {
    /// Starts the master and waits until its control socket is there (authenticated), it
    /// exits (the classified cause), or the connect timeout and 2 s more pass (stopped).
    pub async fn open(
        target: SshTarget,
        command: SshCommand,
        control_dir: &Path,
    ) -> Result<Arc<Session>, SshProblem> {
        let control = control_dir.join(control_name());
        // A socket left by an earlier process with this pid would turn multiplexing off.
        let _ = std::fs::remove_file(&control);
        let mut process = std::process::Command::new(&command.program);
        process
            .args(argv::master_args(&command, &target, &control))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        detach(&mut process, libc::SIGTERM);
        let mut master = process
            .spawn()
            .map_err(|error| problem::cannot_start(&command.program, &error))?;
        let master_log = SharedTail::default();
        let finished = read_in_background(master.stderr.take(), master_log.clone());
        let guard = Duration::from_secs(command.connect_seconds() + 2);
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = master.try_wait() {
                // Its stderr ends with it (unless a ProxyCommand still holds it).
                let _ = finished.recv_timeout(Duration::from_millis(500));
                let _ = std::fs::remove_file(&control);
                return Err(problem::classify(
                    Phase::Master,
                    &read_tail(&master_log),
                    status.code(),
                    &target,
                    command.connect_seconds(),
                ));
            }
            if control.exists() {
                break;
            }
            if started.elapsed() > guard {
                stop(&mut master);
                let _ = std::fs::remove_file(&control);
                return Err(problem::guard_expired(&target, command.connect_seconds()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tracing::debug!("ssh master for {} on {}", target.host, control.display());
        Ok(Arc::new(Session {
            target,
            command,
            control,
            master: Mutex::new(master),
            master_log,
            channels: Arc::new(tokio::sync::Semaphore::new(CHANNELS)),
            problem: Arc::default(),
        }))
    }

    /// The master's control socket: where later pieces (port forwards) ask it.
    pub fn control(&self) -> &Path {
        &self.control
    }

    pub fn target(&self) -> &SshTarget {
        &self.target
    }

    pub fn command(&self) -> &SshCommand {
        &self.command
    }

    /// Whether the master still runs.
    pub fn alive(&self) -> bool {
        self.master
            .lock()
            .map(|mut master| matches!(master.try_wait(), Ok(None)))
            .unwrap_or(false)
    }

    /// What went wrong on the transport: the master gone, else the last failed dial.
    pub fn problem(&self) -> Option<SshProblem> {
        if !self.alive() {
            let closed = problem::closed(&self.target, &read_tail(&self.master_log));
            self.record(closed.clone());
            return Some(closed);
        }
        self.problem.lock().ok().and_then(|problem| problem.clone())
    }

    /// Runs `program` (a program and its arguments) on the remote host, through the
    /// master; its stdout when it ran and succeeded within `deadline`.
    pub async fn run_program(&self, program: &[&str], deadline: Duration) -> Option<String> {
        if !self.alive() {
            return None;
        }
        let _permit = self.channels.acquire().await.ok()?;
        let mut process = tokio::process::Command::new(&self.command.program);
        process
            .args(argv::program_args(
                &self.command,
                &self.target,
                &self.control,
                program,
            ))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        detach(process.as_std_mut(), libc::SIGKILL);
        let output = tokio::time::timeout(deadline, process.output())
            .await
            .ok()?
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn record(&self, problem: SshProblem) {
        if let Ok(mut slot) = self.problem.lock() {
            *slot = Some(problem);
        }
    }
}

impl Drop for Session {
    /// Ends the master (SIGTERM: ssh closes the connection and unlinks its socket) and
    /// removes the socket in case it could not.
    fn drop(&mut self) {
        if let Ok(mut master) = self.master.lock() {
            stop(&mut master);
        }
        let _ = std::fs::remove_file(&self.control);
    }
}

/// SIGTERM, up to 2 s to exit, then SIGKILL; reaped either way.
fn stop(child: &mut std::process::Child) {
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on our own unreaped child's pid has no memory-safety conditions.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Copies a pipe into `tail` on a thread of its own; the receiver hears when it ended.
fn read_in_background(
    pipe: Option<impl Read + Send + 'static>,
    tail: SharedTail,
) -> std::sync::mpsc::Receiver<()> {
    let (done, finished) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buffer = [0u8; 1024];
            while let Ok(read) = pipe.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                if let Ok(mut tail) = tail.lock() {
                    tail.push(&buffer[..read]);
                }
            }
            let _ = done.send(());
        });
    }
    finished
}

/// A session of its own for the child (no terminal signals reach it; a ProxyCommand it
/// starts cannot grab the terminal), and `signal` when the thread that started it ends
/// (tfimg exiting, however it exits).
fn detach(command: &mut impl std::os::unix::process::CommandExt, signal: i32) {
    // SAFETY: getpid, setsid, prctl and getppid are async-signal-safe and touch no memory
    // of this process.
    let parent = unsafe { libc::getpid() };
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // tfimg died before the line above: nobody would stop this child.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("tfimg exited"));
            }
            Ok(())
        });
    }
}
