//! `tfimg run [SPEC|IMAGE] [options] [-- CMD...]`: everything the user typed is checked
//! first (exit 1 before anything exists); then the story is `app::run` and the launcher:
//! the image (built when the spec's current one is missing), the container planned,
//! created and started, its service waited for. Detached, it prints how to reach it;
//! attached, it streams the output, passes the exit code through and removes the
//! container (Ctrl-C stops it first).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

use crate::app::launch::{self, LaunchRequest, Launched, SshSource, Target, TunnelMode};
use crate::app::run::{attend, image_target, spec_target, After, Moment};
use crate::app::settings::Settings;
use crate::cli::RunArgs;
use crate::engine::prelude::*;
use crate::engine::Docker;
use crate::host::Host;
use crate::input::InputError;
use crate::labels;
use crate::output::progress::Reporter;
use crate::plan::cache::VolumePlan;
use crate::plan::gpus::{GpuPlan, GpuSelection};
use crate::plan::mounts::{self, MountRequest};
use crate::plan::ports::PortRequest;
use crate::plan::sync::SyncRequest;
use crate::plan::{self, LaunchPlan};
use crate::spec;
use crate::spec::resolved::TENSORBOARD_PORT;

const DEFAULT_TARGET: &str = "gpu-jupyter";

/// The run arguments, checked and resolved (everything but the image).
struct RunOptions {
    target: String,
    /// `--gpus` as given; without it a GPU image's GPUs are decided on the host's facts.
    gpus: Option<GpuSelection>,
    mounts: Vec<MountRequest>,
    syncs: Vec<SyncRequest>,
    volumes: Vec<VolumePlan>,
    port_requests: Vec<PortRequest>,
    env: Vec<(String, String)>,
    memory: Option<i64>,
    nano_cpus: Option<i64>,
    shm_size: i64,
    restart: Option<plan::RestartPolicy>,
    ids: Option<(u32, u32)>,
    name: Option<String>,
}

pub fn run(args: &RunArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let options = resolve_options(args, settings, host)?;
    let network = settings.network(&args.network.choices(), host)?;
    let catalog = super::catalog();
    // A spec when the name or file is one; otherwise an image reference.
    let resolved = if crate::app::catalog::is_spec(&catalog, &options.target) {
        Some(crate::app::catalog::resolve(&catalog, &options.target)?)
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
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        // Mounts name folders of this machine; an engine on another host refuses them.
        plan::sync::check_mounts_are_local(
            args.mounts.iter().map(String::as_str),
            engine.remote_endpoint(),
        )?;
        let nvidia = launch::check_requested_gpus(&engine, host, options.gpus.as_ref()).await?;
        let target = match &resolved {
            Some(resolved) => {
                spec_target(&engine, host, resolved, &network, args.no_build, &reporter).await?
            }
            None => image_target(&engine, &options.target).await?,
        };
        reporter.clear();
        let request = LaunchRequest {
            nvidia,
            ..launch_request(host, args, &options, target)?
        };
        let prepared = launch::prepare(&engine, host, request).await?;
        warn(args, &prepared, engine.remote_endpoint());
        let reserved = RefCell::new(BTreeSet::new());
        let launched =
            launch::start(&engine, host, prepared, &reserved, args.no_start, |_| {}).await?;
        for note in launched.notes.iter().chain(&public_on_remote(&launched)) {
            eprintln!("{note}");
        }
        if args.no_start {
            println!("{}", launched.name);
            return Ok(ExitCode::SUCCESS);
        }
        follow(&engine, host, args, &launched).await
    })
}

