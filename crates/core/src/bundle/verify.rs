//! Checking a whole bundle before anything in it is used: fed the file's bytes in order
//! (any chunk sizes), the verifier holds every byte to the layout. The first entry is
//! `manifest.json`; once it is read, the file's length must be exactly what the manifest
//! describes (a truncated copy is refused at once, naming the part it ends in); then
//! every part must follow in the manifest's order as a regular file with a valid header,
//! its path, its size and its sha256; the padding between entries must be zeros;
//! `manifest.sha256` must match the manifest's bytes; the two end blocks must be zeros
//! and nothing may follow. Pure: the caller reads the file.
//!
//! Trust boundary **bundle bytes → tfimg**: whoever made or changed the bundle controls
//! every byte of it. This verifier is where its layout and contents are held to the
//! manifest before the daemon sees an image or a spec file is written; what the bundle
//! may mean is held in `app::bundle::load` (no spec of it takes a built-in's name), and
//! what it says is printed there with its control characters escaped.

use sha2::{Digest, Sha256};

use super::error::BundleError;
use super::layout::{self, bundle_length, padding, CHECKSUM_BYTES};
use super::manifest::{path_problem, Manifest};
use super::{CHECKSUM_PATH, MANIFEST_PATH, MAX_MANIFEST_BYTES};
use crate::plan::image::hex;

/// A checked bundle: its manifest and where each part's bytes are in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub manifest: Manifest,
    pub located: Vec<Located>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub path: String,
    /// Offset of its first data byte in the file.
    pub offset: u64,
    pub size: u64,
    pub sha256: String,
}

impl Verified {
    pub fn locate(&self, path: &str) -> Option<&Located> {
        self.located.iter().find(|located| located.path == path)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Manifest,
    Part(usize),
    Checksum,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Header(Entry),
    Data { entry: Entry, remaining: u64 },
    Padding { after: Entry, remaining: u64 },
    End { remaining: u64 },
    Done,
}

pub struct Verifier {
    file_length: u64,
    position: u64,
    stage: Stage,
    header: Vec<u8>,
    manifest_bytes: Vec<u8>,
    manifest: Option<Manifest>,
    checksum: Vec<u8>,
    /// What the file's last entry says the manifest's digest is, when the file ends as a
    /// bundle ends.
    tail_checksum: Option<Vec<u8>>,
    hasher: Sha256,
    located: Vec<Located>,
}

impl Verifier {
    /// A verifier for a file of `file_length` bytes ending with `tail` (its last
    /// `TAIL_BYTES` bytes, or all of a shorter file). The tail holds `manifest.sha256`:
    /// with it the manifest is known to be the one that was saved before its numbers are
    /// used, so an altered manifest is blamed, not the part it misdescribes.
    pub fn new(file_length: u64, tail: &[u8]) -> Verifier {
        Verifier {
            file_length,
            tail_checksum: tail_checksum(tail),
            position: 0,
            stage: Stage::Header(Entry::Manifest),
            header: Vec::with_capacity(512),
            manifest_bytes: Vec::new(),
            manifest: None,
            checksum: Vec::new(),
            hasher: Sha256::new(),
            located: Vec::new(),
        }
    }

    /// The next bytes of the file.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), BundleError> {
        while !bytes.is_empty() {
            let taken = self.step(bytes)?;
            self.position += taken as u64;
            bytes = &bytes[taken..];
        }
        Ok(())
    }

    /// The file has ended: the bundle, if it was whole.
    pub fn finish(self) -> Result<Verified, BundleError> {
        if self.stage == Stage::Done {
            return Ok(Verified {
                manifest: self.manifest.unwrap_or_else(|| Manifest::new("", 0)),
                located: self.located,
            });
        }
        if self.manifest.is_none() && self.position < layout::BLOCK {
            return Err(BundleError::NotABundle {
                reason: if self.position == 0 {
                    "it is empty".to_string()
                } else {
                    format!("it is {} bytes, less than one tar header", self.position)
                },
            });
        }
        Err(BundleError::Truncated {
            where_: format!("it ends {}", self.place()),
        })
    }

