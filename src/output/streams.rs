//! This process's stdout and stderr: the one way tfimg writes to them (`outln!`,
//! `errln!`, `out`, `err`; tests/layers.rs refuses `println!` and its kin elsewhere).
//!
//! A reader that went away (a closed pipe: `tfimg ps | head -1`, `tfimg logs -f x |
//! grep -m1 ready`, `tfimg ps 2>&1 | true`) ends tfimg as it ends `yes`, git or the docker
//! CLI: killed by SIGPIPE, which a shell reports as 141, with nothing printed. A command
//! that cleans up what it started when interrupted (`run`, `up`, `sweep`, `build`,
//! `serve`, `save`, `load`) takes a closed stream as an interrupt first, as it takes a
//! closed terminal (SIGHUP), and ends so once it has cleaned up.
//!
//! Why not SIGPIPE's default action for the whole process: Rust ignores SIGPIPE so that a
//! write to a closed socket or child pipe (the Docker socket, ssh's standard input) is
//! an error tfimg reports, not a silent death; only these two streams end tfimg.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a write to stdout or stderr found its reader gone.
static READER_GONE: AtomicBool = AtomicBool::new(false);

/// `println!` through `out`: a closed stdout ends tfimg as a pipe expects.
macro_rules! outln {
    () => {
        $crate::output::streams::out_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::streams::out_line(format_args!($($arg)*))
    };
}

/// `eprintln!` through `err`: a closed stderr ends tfimg as a pipe expects.
macro_rules! errln {
    () => {
        $crate::output::streams::err_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::streams::err_line(format_args!($($arg)*))
    };
}

/// Writes `bytes` whole to stdout and flushes it. A closed stdout is not an error here
/// (see the module's header); any other failure (a full disk behind `> file`) is.
pub fn out(bytes: &[u8]) -> std::io::Result<()> {
    write(&mut std::io::stdout().lock(), bytes)
}

/// Writes `bytes` whole to stderr. Nothing to report a failure on: it is dropped.
pub fn err(bytes: &[u8]) {
    let _ = write(&mut std::io::stderr().lock(), bytes);
}

/// `outln!`'s line: a failure other than a closed stdout is dropped, as `println!`
/// would panic on it.
pub fn out_line(line: std::fmt::Arguments<'_>) {
    let _ = out(format!("{line}\n").as_bytes());
}

/// `errln!`'s line.
pub fn err_line(line: std::fmt::Arguments<'_>) {
    err(format!("{line}\n").as_bytes());
}

/// `bytes` written to `stream` and flushed; a reader that went away is `reader_gone`.
pub fn write(stream: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    match stream.write_all(bytes).and_then(|()| stream.flush()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            reader_gone();
            Ok(())
        }
        other => other,
    }
}

/// Stderr for tracing's events, through `err`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingWriter;

impl Write for TracingWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        err(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The reader of stdout or stderr went away. The first time: a command that cleans up
/// is interrupted (it ends at `end_if_reader_gone`); any other ends now.
pub fn reader_gone() {
    if READER_GONE.swap(true, Ordering::SeqCst) {
        return;
    }
    if !crate::host::machine::interrupt_from_within() {
        end_as_a_pipe_expects();
    }
}

/// At tfimg's end: when a reader went away, tfimg ends as a pipe expects instead of
/// with its exit code.
pub fn end_if_reader_gone() {
    if READER_GONE.load(Ordering::SeqCst) {
        end_as_a_pipe_expects();
    }
}

/// Killed by SIGPIPE, as `yes | true` is (141 in a shell).
fn end_as_a_pipe_expects() -> ! {
    // SAFETY: signal(2) and raise(3) have no memory-safety preconditions; SIGPIPE's
    // default action ends the whole process, whichever thread raises it.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Not reached; the same status where a signal could not be raised.
    std::process::exit(141)
}
