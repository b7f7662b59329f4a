//! Code and data without bind mounts: `--sync SRC[:DST]` copies a local folder or file
//! into the container before it starts (DST defaulting to `<workdir>/<name of SRC>`, as
//! a mount's does), `--sync-back` copies the destinations back after the run, and the
//! destinations of syncs, volumes and mounts may not overlap. A mount names a path on
//! this machine, so an engine on another host refuses it (`folder_on_remote`).
//! Pure: the launcher walks the sources and copies.

use std::path::{Path, PathBuf};

use crate::input::source::printable;
use crate::input::InputError;
use crate::notice::Notice;
use crate::plan::mounts::{is_system_folder, source_and_destination, valid_destination};

/// Above this, a sync says that large data belongs in a volume.
pub const LARGE_SYNC_BYTES: u64 = 512 * 1024 * 1024;

/// A `--sync` as typed, its source resolved; the destination may wait for the image's
/// workdir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRequest {
    /// What the user wrote, for messages.
    pub text: String,
    pub source: PathBuf,
    /// `None`: under the workdir, by the source's name.
    pub target: Option<String>,
    /// Every file goes, whatever `.gitignore` or `.dockerignore` say (see `SyncPlan`).
    pub whole: bool,
}

/// One copy into the container (and, with `--sync-back`, out of it again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncPlan {
    pub text: String,
    pub source: PathBuf,
    /// Absolute, without a trailing `/`, never `/` itself.
    pub target: String,
    /// Every file goes, whatever `.gitignore` or `.dockerignore` say (a sweep trial's
    /// folder, which tfimg wrote: a project's `*.json` must not hold back `params.json`).
    pub whole: bool,
}

impl SyncRequest {
    /// The sync once the image's workdir is known.
    pub fn at(&self, workdir: &str) -> SyncPlan {
        let target = self
            .target
            .clone()
            .unwrap_or_else(|| super::mounts::default_target(&self.source, workdir));
        SyncPlan {
            text: self.text.clone(),
            source: self.source.clone(),
            target,
            whole: self.whole,
        }
    }
}

impl SyncPlan {
    /// The folder the copy lands in: `/tf` for `/tf/code`.
    pub fn folder(&self) -> String {
        folder_of(&self.target)
    }

    /// The name the source takes there: `code` for `/tf/code`.
    pub fn name(&self) -> &str {
        name_of(&self.target)
    }

    /// SRC as the user wrote it (`./code`).
    pub fn source_text(&self) -> &str {
        super::mounts::source_text(&self.text)
    }
}

/// The folder a destination is in: `/tf` for `/tf/code`, `/` for `/data`.
pub fn folder_of(target: &str) -> String {
    match target.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) | None => "/".to_string(),
        Some((folder, _)) => folder.to_string(),
    }
}

/// A destination's last part: `code` for `/tf/code`.
pub fn name_of(target: &str) -> &str {
    target
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default()
}

/// Parses one `--sync` value against the current directory; the workdir comes later.
pub fn parse_request(text: &str, current_dir: &Path) -> Result<SyncRequest, InputError> {
    let bad = |detail: String| {
        InputError::new(
            printable(&format!("`--sync {text}`: {detail}")),
            "write `--sync SRC[:DST]`, such as `--sync ./code` or `--sync ./data:/tf/data`",
        )
    };
    let parts: Vec<&str> = text.split(':').collect();
    let (source, target) = source_and_destination(&parts, current_dir, "copy", bad)?;
    let target = target
        .map(|target| check_destination(text, target, "--sync"))
        .transpose()?;
    Ok(SyncRequest {
        text: text.to_string(),
        source,
        target,
        whole: false,
    })
}

/// A destination inside the container for `flag` (`--sync`, `--volume`): absolute, no
/// `..`, not a system folder; returned without a trailing `/`.
pub(crate) fn check_destination(
    text: &str,
    target: &str,
    flag: &str,
) -> Result<String, InputError> {
    if !valid_destination(target) {
        return Err(InputError::new(
            printable(&format!(
                "`{flag} {text}`: the destination `{target}` must be an absolute path inside the container"
            )),
            format!("give a folder such as `/tf/data`: `{flag} {}`", example(flag)),
        ));
    }
    if is_system_folder(target) {
        return Err(InputError::new(
            printable(&format!(
                "`{flag} {text}`: the destination `{target}` is a system folder of the image"
            )),
            format!(
                "use the workdir or a folder of its own, such as `{flag} {}`",
                example(flag)
            ),
        ));
    }
    Ok(target.trim_end_matches('/').to_string())
}

