//! `tfimg compose TEAM.yaml [-o FILE]` and `tfimg k8s TEAM.yaml [-o DIR]`: the team as a
//! Compose file (secrets in env files beside it) or as Kubernetes manifests. Both render
//! from the team file alone: no daemon is needed. Each member's image is the build of its
//! spec's current build key where the local daemon has one, else the spec's moving tag;
//! `--build` builds the missing images first.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use crate::app::build::Network;
use crate::app::settings::Settings;
use crate::app::team::{export, up_down, TeamImages};
use crate::cli::{ComposeArgs, K8sArgs};
use crate::host::Host;
use crate::output::ui::Terminal;
use crate::spec::ResolvedSpec;

pub fn compose(
    args: &ComposeArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let (team, specs) = up_down::load(host, &super::catalog(settings, host), &args.file)?;
    export::check_compose(&team)?;
    let network = settings.network(&args.network.choices(), host)?;
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
    let file_name = args
        .output
        .as_deref()
        .map(|path| Path::new(path.file_name().unwrap_or_default()));
    let source = args.file.display().to_string();
    let place = export::ComposeOutput::new(&folder, file_name, &source);
    let output = export::compose(host, &team, &specs, &images, place, &Terminal)?;
    match &args.output {
        Some(path) => {
            errln!(
                "wrote {} and {} env file(s) in {}",
                path.display(),
                output.env_files,
                folder.display()
            );
        }
        None => crate::output::print_text(&output.compose)?,
    }
    // Printed on stdout, the file reaches Compose on its stdin (`-f -`).
    let file = args.output.as_ref().map_or_else(
        || "-f -".to_string(),
        |path| format!("-f {}", path.display()),
    );
    errln!(
        "reach the members once `docker compose {file} up -d` started them (the tokens are this export's own, kept in its env files; the containers `tfimg up` started keep theirs):"
    );
    let rows = export::reach_rows(&output.plans);
    crate::output::eprint_table(&["MEMBER", "ACCESS", "TENSORBOARD"], &rows)?;
    Ok(ExitCode::SUCCESS)
}

pub fn k8s(args: &K8sArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let (team, specs) = up_down::load(host, &super::catalog(settings, host), &args.file)?;
    let choices = export::K8sChoices {
        uid: args.uid,
        gid: args.gid,
        registry: args.registry.clone(),
        tfjob: args.tfjob,
        volume_size: args.volume_size.clone(),
    };
    export::check_k8s(&team, &choices)?;
    let network = settings.network(&args.network.choices(), host)?;
    let images = images(settings, host, &specs, &network, args.build, false)?;
    let exported = export::k8s(host, &team, &specs, &images, &choices, &Terminal)?;
    match &args.output {
        Some(folder) => {
            for (path, what) in export::write_k8s(host, folder, &team.name, &exported)? {
                errln!("wrote {}{what}", path.display());
            }
        }
        None => {
            for text in exported.texts() {
                crate::output::print_text(text)?;
            }
        }
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
    let reporter = crate::output::progress::Reporter::new(crate::output::progress::Progress::Auto);
    super::runtime()?.block_on(async {
        let connected = settings.try_connect().await?;
        let sinks = crate::output::sinks::Sinks::terminal(&reporter);
        export::images(connected, host, specs, network, build, gateway, sinks).await
    })
}
