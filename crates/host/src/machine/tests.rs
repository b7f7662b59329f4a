#[test]
fn tokens_are_random_hex_and_ports_probe() {
    let token = super::random_hex(24).unwrap();
    assert_eq!(token.len(), 48);
    assert_ne!(token, super::random_hex(24).unwrap());
    let port = super::any_free_port("127.0.0.1").unwrap();
    let held = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    assert!(!super::port_is_free("127.0.0.1", port));
    drop(held);
}

#[test]
fn private_files_are_0600_and_never_reuse_a_wider_file() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("lab.alice.env");
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().mode() & 0o7777;
    super::write_whole(&path, b"TOKEN=one\n", 0o600, false).unwrap();
    assert_eq!(mode(&path), 0o600);
    // A file that was there, world-readable, with a second name (what another user
    // could have kept open): the secret never goes into it.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let other_name = folder.path().join("kept");
    std::fs::hard_link(&path, &other_name).unwrap();
    super::write_whole(&path, b"TOKEN=two\n", 0o600, false).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(std::fs::read(&path).unwrap(), b"TOKEN=two\n");
    assert_eq!(std::fs::read(&other_name).unwrap(), b"TOKEN=one\n");
    assert_ne!(
        std::fs::metadata(&path).unwrap().ino(),
        std::fs::metadata(&other_name).unwrap().ino()
    );
    // Nothing else is left in the folder; a folder that is missing is an error.
    let names: Vec<_> = std::fs::read_dir(folder.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(super::write_whole(&folder.path().join("missing/x"), b"", 0o600, false).is_err());
}

#[test]
fn ids_and_path_lookups_work_here() {
    assert!(super::current_ids().is_some());
    assert!(super::on_path("sh"));
    assert!(!super::on_path("tfimg-no-such-program"));
}
