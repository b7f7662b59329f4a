//! Container output as the daemon streams it: each chunk handed on once, on the stream
//! it came on, even when a follow stream is read again from the start.

use crate::OutputChunk;

/// Hands `sink` the part of `chunk` beyond `skip` bytes of its stream (stdout, stderr),
/// and counts what the stream has carried in `seen`.
pub(super) fn hand_over(
    chunk: bollard::container::LogOutput,
    seen: &mut (usize, usize),
    skip: (usize, usize),
    sink: &mut impl FnMut(OutputChunk),
) {
    let (is_stderr, message) = match chunk {
        bollard::container::LogOutput::StdErr { message } => (true, message),
        other => (false, other.into_bytes()),
    };
    let (count, already) = if is_stderr {
        (&mut seen.1, skip.1)
    } else {
        (&mut seen.0, skip.0)
    };
    let start = *count;
    *count += message.len();
    if *count <= already {
        return;
    }
    let fresh = message[already.saturating_sub(start)..].to_vec();
    sink(if is_stderr {
        OutputChunk::Stderr(fresh)
    } else {
        OutputChunk::Stdout(fresh)
    });
}
