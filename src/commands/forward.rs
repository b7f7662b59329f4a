//! `tfimg forward NAME [--close]`: the tunnel of a detached container on a remote
//! engine, opened again (or its addresses printed while it is open) or closed (the story
//! is `app::tunnels::forward`). Its addresses go to stdout, as `run -d` prints them.

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::app::tunnels::{self, Forwarded};
use crate::cli::ForwardArgs;
use crate::host::Host;

pub fn run(args: &ForwardArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let forwarded = super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        tunnels::forward(session, &args.name, args.close).await
    })?;
    match forwarded {
        Forwarded::Closed { name, was_open } => match was_open {
            true => errln!("closed the tunnel of `{name}`"),
            false => errln!("`{name}` has no open tunnel"),
        },
        Forwarded::Open { name, endpoints } => {
            outln!("{:<12}{name}", "container");
            for (service, address) in endpoints {
                outln!("{service:<12}{address}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
