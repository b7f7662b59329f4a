//! The fake engine's tunnels: off unless a test makes the engine remote; then forwards,
//! cancels and detached tunnels are recorded in the calls (`forward jupyter
//! 8888->49152`, `open-tunnel container1`, `close-tunnel /fake/t-1`), the next forwards
//! fail as a test scripts, and a detached tunnel stays open until it is closed (or a test
//! ends it). The daemon publishes tunneled ports from 49152 up.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use super::FakeEngine;
use crate::{EngineError, ForwardFailure, Tunnel, Tunnels};
use tfimg_core::plan::tunnels::{Forward, Published};
use tfimg_core::plan::LaunchPlan;

#[derive(Debug, Default)]
pub struct FakeTunnels {
    /// The engine is on another host: its ports are tunneled.
    pub remote: bool,
    /// The next forwards fail with these, in order.
    pub failures: VecDeque<ForwardFailure>,
    /// Opening a detached tunnel fails with this.
    pub open_failure: Option<String>,
    /// Detached tunnels by control path, and whether each is still open.
    pub detached: BTreeMap<PathBuf, bool>,
    /// Forwards in place, by control path.
    pub forwards: BTreeMap<PathBuf, Vec<Forward>>,
}

const SESSION: &str = "/fake/session";

/// Where the fake daemon publishes a plan's ports: tunneled ones from 49152 up.
pub fn published(plan: &LaunchPlan) -> Vec<Published> {
    plan.ports
        .iter()
        .enumerate()
        .map(|(index, port)| Published {
            container: port.container,
            host_ip: port.host_ip.clone(),
            host_port: if port.tunneled {
                49152 + index as u16
            } else {
                port.host
            },
        })
        .collect()
}

impl FakeEngine {
    fn record(&self, call: String) {
        self.state.borrow_mut().calls.push(call);
    }

    /// A detached tunnel's ssh ends by itself (its container stopped).
    pub fn end_tunnel(&self, control: &std::path::Path) {
        self.tunnels
            .borrow_mut()
            .detached
            .insert(control.to_path_buf(), false);
    }
}

impl Tunnels for FakeEngine {
    fn tunnels_ports(&self) -> bool {
        self.tunnels.borrow().remote
    }

    fn session_tunnel(&self) -> Option<Tunnel> {
        self.tunnels_ports().then(|| Tunnel {
            control: PathBuf::from(SESSION),
            pid: 1,
            detached: false,
        })
    }

    async fn open_tunnel(&self, id: &str, _until_stopped: bool) -> Result<Tunnel, EngineError> {
        self.record(format!("open-tunnel {id}"));
        let mut tunnels = self.tunnels.borrow_mut();
        if let Some(message) = tunnels.open_failure.clone() {
            return Err(EngineError::Failed {
                what: "open a tunnel".to_string(),
                message,
            });
        }
        let number = tunnels.detached.len() + 1;
        let control = PathBuf::from(format!("/fake/t-{number}"));
        tunnels.detached.insert(control.clone(), true);
        Ok(Tunnel {
            control,
            pid: 1000 + number as u32,
            detached: true,
        })
    }

    async fn forward(&self, tunnel: &Tunnel, forward: &Forward) -> Result<(), ForwardFailure> {
        self.record(format!(
            "forward {} {}->{}",
            forward.name, forward.local, forward.remote
        ));
        let mut tunnels = self.tunnels.borrow_mut();
        if let Some(failure) = tunnels.failures.pop_front() {
            return Err(failure);
        }
        let entry = tunnels.forwards.entry(tunnel.control.clone()).or_default();
        entry.push(forward.clone());
        Ok(())
    }

    async fn cancel(&self, tunnel: &Tunnel, forward: &Forward) -> Result<(), EngineError> {
        self.record(format!("cancel {} {}", forward.name, forward.local));
        let mut tunnels = self.tunnels.borrow_mut();
        if let Some(forwards) = tunnels.forwards.get_mut(&tunnel.control) {
            forwards.retain(|kept| kept != forward);
        }
        Ok(())
    }

    async fn close_tunnel(&self, tunnel: &Tunnel) {
        self.record(format!("close-tunnel {}", tunnel.control.display()));
        let mut tunnels = self.tunnels.borrow_mut();
        tunnels.detached.insert(tunnel.control.clone(), false);
        tunnels.forwards.remove(&tunnel.control);
    }

    fn tunnel_alive(&self, tunnel: &Tunnel) -> bool {
        if !tunnel.detached {
            return self.tunnels_ports();
        }
        self.tunnels
            .borrow()
            .detached
            .get(&tunnel.control)
            .copied()
            .unwrap_or(false)
    }
}
