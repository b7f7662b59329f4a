//! `tfimg doctor [SPEC] [--json]`: gathers the facts (Docker, the NVIDIA host, the spec's
//! base and image) with bounded waits, lets `crate::doctor` judge them, prints one line
//! per check with its fix, and exits 1 when anything fails.

use std::process::ExitCode;
use std::time::Duration;

use crate::cli::{DoctorArgs, Progress};
use crate::commands::build::{build_spec, BuildOptions};
use crate::config;
use crate::doctor::{self, Check, DockerFacts, ImageState, SpecFacts, Verdict};
use crate::engine::{Docker, Engine};
use crate::error::EXIT_BAD_INPUT;
use crate::output::progress::Reporter;
use crate::spec;

/// No single question to the daemon may hold the doctor up longer than this.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

pub fn run(args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let name = args
        .spec
        .clone()
        .unwrap_or_else(|| "gpu-jupyter".to_string());
    let resolved = spec::resolve(&super::catalog(), &name);
    let network = config::network(&args.network, &config::load_config()?)?;
    let nvidia = crate::host::nvidia_facts();
    let checks = super::runtime()?.block_on(async {
        let connected = Docker::connect().await;
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
        let mut checks = doctor::docker_checks(&docker);
        checks.extend(doctor::nvidia_checks(
            &nvidia,
            docker.as_ref().ok().map(|facts| &facts.info),
        ));
        let spec = match &resolved {
            Ok(resolved) => Ok(spec_facts(engine.as_ref(), resolved, &network).await),
            Err(error) => Err(error.to_string()),
        };
        checks.extend(doctor::spec_checks(&spec, &nvidia, engine.is_some()));
        checks
    });
    if args.json {
        crate::output::print_json(&checks)?;
    } else {
        print_checks(&checks);
    }
    let failed = checks.iter().any(|check| check.verdict == Verdict::Fail);
    Ok(if failed {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}

fn start_hint(error: &crate::engine::EngineError) -> String {
    error
        .hint()
        .unwrap_or("check that the Docker daemon is healthy (`docker info`)")
        .to_string()
}

async fn docker_facts(engine: &impl Engine) -> Result<DockerFacts, crate::engine::EngineError> {
    let bounded = |what: &str| crate::engine::EngineError::Timeout {
        endpoint: format!("{} ({what})", engine.endpoint()),
        seconds: ANSWER_TIMEOUT.as_secs(),
    };
    let version = tokio::time::timeout(ANSWER_TIMEOUT, engine.version())
        .await
        .map_err(|_| bounded("version"))??;
    let info = tokio::time::timeout(ANSWER_TIMEOUT, engine.info())
        .await
        .map_err(|_| bounded("info"))??;
    let free_bytes = if engine.endpoint().starts_with("unix://") && !info.root_dir.is_empty() {
        crate::host::free_bytes(std::path::Path::new(&info.root_dir))
    } else {
        None
    };
    Ok(DockerFacts {
        endpoint: engine.endpoint().to_string(),
        version: version.version,
        api_version: version.api_version,
        negotiated_api: version.negotiated_api,
        info,
        free_bytes,
    })
}

async fn spec_facts(
    engine: Option<&impl Engine>,
    resolved: &spec::ResolvedSpec,
    network: &config::Network,
) -> SpecFacts {
    let summary = match &resolved.gpu {
        Some(gpu) => format!(
            "{}: TensorFlow {}, Python {}, CUDA {} / cuDNN {} from {} (TensorFlow built with CUDA {} / cuDNN {}), service {}",
            resolved.name,
            resolved.tensorflow,
            resolved.python,
            gpu.cuda,
            gpu.cudnn,
            match gpu.provider {
                spec::CudaProvider::Pip => "NVIDIA's pip wheels",
                spec::CudaProvider::Image => "the nvidia/cuda base",
            },
            gpu.tensorflow_built_with_cuda,
            gpu.tensorflow_built_with_cudnn,
            resolved.service.as_str()
        ),
        None => format!(
            "{}: TensorFlow {} (CPU), Python {}, service {}",
            resolved.name,
            resolved.tensorflow,
            resolved.python,
            resolved.service.as_str()
        ),
    };
    let mut facts = SpecFacts {
        name: resolved.name.clone(),
        summary,
        gpu: resolved.gpu.clone(),
        base: resolved.base.clone(),
        base_present: false,
        base_bootstrappable: crate::bootstrap::BootstrapTarget::parse(&resolved.base).is_ok(),
        image: ImageState::Unknown,
    };
    let Some(engine) = engine else {
        return facts;
    };
    facts.base_present = matches!(engine.image(&resolved.base).await, Ok(Some(_)));
    let tag = resolved.image_reference();
    let options = BuildOptions {
        tags: &[],
        no_cache: false,
        pull: false,
        bootstrap_base: false,
        no_verify: true,
        only_check: true,
        announce_up_to_date: false,
    };
    let reporter = Reporter::new(Progress::Plain);
    let current = build_spec(engine, resolved, network, &options, &reporter).await;
    let any_build = matches!(engine.image(&tag).await, Ok(Some(_)));
    facts.image = match current {
        Ok(Some(built)) => ImageState::Current {
            tag: built.plan.tag,
            key: built.plan.key,
        },
        _ if any_build => ImageState::Stale { tag },
        _ if facts.base_present => ImageState::Missing { tag },
        _ => ImageState::Missing { tag },
    };
    facts
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
