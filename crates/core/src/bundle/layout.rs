//! How a bundle is laid out as a tar: `manifest.json` first, then every part in the
//! manifest's order, then `manifest.sha256` (the manifest's own digest, in `sha256sum`
//! format), then the two zero blocks that end a tar. Every entry is a plain ustar regular
//! file (mode 0644, owner 0, the bundle's time), so `tar -tf` and `tar -xf` read it.
//!
//! The manifest comes first but is known last (the image part's size and digest come
//! from streaming it): the writer reserves a slot sized for the largest values the
//! unknown fields can take, and pads the final JSON with spaces (JSON allows trailing
//! whitespace; `manifest.sha256` covers the padding too). Pure: bytes and arithmetic.

use sha2::{Digest, Sha256};

use super::error::BundleError;
use super::manifest::{Manifest, Part};
use super::MANIFEST_PATH;
use crate::plan::image::hex;

/// A tar block.
pub const BLOCK: u64 = 512;
/// The end of a tar: two zero blocks.
pub const END: [u8; 1024] = [0; 1024];
/// `<64 hex>  manifest.json\n`.
pub const CHECKSUM_BYTES: u64 = 64 + 2 + MANIFEST_PATH.len() as u64 + 1;

/// The ustar header of a regular file.
pub fn header(path: &str, size: u64, mtime: u64) -> Result<[u8; 512], BundleError> {
    let mut header = tar::Header::new_ustar();
    header.set_path(path).map_err(|error| BundleError::Path {
        path: path.to_string(),
        reason: error.to_string(),
    })?;
    header.set_size(size);
    header.set_mode(0o644);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    Ok(*header.as_bytes())
}

/// The zero bytes after `size` bytes of data, up to the next block.
pub fn padding(size: u64) -> u64 {
    (BLOCK - size % BLOCK) % BLOCK
}

/// A whole entry: header, data, padding.
pub fn entry_length(size: u64) -> u64 {
    BLOCK + size + padding(size)
}

/// The whole bundle's length for a manifest of `manifest_size` bytes and these parts.
pub fn bundle_length(manifest_size: u64, parts: &[Part]) -> u64 {
    let parts: u64 = parts.iter().map(|part| entry_length(part.size)).sum();
    entry_length(manifest_size) + parts + entry_length(CHECKSUM_BYTES) + END.len() as u64
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// `manifest.sha256`: the manifest's digest as `sha256sum` prints it.
pub fn checksum_text(manifest_bytes: &[u8]) -> String {
    format!("{}  {MANIFEST_PATH}\n", sha256_hex(manifest_bytes))
}

/// The parts whose size and digest are not known yet (their sha256 is empty).
fn pending(part: &Part) -> bool {
    part.sha256.is_empty()
}

/// The manifest's slot: its JSON with every pending part at the largest size and a
/// digest, plus a byte for the closing newline.
pub fn manifest_slot(manifest: &Manifest) -> u64 {
    let mut largest = manifest.clone();
    for part in largest.parts.iter_mut().filter(|part| pending(part)) {
        part.size = u64::MAX;
        part.sha256 = "f".repeat(64);
    }
    largest.encode().len() as u64 + 1
}

/// The final manifest's bytes, padded with spaces to `slot` (ending in a newline);
/// `None` if it does not fit (it always does when the slot came from `manifest_slot` of
/// the same manifest with its parts pending).
pub fn padded_manifest(manifest: &Manifest, slot: u64) -> Option<Vec<u8>> {
    let mut bytes = manifest.encode();
    let slot = usize::try_from(slot).ok()?;
    if bytes.len() > slot {
        return None;
    }
    bytes.resize(slot, b' ');
    if let Some(last) = bytes.last_mut() {
        *last = b'\n';
    }
    Some(bytes)
}

/// The path of a spec's part: a built-in as `tfimg show` prints it, a file as it was.
pub fn spec_part_path(name: &str, resolved: bool) -> String {
    if resolved {
        format!("specs/{name}.resolved.yaml")
    } else {
        format!("specs/{name}.yaml")
    }
}

pub fn lock_part_path(name: &str) -> String {
    format!("specs/{name}.lock")
}

/// The part holding every image: one Docker image tarball, so layers the images share
/// are stored once.
pub const IMAGES_PART: &str = "images.tar";
