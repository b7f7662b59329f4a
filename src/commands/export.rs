//! `tfimg compose TEAM.yaml [-o FILE]` and `tfimg k8s TEAM.yaml [-o DIR]`: the team as a
//! Compose file (secrets in env files beside it) or as Kubernetes manifests. Both render
//! from the team file alone: no daemon is needed. Each member's image is the build of its
//! spec's current build key where the local daemon has one, else the spec's moving tag;
//! `--build` builds the missing images first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::app::build::Network;
use crate::app::settings::Settings;
use crate::app::team::{export, export_plans, stories, TeamImages};
use crate::cli::{ComposeArgs, K8sArgs};
use crate::host::Host;
use crate::input::InputError;
use crate::output::ui::Terminal;
use crate::plan::LaunchPlan;
use crate::spec::ResolvedSpec;

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
        None => settings.current_dir()?,
    };
    let gateway = team.gateway.is_some();
    let images = images(settings, host, &specs, &network, args.build, gateway)?;
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
            export::write_gateway(host, &gateway)?;
            plans.push(("gateway".to_string(), gateway.plan));
        }
    }
    let output = crate::team::compose::compose(
        &team.name,
        &args.file.display().to_string(),
        &plans,
        &folder,
    );
    // The env files hold the members' secrets: their owner's eyes only.
    let mut files: Vec<(PathBuf, &[u8], u32)> = output
        .env_files
        .iter()
        .map(|(name, text)| (PathBuf::from(name), text.as_bytes(), 0o600))
        .collect();
    if let Some(path) = &args.output {
        let name = path.file_name().unwrap_or_default();
        files.push((PathBuf::from(name), output.compose.as_bytes(), 0o666));
    }
    if !files.is_empty() {
        export::write(host, &folder, &files)?;
    }
    match &args.output {
        Some(path) => {
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
            // The Secrets are in it: the owner's eyes only.
            let main = PathBuf::from(format!("{}.yaml", team.name));
            export::write(host, folder, &[(main.clone(), manifests.as_bytes(), 0o600)])?;
            eprintln!("wrote {}", folder.join(main).display());
            if let Some(tfjobs) = tfjobs {
                let name = PathBuf::from(format!("{}.tfjob.yaml", team.name));
                export::write(host, folder, &[(name.clone(), tfjobs.as_bytes(), 0o666)])?;
                eprintln!(
                    "wrote {} (needs Kubeflow's training operator)",
                    folder.join(name).display()
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

/// The images the export names (`app::team::export::images`), with the daemon if one
/// answers.
fn images(
    settings: &Settings,
    host: &impl Host,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    build: bool,
    gateway: bool,
) -> anyhow::Result<TeamImages> {
    super::runtime()?.block_on(async {
        let connected = settings.try_connect().await?;
        export::images(connected, host, specs, network, build, gateway, &Terminal).await
    })
}
