//! A started container on a remote engine: its tunneled ports, published by the remote
//! daemon on ports it chose, carried to the local ports the plan chose on this machine
//! (through the engine connection for a session, through a detached ssh connection of
//! the container's own otherwise), and recorded. A local port another program took in
//! the meantime moves to a free one and the plan's addresses with it, so what is printed
//! and probed is where the service answers.

use std::cell::RefCell;
use std::collections::BTreeSet;

use super::{LaunchRequest, TunnelMode};
use crate::app::session::Session;
use crate::app::tunnels::{self, TunnelRecord};
use crate::engine::prelude::{Containers, Daemon, Tunnels};
use crate::engine::EngineError;
use crate::host::prelude::{FileWrites, Files, Ports, State};
use crate::plan::tunnels as plan_tunnels;
use crate::plan::{LaunchPlan, RestartPolicy};

/// Opens the tunnel of the container `id`, planned as `plan`; the plan with the local
/// ports its forwards got, and the record. Nothing to do on a local engine, or for a
/// container that already stopped (readiness then says why). On an error, the caller
/// removes the container.
pub(super) async fn open(
    session: Session<
        '_,
        impl Tunnels + Containers + Daemon,
        impl State + Files + Ports + FileWrites,
    >,
    request: &LaunchRequest,
    id: &str,
    plan: &LaunchPlan,
    reserved: &RefCell<BTreeSet<u16>>,
) -> anyhow::Result<(LaunchPlan, Option<TunnelRecord>)> {
    let Session { engine, .. } = session;
    let tunneled = plan.ports.iter().any(|port| port.tunneled);
    if !engine.tunnels_ports() || !tunneled {
        return Ok((plan.clone(), None));
    }
    let facts = match engine.container(id).await? {
        Some(facts) if facts.state == "running" => facts,
        _ => return Ok((plan.clone(), None)),
    };
    let wanted = plan_tunnels::forwards(&plan.ports, &facts.published).map_err(|name| {
        EngineError::Failed {
            what: format!("publish the port `{name}` of `{}`", plan.name),
            message: "the daemon published no host port for it".to_string(),
        }
    })?;
    let tunnel = match request.tunnel {
        TunnelMode::Session => engine.session_tunnel().ok_or_else(|| EngineError::Failed {
            what: "forward ports".to_string(),
            message: "the engine connection has no tunnel".to_string(),
        })?,
        TunnelMode::Detached => {
            let until_stopped = matches!(plan.restart, None | Some(RestartPolicy::No));
            engine.open_tunnel(id, until_stopped).await?
        }
    };
    let forwards = tunnels::carry(session, &tunnel, wanted, reserved).await?;
    let record = TunnelRecord {
        endpoint: engine.endpoint().to_string(),
        container_id: id.to_string(),
        container: plan.name.clone(),
        tunnel,
        forwards,
    };
    if let Err(error) = tunnels::TunnelStore::of(session).save(&record) {
        record.end(engine).await;
        return Err(error);
    }
    Ok((plan_tunnels::retarget(plan, &record.forwards), Some(record)))
}
