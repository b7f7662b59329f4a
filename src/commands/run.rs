//! `tfimg run [SPEC|IMAGE] [options] [-- CMD...]`: everything the user typed is checked
//! first (exit 1 before anything exists), the image is built when the spec's current one
//! is missing, the pure planner decides the container, and the engine creates and starts
//! it. Detached, it waits for Jupyter or SSH to answer and prints how to reach it;
//! attached, it streams the output, passes the exit code through and removes the
//! container (Ctrl-C stops it first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::cli::RunArgs;
use crate::commands::build::{build_spec, BuildOptions};
use crate::config;
use crate::engine::StartFailure;
use crate::engine::{Docker, Engine, EngineError};
use crate::input::InputError;
use crate::labels;
use crate::output::progress::Reporter;
use crate::plan::gpus::{self, GpuMode, GpuPlan, GpuSelection};
use crate::plan::mounts::{self, MountPlan};
use crate::plan::ports::{self, PortRequest};
use crate::plan::{self, LaunchInput, LaunchPlan};
use crate::spec::resolved::TENSORBOARD_PORT;
use crate::spec::{self, Service};

const DEFAULT_TARGET: &str = "gpu-jupyter";
/// How long Jupyter or sshd may take to answer after the container starts.
const READY_TIMEOUT: Duration = Duration::from_secs(180);
/// Attempts when another process takes a chosen port between planning and starting (20
/// `tfimg run` at once all want 8888 first; each lost race moves to a kernel-chosen port).
const PORT_ATTEMPTS: usize = 10;

/// The run arguments, checked and resolved (everything but the image).
struct RunOptions {
    target: String,
    /// `--gpus` as given; without it a GPU image's GPUs are decided on the host's facts.
    gpus: Option<GpuSelection>,
    port_requests: Vec<PortRequest>,
    env: Vec<(String, String)>,
    memory: Option<i64>,
    nano_cpus: Option<i64>,
    shm_size: i64,
    restart: Option<String>,
    ids: Option<(u32, u32)>,
    name: Option<String>,
    current_dir: PathBuf,
}

/// What runs: a spec (and the image built from it), or an image as it is.
struct Target {
    spec_name: String,
    image: String,
    service: Service,
    image_user: String,
    workdir: String,
    ports: BTreeMap<String, u16>,
    gpu_image: bool,
    /// The spec's CUDA stack (for the driver check); unknown for plain images.
    gpu: Option<spec::resolved::GpuStack>,
    /// Built by tfimg (its entrypoint maps the user).
    tfimg_image: bool,
}

pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let options = resolve_options(args)?;
    let network = config::network(&args.network, &config::load_config()?)?;
    let catalog = super::catalog();
    // A spec when the name or file is one; otherwise an image reference.
    let resolved = if is_spec(&catalog, &options.target) {
        Some(spec::resolve(&catalog, &options.target)?)
    } else if spec::syntax::valid_image_reference(&options.target) {
        None
    } else {
        return Err(InputError::new(
            format!("`{}` is neither a spec nor an image reference", options.target),
            "give a spec from `tfimg list`, a spec file, or an image such as `tfimg/cpu-jupyter:2.9.3`",
        )
        .into());
    };
    let reporter = Reporter::new(args.progress);
    super::runtime()?.block_on(async {
        let engine = Docker::connect().await?;
        let target = match &resolved {
            Some(resolved) => spec_target(&engine, resolved, &network, args, &reporter).await?,
            None => image_target(&engine, &options.target).await?,
        };
        reporter.clear();
        launch(&engine, args, &options, &target).await
    })
}

/// A spec file, a spec name, or anything without `:` or `/` (so a mistyped spec name gets
/// the spec error); everything else is an image reference.
fn is_spec(catalog: &spec::Catalog, target: &str) -> bool {
    Path::new(target).is_file()
        || target.starts_with(spec::load::BUILTIN_PREFIX)
        || !target.contains([':', '/'])
        || catalog.find(target).is_ok()
}

