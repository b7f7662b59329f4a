//! The launch's code and data: every `--sync` source walked and every destination
//! checked before anything exists (no volume above the image's home or workdir, no sync
//! or volume overlapping another place); once the container is created, and before it
//! starts, the sources are copied in and a volume Docker has just made is given to the
//! run's user (its root would otherwise be root's whenever the image has no folder there).

use super::LaunchRequest;
use crate::app::bundle::human_size;
use crate::app::session::Session;
use crate::engine::prelude::ContainerIo;
use crate::host::prelude::Confined;
use crate::host::SyncArchive;
use crate::input::source::printable;
use crate::input::InputError;
use crate::notice::Notice;
use crate::plan::cache::VolumePlan;
use crate::plan::mounts;
use crate::plan::sync::{self, SyncPlan};

/// What the launch copies into its container, ready.
#[derive(Debug, Clone, Default)]
pub(super) struct Files {
    archives: Vec<(SyncPlan, SyncArchive)>,
    /// Volumes Docker makes for this container, their roots to hand to `owner`.
    new_volumes: Vec<VolumePlan>,
    owner: (u32, u32),
    make_sync_parents: bool,
}

/// Checks the destinations, walks the sources (what to tell the user goes to `notes`)
/// and asks which volumes are new. Creates nothing.
pub(super) async fn prepare_files(
    session: Session<'_, impl ContainerIo, impl Confined>,
    request: &LaunchRequest,
    home: &str,
    notes: &mut Vec<Notice>,
) -> anyhow::Result<Files> {
    let Session { engine, host, .. } = session;
    check_places(request, home)?;
    let owner = request.ids.unwrap_or((0, 0));
    let mut archives = Vec::new();
    for sync in request.sync_plans() {
        let archive = host.sync_archive(&sync, owner)?;
        notes.push(Notice::status(format!(
            "syncing `{}` → `{}` ({})",
            printable(sync.source_text()),
            sync.target,
            describe(archive.files, archive.bytes)
        )));
        if archive.bytes > sync::LARGE_SYNC_BYTES {
            notes.push(Notice::note("large data belongs in a volume (`--volume data:/tf/data`): copied in once, kept between runs"));
        }
        archives.push((sync, archive));
    }
    let mut new_volumes = Vec::new();
    // Root's own volumes need nothing; a read-only one cannot be given away.
    if request.ids.is_some() {
        for volume in request.volumes.iter().filter(|volume| !volume.read_only) {
            if !engine.volume_exists(&volume.name).await? {
                new_volumes.push(volume.clone());
            }
        }
    }
    Ok(Files {
        archives,
        new_volumes,
        owner,
        make_sync_parents: request.make_sync_parents,
    })
}

/// `12 files, 3.4 MB`.
fn describe(files: usize, bytes: u64) -> String {
    let noun = if files == 1 { "file" } else { "files" };
    format!("{files} {noun}, {}", human_size(bytes))
}

/// No volume above the image's home or workdir (it would hide them), and no sync or
/// volume on, in or over another destination.
fn check_places(request: &LaunchRequest, home: &str) -> Result<(), InputError> {
    let workdir = &request.target.workdir;
    for volume in &request.volumes {
        if let Some((what, path)) = mounts::hidden_folder(&volume.target, home, workdir) {
            return Err(InputError::new(
                printable(&format!(
                    "`--volume {}`: the destination `{}` would hide the image's {what} `{path}`",
                    volume_text(volume),
                    volume.target
                ))
                .into_owned(),
                format!(
                    "mount it at `{path}` itself or beside it, such as `--volume {}:/data`",
                    volume.name
                ),
            ));
        }
    }
    let mounts = request
        .mount_plans()
        .into_iter()
        .map(|(mount, text)| (format!("--mount {text}"), mount.target, true));
    let syncs = request
        .sync_plans()
        .into_iter()
        .map(|sync| (format!("--sync {}", sync.text), sync.target, false));
    let volumes = request.volumes.iter().map(|volume| {
        let text = format!("--volume {}", volume_text(volume));
        (text, volume.target.clone(), false)
    });
    let places: Vec<_> = mounts.chain(syncs).chain(volumes).collect();
    sync::check_overlaps(&places)
}

fn volume_text(volume: &VolumePlan) -> String {
    let option = if volume.read_only { ":ro" } else { "" };
    format!("{}:{}{option}", volume.name, volume.target)
}

/// Copies everything into the created container `id`: new volumes' roots first (a sync
/// may land in one), then each sync. A sync whose folder the image lacks is bad input.
pub(super) async fn copy_in(
    engine: &impl ContainerIo,
    files: &Files,
    id: &str,
) -> anyhow::Result<()> {
    for volume in &files.new_volumes {
        let root = SyncArchive::folder(sync::name_of(&volume.target), files.owner);
        let folder = sync::folder_of(&volume.target);
        engine.upload(id, &folder, root.into_stream()).await?;
    }
    for (sync, archive) in &files.archives {
        let folder = sync.folder();
        let mut copied = engine
            .upload(id, &folder, archive.clone().into_stream())
            .await?;
        if !copied && files.make_sync_parents {
            make_folder(engine, id, &folder).await?;
            copied = engine
                .upload(id, &folder, archive.clone().into_stream())
                .await?;
        }
        if !copied {
            return Err(sync::missing_folder(sync).into());
        }
    }
    Ok(())
}

/// Makes `folder` (absolute) in the container `id`, root's, from the deepest folder
/// above it that exists (an empty upload asks): folders the image has keep their owner.
async fn make_folder(engine: &impl ContainerIo, id: &str, folder: &str) -> anyhow::Result<()> {
    let parts: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
    let at = |depth: usize| format!("/{}", parts[..depth].join("/"));
    let mut depth = parts.len();
    while depth > 0 {
        let probe = SyncArchive::folders(&[], (0, 0)).into_stream();
        if engine.upload(id, &at(depth), probe).await? {
            break;
        }
        depth -= 1;
    }
    let names: Vec<String> = (depth + 1..=parts.len())
        .map(|end| parts[depth..end].join("/"))
        .collect();
    if !names.is_empty() {
        let archive = SyncArchive::folders(&names, (0, 0)).into_stream();
        engine.upload(id, &at(depth), archive).await?;
    }
    Ok(())
}
