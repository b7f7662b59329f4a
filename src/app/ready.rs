//! Readiness: a started container's service answers. Jupyter answers `/api/status` with
//! its token; sshd has printed its host key (pinned in tfimg's known_hosts) and sends its
//! banner; a model server says its model is `AVAILABLE`. TensorBoard gets one probe,
//! never a wait.

use std::path::Path;
use std::time::Duration;

use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Containers};
use crate::host::prelude::{Clock, Probes, Secrets};
use crate::labels;
use crate::plan::serving::{self, ModelState};
use crate::plan::LaunchPlan;
use crate::spec::resolved::{SERVING_PORT_NAME, TENSORBOARD_PORT};

/// How long Jupyter or sshd may take to answer after the container starts.
pub const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// The line the entrypoint prints with the container's SSH host key.
const HOST_KEY_LINE: &str = "tfimg: ssh host key: ";

/// Waits until the plan's service answers (or fails when the container stops or
/// `READY_TIMEOUT` passes).
pub async fn wait_until_ready(
    session: Session<'_, impl Containers + ContainerIo, impl Clock + Probes + Secrets>,
    id: &str,
    plan: &LaunchPlan,
    known_hosts: Option<&Path>,
) -> anyhow::Result<()> {
    let Session { engine, host, .. } = session;
    // The host's clock, so the fakes' time passes as fast as they ask.
    let started = host.now();
    let mut polls: u32 = 0;
    loop {
        if host.now().duration_since(started).unwrap_or_default() > READY_TIMEOUT {
            anyhow::bail!("no answer within {} s", READY_TIMEOUT.as_secs());
        }
        polls += 1;
        // The probe itself is cheap; asking the daemon whether the container died is not,
        // so that happens every tenth round (about twice a second).
        if polls % 10 == 1 {
            if let Some(facts) = engine.container(id).await? {
                if facts.state != "running" {
                    let code = facts.exit_code.unwrap_or(-1);
                    if facts.oom_killed {
                        let (why, fix) =
                            crate::plan::out_of_memory(plan.memory, "`--memory VALUE`");
                        anyhow::bail!("the container stopped (exit {code}): {why}; {fix}");
                    }
                    anyhow::bail!("the container stopped (exit {code})");
                }
            }
        }
        if answers(session, id, plan, known_hosts).await? {
            return Ok(());
        }
        host.sleep(Duration::from_millis(50)).await;
    }
}

/// One round of the service's probe.
async fn answers(
    session: Session<'_, impl ContainerIo, impl Probes + Clock + Secrets>,
    id: &str,
    plan: &LaunchPlan,
    known_hosts: Option<&Path>,
) -> anyhow::Result<bool> {
    let Session { host, .. } = session;
    let port = |name: &str| {
        plan.ports
            .iter()
            .find(|port| port.name == name)
            .map(|port| port.host)
    };
    Ok(match plan.labels.get(labels::SERVICE).map(String::as_str) {
        Some("jupyter") => match (port("jupyter"), labels::jupyter_token(&plan.env)) {
            (Some(port), Some(token)) => {
                host.http_status(port, &format!("/api/status?token={token}"))
                    .await
                    == Some(200)
            }
            (None, Some(_)) if plan.jupyter_inside.is_some() => {
                answers_inside(session, id, plan).await?
            }
            _ => true,
        },
        Some("ssh") => match (port("ssh"), known_hosts) {
            // The banner is a local connect; the log (for the host key) is read from the
            // daemon only once sshd answers, not on every round.
            (Some(port), Some(known_hosts)) if host.ssh_banner(port).await => {
                pin_printed_key(session, id, port, known_hosts).await?
            }
            (Some(_), Some(_)) => false,
            _ => true,
        },
        Some("serving") => match port(SERVING_PORT_NAME) {
            Some(port) => {
                let models = (plan.labels.get(labels::MODELS)).or(plan.labels.get(labels::MODEL));
                let mut answered = true;
                for model in models.map(|names| names.split(',')).into_iter().flatten() {
                    answered &= serving_answers(host, port, Some(model)).await?;
                }
                answered && (models.is_some() || serving_answers(host, port, None).await?)
            }
            None => true,
        },
        _ => true,
    })
}