    /// Consumes the start of `bytes` in the current stage; how many bytes it took.
    fn step(&mut self, bytes: &[u8]) -> Result<usize, BundleError> {
        match self.stage {
            Stage::Header(entry) => {
                let taken = bytes.len().min(512 - self.header.len());
                self.header.extend_from_slice(&bytes[..taken]);
                if self.header.len() == 512 {
                    self.header_done(entry, self.position + taken as u64)?;
                    self.header.clear();
                }
                Ok(taken)
            }
            Stage::Data { entry, remaining } => {
                let taken = bytes
                    .len()
                    .min(usize::try_from(remaining).unwrap_or(usize::MAX));
                let data = &bytes[..taken];
                match entry {
                    Entry::Manifest => self.manifest_bytes.extend_from_slice(data),
                    Entry::Part(_) => self.hasher.update(data),
                    Entry::Checksum => self.checksum.extend_from_slice(data),
                }
                let remaining = remaining - taken as u64;
                self.stage = Stage::Data { entry, remaining };
                if remaining == 0 {
                    self.data_done(entry)?;
                }
                Ok(taken)
            }
            Stage::Padding { after, remaining } => {
                let taken = bytes.len().min(remaining as usize);
                if bytes[..taken].iter().any(|byte| *byte != 0) {
                    return Err(BundleError::Padding {
                        part: self.name(after),
                    });
                }
                let remaining = remaining - taken as u64;
                self.stage = if remaining > 0 {
                    Stage::Padding { after, remaining }
                } else {
                    self.after(after)
                };
                Ok(taken)
            }
            Stage::End { remaining } => {
                let taken = bytes.len().min(remaining as usize);
                if bytes[..taken].iter().any(|byte| *byte != 0) {
                    return Err(BundleError::Padding {
                        part: CHECKSUM_PATH.to_string(),
                    });
                }
                let remaining = remaining - taken as u64;
                self.stage = if remaining > 0 {
                    Stage::End { remaining }
                } else {
                    Stage::Done
                };
                Ok(taken)
            }
            Stage::Done => Err(BundleError::Trailing {
                extra: bytes.len() as u64,
            }),
        }
    }

    /// The name of an entry, for messages.
    fn name(&self, entry: Entry) -> String {
        match (entry, &self.manifest) {
            (Entry::Manifest, _) => MANIFEST_PATH.to_string(),
            (Entry::Checksum, _) => CHECKSUM_PATH.to_string(),
            (Entry::Part(index), Some(manifest)) => manifest.parts[index].path.clone(),
            (Entry::Part(index), None) => format!("#{index}"),
        }
    }

    /// The stage after an entry and its padding.
    fn after(&self, entry: Entry) -> Stage {
        let parts = self
            .manifest
            .as_ref()
            .map_or(0, |manifest| manifest.parts.len());
        match entry {
            Entry::Manifest if parts > 0 => Stage::Header(Entry::Part(0)),
            Entry::Part(index) if index + 1 < parts => Stage::Header(Entry::Part(index + 1)),
            Entry::Manifest | Entry::Part(_) => Stage::Header(Entry::Checksum),
            Entry::Checksum => Stage::End {
                remaining: layout::END.len() as u64,
            },
        }
    }

