//! The client → server boundary for connections, as the Python server kept it (its
//! `rest.py` says each limit and why; the same figures and words here):
//!   - a request's head arrives whole within HEADER_SECONDS (408 after it, a connection
//!     that sent nothing is just closed) and takes at most MAX_HEADER_BYTES (431);
//!   - a request whose head is in, finding CONNECTIONS open, closes those waiting on their
//!     client that went longest without a byte (`make_room`; 408 for one on its way), and
//!     so does a new connection past OPEN_CONNECTIONS;
//!   - a client that reads nothing of its answer for WRITE_SECONDS loses its connection;
//!   - a kept-alive connection idle for KEEP_ALIVE_SECONDS is closed.
//!
//! hyper parses the requests; `Watched` is the connection it reads and writes, which sees
//! every byte and when a head ends, and `Registry` holds every connection's state for the
//! watchdog and for making room. Bodies' limits are the handler's (main.rs) and, for what
//! is passed on, the Python server's.

use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

pub const HEADER_SECONDS: u64 = 10;
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
pub const CONNECTIONS: usize = 1024;
pub const OPEN_CONNECTIONS: usize = 4 * CONNECTIONS;
pub const WRITE_SECONDS: u64 = 30;
pub const KEEP_ALIVE_SECONDS: u64 = 60;

/// Where a connection is.
const IDLE: u8 = 0; // waiting for a request (no byte of one yet)
const HEAD: u8 = 1; // a request's head arriving
const BODY: u8 = 2; // its head in, its body being read here
const ANSWERING: u8 = 3; // the request is being answered
const CLOSED: u8 = 4;

pub struct State {
    id: u64,
    stream: Arc<TcpStream>,
    since: Instant,
    /// Milliseconds since `since`: the client's last byte, the start of the request's
    /// head, and when writing the answer blocked (0: it is not blocked).
    last_heard: AtomicU64,
    head_started: AtomicU64,
    write_blocked: AtomicU64,
    phase: AtomicU8,
    head_bytes: AtomicUsize,
    /// The last bytes of the head seen so far (its end, `\r\n\r\n`, may span two reads).
    tail: AtomicU64,
    served: AtomicU64,
}

impl State {
    fn now(&self) -> u64 {
        self.since.elapsed().as_millis() as u64 + 1
    }

    /// When the client's last byte came (or the connection opened).
    fn last_byte(&self) -> Instant {
        self.since + Duration::from_millis(self.last_heard.load(Ordering::SeqCst))
    }

