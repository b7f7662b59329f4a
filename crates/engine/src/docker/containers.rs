//! Containers: the planned ones tfimg launches (create, start, inspect, list, logs, exec,
//! stop, remove); the one-off kind it runs itself is in `one_off`.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::Duration;

use bollard::query_parameters::{LogsOptionsBuilder, RemoveContainerOptionsBuilder};
use bytes::Bytes;
use futures_util::StreamExt;

use super::create::to_create_body;
use super::output::hand_over;
use super::Docker;
use crate::{
    ContainerFacts, ContainerIo, Containers, EngineError, Finished, OneOff, OutputChunk,
    StartFailure, TarStream,
};
use tfimg_core::plan::tunnels::Published;
use tfimg_core::plan::LaunchPlan;

impl Containers for Docker {
    /// Creates (does not start) the planned container; returns its id.
    async fn create(&self, plan: &LaunchPlan) -> Result<String, EngineError> {
        let options = bollard::query_parameters::CreateContainerOptionsBuilder::new()
            .name(&plan.name)
            .build();
        let body = to_create_body(plan);
        match self.client.create_container(Some(options), body).await {
            Ok(created) => Ok(created.id),
            Err(bollard::errors::Error::DockerResponseServerError { message, .. })
                if message.contains("Unknown runtime specified nvidia") =>
            {
                Err(EngineError::GpuToolkitMissing { message })
            }
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409,
                message,
            }) => Err(EngineError::Failed {
                what: format!("create container `{}`", plan.name),
                message,
            }),
            Err(error) => Err(self.fail(&format!("create container `{}`", plan.name), error)),
        }
    }
    async fn start(&self, id: &str) -> Result<(), StartFailure> {
        match self.client.start_container(id, None).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError { message, .. })
                if message.contains("could not select device driver") =>
            {
                Err(StartFailure::GpuDriver(message))
            }
            Err(bollard::errors::Error::DockerResponseServerError { message, .. })
                if message.contains("port is already allocated")
                    || message.contains("address already in use") =>
            {
                Err(StartFailure::PortTaken(message))
            }
            Err(error) => Err(StartFailure::Engine(self.fail("start container", error))),
        }
    }
    /// The container called `name` (or with that id), or `None`.
    async fn container(&self, name: &str) -> Result<Option<ContainerFacts>, EngineError> {
        let inspected = match self.client.inspect_container(name, None).await {
            Ok(inspected) => inspected,
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => return Ok(None),
            Err(error) => return Err(self.fail(&format!("inspect container `{name}`"), error)),
        };
        let config = inspected.config.unwrap_or_default();
        let host = inspected.host_config.unwrap_or_default();
        let state = inspected.state.unwrap_or_default();
        Ok(Some(ContainerFacts {
            id: inspected.id.unwrap_or_default(),
            name: inspected
                .name
                .unwrap_or_default()
                .trim_start_matches('/')
                .to_string(),
            image: config.image.clone().unwrap_or_default(),
            state: state
                .status
                .map(|status| status.to_string())
                .unwrap_or_default(),
            status: String::new(),
            exit_code: state.exit_code,
            labels: config.labels.unwrap_or_default(),
            device_requests: host
                .device_requests
                .unwrap_or_default()
                .into_iter()
                .map(|request| tfimg_core::plan::gpus::DeviceRequestPlan {
                    driver: request.driver.unwrap_or_default(),
                    count: request.count,
                    device_ids: request.device_ids.unwrap_or_default(),
                    capabilities: request.capabilities.unwrap_or_default(),
                })
                .collect(),
            runtime: host.runtime,
            user: config.user.unwrap_or_default(),
            env: config.env.unwrap_or_default(),
            mounts: host
                .mounts
                .unwrap_or_default()
                .into_iter()
                .map(|mount| {
                    (
                        mount.source.unwrap_or_default(),
                        mount.target.unwrap_or_default(),
                        mount.read_only.unwrap_or(false),
                    )
                })
                .collect(),
            shm_size: host.shm_size,
            cap_drop: host.cap_drop.unwrap_or_default(),
            cap_add: host.cap_add.unwrap_or_default(),
            privileged: host.privileged.unwrap_or(false),
            restarts: host
                .restart_policy
                .and_then(|policy| policy.name)
                .is_some_and(|name| {
                    use bollard::models::RestartPolicyNameEnum as Name;
                    !matches!(name, Name::NO | Name::EMPTY)
                }),
            published: published(inspected.network_settings),
            started_ms: state.started_at.as_deref().and_then(unix_ms),
            finished_ms: state.finished_at.as_deref().and_then(unix_ms),
            oom_killed: state.oom_killed.unwrap_or(false),
            created_s: inspected
                .created
                .as_deref()
                .and_then(unix_ms)
                .and_then(|ms| i64::try_from(ms / 1000).ok()),
        }))
    }
    /// Every container (running or not) carrying `label` (`key` or `key=value`).
    async fn containers_with_label(&self, label: &str) -> Result<Vec<ContainerFacts>, EngineError> {
        let filters = HashMap::from([("label".to_string(), vec![label.to_string()])]);
        let options = bollard::query_parameters::ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        let listed = self
            .client
            .list_containers(Some(options))
            .await
            .map_err(|error| self.fail("list containers", error))?;
        Ok(listed
            .into_iter()
            .map(|summary| ContainerFacts {
                id: summary.id.unwrap_or_default(),
                name: summary
                    .names
                    .unwrap_or_default()
                    .first()
                    .map(|name| name.trim_start_matches('/').to_string())
                    .unwrap_or_default(),
                image: summary.image.unwrap_or_default(),
                state: summary
                    .state
                    .map(|state| state.to_string())
                    .unwrap_or_default(),
                status: summary.status.unwrap_or_default(),
                exit_code: None,
                labels: summary.labels.unwrap_or_default(),
                device_requests: Vec::new(),
                runtime: None,
                user: String::new(),
                env: Vec::new(),
                mounts: Vec::new(),
                shm_size: None,
                cap_drop: Vec::new(),
                cap_add: Vec::new(),
                privileged: false,
                restarts: false,
                published: Vec::new(),
                started_ms: None,
                finished_ms: None,
                created_s: summary.created,
                oom_killed: false,
            })
            .collect())
    }
    /// Waits for the container to stop; its exit code.
    async fn wait(&self, id: &str) -> Result<i64, EngineError> {
        let mut wait = self.client.wait_container(id, None);
        match wait.next().await {
            Some(Ok(response)) => Ok(response.status_code),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
            Some(Err(error)) => Err(self.fail("wait for container", error)),
            None => Err(EngineError::Failed {
                what: "wait for container".to_string(),
                message: "the daemon closed the wait without an exit code".to_string(),
            }),
        }
    }
    async fn stop(&self, id: &str, seconds: i32) -> Result<(), EngineError> {
        let options = bollard::query_parameters::StopContainerOptionsBuilder::new()
            .t(seconds)
            .build();
        match self.client.stop_container(id, Some(options)).await {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 304 | 404,
                ..
            }) => Ok(()),
            Err(error) => Err(self.fail("stop container", error)),
        }
    }
    async fn remove_container(&self, id: &str, force: bool) -> Result<(), EngineError> {
        let options = RemoveContainerOptionsBuilder::new().force(force).build();
        match self.client.remove_container(id, Some(options)).await {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(error) => Err(self.fail("remove container", error)),
        }
    }
    /// Runs `spec` to completion (or `deadline`, after which it is killed) and removes it,
    /// whatever happened.
    async fn run_once(&self, spec: &OneOff, deadline: Duration) -> Result<Finished, EngineError> {
        self.one_off(spec, deadline).await
    }
}

