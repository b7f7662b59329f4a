//! A container on its team's own network, and, for a member behind the team's gateway,
//! how it is reached: Jupyter under a base URL, its addresses through the gateway's one
//! port instead of host ports of its own. Pure.

/// The team network a container joins (a user-defined bridge, where containers find each
/// other by name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkPlan {
    pub name: String,
    /// Set for a member behind the gateway.
    pub gateway: Option<GatewayRoute>,
}

/// A member's place behind the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayRoute {
    /// Jupyter's `base_url` (`/alice/`).
    pub base_url: String,
    /// The port Jupyter listens on in the container (no host port: readiness asks it from
    /// inside the container).
    pub jupyter_port: u16,
    /// The member's Jupyter through the gateway, without a token.
    pub jupyter_url: String,
    /// Its TensorBoard through the gateway, where the image runs one.
    pub tensorboard_url: Option<String>,
}

/// The network of team `team`.
pub fn team_network(team: &str) -> String {
    format!("tfimg-{team}")
}
