//! The one-off containers tfimg runs itself (build verification, lock resolution, the GPU
//! probe on an engine's host): created, started, their output collected within a
//! deadline, and removed whatever happens. An `auto_remove` one is attached to before it
//! starts and the daemon removes it as it exits, so even a tfimg killed meanwhile leaves
//! nothing behind.

use std::time::Duration;

use bollard::container::LogOutput;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
};
use futures_util::{Stream, StreamExt};

use super::create::gpu_fields;
use super::Docker;
use crate::{EngineError, Finished, OneOff};
use tfimg_core::plan::gpus::{GpuMode, GpuSelection};

impl Docker {
    /// Runs `spec` to completion (or `deadline`, after which it is killed) and removes it,
    /// whatever happened.
    pub(super) async fn one_off(
        &self,
        spec: &OneOff,
        deadline: Duration,
    ) -> Result<Finished, EngineError> {
        let id = self
            .client
            .create_container(None, create_body(spec))
            .await
            .map_err(|error| self.fail("create container", error))?
            .id;
        let outcome = if spec.auto_remove {
            self.attach_and_start(&id, deadline).await
        } else {
            self.start_and_wait(&id, deadline).await
        };
        let removal = self
            .client
            .remove_container(
                &id,
                Some(RemoveContainerOptionsBuilder::new().force(true).build()),
            )
            .await;
        let finished = outcome?;
        match removal {
            Ok(()) => {}
            // The daemon removes an `auto_remove` one itself (it may be gone already, or
            // on its way).
            Err(error) if spec.auto_remove => tracing::debug!("container {id}: {error}"),
            Err(error) => tracing::warn!("could not remove container {id}: {error}"),
        }
        Ok(finished)
    }

    async fn start_and_wait(&self, id: &str, deadline: Duration) -> Result<Finished, EngineError> {
        self.client
            .start_container(id, None)
            .await
            .map_err(|error| self.start_error(error))?;
        let mut wait = self.client.wait_container(id, None);
        let exit_code = match tokio::time::timeout(deadline, wait.next()).await {
            Err(_) => return Err(still_running(deadline)),
            Ok(Some(Ok(response))) => response.status_code,
            Ok(Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. }))) => code,
            Ok(Some(Err(error))) => return Err(self.fail("wait for container", error)),
            Ok(None) => {
                return Err(EngineError::Failed {
                    what: "wait for container".to_string(),
                    message: "the daemon closed the wait without an exit code".to_string(),
                })
            }
        };
        let options = LogsOptionsBuilder::new().stdout(true).stderr(true).build();
        let (output, stdout) = self.collect(self.client.logs(id, Some(options))).await?;
        Ok(Finished {
            exit_code: Some(exit_code),
            output,
            stdout,
        })
    }

    /// Attaches first (so nothing it prints is lost, and its exit needs no later question
    /// of a container the daemon may have removed), starts it, and reads until it ends.
    async fn attach_and_start(
        &self,
        id: &str,
        deadline: Duration,
    ) -> Result<Finished, EngineError> {
        let options = AttachContainerOptionsBuilder::new()
            .stream(true)
            .logs(true)
            .stdout(true)
            .stderr(true)
            .build();
        let attached = self
            .client
            .attach_container(id, Some(options))
            .await
            .map_err(|error| self.fail("attach to container", error))?;
        self.client
            .start_container(id, None)
            .await
            .map_err(|error| self.start_error(error))?;
        let (output, stdout) = tokio::time::timeout(deadline, self.collect(attached.output))
            .await
            .map_err(|_| still_running(deadline))??;
        Ok(Finished {
            exit_code: None,
            output,
            stdout,
        })
    }

    /// Everything a container printed (both streams as they came), and its stdout alone.
    async fn collect(
        &self,
        mut chunks: impl Stream<Item = Result<LogOutput, bollard::errors::Error>> + Unpin,
    ) -> Result<(String, String), EngineError> {
        let (mut output, mut stdout) = (String::new(), String::new());
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|error| self.fail("read container output", error))?;
            let text = chunk.to_string();
            if !matches!(chunk, LogOutput::StdErr { .. }) {
                stdout.push_str(&text);
            }
            output.push_str(&text);
        }
        Ok((output, stdout))
    }

    /// A refused start; "could not select device driver" is the missing GPU toolkit.
    fn start_error(&self, error: bollard::errors::Error) -> EngineError {
        match error {
            bollard::errors::Error::DockerResponseServerError { message, .. }
                if message.contains("could not select device driver") =>
            {
                EngineError::GpuToolkitMissing { message }
            }
            error => self.fail("start container", error),
        }
    }
}

fn still_running(deadline: Duration) -> EngineError {
    EngineError::Failed {
        what: "container".to_string(),
        message: format!("still running after {} s", deadline.as_secs()),
    }
}

/// The create request of a one-off: no name, its entrypoint and command, and for
/// `all_gpus` the DeviceRequest `--gpus all` makes.
fn create_body(spec: &OneOff) -> ContainerCreateBody {
    let device_requests = if spec.all_gpus {
        GpuSelection::All
            .plan(GpuMode::Devices)
            .ok()
            .and_then(|plan| gpu_fields(&plan).0)
    } else {
        None
    };
    ContainerCreateBody {
        image: Some(spec.image.clone()),
        entrypoint: spec.entrypoint.clone(),
        cmd: Some(spec.command.clone()),
        env: Some(spec.env.clone()),
        labels: Some(spec.labels.clone()),
        network_disabled: Some(spec.network_disabled),
        host_config: Some(HostConfig {
            auto_remove: Some(spec.auto_remove),
            device_requests,
            ..Default::default()
        }),
        ..Default::default()
    }
}