    /// The request's head is in and it is being read (`BODY`) or answered.
    pub fn set_phase_answering(&self) {
        let _ = self
            .phase
            .compare_exchange(BODY, ANSWERING, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The answer is written whole: the connection waits for its next request.
    pub fn answered(&self) {
        self.served.fetch_add(1, Ordering::SeqCst);
        self.head_bytes.store(0, Ordering::SeqCst);
        self.tail.store(0, Ordering::SeqCst);
        let _ = (self.phase).fetch_update(Ordering::SeqCst, Ordering::SeqCst, |phase| {
            matches!(phase, BODY | ANSWERING).then_some(IDLE)
        });
        self.last_heard.store(self.now(), Ordering::SeqCst);
    }

    /// The bytes just read, while a head is due or arriving: counted, and scanned for its
    /// end. Past MAX_HEADER_BYTES the client is answered 431.
    fn heard(&self, bytes: &[u8]) {
        let now = self.now();
        self.last_heard.store(now, Ordering::SeqCst);
        let phase = self.phase.load(Ordering::SeqCst);
        if phase != IDLE && phase != HEAD {
            return;
        }
        if bytes.is_empty() {
            return;
        }
        if phase == IDLE {
            self.head_started.store(now, Ordering::SeqCst);
            self.phase.store(HEAD, Ordering::SeqCst);
        }
        let mut tail = self.tail.load(Ordering::SeqCst);
        let mut counted = 0;
        for byte in bytes {
            counted += 1;
            tail = (tail << 8) | *byte as u64;
            if tail & 0xFFFF_FFFF == 0x0D0A_0D0A {
                self.phase.store(BODY, Ordering::SeqCst);
                break;
            }
        }
        self.tail.store(tail, Ordering::SeqCst);
        let total = self.head_bytes.fetch_add(counted, Ordering::SeqCst) + counted;
        if total > MAX_HEADER_BYTES && self.phase.load(Ordering::SeqCst) == HEAD {
            self.refuse(
                Some(431),
                &format!(
                    "the request's headers are over the server's limit of {MAX_HEADER_BYTES} bytes"
                ),
            );
        }
    }

    /// Whether the connection waits on its client: for a request, a head on its way, or
    /// the rest of a body read here.
    fn waits_for_client(&self) -> bool {
        matches!(self.phase.load(Ordering::SeqCst), IDLE | HEAD | BODY)
    }

    /// Answers `status` with `message` (none: just closes) and closes the connection.
    fn refuse(&self, status: Option<u16>, message: &str) {
        if self.phase.swap(CLOSED, Ordering::SeqCst) == CLOSED {
            return;
        }
        if let Some(status) = status {
            let _ = self.stream.try_write(&raw_answer(status, message));
        }
        // SAFETY: shutdown(2) on this connection's own socket, still open (held by `stream`).
        unsafe {
            libc::shutdown(self.stream.as_raw_fd(), libc::SHUT_RDWR);
        }
    }
}

/// A whole HTTP/1.1 error answer that closes the connection, for the limits met before
/// there is a request to answer.
pub fn raw_answer(status: u16, message: &str) -> Vec<u8> {
    let reason = match status {
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let payload = serde_json::json!({ "error": message }).to_string();
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{payload}",
        payload.len()
    )
    .into_bytes()
}

/// Every open connection.
#[derive(Default)]
pub struct Registry {
    connections: Mutex<HashMap<u64, Arc<State>>>,
    next: AtomicU64,
}

impl Registry {
    /// A new connection's state; past OPEN_CONNECTIONS it makes room.
    pub fn open(&self, stream: Arc<TcpStream>) -> Arc<State> {
        let state = Arc::new(State {
            id: self.next.fetch_add(1, Ordering::SeqCst),
            stream,
            since: Instant::now(),
            last_heard: AtomicU64::new(1),
            head_started: AtomicU64::new(0),
            write_blocked: AtomicU64::new(0),
            phase: AtomicU8::new(IDLE),
            head_bytes: AtomicUsize::new(0),
            tail: AtomicU64::new(0),
            served: AtomicU64::new(0),
        });
        let count = {
            let mut connections = self.connections.lock().unwrap();
            connections.insert(state.id, state.clone());
            connections.len()
        };
        if count > OPEN_CONNECTIONS {
            self.make_room(&state, count - OPEN_CONNECTIONS);
        }
        state
    }

    pub fn close(&self, state: &State) {
        self.connections.lock().unwrap().remove(&state.id);
    }

    /// A request's head is in on `making`: past CONNECTIONS, room is made.
    pub fn request_in(&self, making: &State) {
        let count = self.connections.lock().unwrap().len();
        if count >= CONNECTIONS {
            self.make_room(making, count - CONNECTIONS + 1);
        }
    }

    /// Closes `count` of the connections that wait on their client, those silent longest,
    /// for `making` (408 for a request on its way, an idle one just closed).
    fn make_room(&self, making: &State, count: usize) {
        let (mut waiting, total): (Vec<Arc<State>>, usize) = {
            let connections = self.connections.lock().unwrap();
            let waiting = (connections.values())
                .filter(|state| state.id != making.id && state.waits_for_client())
                .cloned()
                .collect();
            (waiting, connections.len())
        };
        // `last_heard` counts from each connection's own start: the instant is compared.
        waiting.sort_by_key(|state| state.last_byte());
        for state in waiting.into_iter().take(count) {
            let silent = state.last_byte().elapsed().as_secs_f64();
            let on_its_way = state.phase.load(Ordering::SeqCst) != IDLE;
            let message = format!(
                "the server closed this connection for another client: it holds {total} connections, and this request had gone longest without a byte ({silent:.1} s)"
            );
            state.refuse(on_its_way.then_some(408), &message);
            self.close(&state);
        }
    }

    /// Every half second: heads that took too long (408), connections that sent nothing
    /// or idled past keep-alive (closed), answers nobody reads (closed).
    pub async fn watch(self: Arc<Registry>) {
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let all: Vec<Arc<State>> = self.connections.lock().unwrap().values().cloned().collect();
            for state in all {
                let now = state.now();
                let since = |field: &AtomicU64| now.saturating_sub(field.load(Ordering::SeqCst));
                match state.phase.load(Ordering::SeqCst) {
                    HEAD if since(&state.head_started) > HEADER_SECONDS * 1000 => state.refuse(
                        Some(408),
                        &format!("the request's headers did not arrive within {HEADER_SECONDS} s"),
                    ),
                    IDLE if state.served.load(Ordering::SeqCst) == 0
                        && since(&state.last_heard) > HEADER_SECONDS * 1000 =>
                    {
                        state.refuse(None, "")
                    }
                    IDLE if since(&state.last_heard) > KEEP_ALIVE_SECONDS * 1000 => {
                        state.refuse(None, "")
                    }
                    ANSWERING => {
                        let blocked = state.write_blocked.load(Ordering::SeqCst);
                        if blocked != 0 && now.saturating_sub(blocked) > WRITE_SECONDS * 1000 {
                            eprintln!(
                                "tfimg: a client read nothing of its answer for {WRITE_SECONDS} s: its connection is closed"
                            );
                            state.refuse(None, "");
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The connection as hyper reads and writes it, its bytes seen by its `State`.
pub struct Watched {
    pub state: Arc<State>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let state = &self.state;
        loop {
            if state.phase.load(Ordering::SeqCst) == CLOSED {
                return Poll::Ready(Ok(()));
            }
            ready!(state.stream.poll_read_ready(context))?;
            let unfilled = buffer.initialize_unfilled();
            match state.stream.try_read(unfilled) {
                Ok(count) => {
                    state.heard(&unfilled[..count]);
                    buffer.advance(count);
                    return Poll::Ready(Ok(()));
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let state = &self.state;
        loop {
            if state.phase.load(Ordering::SeqCst) == CLOSED {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            match state.stream.poll_write_ready(context) {
                Poll::Pending => {
                    let _ = state.write_blocked.compare_exchange(
                        0,
                        state.now(),
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    );
                    return Poll::Pending;
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Ready(Ok(())) => {}
            }
            match state.stream.try_write(data) {
                Ok(count) => {
                    state.write_blocked.store(0, Ordering::SeqCst);
                    return Poll::Ready(Ok(count));
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: shutdown(2) on this connection's own socket, still open (held by `stream`).
        unsafe {
            libc::shutdown(self.state.stream.as_raw_fd(), libc::SHUT_WR);
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests;
