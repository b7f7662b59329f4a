use super::*;

#[test]
fn plain_root_takes_root_s_ids_and_sudo_the_invoking_user_s() {
    // A user: their own ids.
    assert_eq!(
        container_ids(Some((1001, 1002)), (None, None)),
        (1001, 1002)
    );
    // sudo: the invoking user's, whatever root's are.
    assert_eq!(
        container_ids(Some((0, 0)), (Some("1001"), Some("1002"))),
        (1001, 1002)
    );
    assert_eq!(
        container_ids(Some((0, 0)), (Some("1001"), None)),
        (1001, 1001)
    );
    // Plain root (or sudo from root, or SUDO_UID that is not a user's id): root's own ids,
    // which the plan gives no capability (below).
    for sudo in [
        (None, None),
        (Some("0"), Some("0")),
        (Some("x"), None),
        (Some("4294967295"), None),
    ] {
        assert_eq!(container_ids(Some((0, 0)), sudo), (0, 0));
    }
    assert_eq!(container_ids(None, (None, None)), (IMAGE_UID, IMAGE_UID));
}

#[test]
fn root_s_ids_never_reach_an_ssh_service_a_sweep_or_a_server() {
    let image = Some((IMAGE_UID, IMAGE_UID));
    assert_eq!(for_service(Some((0, 0)), Service::Ssh, false), image);
    // A command replaces sshd: root's ids are fine there.
    assert_eq!(for_service(Some((0, 0)), Service::Ssh, true), Some((0, 0)));
    assert_eq!(
        for_service(Some((0, 0)), Service::Jupyter, false),
        Some((0, 0))
    );
    assert_eq!(for_service(Some((5, 6)), Service::Ssh, false), Some((5, 6)));
    // `--user root` is root, as asked.
    assert_eq!(for_service(None, Service::Ssh, false), None);
    assert_eq!(unattended((0, 0)), (IMAGE_UID, IMAGE_UID));
    assert_eq!(unattended((1001, 1002)), (1001, 1002));
}

#[test]
fn who_may_write_a_folder() {
    let me = (1000, 1000);
    assert!(may_write(me, 1000, 5, 0o700));
    assert!(!may_write(me, 1000, 5, 0o500));
    assert!(!may_write(me, 0, 0, 0o755));
    assert!(may_write(me, 0, 1000, 0o770));
    assert!(may_write(me, 0, 0, 0o777));
    // Root's ids without capabilities pass only where the bits let them.
    assert!(!may_write((0, 0), 1000, 1000, 0o700));
    assert!(may_write((0, 0), 0, 0, 0o755));
}
