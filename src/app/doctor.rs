//! The facts `doctor`'s checks judge, gathered with bounded waits: what the daemon says
//! about itself, and where the spec's base and image stand on it (the checks themselves
//! are pure, in `doctor/`).

use std::time::Duration;

use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::session::{Session, Sinks};
use crate::doctor::{self, Check, DockerFacts, ImageState, SpecFacts};
use crate::engine::prelude::{Builds, Containers, Daemon, Images};
use crate::engine::EngineError;
use crate::host::nvidia::{EngineProbe, ProbeOutcome};
use crate::host::prelude::{Clock, Gpus, Identity, Processes, Secrets};
use crate::host::NvidiaFacts;
use crate::input::Failure;
use crate::plan::base::BootstrapTarget;
use crate::spec;
use crate::spec::support::SpecSupport;
use crate::spec::{ResolvedSpec, SpecError};

/// No single question to the daemon may hold the doctor up longer than this.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// `tfimg doctor`'s checks: the facts gathered from the engine (`connected`, reached at
/// `engine_url`), the NVIDIA side of its host and the spec (`resolved`, and what the
/// catalog says of its support today), judged by `doctor`. An engine that did not answer
/// is a failed check, never an error.
pub async fn checks(
    connected: Result<impl Images + Containers + Builds + Daemon, EngineError>,
    engine_url: &str,
    host: &(impl Gpus + Secrets + Clock + Processes + Identity),
    resolved: &Result<(ResolvedSpec, SpecSupport), SpecError>,
    network: &Network,
    sinks: Sinks<'_>,
) -> Vec<Check> {
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
            let images = probe_images(resolved.as_ref().ok().map(|(resolved, _)| resolved));
            crate::app::gpu_host::engine_nvidia(Session::new(engine, host, sinks), &images).await
        }
        None => unreached_nvidia(engine_url, host),
    };
    let mut checks = doctor::docker_checks(&docker);
    checks.extend(doctor::nvidia_checks(
        &nvidia,
        docker.as_ref().ok().map(|facts| &facts.info),
    ));
    let spec = match resolved {
        Ok((resolved, support)) => {
            let mut facts = spec_facts(host, resolved, support.clone());
            if let Some(engine) = &engine {
                let session = Session::new(engine, host, sinks);
                engine_spec_facts(session, resolved, network, &mut facts).await;
            }
            Ok(facts)
        }
        Err(error) => Err(error.to_string()),
    };
    checks.extend(doctor::spec_checks(&spec, &nvidia, engine.is_some()));
    if resolved
        .as_ref()
        .is_ok_and(|(resolved, _)| !resolved.is_gpu())
    {
        doctor::for_cpu_spec(&mut checks);
    }
    checks
}

/// What a probe of another host may run: the spec's image, else its base.
fn probe_images(resolved: Option<&ResolvedSpec>) -> Vec<String> {
    resolved
        .map(|resolved| vec![resolved.image_reference(), resolved.base.clone()])
        .unwrap_or_default()
}

/// The NVIDIA facts when the engine did not answer: this machine's for an engine here;
/// for one on another host, nothing (that host cannot be asked).
fn unreached_nvidia(engine_url: &str, host: &impl Gpus) -> NvidiaFacts {
    if crate::engine::endpoint::on_this_machine(engine_url) {
        return host.nvidia();
    }
    NvidiaFacts {
        probe: Some(EngineProbe {
            engine: engine_url.to_string(),
            image: None,
            outcome: ProbeOutcome::Unreached,
        }),
        ..NvidiaFacts::default()
    }
}

pub fn start_hint(error: &EngineError) -> String {
    error
        .hint()
        .unwrap_or("check that the Docker daemon is healthy (`docker info`)")
        .to_string()
}

pub async fn docker_facts(engine: &impl Daemon) -> Result<DockerFacts, EngineError> {
    let bounded = |what: &str| EngineError::Timeout {
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

/// What the spec itself says, before the engine is asked: its versions, CUDA, base and
/// support, the CUDA cache volume of the user the containers run as.
pub fn spec_facts(
    host: &impl Identity,
    resolved: &spec::ResolvedSpec,
    support: SpecSupport,
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
    SpecFacts {
        name: resolved.name.clone(),
        summary,
        tensorflow: resolved.tensorflow.clone(),
        cuda_cache_volume: crate::labels::cuda_cache_volume(host.container_ids().0),
        gpu: resolved.gpu.clone(),
        base: resolved.base.clone(),
        base_present: false,
        engine_host: None,
        base_bootstrappable: BootstrapTarget::parse(&resolved.base).is_ok(),
        image: ImageState::Unknown,
        support,
    }
}

/// What the engine says of the spec's images: its base, a current build, an older one.
pub async fn engine_spec_facts(
    session: Session<
        '_,
        impl Images + Builds + Containers + Daemon,
        impl Clock + Secrets + Processes,
    >,
    resolved: &spec::ResolvedSpec,
    network: &Network,
    facts: &mut SpecFacts,
) {
    let engine = session.engine;
    facts.engine_host = (!engine.on_this_machine()).then(|| engine.endpoint().to_string());
    facts.base_present = matches!(engine.image(&resolved.base).await, Ok(Some(_)));
    let tag = resolved.image_reference();
    let options = BuildOptions {
        no_verify: true,
        only_check: true,
        ..BuildOptions::default()
    };
    let current = build_spec(session, resolved, network, &options).await;
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
}