/// Jupyter behind a team's gateway has no host port: it is asked from inside its
/// container, where the token and base URL are in the environment. An exec costs more
/// than a connect, so a failed probe waits a little longer.
async fn answers_inside(
    session: Session<'_, impl ContainerIo, impl Clock>,
    id: &str,
    plan: &LaunchPlan,
) -> anyhow::Result<bool> {
    let Session { engine, host, .. } = session;
    let Some((port, _)) = &plan.jupyter_inside else {
        return Ok(true);
    };
    let script = format!(
        "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}' + os.environ['{base}'] + 'api/status?token=' + os.environ['{token}'], timeout=2)",
        base = labels::JUPYTER_BASE_URL_VARIABLE,
        token = labels::JUPYTER_TOKEN_VARIABLE,
    );
    let command = ["python3".to_string(), "-c".to_string(), script];
    let answered = engine.exec(id, &command, "", |_| {}).await? == 0;
    if !answered {
        host.sleep(Duration::from_millis(450)).await;
    }
    Ok(answered)
}

/// A model server answers: with its model `AVAILABLE` when it serves one for tfimg (`tfimg
/// serve`; each of a model config's), else with any HTTP answer. A model that failed to
/// load ends the wait.
async fn serving_answers(
    host: &impl Probes,
    port: u16,
    model: Option<&str>,
) -> anyhow::Result<bool> {
    let Some(model) = model else {
        return Ok(host.http_get(port, "/").await.is_some());
    };
    let Some((status, body)) = host.http_get(port, &format!("/v1/models/{model}")).await else {
        return Ok(false);
    };
    match serving::model_state(status, &body) {
        ModelState::Available { .. } => Ok(true),
        ModelState::Waiting => Ok(false),
        ModelState::Failed { message } => {
            anyhow::bail!("the model server could not load `{model}`: {message}")
        }
    }
}

/// Pins the SSH host key the container's entrypoint printed for `[127.0.0.1]:port` in
/// `known_hosts`; whether it has printed it yet.
async fn pin_printed_key(
    session: Session<'_, impl ContainerIo, impl Secrets>,
    id: &str,
    port: u16,
    known_hosts: &Path,
) -> anyhow::Result<bool> {
    let Session { engine, host, .. } = session;
    let output = engine.output(id).await?;
    match output
        .lines()
        .find_map(|line| line.strip_prefix(HOST_KEY_LINE))
    {
        Some(host_key) => {
            host.pin_host_key(known_hosts, port, host_key)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// `pin_printed_key` in tfimg's own known_hosts: a running SSH container reached on a
/// new local port (a tunnel opened again) is trusted there as it was on the old one.
pub async fn pin_ssh_host_key(
    session: Session<'_, impl ContainerIo, impl Secrets>,
    id: &str,
    port: u16,
) -> anyhow::Result<bool> {
    let Session { host, .. } = session;
    pin_printed_key(session, id, port, &host.known_hosts()?).await
}

/// Whether the plan's TensorBoard does not answer yet. It starts beside the service,
/// niced, and usually answers a few seconds after it: rather than hold the service's URL
/// back (one probe, no waiting), `run` then says it is still starting.
pub async fn tensorboard_starting(host: &impl Probes, plan: &LaunchPlan) -> bool {
    let printed = plan
        .endpoints
        .iter()
        .any(|(service, _)| service == TENSORBOARD_PORT);
    match plan.ports.iter().find(|port| port.name == TENSORBOARD_PORT) {
        Some(port) if printed => host.http_status(port.host, "/").await != Some(200),
        _ => false,
    }
}