    /// A whole header read; its entry's data starts at `data_offset`.
    fn header_done(&mut self, entry: Entry, data_offset: u64) -> Result<(), BundleError> {
        let expected = self.name(entry);
        let first = entry == Entry::Manifest;
        let not_a_bundle = |reason: &str| BundleError::NotABundle {
            reason: reason.to_string(),
        };
        if self.header.iter().all(|byte| *byte == 0) {
            return Err(if first {
                not_a_bundle("it holds no files")
            } else {
                BundleError::Missing { part: expected }
            });
        }
        let header = tar::Header::from_byte_slice(&self.header);
        if !checksum_holds(&self.header) {
            return Err(if first {
                not_a_bundle("it does not start with a tar header")
            } else {
                BundleError::Header {
                    part: expected,
                    reason: "its checksum does not match".to_string(),
                }
            });
        }
        let path = String::from_utf8_lossy(&header.path_bytes()).into_owned();
        if let Some(reason) = path_problem(&path) {
            return Err(BundleError::Path {
                path,
                reason: reason.to_string(),
            });
        }
        let kind = header.entry_type();
        if !matches!(kind, tar::EntryType::Regular) || header.as_ustar().is_none() {
            return Err(BundleError::NotRegular {
                path,
                kind: kind_name(kind, header.as_ustar().is_some()).to_string(),
            });
        }
        if path != expected {
            return Err(self.misplaced(entry, path));
        }
        let size = header.entry_size().map_err(|_| BundleError::Header {
            part: expected.clone(),
            reason: "its size field is not a number".to_string(),
        })?;
        self.expect_size(entry, &expected, size)?;
        if let Entry::Part(index) = entry {
            let part = &self
                .manifest
                .as_ref()
                .expect("parts follow the manifest")
                .parts[index];
            self.located.push(Located {
                path: part.path.clone(),
                offset: data_offset,
                size,
                sha256: part.sha256.clone(),
            });
            self.hasher = Sha256::new();
        }
        self.stage = Stage::Data {
            entry,
            remaining: size,
        };
        if size == 0 {
            self.data_done(entry)?;
        }
        Ok(())
    }

    /// The error for an entry called `found` where `entry` should be.
    fn misplaced(&self, entry: Entry, found: String) -> BundleError {
        let expected = self.name(entry);
        let listed = self
            .manifest
            .as_ref()
            .is_some_and(|manifest| manifest.part(&found).is_some());
        match entry {
            Entry::Manifest => BundleError::NotABundle {
                reason: format!("its first file is `{found}`, not `{MANIFEST_PATH}`"),
            },
            Entry::Part(_) if found == CHECKSUM_PATH => BundleError::Missing { part: expected },
            _ if listed => BundleError::OutOfOrder { found, expected },
            _ => BundleError::Unexpected { found, expected },
        }
    }

    fn expect_size(&self, entry: Entry, name: &str, size: u64) -> Result<(), BundleError> {
        let expected = match entry {
            Entry::Manifest if size > MAX_MANIFEST_BYTES => {
                return Err(BundleError::Manifest {
                    reason: format!("it is {size} bytes, more than {MAX_MANIFEST_BYTES}"),
                })
            }
            Entry::Manifest => return Ok(()),
            Entry::Part(index) => self.manifest.as_ref().map_or(0, |m| m.parts[index].size),
            Entry::Checksum => CHECKSUM_BYTES,
        };
        if size == expected {
            return Ok(());
        }
        Err(BundleError::Size {
            part: name.to_string(),
            expected,
            found: size,
        })
    }

    fn data_done(&mut self, entry: Entry) -> Result<(), BundleError> {
        let size = match entry {
            Entry::Manifest => {
                if let Some(claimed) = &self.tail_checksum {
                    if *claimed != layout::checksum_text(&self.manifest_bytes).as_bytes() {
                        return Err(BundleError::ManifestAltered);
                    }
                }
                let manifest = Manifest::decode(&self.manifest_bytes)?;
                let size = self.manifest_bytes.len() as u64;
                let expected = bundle_length(size, &manifest.parts);
                self.manifest = Some(manifest);
                self.check_length(expected)?;
                size
            }
            Entry::Part(index) => {
                let found = hex(&std::mem::take(&mut self.hasher).finalize());
                let part = &self
                    .manifest
                    .as_ref()
                    .expect("parts follow the manifest")
                    .parts[index];
                if found != part.sha256 {
                    return Err(BundleError::Altered {
                        part: part.path.clone(),
                        expected: part.sha256.clone(),
                        found,
                    });
                }
                part.size
            }
            Entry::Checksum => {
                if self.checksum != layout::checksum_text(&self.manifest_bytes).as_bytes() {
                    return Err(BundleError::ManifestAltered);
                }
                CHECKSUM_BYTES
            }
        };
        let remaining = padding(size);
        self.stage = if remaining > 0 {
            Stage::Padding {
                after: entry,
                remaining,
            }
        } else {
            self.after(entry)
        };
        Ok(())
    }

