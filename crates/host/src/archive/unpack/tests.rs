//! Unit tests of `unpack`: tars as Docker sends them, and tars made to escape.
use super::*;
use std::os::unix::fs::PermissionsExt;

/// A tar entry: (raw path, kind, mode, contents or link target).
type Raw<'a> = (&'a str, tar::EntryType, u32, &'a str);

/// Writes entries with raw names, as a hostile tar would (the tar crate's own builder
/// refuses `..`).
fn tar_of(entries: &[Raw]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, kind, mode, contents) in entries {
        let mut header = tar::Header::new_gnu();
        let name = &mut header.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_entry_type(*kind);
        header.set_mode(*mode);
        let data: &[u8] = if kind.is_file() {
            contents.as_bytes()
        } else {
            b""
        };
        if !kind.is_file() && !contents.is_empty() {
            header.set_link_name(contents).unwrap();
        }
        header.set_size(data.len() as u64);
        header.set_cksum();
        builder.append(&header, data).unwrap();
    }
    builder.into_inner().unwrap()
}

const DIR: tar::EntryType = tar::EntryType::Directory;
const FILE: tar::EntryType = tar::EntryType::Regular;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_folder_s_contents_land_in_the_destination_new_changed_and_unchanged() {
    let folder = tempfile::tempdir().unwrap();
    let code = folder.path().join("code");
    std::fs::create_dir_all(&code).unwrap();
    std::fs::write(code.join("same.txt"), "same").unwrap();
    std::fs::write(code.join("old.txt"), "old").unwrap();
    std::fs::write(code.join("local-only.txt"), "mine").unwrap();
    let tar = tar_of(&[
        ("code", DIR, 0o755, ""),
        ("code/same.txt", FILE, 0o644, "same"),
        ("code/old.txt", FILE, 0o644, "new contents"),
        ("code/out", DIR, 0o755, ""),
        ("code/out/result.txt", FILE, 0o6755, "0.93"),
    ]);
    let summary = unpack(tar.as_slice(), &code).unwrap();
    assert_eq!(
        summary,
        UnpackSummary {
            new: 1,
            changed: 1,
            unchanged: 1,
            notes: Vec::new(),
        }
    );
    assert_eq!(read(&code.join("old.txt")), "new contents");
    assert_eq!(
        read(&code.join("local-only.txt")),
        "mine",
        "nothing is deleted"
    );
    let result = code.join("out/result.txt");
    assert_eq!(read(&result), "0.93");
    let mode = std::fs::metadata(&result).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o755, "setuid and setgid are dropped");
    let leftovers: Vec<_> = std::fs::read_dir(&code)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.starts_with(".tfimg-pull-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn entries_that_would_escape_or_follow_links_are_skipped_with_a_note() {
    let folder = tempfile::tempdir().unwrap();
    let code = folder.path().join("code");
    let outside = folder.path().join("outside");
    std::fs::create_dir_all(&code).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // A local link below the destination is never written through.
    std::os::unix::fs::symlink(&outside, code.join("linked")).unwrap();
    let tar = tar_of(&[
        ("code", DIR, 0o755, ""),
        ("code/../escaped.txt", FILE, 0o644, "x"),
        ("/etc/tfimg-escaped", FILE, 0o644, "x"),
        ("code/link", tar::EntryType::Symlink, 0o777, "/etc/passwd"),
        ("code/hard", tar::EntryType::Link, 0o644, "etc/passwd"),
        ("code/fifo", tar::EntryType::Fifo, 0o644, ""),
        ("code/linked/evil.txt", FILE, 0o644, "x"),
        ("code/linked", FILE, 0o644, "replaces the link?"),
        ("other/x.txt", FILE, 0o644, "x"),
        ("code/ok.txt", FILE, 0o644, "ok"),
    ]);
    let summary = unpack(tar.as_slice(), &code).unwrap();
    assert_eq!(
        summary.notes,
        [
            "`code/../escaped.txt` leads out of the folder: skipped",
            "`/etc/tfimg-escaped` leads out of the folder: skipped",
            "`link` is a link: skipped",
            "`hard` is a hard link to `etc/passwd`, which was not copied: skipped",
            "`fifo` is not a file or folder: skipped",
            "`linked` is a link here: not replaced, nothing written through it",
            "`linked` is a link here: not replaced",
            "`other/x.txt` is outside the copied path: skipped",
        ]
    );
    assert_eq!(summary.new, 1);
    assert_eq!(read(&code.join("ok.txt")), "ok");
    assert!(!folder.path().join("escaped.txt").exists());
    assert!(!Path::new("/etc/tfimg-escaped").exists());
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert!(code.join("linked").is_symlink());
    assert!(!code.join("link").exists() && !code.join("hard").exists());
}

#[test]
fn a_single_file_becomes_the_destination_or_goes_into_a_folder() {
    let folder = tempfile::tempdir().unwrap();
    let tar = tar_of(&[("result.csv", FILE, 0o644, "a,b\n")]);
    let file = folder.path().join("result.csv");
    std::fs::write(&file, "old").unwrap();
    let summary = unpack(tar.as_slice(), &file).unwrap();
    assert_eq!((summary.changed, read(&file).as_str()), (1, "a,b\n"));
    let into = folder.path().join("out");
    std::fs::create_dir(&into).unwrap();
    let summary = unpack(tar.as_slice(), &into).unwrap();
    assert_eq!(
        (summary.new, read(&into.join("result.csv")).as_str()),
        (1, "a,b\n")
    );
    // A missing destination folder is made.
    let fresh = folder.path().join("fresh/deeper");
    unpack(tar_of(&[("code", DIR, 0o755, "")]).as_slice(), &fresh).unwrap();
    assert!(fresh.is_dir());
}

