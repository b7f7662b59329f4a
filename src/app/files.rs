//! Files out of containers, to this machine: `--sync-back` after a foreground run (each
//! sync's destination into its source) and `tfimg pull-files` (a path of a running or
//! stopped container into a local folder). The engine hands over a tar of the path; the
//! host unpacks it as it arrives (see `host::archive::unpack`: new and changed files
//! only, written whole, nothing deleted, nothing outside the folder).

use std::path::Path;

use crate::app::launch::Launched;
use crate::app::session::Session;
use crate::engine::prelude::{ContainerIo, Images};
use crate::engine::ContainerFacts;
use crate::host::prelude::Confined;
use crate::host::{HostError, UnpackSummary};
use crate::input::InputError;
use crate::labels;
use crate::notice::Notice;

/// Copies `path` of the container `id` into `into`; `None` when the container has
/// nothing at `path`.
pub async fn pull(
    session: Session<'_, impl ContainerIo, impl Confined>,
    id: &str,
    path: &str,
    into: &Path,
) -> anyhow::Result<Option<UnpackSummary>> {
    let Session { engine, host, .. } = session;
    let mut unpacker = host.unpacker(into);
    let found = engine
        .download(id, path, |chunk| unpacker.feed(chunk))
        .await;
    // The unpacking ends either way; the engine's failure is the one to report first.
    let unpacked = unpacker.finish();
    if !found? {
        return Ok(None);
    }
    let summary = unpacked.map_err(|error| HostError {
        message: format!("cannot write `{path}` into `{}`: {error}", into.display()),
        hint: "check that the folder is yours and the disk has room".to_string(),
    })?;
    Ok(Some(summary))
}

/// `--sync-back`: every sync's destination into its source; what to tell the user.
pub async fn sync_back(
    session: Session<'_, impl ContainerIo, impl Confined>,
    launched: &Launched,
) -> anyhow::Result<Vec<Notice>> {
    let mut lines = Vec::new();
    for sync in &launched.syncs {
        match pull(session, &launched.id, &sync.target, &sync.source).await? {
            None => lines.push(Notice::note(format!(
                "`{}` is no longer in the container: nothing to copy back into `{}`",
                sync.target,
                sync.source_text()
            ))),
            Some(summary) => {
                lines.push(Notice::status(format!(
                    "synced back `{}` → `{}` ({})",
                    sync.target,
                    sync.source_text(),
                    describe(&summary)
                )));
                lines.extend(summary.notes.iter().cloned().map(Notice::Note));
            }
        }
    }
    Ok(lines)
}

/// `tfimg pull-files NAME DST [--from PATH]`: PATH (by default the container's first
/// `--sync` destination, else its image's workdir) into `into`; what to tell the user.
pub async fn pull_files(
    session: Session<'_, impl Images + ContainerIo, impl Confined>,
    container: &ContainerFacts,
    into: &Path,
    from: Option<&str>,
) -> anyhow::Result<Vec<Notice>> {
    let Session { engine, .. } = session;
    let name = &container.name;
    let path = match from {
        Some(path) if path.starts_with('/') => path.trim_end_matches('/').to_string(),
        Some(path) => {
            return Err(InputError::new(
                format!("`--from {path}`: give an absolute path in the container"),
                "such as `--from /tf/out`",
            )
            .into())
        }
        None => default_path(engine, container).await?,
    };
    let path = if path.is_empty() {
        "/".to_string()
    } else {
        path
    };
    let Some(summary) = pull(session, &container.id, &path, into).await? else {
        return Err(InputError::new(
            format!("`{path}` does not exist in `{name}`"),
            format!("give the path to copy with `--from PATH`; while `{name}` runs, `tfimg exec {name} -- ls {path}/..` shows what is there"),
        )
        .into());
    };
    let mut lines = vec![Notice::status(format!(
        "copied `{path}` from `{name}` → `{}` ({})",
        into.display(),
        describe(&summary)
    ))];
    lines.extend(summary.notes.iter().cloned().map(Notice::Note));
    Ok(lines)
}

/// Where `pull-files` copies from when not told: the first sync destination, else the
/// workdir of the container's image.
async fn default_path(engine: &impl Images, container: &ContainerFacts) -> anyhow::Result<String> {
    if let Some(first) = container
        .labels
        .get(labels::SYNC)
        .and_then(|text| labels::decode_syncs(text).into_iter().next())
    {
        return Ok(first);
    }
    match engine.image(&container.image).await? {
        Some(image) if !image.working_dir.is_empty() => Ok(image.working_dir),
        _ => Err(InputError::new(
            format!("cannot tell which folder of `{}` to copy", container.name),
            "give it with `--from PATH`, such as `--from /tf/out`",
        )
        .into()),
    }
}

/// `3 new, 1 changed`, or that nothing was.
pub fn describe(summary: &UnpackSummary) -> String {
    let mut parts = Vec::new();
    if summary.new > 0 {
        parts.push(format!("{} new", summary.new));
    }
    if summary.changed > 0 {
        parts.push(format!("{} changed", summary.changed));
    }
    if parts.is_empty() {
        return "nothing new or changed".to_string();
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests;