impl ContainerIo for Docker {
    /// Output so far (not following).
    async fn output(&self, id: &str) -> Result<String, EngineError> {
        let options = LogsOptionsBuilder::new().stdout(true).stderr(true).build();
        let mut logs = self.client.logs(id, Some(options));
        let mut output = String::new();
        while let Some(chunk) = logs.next().await {
            let chunk = chunk.map_err(|error| self.fail("read container output", error))?;
            output.push_str(&chunk.to_string());
        }
        Ok(output)
    }
    /// Streams output to this process's stdout/stderr until the container stops (or, with
    /// `follow` false, until the output so far is written).
    async fn stream_output(
        &self,
        id: &str,
        follow: bool,
        tail: Option<&str>,
        mut sink: impl FnMut(OutputChunk),
    ) -> Result<(), EngineError> {
        let mut options = LogsOptionsBuilder::new()
            .stdout(true)
            .stderr(true)
            .follow(follow);
        if let Some(tail) = tail {
            options = options.tail(tail);
        }
        let mut written = (0usize, 0usize);
        let mut logs = self.client.logs(id, Some(options.build()));
        while let Some(chunk) = logs.next().await {
            let chunk = chunk.map_err(|error| self.fail("read container output", error))?;
            hand_over(chunk, &mut written, (0, 0), &mut sink);
        }
        if follow && tail.is_none() {
            // A follow stream can end before the daemon logged a last line without a
            // newline; the stored log is complete, so print whatever the stream missed.
            let options = LogsOptionsBuilder::new().stdout(true).stderr(true).build();
            let mut logs = self.client.logs(id, Some(options));
            let mut seen = (0usize, 0usize);
            while let Some(chunk) = logs.next().await {
                let Ok(chunk) = chunk else { break };
                hand_over(chunk, &mut seen, written, &mut sink);
            }
        }
        Ok(())
    }
    /// Runs `command` in a running container as `user`, streaming its output; the exit code.
    async fn exec(
        &self,
        id: &str,
        command: &[String],
        user: &str,
        mut sink: impl FnMut(OutputChunk),
    ) -> Result<i64, EngineError> {
        let options = bollard::exec::CreateExecOptions {
            cmd: Some(command.to_vec()),
            user: Some(user.to_string()),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            ..Default::default()
        };
        let created = self
            .client
            .create_exec(id, options)
            .await
            .map_err(|error| self.fail("exec", error))?;
        let started = self
            .client
            .start_exec(&created.id, None)
            .await
            .map_err(|error| self.fail("exec", error))?;
        if let bollard::exec::StartExecResults::Attached { mut output, .. } = started {
            while let Some(chunk) = output.next().await {
                sink(
                    match chunk.map_err(|error| self.fail("exec output", error))? {
                        bollard::container::LogOutput::StdErr { message } => {
                            OutputChunk::Stderr(message.to_vec())
                        }
                        other => OutputChunk::Stdout(other.into_bytes().to_vec()),
                    },
                );
            }
        }
        let inspected = self
            .client
            .inspect_exec(&created.id)
            .await
            .map_err(|error| self.fail("exec", error))?;
        Ok(inspected.exit_code.unwrap_or(0))
    }
    async fn upload(
        &self,
        id: &str,
        folder: &str,
        tar: impl TarStream,
    ) -> Result<bool, EngineError> {
        self.put_archive(id, folder, tar).await
    }
    async fn download(
        &self,
        id: &str,
        path: &str,
        sink: impl FnMut(Bytes) -> ControlFlow<()>,
    ) -> Result<bool, EngineError> {
        self.get_archive(id, path, sink).await
    }
    async fn volume_exists(&self, name: &str) -> Result<bool, EngineError> {
        self.volume_present(name).await
    }
}

