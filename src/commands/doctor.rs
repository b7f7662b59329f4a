//! `tfimg doctor [SPEC] [--json]`: gathers the facts (Docker, the NVIDIA side of the
//! engine's host (`app::gpu_host`: this machine's, or asked in a `--gpus all` container
//! on the spec's image, its base or any tfimg image there), the spec's base and image;
//! `doctor::gather`), lets `doctor`'s checks judge them, prints one line per check with
//! its fix, and exits 1 when anything fails.

use std::process::ExitCode;

use crate::app::doctor::{docker_facts, spec_facts, start_hint};
use crate::app::settings::Settings;
use crate::cli::DoctorArgs;
use crate::doctor::{self, Check, Verdict};
use crate::host::nvidia::{EngineProbe, ProbeOutcome};
use crate::host::{Host, NvidiaFacts};
use crate::output::exit::EXIT_BAD_INPUT;
use crate::spec::support::spec_support;
use crate::spec::ResolvedSpec;

pub fn run(args: &DoctorArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let name = args
        .spec
        .clone()
        .unwrap_or_else(|| "gpu-jupyter".to_string());
    let catalog = super::catalog();
    let today = host.today()?;
    let resolved = crate::app::catalog::resolve(&catalog, &name);
    let network = settings.network(&args.network.choices(), host)?;
    let checks = super::runtime()?.block_on(async {
        let connected = settings.try_connect().await?;
        let (docker, engine) = match connected {
            Ok(engine) => match docker_facts(&engine).await {
                Ok(facts) => (Ok(facts), Some(engine)),
                Err(error) => (Err((error.to_string(), start_hint(&error))), None),
            },
            Err(error) => {
                let hint = error.hint().unwrap_or_default().to_string();
                (Err((error.to_string(), hint)), None)
            }
        };
        let nvidia = match &engine {
            Some(engine) => {
                let images = probe_images(resolved.as_ref().ok());
                crate::app::gpu_host::engine_nvidia(engine, host, &images).await
            }
            None => unreached_nvidia(settings, host)?,
        };
        let mut checks = doctor::docker_checks(&docker);
        checks.extend(doctor::nvidia_checks(
            &nvidia,
            docker.as_ref().ok().map(|facts| &facts.info),
        ));
        let spec = match &resolved {
            Ok(resolved) => {
                let support = spec_support(&catalog, resolved, today);
                Ok(spec_facts(engine.as_ref(), host, resolved, &network, support).await)
            }
            Err(error) => Err(error.to_string()),
        };
        checks.extend(doctor::spec_checks(&spec, &nvidia, engine.is_some()));
        if resolved.as_ref().is_ok_and(|resolved| !resolved.is_gpu()) {
            doctor::for_cpu_spec(&mut checks);
        }
        anyhow::Ok(checks)
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

/// What a probe of another host may run: the spec's image, else its base.
fn probe_images(resolved: Option<&ResolvedSpec>) -> Vec<String> {
    resolved
        .map(|resolved| vec![resolved.image_reference(), resolved.base.clone()])
        .unwrap_or_default()
}

/// The NVIDIA facts when the engine did not answer: this machine's for an engine here;
/// for one on another host, nothing (that host cannot be asked).
fn unreached_nvidia(settings: &Settings, host: &impl Host) -> anyhow::Result<NvidiaFacts> {
    let url = settings.engine_url()?;
    if crate::engine::endpoint::on_this_machine(&url) {
        return Ok(host.nvidia());
    }
    Ok(NvidiaFacts {
        probe: Some(EngineProbe {
            engine: url,
            image: None,
            outcome: ProbeOutcome::Unreached,
        }),
        ..NvidiaFacts::default()
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
