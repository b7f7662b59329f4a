//! `tfimg doctor [SPEC] [--json]`: gathers the facts (Docker, the NVIDIA side of the
//! engine's host (`app::gpu_host`: this machine's, or asked in a `--gpus all` container
//! on the spec's image, its base or any tfimg image there), the spec's base and image;
//! `doctor::gather`), lets `doctor`'s checks judge them, prints one line per check with
//! its fix, and exits 1 when anything fails.

use std::process::ExitCode;

use crate::app::doctor::checks as doctor_checks;
use crate::app::settings::Settings;
use crate::cli::DoctorArgs;
use crate::doctor;
use crate::host::Host;
use crate::output::exit::EXIT_BAD_INPUT;
use crate::output::sinks::Sinks;

pub fn run(args: &DoctorArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let name = args
        .spec
        .clone()
        .unwrap_or_else(|| "gpu-jupyter".to_string());
    let catalog = super::catalog(settings, host);
    let today = host.today()?;
    let resolved = crate::app::catalog::resolve(host, &catalog, &name).map(|resolved| {
        let support = crate::spec::support::spec_support(&catalog, &resolved, today);
        (resolved, support)
    });
    let network = settings.network(&args.network.choices(), host)?;
    let engine_url = settings.engine_url()?;
    let checks = super::runtime()?.block_on(async {
        let connected = settings.try_connect().await?;
        anyhow::Ok(
            doctor_checks(
                connected,
                &engine_url,
                host,
                &resolved,
                &network,
                Sinks::plain(),
            )
            .await,
        )
    })?;
    if args.json {
        crate::output::print_json(&checks)?;
    } else {
        let _ = crate::output::print_text(&doctor::report(&checks, &name));
    }
    Ok(match doctor::failed(&checks) {
        true => ExitCode::from(EXIT_BAD_INPUT),
        false => ExitCode::SUCCESS,
    })
}
