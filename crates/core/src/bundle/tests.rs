//! The manifest's JSON, the layout, and every way a bundle is refused: made here byte by
//! byte, then damaged (a byte flipped in each region, cut at every block, grown, reordered,
//! given links and escaping paths).

use std::collections::BTreeMap;

use super::layout::{self, checksum_text, entry_length, header, padding, sha256_hex, END};
use super::verify::TAIL_BYTES;
use super::*;

pub(super) const ID: &str =
    "sha256:1111111111111111111111111111111111111111111111111111111111111111";

/// The manifest of a bundle holding `parts` (path, bytes) with one image and one spec.
pub(super) fn manifest_of(parts: &[(&str, Vec<u8>)]) -> Manifest {
    let mut manifest = Manifest::new("0.1.0", 1_795_000_000);
    for (path, bytes) in parts {
        manifest.parts.push(Part {
            path: path.to_string(),
            size: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        });
    }
    manifest.images.push(BundledImage {
        id: ID.to_string(),
        tags: vec!["tfimg/lab:2.9.3".to_string()],
        labels: BTreeMap::from([("io.tfimg.spec".to_string(), "lab".to_string())]),
        part: layout::IMAGES_PART.to_string(),
    });
    manifest.specs.push(BundledSpec {
        name: "lab".to_string(),
        source: SpecSource::File,
        part: "specs/lab.yaml".to_string(),
        lock: Some("specs/lab.lock".to_string()),
        image: Some(ID.to_string()),
    });
    manifest
}

pub(super) fn standard_parts() -> Vec<(&'static str, Vec<u8>)> {
    let image: Vec<u8> = (0..5000u32).map(|index| (index % 251) as u8).collect();
    vec![
        (
            "specs/lab.yaml",
            b"name: lab\nextends: cpu-headless\n".to_vec(),
        ),
        ("specs/lab.lock", b"# a lock\n".to_vec()),
        (layout::IMAGES_PART, image),
    ]
}

/// One tar entry, written as tfimg writes them.
fn entry(path: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = header(path, bytes.len() as u64, 1_795_000_000)
        .unwrap()
        .to_vec();
    out.extend_from_slice(bytes);
    out.resize(out.len() + padding(bytes.len() as u64) as usize, 0);
    out
}

/// A whole bundle: the manifest padded into a slot as `save` does, the entries, the
/// checksum, the end.
fn assemble(manifest: &Manifest, entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let slot = layout::manifest_slot(manifest) + 37;
    let manifest_bytes = layout::padded_manifest(manifest, slot).unwrap();
    let mut out = entry(MANIFEST_PATH, &manifest_bytes);
    for (path, bytes) in entries {
        out.extend(entry(path, bytes));
    }
    out.extend(entry(
        CHECKSUM_PATH,
        checksum_text(&manifest_bytes).as_bytes(),
    ));
    out.extend_from_slice(&END);
    out
}

fn standard() -> Vec<u8> {
    let parts = standard_parts();
    assemble(&manifest_of(&parts), &parts)
}

/// Verifies `bytes`, fed `chunk` bytes at a time.
fn verify_in(bytes: &[u8], chunk: usize) -> Result<Verified, BundleError> {
    let tail_start = bytes.len().saturating_sub(TAIL_BYTES as usize);
    let mut verifier = Verifier::new(bytes.len() as u64, &bytes[tail_start..]);
    for piece in bytes.chunks(chunk.max(1)) {
        verifier.feed(piece)?;
    }
    verifier.finish()
}

fn verify(bytes: &[u8]) -> Result<Verified, BundleError> {
    verify_in(bytes, 4096)
}

fn refusal(bytes: &[u8]) -> BundleError {
    verify(bytes).expect_err("the bundle must be refused")
}

#[test]
fn the_slot_holds_the_manifest_whatever_the_pending_part_turns_out_to_be() {
    let mut manifest = manifest_of(&standard_parts());
    manifest.parts[2].size = 0;
    manifest.parts[2].sha256 = String::new();
    let slot = layout::manifest_slot(&manifest);
    manifest.parts[2].size = u64::MAX;
    manifest.parts[2].sha256 = "a".repeat(64);
    assert!(layout::padded_manifest(&manifest, slot).is_some());
    assert!(layout::padded_manifest(&manifest, slot - 2).is_none());
}

