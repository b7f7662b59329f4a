//! `tfimg up TEAM.yaml` and `tfimg down TEAM.yaml`: everyone's environment from one file.
//! `up` builds the images that are missing, then creates the members that are new or
//! changed (each with its own token or key and free ports), starts them concurrently,
//! removes members no longer in the file, and leaves unchanged members alone; a second
//! `up` with no change does nothing and says so. `down` removes the team's containers and
//! never the data on their mounts.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::ExitCode;
use std::sync::{Mutex, MutexGuard};

use anyhow::Context;
use futures_util::future::join_all;
use sha2::{Digest, Sha256};

use crate::cli::{ComposeArgs, K8sArgs, Progress, TeamArgs};
use crate::commands::build::{build_spec, BuildOptions};
use crate::config;
use crate::engine::prelude::*;
use crate::engine::{ContainerFacts, StartFailure};
use crate::engine::{Docker, Engine};
use crate::error::{Interrupted, EXIT_ENGINE};
use crate::input::InputError;
use crate::labels;
use crate::output::progress::Reporter;
use crate::plan::gpus::GpuMode;
use crate::plan::mounts;
use crate::plan::ports::{self, PortRequest};
use crate::plan::{self, LaunchInput, LaunchPlan};
use crate::spec::{self, ResolvedSpec, Service};
use crate::team::{self, Team, TeamMember};

/// What `up` did to one member.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    Unchanged,
    Created,
    Recreated,
}

/// The team file and every member's resolved spec (errors name the member).
fn team_and_specs(
    file: &std::path::Path,
) -> anyhow::Result<(Team, BTreeMap<String, ResolvedSpec>)> {
    let team = team::load(file)?;
    let catalog = super::catalog();
    let mut specs: BTreeMap<String, ResolvedSpec> = BTreeMap::new();
    for member in &team.members {
        if !specs.contains_key(&member.spec) {
            let resolved = spec::resolve(&catalog, &member.spec).map_err(|error| {
                spec::SpecError::new(
                    // `no spec named ...` has no place of its own: the member's `spec:`.
                    error
                        .location
                        .clone()
                        .or_else(|| Some(member.spec_location.clone())),
                    format!("member `{}`: {}", member.name, error.message),
                    error.hint.clone(),
                )
            })?;
            specs.insert(member.spec.clone(), resolved);
        }
    }
    Ok((team, specs))
}

/// The current image of every spec, built (and verified) when missing.
async fn images_for(
    engine: &impl Engine,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &config::Network,
    reporter: &Reporter,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut images = BTreeMap::new();
    for (name, resolved) in specs {
        let options = BuildOptions {
            tags: &[],
            no_cache: false,
            pull: false,
            bootstrap_base: false,
            no_verify: false,
            only_check: false,
            announce_up_to_date: false,
        };
        let built = build_spec(engine, resolved, network, &options, reporter)
            .await?
            .expect("a real build always answers");
        images.insert(name.clone(), built.plan.keyed_tag);
    }
    reporter.clear();
    Ok(images)
}

