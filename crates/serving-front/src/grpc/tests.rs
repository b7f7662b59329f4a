use std::future::Future;

use super::*;

#[test]
fn a_status_message_is_percent_encoded_as_grpc_says() {
    assert_eq!(
        percent_encoded("input `x` is 100% wrong: é\n"),
        "input `x` is 100%25 wrong: %C3%A9%0A"
    );
}

#[test]
fn an_error_is_answered_in_the_headers_alone() {
    let answer = status_only(8, "the server is answering 256 calls already");
    assert_eq!(answer.headers()["grpc-status"], "8");
    assert_eq!(
        answer.headers()["grpc-message"],
        "the server is answering 256 calls already"
    );
    assert_eq!(answer.headers()[CONTENT_TYPE], "application/grpc");
    assert!(hyper::body::Body::is_end_stream(answer.body()));
}

#[test]
fn past_room_at_a_new_connection_closes_the_one_idle_longest_never_one_in_a_call() {
    let connections = Connections::default();
    let first = connections.open().unwrap();
    let busy = Call::new(first.clone());
    let second = connections.open().unwrap();
    for _ in 2..ROOM_AT {
        connections.open().unwrap();
    }
    // The first is older but in a call: the second, idle longest, is told to close.
    let newest = connections.open().unwrap();
    assert!(tokio_test_notified(&second));
    assert!(!tokio_test_notified(&first));
    assert_eq!(connections.open.lock().unwrap().len(), ROOM_AT);
    drop(busy);
    connections.closed(&newest);
    assert_eq!(connections.open.lock().unwrap().len(), ROOM_AT - 1);
}

#[test]
fn past_the_most_with_every_connection_in_a_call_a_new_one_is_refused() {
    let connections = Connections::default();
    let calls: Vec<Call> = (0..MOST_CONNECTIONS)
        .map(|_| Call::new(connections.open().unwrap()))
        .collect();
    assert!(connections.open().is_none());
    drop(calls);
    assert!(connections.open().is_some(), "idle ones make room again");
}

/// Whether `connection` was told to close (its order taken).
fn tokio_test_notified(connection: &Connection) -> bool {
    let notified = connection.close.notified();
    tokio::pin!(notified);
    let waker = std::task::Waker::noop();
    notified
        .as_mut()
        .poll(&mut std::task::Context::from_waker(waker))
        .is_ready()
}