/// The ports the daemon published, from an inspect's network settings.
fn published(settings: Option<bollard::models::NetworkSettings>) -> Vec<Published> {
    let mut found: Vec<Published> = settings
        .and_then(|settings| settings.ports)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(key, bindings)| {
            let container = key.strip_suffix("/tcp")?.parse().ok()?;
            Some((container, bindings.unwrap_or_default()))
        })
        .flat_map(|(container, bindings)| {
            bindings.into_iter().filter_map(move |binding| {
                Some(Published {
                    container,
                    host_ip: binding.host_ip.unwrap_or_default(),
                    host_port: binding.host_port?.parse().ok()?,
                })
            })
        })
        .collect();
    found.sort_by(|a, b| (a.container, &a.host_ip).cmp(&(b.container, &b.host_ip)));
    found
}

/// A time the daemon gives (`2024-05-01T10:20:30.123456789Z`, always UTC) in milliseconds
/// since the Unix epoch; `None` for Docker's "never" (`0001-01-01T00:00:00Z`) or any
/// other shape.
fn unix_ms(text: &str) -> Option<u64> {
    let (date, time) = text.strip_suffix('Z')?.split_once('T')?;
    let days = tfimg_core::spec::compat::Date::parse(date)?.unix_days();
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut parts = clock.split(':').map(|part| part.parse::<i64>().ok());
    let (hours, minutes, seconds) = (parts.next()??, parts.next()??, parts.next()??);
    if parts.next().is_some() || !fraction.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = format!("{fraction:0<3}")[..3].parse().ok()?;
    let ms = ((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000 + millis;
    u64::try_from(ms).ok()
}

#[cfg(test)]
mod tests;
