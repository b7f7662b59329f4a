//! `tfimg compose TEAM.yaml [-o FILE]` and `tfimg k8s TEAM.yaml [-o DIR]`: the team as a
//! Compose file (secrets in env files beside it) or as Kubernetes manifests. Both render
//! from the team file alone: no daemon is needed. Each member's image is the build of its
//! spec's current build key where the local daemon has one, else the spec's moving tag;
//! `--build` builds the missing images first.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::settings::Settings;
use crate::app::team::{export_plans, stories, TeamImages};
use crate::cli::{ComposeArgs, K8sArgs, Progress};
use crate::host::confined::Confined;
use crate::host::Host;
use crate::input::InputError;
use crate::output::progress::Reporter;
use crate::plan::LaunchPlan;
use crate::spec::ResolvedSpec;
use crate::team::gateway::nginx::GATEWAY_IMAGE;

pub fn compose(
    args: &ComposeArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let (team, specs) = stories::load(host, &super::catalog(), &args.file)?;
    if let Some(gateway) = &team.gateway {
        gateway.check_exported("compose")?;
    }
    let network = settings.network(&args.network.choices(), host)?;
    let chosen = host.container_ids();
    let ids = chosen.ids;
    let folder = match &args.output {
        Some(path) => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            // Made when something is written: a refusal leaves no folder behind.
            std::path::absolute(parent)?
        }
        None => std::env::current_dir()?,
    };
    let images = images(
        settings,
        host,
        &specs,
        &network,
        args.build,
        team.gateway.is_some(),
    )?;
    let behind_gateway = team.gateway.is_some();
    let (mut plans, notes) = export_plans(host, &team, &specs, &images.specs, ids, behind_gateway)?;
    if team.members.iter().any(|member| !member.mounts.is_empty()) {
        super::say(chosen.note);
    }
    for note in notes {
        eprintln!("{note}");
    }
    if let Some(image) = &images.gateway {
        let gateway =
            crate::app::gateway::compose_export(host, &team, &specs, image, ids, &folder)?;
        if let Some(gateway) = gateway {
            write_gateway_files(host, &gateway)?;
            plans.push(("gateway".to_string(), gateway.plan));
        }
    }
    let output = crate::team::compose::compose(
        &team.name,
        &args.file.display().to_string(),
        &plans,
        &folder,
    );
    if !output.env_files.is_empty() {
        std::fs::create_dir_all(&folder)?;
    }
    for (name, text) in &output.env_files {
        let path = folder.join(name);
        crate::host::write_whole(&path, text.as_bytes(), 0o600, false)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    match &args.output {
        Some(path) => {
            let name = path.file_name().unwrap_or_default();
            write_out(&folder, name.as_ref(), output.compose.as_bytes())?;
            eprintln!(
                "wrote {} and {} env file(s) in {}",
                path.display(),
                output.env_files.len(),
                folder.display()
            );
        }
        None => crate::output::print_text(&output.compose)?,
    }
    print_reach(&plans, args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// How to reach each member once Compose has started the export, on stderr: its tokens
/// and keys are the export's own (in its env files), not those `tfimg up` printed.
fn print_reach(plans: &[(String, LaunchPlan)], output: Option<&Path>) -> anyhow::Result<()> {
    // Printed on stdout, the file reaches Compose on its stdin (`-f -`).
    let file = output.map_or_else(
        || "-f -".to_string(),
        |path| format!("-f {}", path.display()),
    );
    eprintln!(
        "reach the members once `docker compose {file} up -d` started them (the tokens are this export's own, kept in its env files; the containers `tfimg up` started keep theirs):"
    );
    let rows: Vec<Vec<String>> = plans
        .iter()
        .filter(|(name, _)| name != "gateway")
        .map(|(name, plan)| {
            let (service, tensorboard) = crate::plan::access(&plan.endpoints);
            let access = service.map_or_else(
                || format!("- (its output: `docker compose logs {name}`)"),
                str::to_string,
            );
            let tensorboard = tensorboard.unwrap_or("-").to_string();
            vec![name.clone(), access, tensorboard]
        })
        .collect();
    crate::output::eprint_table(&["MEMBER", "ACCESS", "TENSORBOARD"], &rows)?;
    Ok(())
}

pub fn k8s(args: &K8sArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let (team, specs) = stories::load(host, &super::catalog(), &args.file)?;
    if let Some(gateway) = &team.gateway {
        gateway.check_exported("k8s")?;
    }
    let network = settings.network(&args.network.choices(), host)?;
    if args.uid == 0 {
        return Err(InputError::new(
            "`--uid 0` would run the pods as root",
            "use the image user's uid (1000) or another non-root uid",
        )
        .into());
    }
    let images = images(settings, host, &specs, &network, args.build, false)?;
    let ids = (args.uid, args.gid);
    let (mut plans, notes) = export_plans(host, &team, &specs, &images.specs, ids, false)?;
    for note in notes {
        eprintln!("{note}");
    }
    let ingress = crate::app::gateway::k8s_export(host, &team, &specs, &mut plans)?;
    let members: Vec<crate::team::k8s::K8sMember> = team
        .members
        .iter()
        .zip(plans)
        .map(|(member, (name, plan))| crate::team::k8s::K8sMember {
            name,
            plan,
            workers: member.workers,
            volume_size: args.volume_size.clone(),
        })
        .collect();
    let options = crate::team::k8s::K8sOptions {
        team: team.name.clone(),
        registry: args.registry.clone(),
        uid: args.uid,
        gid: args.gid,
        tfjob: args.tfjob,
        ingress,
    };
    let (manifests, tfjobs) = crate::team::k8s::manifests(&members, &options);
    match &args.output {
        Some(folder) => {
            std::fs::create_dir_all(folder)?;
            // The Secrets are in it: the owner's eyes only.
            let main = folder.join(format!("{}.yaml", team.name));
            crate::host::write_whole(&main, manifests.as_bytes(), 0o600, false)
                .with_context(|| format!("cannot write `{}`", main.display()))?;
            eprintln!("wrote {}", main.display());
            if let Some(tfjobs) = tfjobs {
                let name = format!("{}.tfjob.yaml", team.name);
                write_out(folder, Path::new(&name), tfjobs.as_bytes())?;
                let path = folder.join(name);
                eprintln!(
                    "wrote {} (needs Kubeflow's training operator)",
                    path.display()
                );
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
}

/// Each spec's image (and with `gateway` the gateway's): with `build`, its current build
/// (made when missing, the daemon required); otherwise the current build where the local
/// daemon has one, else the moving tag `tfimg/<name>:<tensorflow>` (`tfimg/gateway:latest`),
/// said once.
fn images(
    settings: &Settings,
    host: &impl Host,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    build: bool,
    gateway: bool,
) -> anyhow::Result<TeamImages> {
    let reporter = Reporter::new(Progress::Auto);
    let mut images = TeamImages {
        specs: specs
            .iter()
            .map(|(name, resolved)| (name.clone(), resolved.image_reference()))
            .collect(),
        gateway: gateway.then(|| format!("{GATEWAY_IMAGE}:latest")),
    };
    let found = super::runtime()?.block_on(async {
        let engine = match settings.try_connect().await? {
            Ok(engine) => engine,
            Err(error) if !build => {
                tracing::info!("no daemon for the exports' image names: {error}");
                return anyhow::Ok(false);
            }
            Err(error) => return Err(error.into()),
        };
        let mut all = true;
        if gateway {
            match crate::app::gateway::image(&engine, network, !build, &reporter).await? {
                Some(tag) => images.gateway = Some(tag),
                None => all = false,
            }
        }
        if build {
            let built = stories::images_for(&engine, host, specs, network, &reporter);
            images.specs = built.await?;
            return Ok(all);
        }
        for (name, resolved) in specs {
            let options = BuildOptions {
                only_check: true,
                ..BuildOptions::default()
            };
            match build_spec(&engine, host, resolved, network, &options, &reporter).await {
                Ok(Some(built)) => {
                    images.specs.insert(name.clone(), built.plan.keyed_tag);
                }
                _ => all = false,
            }
        }
        Ok(all)
    })?;
    reporter.clear();
    if !found {
        eprintln!("note: some images are not built for their specs' current versions; they are referenced by their moving tags (`tfimg/<spec>:<tensorflow>`, `tfimg/gateway:latest`); `--build` builds them first");
    }
    Ok(images)
}

/// An export's file `name` written whole in `folder`. The output folder may be shared
/// with other users, who can plant a link at the name: it is replaced, never written
/// through (`host::confined`).
fn write_out(folder: &Path, name: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::host::write_whole(&folder.join(name), bytes, 0o666, true).map_err(|error| {
        planted(
            error,
            &format!("cannot write `{}`", folder.join(name).display()),
        )
    })
}

/// A link (or other odd file) in the output folder is the folder's problem, for the user
/// to clear (exit 1); any other error keeps its context.
fn planted(error: std::io::Error, context: &str) -> anyhow::Error {
    match crate::host::confined::refused(&error) {
        Some(refused) => InputError::new(
            format!("{context}: {refused}"),
            "someone else can write the output folder: remove what is there, or write the export to a folder only you can write",
        )
        .into(),
        None => anyhow::Error::new(error).context(context.to_string()),
    }
}

/// The gateway's folder beside the Compose file (only its owner may enter it), with its
/// configuration, certificate and key (only its owner may read it). Made, written and
/// given to nginx's user through handles of the output folder (`host::confined`): a link
/// another user planted at the folder's name, or at a file's name in it, is refused or
/// replaced, never followed, so root never writes or gives away what a link points at.
fn write_gateway_files(
    host: &impl Host,
    gateway: &crate::app::gateway::ComposeGateway,
) -> anyhow::Result<()> {
    let path = &gateway.folder;
    let shown = format!("cannot make `{}`", path.display());
    let parent = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default();
    let folder = Confined::open_or_make(parent)
        .and_then(|above| above.make_folders(Path::new(name), 0o700))
        .map_err(|error| planted(error, &shown))?;
    folder.set_mode(0o700).with_context(|| shown.clone())?;
    for (name, bytes, private) in &gateway.files {
        let mode = if *private { 0o600 } else { 0o644 };
        folder
            .write(Path::new(name), bytes, mode)
            .map_err(|error| {
                planted(
                    error,
                    &format!("cannot write `{}`", path.join(name).display()),
                )
            })?;
    }
    let (uid, gid) = gateway.owner;
    if host.ids().map(|(me, _)| me) != Some(uid) {
        // Root exports for the image's user (nginx never runs as root).
        folder
            .set_owner(uid, gid)
            .with_context(|| format!("cannot give `{}` to {uid}:{gid}", path.display()))?;
        for (name, ..) in &gateway.files {
            folder
                .set_owner_of(Path::new(name), uid, gid)
                .with_context(|| {
                    format!("cannot give `{}` to {uid}:{gid}", path.join(name).display())
                })?;
        }
    }
    Ok(())
}
