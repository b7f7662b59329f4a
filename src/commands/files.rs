//! `tfimg pull-files NAME DST [--from PATH]`, and `run`'s `--sync`, `--sync-back` and
//! `--volume` checked before anything exists.

use std::path::Path;
use std::process::ExitCode;

use crate::app::files;
use crate::app::settings::Settings;
use crate::cli::{FilesArgs, PullFilesArgs};
use crate::host::Host;
use crate::input::InputError;
use crate::plan::cache::VolumePlan;
use crate::plan::sync::{self, SyncRequest};
use crate::plan::volumes;

pub fn pull_files(
    args: &PullFilesArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        let container = crate::app::containers::find(&engine, &args.name).await?;
        let lines =
            files::pull_files(session, &container, &args.destination, args.from.as_deref()).await?;
        lines.iter().for_each(crate::output::notice);
        Ok(ExitCode::SUCCESS)
    })
}

/// `run`'s syncs and volumes, checked: every source exists, every destination is one a
/// container can take, `--sync-back` has syncs and a foreground run.
pub(super) fn resolve(
    host: &impl Host,
    args: &FilesArgs,
    detached: bool,
    no_start: bool,
    current_dir: &Path,
) -> Result<(Vec<SyncRequest>, Vec<VolumePlan>), InputError> {
    let mut syncs = Vec::new();
    for text in &args.syncs {
        let sync = sync::parse_request(text, current_dir)?;
        if !host.exists(&sync.source) {
            return Err(sync::missing_source(text, &sync.source));
        }
        syncs.push(sync);
    }
    sync::check_sync_back(args.sync_back, syncs.len(), detached, no_start)?;
    let volumes = args
        .volumes
        .iter()
        .map(|text| volumes::parse(text))
        .collect::<Result<_, _>>()?;
    Ok((syncs, volumes))
}