fn resolve_options(args: &RunArgs) -> Result<RunOptions, InputError> {
    let gpus = args.gpus.as_deref().map(GpuSelection::parse).transpose()?;
    let port_requests = args
        .ports
        .iter()
        .map(|text| PortRequest::parse(text))
        .collect::<Result<Vec<_>, _>>()?;
    let env = args
        .env
        .iter()
        .map(|text| plan::parse_env(text))
        .collect::<Result<Vec<_>, _>>()?;
    let memory = args
        .memory
        .as_deref()
        .map(|m| plan::parse_size(m, "--memory"))
        .transpose()?;
    let nano_cpus = args.cpus.as_deref().map(plan::parse_cpus).transpose()?;
    let shm_size = plan::parse_size(&args.shm_size, "--shm-size")?;
    if let Some(policy) = &args.restart {
        let name = policy.split(':').next().unwrap_or("");
        let retries_ok = policy
            .split_once(':')
            .is_none_or(|(name, n)| name == "on-failure" && n.parse::<u32>().is_ok());
        if !matches!(name, "no" | "always" | "unless-stopped" | "on-failure") || !retries_ok {
            return Err(InputError::new(
                format!("`--restart {policy}` is not a restart policy"),
                "use `no`, `always`, `unless-stopped` or `on-failure[:N]`",
            ));
        }
        if !args.detach {
            return Err(InputError::new(
                "`--restart` needs `-d`: a foreground container is removed when it exits",
                "add `-d`",
            ));
        }
    }
    let ids = match args.user.as_deref() {
        Some("root") => {
            if args.uid.is_some() || args.gid.is_some() {
                return Err(InputError::new(
                    "`--user root` and `--uid`/`--gid` contradict each other",
                    "keep one of them",
                ));
            }
            None
        }
        Some(other) => {
            return Err(InputError::new(
                format!("`--user {other}`: only `--user root` is accepted"),
                "containers run as your own uid/gid; use `--uid N --gid N` for another one",
            ))
        }
        None => {
            let (uid, gid) = crate::host::current_ids().unwrap_or((1000, 1000));
            Some((
                args.uid.unwrap_or(uid),
                args.gid.or(args.uid).unwrap_or(gid),
            ))
        }
    };
    if let Some(name) = &args.name {
        let valid = name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !valid {
            return Err(InputError::new(
                format!("`--name {name}` is not a valid container name"),
                "use letters, digits, `_`, `.` and `-`, starting with a letter or digit",
            ));
        }
    }
    let current_dir = std::env::current_dir().map_err(|error| {
        InputError::new(
            format!("cannot read the current folder: {error}"),
            "cd into an existing folder",
        )
    })?;
    // Checked here, before the daemon is asked anything; the image's own workdir (the
    // default destination) is known only later, and never changes what is refused.
    for text in &args.mounts {
        mounts::parse(text, &current_dir, "/tf")?;
    }
    Ok(RunOptions {
        target: args
            .target
            .clone()
            .unwrap_or_else(|| DEFAULT_TARGET.to_string()),
        gpus,
        port_requests,
        env,
        memory,
        nano_cpus,
        shm_size,
        restart: args.restart.clone(),
        ids,
        name: args.name.clone(),
        current_dir,
    })
}

async fn spec_target(
    engine: &impl Engine,
    resolved: &spec::ResolvedSpec,
    network: &config::Network,
    args: &RunArgs,
    reporter: &Reporter,
) -> anyhow::Result<Target> {
    let build_options = BuildOptions {
        tags: &[],
        no_cache: false,
        pull: false,
        bootstrap_base: false,
        no_verify: false,
        only_check: args.no_build,
        announce_up_to_date: false,
    };
    let image = match build_spec(engine, resolved, network, &build_options, reporter).await? {
        Some(built) => built.plan.keyed_tag,
        None => {
            // --no-build: an older build of the spec is still better than nothing.
            let reference = resolved.image_reference();
            if engine.image(&reference).await?.is_none() {
                return Err(InputError::new(
                    format!("`{reference}` does not exist and `--no-build` forbids building it"),
                    format!(
                        "run `tfimg build {}` first, or drop `--no-build`",
                        resolved.name
                    ),
                )
                .into());
            }
            reporter.status(&format!(
                "note: `{reference}` is older than the spec (`--no-build` keeps it; `tfimg build {}` updates it)",
                resolved.name
            ));
            reference
        }
    };
    Ok(Target {
        spec_name: resolved.name.clone(),
        image,
        service: resolved.service,
        image_user: resolved.user.clone(),
        workdir: resolved.workdir.clone(),
        ports: resolved.ports.clone(),
        gpu_image: resolved.is_gpu(),
        gpu: resolved.gpu.clone(),
        tfimg_image: true,
    })
}

