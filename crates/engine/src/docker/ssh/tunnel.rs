//! Port forwards through ssh. A forward is added to (and cancelled on) a running master
//! through its control socket (`ssh -S CTL -O forward -L ...`). A detached container gets
//! a master of its own that outlives tfimg: `ssh -f -M -S CTL ... docker wait ID` goes to
//! the background once authenticated and ends when the container stops or is removed
//! (the wait returns), taking its forwards and its socket with it. Any later tfimg can
//! end it: `-O exit` on its socket, else SIGTERM to its pid, but only while that pid's
//! command line still names the socket (never a recycled pid).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::argv::{self, ControlOp};
use super::problem::{self, Phase, SshProblem};
use super::{detach, stop, Session};

/// How long a control question (`-O forward`, `-O exit`, ...) may take.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a detached master may take to end after `-O exit` or SIGTERM.
const END_TIMEOUT: Duration = Duration::from_secs(2);

impl Session {
    /// The master's process id.
    pub fn master_pid(&self) -> u32 {
        self.master.lock().map(|master| master.id()).unwrap_or(0)
    }

    /// Asks the master behind `control` (this session's or a detached one); ssh's stderr
    /// when it refused or could not be asked.
    pub async fn ask(&self, control: &Path, op: ControlOp<'_>) -> Result<String, String> {
        let mut process = std::process::Command::new(&self.command.program);
        process
            .args(argv::control_args(&self.command, &self.target, control, op))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        detach(&mut process, libc::SIGKILL);
        let mut process = tokio::process::Command::from(process);
        process.kill_on_drop(true);
        let output = match tokio::time::timeout(CONTROL_TIMEOUT, process.output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => {
                return Err(format!("cannot run `{}`: {error}", self.command.program))
            }
            Err(_) => {
                return Err(format!(
                    "ssh did not answer within {} s",
                    CONTROL_TIMEOUT.as_secs()
                ))
            }
        };
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if output.status.success() {
            Ok(stderr)
        } else {
            Err(stderr)
        }
    }

    /// Starts a detached master in this session's control folder (see the module), for the
    /// container `id`; its control socket and pid once it answers.
    pub async fn open_detached(
        &self,
        id: &str,
        until_stopped: bool,
    ) -> Result<(PathBuf, u32), SshProblem> {
        let folder = self.control.parent().unwrap_or(Path::new("/tmp"));
        let name = format!("t-{}", random_hex());
        let control = folder.join(&name);
        let log = folder.join(format!("{name}.log"));
        let wait_for = until_stopped.then_some(id);
        let mut process = std::process::Command::new(&self.command.program);
        process
            .args(argv::detached_args(
                &self.command,
                &self.target,
                &control,
                &log,
                wait_for,
            ))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // The master forks away from this process once authenticated: the signal only
        // covers tfimg dying before that.
        detach(&mut process, libc::SIGTERM);
        let mut parent = process
            .spawn()
            .map_err(|error| problem::cannot_start(&self.command.program, &error))?;
        let outcome = self.authenticated(&mut parent, &log).await;
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        // The master keeps its log open; the name is not needed.
        let _ = std::fs::remove_file(&log);
        outcome?;
        let (Ok(checked) | Err(checked)) = self.ask(&control, ControlOp::Check).await;
        match argv::parse_check_pid(&checked) {
            Some(pid) => Ok((control, pid)),
            None => {
                let _ = std::fs::remove_file(&control);
                Err(problem::closed(&self.target, &said))
            }
        }
    }

    /// Waits for the `-f` parent to exit (it does once the master is in the background);
    /// its failure classified from the log.
    async fn authenticated(
        &self,
        parent: &mut std::process::Child,
        log: &Path,
    ) -> Result<(), SshProblem> {
        let seconds = self.command.connect_seconds();
        let guard = Duration::from_secs(seconds + 2);
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = parent.try_wait() {
                if status.success() {
                    return Ok(());
                }
                let said = std::fs::read_to_string(log).unwrap_or_default();
                return Err(problem::classify(
                    Phase::Master,
                    &said,
                    status.code(),
                    &self.target,
                    seconds,
                ));
            }
            if started.elapsed() > guard {
                stop(parent);
                return Err(problem::guard_expired(&self.target, seconds));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Ends a detached master (see the module) and removes its socket.
    pub async fn end_detached(&self, control: &Path, pid: u32) {
        if control.exists() {
            let _ = self.ask(control, ControlOp::Exit).await;
        }
        if !wait_until_ended(pid, control).await {
            if let Ok(pid) = i32::try_from(pid) {
                // SAFETY: kill(2) has no memory-safety conditions; the pid was checked to
                // be the master (its command line names the socket) just above.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            wait_until_ended(pid, control).await;
        }
        let _ = std::fs::remove_file(control);
    }
}

/// Waits up to `END_TIMEOUT` for the master to end; whether it did.
async fn wait_until_ended(pid: u32, control: &Path) -> bool {
    let deadline = Instant::now() + END_TIMEOUT;
    while Instant::now() < deadline {
        if !master_alive(pid, control) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !master_alive(pid, control)
}

/// Whether `pid` runs and is the ssh master of `control` (its command line names it).
pub fn master_alive(pid: u32, control: &Path) -> bool {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let Ok(cmdline) = std::fs::read(proc.join("cmdline")) else {
        return false;
    };
    let zombie = std::fs::read_to_string(proc.join("stat"))
        .ok()
        .and_then(|stat| {
            let (_, after) = stat.rsplit_once(')')?;
            after.split_whitespace().next().map(|state| state == "Z")
        })
        .unwrap_or(false);
    let control = control.to_string_lossy();
    !zombie
        && cmdline
            .split(|byte| *byte == 0)
            .any(|word| word == control.as_bytes())
}

/// 16 random hex digits for a control socket's name (a detached master's outlives this
/// process, so the pid is no unique part).
pub(super) fn random_hex() -> String {
    tfimg_host::machine::random_hex(8).unwrap_or_else(|_| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_nanos())
            .unwrap_or_default();
        format!("{:016x}", (nanos as u64) ^ u64::from(std::process::id()))
    })
}