    /// The file must be exactly as long as the manifest says: a copy cut short is refused
    /// before its gigabytes are read.
    fn check_length(&self, expected: u64) -> Result<(), BundleError> {
        if self.file_length > expected {
            return Err(BundleError::Trailing {
                extra: self.file_length - expected,
            });
        }
        if self.file_length < expected {
            let manifest = self.manifest.as_ref().expect("just read");
            return Err(BundleError::Truncated {
                where_: truncation(
                    manifest,
                    self.manifest_bytes.len() as u64,
                    self.file_length,
                    expected,
                ),
            });
        }
        Ok(())
    }

    /// Where the file ended, for a stream that stopped early.
    fn place(&self) -> String {
        match self.stage {
            Stage::Header(entry) => format!("where the header of `{}` should be", self.name(entry)),
            Stage::Data { entry, remaining } => {
                format!("inside `{}` ({remaining} bytes missing)", self.name(entry))
            }
            Stage::Padding { after, .. } => format!("in the padding after `{}`", self.name(after)),
            Stage::End { .. } | Stage::Done => "before the end-of-archive blocks".to_string(),
        }
    }
}

/// Where a file of `file_length` bytes ends among the entries the manifest describes.
fn truncation(manifest: &Manifest, manifest_size: u64, file_length: u64, expected: u64) -> String {
    let entries = std::iter::once((MANIFEST_PATH, manifest_size))
        .chain(
            manifest
                .parts
                .iter()
                .map(|part| (part.path.as_str(), part.size)),
        )
        .chain(std::iter::once((CHECKSUM_PATH, CHECKSUM_BYTES)));
    let mut start = 0;
    let whole = format!("the file is {file_length} bytes, the bundle {expected}");
    for (name, size) in entries {
        let data_start = start + layout::BLOCK;
        let data_end = data_start + size;
        if file_length < data_start {
            return format!("it ends in the header of part `{name}` ({whole})");
        }
        if file_length < data_end {
            return format!(
                "it ends inside part `{name}`, {} of its {size} bytes missing ({whole})",
                data_end - file_length
            );
        }
        start = data_end + padding(size);
        if file_length < start {
            return format!("it ends in the padding after part `{name}` ({whole})");
        }
    }
    format!("it ends before the end-of-archive blocks ({whole})")
}

/// The bytes at the end of a file that hold `manifest.sha256` and the end blocks.
pub const TAIL_BYTES: u64 = layout::BLOCK * 2 + layout::END.len() as u64;

/// The text of `manifest.sha256` when `tail` is exactly that entry and the end blocks.
fn tail_checksum(tail: &[u8]) -> Option<Vec<u8>> {
    if tail.len() as u64 != TAIL_BYTES {
        return None;
    }
    let (block, rest) = tail.split_at(512);
    let header = tar::Header::from_byte_slice(block);
    let valid = checksum_holds(block)
        && header.as_ustar().is_some()
        && header.entry_type() == tar::EntryType::Regular
        && header.path_bytes().as_ref() == CHECKSUM_PATH.as_bytes()
        && header.entry_size().ok() == Some(CHECKSUM_BYTES);
    let (text, zeros) = rest.split_at(CHECKSUM_BYTES as usize);
    let text_valid = text.ends_with(format!("  {MANIFEST_PATH}\n").as_bytes());
    (valid && text_valid && zeros.iter().all(|byte| *byte == 0)).then(|| text.to_vec())
}

/// Whether a header's checksum field is exactly what tar writes for its other bytes (its
/// value alone would let the field's terminating NUL and space be swapped unnoticed).
fn checksum_holds(block: &[u8]) -> bool {
    let mut header = tar::Header::from_byte_slice(block).clone();
    header.set_cksum();
    header.as_bytes().as_slice() == block
}

fn kind_name(kind: tar::EntryType, ustar: bool) -> &'static str {
    match kind {
        _ if !ustar => "file in a pre-POSIX tar format",
        tar::EntryType::Symlink => "symbolic link",
        tar::EntryType::Link => "hard link",
        tar::EntryType::Char | tar::EntryType::Block => "device",
        tar::EntryType::Directory => "folder",
        tar::EntryType::Fifo => "named pipe",
        tar::EntryType::XHeader | tar::EntryType::XGlobalHeader => "PAX extension header",
        tar::EntryType::GNULongName | tar::EntryType::GNULongLink => "GNU long-name header",
        _ => "special entry",
    }
}
