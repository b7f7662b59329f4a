//! What the launcher chooses for the pure planner: host ports on this machine (the local
//! ends of tunnels on a remote engine), and the rest of `plan::Chosen`.

use std::cell::RefCell;
use std::collections::BTreeSet;

use super::{LaunchRequest, Prepared};
use crate::host::prelude::Ports;
use crate::input::InputError;
use crate::plan::gpus::{GpuPlan, GpuSelection};
use crate::plan::ports::{self, Publishing};
use crate::plan::{Chosen, LaunchPlan};

/// Host ports for the request's service ports and `-p` requests, avoiding `reserved`;
/// the chosen ones are added to it. On a `remote` engine they are the local ends of
/// tunnels.
pub(super) fn choose_ports(
    host: &impl Ports,
    request: &LaunchRequest,
    remote: bool,
    reserved: &RefCell<BTreeSet<u16>>,
) -> Result<Vec<ports::PortPlan>, InputError> {
    let held = reserved.borrow().clone();
    let publishing = Publishing {
        public: request.public,
        remote,
    };
    let assigned = ports::assign(
        &request.target.ports,
        &request.port_requests,
        publishing,
        &mut |ip, port| !held.contains(&port) && host.port_is_free(ip, port),
        &mut |ip| {
            (0..64)
                .filter_map(|_| host.any_free_port(ip))
                .find(|port| !held.contains(port))
        },
    )?;
    reserved
        .borrow_mut()
        .extend(assigned.iter().map(|port| port.host));
    Ok(assigned)
}

pub(super) fn release(reserved: &RefCell<BTreeSet<u16>>, plan: &LaunchPlan) {
    let mut reserved = reserved.borrow_mut();
    for port in &plan.ports {
        reserved.remove(&port.host);
    }
}

/// What the launcher chose for `prepared`: its name and token or key, and the ports and
/// GPUs of this attempt.
pub(super) fn chosen(
    prepared: &Prepared,
    ports: Vec<ports::PortPlan>,
    gpus: &GpuSelection,
    gpu_plan: &GpuPlan,
) -> Chosen {
    Chosen {
        name: prepared.name.clone(),
        ports,
        gpus: gpus.clone(),
        gpu: gpu_plan.clone(),
        jupyter_token: prepared.jupyter_token.clone(),
        ssh_public_key: prepared.ssh.as_ref().map(|key| key.public_key.clone()),
        ssh_identity: prepared
            .ssh
            .as_ref()
            .and_then(|key| key.identity.as_ref())
            .map(|path| path.display().to_string()),
        ssh_known_hosts: prepared
            .known_hosts
            .as_ref()
            .map(|path| path.display().to_string()),
    }
}
