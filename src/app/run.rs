//! One container, as `tfimg run` starts it: the target (a spec's current image, built
//! when missing, or an image as it is), then, once the launcher has started it, the wait
//! until its service answers, and in the foreground the stream of its output until it
//! exits or the user interrupts (then it is stopped).

use std::collections::BTreeMap;

use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::launch::{Launched, Target};
use crate::app::ready;
use crate::engine::{Engine, EngineError, ImageFacts, OutputChunk};
use crate::host::Host;
use crate::input::InputError;
use crate::labels::ImageLabels;
use crate::output::progress::Reporter;
use crate::spec::resolved::{SERVING_PORT, SERVING_PORT_NAME, TENSORBOARD_PORT};
use crate::spec::{ResolvedSpec, Service};

/// The spec's target: its current image, built (and verified) when missing; with
/// `no_build`, an older build of the spec, said so.
pub async fn spec_target(
    engine: &impl Engine,
    host: &impl Host,
    resolved: &ResolvedSpec,
    network: &Network,
    no_build: bool,
    reporter: &Reporter,
) -> anyhow::Result<Target> {
    let options = BuildOptions {
        only_check: no_build,
        ..BuildOptions::default()
    };
    let image = match build_spec(engine, host, resolved, network, &options, reporter).await? {
        Some(built) => built.plan.keyed_tag,
        None => {
            let reference = resolved.image_reference();
            let Some(older) = engine.image(&reference).await? else {
                return Err(InputError::new(
                    format!("`{reference}` does not exist and `--no-build` forbids building it"),
                    format!(
                        "run `tfimg build {}` first, or drop `--no-build`",
                        resolved.name
                    ),
                )
                .into());
            };
            reporter.status(&format!(
                "note: `{reference}` is older than the spec (`--no-build` keeps it; `tfimg build {}` updates it)",
                resolved.name
            ));
            // An older build has the cache folder only if its own labels say so.
            let mut target = target_of_spec(resolved, reference);
            target.cuda_cache = ImageLabels::decode(&older.labels).cuda_cache;
            return Ok(target);
        }
    };
    Ok(target_of_spec(resolved, image))
}

/// A spec's image as a launch target.
pub fn target_of_spec(resolved: &ResolvedSpec, image: String) -> Target {
    Target {
        spec_name: resolved.name.clone(),
        image,
        service: resolved.service,
        image_user: resolved.user.clone(),
        workdir: resolved.workdir.clone(),
        ports: resolved.ports.clone(),
        gpu_image: resolved.is_gpu(),
        gpu: resolved.gpu.clone(),
        tfimg_image: true,
        // What this tfimg renders into every GPU image (the image is the current build).
        cuda_cache: resolved
            .is_gpu()
            .then(|| crate::render::dockerfile::CUDA_CACHE_FOLDER.to_string()),
    }
}

/// An image as it is (tfimg's labels, where it has them, say what it serves).
pub async fn image_target(engine: &impl Engine, reference: &str) -> anyhow::Result<Target> {
    let Some(image) = engine.image(reference).await? else {
        return Err(InputError::new(
            format!("no spec or image named `{reference}`"),
            "give a spec from `tfimg list`, a spec file, or a local image (`docker images`)",
        )
        .into());
    };
    Ok(target_of_image(reference, &image))
}

/// What an image's labels and config say it runs.
pub fn target_of_image(reference: &str, image: &ImageFacts) -> Target {
    let facts = ImageLabels::decode(&image.labels);
    let service = match facts.service.as_deref() {
        Some("jupyter") => Service::Jupyter,
        Some("ssh") => Service::Ssh,
        Some("serving") => Service::Serving,
        _ => Service::None,
    };
    let mut ports = BTreeMap::new();
    for port in &image.exposed_ports {
        let name = match (service, port) {
            (Service::Jupyter, 8888) => "jupyter".to_string(),
            (Service::Ssh, 22) => "ssh".to_string(),
            (Service::Serving, &SERVING_PORT) => SERVING_PORT_NAME.to_string(),
            // Only where the image's entrypoint runs TensorBoard (tfimg images built with
            // a `tensorboard` port say which port in a label): a URL must answer.
            (_, port) if facts.tensorboard == Some(*port) => TENSORBOARD_PORT.to_string(),
            (_, port) => format!("port-{port}"),
        };
        ports.insert(name, *port);
    }
    Target {
        spec_name: facts.spec.unwrap_or_else(|| reference.to_string()),
        image: reference.to_string(),
        service,
        image_user: facts.user.unwrap_or_else(|| "tf".to_string()),
        workdir: if image.working_dir.is_empty() {
            "/tf".to_string()
        } else {
            image.working_dir.clone()
        },
        ports,
        gpu_image: facts.gpu,
        gpu: None,
        tfimg_image: facts.tfimg,
        cuda_cache: facts.cuda_cache,
    }
}

