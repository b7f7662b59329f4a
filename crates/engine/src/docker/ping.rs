//! The API version a daemon speaks, asked the way the docker CLI asks it: `HEAD /_ping`,
//! whose answer carries an `Api-Version` header. It is cheaper for the daemon than
//! `/version` (which asks containerd and runc for their versions), and every command
//! starts with it.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The daemon's API version, or `None` when it cannot be asked this way or does not say
/// (the caller then negotiates through `/version`).
pub async fn api_version(endpoint: &str, timeout: Duration) -> Option<bollard::ClientVersion> {
    let asked = async {
        if let Some(path) = endpoint.strip_prefix("unix://") {
            ask(tokio::net::UnixStream::connect(path).await.ok()?).await
        } else {
            let address = endpoint
                .strip_prefix("tcp://")
                .or_else(|| endpoint.strip_prefix("http://"))?
                .trim_end_matches('/');
            ask(tokio::net::TcpStream::connect(address).await.ok()?).await
        }
    };
    tokio::time::timeout(timeout, asked).await.ok().flatten()
}

pub(super) async fn ask(
    mut stream: impl AsyncRead + AsyncWrite + Unpin,
) -> Option<bollard::ClientVersion> {
    stream
        .write_all(b"HEAD /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    // A HEAD answer is headers only; they fit in a few hundred bytes.
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    parse(&String::from_utf8_lossy(&head))
}

/// The `Api-Version` header of a `200` answer: `1.41` → 1.41.
fn parse(head: &str) -> Option<bollard::ClientVersion> {
    let mut lines = head.split("\r\n");
    let status = lines.next()?;
    if status.split_whitespace().nth(1) != Some("200") {
        return None;
    }
    let value = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("api-version")
            .then(|| value.trim())
    })?;
    let (major, minor) = value.split_once('.')?;
    Some(bollard::ClientVersion {
        major_version: major.parse().ok()?,
        minor_version: minor.parse().ok()?,
    })
}

#[cfg(test)]
mod tests;
