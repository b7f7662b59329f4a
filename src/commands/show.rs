//! `tfimg show SPEC`: the resolved spec as YAML, so users see every default and pin.

use std::process::ExitCode;

use crate::cli::ShowArgs;

pub fn run(args: &ShowArgs) -> anyhow::Result<ExitCode> {
    let resolved = crate::app::catalog::resolve(&super::catalog(), &args.spec)?;
    crate::output::print_text(&serde_yaml::to_string(&resolved)?)?;
    Ok(ExitCode::SUCCESS)
}
