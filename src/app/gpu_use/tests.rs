//! Unit tests of `gpu_use`: how long a container under the idle watch has been idle, read
//! from the file the watch keeps there, which the container controls.
use super::*;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;

const NOW: u64 = 1_800_000_000;

/// A tar of one entry at the watch's path, as the archive API hands it.
fn tar_of(kind: tar::EntryType, contents: &[u8], link: Option<&str>) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(contents.len() as u64);
    header.set_mode(0o644);
    if let Some(link) = link {
        header.set_link_name(link).unwrap();
    }
    header.set_cksum();
    builder
        .append_data(&mut header, "tfimg-last-used", contents)
        .unwrap();
    builder.into_inner().unwrap()
}

fn idle_with(tar: Option<Vec<u8>>) -> Option<u64> {
    let engine = FakeEngine::new();
    if let Some(tar) = tar {
        engine
            .state
            .borrow_mut()
            .archives
            .insert(labels::IDLE_LAST_USED.to_string(), tar);
    }
    block_on(idle_seconds(&engine, "abc", NOW))
}

#[test]
fn the_idle_time_is_now_less_the_time_the_watch_wrote() {
    let written = format!("{}\n", NOW - 7260);
    assert_eq!(
        idle_with(Some(tar_of(
            tar::EntryType::Regular,
            written.as_bytes(),
            None
        ))),
        Some(7260)
    );
    assert_eq!(idle_with(None), None, "no watch, no file");
}

/// The file is the container's: a link, a folder, a large file, text that is not a time,
/// a time after now, or a tar larger than a small file's give no answer (and nothing
/// more than 16 KiB is kept).
#[test]
fn what_the_container_wrote_there_instead_is_no_answer() {
    let regular = |bytes: &[u8]| Some(tar_of(tar::EntryType::Regular, bytes, None));
    let cases = [
        (
            "a link to the host's files",
            Some(tar_of(tar::EntryType::Symlink, b"", Some("/etc/shadow"))),
        ),
        (
            "a folder",
            Some(tar_of(tar::EntryType::Directory, b"", None)),
        ),
        ("a large file", regular(&vec![b'1'; 4096])),
        ("not a time", regular(b"soon\n")),
        (
            "a time after now",
            regular(format!("{}\n", NOW + 60).as_bytes()),
        ),
        ("a huge tar", {
            let mut tar = tar_of(tar::EntryType::Regular, b"1\n", None);
            tar.extend(std::iter::repeat_n(0u8, 1 << 20));
            Some(tar)
        }),
    ];
    for (what, tar) in cases {
        assert_eq!(idle_with(tar), None, "{what}");
    }
}