pub fn up(args: &TeamArgs) -> anyhow::Result<ExitCode> {
    let (team, specs) = team_and_specs(&args.file)?;
    let network = config::network(&args.network, &config::load_config()?)?;
    let ids = crate::host::current_ids().unwrap_or((1000, 1000));
    let reporter = Reporter::new(args.progress);
    super::runtime()?.block_on(async {
        let engine = Docker::connect().await?;
        let images = images_for(&engine, &specs, &network, &reporter).await?;

        let existing = engine.containers_with_label(&labels::team_filter(&team.name)).await?;
        let by_member: HashMap<String, &ContainerFacts> = existing
            .iter()
            .filter_map(|container| Some((container.labels.get(labels::MEMBER)?.clone(), container)))
            .collect();

        // Members gone from the file go first, so their ports are free again.
        let wanted: BTreeSet<&str> = team.members.iter().map(|member| member.name.as_str()).collect();
        let mut removed = Vec::new();
        for container in &existing {
            let member = container.labels.get(labels::MEMBER).cloned().unwrap_or_default();
            if !wanted.contains(member.as_str()) {
                engine.remove_container(&container.id, true).await?;
                removed.push(member);
            }
        }

        // Host ports the unchanged members keep: new members must not take them.
        let mut actions: BTreeMap<String, Action> = BTreeMap::new();
        let mut taken: BTreeSet<u16> = BTreeSet::new();
        for member in &team.members {
            let hash = member_hash(member, &images[&member.spec]);
            if let Some(container) = by_member.get(&member.name) {
                let same = container.labels.get(labels::MEMBER_HASH) == Some(&hash);
                // A batch job that finished well is done, not broken: it is not rerun.
                let finished_job = !member.command.is_empty()
                    && container.state == "exited"
                    && matches!(engine.container(&container.id).await, Ok(Some(facts)) if facts.exit_code == Some(0));
                if same && (container.state == "running" || finished_job) {
                    actions.insert(member.name.clone(), Action::Unchanged);
                    taken.extend(ports_of(container));
                    continue;
                }
                engine.remove_container(&container.id, true).await?;
                actions.insert(member.name.clone(), Action::Recreated);
            } else {
                actions.insert(member.name.clone(), Action::Created);
            }
        }

        // What this `up` created and which of those are fully up, kept outside the work
        // so an interrupt can leave exactly the members that are ready.
        let created: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
        let ready: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
        let work = async {
            // Every plan first, then the mount folders, then the containers: a member that
            // cannot be planned leaves neither folders nor containers behind.
            let mut planned = Vec::new();
            for member in &team.members {
                if actions[&member.name] == Action::Unchanged {
                    continue;
                }
                let resolved = &specs[&member.spec];
                let image = &images[&member.spec];
                let plan = member_plan(&team, member, resolved, image, ids, &mut taken)?;
                planned.push((member, plan));
            }
            make_mount_folders(&team, planned.iter().map(|(member, _)| *member), &specs, ids)?;
            let mut plans: Vec<(String, LaunchPlan, String)> = Vec::new();
            for (member, plan) in planned {
                let id = engine.create(&plan).await?;
                lock(&created).push((member.name.clone(), id.clone()));
                plans.push((member.name.clone(), plan, id));
            }
            // Start everyone at once; a failure of one does not stop the others.
            let started = join_all(plans.iter().map(|(member, plan, id)| {
                let engine = &engine;
                let ready = &ready;
                async move {
                    let outcome = match engine.start(id).await {
                        Ok(()) if plan.endpoints.is_empty() => Ok(()),
                        Ok(()) => {
                            super::run::wait_until_ready(engine, id, plan, known_hosts_for(plan).as_ref()).await
                        }
                        Err(StartFailure::GpuDriver(message)) => {
                            Err(crate::engine::EngineError::GpuToolkitMissing { message }.into())
                        }
                        Err(StartFailure::PortTaken(message)) => Err(anyhow::anyhow!("a port is taken: {message}")),
                        Err(StartFailure::Engine(error)) => Err(error.into()),
                    };
                    if outcome.is_ok() {
                        lock(ready).insert(member.clone());
                    }
                    (member.clone(), outcome)
                }
            }))
            .await;
            anyhow::Ok((plans, started))
        };
        let outcome = tokio::select! {
            outcome = work => Some(outcome),
            _ = super::interrupted() => None,
        };
        let Some(outcome) = outcome else {
            let created = std::mem::take(&mut *lock(&created));
            let ready = std::mem::take(&mut *lock(&ready));
            return Err(interrupted_up(&engine, &created, &ready, args.rollback).await);
        };
        let (plans, started) = match outcome {
            Ok(outcome) => outcome,
            Err(error) => {
                // A create that failed half-way: none of this `up`'s members has started.
                let created = std::mem::take(&mut *lock(&created));
                for (_, id) in &created {
                    let _ = engine.remove_container(id, true).await;
                }
                return Err(error);
            }
        };
        let failures: Vec<(String, anyhow::Error)> = started
            .into_iter()
            .filter_map(|(member, outcome)| outcome.err().map(|error| (member, error)))
            .collect();

        if !failures.is_empty() {
            for (member, error) in &failures {
                eprintln!("error: member `{member}` did not start: {error:#}");
            }
            if args.rollback {
                for (_, _, id) in &plans {
                    let _ = engine.remove_container(id, true).await;
                }
                eprintln!("rolled back: removed the {} member(s) this `up` started", plans.len());
            } else {
                eprintln!("hint: the other members are up; fix the failing ones and run `up` again, or `up --rollback` to undo a partial start");
            }
            return Ok(ExitCode::from(EXIT_ENGINE));
        }

        let changed = plans.len() + removed.len();
        if changed == 0 {
            eprintln!("no change: the {} member(s) of `{}` are up to date", team.members.len(), team.name);
        }
        for member in &removed {
            eprintln!("removed `{member}` (no longer in the team file)");
        }
        print_team(&engine, &team, &actions).await?;
        Ok(ExitCode::SUCCESS)
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// After an interrupt: the members that were fully up stay (and are named), the ones
/// created but not yet ready are removed; with `--rollback` every member this `up`
/// created goes.
async fn interrupted_up(
    engine: &impl Engine,
    created: &[(String, String)],
    ready: &BTreeSet<String>,
    rollback: bool,
) -> anyhow::Error {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for (member, id) in created {
        if ready.contains(member) && !rollback {
            kept.push(member.as_str());
        } else {
            let _ = engine.remove_container(id, true).await;
            removed.push(member.as_str());
        }
    }
    let list = |names: &[&str]| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    Interrupted {
        what: format!(
            "`up` stopped; kept the member(s) that were fully up: {}; removed the ones it had not finished starting{}: {}",
            list(&kept),
            if rollback { " or had started (--rollback)" } else { "" },
            list(&removed)
        ),
    }
    .into()
}

/// `tfimg compose TEAM.yaml [-o FILE]`: the team as a Compose file, secrets in env files
/// beside it.
pub fn compose(args: &ComposeArgs) -> anyhow::Result<ExitCode> {
    let (team, specs) = team_and_specs(&args.file)?;
    let network = config::network(&args.network, &config::load_config()?)?;
    let ids = crate::host::current_ids().unwrap_or((1000, 1000));
    let folder = match &args.output {
        Some(path) => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            std::fs::create_dir_all(parent)?;
            std::path::absolute(parent)?
        }
        None => std::env::current_dir()?,
    };
    let reporter = Reporter::new(Progress::Auto);
    super::runtime()?.block_on(async {
        let engine = Docker::connect().await?;
        let images = images_for(&engine, &specs, &network, &reporter).await?;
        let mut taken = BTreeSet::new();
        let mut plans = Vec::new();
        for member in &team.members {
            let plan = member_plan(
                &team,
                member,
                &specs[&member.spec],
                &images[&member.spec],
                ids,
                &mut taken,
            )?;
            plans.push((member.name.clone(), plan));
        }
        make_mount_folders(&team, team.members.iter(), &specs, ids)?;
        let output = crate::team::compose::compose(
            &team.name,
            &args.file.display().to_string(),
            &plans,
            &folder,
        );
        for (name, text) in &output.env_files {
            let path = folder.join(name);
            crate::host::write_private(&path, text.as_bytes())
                .with_context(|| format!("cannot write `{}`", path.display()))?;
        }
        match &args.output {
            Some(path) => {
                std::fs::write(path, &output.compose)?;
                eprintln!(
                    "wrote {} and {} env file(s) in {}",
                    path.display(),
                    output.env_files.len(),
                    folder.display()
                );
            }
            None => crate::output::print_text(&output.compose)?,
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `tfimg k8s TEAM.yaml [-o DIR]`: the team as Kubernetes manifests.
pub fn k8s(args: &K8sArgs) -> anyhow::Result<ExitCode> {
    let (team, specs) = team_and_specs(&args.file)?;
    let network = config::network(&args.network, &config::load_config()?)?;
    if args.uid == 0 {
        return Err(InputError::new(
            "`--uid 0` would run the pods as root",
            "use the image user's uid (1000) or another non-root uid",
        )
        .into());
    }
    let reporter = Reporter::new(Progress::Auto);
    super::runtime()?.block_on(async {
        let engine = Docker::connect().await?;
        let images = images_for(&engine, &specs, &network, &reporter).await?;
        let mut taken = BTreeSet::new();
        let mut members = Vec::new();
        let ids = (args.uid, args.gid);
        for member in &team.members {
            let plan = member_plan(&team, member, &specs[&member.spec], &images[&member.spec], ids, &mut taken)?;
            members.push(crate::team::k8s::K8sMember {
                name: member.name.clone(),
                plan,
                workers: member.workers,
                volume_size: args.volume_size.clone(),
            });
        }
        make_mount_folders(&team, team.members.iter(), &specs, ids)?;
        let options = crate::team::k8s::K8sOptions {
            team: team.name.clone(),
            registry: args.registry.clone(),
            uid: args.uid,
            gid: args.gid,
            tfjob: args.tfjob,
        };
        let (manifests, tfjobs) = crate::team::k8s::manifests(&members, &options);
        match &args.output {
            Some(folder) => {
                std::fs::create_dir_all(folder)?;
                // The Secrets are in it: the owner's eyes only.
                let main = folder.join(format!("{}.yaml", team.name));
                crate::host::write_private(&main, manifests.as_bytes())
                    .with_context(|| format!("cannot write `{}`", main.display()))?;
                eprintln!("wrote {}", main.display());
                if let Some(tfjobs) = tfjobs {
                    let path = folder.join(format!("{}.tfjob.yaml", team.name));
                    std::fs::write(&path, tfjobs)?;
                    eprintln!("wrote {} (needs Kubeflow's training operator)", path.display());
                }
            }
            None => {
                crate::output::print_text(&manifests)?;
                if let Some(tfjobs) = tfjobs {
                    crate::output::print_text(&tfjobs)?;
                }
            }
        }
        if args.registry.is_none() {
            eprintln!("note: the images are referenced without a registry; push them (`tfimg push IMAGE --registry HOST`) and pass `--registry HOST`");
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn down(args: &TeamArgs) -> anyhow::Result<ExitCode> {
    let team = team::load(&args.file)?;
    super::runtime()?.block_on(async {
        let engine = Docker::connect().await?;
        let containers = engine
            .containers_with_label(&labels::team_filter(&team.name))
            .await?;
        for container in &containers {
            engine.remove_container(&container.id, true).await?;
            println!("{}", container.name);
        }
        if containers.is_empty() {
            eprintln!("`{}` has no containers", team.name);
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// What decides whether a running member is still right: its settings and image.
fn member_hash(member: &TeamMember, image: &str) -> String {
    let text = format!(
        "{}|{image}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{}",
        member.spec,
        member.gpus.describe(),
        member.mounts,
        member.ports,
        member.env,
        member.command,
        member.memory,
        member.cpus,
        member.shm_size,
        member.shared
    );
    crate::build::hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}

fn ports_of(container: &ContainerFacts) -> Vec<u16> {
    container
        .labels
        .get(labels::PORTS)
        .map(|ports| {
            labels::decode_ports(ports)
                .into_iter()
                .map(|port| port.host)
                .collect()
        })
        .unwrap_or_default()
}

fn known_hosts_for(plan: &LaunchPlan) -> Option<std::path::PathBuf> {
    (plan.labels.get(labels::SERVICE).map(String::as_str) == Some("ssh"))
        .then(|| crate::host::data_dir().join("ssh").join("known_hosts"))
}

/// A member's mounts (and the text each came from), with the spec's workdir in place.
/// Pure: `make_mount_folders` creates what is missing.
fn member_mounts(
    team: &Team,
    member: &TeamMember,
    resolved: &ResolvedSpec,
) -> Result<Vec<(mounts::MountPlan, String)>, InputError> {
    member
        .mounts
        .iter()
        .map(|text| {
            let text = text.replace(team::WORKDIR_MARK, &resolved.workdir);
            let mount = mounts::parse(&text, &team.folder, &resolved.workdir)
                .and_then(|mount| {
                    mounts::check_not_above(&mount, &text, &resolved.home(), &resolved.workdir)?;
                    Ok(mount)
                })
                .map_err(|error| member_error(member, error))?;
            Ok((mount, text))
        })
        .collect()
}

fn member_error(member: &TeamMember, error: InputError) -> InputError {
    InputError::new(
        format!("member `{}`: {}", member.name, error.message),
        error.hint,
    )
}

/// Makes the missing mount folders of `members`, once every one is planned and every
/// mount is checked, so a bad member leaves no folder behind. A team's mounts root is made
/// as needed (`./work/alice`).
fn make_mount_folders<'a>(
    team: &Team,
    members: impl Iterator<Item = &'a TeamMember>,
    specs: &BTreeMap<String, ResolvedSpec>,
    ids: (u32, u32),
) -> Result<(), InputError> {
    let mut all = Vec::new();
    for member in members {
        for (mount, text) in member_mounts(team, member, &specs[&member.spec])? {
            mounts::check(&mount, &text, true).map_err(|error| member_error(member, error))?;
            all.push((member, mount, text));
        }
    }
    for (member, mount, text) in &all {
        if let Some(parent) = mount.source.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        mounts::prepare(mount, text, Some(ids)).map_err(|error| member_error(member, error))?;
    }
    Ok(())
}

fn member_plan(
    team: &Team,
    member: &TeamMember,
    resolved: &ResolvedSpec,
    image: &str,
    ids: (u32, u32),
    taken: &mut BTreeSet<u16>,
) -> anyhow::Result<LaunchPlan> {
    let context = |error: InputError| {
        InputError::new(
            format!("member `{}`: {}", member.name, error.message),
            error.hint,
        )
    };
    let mount_plans = member_mounts(team, member, resolved)?
        .into_iter()
        .map(|(mount, _)| mount)
        .collect();
    let requests: Vec<PortRequest> = member
        .ports
        .iter()
        .map(|(service, host)| {
            let container = resolved.ports.get(service).copied().ok_or_else(|| {
                InputError::new(
                    format!(
                        "member `{}`: `{}` has no `{service}` port",
                        member.name, resolved.name
                    ),
                    format!(
                        "its ports are: {}",
                        resolved
                            .ports
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
            Ok(PortRequest {
                host: Some(*host),
                container,
            })
        })
        .collect::<Result<_, InputError>>()?;
    let assigned = {
        let held: BTreeSet<u16> = taken.clone();
        ports::assign(
            &resolved.ports,
            &requests,
            false,
            &mut |ip, port| !held.contains(&port) && crate::host::port_is_free(ip, port),
            &mut |ip| {
                (0..64)
                    .filter_map(|_| crate::host::any_free_port(ip))
                    .find(|port| !held.contains(port))
            },
        )
        .map_err(context)?
    };
    taken.extend(assigned.iter().map(|port| port.host));
    let command_given = !member.command.is_empty();
    let token = (resolved.service == Service::Jupyter && !command_given)
        .then(|| crate::host::random_hex(24))
        .transpose()?;
    let ssh = (resolved.service == Service::Ssh && !command_given)
        .then(|| crate::host::member_ssh_key(&team.name, &member.name))
        .transpose()?;
    let gpu = member.gpus.plan(GpuMode::Devices).map_err(context)?;
    let hash = member_hash(member, image);
    let input = LaunchInput {
        image: image.to_string(),
        spec_name: resolved.name.clone(),
        service: resolved.service,
        image_user: resolved.user.clone(),
        tfimg_image: true,
        name: format!("{}-{}", team.name, member.name),
        command: member.command.clone(),
        env: member.env.clone(),
        mounts: mount_plans,
        ports: assigned,
        gpus: member.gpus.clone(),
        gpu,
        ids: Some(ids),
        jupyter_token: token,
        ssh_public_key: ssh.as_ref().map(|key| key.public_key.clone()),
        ssh_identity: ssh
            .as_ref()
            .and_then(|key| key.identity.as_ref())
            .map(|path| path.display().to_string()),
        ssh_known_hosts: ssh.as_ref().map(|_| {
            crate::host::data_dir()
                .join("ssh")
                .join("known_hosts")
                .display()
                .to_string()
        }),
        memory: member
            .memory
            .as_deref()
            .map(|m| plan::parse_size(m, "memory"))
            .transpose()
            .map_err(context)?,
        nano_cpus: member
            .cpus
            .as_deref()
            .map(plan::parse_cpus)
            .transpose()
            .map_err(context)?,
        shm_size: plan::parse_size(&member.shm_size, "shm_size").map_err(context)?,
        // Services come back after a reboot; a batch job runs once.
        restart: command_given
            .then_some(())
            .map_or(Some("unless-stopped".to_string()), |_| None),
        extra_labels: BTreeMap::from([
            (labels::TEAM.to_string(), team.name.clone()),
            (labels::MEMBER.to_string(), member.name.clone()),
            (labels::MEMBER_HASH.to_string(), hash),
        ]),
    };
    Ok(plan::launch(&input))
}

async fn print_team(
    engine: &impl Engine,
    team: &Team,
    actions: &BTreeMap<String, Action>,
) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for member in &team.members {
        let name = format!("{}-{}", team.name, member.name);
        let container = engine.container(&name).await?;
        let labels = container
            .as_ref()
            .map(|c| c.labels.clone())
            .unwrap_or_default();
        let access = ["jupyter", "ssh"]
            .iter()
            .find_map(|service| {
                let address = labels.get(&crate::labels::url_label(service))?;
                // The label has no token; the user who ran `up` gets the whole URL.
                match container
                    .as_ref()
                    .and_then(super::containers::jupyter_token)
                {
                    Some(token) if *service == "jupyter" => Some(plan::with_token(address, &token)),
                    _ => Some(address.clone()),
                }
            })
            .unwrap_or_else(|| match container.as_ref().map(|c| c.state.as_str()) {
                Some("exited") => format!(
                    "exited ({})",
                    container.as_ref().and_then(|c| c.exit_code).unwrap_or(0)
                ),
                Some(state) => state.to_string(),
                None => "-".to_string(),
            });
        let action = match actions.get(&member.name) {
            Some(Action::Created) => "created",
            Some(Action::Recreated) => "recreated",
            _ => "unchanged",
        };
        rows.push(vec![
            member.name.clone(),
            member.spec.clone(),
            action.to_string(),
            member.gpus.describe(),
            access,
        ]);
    }
    crate::output::print_table(&["MEMBER", "SPEC", "UP", "GPUS", "ACCESS"], &rows)?;
    Ok(())
}
