//! Tunnels of an `ssh://` engine (`ssh::tunnel` runs the processes): the connection's own
//! master carries a session's forwards, a detached master of its own each detached
//! container's. A local (or tcp) engine has none.

use super::ssh::{self, ControlOp};
use super::Docker;
use crate::{EngineError, ForwardFailure, Tunnel, Tunnels};
use tfimg_core::plan::tunnels::Forward;

impl Docker {
    fn no_tunnels(&self) -> EngineError {
        EngineError::Failed {
            what: "open a tunnel".to_string(),
            message: format!("`{}` is not reached through ssh", self.endpoint),
        }
    }
}

impl Tunnels for Docker {
    fn tunnels_ports(&self) -> bool {
        self.session.is_some()
    }

    fn session_tunnel(&self) -> Option<Tunnel> {
        self.session.as_ref().map(|session| Tunnel {
            control: session.control().to_path_buf(),
            pid: session.master_pid(),
            detached: false,
        })
    }

    async fn open_tunnel(&self, id: &str, until_stopped: bool) -> Result<Tunnel, EngineError> {
        let session = self.session.as_ref().ok_or_else(|| self.no_tunnels())?;
        let (control, pid) = session
            .open_detached(id, until_stopped)
            .await
            .map_err(|problem| self.ssh_error(problem))?;
        Ok(Tunnel {
            control,
            pid,
            detached: true,
        })
    }

    async fn forward(&self, tunnel: &Tunnel, forward: &Forward) -> Result<(), ForwardFailure> {
        let session = self
            .session
            .as_ref()
            .ok_or_else(|| ForwardFailure::Engine(self.no_tunnels()))?;
        match session
            .ask(&tunnel.control, ControlOp::Forward(forward))
            .await
        {
            Ok(_) => Ok(()),
            // The master could not listen on the local port (`-L` bind failed).
            Err(stderr) if stderr.contains("Port forwarding failed") => {
                Err(ForwardFailure::LocalPortTaken(ssh::last_line(&stderr)))
            }
            Err(stderr) => Err(ForwardFailure::Engine(EngineError::Failed {
                what: format!(
                    "forward 127.0.0.1:{} to port {} on the engine's host",
                    forward.local, forward.remote
                ),
                message: ssh::last_line(&stderr),
            })),
        }
    }

    async fn cancel(&self, tunnel: &Tunnel, forward: &Forward) -> Result<(), EngineError> {
        let session = self.session.as_ref().ok_or_else(|| self.no_tunnels())?;
        session
            .ask(&tunnel.control, ControlOp::Cancel(forward))
            .await
            .map(|_| ())
            .map_err(|stderr| EngineError::Failed {
                what: format!("close the tunnel of 127.0.0.1:{}", forward.local),
                message: ssh::last_line(&stderr),
            })
    }

    async fn close_tunnel(&self, tunnel: &Tunnel) {
        if let (Some(session), true) = (self.session.as_ref(), tunnel.detached) {
            session.end_detached(&tunnel.control, tunnel.pid).await;
        }
    }

    fn tunnel_alive(&self, tunnel: &Tunnel) -> bool {
        ssh::master_alive(tunnel.pid, &tunnel.control)
    }
}
