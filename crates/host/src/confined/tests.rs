//! The hostile side's moves, played against a real folder: links at a name and on the way
//! to it, a FIFO, a device, a huge file, names that climb out.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

fn folder() -> (tempfile::TempDir, Confined) {
    let temporary = tempfile::tempdir().unwrap();
    let confined = Confined::open(temporary.path()).unwrap();
    (temporary, confined)
}

/// A host file outside the folder that the other side would like tfimg to touch.
fn outside(temporary: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let outside = temporary.path().parent().unwrap().join(format!(
        "{}-{name}",
        temporary.path().file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&outside, bytes).unwrap();
    outside
}

#[test]
fn a_link_at_the_name_is_never_followed() {
    let (temporary, confined) = folder();
    let target = outside(&temporary, "target", b"host secret\n");
    symlink(&target, temporary.path().join("stdout.log")).unwrap();

    let error = confined
        .append(Path::new("stdout.log"), b"trial output\n", false)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("stdout.log` is a link: not followed"),
        "{error}"
    );
    let error = confined.read(Path::new("stdout.log"), 0, 1024).unwrap_err();
    assert!(
        error.to_string().contains("is a link: not followed"),
        "{error}"
    );
    assert_eq!(
        confined.kind(Path::new("stdout.log")).unwrap(),
        Some(Kind::Link)
    );

    // A whole write replaces the link itself.
    confined.write(Path::new("stdout.log"), b"", 0o644).unwrap();
    assert_eq!(
        confined.kind(Path::new("stdout.log")).unwrap(),
        Some(Kind::File)
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"host secret\n");
    std::fs::remove_file(target).unwrap();
}

#[test]
fn a_link_on_the_way_is_refused_even_inside_the_folder() {
    let (temporary, confined) = folder();
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(elsewhere.path(), temporary.path().join("sub")).unwrap();
    for result in [
        confined.write(Path::new("sub/x"), b"x", 0o644).map(|_| ()),
        confined.append(Path::new("sub/x"), b"x", false),
        confined.read(Path::new("sub/x"), 0, 10).map(|_| ()),
        confined
            .make_folders(Path::new("sub/deeper"), 0o755)
            .map(|_| ()),
        confined.folder(Path::new("sub")).map(|_| ()),
    ] {
        let error = result.unwrap_err();
        assert!(
            error.to_string().ends_with("sub` is a link: not followed"),
            "{error}"
        );
    }
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);

    // A file where a folder should be is not replaced either.
    std::fs::write(temporary.path().join("file"), b"").unwrap();
    let error = confined
        .make_folders(Path::new("file/x"), 0o755)
        .unwrap_err();
    assert!(
        error.to_string().ends_with("file` is a file, not a folder"),
        "{error}"
    );
}

#[test]
fn names_that_climb_out_are_refused() {
    let (_temporary, confined) = folder();
    for name in ["../x", "/etc/passwd", "a/../../x", ""] {
        assert!(
            confined.write(Path::new(name), b"x", 0o644).is_err(),
            "{name}"
        );
        assert!(confined.read(Path::new(name), 0, 1).is_err(), "{name}");
    }
}

#[test]
fn fifos_and_devices_are_refused_at_once() {
    let (temporary, confined) = folder();
    let fifo = temporary.path().join("metrics.jsonl");
    let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let started = Instant::now();
    let error = confined
        .read(Path::new("metrics.jsonl"), 0, 1024)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("metrics.jsonl` is not a regular file: not read or written"),
        "{error}"
    );
    assert!(confined
        .append(Path::new("metrics.jsonl"), b"x", false)
        .is_err());
    assert!(started.elapsed() < Duration::from_secs(5));

    // `/dev/zero` behind a link: refused before a byte is read.
    symlink("/dev/zero", temporary.path().join("zero")).unwrap();
    assert!(confined.read(Path::new("zero"), 0, u64::MAX).is_err());
}

#[test]
fn reads_stop_at_their_bound() {
    let (temporary, confined) = folder();
    std::fs::write(temporary.path().join("big"), vec![b'a'; 10_000]).unwrap();
    let read = confined.read(Path::new("big"), 0, 4096).unwrap();
    assert_eq!((read.bytes.len(), read.cut), (4096, true));
    let read = confined.read(Path::new("big"), 0, 10_000).unwrap();
    assert_eq!((read.bytes.len(), read.cut), (10_000, false));
}

