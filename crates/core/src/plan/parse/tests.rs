use super::*;

#[test]
fn sizes_cpus_and_env() {
    assert_eq!(
        parse_size("2g", "--shm-size").unwrap(),
        2 * 1024 * 1024 * 1024
    );
    assert_eq!(parse_size("512m", "--memory").unwrap(), 512 * 1024 * 1024);
    assert_eq!(parse_size("1.5GB", "--memory").unwrap(), 1610612736);
    assert!(parse_size("lots", "--memory").is_err());
    assert!(parse_size("1k", "--memory").is_err());
    assert_eq!(parse_cpus("1.5", "--cpus").unwrap(), 1_500_000_000);
    assert!(parse_cpus("0", "--cpus").is_err());
    assert_eq!(
        parse_cpus("lots", "cpus:").unwrap_err().hint,
        "write `cpus: 2` or `cpus: 1.5`"
    );
    let none = |_: &str| None;
    assert_eq!(
        parse_env("A=b=c", none).unwrap(),
        ("A".into(), "b=c".into())
    );
    assert_eq!(
        parse_env("HOME", |key| (key == "HOME")
            .then(|| "/home/ana".to_string()))
        .unwrap(),
        ("HOME".into(), "/home/ana".into())
    );
    assert!(parse_env("1A=b", none).is_err());
    assert!(parse_env(&format!("{}=0", labels::UID_VARIABLE), none).is_err());
}

#[test]
fn idle_times_are_whole_seconds_from_ten_to_a_year() {
    assert_eq!(parse_idle("1h", "--idle-kernels").unwrap(), 3600);
    assert_eq!(parse_idle("2h 30m", "kernels:").unwrap(), 9000);
    assert_eq!(parse_idle(" 10s ", "kernels:").unwrap(), 10);
    assert_eq!(parse_idle("365days", "kernels:").unwrap(), MAX_IDLE_SECONDS);
    for bad in ["", "1", "soon", "9s", "0s", "10.5s", "366days", "-1h"] {
        let error = parse_idle(bad, "--idle-kernels").unwrap_err();
        assert!(
            error
                .message
                .starts_with(&format!("`--idle-kernels {bad}`")),
            "{bad}: {}",
            error.message
        );
        assert!(error.hint.contains("`--idle-kernels 1h`"), "{bad}");
    }
}
