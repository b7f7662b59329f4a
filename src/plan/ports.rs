//! Published ports: every service port of the image goes to 127.0.0.1 (0.0.0.0 with
//! `--public`, except TensorBoard's, which has no login), on the same host port when it
//! is free and on a free one otherwise; `-p [HOST:]CONTAINER` overrides or adds. On a
//! remote engine every port is tunneled: the engine's host publishes it on a port its
//! daemon chooses (on its 127.0.0.1, or every interface with `--public`) and the host
//! port chosen here is the local end of an ssh tunnel on this machine's 127.0.0.1. Pure:
//! whether a port is free is asked of the caller.

use std::collections::BTreeMap;

use crate::input::source::printable;
use crate::input::InputError;
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

/// A note for each port that is not on its own number because that one was in use (and
/// no `-p` named a host port for it): where it went and why, so a user who expected 8888
/// is not left guessing.
pub fn moved(plans: &[PortPlan], requests: &[PortRequest]) -> Vec<String> {
    plans
        .iter()
        .filter(|plan| plan.host != plan.container)
        .filter(|plan| {
            !requests
                .iter()
                .any(|request| request.container == plan.container && request.host.is_some())
        })
        .map(|plan| {
            format!(
                "note: port {container} ({name}) is in use, so it is on {host} instead (`-p HOST:{container}` chooses)",
                container = plan.container,
                name = plan.name,
                host = plan.host
            )
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
            None if !taken_by_us(container, &plans) && free(probe_ip, container) => container,
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
mod tests {
    use super::*;

    const LOCAL: Publishing = Publishing {
        public: false,
        remote: false,
    };
    const PUBLIC: Publishing = Publishing {
        public: true,
        remote: false,
    };

    fn ports() -> BTreeMap<String, u16> {
        BTreeMap::from([
            ("jupyter".to_string(), 8888),
            ("tensorboard".to_string(), 6006),
        ])
    }

    #[test]
    fn a_port_moved_off_its_own_number_is_said_one_the_user_named_is_not() {
        let plan = |name: &str, container: u16, host: u16| PortPlan {
            name: name.to_string(),
            container,
            host_ip: "127.0.0.1".to_string(),
            host,
            tunneled: false,
        };
        let plans = [
            plan("jupyter", 8888, 8889),
            plan("tensorboard", 6006, 6006),
            plan("port-9000", 9000, 9100),
        ];
        let named = [PortRequest {
            host: Some(9100),
            container: 9000,
        }];
        assert_eq!(
            moved(&plans, &named),
            ["note: port 8888 (jupyter) is in use, so it is on 8889 instead (`-p HOST:8888` chooses)"]
        );
    }

    #[test]
    fn same_port_when_free_else_another_and_explicit_ones_must_be_free() {
        let mut next = 40000;
        let mut any = |_: &str| {
            next += 1;
            Some(next)
        };
        let mut free = |_: &str, port: u16| port != 8888 && port != 9999;
        let plans = assign(&ports(), &[], LOCAL, &mut free, &mut any).unwrap();
        let found: Vec<(&str, u16, &str, u16)> = plans
            .iter()
            .map(|p| (p.name.as_str(), p.container, p.host_ip.as_str(), p.host))
            .collect();
        assert_eq!(
            found,
            [
                ("jupyter", 8888, "127.0.0.1", 40001),
                ("tensorboard", 6006, "127.0.0.1", 6006)
            ]
        );

        let requests = [
            PortRequest::parse("8890:8888").unwrap(),
            PortRequest::parse("5000").unwrap(),
        ];
        let plans = assign(&ports(), &requests, PUBLIC, &mut free, &mut any).unwrap();
        assert_eq!(plans[0].host, 8890);
        assert_eq!(plans[0].host_ip, "0.0.0.0");
        // `--public` opens Jupyter and the extra port, never TensorBoard (no login).
        let ips: Vec<(&str, &str)> = plans
            .iter()
            .map(|p| (p.name.as_str(), p.host_ip.as_str()))
            .collect();
        assert_eq!(
            ips,
            [
                ("jupyter", "0.0.0.0"),
                ("tensorboard", "127.0.0.1"),
                ("port-5000", "0.0.0.0")
            ]
        );
        assert_eq!((plans[2].name.as_str(), plans[2].host), ("port-5000", 5000));

        let error = assign(
            &ports(),
            &[PortRequest::parse("9999:8888").unwrap()],
            LOCAL,
            &mut free,
            &mut any,
        )
        .unwrap_err();
        assert_eq!(
            error.message,
            "host port 9999 (for `jupyter`, container port 8888) is already in use"
        );
    }

    #[test]
    fn a_remote_engine_tunnels_every_port_from_this_machine_s_loopback() {
        let mut probed = Vec::new();
        let mut free = |ip: &str, port: u16| {
            probed.push((ip.to_string(), port));
            port != 8888
        };
        let mut any = |ip: &str| {
            assert_eq!(ip, "127.0.0.1", "a local end is on loopback");
            Some(41000)
        };
        let remote = |public| Publishing {
            public,
            remote: true,
        };
        let plans = assign(&ports(), &[], remote(false), &mut free, &mut any).unwrap();
        let found: Vec<(&str, &str, u16, bool)> = plans
            .iter()
            .map(|p| (p.name.as_str(), p.host_ip.as_str(), p.host, p.tunneled))
            .collect();
        assert_eq!(
            found,
            [
                ("jupyter", "127.0.0.1", 41000, true),
                ("tensorboard", "127.0.0.1", 6006, true)
            ]
        );
        // `--public` opens Jupyter on the remote's interfaces, still tunneled to here;
        // free ports are asked of this machine's loopback only.
        let plans = assign(&ports(), &[], remote(true), &mut free, &mut any).unwrap();
        assert_eq!(
            (plans[0].host_ip.as_str(), plans[1].host_ip.as_str()),
            ("0.0.0.0", "127.0.0.1")
        );
        assert!(plans.iter().all(|plan| plan.tunneled));
        assert!(probed.iter().all(|(ip, _)| ip == "127.0.0.1"), "{probed:?}");
    }

    #[test]
    fn an_explicit_port_wins_over_an_automatic_one() {
        let mut free = |_: &str, _: u16| true;
        let mut any = |_: &str| Some(45000);
        let requests = [PortRequest::parse("8888:6006").unwrap()];
        let plans = assign(&ports(), &requests, LOCAL, &mut free, &mut any).unwrap();
        let tensorboard = plans.iter().find(|p| p.name == "tensorboard").unwrap();
        let jupyter = plans.iter().find(|p| p.name == "jupyter").unwrap();
        assert_eq!((tensorboard.host, jupyter.host), (8888, 45000));
    }

    #[test]
    fn port_requests_parse() {
        assert_eq!(
            PortRequest::parse("8888").unwrap(),
            PortRequest {
                host: None,
                container: 8888
            }
        );
        assert_eq!(
            PortRequest::parse("1:2/tcp").unwrap(),
            PortRequest {
                host: Some(1),
                container: 2
            }
        );
        for bad in ["", "0", "70000", "a:1", "1:2:3", "-1"] {
            assert!(PortRequest::parse(bad).is_err(), "{bad}");
        }
        let error = PortRequest::parse("8888/udp").unwrap_err();
        assert_eq!(
            error.message,
            "`-p 8888/udp`: tfimg publishes TCP ports only, not `udp`"
        );
        assert_eq!(
            PortRequest::parse("8889:8888/tcp").unwrap(),
            PortRequest {
                host: Some(8889),
                container: 8888
            }
        );
        let error = PortRequest::parse("80\u{1b}[2J").unwrap_err();
        assert_eq!(error.message, "`-p 80\\u{1b}[2J` is not a port mapping");
    }
}
