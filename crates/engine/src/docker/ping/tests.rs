use super::parse;

#[test]
fn the_api_version_header_is_read_from_a_200_answer_only() {
    let answer = "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nDocker-Experimental: false\r\n\r\n";
    let version = parse(answer).unwrap();
    assert_eq!((version.major_version, version.minor_version), (1, 41));
    let lower = "HTTP/1.1 200 OK\r\napi-version:1.44\r\n\r\n";
    assert_eq!(parse(lower).unwrap().minor_version, 44);
    assert!(parse("HTTP/1.1 200 OK\r\nServer: x\r\n\r\n").is_none());
    assert!(parse("HTTP/1.1 500 Internal Server Error\r\nApi-Version: 1.41\r\n\r\n").is_none());
    assert!(parse("HTTP/1.1 200 OK\r\nApi-Version: one\r\n\r\n").is_none());
}
