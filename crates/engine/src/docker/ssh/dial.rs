//! One API connection through the master: `ssh -S CTL … docker system dial-stdio`, its
//! stdout read and its stdin written as a socket (`DialStream`), and the pooled HTTP
//! client bollard sends every request through (`transport`). A dial that fails keeps
//! its stderr, so the cause ("docker: not found", the daemon's socket refused) reaches
//! the message.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::problem::{self, Phase, SshProblem};
use super::{argv, detach, read_tail, Session, SharedTail};

/// Idle API connections kept per process, and how long: each is a channel and a remote
/// `docker` process.
const IDLE_CONNECTIONS: usize = 2;
const IDLE_SECONDS: u64 = 30;

impl Session {
    /// A new channel running `docker system dial-stdio` (waits while `CHANNELS` are open).
    pub(crate) async fn dial(self: &Arc<Self>) -> Result<DialStream, SshProblem> {
        // Without its master, ssh would quietly connect on its own: say what happened.
        if !self.alive() {
            return Err(self
                .problem()
                .unwrap_or_else(|| problem::closed(&self.target, "")));
        }
        let permit = Arc::clone(&self.channels)
            .acquire_owned()
            .await
            .map_err(|_| problem::closed(&self.target, ""))?;
        let mut process = tokio::process::Command::new(&self.command.program);
        process
            .args(argv::dial_args(&self.command, &self.target, &self.control))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        detach(process.as_std_mut(), libc::SIGKILL);
        let mut child = process
            .spawn()
            .map_err(|error| problem::cannot_start(&self.command.program, &error))?;
        let stderr = SharedTail::default();
        let reader = child.stderr.take().map(|mut pipe| {
            let tail = Arc::clone(&stderr);
            tokio::spawn(async move {
                let mut buffer = [0u8; 1024];
                while let Ok(read) = pipe.read(&mut buffer).await {
                    if read == 0 {
                        break;
                    }
                    if let Ok(mut tail) = tail.lock() {
                        tail.push(&buffer[..read]);
                    }
                }
            })
        });
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(problem::closed(&self.target, "no pipes to ssh"));
        };
        Ok(DialStream {
            stdin: Some(stdin),
            stdout,
            child,
            stderr,
            reader,
            session: Arc::clone(self),
            _permit: permit,
        })
    }
}

/// A dial's stdout and stdin as one byte stream.
pub(crate) struct DialStream {
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    child: Child,
    stderr: SharedTail,
    reader: Option<tokio::task::JoinHandle<()>>,
    session: Arc<Session>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl DialStream {
    /// Why the remote end closed, if it failed: waits up to 1 s for the dial to exit, then
    /// reads its stderr. `None`: it ended cleanly (or still runs) and said nothing.
    pub(crate) async fn failure(mut self) -> Option<SshProblem> {
        self.stdin = None;
        let status = tokio::time::timeout(Duration::from_secs(1), self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        if let Some(reader) = self.reader.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
        }
        let said = !read_tail(&self.stderr).trim().is_empty();
        if !said && status.is_none_or(|status| status.success()) {
            return None;
        }
        let problem = self.classify(status.and_then(|status| status.code()));
        self.session.record(problem.clone());
        Some(problem)
    }

    fn classify(&self, status: Option<i32>) -> SshProblem {
        problem::classify(
            Phase::Dial,
            &read_tail(&self.stderr),
            status,
            &self.session.target,
            self.session.command.connect_seconds(),
        )
    }
}

impl Drop for DialStream {
    /// A dial that failed while in use leaves its cause for the error message.
    fn drop(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            if !status.success() && !read_tail(&self.stderr).trim().is_empty() {
                self.session.record(self.classify(status.code()));
            }
        }
    }
}

impl AsyncRead for DialStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stdout).poll_read(context, buffer)
    }
}

impl AsyncWrite for DialStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.stdin.as_mut() {
            Some(stdin) => Pin::new(stdin).poll_write(context, bytes),
            None => Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into())),
        }
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.stdin.as_mut() {
            Some(stdin) => Pin::new(stdin).poll_flush(context),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Closing stdin is the half-close dial-stdio passes on to the daemon.
    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        _context: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.stdin = None;
        Poll::Ready(Ok(()))
    }
}

impl Connection for DialStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

/// hyper's connector: every new connection is a dial.
#[derive(Clone)]
pub(crate) struct DialStdio(pub(crate) Arc<Session>);

impl tower_service::Service<http::Uri> for DialStdio {
    type Response = TokioIo<DialStream>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _context: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _destination: http::Uri) -> Self::Future {
        let session = Arc::clone(&self.0);
        Box::pin(async move {
            match session.dial().await {
                Ok(stream) => Ok(TokioIo::new(stream)),
                Err(problem) => {
                    session.record(problem.clone());
                    Err(std::io::Error::other(problem.cause))
                }
            }
        })
    }
}

/// bollard over a pooled HTTP/1 client whose connections are dials, kept idle a while so
/// a command's many requests share a few channels.
pub(crate) fn client(
    session: Arc<Session>,
    timeout_seconds: u64,
    version: &bollard::ClientVersion,
) -> Result<bollard::Docker, bollard::errors::Error> {
    let client = Arc::new(
        hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(IDLE_SECONDS))
            .pool_timer(TokioTimer::new())
            .pool_max_idle_per_host(IDLE_CONNECTIONS)
            .build(DialStdio(session)),
    );
    let transport = move |request: bollard::BollardRequest| {
        let client = Arc::clone(&client);
        async move {
            client
                .request(request)
                .await
                .map_err(bollard::errors::Error::from)
        }
    };
    // The address only names the requests' Host; every connection is a dial.
    bollard::Docker::connect_with_custom_transport(
        transport,
        Some("http://docker"),
        timeout_seconds,
        version,
    )
}
