//! One container, as `tfimg run` starts it: the target (a spec's current image, built
//! when missing, or an image as it is), then, once the launcher has started it, the wait
//! until its service answers, and in the foreground the stream of its output until it
//! exits or the user interrupts (then it is stopped); last, what is left of it (`follow`:
//! kept, removed, its tunnel closed, its synced folders copied back).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::launch::{self, LaunchRequest, Launched, Target};
use crate::app::ready;
use crate::app::session::Session;
use crate::engine::prelude::{Builds, ContainerIo, Containers, Daemon, Images, Tunnels};
use crate::engine::{EngineError, ImageFacts, OutputChunk};
use crate::host::prelude::{Clock, Confined, FileWrites, Files, Probes, Processes, Secrets, State};
use crate::host::Host;
use crate::input::InputError;
use crate::labels::{self, ImageLabels};
use crate::notice::Notice;
use crate::output::ui::Ui;
use crate::plan::gpus::GpuPlan;
use crate::plan::host_urls::HostUrls;
use crate::plan::{self, LaunchPlan};
use crate::spec::resolved::{SERVING_PORT, SERVING_PORT_NAME, TENSORBOARD_PORT};
use crate::spec::{Catalog, ResolvedSpec, Service};

/// What `tfimg run` runs when no target is given.
pub const DEFAULT_TARGET: &str = "gpu-jupyter";

/// `tfimg run`'s flags, checked (everything but the image, which needs the engine): the
/// launch they ask for, and how `run` follows it.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// A spec name, a spec file or an image reference.
    pub target: String,
    /// The launch, before its target is built or found.
    pub launch: LaunchRequest<()>,
    pub detach: bool,
    pub no_wait: bool,
    pub no_start: bool,
    pub no_build: bool,
    pub keep: bool,
    pub sync_back: bool,
}

/// The target as the catalog reads it: a spec when the name or file is one, otherwise an
/// image reference (`None`); neither is bad input, before anything is asked of a daemon.
pub fn what_to_run(
    host: &impl Files,
    catalog: &Catalog,
    target: &str,
) -> anyhow::Result<Option<ResolvedSpec>> {
    if crate::app::catalog::is_spec(host, catalog, target) {
        return Ok(Some(crate::app::catalog::resolve(host, catalog, target)?));
    }
    if crate::spec::syntax::valid_image_reference(target) {
        return Ok(None);
    }
    Err(InputError::new(
        format!("`{target}` is neither a spec nor an image reference"),
        "give a spec from `tfimg list`, a spec file, or an image such as `tfimg/cpu-jupyter:2.9.3`",
    )
    .into())
}

/// `tfimg run`, once its flags are checked: the mounts refused on a remote engine (before
/// any build), the GPUs checked, the target built or found, the container launched and
/// followed (`follow`).
pub async fn run(
    session: Session<
        '_,
        impl Tunnels + Images + Containers + Builds + ContainerIo + Daemon,
        impl Host,
    >,
    options: &RunOptions,
    resolved: Option<&ResolvedSpec>,
    network: &Network,
) -> anyhow::Result<RunEnd> {
    let reporter = session.report;
    let ui = session.ui;
    let Session { engine, .. } = session;
    let nvidia = launch::Launcher::of(session)
        .check_before_build(&options.launch)
        .await?;
    let target = match resolved {
        Some(resolved) => spec_target(session, resolved, network, options.no_build).await?,
        None => image_target(engine, &options.target).await?,
    };
    reporter.clear();
    let request = launch_request(options, target)?;
    let prepared = launch::Launcher::of(session)
        .prepare(request, nvidia)
        .await?;
    warn(
        ui,
        options.launch.public,
        &prepared,
        engine.remote_endpoint(),
    );
    let reserved = RefCell::new(BTreeSet::new());
    let launched = launch::Launcher::of(session)
        .start(prepared, &reserved, options.no_start, |_| {})
        .await?;
    for note in launched.notes.iter().chain(&public_on_remote(&launched)) {
        ui.notice(note);
    }
    if options.no_start {
        ui.data(&launched.name);
        return Ok(RunEnd::Created);
    }
    follow(session, options, &launched).await
}