#[test]
fn a_whole_bundle_verifies_in_any_chunk_size_and_locates_each_part() {
    let parts = standard_parts();
    let bytes = standard();
    for chunk in [1, 7, 511, 512, 513, 4096, bytes.len()] {
        let verified = verify_in(&bytes, chunk).unwrap();
        assert_eq!(verified.manifest, manifest_of(&parts));
        for (path, data) in &parts {
            let located = verified.locate(path).unwrap();
            let start = located.offset as usize;
            assert_eq!(&bytes[start..start + data.len()], data.as_slice(), "{path}");
        }
    }
    // What `tar` sees: the manifest first, then the parts, then the checksum.
    let mut archive = tar::Archive::new(bytes.as_slice());
    let names: Vec<String> = archive
        .entries()
        .unwrap()
        .map(|entry| entry.unwrap().path().unwrap().display().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "manifest.json",
            "specs/lab.yaml",
            "specs/lab.lock",
            "images.tar",
            "manifest.sha256"
        ]
    );
}

#[test]
fn sizes_past_8_gib_fit_the_header() {
    let size = 20 * (1 << 30);
    let block = header(layout::IMAGES_PART, size, 0).unwrap();
    assert_eq!(
        tar::Header::from_byte_slice(&block).entry_size().unwrap(),
        size
    );
}

#[test]
fn every_flipped_byte_is_refused_naming_where_it_is() {
    let bytes = standard();
    let parts = standard_parts();
    let verified = verify(&bytes).unwrap();
    let image = verified.locate(layout::IMAGES_PART).unwrap();
    let manifest_end = 512 + layout::manifest_slot(&verified.manifest) as usize + 37;
    for position in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[position] ^= 0x20;
        let error = verify(&damaged)
            .err()
            .unwrap_or_else(|| panic!("byte {position} flipped was not noticed"));
        let in_image = (image.offset..image.offset + image.size).contains(&(position as u64));
        if in_image {
            assert_eq!(
                error,
                BundleError::Altered {
                    part: "images.tar".into(),
                    expected: sha256_hex(&parts[2].1),
                    found: sha256_hex(
                        &damaged[image.offset as usize..(image.offset + image.size) as usize]
                    ),
                },
                "byte {position}"
            );
        }
        if (512..manifest_end).contains(&position) {
            assert_eq!(error, BundleError::ManifestAltered, "byte {position}");
        }
        assert!(
            error.to_string().contains('`') || matches!(error, BundleError::NotABundle { .. }),
            "byte {position}: {error}"
        );
    }
}

#[test]
fn a_flipped_byte_in_a_header_padding_or_the_end_names_its_place() {
    let bytes = standard();
    let verified = verify(&bytes).unwrap();
    let lock = verified.locate("specs/lab.lock").unwrap();
    let mut header_damaged = bytes.clone();
    header_damaged[lock.offset as usize - 512 + 130] ^= 1; // the mtime field
    assert_eq!(
        refusal(&header_damaged),
        BundleError::Header {
            part: "specs/lab.lock".into(),
            reason: "its checksum does not match".into()
        }
    );
    let mut padding_damaged = bytes.clone();
    padding_damaged[(lock.offset + lock.size) as usize + 3] = 1;
    assert_eq!(
        refusal(&padding_damaged),
        BundleError::Padding {
            part: "specs/lab.lock".into()
        }
    );
    let mut end_damaged = bytes.clone();
    let last = end_damaged.len() - 1;
    end_damaged[last] = 1;
    assert!(matches!(refusal(&end_damaged), BundleError::Padding { .. }));
    let mut checksum_damaged = bytes.clone();
    checksum_damaged[bytes.len() - 2048 + 512 + 3] ^= 1;
    assert_eq!(refusal(&checksum_damaged), BundleError::ManifestAltered);
}

