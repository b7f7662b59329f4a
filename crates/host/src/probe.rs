//! Readiness probes on 127.0.0.1: an HTTP status, an SSH banner. Just enough of each
//! protocol to know a service answers; no client library needed.

/// Seconds a probe may take before it counts as no answer.
const PROBE_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A connection to 127.0.0.1:`port` that has sent `GET path` (HTTP/1.0, closed after the
/// answer).
async fn get(port: u16, path: &str) -> Option<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let request =
        format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    Some(stream)
}

/// The HTTP status of `GET path` on 127.0.0.1:`port`, or `None` when nothing answers.
/// (Just enough HTTP for a readiness probe; no client library needed.)
pub async fn http_status(port: u16, path: &str) -> Option<u16> {
    use tokio::io::AsyncReadExt;
    let probe = async {
        let mut stream = get(port, path).await?;
        let mut head = vec![0u8; 64];
        let read = stream.read(&mut head).await.ok()?;
        let line = String::from_utf8_lossy(&head[..read]).into_owned();
        line.split_whitespace().nth(1)?.parse().ok()
    };
    tokio::time::timeout(PROBE_LIMIT, probe)
        .await
        .ok()
        .flatten()
}

/// The status and body of `GET path` on 127.0.0.1:`port` (at most `MAX_ANSWER` bytes of
/// answer), or `None` when nothing answers a whole HTTP/1.0 answer in 5 s.
pub async fn http_get(port: u16, path: &str) -> Option<(u16, Vec<u8>)> {
    use tokio::io::AsyncReadExt;
    const MAX_ANSWER: u64 = 1024 * 1024;
    let probe = async {
        let mut answer = Vec::new();
        get(port, path)
            .await?
            .take(MAX_ANSWER)
            .read_to_end(&mut answer)
            .await
            .ok()?;
        let split = answer.windows(4).position(|window| window == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&answer[..split]).into_owned();
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        Some((status, answer[split + 4..].to_vec()))
    };
    tokio::time::timeout(PROBE_LIMIT, probe)
        .await
        .ok()
        .flatten()
}

/// Whether an HTTP/2 server (gRPC's) on 127.0.0.1:`port` answers the client's connection
/// preface with its SETTINGS frame, as RFC 9113 (3.4) has every server do first.
pub async fn http2_settings(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    const SETTINGS: [u8; 9] = [0, 0, 0, 4, 0, 0, 0, 0, 0];
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        stream
            .write_all(&[PREFACE, &SETTINGS].concat())
            .await
            .ok()?;
        let mut head = [0u8; 9];
        stream.read_exact(&mut head).await.ok()?;
        Some(head[3] == 4)
    };
    tokio::time::timeout(PROBE_LIMIT, probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// Whether an SSH server on 127.0.0.1:`port` sends its banner.
pub async fn ssh_banner(port: u16) -> bool {
    use tokio::io::AsyncReadExt;
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let mut banner = [0u8; 8];
        stream.read_exact(&mut banner).await.ok()?;
        Some(banner.starts_with(b"SSH-2.0"))
    };
    tokio::time::timeout(PROBE_LIMIT, probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}
