//! The launch's mount folders: every mount checked before anything exists (not above the
//! image's home or workdir, its source there or makeable), the missing folders made once
//! everything else is known good, and taken away again when the container never comes
//! into being.

use std::path::PathBuf;

use super::LaunchRequest;
use crate::host::prelude::{FileWrites, Files, Trust};
use crate::input::InputError;
use crate::notice::Notice;
use crate::plan::mounts;

/// Every mount: not above the image's home or workdir. A missing source is made (see
/// `make_mount_folders`).
pub(super) fn check_mounts(request: &LaunchRequest, home: &str) -> Result<(), InputError> {
    for (mount, text) in request.mount_plans() {
        mounts::check_not_above(&mount, text, home, &request.target.workdir)?;
    }
    Ok(())
}

/// A warning for each writable mount whose existing folder the container's user may not
/// write into (nothing is ever re-owned: the user decides).
pub(super) fn unwritable_mounts(host: &impl Trust, request: &LaunchRequest) -> Vec<Notice> {
    let Some(ids) = request.ids else {
        return Vec::new();
    };
    request
        .mount_plans()
        .into_iter()
        .filter(|(mount, _)| !mount.read_only)
        .filter_map(|(mount, text)| {
            let (owner, group, mode) = host.folder_access(&mount.source)?;
            (!crate::plan::user::may_write(ids, owner, group, mode))
                .then(|| crate::plan::user::unwritable_mount(text, ids, owner, group, mode))
        })
        .collect()
}

/// A warning for each writable mount that a container with root's ids (plain root's
/// default, `plan::user`) writes into while other accounts can enter it: the container
/// has no capability, but a file it owns may still be setuid, and there it would run as
/// root for anyone who reaches it (a bind mount cannot be made `nosuid` through the
/// Engine). Below a folder only root can enter (`/root`, a 0700 project folder) nothing
/// is said.
pub(super) fn open_to_other_accounts(
    host: &(impl Files + Trust),
    request: &LaunchRequest,
) -> Vec<Notice> {
    if !matches!(request.ids, Some((0, _))) {
        return Vec::new();
    }
    request
        .mount_plans()
        .into_iter()
        .filter(|(mount, _)| !mount.read_only)
        .filter_map(|(mount, text)| {
            let existing = mount.source.ancestors().find(|path| host.exists(path))?;
            let (_, closed) = host.closed_folders(existing).ok()?;
            closed
                .is_empty()
                .then(|| crate::plan::user::open_mount(text, &mount.source))
        })
        .collect()
}

/// Makes a request's missing mount folders for good (an export's, which Compose would
/// otherwise make as root); what to tell the user.
pub fn make_folders(
    host: &(impl Files + FileWrites),
    request: &LaunchRequest,
) -> anyhow::Result<Vec<Notice>> {
    let mut notes = Vec::new();
    make_mount_folders(host, request, &mut notes)?.keep();
    Ok(notes)
}

/// Makes the request's missing mount folders, with their missing parents, as `docker run
/// -v` does: always a folder, whatever its name looks like (owned by the user the
/// container runs as), and each one said (`note: created ./notbooks (empty)`), so a
/// mistyped name is seen at once.
pub(super) fn make_mount_folders<'a, H: Files + FileWrites>(
    host: &'a H,
    request: &LaunchRequest,
    notes: &mut Vec<Notice>,
) -> anyhow::Result<MadeFolders<'a, H>> {
    let mut made = MadeFolders {
        host,
        folders: Vec::new(),
    };
    for (mount, text) in request.mount_plans() {
        if host.exists(&mount.source) {
            continue;
        }
        let warning = host
            .make_folder(&mount.source, true, request.ids)
            .map_err(|error| {
                InputError::new(
                    format!(
                        "`--mount {text}`: cannot create `{}`: {error}",
                        mount.source.display()
                    ),
                    "create the folder yourself, or mount another one",
                )
            })?;
        notes.push(Notice::note(format!(
            "created {} (empty)",
            mounts::source_text(text)
        )));
        notes.extend(warning);
        made.folders.push(mount.source);
    }
    Ok(made)
}

/// Mount folders a launch made. Dropped without `keep` (a failed create or start), the
/// ones still empty are removed: a launch that never started leaves nothing behind.
pub(super) struct MadeFolders<'a, H: Files + FileWrites> {
    host: &'a H,
    folders: Vec<PathBuf>,
}

impl<H: Files + FileWrites> MadeFolders<'_, H> {
    pub(super) fn keep(mut self) {
        self.folders.clear();
    }
}

impl<H: Files + FileWrites> Drop for MadeFolders<'_, H> {
    fn drop(&mut self) {
        for folder in &self.folders {
            self.host.remove_empty_folder(folder);
        }
    }
}
