//! What `tfimg compose` and `tfimg k8s` ask of this machine: the images the exports name,
//! and their files written through the host's confined writes (`Host::write_export`),
//! with the gateway's folder given to the user nginx runs as when root exports it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{export_plans, up_down, MemberPlans, TeamImages};
use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::gateway::ComposeGateway;
use crate::app::session::{Session, Sinks};
use crate::engine::prelude::{Builds, Containers, Daemon, Images};
use crate::engine::EngineError;
use crate::host::prelude::{Clock, Confined, Files, Identity, Processes, Secrets, Trust};
use crate::host::{ExportError, ExportFile, ExportStep, Host};
use crate::input::InputError;
use crate::notice::Notice;
use crate::output::ui::Ui;
use crate::plan::LaunchPlan;
use crate::spec::ResolvedSpec;
use crate::team::gateway::nginx::GATEWAY_IMAGE;
use crate::team::hub::z2jh::{HubMember, ValuesOptions};
use crate::team::k8s::{K8sMember, K8sOptions};
use crate::team::Team;

/// Each spec's image (and with `gateway` the gateway's): with `build`, its current build
/// (made when missing, the daemon required); otherwise the current build where the
/// daemon (`connected`) has one, else the moving tag `tfimg/<name>:<tensorflow>`
/// (`tfimg/gateway:latest`), said once.
pub async fn images(
    connected: Result<impl Images + Builds + Containers + Daemon, EngineError>,
    host: &(impl Clock + Secrets + Processes),
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    build: bool,
    gateway: bool,
    sinks: Sinks<'_>,
) -> anyhow::Result<TeamImages> {
    let mut images = TeamImages {
        specs: specs
            .iter()
            .map(|(name, resolved)| (name.clone(), resolved.image_reference()))
            .collect(),
        gateway: gateway.then(|| format!("{GATEWAY_IMAGE}:latest")),
        ..TeamImages::default()
    };
    let found = match connected {
        Ok(engine) => {
            let session = Session::new(&engine, host, sinks);
            current_images(session, specs, network, build, &mut images).await?
        }
        Err(error) if !build => {
            tracing::info!("no daemon for the exports' image names: {error}");
            false
        }
        Err(error) => return Err(error.into()),
    };
    sinks.report.clear();
    if !found {
        sinks.ui.notice(&Notice::note("some images are not built for their specs' current versions; they are referenced by their moving tags (`tfimg/<spec>:<tensorflow>`, `tfimg/gateway:latest`); `--build` builds them first"));
    }
    Ok(images)
}

/// `images` with a daemon: whether every image is its spec's current build.
async fn current_images(
    session: Session<
        '_,
        impl Images + Builds + Containers + Daemon,
        impl Clock + Secrets + Processes,
    >,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    build: bool,
    images: &mut TeamImages,
) -> anyhow::Result<bool> {
    let Session { engine, .. } = session;
    let reporter = session.report;
    let mut all = true;
    if images.gateway.is_some() {
        match crate::app::gateway::image(engine, network, !build, reporter).await? {
            Some(tag) => images.gateway = Some(tag),
            None => all = false,
        }
    }
    if build {
        images.specs = up_down::images_for(session, specs, network).await?;
        return Ok(all);
    }
    for (name, resolved) in specs {
        let options = BuildOptions {
            only_check: true,
            ..BuildOptions::default()
        };
        match build_spec(session, resolved, network, &options).await {
            Ok(Some(built)) => {
                images.specs.insert(name.clone(), built.plan.keyed_tag);
            }
            _ => all = false,
        }
    }
    Ok(all)
}

/// A Compose export, written (the gateway's folder, the env files and, with `file_name`,
/// the Compose file in `folder`).
#[derive(Debug)]
pub struct ComposeExport {
    /// The Compose file's text (on stdout when it was not written).
    pub compose: String,
    pub env_files: usize,
    /// Each member's plan (and the gateway's), as the file starts them.
    pub plans: MemberPlans,
}

