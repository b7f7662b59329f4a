//! `tfimg show SPEC`: the resolved spec as YAML, so users see every default and pin, the
//! lock that pins its image, then its support windows (`support:`, judged on today's
//! date); a part past its support is also said on stderr with what to move to (the text
//! is `lock::show`'s).

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::cli::ShowArgs;
use crate::host::Host;

pub fn run(args: &ShowArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let catalog = super::catalog(settings, host);
    let today = host.today()?;
    let resolved = crate::app::catalog::resolve(host, &catalog, &args.spec)?;
    let (text, warnings) = crate::lock::show::show(&catalog, &resolved, today)?;
    crate::output::print_text(&text)?;
    for warning in &warnings {
        crate::output::notice(warning);
    }
    Ok(ExitCode::SUCCESS)
}
