//! The flags that choose the Docker Engine, accepted by every command, and `tfimg
//! forward`'s, which only a remote engine has a use for.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;

use super::complete;

#[derive(Debug, Clone, Default, Args)]
pub struct EngineArgs {
    /// The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or
    /// `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT).
    #[arg(long, short = 'H', global = true, value_name = "URL")]
    pub host: Option<String>,

    /// A Docker context (`docker context ls`) whose endpoint to talk to.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
}

#[derive(Debug, Args)]
pub struct ForwardArgs {
    /// A running container tfimg started on a remote (`ssh://`) engine.
    #[arg(add = ArgValueCompleter::new(complete::container))]
    pub name: String,

    /// Close its tunnel instead (the container keeps running).
    #[arg(long)]
    pub close: bool,
}
