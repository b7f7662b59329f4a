//! Containers: for now the short-lived kind tfimg runs itself (build verification): create,
//! start, wait with a deadline, collect the output, and always remove.

use std::collections::HashMap;
use std::time::Duration;

use bollard::models::ContainerCreateBody;
use bollard::query_parameters::{LogsOptionsBuilder, RemoveContainerOptionsBuilder};
use futures_util::StreamExt;

use super::{Engine, EngineError};

/// A finished one-off container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub exit_code: i64,
    /// stdout and stderr, interleaved as the daemon stored them.
    pub output: String,
}

/// What a one-off container runs.
#[derive(Debug, Clone, Default)]
pub struct OneOff {
    pub image: String,
    pub command: Vec<String>,
    pub env: Vec<String>,
    pub labels: HashMap<String, String>,
    /// No network at all: verification must not depend on (or reach) anything outside.
    pub network_disabled: bool,
}

impl Engine {
    /// Runs `spec` to completion (or `deadline`, after which it is killed) and removes it,
    /// whatever happened.
    pub async fn run_once(
        &self,
        spec: &OneOff,
        deadline: Duration,
    ) -> Result<Finished, EngineError> {
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            cmd: Some(spec.command.clone()),
            env: Some(spec.env.clone()),
            labels: Some(spec.labels.clone()),
            network_disabled: Some(spec.network_disabled),
            ..Default::default()
        };
        let created = self
            .docker
            .create_container(None, body)
            .await
            .map_err(|error| self.fail("create container", error))?;
        let id = created.id;
        let outcome = self.start_and_wait(&id, deadline).await;
        let removal = self
            .docker
            .remove_container(
                &id,
                Some(RemoveContainerOptionsBuilder::new().force(true).build()),
            )
            .await;
        let finished = outcome?;
        if let Err(error) = removal {
            tracing::warn!("could not remove container {id}: {error}");
        }
        Ok(finished)
    }

    async fn start_and_wait(&self, id: &str, deadline: Duration) -> Result<Finished, EngineError> {
        self.docker
            .start_container(id, None)
            .await
            .map_err(|error| self.fail("start container", error))?;
        let mut wait = self.docker.wait_container(id, None);
        let exit_code = match tokio::time::timeout(deadline, wait.next()).await {
            Err(_) => {
                return Err(EngineError::Failed {
                    what: "container".to_string(),
                    message: format!("still running after {} s", deadline.as_secs()),
                })
            }
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
        let mut logs = self.docker.logs(id, Some(options));
        let mut output = String::new();
        while let Some(chunk) = logs.next().await {
            let chunk = chunk.map_err(|error| self.fail("read container output", error))?;
            output.push_str(&chunk.to_string());
        }
        Ok(Finished { exit_code, output })
    }
}