#[test]
fn a_bundle_cut_anywhere_is_refused_as_truncated() {
    let bytes = standard();
    let verified = verify(&bytes).unwrap();
    let image = verified.locate(layout::IMAGES_PART).unwrap();
    for length in (0..bytes.len()).step_by(97).chain([bytes.len() - 1]) {
        let error = refusal(&bytes[..length]);
        match error {
            BundleError::NotABundle { .. } => assert!(length < 512, "cut at {length}"),
            BundleError::Truncated { ref where_ } => {
                if (image.offset..image.offset + image.size).contains(&(length as u64)) {
                    assert!(where_.contains("inside part `images.tar`"), "{where_}");
                }
            }
            other => panic!("cut at {length}: {other}"),
        }
    }
    let cut = (image.offset + 100) as usize;
    assert_eq!(
        refusal(&bytes[..cut]).to_string(),
        format!(
            "it is truncated: it ends inside part `images.tar`, 4900 of its 5000 bytes missing (the file is {cut} bytes, the bundle {})",
            bytes.len()
        )
    );
}

#[test]
fn bytes_after_the_end_are_refused() {
    let mut bytes = standard();
    bytes.extend_from_slice(&[0; 512]);
    assert_eq!(refusal(&bytes), BundleError::Trailing { extra: 512 });
}

#[test]
fn files_that_are_not_bundles_are_named_as_such() {
    assert_eq!(
        refusal(b"").to_string(),
        "it is not a tfimg bundle: it is empty"
    );
    assert_eq!(
        refusal(b"hello").to_string(),
        "it is not a tfimg bundle: it is 5 bytes, less than one tar header"
    );
    assert_eq!(
        refusal(&[b'x'; 3000]).to_string(),
        "it is not a tfimg bundle: it does not start with a tar header"
    );
    assert_eq!(
        refusal(&[0; 2048]).to_string(),
        "it is not a tfimg bundle: it holds no files"
    );
    let mut plain = entry("notes.txt", b"hi");
    plain.extend_from_slice(&END);
    assert_eq!(
        refusal(&plain).to_string(),
        "it is not a tfimg bundle: its first file is `notes.txt`, not `manifest.json`"
    );
    let mut not_ours = entry(MANIFEST_PATH, b"{\"kind\": \"something\"}");
    not_ours.extend(entry(CHECKSUM_PATH, &[b'0'; 80]));
    not_ours.extend_from_slice(&END);
    assert!(matches!(refusal(&not_ours), BundleError::NotABundle { .. }));
}

#[test]
fn a_newer_format_is_named() {
    let parts = standard_parts();
    let mut manifest = manifest_of(&parts);
    manifest.format = 2;
    assert_eq!(
        refusal(&assemble(&manifest, &parts)),
        BundleError::NewerFormat {
            found: 2,
            supported: 1
        }
    );
}

#[test]
fn parts_missing_extra_out_of_order_or_resized_are_refused() {
    let parts = standard_parts();
    let manifest = manifest_of(&parts);
    // Same length, other content in place of the lock: an unlisted name.
    let mut renamed = parts.clone();
    renamed[1] = ("specs/xx.lock", parts[1].1.clone());
    assert_eq!(
        refusal(&assemble(&manifest, &renamed)),
        BundleError::Unexpected {
            found: "specs/xx.lock".into(),
            expected: "specs/lab.lock".into()
        }
    );
    let swapped = vec![parts[1].clone(), parts[0].clone(), parts[2].clone()];
    assert!(matches!(
        refusal(&assemble(&manifest, &swapped)),
        BundleError::OutOfOrder { .. }
    ));
    // The last part left out, the manifest (and so the length) saying it is there.
    assert!(matches!(
        refusal(&assemble(&manifest, &parts[..2])),
        BundleError::Truncated { .. }
    ));
    // A part whose header says another size, the total length unchanged.
    let mut resized = parts.clone();
    resized[0].1.truncate(10);
    resized[1].1.extend_from_slice(&[b'#'; 23]);
    let error = refusal(&assemble(&manifest, &resized));
    assert_eq!(
        error,
        BundleError::Size {
            part: "specs/lab.yaml".into(),
            expected: 32,
            found: 10
        }
    );
}

