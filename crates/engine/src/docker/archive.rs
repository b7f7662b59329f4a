//! Files in and out of containers (`PUT`/`GET /containers/{id}/archive`) and whether a
//! volume exists: what `--sync`, `--sync-back`, `pull-files` and `--volume` need.

use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};

use super::Docker;
use crate::{EngineError, TarStream};

/// What the daemon says when a container has nothing at the path asked about.
const NOT_FOUND: &str = "Could not find the file";

impl Docker {
    /// Unpacks `archive` into `folder`; the daemon keeps the entries' owners (no
    /// `copyUIDGID`, which would look the container's user up in the daemon host's passwd)
    /// and refuses to replace a folder with a file or a file with a folder.
    pub(super) async fn put_archive(
        &self,
        id: &str,
        folder: &str,
        archive: impl TarStream,
    ) -> Result<bool, EngineError> {
        let options = bollard::query_parameters::UploadToContainerOptions {
            path: folder.to_string(),
            no_overwrite_dir_non_dir: Some("true".to_string()),
            copy_uidgid: None,
        };
        // A file that cannot be read while streaming is this machine's problem, not the
        // daemon's: keep its error to report instead of the broken request's.
        let local: Arc<Mutex<Option<String>>> = Arc::default();
        let seen = Arc::clone(&local);
        let archive = archive.inspect_err(move |error| {
            seen.lock()
                .map(|mut seen| *seen = Some(error.to_string()))
                .ok();
        });
        let body = bollard::body_try_stream(archive);
        match self
            .client
            .upload_to_container(id, Some(options), body)
            .await
        {
            Ok(()) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404,
                message,
            }) if message.contains(NOT_FOUND) => Ok(false),
            Err(error) => match local.lock().ok().and_then(|mut seen| seen.take()) {
                Some(message) => Err(EngineError::Failed {
                    what: "read the files to copy".to_string(),
                    message,
                }),
                None => Err(self.fail(&format!("copy files into `{folder}`"), error)),
            },
        }
    }

    /// Streams a tar of `path` to `sink`.
    pub(super) async fn get_archive(
        &self,
        id: &str,
        path: &str,
        mut sink: impl FnMut(Bytes) -> ControlFlow<()>,
    ) -> Result<bool, EngineError> {
        let options = bollard::query_parameters::DownloadFromContainerOptions {
            path: path.to_string(),
        };
        let mut stream = std::pin::pin!(self.client.download_from_container(id, Some(options)));
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404,
                    message,
                }) if message.contains(NOT_FOUND) => return Ok(false),
                Err(error) => return Err(self.fail(&format!("copy `{path}` out"), error)),
            };
            if sink(chunk).is_break() {
                break;
            }
        }
        Ok(true)
    }

    pub(super) async fn volume_present(&self, name: &str) -> Result<bool, EngineError> {
        match self.client.inspect_volume(name).await {
            Ok(_) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(error) => Err(self.fail(&format!("inspect volume `{name}`"), error)),
        }
    }
}
