//! A serving member on Kubernetes: its Deployment's container is probed on the model's
//! status endpoint (`GET /v1/models/NAME`, which answers 200 once a version is
//! `AVAILABLE` and 404 until then), and its model folder is a claim of its own
//! (`<team>-<member>-model`, mounted read-only at `/models/NAME`), which the user fills
//! with the numbered versions, as the other folders' claims.

use serde_json::{json, Value};

use crate::labels;
use crate::plan::serving::MODEL_CONFIG_TARGET;
use crate::plan::LaunchPlan;
use crate::spec::resolved::{MODELS_FOLDER, SERVING_PORT, SERVING_PORT_NAME};

/// How long the model may take to load before liveness counts: `up`'s wait
/// (`ready::READY_TIMEOUT`, 180 s) as 36 probes 5 s apart.
const STARTUP_PROBES: u32 = 36;

/// The probes of a model server's container: a startup probe holding the others off while
/// TensorFlow loads the model, then readiness (out of the Service while the model does not
/// answer) and liveness (restarted when the server hangs).
pub(super) fn add_probes(container: &mut Value, plan: &LaunchPlan) {
    let Some(model) = crate::team::serving::plan_model(plan) else {
        return;
    };
    let port = plan
        .ports
        .iter()
        .find(|port| port.name == SERVING_PORT_NAME)
        .map_or(SERVING_PORT, |port| port.container);
    let get = json!({"path": format!("/v1/models/{model}"), "port": port});
    container["startupProbe"] = json!({
        "httpGet": get,
        "periodSeconds": 5,
        "timeoutSeconds": 5,
        "failureThreshold": STARTUP_PROBES,
    });
    container["readinessProbe"] = json!({
        "httpGet": get,
        "periodSeconds": 5,
        "timeoutSeconds": 5,
        "failureThreshold": 2,
    });
    container["livenessProbe"] = json!({
        "httpGet": get,
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 3,
    });
}

/// The volume name of a mount and where it is mounted: the model's folder is `model`
/// (each other model of a model config `model-N`), a model config file's claim is
/// `model-config`, mounted as its folder (a claim is a folder; the user puts the file
/// in it), the other folders `data-N`.
pub(super) fn volume_of(plan: &LaunchPlan, target: &str, index: usize) -> (String, String) {
    if target == MODEL_CONFIG_TARGET {
        let folder = target.rsplit_once('/').map_or(target, |(folder, _)| folder);
        return ("model-config".to_string(), folder.to_string());
    }
    let first = plan.labels.get(labels::MODEL);
    let volume = match target.strip_prefix(MODELS_FOLDER) {
        Some(rest) if first.is_some_and(|name| rest == format!("/{name}")) => "model".to_string(),
        Some(rest) if rest.starts_with('/') => format!("model-{index}"),
        _ => format!("data-{index}"),
    };
    (volume, target.to_string())
}
