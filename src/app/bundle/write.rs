//! Writing a bundle in place: a slot for the manifest, the small parts, the image
//! tarball as the daemon streams it (hashed on the way, never whole in memory), the
//! checksum and the end; then the image part's header and the manifest in their places,
//! and a sync. The layout is `bundle::layout`'s.

use std::io::{Seek, SeekFrom, Write};
use std::ops::ControlFlow;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::{human_size, PROGRESS_EVERY_BYTES};
use crate::app::session::Session;
use crate::bundle::layout::{self, IMAGES_PART};
use crate::bundle::{Manifest, MANIFEST_PATH};
use crate::engine::prelude::Images;
use crate::host::prelude::FileWrites;
use crate::host::{HostError, OutputFile};
use crate::output::progress::Report;
use crate::plan::image::hex;

#[derive(Debug)]
pub struct Saved {
    pub manifest: Manifest,
    /// The bundle's size.
    pub bytes: u64,
}

/// A small part (a spec, a lock), in memory.
pub struct SmallPart {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// Writes the bundle into `temporary`: a slot for the manifest, the small parts, the
/// image tarball as the daemon streams it, the checksum and the end; then the image
/// part's header and the manifest in their places.
pub async fn write(
    session: Session<'_, impl Images, impl FileWrites>,
    temporary: &Path,
    parts: &[SmallPart],
    references: &[String],
    mut manifest: Manifest,
) -> anyhow::Result<Saved> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let failed = |error: std::io::Error| write_failed(temporary, &error);
    let created = manifest.created_unix;
    let slot = layout::manifest_slot(&manifest);
    let mut file = host.create_file(temporary).map_err(failed)?;
    file.write_all(&vec![0; layout::entry_length(slot) as usize])
        .map_err(failed)?;
    for part in parts {
        write_entry(&mut *file, &part.path, &part.bytes, created).map_err(failed)?;
    }
    let header_at = file.stream_position().map_err(failed)?;
    file.write_all(&[0; 512]).map_err(failed)?;
    reporter.status(&format!(
        "exporting `{}` from the daemon",
        references.join("`, `")
    ));
    let (size, sha256) = export(engine, &mut *file, references, reporter)
        .await?
        .map_err(failed)?;
    let end_at = header_at + layout::entry_length(size);
    let image_part = manifest.parts.last_mut().expect("the image part is last");
    image_part.size = size;
    image_part.sha256 = sha256;
    manifest.validate()?;
    let manifest_bytes =
        layout::padded_manifest(&manifest, slot).expect("the slot was sized for the manifest");
    let header = layout::header(IMAGES_PART, size, created)?;
    let finish = |file: &mut dyn OutputFile| -> std::io::Result<u64> {
        file.write_all(&vec![0; layout::padding(size) as usize])?;
        file.seek(SeekFrom::Start(header_at))?;
        file.write_all(&header)?;
        file.seek(SeekFrom::Start(end_at))?;
        let checksum = layout::checksum_text(&manifest_bytes);
        write_entry(
            file,
            crate::bundle::CHECKSUM_PATH,
            checksum.as_bytes(),
            created,
        )?;
        file.write_all(&layout::END)?;
        let length = file.stream_position()?;
        file.seek(SeekFrom::Start(0))?;
        write_entry(file, MANIFEST_PATH, &manifest_bytes, created)?;
        file.sync()?;
        Ok(length)
    };
    let bytes = finish(&mut *file).map_err(failed)?;
    Ok(Saved { manifest, bytes })
}

/// Streams the daemon's image tarball into `file`; its size and sha256, or the write's
/// failure (the engine's own failure is the outer error).
async fn export(
    engine: &impl Images,
    file: &mut dyn OutputFile,
    references: &[String],
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<std::io::Result<(u64, String)>> {
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut failure = None;
    engine
        .export_images(references, |chunk| {
            hasher.update(&chunk);
            size += chunk.len() as u64;
            if size / PROGRESS_EVERY_BYTES != (size - chunk.len() as u64) / PROGRESS_EVERY_BYTES {
                reporter.live(&format!("exported {}", human_size(size)));
            }
            match file.write_all(&chunk) {
                Ok(()) => ControlFlow::Continue(()),
                Err(error) => {
                    failure = Some(error);
                    ControlFlow::Break(())
                }
            }
        })
        .await?;
    Ok(match failure {
        Some(error) => Err(error),
        None => Ok((size, hex(&hasher.finalize()))),
    })
}

fn write_entry(
    file: &mut dyn OutputFile,
    path: &str,
    bytes: &[u8],
    mtime: u64,
) -> std::io::Result<()> {
    let header = layout::header(path, bytes.len() as u64, mtime).map_err(std::io::Error::other)?;
    file.write_all(&header)?;
    file.write_all(bytes)?;
    file.write_all(&vec![0; layout::padding(bytes.len() as u64) as usize])
}

pub fn write_failed(path: &Path, error: &std::io::Error) -> anyhow::Error {
    HostError {
        message: format!("cannot write the bundle `{}`: {error}", path.display()),
        hint: "check the free space and permissions of its folder (the bundle is about as large as the images); nothing was left behind".to_string(),
    }
    .into()
}