/// The launch the options ask for, on the resolved target: its idle settings refused
/// where the target has nothing to watch.
fn launch_request(options: &RunOptions, target: Target) -> Result<LaunchRequest, InputError> {
    let launch = &options.launch;
    if launch.idle_kernels.is_some() && !target.serves_jupyter(&launch.command) {
        return Err(InputError::new(
            format!("`--idle-kernels` shuts down idle Jupyter kernels, and `{}` runs no Jupyter here", target.spec_name),
            "drop `--idle-kernels`, or run a Jupyter image (`cpu-jupyter`, `gpu-jupyter`) without a command",
        ));
    }
    if launch.idle_containers.is_some() && !target.watches_idle(&launch.command) {
        return Err(InputError::new(
            format!("`--idle-containers` stops a container nobody uses, and `{}` here runs {}", target.spec_name,
                if launch.command.is_empty() { "a model server or an image tfimg did not build" } else { "a command, which ends by itself" }),
            "drop `--idle-containers`, or use it with a Jupyter, SSH or headless image of tfimg's without a command",
        ));
    }
    Ok(launch.clone().on(target))
}

/// What the user should know before the container starts: the GPU choice, and what
/// `--public` opens.
fn warn(ui: &(impl Ui + ?Sized), public: bool, prepared: &launch::Prepared, remote: Option<&str>) {
    for note in &prepared.notes {
        ui.notice(note);
    }
    if public {
        let mut warning = match remote {
            None => "--public publishes the ports on every interface (0.0.0.0): anyone who can reach this host can connect".to_string(),
            Some(url) => format!("--public publishes the ports on every interface (0.0.0.0) of the engine's host (`{url}`): anyone who can reach that host can connect"),
        };
        if prepared.request.target.ports.contains_key(TENSORBOARD_PORT) {
            // plan::ports keeps it there: TensorBoard has no login.
            warning.push_str(match remote {
                None => "; TensorBoard, which has no login, stays on 127.0.0.1 (reach it from elsewhere through `ssh -L`)",
                Some(_) => "; TensorBoard, which has no login, stays on that host's 127.0.0.1 (its address below goes through tfimg's tunnel)",
            });
        }
        ui.notice(&Notice::Warning(warning));
    }
}

/// Where `--public` opened the ports of a container on a remote engine (its daemon chose
/// the ports there; the printed addresses are the tunnels' local ends).
fn public_on_remote(launched: &Launched) -> Vec<Notice> {
    let Some(record) = &launched.tunnel else {
        return Vec::new();
    };
    launched
        .plan
        .ports
        .iter()
        .filter(|port| port.host_ip == "0.0.0.0")
        .filter_map(|port| {
            let forward = record.forwards.iter().find(|f| f.name == port.name)?;
            Some(Notice::note(format!(
                "`{}` is also open on port {} of every interface of the engine's host (--public)",
                port.name, forward.remote
            )))
        })
        .collect()
}

/// Waits for the service, then leaves it running (detached) or streams it until it ends;
/// whatever went wrong after the start (or an interrupt), nothing is left behind but what
/// `--keep` keeps (`finish`).
pub async fn follow(
    session: Session<
        '_,
        impl Containers + Tunnels + ContainerIo + Daemon,
        impl Clock + Probes + Files + FileWrites + Secrets + Confined,
    >,
    options: &RunOptions,
    launched: &Launched,
) -> anyhow::Result<RunEnd> {
    let ui = session.ui;
    // A service's own log names its in-container addresses: shown as this machine's
    // (`plan::host_urls`). A command's output is passed on as it comes.
    let service = !launched.plan.endpoints.is_empty();
    let ports = if service {
        &launched.plan.ports[..]
    } else {
        &[]
    };
    let (mut stdout, mut stderr) = (HostUrls::new(ports), HostUrls::new(ports));
    let outcome = wait_then_stream(
        session,
        launched,
        options.detach,
        options.no_wait,
        |event| show_event(ui, event, &launched.plan, &launched.name, options.detach),
        |chunk| match chunk {
            OutputChunk::Stdout(bytes) if service => {
                ui.output(OutputChunk::Stdout(stdout.feed(&bytes)))
            }
            OutputChunk::Stderr(bytes) if service => {
                ui.output(OutputChunk::Stderr(stderr.feed(&bytes)))
            }
            other => ui.output(other),
        },
    )
    .await;
    for (rest, chunk) in [
        (
            stdout.finish(),
            OutputChunk::Stdout as fn(Vec<u8>) -> OutputChunk,
        ),
        (stderr.finish(), OutputChunk::Stderr),
    ] {
        if !rest.is_empty() {
            ui.output(chunk(rest));
        }
    }
    finish(session, launched, outcome, options.keep, options.sync_back).await
}

