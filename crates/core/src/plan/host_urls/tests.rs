use super::*;

const PORTS: &[(u16, u16)] = &[(8888, 41115), (6006, 36789)];

#[test]
fn the_servers_own_addresses_become_the_host_s() {
    let jupyter = "[I 2026-11-28 10:37:10.388 ServerApp] Jupyter Server 2.18.2 is running at:\n\
                   [I 2026-11-28 10:37:10.388 ServerApp] http://0468e19bf307:8888/lab?token=...\n\
                   [I 2026-11-28 10:37:10.388 ServerApp]     http://127.0.0.1:8888/lab?token=...\n";
    assert_eq!(
        rewrite(jupyter, PORTS),
        "[I 2026-11-28 10:37:10.388 ServerApp] Jupyter Server 2.18.2 is running at:\n\
         [I 2026-11-28 10:37:10.388 ServerApp] http://127.0.0.1:41115/lab?token=...\n\
         [I 2026-11-28 10:37:10.388 ServerApp]     http://127.0.0.1:41115/lab?token=...\n"
    );
    assert_eq!(
        rewrite(
            "TensorBoard 2.9.1 at http://0.0.0.0:6006/ (Press CTRL+C to quit)",
            PORTS
        ),
        "TensorBoard 2.9.1 at http://127.0.0.1:36789/ (Press CTRL+C to quit)"
    );
    assert_eq!(
        rewrite("http://localhost:6006 and http://[::]:8888/x", PORTS),
        "http://127.0.0.1:36789 and http://127.0.0.1:41115/x"
    );
}

#[test]
fn other_addresses_are_left_alone() {
    for text in [
        "see http://example.com:8888/ and https://github.com/tensorflow/tensorboard/issues/4784",
        "http://127.0.0.1:9999/ http://10.0.0.2:8888/ http://user@host:8888/",
        "http://127.0.0.1:8888x/ http:// http://:8888/",
    ] {
        assert_eq!(rewrite(text, PORTS), text);
    }
}

#[test]
fn a_url_split_between_chunks_is_found_and_a_partial_line_waits() {
    let mut urls = HostUrls {
        ports: PORTS.to_vec(),
        pending: Vec::new(),
    };
    assert_eq!(urls.feed(b"first\nat http://0.0.0"), b"first\n");
    assert_eq!(
        urls.feed(b".0:6006/ (quit)\nlast"),
        b"at http://127.0.0.1:36789/ (quit)\n"
    );
    assert_eq!(urls.finish(), b"last");
    // Bytes that are not text pass as they are; a line without an end is not held forever.
    assert_eq!(
        urls.feed(b"\xff http://0.0.0.0:6006/\n"),
        b"\xff http://0.0.0.0:6006/\n"
    );
    let long = vec![b'='; LONGEST_LINE + 1];
    assert_eq!(urls.feed(&long), long);
}