fn example(flag: &str) -> &'static str {
    if flag == "--volume" {
        "data:/tf/data"
    } else {
        "./data:/tf/data"
    }
}

/// A `--sync` source that does not exist on this machine.
pub fn missing_source(text: &str, source: &Path) -> InputError {
    InputError::new(
        printable(&format!(
            "`--sync {text}`: `{}` does not exist",
            source.display()
        ))
        .into_owned(),
        "give a folder or file that exists; it is copied into the container before it starts",
    )
}

/// `--sync-back` where nothing would be copied back (no `--sync`), or no foreground run
/// to wait for (`-d`, `--no-start`).
pub fn check_sync_back(
    sync_back: bool,
    syncs: usize,
    detached: bool,
    no_start: bool,
) -> Result<(), InputError> {
    if !sync_back {
        return Ok(());
    }
    if syncs == 0 {
        return Err(InputError::new(
            "`--sync-back` has nothing to copy back: there is no `--sync`",
            "add `--sync SRC[:DST]` for each folder to copy in and back, such as `--sync ./code`",
        ));
    }
    if detached || no_start {
        let flag = if detached { "-d" } else { "--no-start" };
        return Err(InputError::new(
            format!("`--sync-back` needs a foreground run, not `{flag}`"),
            "fetch a detached run's files with `tfimg pull-files NAME DST` once it is done",
        ));
    }
    Ok(())
}

/// A sync whose destination's folder is not in the image.
pub fn missing_folder(sync: &SyncPlan) -> InputError {
    InputError::new(
        printable(&format!(
            "`--sync {}`: the folder `{}` does not exist in the image",
            sync.text,
            sync.folder()
        ))
        .into_owned(),
        format!(
            "choose a DST whose folder exists in the image, such as `/tf/{}` (the workdir)",
            sync.name()
        ),
    )
}

/// Refuses destinations that overlap (one on or inside another), where a sync or a volume
/// is one of them: a copy into a mount would write into the host's folder, and a copy or
/// a volume inside another volume depends on the order Docker mounts them in. `places`
/// are (the flag as typed, its destination, whether it is a mount).
pub fn check_overlaps(places: &[(String, String, bool)]) -> Result<(), InputError> {
    for (index, (first, first_target, first_mount)) in places.iter().enumerate() {
        for (second, second_target, second_mount) in &places[index + 1..] {
            if *first_mount && *second_mount {
                continue;
            }
            let (outer, inner) = if first_target.len() <= second_target.len() {
                (first_target, second_target)
            } else {
                (second_target, first_target)
            };
            if inside(outer, inner) {
                return Err(InputError::new(
                    printable(&format!("`{first}` and `{second}` overlap at `{inner}`"))
                        .into_owned(),
                    "give each its own folder in the container, such as `/tf/code` and `/tf/data`",
                ));
            }
        }
    }
    Ok(())
}

/// Whether `inner` is `outer` or lies under it.
pub fn inside(outer: &str, inner: &str) -> bool {
    let outer = outer.trim_end_matches('/');
    inner == outer || inner.starts_with(&format!("{outer}/")) || outer.is_empty()
}

/// A folder of this machine (`what`: as its user wrote it, and where) against an engine
/// on another host (`endpoint`).
pub fn folder_on_remote(what: &str, endpoint: &str) -> InputError {
    InputError::new(
        printable(&format!(
            "{what} names a folder on this machine, but the engine `{endpoint}` runs on another host"
        ))
        .into_owned(),
        "only copies (`--sync`, a sweep trial's own folder) and volumes (`--volume data:/tf/data`) reach an engine on another host; run tfimg on that host itself to use its folders",
    )
}

/// A `tcp://` engine that is not this machine's loopback may run on another host, where
/// mounts would name that host's folders: what to tell the user (an ssh engine refuses).
pub fn mounts_on_tcp_note(endpoint: &str) -> Option<Notice> {
    let rest = endpoint.strip_prefix("tcp://")?;
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(bracketed),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    let local = host == "localhost" || host == "::1" || host.starts_with("127.");
    (!local).then(|| {
        Notice::note(printable(&format!(
            "the engine `{endpoint}` may run on another host: mounts name folders there, not on this machine (use `--sync` to copy local folders in)"
        ))
        .into_owned())
    })
}

#[cfg(test)]
mod tests;