/// What is done with a started container once tfimg stops following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanUp {
    /// Its tunnel (on a remote engine) is closed: only a detached container keeps one.
    pub close_tunnel: bool,
    /// Its synced folders are copied back (`--sync-back`), only after it ran.
    pub sync_back: bool,
    /// It is removed: all but a detached one, or one that ran under `--keep`.
    pub remove: bool,
}

/// The clean-up decision, from how the run ended (`None`: it failed after the start).
pub fn clean_up(outcome: Option<RunEnd>, keep: bool, sync_back: bool, tunneled: bool) -> CleanUp {
    let detached = matches!(outcome, Some(RunEnd::Detached | RunEnd::Created));
    let ran = matches!(outcome, Some(RunEnd::Exited(_) | RunEnd::Interrupted));
    CleanUp {
        close_tunnel: tunneled && !detached,
        sync_back: ran && sync_back,
        remove: !(detached || ran && keep),
    }
}

/// Carries out `clean_up` for a container whose run ended with `outcome`. A failed copy
/// back keeps the container (what the run made is still in it) and says how to fetch it.
pub async fn finish(
    session: Session<
        '_,
        impl Containers + Tunnels + ContainerIo + Daemon,
        impl State + Files + FileWrites + Confined,
    >,
    launched: &Launched,
    outcome: anyhow::Result<RunEnd>,
    keep: bool,
    sync_back: bool,
) -> anyhow::Result<RunEnd> {
    let ui = session.ui;
    let Session { engine, .. } = session;
    let steps = clean_up(
        outcome.as_ref().ok().copied(),
        keep,
        sync_back,
        launched.tunnel.is_some(),
    );
    if steps.close_tunnel {
        crate::app::tunnels::TunnelStore::of(session)
            .close(&launched.id)
            .await;
    }
    if steps.sync_back {
        match crate::app::files::sync_back(session, launched).await {
            Ok(lines) => lines.iter().for_each(|line| ui.notice(line)),
            Err(error) => {
                ui.notice(&Notice::note(format!("`{0}` is kept so its files are not lost: `tfimg pull-files {0} DST` copies them, `tfimg rm {0}` removes it", launched.name)));
                return Err(error.context("copying the synced folders back failed"));
            }
        }
    }
    if let Ok(RunEnd::Exited(code @ 137)) = outcome {
        // SIGKILL: the OOM killer's, when the daemon says so.
        if let Ok(Some(facts)) = engine.container(&launched.id).await {
            if facts.oom_killed {
                let (why, fix) = plan::out_of_memory(launched.plan.memory, "`--memory VALUE`");
                ui.notice(&Notice::note(format!(
                    "`{}` ended with {code}: {why}",
                    launched.name
                )));
                ui.note(&format!("hint: {fix}"));
            }
        }
    }
    if steps.remove {
        let _ = engine.remove_container(&launched.id, true).await;
    }
    outcome
}

/// What the user sees as the container comes up or is stopped.
fn show_event(
    ui: &(impl Ui + ?Sized),
    event: RunEvent,
    plan: &LaunchPlan,
    name: &str,
    detached: bool,
) {
    match event {
        RunEvent::Reachable {
            tensorboard_starting,
        } => {
            for line in endpoint_lines(plan, name) {
                match detached {
                    true => ui.data(&line),
                    false => ui.note(&line),
                }
            }
            if tensorboard_starting {
                ui.notice(&Notice::note(format!("TensorBoard is still starting and answers in a few seconds (its output: `tfimg logs {name}`)")));
            }
        }
        RunEvent::Stopping => ui.note(&format!("tfimg: stopping `{name}`")),
    }
}

/// How to reach a started container: its name, its addresses, its GPUs.
fn endpoint_lines(plan: &LaunchPlan, name: &str) -> Vec<String> {
    let mut lines = vec![format!("{:<12}{name}", "container")];
    for (service, address) in &plan.endpoints {
        lines.push(format!("{service:<12}{address}"));
    }
    if !matches!(plan.gpu, GpuPlan::None) {
        lines.push(format!("{:<12}{}", "gpus", plan.labels[labels::GPUS]));
    }
    lines
}

