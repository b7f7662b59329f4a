#[test]
fn daemon_times_in_unix_milliseconds() {
    assert_eq!(super::unix_ms("1970-01-01T00:00:01.5Z"), Some(1500));
    assert_eq!(
        super::unix_ms("2026-11-23T01:44:05.123456789Z"),
        Some(1_795_398_245_123)
    );
    assert_eq!(
        super::unix_ms("2000-02-29T00:00:00Z"),
        Some(951_782_400_000)
    );
    assert_eq!(super::unix_ms("0001-01-01T00:00:00Z"), None);
    assert_eq!(super::unix_ms("2026-11-23 01:44:05"), None);
}