/// The launch the options ask for, on the resolved target.
fn launch_request(
    host: &impl Host,
    args: &RunArgs,
    options: &RunOptions,
    target: Target,
) -> anyhow::Result<LaunchRequest> {
    let name = match &options.name {
        Some(name) => name.clone(),
        None => launch::container_name(host, &target.spec_name)?,
    };
    let mounts = options
        .mounts
        .iter()
        .map(|mount| (mount.at(&target.workdir), mount.text.clone()))
        .collect();
    let syncs = options
        .syncs
        .iter()
        .map(|sync| sync.at(&target.workdir))
        .collect();
    Ok(LaunchRequest {
        target,
        name,
        command: args.command.clone(),
        env: options.env.clone(),
        mounts,
        syncs,
        make_sync_parents: false,
        volumes: options.volumes.clone(),
        port_requests: options.port_requests.clone(),
        public: args.public,
        gpus: options.gpus.clone(),
        gpu_mode: args.gpu_mode.into(),
        ids: options.ids,
        ssh: SshSource::User(args.ssh_key.clone()),
        memory: options.memory,
        nano_cpus: options.nano_cpus,
        shm_size: options.shm_size,
        restart: options.restart,
        extra_labels: BTreeMap::new(),
        tunnel: if args.detach {
            TunnelMode::Detached
        } else {
            TunnelMode::Session
        },
        nvidia: None,
        network: None,
    })
}

/// What the user should know before the container starts: the GPU choice, and what
/// `--public` opens.
fn warn(args: &RunArgs, prepared: &launch::Prepared, remote: Option<&str>) {
    for note in &prepared.notes {
        eprintln!("{note}");
    }
    if args.public {
        let mut warning = match remote {
            None => "warning: --public publishes the ports on every interface (0.0.0.0): anyone who can reach this host can connect".to_string(),
            Some(url) => format!("warning: --public publishes the ports on every interface (0.0.0.0) of the engine's host (`{url}`): anyone who can reach that host can connect"),
        };
        if prepared.request.target.ports.contains_key(TENSORBOARD_PORT) {
            // plan::ports keeps it there: TensorBoard has no login.
            warning.push_str(match remote {
                None => "; TensorBoard, which has no login, stays on 127.0.0.1 (reach it from elsewhere through `ssh -L`)",
                Some(_) => "; TensorBoard, which has no login, stays on that host's 127.0.0.1 (its address below goes through tfimg's tunnel)",
            });
        }
        eprintln!("{warning}");
    }
}

/// Where `--public` opened the ports of a container on a remote engine (its daemon chose
/// the ports there; the printed addresses are the tunnels' local ends).
fn public_on_remote(launched: &Launched) -> Vec<String> {
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
            Some(format!(
                "note: `{}` is also open on port {} of every interface of the engine's host (--public)",
                port.name, forward.remote
            ))
        })
        .collect()
}

