//! The fake engine's image tarballs: `export` writes one line per image
//! (`image <id> <reference> <key=value;...>`) and some filler, `load` reads those
//! lines back into images (moving tags, as `docker load` does), so a save and a load
//! round-trip through the fakes.

use futures_util::StreamExt;

use super::{missing, FakeState};
use crate::{EngineError, ImageFacts, TarStream};

/// Every byte of a tarball stream, or the stream's own error (a bundle that changed).
pub async fn read_all(tarball: impl TarStream) -> Result<Vec<u8>, EngineError> {
    let mut bytes = Vec::new();
    let mut chunks = std::pin::pin!(tarball);
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| EngineError::Failed {
            what: "load the images".to_string(),
            message: error.to_string(),
        })?;
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The chunks to hand over, and the failure after them (`export_failure`: half of them).
pub fn export(
    state: &mut FakeState,
    references: &[String],
) -> Result<(Vec<bytes::Bytes>, Option<EngineError>), EngineError> {
    state.record(format!("export {}", references.join(" ")));
    let mut text = String::new();
    for reference in references {
        let id = state.image_id(reference).ok_or_else(|| missing("export"))?;
        let mut labels: Vec<String> = state.images[&id]
            .labels
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        labels.sort();
        // As `docker save`: the tarball names the image by the reference asked for only.
        text += &format!("image {id} {reference} {}\n", labels.join(";"));
    }
    text += &"filler of a layer\n".repeat(300);
    let mut chunks: Vec<bytes::Bytes> = text
        .as_bytes()
        .chunks(1000)
        .map(bytes::Bytes::copy_from_slice)
        .collect();
    let failure = state.export_failure.take().map(|message| {
        chunks.truncate(chunks.len() / 2);
        EngineError::Failed {
            what: "export".to_string(),
            message,
        }
    });
    Ok((chunks, failure))
}

pub fn load(
    state: &mut FakeState,
    bytes: &[u8],
    mut progress: impl FnMut(&str),
) -> Result<(), EngineError> {
    state.record(format!("load {} bytes", bytes.len()));
    if let Some(message) = state.load_failure.take() {
        return Err(EngineError::Failed {
            what: "load the images".to_string(),
            message,
        });
    }
    for line in String::from_utf8_lossy(bytes).lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let ["image", id, tags, labels] = fields[..] else {
            continue;
        };
        let tags: Vec<String> = tags
            .split(',')
            .filter(|tag| !tag.is_empty() && !tag.starts_with("sha256:"))
            .map(str::to_string)
            .collect();
        for other in state.images.values_mut() {
            other.tags.retain(|tag| !tags.contains(tag));
        }
        let image = state
            .images
            .entry(id.to_string())
            .or_insert_with(|| ImageFacts {
                id: id.to_string(),
                ..ImageFacts::default()
            });
        for tag in tags {
            if !image.tags.contains(&tag) {
                progress(&format!("Loaded image: {tag}"));
                image.tags.push(tag);
            }
        }
        image.labels = labels
            .split(';')
            .filter_map(|pair| pair.split_once('='))
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect();
    }
    Ok(())
}