/// A header for `path` of any kind, written by hand (tar refuses to write `..`).
fn raw_entry(path: &[u8], kind: tar::EntryType, bytes: &[u8]) -> Vec<u8> {
    let mut block = tar::Header::new_ustar();
    block.as_mut_bytes()[..path.len()].copy_from_slice(path);
    block.set_size(bytes.len() as u64);
    block.set_mode(0o644);
    block.set_entry_type(kind);
    block.set_cksum();
    let mut out = block.as_bytes().to_vec();
    out.extend_from_slice(bytes);
    out.resize(out.len() + padding(bytes.len() as u64) as usize, 0);
    out
}

#[test]
fn escaping_paths_links_and_devices_are_refused() {
    let parts = standard_parts();
    let manifest = manifest_of(&parts);
    let good = assemble(&manifest, &parts);
    let lock_at = verify(&good)
        .unwrap()
        .locate("specs/lab.lock")
        .unwrap()
        .offset as usize
        - 512;
    let cases: [(&[u8], tar::EntryType, BundleError); 5] = [
        (
            b"../lab.lock",
            tar::EntryType::Regular,
            BundleError::Path {
                path: "../lab.lock".into(),
                reason: "escapes the bundle (`..`)".into(),
            },
        ),
        (
            b"/etc/lab.lock",
            tar::EntryType::Regular,
            BundleError::Path {
                path: "/etc/lab.lock".into(),
                reason: "is absolute".into(),
            },
        ),
        (
            b"specs/lab.lock",
            tar::EntryType::Symlink,
            BundleError::NotRegular {
                path: "specs/lab.lock".into(),
                kind: "symbolic link".into(),
            },
        ),
        (
            b"specs/lab.lock",
            tar::EntryType::Block,
            BundleError::NotRegular {
                path: "specs/lab.lock".into(),
                kind: "device".into(),
            },
        ),
        (
            b"specs/lab.lock",
            tar::EntryType::Link,
            BundleError::NotRegular {
                path: "specs/lab.lock".into(),
                kind: "hard link".into(),
            },
        ),
    ];
    for (path, kind, expected) in cases {
        let mut bytes = good.clone();
        let replaced = raw_entry(path, kind, &parts[1].1);
        bytes.splice(lock_at..lock_at + replaced.len(), replaced);
        assert_eq!(refusal(&bytes), expected);
    }
    // The manifest itself may not list such paths.
    for (path, reason) in [
        ("../x", "escapes the bundle (`..`)"),
        ("/x", "is absolute"),
        ("a//b", "has an empty or `.` component"),
        ("a/./b", "has an empty or `.` component"),
        (
            "a b",
            "holds characters other than letters, digits, `.`, `_`, `-` and `/`",
        ),
    ] {
        let mut listed = manifest.clone();
        listed.parts[1].path = path.to_string();
        assert_eq!(
            listed.validate(),
            Err(BundleError::Path {
                path: path.into(),
                reason: reason.into()
            })
        );
    }
}

#[test]
fn an_oversized_manifest_is_refused_before_it_is_read() {
    let mut bytes = header(MANIFEST_PATH, MAX_MANIFEST_BYTES + 1, 0)
        .unwrap()
        .to_vec();
    bytes.resize(4096, b' ');
    assert!(matches!(
        refusal(&bytes),
        BundleError::Manifest { reason } if reason.contains("more than 1048576")
    ));
}

#[test]
fn entry_lengths_add_up() {
    let parts = standard_parts();
    let bytes = standard();
    let manifest = manifest_of(&parts);
    let manifest_size = layout::manifest_slot(&manifest) + 37;
    assert_eq!(
        layout::bundle_length(manifest_size, &manifest.parts),
        bytes.len() as u64
    );
    assert_eq!(entry_length(0), 512);
    assert_eq!(entry_length(1), 1024);
    assert_eq!(entry_length(512), 1024);
}
