//! Tunnels to a remote engine's containers, as decisions: which local port is carried to
//! which port the remote daemon published, and a plan's (or a container's) addresses
//! moved when a local port had to change (another program took it). Pure.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::ports::PortPlan;
use super::LaunchPlan;
use crate::labels;
use crate::spec::resolved::SERVING_PORT_NAME;

/// One local port on this machine's 127.0.0.1 carried to a port on the engine host's
/// 127.0.0.1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forward {
    /// The port's name in the plan (`jupyter`, `ssh`, `tensorboard`, `port-5000`).
    pub name: String,
    pub local: u16,
    pub remote: u16,
}

/// A port binding the daemon made for a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub container: u16,
    pub host_ip: String,
    pub host_port: u16,
}

/// The port the daemon published `container` on (its first binding).
fn remote_port(published: &[Published], container: u16) -> Option<u16> {
    published
        .iter()
        .find(|binding| binding.container == container && binding.host_port != 0)
        .map(|binding| binding.host_port)
}

/// A forward for every tunneled port of `ports`, to where the daemon published it; the
/// name of a port the daemon did not publish otherwise.
pub fn forwards(ports: &[PortPlan], published: &[Published]) -> Result<Vec<Forward>, String> {
    ports
        .iter()
        .filter(|port| port.tunneled)
        .map(|port| match remote_port(published, port.container) {
            Some(remote) => Ok(Forward {
                name: port.name.clone(),
                local: port.host,
                remote,
            }),
            None => Err(port.name.clone()),
        })
        .collect()
}

/// A running container's forwards as it was launched: each port of its ports label
/// (`io.tfimg.ports`, local ends) to where the daemon published it now.
pub fn forwards_of_container(
    container_labels: &HashMap<String, String>,
    published: &[Published],
) -> Vec<Forward> {
    let Some(ports) = container_labels.get(labels::PORTS) else {
        return Vec::new();
    };
    labels::decode_ports(ports)
        .into_iter()
        .filter_map(|port| {
            Some(Forward {
                remote: remote_port(published, port.container)?,
                name: port.name,
                local: port.host,
            })
        })
        .collect()
}

/// `text` (a URL or an ssh line) with the local port `old` replaced by `new`:
/// `http://127.0.0.1:OLD/` and `ssh -p OLD `.
pub fn moved_address(text: &str, old: u16, new: u16) -> String {
    text.replace(&format!("127.0.0.1:{old}/"), &format!("127.0.0.1:{new}/"))
        .replace(&format!("ssh -p {old} "), &format!("ssh -p {new} "))
}

/// The plan with the local ends of its tunneled ports as `forwards` has them (a port
/// another program took between the choice and the tunnel moved): its ports, the
/// addresses it prints and its labels.
pub fn retarget(plan: &LaunchPlan, forwards: &[Forward]) -> LaunchPlan {
    let mut plan = plan.clone();
    for forward in forwards {
        let Some(port) = plan.ports.iter_mut().find(|port| port.name == forward.name) else {
            continue;
        };
        let old = port.host;
        if old == forward.local {
            continue;
        }
        port.host = forward.local;
        for (_, address) in plan.endpoints.iter_mut() {
            *address = moved_address(address, old, forward.local);
        }
        for (key, value) in plan.labels.iter_mut() {
            if key.starts_with(labels::URL_PREFIX) {
                *value = moved_address(value, old, forward.local);
            }
        }
    }
    plan
}

/// What a container tfimg started prints (`jupyter` URL with `token`, the ssh line,
/// TensorBoard, with `token` too behind a team's gateway), from its URL labels, with the
/// local ends of `forwards`.
pub fn container_endpoints(
    container_labels: &HashMap<String, String>,
    token: Option<&str>,
    forwards: &[Forward],
) -> Vec<(String, String)> {
    let launched = container_labels
        .get(labels::PORTS)
        .map(|ports| labels::decode_ports(ports))
        .unwrap_or_default();
    let mut endpoints = Vec::new();
    // `gateway`: a team gateway's own address; `rest`: a model server's model.
    for name in [
        "jupyter",
        "ssh",
        SERVING_PORT_NAME,
        "tensorboard",
        "gateway",
    ] {
        let Some(mut address) = container_labels.get(&labels::url_label(name)).cloned() else {
            continue;
        };
        let old = launched.iter().find(|port| port.name == name);
        let new = forwards.iter().find(|forward| forward.name == name);
        if let (Some(old), Some(new)) = (old, new) {
            address = moved_address(&address, old.host, new.local);
        }
        let signs_in = match name {
            "jupyter" => true,
            "tensorboard" => super::tensorboard_behind_gateway(&address),
            _ => false,
        };
        if let (Some(token), true) = (token, signs_in) {
            address = super::with_token(&address, token);
        }
        endpoints.push((name.to_string(), address));
    }
    endpoints
}

#[cfg(test)]
mod tests;
