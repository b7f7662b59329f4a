//! The fake engine's file copies: an upload is read as a tar and recorded (its entries
//! with their owners and modes, so tests see what the container would hold), a download
//! hands over the tar a test put in `archives` for that path, in small chunks.

use super::FakeState;
use crate::EngineError;

/// Records an upload of `tar` into `folder`: `upload c1 /tf (3 entries)`; a folder named
/// `/missing...` is one the container does not have until an upload makes it.
pub fn upload(
    state: &mut FakeState,
    id: &str,
    folder: &str,
    tar: &[u8],
) -> Result<bool, EngineError> {
    let mut entries = Vec::new();
    let mut folders = Vec::new();
    let mut archive = tar::Archive::new(tar);
    let fail = |error: std::io::Error| EngineError::Failed {
        what: format!("copy files into `{folder}`"),
        message: error.to_string(),
    };
    let mut contents = Vec::new();
    for entry in archive.entries().map_err(fail)? {
        let mut entry = entry.map_err(fail)?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut bytes).map_err(fail)?;
        let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        contents.push((format!("{}/{path}", folder.trim_end_matches('/')), bytes));
        let header = entry.header();
        if header.entry_type().is_dir() {
            let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            folders.push(format!(
                "{}/{}",
                folder.trim_end_matches('/'),
                path.trim_end_matches('/')
            ));
        }
        entries.push(format!(
            "{} {}:{} {:o}",
            String::from_utf8_lossy(&entry.path_bytes()),
            header.uid().map_err(fail)?,
            header.gid().map_err(fail)?,
            header.mode().map_err(fail)?,
        ));
    }
    state.record(format!("upload {id} {folder} ({} entries)", entries.len()));
    if folder.starts_with("/missing") && !state.made_folders.contains(folder) {
        return Ok(false);
    }
    state.made_folders.extend(folders);
    state.uploaded.extend(contents);
    state
        .uploads
        .push((id.to_string(), folder.to_string(), entries));
    Ok(true)
}

/// Hands `sink` the tar at `path` in small chunks; false when the container has nothing
/// there.
pub fn download(
    state: &mut FakeState,
    id: &str,
    path: &str,
    sink: impl FnMut(bytes::Bytes) -> std::ops::ControlFlow<()>,
) -> bool {
    state.record(format!("download {id} {path}"));
    let Some(tar) = state.archives.get(path) else {
        return false;
    };
    let _ = tar
        .chunks(700)
        .map(bytes::Bytes::copy_from_slice)
        .try_for_each(sink);
    true
}