async fn image_target(engine: &impl Engine, reference: &str) -> anyhow::Result<Target> {
    let Some(image) = engine.image(reference).await? else {
        return Err(InputError::new(
            format!("no spec or image named `{reference}`"),
            "give a spec from `tfimg list`, a spec file, or a local image (`docker images`)",
        )
        .into());
    };
    let facts = labels::ImageLabels::decode(&image.labels);
    let service = match facts.service.as_deref() {
        Some("jupyter") => Service::Jupyter,
        Some("ssh") => Service::Ssh,
        _ => Service::None,
    };
    let mut ports = BTreeMap::new();
    for port in &image.exposed_ports {
        let name = match (service, port) {
            (Service::Jupyter, 8888) => "jupyter".to_string(),
            (Service::Ssh, 22) => "ssh".to_string(),
            // Only where the image's entrypoint runs TensorBoard (tfimg images built with
            // a `tensorboard` port say which port in a label): a URL must answer.
            (_, port) if facts.tensorboard == Some(*port) => TENSORBOARD_PORT.to_string(),
            (_, port) => format!("port-{port}"),
        };
        ports.insert(name, *port);
    }
    Ok(Target {
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
    })
}

async fn launch(
    engine: &impl Engine,
    args: &RunArgs,
    options: &RunOptions,
    target: &Target,
) -> anyhow::Result<ExitCode> {
    // Mounts: parsed against the image's workdir; the missing sources are made only once
    // every mount is known good, so a bad one never leaves a folder behind.
    let mounts: Vec<MountPlan> = args
        .mounts
        .iter()
        .map(|text| mounts::parse(text, &options.current_dir, &target.workdir))
        .collect::<Result<_, InputError>>()?;
    let home = if target.tfimg_image {
        spec::resolved::home_folder(&target.image_user)
    } else {
        String::new()
    };
    for (mount, text) in mounts.iter().zip(&args.mounts) {
        mounts::check_not_above(mount, text, &home, &target.workdir)?;
        mounts::check(mount, text, false)?;
    }
    // Missing mount folders are made once every check has passed (below, with the ports
    // chosen), and taken away again if the container then fails to come into being.
    let mut made_folders: Option<MadeFolders> = None;

    let mut gpus = choose_gpus(engine, options, target).await?;
    let gpus_by_default = options.gpus.is_none() && !gpus.is_none();
    let mode = match args.gpu_mode {
        _ if gpus.is_none() => GpuMode::Devices,
        // CDI names devices; a count always goes to the nvidia device driver.
        GpuMode::Auto
            if !matches!(gpus, GpuSelection::Count(_)) && engine.cdi_supported().await =>
        {
            GpuMode::Cdi
        }
        GpuMode::Auto => GpuMode::Devices,
        other => other,
    };
    let mut gpu_plan = gpus.plan(mode)?;
    if args.public {
        let mut warning = "warning: --public publishes the ports on every interface (0.0.0.0): anyone who can reach this host can connect".to_string();
        if target.ports.contains_key(TENSORBOARD_PORT) {
            // plan::ports keeps it there: TensorBoard has no login.
            warning.push_str("; TensorBoard, which has no login, stays on 127.0.0.1 (reach it from elsewhere through `ssh -L`)");
        }
        eprintln!("{warning}");
    }

    let command_given = !args.command.is_empty();
    let jupyter_token = (target.service == Service::Jupyter && !command_given)
        .then(|| crate::host::random_hex(24))
        .transpose()?;
    let ssh = if target.service == Service::Ssh && !command_given {
        Some(crate::host::ssh_key(args.ssh_key.as_deref())?)
    } else {
        None
    };
    let known_hosts = crate::host::data_dir().join("ssh").join("known_hosts");
    let name = match &options.name {
        Some(name) => name.clone(),
        None => format!(
            "{}-{}",
            container_prefix(&target.spec_name),
            crate::host::random_hex(3)?
        ),
    };

    let mut attempt = 0;
    let (plan, id) = loop {
        attempt += 1;
        let ports = ports::assign(
            &target.ports,
            &options.port_requests,
            args.public,
            &mut |ip, port| crate::host::port_is_free(ip, port),
            &mut |ip| crate::host::any_free_port(ip),
        )?;
        if made_folders.is_none() {
            let mut made = MadeFolders::default();
            for (mount, text) in mounts.iter().zip(&args.mounts) {
                if mounts::prepare(mount, text, options.ids)? {
                    made.0.push(mount.source.clone());
                }
            }
            made_folders = Some(made);
        }
        let input = LaunchInput {
            image: target.image.clone(),
            spec_name: target.spec_name.clone(),
            service: target.service,
            image_user: target.image_user.clone(),
            tfimg_image: target.tfimg_image,
            name: name.clone(),
            command: args.command.clone(),
            env: options.env.clone(),
            mounts: mounts.clone(),
            ports,
            gpus: gpus.clone(),
            gpu: gpu_plan.clone(),
            ids: options.ids,
            jupyter_token: jupyter_token.clone(),
            ssh_public_key: ssh.as_ref().map(|key| key.public_key.clone()),
            ssh_identity: ssh
                .as_ref()
                .and_then(|key| key.identity.as_ref())
                .map(|path| path.display().to_string()),
            ssh_known_hosts: ssh.as_ref().map(|_| known_hosts.display().to_string()),
            memory: options.memory,
            nano_cpus: options.nano_cpus,
            shm_size: options.shm_size,
            restart: options.restart.clone(),
            extra_labels: BTreeMap::new(),
        };
        let plan = plan::launch(&input);
        let id = match engine.create(&plan).await {
            Ok(id) => id,
            Err(EngineError::Failed { message, .. }) if message.contains("is already in use") => {
                return Err(InputError::new(
                    format!("a container named `{name}` already exists"),
                    format!("choose another `--name`, or remove it: `tfimg rm -f {name}`"),
                )
                .into())
            }
            Err(error) => return Err(error.into()),
        };
        if args.no_start {
            if let Some(made) = made_folders.take() {
                made.keep();
            }
            println!("{name}");
            return Ok(ExitCode::SUCCESS);
        }
        match engine.start(&id).await {
            Ok(()) => {
                if let Some(made) = made_folders.take() {
                    made.keep();
                }
                break (plan, id);
            }
            Err(failure) => {
                // A container that never ran is never left behind.
                let _ = engine.remove_container(&id, true).await;
                match failure {
                    StartFailure::PortTaken(_)
                        if attempt < PORT_ATTEMPTS && options.port_requests.is_empty() =>
                    {
                        // Racers that lost together should not pick again in lockstep.
                        let jitter = crate::host::random_hex(1)
                            .ok()
                            .and_then(|hex| u64::from_str_radix(&hex, 16).ok())
                            .unwrap_or(0);
                        tokio::time::sleep(Duration::from_millis(jitter)).await;
                        continue;
                    }
                    StartFailure::PortTaken(message) => {
                        return Err(InputError::new(
                            format!("a published port is taken: {message}"),
                            "choose other host ports with `-p HOST:CONTAINER`",
                        )
                        .into())
                    }
                    // The host looked ready, yet the daemon has no NVIDIA device driver
                    // (installed but Docker not restarted): the default gives way.
                    StartFailure::GpuDriver(message) if gpus_by_default => {
                        eprintln!("{}", gpus::daemon_refused_note(&target.spec_name, &message));
                        gpus = GpuSelection::None;
                        gpu_plan = GpuPlan::None;
                        continue;
                    }
                    StartFailure::GpuDriver(message) => {
                        return Err(EngineError::GpuToolkitMissing { message }.into())
                    }
                    StartFailure::Engine(error) => return Err(error.into()),
                }
            }
        }
    };

    let known_hosts = ssh.is_some().then_some(&known_hosts);
    let outcome = after_start(engine, args, &id, &name, &plan, known_hosts).await;
    // Whatever went wrong after the start (or an interrupt), nothing is left behind.
    let keep = match &outcome {
        Ok(After::Detached) => true,
        Ok(After::Exited(_)) | Ok(After::Interrupted) => args.keep,
        Err(_) => false,
    };
    if !keep {
        let _ = engine.remove_container(&id, true).await;
    }
    match outcome? {
        After::Detached => Ok(ExitCode::SUCCESS),
        After::Interrupted => Ok(ExitCode::from(130)),
        After::Exited(code) => Ok(ExitCode::from(
            u8::try_from(code.clamp(0, 255)).unwrap_or(1),
        )),
    }
}

