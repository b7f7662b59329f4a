//! Published ports: every service port of the image goes to 127.0.0.1 (0.0.0.0 with
//! `--public`, except TensorBoard's, which has no login), on the same host port when it
//! is free and on a free one otherwise; a service port below 1024 (SSH's 22) always goes
//! to a port the kernel chooses, since the host's own services live on those numbers (its
//! sshd on 22), and a user who types `ssh -p 22` there reaches the host, not the
//! container; `-p [HOST:]CONTAINER` overrides or adds. On a
//! remote engine every port is tunneled: the engine's host publishes it on a port its
//! daemon chooses (on its 127.0.0.1, or every interface with `--public`) and the host
//! port chosen here is the local end of an ssh tunnel on this machine's 127.0.0.1. Pure:
//! whether a port is free is asked of the caller.

use std::collections::BTreeMap;

use crate::input::source::printable;
use crate::input::InputError;
use crate::notice::Notice;
use crate::spec::resolved::TENSORBOARD_PORT;

/// A `-p` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRequest {
    pub host: Option<u16>,
    pub container: u16,
}

impl PortRequest {
    pub fn parse(text: &str) -> Result<PortRequest, InputError> {
        let bad = || {
            InputError::new(
                printable(&format!("`-p {text}` is not a port mapping")),
                "write `-p CONTAINER` or `-p HOST:CONTAINER` with ports from 1 to 65535, such as `-p 8889:8888`",
            )
        };
        let port = |part: &str| {
            part.parse::<u16>()
                .ok()
                .filter(|port| *port > 0)
                .ok_or_else(bad)
        };
        if let Some((_, protocol)) = text
            .rsplit_once('/')
            .filter(|(_, protocol)| !protocol.is_empty() && *protocol != "tcp")
        {
            return Err(InputError::new(
                printable(&format!(
                    "`-p {text}`: tfimg publishes TCP ports only, not `{protocol}`"
                )),
                "drop the protocol (`-p 8888` or `-p 8888/tcp`); the container's services listen on TCP",
            ));
        }
        let text = text.strip_suffix("/tcp").unwrap_or(text);
        match text.split_once(':') {
            Some((host, container)) => Ok(PortRequest {
                host: Some(port(host)?),
                container: port(container)?,
            }),
            None => Ok(PortRequest {
                host: None,
                container: port(text)?,
            }),
        }
    }
}

/// One published port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortPlan {
    /// The spec's name for it (`jupyter`), or `port-<n>` for extra `-p` ports.
    pub name: String,
    pub container: u16,
    /// Where the engine's host binds it.
    pub host_ip: String,
    /// The port users connect to: on the engine's host, or (tunneled) on this machine.
    pub host: u16,
    /// Published on a port the remote daemon chooses and reached through a tunnel from
    /// `host` on this machine's 127.0.0.1.
    pub tunneled: bool,
}

/// Where the ports go: this machine's engine, or a remote one (tunneled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Publishing {
    pub public: bool,
    pub remote: bool,
}

/// Attempts when another process takes a chosen port between planning and starting (20
/// `tfimg run` at once all want 8888 first; each lost race moves to a kernel-chosen port).
pub const PORT_ATTEMPTS: usize = 10;

/// Service ports below this never take their own number on the host (`assign`).
pub const FIRST_SHARED_PORT: u16 = 1024;

/// A note for each port that is not on its own number because that one was in use (and
/// no `-p` named a host port for it): where it went and why, so a user who expected 8888
/// is not left guessing. (A port below 1024 is never on its own number, by design: its
/// line or URL says where it is.)
pub fn moved(plans: &[PortPlan], requests: &[PortRequest]) -> Vec<Notice> {
    plans
        .iter()
        .filter(|plan| plan.host != plan.container && plan.container >= FIRST_SHARED_PORT)
        .filter(|plan| {
            !requests
                .iter()
                .any(|request| request.container == plan.container && request.host.is_some())
        })
        .map(|plan| {
            Notice::note(format!(
                "port {container} ({name}) is in use, so it is on {host} instead (`-p HOST:{container}` chooses)",
                container = plan.container,
                name = plan.name,
                host = plan.host
            ))
        })
        .collect()
}

/// Assigns host ports. `free(ip, port)` says whether a host port can be bound on this
/// machine; `any_free` returns some free port. Errors when an explicitly requested host
/// port is taken.
pub fn assign(
    service_ports: &BTreeMap<String, u16>,
    requests: &[PortRequest],
    publishing: Publishing,
    free: &mut dyn FnMut(&str, u16) -> bool,
    any_free: &mut dyn FnMut(&str) -> Option<u16>,
) -> Result<Vec<PortPlan>, InputError> {
    // TensorBoard answers anyone who reaches it: `--public` never opens it to the network
    // (an SSH tunnel does, for whoever may log in).
    let host_ip = |name: &str| {
        if publishing.public && name != TENSORBOARD_PORT {
            "0.0.0.0"
        } else {
            "127.0.0.1"
        }
    };
    // A tunnel's local end is always on this machine's loopback.
    let local_ip = |name: &str| {
        if publishing.remote {
            "127.0.0.1"
        } else {
            host_ip(name)
        }
    };
    let mut wanted: Vec<(String, u16, Option<u16>)> = service_ports
        .iter()
        .map(|(name, port)| (name.clone(), *port, None))
        .collect();
    for request in requests {
        match wanted
            .iter_mut()
            .find(|(_, container, _)| *container == request.container)
        {
            Some(entry) => entry.2 = request.host.or(entry.2),
            None => wanted.push((
                format!("port-{}", request.container),
                request.container,
                request.host,
            )),
        }
    }
    // Explicit host ports first, so an automatic choice never takes one the user named.
    wanted.sort_by_key(|(_, _, requested)| requested.is_none());
    let mut plans: Vec<PortPlan> = Vec::new();
    for (name, container, requested) in wanted {
        let probe_ip = local_ip(&name);
        let host_ip = host_ip(&name).to_string();
        let taken_by_us =
            |port: u16, plans: &[PortPlan]| plans.iter().any(|plan| plan.host == port);
        let host = match requested {
            Some(port) => {
                if taken_by_us(port, &plans) || !free(probe_ip, port) {
                    return Err(InputError::new(
                        format!("host port {port} (for `{name}`, container port {container}) is already in use"),
                        format!("choose another with `-p OTHER:{container}`, or leave `-p` out and tfimg picks a free one"),
                    ));
                }
                port
            }
            None if container >= FIRST_SHARED_PORT
                && !taken_by_us(container, &plans)
                && free(probe_ip, container) =>
            {
                container
            }
            None => loop {
                let candidate = any_free(probe_ip).ok_or_else(|| {
                    InputError::new(
                        "no free host port is left",
                        "stop some containers or free ports",
                    )
                })?;
                if !taken_by_us(candidate, &plans) {
                    break candidate;
                }
            },
        };
        plans.push(PortPlan {
            name,
            container,
            host_ip,
            host,
            tunneled: publishing.remote,
        });
    }
    Ok(plans)
}

#[cfg(test)]
mod tests;
