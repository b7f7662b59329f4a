//! `tfimg show SPEC`: the resolved spec as YAML, so users see every default and pin, the
//! lock that pins its image (its own, or the one it inherits layers from), then its
//! support windows (`support:`, judged on today's date); a part past its support is
//! also said on stderr with what to move to.

use std::process::ExitCode;

use serde::Serialize;

use crate::cli::ShowArgs;
use crate::host::Host;
use crate::spec::support::{spec_support, SpecSupport};

#[derive(Serialize)]
struct SupportSection<'a> {
    support: &'a SpecSupport,
}

/// What pins the spec's image: its own lock, or the one it inherits layers from.
#[derive(Serialize)]
struct LockSection<'a> {
    lock: ShownLock<'a>,
}

#[derive(Serialize)]
struct ShownLock<'a> {
    file: &'a str,
    digest: &'a str,
    inherited: bool,
    pins: &'static str,
}

pub fn run(args: &ShowArgs, host: &impl Host) -> anyhow::Result<ExitCode> {
    let catalog = super::catalog();
    let today = host.today()?;
    let resolved = crate::app::catalog::resolve(&catalog, &args.spec)?;
    let support = spec_support(&catalog, &resolved, today);
    let mut text = serde_yaml::to_string(&resolved)?;
    if let Some(pins) = crate::lock::pins(&resolved) {
        text.push_str(&serde_yaml::to_string(&LockSection {
            lock: ShownLock {
                file: &pins.locked.display,
                digest: &pins.locked.digest,
                inherited: !pins.own,
                pins: pins.layers(),
            },
        })?);
    }
    text.push_str(&serde_yaml::to_string(&SupportSection {
        support: &support,
    })?);
    crate::output::print_text(&text)?;
    for part in support.past() {
        eprintln!("warning: {}", support.advice(part));
    }
    Ok(ExitCode::SUCCESS)
}