/// How a started container's run ended for tfimg.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Running in the background, reachable.
    Detached,
    /// Ran in the foreground and exited with this code.
    Exited(i64),
    /// Ctrl-C (or SIGTERM/SIGHUP): stopped.
    Interrupted,
}

/// What `attend` has to tell the user, when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// The service answers (or there is none to wait for): print how to reach it.
    Reachable { tensorboard_starting: bool },
    /// Interrupted: the container is being stopped.
    Stopping,
}

/// After the start: waits for the service (unless `no_wait`), then, detached, leaves it
/// running; in the foreground streams its output to `sink` until it exits (its code) or
/// the user interrupts (it is stopped). A service that never answers is an error carrying
/// its last output.
pub async fn attend(
    engine: &impl Engine,
    host: &impl Host,
    launched: &Launched,
    detach: bool,
    no_wait: bool,
    mut tell: impl FnMut(Moment),
    sink: impl FnMut(OutputChunk),
) -> anyhow::Result<After> {
    let plan = &launched.plan;
    let Some(tensorboard_starting) = await_service(engine, host, launched, no_wait).await? else {
        return Ok(After::Interrupted);
    };
    if detach || !plan.endpoints.is_empty() {
        tell(Moment::Reachable {
            tensorboard_starting,
        });
    }
    if detach {
        return Ok(After::Detached);
    }
    stream_until_exit(engine, host, launched, tell, sink).await
}

/// Waits until the container's service answers (Jupyter, sshd, a model server; a headless
/// container has nothing to answer, so a detached one is left to run as `docker run -d`
/// leaves it, with no extra round trip). `Some(whether TensorBoard is still starting)`,
/// or `None` when the user interrupted.
pub async fn await_service(
    engine: &impl Engine,
    host: &impl Host,
    launched: &Launched,
    no_wait: bool,
) -> anyhow::Result<Option<bool>> {
    let plan = &launched.plan;
    let id = launched.id.as_str();
    let serves = plan
        .endpoints
        .iter()
        .any(|(endpoint, _)| ["jupyter", "ssh", SERVING_PORT_NAME].contains(&endpoint.as_str()));
    let wait_for_service = !no_wait && serves;
    if wait_for_service {
        let ready = tokio::select! {
            result = ready::wait_until_ready(engine, host, id, plan, launched.known_hosts.as_deref()) => Some(result),
            _ = host.interrupted() => None,
        };
        match ready {
            None => return Ok(None),
            Some(Err(error)) => return Err(not_up(engine, launched, error).await),
            Some(Ok(())) => {}
        }
    }
    Ok(Some(
        wait_for_service && ready::tensorboard_starting(host, plan).await,
    ))
}

/// In the foreground: the container's output to `sink` until it exits (its code), or
/// until the user interrupts (then it is stopped).
pub async fn stream_until_exit(
    engine: &impl Engine,
    host: &impl Host,
    launched: &Launched,
    mut tell: impl FnMut(Moment),
    sink: impl FnMut(OutputChunk),
) -> anyhow::Result<After> {
    let id = launched.id.as_str();
    let interrupted = tokio::select! {
        result = engine.stream_output(id, true, None, sink) => { result?; false }
        _ = host.interrupted() => true,
    };
    if interrupted {
        tell(Moment::Stopping);
        engine.stop(id, 10).await?;
        return Ok(After::Interrupted);
    }
    Ok(After::Exited(engine.wait(id).await?))
}

/// A service that did not come up, with the container's last 20 lines of output; losing
/// the daemon is the whole story, with no output to show.
async fn not_up(engine: &impl Engine, launched: &Launched, error: anyhow::Error) -> anyhow::Error {
    if matches!(
        error.downcast_ref::<EngineError>(),
        Some(EngineError::Unreachable { .. } | EngineError::Timeout { .. })
    ) {
        return error;
    }
    let output = engine.output(&launched.id).await.unwrap_or_default();
    let lines: Vec<&str> = output.lines().collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    error.context(format!(
        "`{}` did not come up; its output:\n{tail}",
        launched.name
    ))
}