#[test]
fn writes_are_whole_and_leave_nothing_beside() {
    let (temporary, confined) = folder();
    confined
        .make_folders(Path::new("a/b"), 0o755)
        .unwrap()
        .write(Path::new("status.json"), b"{}", 0o600)
        .unwrap();
    confined
        .append(Path::new("a/b/status.json"), b"\n", true)
        .unwrap();
    assert_eq!(
        std::fs::read(temporary.path().join("a/b/status.json")).unwrap(),
        b"{}\n"
    );
    let entries = confined
        .folder(Path::new("a/b"))
        .unwrap()
        .entries()
        .unwrap();
    assert_eq!(entries, vec![("status.json".into(), Kind::File)]);
    use std::os::unix::fs::MetadataExt;
    let mode = std::fs::metadata(temporary.path().join("a/b/status.json"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o077, 0);
}

#[test]
fn re_owning_a_link_re_owns_the_link_only() {
    use std::os::unix::fs::MetadataExt;
    if super::super::machine::current_ids().map(|(uid, _)| uid) != Some(0) {
        return; // only root can give files away
    }
    let (temporary, confined) = folder();
    let target = outside(&temporary, "owned", b"");
    let before = std::fs::metadata(&target).unwrap().uid();
    symlink(&target, temporary.path().join("link")).unwrap();
    confined
        .set_owner_of(Path::new("link"), 4321, 4321)
        .unwrap();
    assert_eq!(std::fs::metadata(&target).unwrap().uid(), before);
    assert_eq!(
        std::fs::symlink_metadata(temporary.path().join("link"))
            .unwrap()
            .uid(),
        4321
    );
    std::fs::remove_file(target).unwrap();
}

#[test]
fn folders_made_and_given_away_through_their_handles() {
    use std::os::unix::fs::MetadataExt;
    let (temporary, confined) = folder();
    let made = confined.make_folders(Path::new("a/b"), 0o755).unwrap();
    made.set_mode(0o700).unwrap();
    let metadata = std::fs::metadata(temporary.path().join("a/b")).unwrap();
    assert_eq!(metadata.mode() & 0o777, 0o700);
    if super::super::machine::current_ids().map(|(uid, _)| uid) == Some(0) {
        made.set_owner(4321, 4322).unwrap();
        let metadata = std::fs::metadata(temporary.path().join("a/b")).unwrap();
        assert_eq!((metadata.uid(), metadata.gid()), (4321, 4322));
        // What is made in a folder owned by someone else then belongs to them.
        let theirs = confined
            .folder(Path::new("a/b"))
            .unwrap()
            .owned_by_folder()
            .unwrap();
        theirs.make_folders(Path::new("c"), 0o755).unwrap();
        theirs.write(Path::new("c/file"), b"x", 0o644).unwrap();
        theirs.append(Path::new("log"), b"x", false).unwrap();
        for made in ["a/b/c", "a/b/c/file", "a/b/log"] {
            let metadata = std::fs::metadata(temporary.path().join(made)).unwrap();
            assert_eq!((metadata.uid(), metadata.gid()), (4321, 4322), "{made}");
        }
    }
}

#[test]
fn a_read_from_an_offset_takes_what_follows_it() {
    let (temporary, confined) = folder();
    std::fs::write(temporary.path().join("grows"), b"one\ntwo\nthree\n").unwrap();
    let read = confined.read(Path::new("grows"), 4, 4).unwrap();
    assert_eq!((read.bytes.as_slice(), read.cut), (&b"two\n"[..], true));
    let read = confined.read(Path::new("grows"), 8, 100).unwrap();
    assert_eq!((read.bytes.as_slice(), read.cut), (&b"three\n"[..], false));
    // Past the end: nothing, not an error (the file was cut short meanwhile).
    let read = confined.read(Path::new("grows"), 100, 100).unwrap();
    assert!(read.bytes.is_empty() && !read.cut);
}