/// Where `tfimg compose` writes, and what its file says it came from.
#[derive(Debug, Clone, Copy)]
pub struct ComposeOutput<'a> {
    /// The folder of the Compose file, its env files and the gateway's folder.
    pub folder: &'a Path,
    /// The Compose file's name in `folder`, when it is written (else it goes to stdout).
    pub file_name: Option<&'a Path>,
    /// The team file, as the Compose file's header names it.
    pub source: &'a str,
}

impl<'a> ComposeOutput<'a> {
    pub fn new(folder: &'a Path, file_name: Option<&'a Path>, source: &'a str) -> Self {
        ComposeOutput {
            folder,
            file_name,
            source,
        }
    }
}

/// `tfimg compose`: the members' plans as the user who runs Compose (the host's
/// `container_ids`), the gateway's service and folder, the Compose text and its env files
/// (secrets, 0600) written in the output's folder; the Compose file too when it has a
/// name.
pub fn compose(
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    images: &TeamImages,
    output: ComposeOutput<'_>,
    ui: &(impl Ui + ?Sized),
) -> anyhow::Result<ComposeExport> {
    let ComposeOutput {
        folder,
        file_name,
        source,
    } = output;
    let ids = host.container_ids();
    let behind_gateway = team.gateway.is_some();
    check_output_folder(host, folder)?;
    let (mut plans, notes) = export_plans(host, team, specs, &images.specs, ids, behind_gateway)?;
    for note in &notes {
        ui.notice(note);
    }
    if let Some(image) = &images.gateway {
        let gateway = crate::app::gateway::compose_export(host, team, specs, image, ids, folder)?;
        if let Some(gateway) = gateway {
            write_gateway(host, &gateway)?;
            plans.push(("gateway".to_string(), gateway.plan));
        }
    }
    let output = crate::team::compose::compose(&team.name, source, &plans, folder);
    // The env files hold the members' secrets: their owner's eyes only.
    let mut files: Vec<(PathBuf, &[u8], u32)> = output
        .env_files
        .iter()
        .map(|(name, text)| (PathBuf::from(name), text.as_bytes(), 0o600))
        .collect();
    if let Some(name) = file_name {
        files.push((name.to_path_buf(), output.compose.as_bytes(), 0o666));
    }
    if !files.is_empty() {
        write(host, folder, &files)?;
    }
    Ok(ComposeExport {
        env_files: output.env_files.len(),
        compose: output.compose,
        plans,
    })
}

/// How to reach each member once Compose started the export (MEMBER, ACCESS,
/// TENSORBOARD): its tokens and keys are the export's own, not those `tfimg up` printed.
pub fn reach_rows(plans: &MemberPlans) -> Vec<Vec<String>> {
    plans
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
        .collect()
}

/// `tfimg k8s`'s choices besides the team.
#[derive(Debug, Clone)]
pub struct K8sChoices {
    pub uid: u32,
    pub gid: u32,
    pub registry: Option<String>,
    pub tfjob: bool,
    pub volume_size: String,
}

/// What `tfimg compose` refuses before anything is built or written: a gateway routing by
/// host without a `domain`, a hub (`app::hub::refuse_compose`).
pub fn check_compose(team: &Team) -> anyhow::Result<()> {
    if let Some(gateway) = &team.gateway {
        gateway.check_exported("compose")?;
    }
    crate::app::hub::refuse_compose(team)?;
    Ok(())
}

/// What `tfimg k8s` refuses before anything is built or written: a gateway routing by host
/// without a `domain`, and pods as root.
pub fn check_k8s(team: &Team, choices: &K8sChoices) -> anyhow::Result<()> {
    if let Some(gateway) = &team.gateway {
        gateway.check_exported("k8s")?;
    }
    if choices.uid == 0 {
        return Err(InputError::new(
            "`--uid 0` would run the pods as root",
            "use the image user's uid (1000) or another non-root uid",
        )
        .into());
    }
    Ok(())
}

/// What `tfimg k8s` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K8sExport {
    /// The members' manifests (Secrets among them); `None` when every member is the
    /// hub's.
    pub manifests: Option<String>,
    /// The TFJobs, when asked.
    pub tfjobs: Option<String>,
    /// For a team with `hub:`: Zero to JupyterHub's Helm values for its members' servers.
    pub hub_values: Option<String>,
}

