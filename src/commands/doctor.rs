//! `tfimg doctor [SPEC] [--json]`: gathers the facts (Docker, the NVIDIA side of the
//! engine's host (`app::gpu_host`: this machine's, or asked in a `--gpus all` container
//! on the spec's image, its base or any tfimg image there), the spec's base and image;
//! `doctor::gather`), lets `doctor`'s checks judge them, prints one line per check with
//! its fix, and exits 1 when anything fails.

use std::process::ExitCode;

use crate::app::doctor::checks as doctor_checks;
use crate::app::settings::Settings;
use crate::cli::DoctorArgs;
use crate::doctor::{self, Check, Verdict};
use crate::host::Host;
use crate::output::exit::EXIT_BAD_INPUT;

pub fn run(args: &DoctorArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let name = args
        .spec
        .clone()
        .unwrap_or_else(|| "gpu-jupyter".to_string());
    let catalog = super::catalog();
    let today = host.today()?;
    let resolved = crate::app::catalog::resolve(&catalog, &name);
    let network = settings.network(&args.network.choices(), host)?;
    let engine_url = settings.engine_url()?;
    let checks = super::runtime()?.block_on(async {
        let connected = settings.try_connect().await?;
        anyhow::Ok(
            doctor_checks(
                connected,
                &engine_url,
                host,
                &catalog,
                &resolved,
                &network,
                today,
            )
            .await,
        )
    })?;
    if args.json {
        crate::output::print_json(&checks)?;
    } else {
        let _ = crate::output::print_text(&format!("{}\n", doctor::verdict(&checks, &name)));
        print_checks(&checks);
    }
    let failed = checks.iter().any(|check| check.verdict == Verdict::Fail);
    Ok(if failed {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_checks(checks: &[Check]) {
    let width = checks
        .iter()
        .map(|check| check.check.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for check in checks {
        let verdict = match check.verdict {
            Verdict::Pass => "PASS",
            Verdict::Info => "INFO",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        };
        text.push_str(&format!(
            "{verdict}  {:<width$}  {}\n",
            check.check, check.summary
        ));
        if let Some(fix) = &check.fix {
            text.push_str(&format!("      {:<width$}  fix: {fix}\n", ""));
        }
    }
    let _ = crate::output::print_text(&text);
}