/// Mount folders this run made. Dropped without `keep` (a failed create or start), the
/// ones still empty are removed: a run that never started leaves nothing behind.
#[derive(Default)]
struct MadeFolders(Vec<PathBuf>);

impl MadeFolders {
    fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for MadeFolders {
    fn drop(&mut self) {
        for folder in &self.0 {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// The run's GPUs: `--gpus` as given, after the doctor's GPU checks (so a known problem
/// is explained before the daemon's error: an unknown device, a driver too old for the
/// image's CUDA, no toolkit); without it, `plan::gpus::choose` on the host's facts, and
/// its note.
async fn choose_gpus(
    engine: &impl Engine,
    options: &RunOptions,
    target: &Target,
) -> anyhow::Result<GpuSelection> {
    let requested = options.gpus.as_ref();
    if let Some(requested) = requested.filter(|requested| !requested.is_none()) {
        let nvidia = crate::host::nvidia_facts();
        if nvidia.driver.is_some() {
            gpus::check_against_host(requested, &nvidia.gpus)?;
        }
        let info = engine.info().await?;
        if let Some(problem) =
            crate::doctor::gpu_launch_problem(&nvidia, &info, target.gpu.as_ref())
        {
            return Err(crate::error::HostError {
                message: format!("cannot give GPUs to the container: {}", problem.summary),
                hint: problem
                    .fix
                    .unwrap_or_else(|| "run `tfimg doctor` for details".to_string()),
            }
            .into());
        }
    }
    let host = if gpus::needs_host_facts(requested, target.gpu_image) {
        let info = engine.info().await?;
        let nvidia = crate::host::nvidia_facts();
        Some(crate::doctor::gpu_host(&nvidia, &info, target.gpu.as_ref()))
    } else {
        None
    };
    let choice = gpus::choose(
        requested,
        target.gpu_image,
        &target.spec_name,
        host.as_ref(),
    );
    if let Some(note) = &choice.note {
        eprintln!("{note}");
    }
    Ok(choice.selection)
}

/// How a started container's run ended for tfimg.
enum After {
    /// Running in the background, reachable.
    Detached,
    /// Ran in the foreground and exited with this code.
    Exited(i64),
    /// Ctrl-C (or SIGTERM/SIGHUP): stopped.
    Interrupted,
}

async fn after_start(
    engine: &impl Engine,
    args: &RunArgs,
    id: &str,
    name: &str,
    plan: &LaunchPlan,
    known_hosts: Option<&PathBuf>,
) -> anyhow::Result<After> {
    let wait_for_service = !args.no_wait && (args.detach || !plan.endpoints.is_empty());
    if wait_for_service {
        let ready = tokio::select! {
            result = wait_until_ready(engine, id, plan, known_hosts) => Some(result),
            _ = super::interrupted() => None,
        };
        match ready {
            None => return Ok(After::Interrupted),
            Some(Err(error)) => {
                // Losing the daemon is the whole story; there is no output to show.
                if matches!(
                    error.downcast_ref::<EngineError>(),
                    Some(EngineError::Unreachable { .. } | EngineError::Timeout { .. })
                ) {
                    return Err(error);
                }
                let output = engine.output(id).await.unwrap_or_default();
                return Err(error.context(format!(
                    "`{name}` did not come up; its output:\n{}",
                    tail(&output, 20)
                )));
            }
            Some(Ok(())) => {}
        }
    }
    let tensorboard_starting = wait_for_service && tensorboard_starting(plan).await;
    let starting_note = || {
        if tensorboard_starting {
            eprintln!("note: TensorBoard is still starting and answers in a few seconds (its output: `tfimg logs {name}`)");
        }
    };
    if args.detach {
        print_endpoints(plan, name, true);
        starting_note();
        return Ok(After::Detached);
    }
    // Foreground: announce the service, stream, pass the exit code on.
    if !plan.endpoints.is_empty() {
        print_endpoints(plan, name, false);
        starting_note();
    }
    let interrupted = tokio::select! {
        result = engine.stream_output(id, true, None, crate::output::pass_through) => { result?; false }
        _ = super::interrupted() => true,
    };
    if interrupted {
        eprintln!("tfimg: stopping `{name}`");
        engine.stop(id, 10).await?;
        return Ok(After::Interrupted);
    }
    Ok(After::Exited(engine.wait(id).await?))
}

/// Whether the plan's TensorBoard does not answer yet. It starts beside the service,
/// niced, and usually answers a few seconds after it: rather than hold the service's URL
/// back (one probe, no waiting), `run` then says it is still starting.
async fn tensorboard_starting(plan: &LaunchPlan) -> bool {
    let printed = plan
        .endpoints
        .iter()
        .any(|(service, _)| service == TENSORBOARD_PORT);
    match plan.ports.iter().find(|port| port.name == TENSORBOARD_PORT) {
        Some(port) if printed => crate::host::http_status(port.host, "/").await != Some(200),
        _ => false,
    }
}

/// Container names must be simple; spec paths (`./x.yaml`) become their stem.
fn container_prefix(spec_name: &str) -> String {
    let cleaned: String = spec_name
        .rsplit('/')
        .next()
        .unwrap_or(spec_name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    cleaned
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

fn print_endpoints(plan: &LaunchPlan, name: &str, to_stdout: bool) {
    let mut lines = vec![format!("{:<12}{name}", "container")];
    for (service, address) in &plan.endpoints {
        lines.push(format!("{service:<12}{address}"));
    }
    if let GpuPlan::None = plan.gpu {
    } else {
        lines.push(format!("{:<12}{}", "gpus", plan.labels[labels::GPUS]));
    }
    for line in lines {
        if to_stdout {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Waits until Jupyter answers with the token, or sshd has printed its host key (pinned
/// in tfimg's known_hosts) and answers with its banner.
pub(crate) async fn wait_until_ready(
    engine: &impl Engine,
    id: &str,
    plan: &LaunchPlan,
    known_hosts: Option<&PathBuf>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let port = |name: &str| {
        plan.ports
            .iter()
            .find(|port| port.name == name)
            .map(|port| port.host)
    };
    let mut polls: u32 = 0;
    loop {
        if started.elapsed() > READY_TIMEOUT {
            anyhow::bail!("no answer within {} s", READY_TIMEOUT.as_secs());
        }
        polls += 1;
        // The probe itself is cheap; asking the daemon whether the container died is not,
        // so that happens every tenth round (about twice a second).
        let check_state = polls % 10 == 1;
        if let Some(facts) = if check_state {
            engine.container(id).await?
        } else {
            None
        } {
            if facts.state != "running" {
                anyhow::bail!(
                    "the container stopped (exit {})",
                    facts.exit_code.unwrap_or(-1)
                );
            }
        }
        let ready = match plan.labels.get(labels::SERVICE).map(String::as_str) {
            Some("jupyter") => match (port("jupyter"), jupyter_token(plan)) {
                (Some(port), Some(token)) => {
                    crate::host::http_status(port, &format!("/api/status?token={token}")).await
                        == Some(200)
                }
                _ => true,
            },
            Some("ssh") => match (port("ssh"), known_hosts) {
                // The banner is a local connect; the log (for the host key) is read from
                // the daemon only once sshd answers, not on every round.
                (Some(port), Some(known_hosts)) if crate::host::ssh_banner(port).await => {
                    let output = engine.output(id).await?;
                    match output
                        .lines()
                        .find_map(|line| line.strip_prefix("tfimg: ssh host key: "))
                    {
                        Some(host_key) => {
                            crate::host::pin_host_key(known_hosts, port, host_key)?;
                            true
                        }
                        None => false,
                    }
                }
                (Some(_), Some(_)) => false,
                _ => true,
            },
            _ => true,
        };
        if ready {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn jupyter_token(plan: &LaunchPlan) -> Option<String> {
    labels::jupyter_token(&plan.env)
}
