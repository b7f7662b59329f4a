//! Another account's moves, played against real folders: a folder it owns on the way, one
//! it can write, a link it made, a sticky folder above ours. Giving a folder to another
//! account takes root, which the tests run as (CI does); elsewhere those cases return.

use std::os::unix::fs::{symlink, PermissionsExt};

use super::*;

/// A uid no account on the machine has.
const STRANGER: u32 = 54_321;

fn root() -> bool {
    rustix::process::geteuid().is_root()
}

fn me() -> Trusted {
    Trusted::of(rustix::process::geteuid().as_raw(), None)
}

fn mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn give(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
}

fn refusal(result: Result<(), TrustError>) -> Untrusted {
    match result {
        Err(TrustError::Untrusted(untrusted)) => untrusted,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn who_is_trusted_follows_who_runs_tfimg() {
    assert!(
        Trusted::of(0, Some(1000)).holds(1000),
        "sudo's user under sudo"
    );
    assert!(Trusted::of(0, None).holds(0));
    let alice = Trusted::of(1001, Some(1000));
    assert!(alice.holds(1001) && alice.holds(0));
    assert!(!alice.holds(1000), "SUDO_UID means nothing when not root");
}

#[test]
fn one_s_own_private_folder_passes() {
    let temporary = tempfile::tempdir().unwrap();
    let inner = temporary.path().join("runs/lr");
    make_and_check(&inner, 0o755, &me()).unwrap();
    check(&inner, &me()).unwrap();
}

#[test]
fn a_folder_another_account_owns_is_refused_naming_it_and_its_mode() {
    if !root() {
        return;
    }
    let temporary = tempfile::tempdir().unwrap();
    let planted = temporary.path().join("runs");
    std::fs::create_dir(&planted).unwrap();
    mode(&planted, 0o755);
    give(&planted, STRANGER);
    let found = refusal(check(&planted.join("."), &me()));
    assert_eq!(found.finding, Finding::Owner);
    assert_eq!(found.path, planted);
    assert_eq!(
        found.to_string(),
        format!(
            "`{}` belongs to `54321` (uid 54321, mode 0755), not to you or root",
            planted.display()
        )
    );
    // Below it too, whatever the folder below looks like.
    std::fs::create_dir(planted.join("lr")).unwrap();
    give(&planted.join("lr"), 0);
    assert_eq!(refusal(check(&planted.join("lr"), &me())).path, planted);
    // Making it does not help: the planted folder is on the way.
    assert_eq!(
        refusal(make_and_check(&planted.join("new"), 0o755, &me())).path,
        planted
    );
}

#[test]
fn a_folder_others_can_write_is_refused_unless_sticky_above_ours() {
    let temporary = tempfile::tempdir().unwrap();
    let shared = temporary.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    mode(&shared, 0o777);
    let found = refusal(check(&shared, &me()));
    assert_eq!(found.finding, Finding::OthersWritable);
    assert!(found
        .to_string()
        .contains("can be written by every account"));
    // Ours below a world-writable, non-sticky folder: anyone could rename it away.
    std::fs::create_dir(shared.join("ours")).unwrap();
    assert_eq!(refusal(check(&shared.join("ours"), &me())).path, shared);
    // Sticky (as /tmp): others cannot touch the names they do not own.
    mode(&shared, 0o1777);
    check(&shared.join("ours"), &me()).unwrap();
    // But a sticky folder is still not one to keep state in.
    assert_eq!(
        refusal(check(&shared, &me())).finding,
        Finding::OthersWritable
    );
}

#[test]
fn a_sticky_folder_above_does_not_make_another_account_s_folder_ours() {
    if !root() {
        return;
    }
    let temporary = tempfile::tempdir().unwrap();
    let sticky = temporary.path().join("tmp");
    std::fs::create_dir(&sticky).unwrap();
    mode(&sticky, 0o1777);
    let planted = sticky.join("proj");
    std::fs::create_dir(&planted).unwrap();
    give(&planted, STRANGER);
    assert_eq!(refusal(check(&planted, &me())).finding, Finding::Owner);
}

#[test]
fn a_group_with_other_members_may_not_write_it() {
    if !root() {
        return;
    }
    let temporary = tempfile::tempdir().unwrap();
    let lab = temporary.path().join("lab");
    std::fs::create_dir(&lab).unwrap();
    std::os::unix::fs::chown(&lab, Some(0), Some(STRANGER)).unwrap();
    mode(&lab, 0o2775);
    let found = refusal(check(&lab, &me()));
    assert_eq!(
        found.finding,
        Finding::GroupWritable {
            group: STRANGER.to_string()
        }
    );
    // The owner's own group (root's: no other member) is as private as the owner.
    std::os::unix::fs::chown(&lab, Some(0), Some(0)).unwrap();
    check(&lab, &me()).unwrap();
}

#[test]
fn a_link_another_account_made_is_not_followed_and_one_s_own_is() {
    let temporary = tempfile::tempdir().unwrap();
    let real = temporary.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = temporary.path().join("link");
    symlink("real", &link).unwrap();
    check(&link, &me()).unwrap();
    check(&link.join("../link/."), &me()).unwrap();
    // The target is checked as the folder itself.
    mode(&real, 0o777);
    assert_eq!(refusal(check(&link, &me())).path, real);
    mode(&real, 0o755);
    if root() {
        give(&link, STRANGER);
        let found = refusal(check(&link, &me()));
        assert_eq!(found.finding, Finding::Link);
        assert!(found.to_string().contains("is a link made by `54321`"));
    }
}

#[test]
fn a_loop_of_links_and_a_file_on_the_way_are_errors_not_hangs() {
    let temporary = tempfile::tempdir().unwrap();
    symlink("b", temporary.path().join("a")).unwrap();
    symlink("a", temporary.path().join("b")).unwrap();
    match check(&temporary.path().join("a"), &me()) {
        Err(TrustError::Io(error)) => assert_eq!(error.raw_os_error(), Some(libc::ELOOP)),
        other => panic!("{other:?}"),
    }
    std::fs::write(temporary.path().join("file"), b"").unwrap();
    assert!(matches!(
        check(&temporary.path().join("file"), &me()),
        Err(TrustError::Io(_))
    ));
    assert!(matches!(
        check(&temporary.path().join("missing"), &me()),
        Err(TrustError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound
    ));
}