#[test]
fn chunks_fed_to_the_thread_unpack_as_one_tar() {
    let folder = tempfile::tempdir().unwrap();
    let big = "x".repeat(300_000);
    let tar = tar_of(&[
        ("code", DIR, 0o755, ""),
        ("code/big.txt", FILE, 0o644, &big),
    ]);
    let mut unpacker: Box<dyn Unpacker> = Box::new(start(folder.path().join("code")));
    for chunk in tar.chunks(4096) {
        if unpacker.feed(Bytes::copy_from_slice(chunk)).is_break() {
            break;
        }
    }
    let summary = unpacker.finish().unwrap();
    assert_eq!(summary.new, 1);
    assert_eq!(read(&folder.path().join("code/big.txt")).len(), 300_000);
    // A tar that breaks off is an error, and leaves no half file.
    let mut unpacker: Box<dyn Unpacker> = Box::new(start(folder.path().join("cut")));
    let _ = unpacker.feed(Bytes::copy_from_slice(&tar[..2048]));
    assert!(unpacker.finish().is_err());
    let written: Vec<_> = std::fs::read_dir(folder.path().join("cut"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn a_hard_link_gets_its_own_copy_of_the_file_it_names() {
    let folder = tempfile::tempdir().unwrap();
    let tar = tar_of(&[
        ("code", DIR, 0o755, ""),
        ("code/train.py", FILE, 0o644, "print(1)\n"),
        ("code/copy.py", tar::EntryType::Link, 0o644, "code/train.py"),
    ]);
    let summary = unpack(tar.as_slice(), &folder.path().join("code")).unwrap();
    assert_eq!((summary.new, summary.notes.len()), (2, 0), "{summary:?}");
    assert_eq!(read(&folder.path().join("code/copy.py")), "print(1)\n");
}

#[test]
fn modes_keep_the_owner_s_access_and_follow_the_umask() {
    // SAFETY: umask only reads and sets this process's mask; the old one is put back.
    let old = unsafe { libc::umask(0o022) };
    let folder = tempfile::tempdir().unwrap();
    let tar = tar_of(&[
        ("code", DIR, 0o755, ""),
        ("code/open.py", FILE, 0o777, "x"),
        ("code/closed.py", FILE, 0o000, "x"),
    ]);
    unpack(tar.as_slice(), &folder.path().join("code")).unwrap();
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    let mode = |name: &str| {
        std::fs::metadata(folder.path().join("code").join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!((mode("open.py"), mode("closed.py")), (0o755, 0o600));
}

#[test]
fn zeros_become_holes_and_names_are_printed_escaped() {
    use std::os::unix::fs::MetadataExt;
    let folder = tempfile::tempdir().unwrap();
    let zeros = "\0".repeat(8 << 20);
    let tar = tar_of(&[
        ("code", DIR, 0o755, ""),
        ("code/sparse.bin", FILE, 0o644, &zeros),
        ("code/\x1b[31mred", tar::EntryType::Symlink, 0o777, "/etc"),
    ]);
    let summary = unpack(tar.as_slice(), &folder.path().join("code")).unwrap();
    let sparse = std::fs::metadata(folder.path().join("code/sparse.bin")).unwrap();
    assert_eq!(sparse.len(), 8 << 20);
    assert!(
        sparse.blocks() * 512 < 1 << 20,
        "{} blocks",
        sparse.blocks()
    );
    assert_eq!(summary.notes, ["`\\u{1b}[31mred` is a link: skipped"]);
}

#[test]
fn an_unpack_stops_before_the_disk_is_down_to_its_reserve() {
    let folder = tempfile::tempdir().unwrap();
    let tar = tar_of(&[
        ("code", DIR, 0o755, ""),
        ("code/big.bin", FILE, 0o644, "data"),
    ]);
    let nearly_full = |_: &Path| Some(RESERVE_BYTES - 1);
    let error = unpack_with(tar.as_slice(), &folder.path().join("code"), &nearly_full).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::StorageFull);
    assert!(
        error
            .to_string()
            .starts_with("stopped at `big.bin`: the disk holding"),
        "{error}"
    );
    assert!(!folder.path().join("code/big.bin").exists());
}

#[test]
fn the_engine_s_tar_of_the_root_lands_below_the_destination() {
    let folder = tempfile::tempdir().unwrap();
    let tar = tar_of(&[
        ("/", DIR, 0o755, ""),
        ("/etc", DIR, 0o755, ""),
        ("/etc/hostname", FILE, 0o644, "box\n"),
        ("/etc/alias", tar::EntryType::Link, 0o644, "/etc/hostname"),
    ]);
    let summary = unpack(tar.as_slice(), &folder.path().join("root")).unwrap();
    assert_eq!((summary.new, summary.notes.len()), (2, 0), "{summary:?}");
    assert_eq!(read(&folder.path().join("root/etc/hostname")), "box\n");
    assert_eq!(read(&folder.path().join("root/etc/alias")), "box\n");
    // Only a tar that starts at `/` is read so: elsewhere an absolute name leads out.
    let stray = tar_of(&[("code", DIR, 0o755, ""), ("/etc/passwd", FILE, 0o644, "x")]);
    let summary = unpack(stray.as_slice(), &folder.path().join("code")).unwrap();
    assert_eq!(
        summary.notes,
        ["`/etc/passwd` leads out of the folder: skipped"]
    );
}
