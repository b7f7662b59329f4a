use super::*;
use tokio::io::AsyncReadExt;

/// A connection's state on the server's side, and the client's end of it.
async fn connection(registry: &Registry) -> (Arc<State>, TcpStream) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (server, _) = listener.accept().await.unwrap();
    (registry.open(Arc::new(server)), client)
}

#[tokio::test]
async fn a_head_ends_at_its_blank_line_even_across_two_reads() {
    let registry = Registry::default();
    let (state, _client) = connection(&registry).await;
    state.heard(b"POST /v1/models/m:predict HTTP/1.1\r\nHost: x\r\n\r");
    assert_eq!(state.phase.load(Ordering::SeqCst), HEAD);
    state.heard(b"\n{\"instances\": [1]}");
    assert_eq!(state.phase.load(Ordering::SeqCst), BODY);
    // The body's bytes are not the head's.
    assert_eq!(state.head_bytes.load(Ordering::SeqCst), 47);
    state.set_phase_answering();
    state.answered();
    assert_eq!(state.phase.load(Ordering::SeqCst), IDLE);
    state.heard(b"GET /v1/models/m HTTP/1.1\r\n");
    assert_eq!(state.phase.load(Ordering::SeqCst), HEAD);
}

#[tokio::test]
async fn a_head_over_the_limit_is_answered_431_and_closed() {
    let registry = Registry::default();
    let (state, mut client) = connection(&registry).await;
    state.heard(b"GET / HTTP/1.1\r\nX-Big: ");
    state.heard(&vec![b'a'; MAX_HEADER_BYTES]);
    assert_eq!(state.phase.load(Ordering::SeqCst), CLOSED);
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
    assert!(
        answer.ends_with(
            r#"{"error":"the request's headers are over the server's limit of 65536 bytes"}"#
        ),
        "{answer}"
    );
}

#[tokio::test]
async fn room_is_made_by_closing_the_connections_silent_longest_and_waiting() {
    let registry = Registry::default();
    let (old, mut old_client) = connection(&registry).await;
    old.heard(b"GET / HTT"); // a head on its way, then nothing
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (busy, _busy_client) = connection(&registry).await;
    busy.heard(b"GET / HTTP/1.1\r\n\r\n");
    busy.set_phase_answering(); // being answered: never closed for room
    let (making, _making_client) = connection(&registry).await;
    registry.make_room(&making, 2);
    assert_eq!(old.phase.load(Ordering::SeqCst), CLOSED);
    assert_eq!(busy.phase.load(Ordering::SeqCst), ANSWERING);
    let mut answer = String::new();
    old_client.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.contains("gone longest without a byte"), "{answer}");
}
