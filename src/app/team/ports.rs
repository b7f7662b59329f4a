//! The host ports a team file names, checked before `up` removes or creates anything: the
//! gateway's `gateway.port` and each member's `ports:`. A port the team's own containers
//! publish is the team's to keep; any other taken port (another team's gateway, any
//! process) is refused, naming the file's key, so a half-made team is never left behind
//! for a port that was never free. The launcher checks again as it creates (another
//! process may take a port in between).

use std::collections::BTreeSet;

use crate::engine::ContainerFacts;
use crate::host::prelude::Ports;
use crate::input::InputError;
use crate::team::Team;

/// Refuses a host port the file names that something other than the team holds.
pub fn check(
    host: &impl Ports,
    team: &Team,
    existing: &[ContainerFacts],
) -> Result<(), InputError> {
    let ours: BTreeSet<u16> = existing.iter().flat_map(super::ports_of).collect();
    let taken = |public: bool, port: u16| {
        !ours.contains(&port)
            && !(host.port_is_free("127.0.0.1", port)
                && (!public || host.port_is_free("0.0.0.0", port)))
    };
    if let Some(gateway) = &team.gateway {
        if taken(gateway.public, gateway.port) {
            return Err(InputError::new(
                format!(
                    "the gateway's port {} (`gateway.port` in `{}`) is already in use: another team's gateway or another program listens there",
                    gateway.port, team.file
                ),
                format!(
                    "give the gateway a free port: `gateway.port` in `{}` (`tfimg ps` shows the gateways tfimg runs, `ss -ltnp` what listens)",
                    team.file
                ),
            ));
        }
    }
    for member in &team.members {
        for (service, port) in &member.ports {
            if taken(false, *port) {
                return Err(InputError::new(
                    format!(
                        "member `{}`: host port {port} (`{service}: {port}` in its `ports:` in `{}`) is already in use",
                        member.name, team.file
                    ),
                    format!(
                        "choose another in member `{}`'s `ports:`, or remove `{service}` there and tfimg picks a free one",
                        member.name
                    ),
                ));
            }
        }
    }
    Ok(())
}