/// `tfimg k8s`: the manifests (Secrets among them), the TFJobs when asked, and for a team
/// with a hub the Helm values of Zero to JupyterHub for the members it serves; never as
/// root (`uid` 0 is bad input).
pub fn k8s(
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    images: &TeamImages,
    choices: &K8sChoices,
    ui: &(impl Ui + ?Sized),
) -> anyhow::Result<K8sExport> {
    let ids = (choices.uid, choices.gid);
    let (mut plans, notes) = export_plans(host, team, specs, &images.specs, ids, false)?;
    for note in &notes {
        ui.notice(note);
    }
    let ingress = crate::app::gateway::k8s_export(host, team, specs, &mut plans)?;
    let mut members: Vec<K8sMember> = Vec::new();
    // Each server a hub member may start: her spec's, then one per choice.
    let mut served: Vec<(crate::team::TeamMember, LaunchPlan)> = Vec::new();
    for (member, (name, mut plan)) in team.members.iter().zip(plans) {
        if crate::app::hub::serves(team, member, specs) {
            plan.image = crate::app::hub::member_moving_tag(&specs[&member.spec]);
            served.push((member.clone(), plan));
            for choice in &member.choices {
                let chosen = member.with_spec(choice);
                let request =
                    super::member_request(team, &chosen, &specs[choice], &images.specs, ids)?;
                let mut plan =
                    crate::app::launch::plan_without_engine(host, request, &Default::default())
                        .map_err(|error| super::prefixed(member, error))?;
                plan.image = crate::app::hub::member_moving_tag(&specs[choice]);
                served.push((chosen, plan));
            }
            continue;
        }
        members.push(K8sMember {
            name,
            plan,
            workers: member.workers,
            volume_size: choices.volume_size.clone(),
        });
    }
    if choices.registry.is_none() {
        ui.notice(&Notice::note("the images are referenced without a registry; push them (`tfimg push IMAGE --registry HOST`) and pass `--registry HOST`"));
    }
    if team.hub.is_some() {
        ui.notice(&Notice::note("the hub's members run its server images (`tfimg/hub-member:<spec>-<tensorflow>`, which `tfimg up` builds): push them too (`tfimg push IMAGE --registry HOST`)"));
    }
    let hub_values = team.hub.as_ref().map(|hub| {
        let hub_members: Vec<HubMember<'_>> = served
            .iter()
            .map(|(member, plan)| HubMember {
                name: &member.name,
                spec: &member.spec,
                plan,
            })
            .collect();
        let work = served
            .first()
            .map(|(member, _)| format!("{}/work", specs[&member.spec].workdir))
            .unwrap_or_else(|| "/tf/work".to_string());
        crate::team::hub::z2jh::values(
            hub,
            &hub_members,
            &ValuesOptions {
                team: &team.name,
                file: &team.file,
                registry: choices.registry.as_deref(),
                uid: choices.uid,
                gid: choices.gid,
                volume_size: &choices.volume_size,
                work: &work,
                idle_servers: team.idle_containers,
            },
        )
    });
    let options = K8sOptions {
        team: team.name.clone(),
        registry: choices.registry.clone(),
        uid: choices.uid,
        gid: choices.gid,
        tfjob: choices.tfjob,
        ingress,
    };
    let (manifests, tfjobs) = crate::team::k8s::manifests(&members, &options);
    Ok(K8sExport {
        manifests: (!members.is_empty() || hub_values.is_none()).then_some(manifests),
        tfjobs,
        hub_values,
    })
}

impl K8sExport {
    /// What is printed when nothing is written: each text, in the order files are.
    pub fn texts(&self) -> impl Iterator<Item = &String> {
        [&self.manifests, &self.hub_values, &self.tfjobs]
            .into_iter()
            .flatten()
    }
}

