//! Images: look up, tag, remove, pull, export and load image tarballs (`docker save`,
//! `docker load`: bollard's `export_images` and `import_image`), and import a root
//! filesystem tarball (what `docker import` does: image create with `fromSrc=-`, a
//! different format).

use std::collections::HashMap;

use bollard::query_parameters::{
    CreateImageOptionsBuilder, ImportImageOptionsBuilder, ListImagesOptionsBuilder,
    RemoveImageOptionsBuilder, TagImageOptionsBuilder,
};
use bytes::Bytes;
use futures_util::StreamExt;

use super::Docker;
use crate::{EngineError, ImageFacts, Images, TarStream};
use tfimg_core::spec::syntax::split_reference;

impl Images for Docker {
    /// The image called `reference` (a tag or an id), or `None` when it is not local.
    async fn image(&self, reference: &str) -> Result<Option<ImageFacts>, EngineError> {
        match self.client.inspect_image(reference).await {
            Ok(image) => {
                let config = image.config.unwrap_or_default();
                let mut exposed_ports: Vec<u16> = config
                    .exposed_ports
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|port| port.strip_suffix("/tcp")?.parse().ok())
                    .collect();
                exposed_ports.sort_unstable();
                Ok(Some(ImageFacts {
                    id: image.id.unwrap_or_default(),
                    tags: image.repo_tags.unwrap_or_default(),
                    labels: config.labels.unwrap_or_default(),
                    working_dir: config.working_dir.unwrap_or_default(),
                    exposed_ports,
                }))
            }
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(error) => Err(self.fail(&format!("inspect image `{reference}`"), error)),
        }
    }

    /// Local images carrying `label` (`key` or `key=value`).
    async fn images_with_label(&self, label: &str) -> Result<Vec<ImageFacts>, EngineError> {
        let filters = HashMap::from([("label".to_string(), vec![label.to_string()])]);
        let options = ListImagesOptionsBuilder::new().filters(&filters).build();
        let images = self
            .client
            .list_images(Some(options))
            .await
            .map_err(|error| self.fail("list images", error))?;
        Ok(images
            .into_iter()
            .map(|image| ImageFacts {
                id: image.id,
                tags: image
                    .repo_tags
                    .into_iter()
                    .filter(|tag| tag != "<none>:<none>")
                    .collect(),
                labels: image.labels,
                working_dir: String::new(),
                exposed_ports: Vec::new(),
            })
            .collect())
    }

    /// Tags `image` (id or reference) as `reference` (`repo:tag`).
    async fn tag(&self, image: &str, reference: &str) -> Result<(), EngineError> {
        let (repository, tag) = split_reference(reference);
        let options = TagImageOptionsBuilder::new()
            .repo(repository)
            .tag(tag)
            .build();
        self.client
            .tag_image(image, Some(options))
            .await
            .map_err(|error| self.fail(&format!("tag `{reference}`"), error))
    }

    /// Removes a tag or an image. Layers still used by other images stay.
    async fn remove_image(&self, reference: &str, force: bool) -> Result<(), EngineError> {
        let options = RemoveImageOptionsBuilder::new().force(force).build();
        match self
            .client
            .remove_image(reference, Some(options), None)
            .await
        {
            Ok(_)
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(error) => Err(self.fail(&format!("remove image `{reference}`"), error)),
        }
    }

    /// `docker history`: the command that created each layer, newest first.
    async fn history(&self, reference: &str) -> Result<Vec<String>, EngineError> {
        let history = self
            .client
            .image_history(reference)
            .await
            .map_err(|error| self.fail(&format!("history of `{reference}`"), error))?;
        Ok(history.into_iter().map(|layer| layer.created_by).collect())
    }

    /// Pulls `reference`; `progress` gets one line per status change.
    async fn pull(
        &self,
        reference: &str,
        mut progress: impl FnMut(&str),
    ) -> Result<(), EngineError> {
        let (repository, tag) = split_reference(reference);
        let options = CreateImageOptionsBuilder::new()
            .from_image(repository)
            .tag(tag)
            .build();
        let mut stream = self.client.create_image(Some(options), None, None);
        let mut last = String::new();
        while let Some(item) = stream.next().await {
            let info = item.map_err(|error| self.fail(&format!("pull `{reference}`"), error))?;
            if let Some(status) = info.status {
                let line = match info.id {
                    Some(id) => format!("{id}: {status}"),
                    None => status,
                };
                if line != last {
                    progress(&line);
                    last = line;
                }
            }
        }
        Ok(())
    }

    /// Pushes `reference` (already tagged for its registry); returns the pushed digest.
    async fn push(
        &self,
        reference: &str,
        mut progress: impl FnMut(&str),
    ) -> Result<String, EngineError> {
        let (repository, tag) = split_reference(reference);
        let options = bollard::query_parameters::PushImageOptionsBuilder::new()
            .tag(tag)
            .build();
        let mut stream = self.client.push_image(repository, Some(options), None);
        let mut digest = None;
        let mut last = String::new();
        while let Some(item) = stream.next().await {
            let info = item.map_err(|error| self.fail(&format!("push `{reference}`"), error))?;
            if let Some(status) = info.status {
                // The last status says `<tag>: digest: sha256:... size: N`.
                if let Some(rest) = status.split("digest: ").nth(1) {
                    digest = rest.split_whitespace().next().map(str::to_string);
                }
                if status != last {
                    progress(&status);
                    last = status;
                }
            }
        }
        digest.ok_or_else(|| EngineError::Failed {
            what: format!("push `{reference}`"),
            message: "the registry reported no digest".to_string(),
        })
    }

    /// `GET /images/get?names=...`, streamed to `sink` as it arrives.
    async fn export_images(
        &self,
        references: &[String],
        mut sink: impl FnMut(Bytes) -> std::ops::ControlFlow<()>,
    ) -> Result<(), EngineError> {
        let names: Vec<&str> = references.iter().map(String::as_str).collect();
        let what = format!("export `{}`", references.join("`, `"));
        let mut stream = std::pin::pin!(self.client.export_images(&names));
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|error| self.fail(&what, error))?;
            if sink(chunk).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// `POST /images/load` with the tarball streamed as the request body.
    async fn load_images(
        &self,
        tarball: impl TarStream,
        mut progress: impl FnMut(&str),
    ) -> Result<(), EngineError> {
        let options = ImportImageOptionsBuilder::new().quiet(false).build();
        let body = bollard::body_try_stream(tarball);
        let mut stream = self.client.import_image(options, body, None);
        while let Some(item) = stream.next().await {
            let info = item.map_err(|error| self.fail("load the images", error))?;
            let text = info.stream.or(info.status).unwrap_or_default();
            for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
                progress(line);
            }
        }
        Ok(())
    }

    /// Imports a root filesystem tarball as `reference`, applying Dockerfile-style
    /// `changes` (`LABEL k=v`, `CMD ["bash"]`). Returns the new image's id.
    async fn import_rootfs(
        &self,
        reference: &str,
        changes: &[String],
        tarball: impl TarStream,
    ) -> Result<String, EngineError> {
        let (repository, tag) = split_reference(reference);
        let mut options = CreateImageOptionsBuilder::new()
            .from_src("-")
            .repo(repository)
            .tag(tag)
            .build();
        options.changes = changes.to_vec();
        let body = bollard::body_try_stream(tarball);
        let mut stream = self.client.create_image(Some(options), Some(body), None);
        while let Some(item) = stream.next().await {
            item.map_err(|error| self.fail(&format!("import `{reference}`"), error))?;
        }
        self.image(reference)
            .await?
            .map(|image| image.id)
            .ok_or_else(|| EngineError::Failed {
                what: format!("import `{reference}`"),
                message: "the daemon reported success but the image is missing".to_string(),
            })
    }
}