/// Waits for the service, then leaves it running (detached) or streams it until it ends;
/// whatever went wrong after the start (or an interrupt), nothing is left behind.
async fn follow(
    engine: &Docker,
    host: &impl Host,
    args: &RunArgs,
    launched: &Launched,
) -> anyhow::Result<ExitCode> {
    let outcome = attend(
        engine,
        host,
        launched,
        args.detach,
        args.no_wait,
        |moment| tell(moment, &launched.plan, &launched.name, args.detach),
        crate::output::pass_through,
    )
    .await;
    // Only a detached container keeps its tunnel (a session's goes with this tfimg).
    if !matches!(outcome, Ok(After::Detached)) && launched.tunnel.is_some() {
        crate::app::tunnels::close(engine, host, &launched.id).await;
    }
    let keep = match &outcome {
        Ok(After::Detached) => true,
        Ok(After::Exited(_)) | Ok(After::Interrupted) => args.keep,
        Err(_) => false,
    };
    let ran = matches!(outcome, Ok(After::Exited(_) | After::Interrupted));
    if ran && args.files.sync_back {
        match crate::app::files::sync_back(engine, host, launched).await {
            Ok(lines) => lines.iter().for_each(|line| eprintln!("{line}")),
            Err(error) => {
                // What the run made is still in the container: keep it until it is fetched.
                eprintln!("note: `{0}` is kept so its files are not lost: `tfimg pull-files {0} DST` copies them, `tfimg rm {0}` removes it", launched.name);
                return Err(error.context("copying the synced folders back failed"));
            }
        }
    }
    if !keep {
        let _ = engine.remove_container(&launched.id, true).await;
    }
    Ok(match outcome? {
        After::Detached => ExitCode::SUCCESS,
        After::Interrupted => ExitCode::from(130),
        After::Exited(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
    })
}

/// What the user sees as the container comes up or is stopped.
fn tell(moment: Moment, plan: &LaunchPlan, name: &str, detached: bool) {
    match moment {
        Moment::Reachable {
            tensorboard_starting,
        } => {
            print_endpoints(plan, name, detached);
            if tensorboard_starting {
                eprintln!("note: TensorBoard is still starting and answers in a few seconds (its output: `tfimg logs {name}`)");
            }
        }
        Moment::Stopping => eprintln!("tfimg: stopping `{name}`"),
    }
}

/// Every flag checked, before the daemon is asked anything (in the order of the flags'
/// help, so the first bad one is the one reported).
fn resolve_options(
    args: &RunArgs,
    settings: &Settings,
    host: &impl Host,
) -> Result<RunOptions, InputError> {
    let gpus = args.gpus.as_deref().map(GpuSelection::parse).transpose()?;
    let port_requests = args
        .ports
        .iter()
        .map(|text| PortRequest::parse(text))
        .collect::<Result<_, _>>()?;
    let env = args
        .env
        .iter()
        .map(|text| plan::parse_env(text, |key| settings.environment(key)))
        .collect::<Result<_, _>>()?;
    let memory = args
        .memory
        .as_deref()
        .map(|m| plan::parse_size(m, "--memory"))
        .transpose()?;
    let nano_cpus = args
        .cpus
        .as_deref()
        .map(|cpus| plan::parse_cpus(cpus, "--cpus"))
        .transpose()?;
    let shm_size = plan::parse_size(&args.shm_size, "--shm-size")?;
    let restart = args
        .restart
        .as_deref()
        .map(plan::RestartPolicy::parse)
        .transpose()?;
    if restart.is_some() && !args.detach {
        return Err(InputError::new(
            "`--restart` needs `-d`: a foreground container is removed when it exits",
            "add `-d`",
        ));
    }
    let ids = ids(args, host)?;
    if let Some(name) = &args.name {
        check_name(name)?;
    }
    let current_dir = settings.current_dir()?;
    let mounts = args
        .mounts
        .iter()
        .map(|text| mounts::parse_request(text, &current_dir))
        .collect::<Result<_, _>>()?;
    let (syncs, volumes) =
        super::files::resolve(host, &args.files, args.detach, args.no_start, &current_dir)?;
    Ok(RunOptions {
        target: args
            .target
            .clone()
            .unwrap_or_else(|| DEFAULT_TARGET.to_string()),
        gpus,
        mounts,
        syncs,
        volumes,
        port_requests,
        env,
        memory,
        nano_cpus,
        shm_size,
        restart,
        ids,
        name: args.name.clone(),
    })
}

/// The uid/gid the container runs as: the user's own, `--uid`/`--gid`, or none (root)
/// with `--user root`.
fn ids(args: &RunArgs, host: &impl Host) -> Result<Option<(u32, u32)>, InputError> {
    match args.user.as_deref() {
        Some("root") if args.uid.is_some() || args.gid.is_some() => Err(InputError::new(
            "`--user root` and `--uid`/`--gid` contradict each other",
            "keep one of them",
        )),
        Some("root") => Ok(None),
        Some(other) => Err(InputError::new(
            format!("`--user {other}`: only `--user root` is accepted"),
            "containers run as your own uid/gid; use `--uid N --gid N` for another one",
        )),
        None => {
            let (uid, gid) = match (args.uid, args.gid) {
                // Both given: the user's own choice; nothing to say about tfimg's ids.
                (Some(uid), Some(gid)) => (uid, gid),
                _ => host.container_ids().ids,
            };
            Ok(Some((
                args.uid.unwrap_or(uid),
                args.gid.or(args.uid).unwrap_or(gid),
            )))
        }
    }
}

fn check_name(name: &str) -> Result<(), InputError> {
    let valid = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if valid {
        return Ok(());
    }
    Err(InputError::new(
        format!("`--name {name}` is not a valid container name"),
        "use letters, digits, `_`, `.` and `-`, starting with a letter or digit",
    ))
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
