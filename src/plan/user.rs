//! Trust boundary **host user → container**: whose uid and gid a container's processes
//! run as, and which capabilities they keep. The one place that decides it, for `run`,
//! `up`, `sweep`, `serve` and the exports alike.
//!
//! On one side is the person running tfimg, often as root (`sudo tfimg`, or a root shell
//! on a lab server); on the other, the code in the container, which may be a student's
//! notebook, a trial someone else wrote, or a model server facing the network. That code
//! must never hold root on the host's files: a process with uid 0 on a mount can plant a
//! setuid-root shell there. So no container process runs as uid 0 or keeps a capability
//! unless the user asked (`--user root`, or `--uid 0`): tfimg running as a user maps the
//! container's user to that user; under sudo, to the invoking user (`SUDO_UID`,
//! `SUDO_GID`); as plain root, to the image's own user (`IMAGE_UID`), with a note saying
//! whose ids files on mounts will get. The entrypoint starts as root only to take those
//! ids, with the few capabilities that needs, and drops them before anything of the
//! user's runs (`setpriv`: CapEff 0); `no-new-privileges` keeps setuid files from
//! giving any back.

use super::LaunchInput;
use crate::render::dockerfile::IMAGE_UID;
use crate::spec::Service;

/// Docker's default capability set (moby's `oci/caps` defaults); tfimg never adds to it.
const DOCKER_DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "NET_RAW",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// Capabilities the entrypoint needs for its first instant as root (re-owning the user,
/// then dropping to it); the rest of Docker's defaults are dropped, nothing is added.
const REMAP_CAPABILITIES: &[&str] = &["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"];

/// Whether a process with `ids` may write into a folder owned by `owner:group` with
/// permission bits `mode` (its own supplementary groups are not counted: the container's
/// user has none of the host's).
pub fn may_write(ids: (u32, u32), owner: u32, group: u32, mode: u32) -> bool {
    let (uid, gid) = ids;
    let bits = if uid == 0 {
        return true;
    } else if uid == owner {
        mode >> 6
    } else if gid == group {
        mode >> 3
    } else {
        mode
    };
    bits & 0o3 == 0o3
}

/// The warning for a writable mount the container's user may not write into (a folder
/// root made, mounted by a root host user whose containers run as the image's user).
pub fn unwritable_mount(text: &str, ids: (u32, u32), owner: u32, group: u32, mode: u32) -> String {
    let (uid, gid) = ids;
    format!(
        "warning: `--mount {text}`: the folder belongs to {owner}:{group} (mode {mode:o}) and the container runs as {uid}:{gid}, so it cannot write there; `chown -R {uid}:{gid}` it, run tfimg as the folder's owner (or with sudo), or mount it `:ro`"
    )
}

/// Whose ids a container takes, and the note to show once about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerIds {
    pub ids: (u32, u32),
    pub note: Option<String>,
}

/// The ids containers run as when tfimg runs as `process` (its real uid and gid; `None`
/// when unknown) with `sudo` (the `SUDO_UID` and `SUDO_GID` it was started with).
pub fn container_ids(
    process: Option<(u32, u32)>,
    sudo: (Option<&str>, Option<&str>),
) -> ContainerIds {
    let plain = |ids| ContainerIds { ids, note: None };
    match process {
        Some((uid, gid)) if uid != 0 => plain((uid, gid)),
        None => plain((IMAGE_UID, IMAGE_UID)),
        Some(_) => {
            let id = |text: Option<&str>| {
                text.and_then(|text| text.parse::<u32>().ok())
                    .filter(|&id| id != 0 && id <= i32::MAX as u32)
            };
            match (id(sudo.0), id(sudo.1)) {
                (Some(uid), gid) => plain((uid, gid.unwrap_or(uid))),
                (None, _) => ContainerIds {
                    ids: (IMAGE_UID, IMAGE_UID),
                    note: Some(format!(
                        "note: tfimg runs as root, not through sudo: containers run as their image's user ({IMAGE_UID}:{IMAGE_UID}), never as root, and files they write on mounts belong to {IMAGE_UID}:{IMAGE_UID}; run tfimg as yourself (or with sudo) to have them written as you, or pass `--user root` to run a container as root"
                    )),
                },
            }
        }
    }
}

/// The capabilities to drop and the user to start as. Capabilities are only ever
/// dropped (`cap_add` stays empty).
pub(super) fn user_and_capabilities(input: &LaunchInput) -> (Vec<String>, Option<String>) {
    match input.ids {
        // Not tfimg's entrypoint: nothing would drop root, so start as the user directly.
        Some((uid, gid)) if !input.tfimg_image => {
            (vec!["ALL".to_string()], Some(format!("{uid}:{gid}")))
        }
        // The entrypoint starts as root only to take the host ids, then drops root.
        Some((uid, _)) => {
            let mut kept = REMAP_CAPABILITIES.to_vec();
            // Asked for uid 0 (`--uid 0`): sshd then runs as root and needs its privilege
            // separation (a chroot, signals to its sshd child) and, for a terminal, the
            // audit record of the login (without AUDIT_WRITE a PTY login is closed).
            if uid == 0 && input.service == Service::Ssh && input.command.is_empty() {
                kept.extend(["AUDIT_WRITE", "KILL", "SYS_CHROOT"]);
            }
            let dropped = DOCKER_DEFAULT_CAPABILITIES
                .iter()
                .filter(|cap| !kept.contains(cap))
                .map(|cap| cap.to_string())
                .collect();
            (dropped, Some("root".to_string()))
        }
        // `--user root`: the user's explicit choice; Docker's default capabilities.
        None => (Vec::new(), Some("root".to_string())),
    }
}

#[cfg(test)]
mod tests;