/// `k8s -o FOLDER`: the manifests (their Secrets for the owner's eyes only), the hub's Helm
/// values and the TFJobs written; each path written, with what to know of it.
pub fn write_k8s(
    host: &impl Confined,
    folder: &Path,
    team: &str,
    export: &K8sExport,
) -> anyhow::Result<Vec<(PathBuf, &'static str)>> {
    let mut written = Vec::new();
    if let Some(manifests) = &export.manifests {
        let main = PathBuf::from(format!("{team}.yaml"));
        write(host, folder, &[(main.clone(), manifests.as_bytes(), 0o600)])?;
        written.push((folder.join(main), ""));
    }
    if let Some(values) = &export.hub_values {
        let name = PathBuf::from(format!("{team}.hub-values.yaml"));
        write(host, folder, &[(name.clone(), values.as_bytes(), 0o644)])?;
        written.push((
            folder.join(name),
            " (Zero to JupyterHub's Helm values: the command to install them is at its top)",
        ));
    }
    if let Some(tfjobs) = &export.tfjobs {
        let name = PathBuf::from(format!("{team}.tfjob.yaml"));
        write(host, folder, &[(name.clone(), tfjobs.as_bytes(), 0o666)])?;
        written.push((folder.join(name), " (needs Kubeflow's training operator)"));
    }
    Ok(written)
}

/// An output folder that is there already is one no other account can change (`host::
/// trusted`), checked before anything is made: `write` checks it again as it writes.
fn check_output_folder(host: &(impl Files + Trust), folder: &Path) -> Result<(), InputError> {
    if !host.exists(folder) {
        return Ok(());
    }
    host.trusted_folder(folder, None, None)
        .map_err(|error| crate::host::trusted::explained(error, "an export's folder", folder))
}

/// Writes export files into `folder`: (name, bytes, mode) each.
pub fn write(
    host: &impl Confined,
    folder: &Path,
    files: &[(PathBuf, &[u8], u32)],
) -> anyhow::Result<()> {
    let files: Vec<ExportFile> = files
        .iter()
        .map(|(name, bytes, mode)| ExportFile {
            name: name.clone(),
            bytes: bytes.to_vec(),
            mode: *mode,
        })
        .collect();
    host.write_export(folder, None, &files, None)
        .map_err(failed)
}

/// The gateway's folder beside the Compose file (only its owner may enter it), with its
/// configuration, certificate and key (only its owner may read it); given to the user
/// nginx runs as when that is not this user (root exports for the image's user). A link
/// another user planted at the folder's name, or at a file's name in it, is refused or
/// replaced, never followed, so root never writes or gives away what a link points at.
pub fn write_gateway(
    host: &(impl Confined + Identity),
    gateway: &ComposeGateway,
) -> anyhow::Result<()> {
    let files: Vec<ExportFile> = gateway
        .files
        .iter()
        .map(|(name, bytes, private)| ExportFile {
            name: PathBuf::from(name),
            bytes: bytes.clone(),
            mode: if *private { 0o600 } else { 0o644 },
        })
        .collect();
    let (uid, _) = gateway.owner;
    let owner = (host.ids().map(|(me, _)| me) != Some(uid)).then_some(gateway.owner);
    host.write_export(&gateway.folder, Some(0o700), &files, owner)
        .map_err(failed)
}

/// A link (or other odd file) in the output folder is the folder's problem, for the user
/// to clear (exit 1); any other error keeps its context.
fn failed(failure: ExportError) -> anyhow::Error {
    let path = failure.path.display();
    let context = match failure.step {
        ExportStep::MakeFolder => format!("cannot make `{path}`"),
        ExportStep::Write => format!("cannot write `{path}`"),
        ExportStep::GiveAway(uid, gid) => format!("cannot give `{path}` to {uid}:{gid}"),
    };
    if let Some(untrusted) = crate::host::trusted::untrusted_in(&failure.error) {
        return untrusted.refused("an export's folder").into();
    }
    match crate::host::confined::refused(&failure.error) {
        Some(refused) => InputError::new(
            format!("{context}: {refused}"),
            "someone else can write the output folder: remove what is there, or write the export to a folder only you can write",
        )
        .into(),
        None => anyhow::Error::new(failure.error).context(context),
    }
}

#[cfg(test)]
mod tests;
