//! What `tfimg compose` and `tfimg k8s` ask of this machine: the images the exports name,
//! and their files written through the host's confined writes (`Host::write_export`),
//! with the gateway's folder given to the user nginx runs as when root exports it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{stories, TeamImages};
use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::gateway::ComposeGateway;
use crate::engine::{Engine, EngineError};
use crate::host::{ExportError, ExportFile, ExportStep, Host};
use crate::input::InputError;
use crate::output::progress::{Progress, Reporter};
use crate::output::ui::Ui;
use crate::spec::ResolvedSpec;
use crate::team::gateway::nginx::GATEWAY_IMAGE;

/// Each spec's image (and with `gateway` the gateway's): with `build`, its current build
/// (made when missing, the daemon required); otherwise the current build where the
/// daemon (`connected`) has one, else the moving tag `tfimg/<name>:<tensorflow>`
/// (`tfimg/gateway:latest`), said once.
#[allow(clippy::too_many_arguments)]
pub async fn images(
    connected: Result<impl Engine, EngineError>,
    host: &impl Host,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    build: bool,
    gateway: bool,
    ui: &impl Ui,
) -> anyhow::Result<TeamImages> {
    let reporter = Reporter::new(Progress::Auto);
    let mut images = TeamImages {
        specs: specs
            .iter()
            .map(|(name, resolved)| (name.clone(), resolved.image_reference()))
            .collect(),
        gateway: gateway.then(|| format!("{GATEWAY_IMAGE}:latest")),
    };
    let found = match connected {
        Ok(engine) => {
            current_images(&engine, host, specs, network, build, &mut images, &reporter).await?
        }
        Err(error) if !build => {
            tracing::info!("no daemon for the exports' image names: {error}");
            false
        }
        Err(error) => return Err(error.into()),
    };
    reporter.clear();
    if !found {
        ui.note("note: some images are not built for their specs' current versions; they are referenced by their moving tags (`tfimg/<spec>:<tensorflow>`, `tfimg/gateway:latest`); `--build` builds them first");
    }
    Ok(images)
}

/// `images` with a daemon: whether every image is its spec's current build.
async fn current_images(
    engine: &impl Engine,
    host: &impl Host,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    build: bool,
    images: &mut TeamImages,
    reporter: &Reporter,
) -> anyhow::Result<bool> {
    let mut all = true;
    if images.gateway.is_some() {
        match crate::app::gateway::image(engine, network, !build, reporter).await? {
            Some(tag) => images.gateway = Some(tag),
            None => all = false,
        }
    }
    if build {
        images.specs = stories::images_for(engine, host, specs, network, reporter).await?;
        return Ok(all);
    }
    for (name, resolved) in specs {
        let options = BuildOptions {
            only_check: true,
            ..BuildOptions::default()
        };
        match build_spec(engine, host, resolved, network, &options, reporter).await {
            Ok(Some(built)) => {
                images.specs.insert(name.clone(), built.plan.keyed_tag);
            }
            _ => all = false,
        }
    }
    Ok(all)
}

/// Writes export files into `folder`: (name, bytes, mode) each.
pub fn write(
    host: &impl Host,
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
pub fn write_gateway(host: &impl Host, gateway: &ComposeGateway) -> anyhow::Result<()> {
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
