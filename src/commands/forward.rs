//! `tfimg forward NAME [--close]`: the tunnel of a detached container on a remote
//! engine, opened again (or its addresses printed while it is open) or closed. Its
//! addresses go to stdout, as `run -d` prints them.

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::app::tunnels;
use crate::cli::ForwardArgs;
use crate::engine::prelude::*;
use crate::host::Host;
use crate::input::InputError;

pub fn run(args: &ForwardArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let name = &args.name;
        if !engine.tunnels_ports() {
            return Err(InputError::new(
                format!("`forward` is for remote engines: the ports of `{name}` are already on this machine"),
                "`tfimg ps` shows its addresses; `tfimg forward` applies when the engine is `ssh://` (`--host`, DOCKER_HOST or a Docker context)",
            )
            .into());
        }
        let container = crate::app::containers::find(&engine, name).await?;
        let name = &container.name;
        if args.close {
            if tunnels::close(&engine, host, &container.id).await {
                eprintln!("closed the tunnel of `{name}`");
            } else {
                eprintln!("`{name}` has no open tunnel");
            }
            return Ok(ExitCode::SUCCESS);
        }
        let endpoints = tunnels::reopen(&engine, host, &container).await?;
        println!("{:<12}{name}", "container");
        for (service, address) in endpoints {
            println!("{service:<12}{address}");
        }
        Ok(ExitCode::SUCCESS)
    })
}