/// The spec's target: its current image, built (and verified) when missing; with
/// `no_build`, an older build of the spec, said so.
pub async fn spec_target(
    session: Session<
        '_,
        impl Images + Builds + Containers + Daemon,
        impl Clock + Secrets + Processes,
    >,
    resolved: &ResolvedSpec,
    network: &Network,
    no_build: bool,
) -> anyhow::Result<Target> {
    let reporter = session.report;
    let Session { engine, .. } = session;
    let options = BuildOptions {
        only_check: no_build,
        ..BuildOptions::default()
    };
    let image = match build_spec(session, resolved, network, &options).await? {
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
            reporter.notice(&Notice::note(format!(
                "`{reference}` is older than the spec (`--no-build` keeps it; `tfimg build {}` updates it)",
                resolved.name
            )));
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
pub async fn image_target(engine: &impl Images, reference: &str) -> anyhow::Result<Target> {
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
pub enum RunEnd {
    /// Created and not started (`--no-start`).
    Created,
    /// Running in the background, reachable.
    Detached,
    /// Ran in the foreground and exited with this code.
    Exited(i64),
    /// Ctrl-C (or SIGTERM/SIGHUP): stopped.
    Interrupted,
}

impl RunEnd {
    /// The exit code tfimg ends with: the container's own (0 to 255), 130 for an
    /// interrupt.
    pub fn exit_code(self) -> u8 {
        match self {
            RunEnd::Created | RunEnd::Detached => 0,
            RunEnd::Interrupted => 130,
            RunEnd::Exited(code) => u8::try_from(code.clamp(0, 255)).unwrap_or(1),
        }
    }
}

/// What `wait_then_stream` has to tell the user, when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEvent {
    /// The service answers (or there is none to wait for): print how to reach it.
    Reachable { tensorboard_starting: bool },
    /// Interrupted: the container is being stopped.
    Stopping,
}

/// After the start: waits for the service (unless `no_wait`), then, detached, leaves it
/// running; in the foreground streams its output to `sink` until it exits (its code) or
/// the user interrupts (it is stopped). A service that never answers is an error carrying
/// its last output.
pub async fn wait_then_stream(
    session: Session<'_, impl Containers + ContainerIo, impl Clock + Probes + Secrets>,
    launched: &Launched,
    detach: bool,
    no_wait: bool,
    mut on_event: impl FnMut(RunEvent),
    sink: impl FnMut(OutputChunk),
) -> anyhow::Result<RunEnd> {
    let plan = &launched.plan;
    let Some(tensorboard_starting) = await_service(session, launched, no_wait).await? else {
        return Ok(RunEnd::Interrupted);
    };
    if detach || !plan.endpoints.is_empty() {
        on_event(RunEvent::Reachable {
            tensorboard_starting,
        });
    }
    if detach {
        return Ok(RunEnd::Detached);
    }
    stream_until_exit(session, launched, on_event, sink).await
}

/// Waits until the container's service answers (Jupyter, sshd, a model server; a headless
/// container has nothing to answer, so a detached one is left to run as `docker run -d`
/// leaves it, with no extra round trip). `Some(whether TensorBoard is still starting)`,
/// or `None` when the user interrupted.
pub async fn await_service(
    session: Session<'_, impl Containers + ContainerIo, impl Clock + Probes + Secrets>,
    launched: &Launched,
    no_wait: bool,
) -> anyhow::Result<Option<bool>> {
    let Session { engine, host, .. } = session;
    let plan = &launched.plan;
    let id = launched.id.as_str();
    let serves = plan
        .endpoints
        .iter()
        .any(|(endpoint, _)| ["jupyter", "ssh", SERVING_PORT_NAME].contains(&endpoint.as_str()));
    let wait_for_service = !no_wait && serves;
    if wait_for_service {
        let ready = tokio::select! {
            result = ready::wait_until_ready(session, id, plan, launched.known_hosts.as_deref()) => Some(result),
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
    session: Session<'_, impl Containers + ContainerIo, impl Clock>,
    launched: &Launched,
    mut on_event: impl FnMut(RunEvent),
    sink: impl FnMut(OutputChunk),
) -> anyhow::Result<RunEnd> {
    let Session { engine, host, .. } = session;
    let id = launched.id.as_str();
    let interrupted = tokio::select! {
        result = engine.stream_output(id, true, None, sink) => { result?; false }
        _ = host.interrupted() => true,
    };
    if interrupted {
        on_event(RunEvent::Stopping);
        engine.stop(id, 10).await?;
        return Ok(RunEnd::Interrupted);
    }
    Ok(RunEnd::Exited(engine.wait(id).await?))
}

/// A service that did not come up, with the container's last 20 lines of output; losing
/// the daemon is the whole story, with no output to show.
async fn not_up(
    engine: &impl ContainerIo,
    launched: &Launched,
    error: anyhow::Error,
) -> anyhow::Error {
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

#[cfg(test)]
mod tests;
