//! A container on its team's networks, and, for a member behind the team's gateway, how
//! it is reached: Jupyter under a base URL, its addresses through the gateway's one port
//! instead of host ports of its own. Pure.
//!
//! Trust boundary, member → member, for connections. The members of a team are different
//! people, and each controls their own container and every port that listens in it
//! (TensorBoard has no login at all). So no two members share a network: each member
//! behind a gateway is alone on its own network with the gateway (`member_network`), and
//! the gateway has its published port on a network of its own (`team_network`). The
//! gateway is the only container on more than one, and it passes a request on to a member
//! only as its nginx configuration (`team::gateway::nginx`) allows. This is the one place
//! that names the networks: `app::gateway` makes and joins them, the Compose export
//! writes the same shape.

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
    /// The member has a host of its own (routing by host), whose siblings could toss it
    /// cookies: Jupyter keeps its own as `__Host-` cookies.
    pub host_cookies: bool,
}

/// The gateway's own network of team `team` (no member is on it).
pub fn team_network(team: &str) -> String {
    format!("tfimg-{team}")
}

/// The network of `member` of team `team`: the member and the team's gateway only. The
/// `.` cannot be in a team's or member's name, so no two teams' networks share a name.
pub fn member_network(team: &str, member: &str) -> String {
    format!("tfimg-{team}.{member}")
}
