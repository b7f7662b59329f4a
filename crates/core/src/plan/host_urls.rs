//! The addresses a service prints about itself, as this machine reaches them. Jupyter's
//! log names its in-container addresses (`http://127.0.0.1:8888/lab?token=...` and
//! `http://<container host name>:8888/...`) and TensorBoard its bind address
//! (`http://0.0.0.0:6006/`); none of them answers on the host, where tfimg published the
//! ports elsewhere. The container cannot know where (tfimg chooses the host ports, moves
//! them off taken ones, and a remote engine's come home through tunnels), so tfimg, which
//! does, rewrites them in the output it shows: a URL whose host is the container's own
//! (loopback, any-address, or a bare host name) and whose port is a published container
//! port becomes `http://127.0.0.1:<host port>`, as tfimg's own lines print it. Whole
//! lines only, so a URL split between two chunks is still found. Pure: bytes in, bytes out.

use super::ports::PortPlan;

/// A partial line longer than this is passed on as it is (a progress bar without line
/// ends must not be held back).
const LONGEST_LINE: usize = 64 * 1024;

/// One stream's rewriter: complete lines out, the rest kept until its line ends.
#[derive(Debug, Clone, Default)]
pub struct HostUrls {
    /// (container port, host port) of every published port.
    ports: Vec<(u16, u16)>,
    pending: Vec<u8>,
}

impl HostUrls {
    pub fn new(ports: &[PortPlan]) -> HostUrls {
        HostUrls {
            ports: ports
                .iter()
                .map(|port| (port.container, port.host))
                .collect(),
            pending: Vec::new(),
        }
    }

    /// The complete lines of what has come so far, rewritten; a partial line waits for its
    /// end (unless it is already longer than `LONGEST_LINE`).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(bytes);
        let Some(last) = self.pending.iter().rposition(|&byte| byte == b'\n') else {
            if self.pending.len() > LONGEST_LINE {
                return std::mem::take(&mut self.pending);
            }
            return Vec::new();
        };
        let rest = self.pending.split_off(last + 1);
        let complete = std::mem::replace(&mut self.pending, rest);
        self.rewrite(&complete)
    }

    /// What is left when the stream ends, rewritten.
    pub fn finish(&mut self) -> Vec<u8> {
        let rest = std::mem::take(&mut self.pending);
        self.rewrite(&rest)
    }

    fn rewrite(&self, bytes: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(bytes) {
            Ok(text) if !self.ports.is_empty() => rewrite(text, &self.ports).into_bytes(),
            _ => bytes.to_vec(),
        }
    }
}

/// `text` with every `http://` URL of the container's own addresses on a published port
/// pointed at this machine's.
pub fn rewrite(text: &str, ports: &[(u16, u16)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("http://") {
        let (before, url) = rest.split_at(at + "http://".len());
        out.push_str(before);
        let end = url
            .find(|c: char| c == '/' || c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(url.len());
        let authority = &url[..end];
        match host_port(authority, ports) {
            Some(port) => out.push_str(&format!("127.0.0.1:{port}")),
            None => out.push_str(authority),
        }
        rest = &url[end..];
    }
    out.push_str(rest);
    out
}

/// The host port for `authority` (`host:port`) when its host is the container's own and
/// its port a published one.
fn host_port(authority: &str, ports: &[(u16, u16)]) -> Option<u16> {
    let (host, port) = authority.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let own = matches!(
        host,
        "127.0.0.1" | "localhost" | "0.0.0.0" | "[::]" | "[::1]"
    ) || (!host.is_empty()
        && !host.contains(['.', '[', ']', '@'])
        && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    let (_, published) = ports.iter().find(|(container, _)| *container == port)?;
    own.then_some(*published)
}

#[cfg(test)]
mod tests;
