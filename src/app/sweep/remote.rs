//! A sweep on an engine of another host (`ssh://`): a trial's folder cannot be mounted
//! there, so the launcher copies it in (its `params.json`) before the trial starts; every
//! few seconds each running trial's `metrics.jsonl` comes back, so the live view and
//! `tfimg sweep status` follow it; when it ends, its whole `TFIMG_TRIAL_DIR` comes back
//! into its folder before its container goes (new and changed files only, nothing local
//! deleted: `--sync-back`'s rules). The sweep file's `mounts:` name folders of this
//! machine and are refused before anything is built.

use std::path::Path;
use std::time::Duration;

use super::{Note, Runner};
use crate::app::session::Session;
use crate::app::{files, launch};
use crate::engine::prelude::{ContainerIo, Daemon, Tunnels};
use crate::engine::Engine;
use crate::host::prelude::Confined;
use crate::host::Host;
use crate::spec::SpecError;
use crate::sweep::trials::METRICS_FILE;
use crate::sweep::{Sweep, TRIAL_DIR};

/// How often running trials' metrics are fetched from a remote engine.
pub(super) const METRICS_EVERY: Duration = Duration::from_secs(3);

/// The sweep file's `mounts:` on an engine of another host: refused at the first one's
/// place, before anything is built or created.
pub fn check_engine(engine: &(impl Tunnels + Daemon), sweep: &Sweep) -> Result<(), SpecError> {
    let folders = sweep.mounts.iter().map(|text| format!("`mounts: {text}`"));
    launch::refuse_local_folders(engine.remote_endpoint(), folders).map_err(|error| {
        SpecError::new(
            sweep.mount_locations.first().cloned(),
            error.message,
            error.hint,
        )
    })
}

impl<E: Engine, H: Host> Runner<'_, E, H> {
    /// On a remote engine, at most every `METRICS_EVERY`: each running trial's
    /// `metrics.jsonl` into its folder (a trial that wrote none yet is skipped).
    pub(super) async fn fetch_metrics(&mut self) {
        if !self.remote {
            return;
        }
        let now = self.now_ms();
        if now.saturating_sub(self.metrics_fetched_ms) < METRICS_EVERY.as_millis() as u64 {
            return;
        }
        self.metrics_fetched_ms = now;
        let path = format!("{TRIAL_DIR}/{METRICS_FILE}");
        let session = self.session;
        let fetches = self
            .watched
            .iter()
            .filter(|(_, watched)| !watched.stopping)
            .map(|(trial, watched)| {
                let dir = self.trial_dir(*trial);
                let id = watched.container_id.clone();
                let path = &path;
                async move {
                    let _ = files::pull(session, &id, path, &dir).await;
                }
            });
        futures_util::future::join_all(fetches).await;
    }

    /// On a remote engine: the ended trial's whole `TFIMG_TRIAL_DIR` into its folder,
    /// before its container `id` is removed; what went wrong is said, not fatal.
    pub(super) async fn bring_back(&self, trial: usize, id: &str) {
        if !self.remote {
            return;
        }
        let dir = self.trial_dir(trial);
        let trial_id = &self.trials[trial].id;
        for note in bring_back_folder(self.session, id, &dir, trial_id).await {
            (self.notify)(Note::Said(note));
        }
    }
}

/// The whole `TFIMG_TRIAL_DIR` of container `id` into the trial's folder `dir`; what did
/// not come back, one note each.
pub(super) async fn bring_back_folder(
    session: Session<'_, impl ContainerIo, impl Confined>,
    id: &str,
    dir: &Path,
    trial: &str,
) -> Vec<String> {
    let said = match files::pull(session, id, TRIAL_DIR, dir).await {
        Ok(Some(summary)) => summary.notes,
        Ok(None) => vec![format!("`{TRIAL_DIR}` was gone from the container")],
        Err(error) => vec![format!("{error:#}")],
    };
    said.into_iter()
        .map(|note| format!("trial `{trial}`: its folder did not all come back: {note}"))
        .collect()
}
