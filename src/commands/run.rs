//! `tfimg run [SPEC|IMAGE] [options] [-- CMD...]`: everything the user typed is checked
//! first (exit 1 before anything exists); then the story is `app::run` and the launcher:
//! the image (built when the spec's current one is missing), the container planned,
//! created and started, its service waited for. Detached, it prints how to reach it;
//! attached, it streams the output, passes the exit code through and removes the
//! container (Ctrl-C stops it first).

use std::process::ExitCode;

use crate::app::run::{self, RunOptions, DEFAULT_TARGET};
use crate::app::settings::Settings;
use crate::cli::RunArgs;
use crate::host::Host;
use crate::input::InputError;
use crate::output::progress::Reporter;
use crate::plan;
use crate::plan::mounts;
use crate::plan::{LaunchRequest, SshSource, TunnelMode};
use crate::spec::syntax::valid_docker_name;

pub fn run(args: &RunArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let options = resolve_options(args, settings, host)?;
    let network = settings.network(&args.network.choices(), host)?;
    let resolved = run::what_to_run(host, &super::catalog(settings, host), &options.target)?;
    let reporter = Reporter::new(args.progress);
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::reported(&engine, host, &reporter);
        let after = run::run(session, &options, resolved.as_ref(), &network);
        Ok(ExitCode::from(after.await?.exit_code()))
    })
}

/// Every flag checked, before the daemon is asked anything (in the order of the flags'
/// help, so the first bad one is the one reported).
fn resolve_options(
    args: &RunArgs,
    settings: &Settings,
    host: &impl Host,
) -> Result<RunOptions, InputError> {
    let env = args
        .env
        .iter()
        .map(|text| plan::parse_env(text, |key| settings.environment(key)))
        .collect::<Result<_, _>>()?;
    if args.restart.is_some() && !args.detach {
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
    let launch = LaunchRequest {
        name: args.name.clone(),
        command: args.command.clone(),
        env,
        mounts,
        syncs,
        volumes,
        port_requests: args.ports.clone(),
        public: args.public,
        gpus: args.gpus.clone(),
        gpu_mode: args.gpu_mode.into(),
        share_gpus: args.share_gpus,
        idle_kernels: args.idle_kernels,
        idle_containers: args.idle_containers,
        ssh: SshSource::User(args.ssh_key.clone()),
        resources: plan::Resources {
            memory: args.memory,
            nano_cpus: args.cpus,
            shm_size: args.shm_size,
            restart: args.restart,
        },
        tunnel: if args.detach {
            TunnelMode::Detached
        } else {
            TunnelMode::Session
        },
        ..LaunchRequest::unaimed(ids)
    };
    Ok(RunOptions {
        target: args
            .target
            .clone()
            .unwrap_or_else(|| DEFAULT_TARGET.to_string()),
        launch,
        detach: args.detach,
        no_wait: args.no_wait,
        no_start: args.no_start,
        no_build: args.no_build,
        keep: args.keep,
        sync_back: args.files.sync_back,
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
                _ => host.container_ids(),
            };
            Ok(Some((
                args.uid.unwrap_or(uid),
                args.gid.or(args.uid).unwrap_or(gid),
            )))
        }
    }
}

fn check_name(name: &str) -> Result<(), InputError> {
    if valid_docker_name(name) {
        return Ok(());
    }
    Err(InputError::new(
        format!("`--name {name}` is not a valid container name"),
        "use letters, digits, `_`, `.` and `-`, starting with a letter or digit",
    ))
}
