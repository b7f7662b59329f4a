use super::*;

#[test]
fn root_never_means_root_in_the_container() {
    let ids = |process, sudo| container_ids(process, sudo).ids;
    // A user: their own ids.
    assert_eq!(ids(Some((1001, 1002)), (None, None)), (1001, 1002));
    // sudo: the invoking user's, whatever root's are.
    assert_eq!(
        ids(Some((0, 0)), (Some("1001"), Some("1002"))),
        (1001, 1002)
    );
    assert_eq!(ids(Some((0, 0)), (Some("1001"), None)), (1001, 1001));
    // Plain root (or sudo from root, or SUDO_UID that is not a user's id): the image's
    // own user, with one note that says whose ids files on mounts get.
    for sudo in [
        (None, None),
        (Some("0"), Some("0")),
        (Some("x"), None),
        (Some("4294967295"), None),
    ] {
        let plain_root = container_ids(Some((0, 0)), sudo);
        assert_eq!(plain_root.ids, (IMAGE_UID, IMAGE_UID));
        let note = plain_root.note.unwrap();
        assert!(note.starts_with("note: tfimg runs as root, not through sudo: containers run as their image's user (1000:1000), never as root"), "{note}");
    }
    assert_eq!(container_ids(Some((0, 0)), (Some("1001"), None)).note, None);
    assert_eq!(ids(None, (None, None)), (IMAGE_UID, IMAGE_UID));
}

#[test]
fn who_may_write_a_folder() {
    let me = (1000, 1000);
    assert!(may_write(me, 1000, 5, 0o700));
    assert!(!may_write(me, 1000, 5, 0o500));
    assert!(!may_write(me, 0, 0, 0o755));
    assert!(may_write(me, 0, 1000, 0o770));
    assert!(may_write(me, 0, 0, 0o777));
    assert!(may_write((0, 0), 1000, 1000, 0o700));
}
