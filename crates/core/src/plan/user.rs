//! Trust boundary **host user → container**: whose uid and gid a container's processes
//! run as, and which capabilities they keep. The one place that decides it, for `run`,
//! `up`, `sweep`, `serve` and the exports alike.
//!
//! On one side is the person running tfimg, often as root (`sudo tfimg`, or a root shell
//! on a rented GPU box); on the other, the code in the container, which may be a student's
//! notebook, a trial someone else wrote, or a model server facing the network. That code
//! never holds a capability unless the user asked (`--user root`): tfimg running as a user
//! maps the container's user to that user; under sudo, to the invoking user (`SUDO_UID`,
//! `SUDO_GID`); as plain root, to root's own ids (0:0) with no capability at all, so a
//! folder root made and mounts is written as root's files (what root expects of its own
//! folders) while the container can do nothing root's capabilities allow: it may only
//! touch what uid 0 owns, as any other uid may touch what it owns. The entrypoint starts
//! as root only to take those ids, with the few capabilities that needs, and drops them
//! before anything of the user's runs (`setpriv`: CapEff 0; at uid 0 it empties the
//! bounding set too, so nothing comes back at the next exec); `no-new-privileges` keeps
//! setuid files from giving any back. Two exceptions keep the image's user (1000:1000) for
//! plain root: an SSH service (sshd running as uid 0 needs capabilities for its privilege
//! separation, and a root login would get them back), and the unattended workloads whose
//! folders tfimg makes for them or that write none (a sweep's trials, which may be someone
//! else's code, and a model server, which faces the network).

use super::LaunchRequest;
use crate::notice::Notice;
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

/// Taking uid 0 keeps the process's capabilities, so the entrypoint empties its bounding
/// set before it hands over (`setpriv --bounding-set=-all`), which needs this one too.
const BOUNDING_CAPABILITY: &str = "SETPCAP";

/// Whether a process with `ids` may write into a folder owned by `owner:group` with
/// permission bits `mode` (its own supplementary groups are not counted: the container's
/// user has none of the host's). Uid 0 is no exception: the container keeps no capability,
/// so root's ids pass only where the bits let them.
pub fn may_write(ids: (u32, u32), owner: u32, group: u32, mode: u32) -> bool {
    let (uid, gid) = ids;
    let bits = if uid == owner {
        mode >> 6
    } else if gid == group {
        mode >> 3
    } else {
        mode
    };
    bits & 0o3 == 0o3
}

/// The warning for a writable mount the container's user may not write into (another
/// user's folder, or a folder of root's mounted into an SSH service started by root).
pub fn unwritable_mount(text: &str, ids: (u32, u32), owner: u32, group: u32, mode: u32) -> Notice {
    let (uid, gid) = ids;
    Notice::warning(format!(
        "`--mount {text}`: the folder belongs to {owner}:{group} (mode {mode:o}) and the container runs as {uid}:{gid}, so it cannot write there; `chown -R {uid}:{gid}` it, run tfimg as the folder's owner (or with sudo), or mount it `:ro`"
    ))
}

/// The warning for a writable mount written with root's ids that other accounts can enter
/// (`app::launch::folders::open_to_other_accounts`).
pub fn open_mount(text: &str, source: &std::path::Path) -> Notice {
    Notice::warning(format!(
        "`--mount {text}`: the container writes there as root (0:0, without capabilities) and other accounts can enter the folder, where a setuid file it leaves would run as root for them; close it (`chmod go-rwx {}`), run tfimg as yourself (or with sudo), or mount it `:ro`",
        source.display()
    ))
}

/// The ids containers run as when tfimg runs as `process` (its real uid and gid; `None`
/// when unknown) with `sudo` (the `SUDO_UID` and `SUDO_GID` it was started with): the
/// user's own, the invoking user's under sudo, root's own (0:0, without capabilities) as
/// plain root. Nothing to say about it: files on mounts are the user's, as outside.
pub fn container_ids(
    process: Option<(u32, u32)>,
    sudo: (Option<&str>, Option<&str>),
) -> (u32, u32) {
    match process {
        Some((uid, gid)) if uid != 0 => (uid, gid),
        None => (IMAGE_UID, IMAGE_UID),
        Some(_) => {
            let id = |text: Option<&str>| {
                text.and_then(|text| text.parse::<u32>().ok())
                    .filter(|&id| id != 0 && id <= i32::MAX as u32)
            };
            match (id(sudo.0), id(sudo.1)) {
                (Some(uid), gid) => (uid, gid.unwrap_or(uid)),
                (None, _) => (0, 0),
            }
        }
    }
}

/// The ids an SSH service runs as: sshd running as uid 0 needs capabilities (its privilege
/// separation chroots and changes uid, and a root login would hold them again), so with
/// root's ids (`--uid 0`, or plain root's default) it takes the image's user instead and
/// keeps the promise of no capability. `--user root` (`None`) is root with Docker's
/// defaults, as asked.
pub fn for_service(
    ids: Option<(u32, u32)>,
    service: Service,
    command_given: bool,
) -> Option<(u32, u32)> {
    match ids {
        Some((0, _)) if service == Service::Ssh && !command_given => Some((IMAGE_UID, IMAGE_UID)),
        other => other,
    }
}

/// The ids of a workload whose folders on this machine tfimg makes for it or that writes
/// none (a sweep's trials, a model server): root's ids would buy it nothing, and a trial
/// someone else wrote could leave a setuid-root file in its folder, so as plain root it
/// keeps the image's user.
pub fn unattended(ids: (u32, u32)) -> (u32, u32) {
    match ids {
        (0, _) => (IMAGE_UID, IMAGE_UID),
        other => other,
    }
}

/// The capabilities to drop and the user to start as. Capabilities are only ever
/// dropped (`cap_add` stays empty).
pub(super) fn user_and_capabilities(request: &LaunchRequest) -> (Vec<String>, Option<String>) {
    match request.ids {
        // Not tfimg's entrypoint: nothing would drop root, so start as the user directly.
        Some((uid, gid)) if !request.target.tfimg_image => {
            (vec!["ALL".to_string()], Some(format!("{uid}:{gid}")))
        }
        // The entrypoint starts as root only to take the host ids, then drops root; taking
        // uid 0 it empties the bounding set as well (`BOUNDING_CAPABILITY`).
        Some((uid, _)) => {
            let mut kept = REMAP_CAPABILITIES.to_vec();
            if uid == 0 {
                kept.push(BOUNDING_CAPABILITY);
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
