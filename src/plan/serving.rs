//! `tfimg serve`'s decisions: the model's name (from `--name` or the folder), which
//! entries of MODEL_DIR are servable versions, where the model lands in the container,
//! what the model server's status says, and the `curl` line printed once it answers,
//! with an example body shaped like the signature's inputs. Pure: the use case lists the
//! folder and asks the server.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::input::source::printable;
use crate::input::InputError;
use crate::spec::resolved::MODELS_FOLDER;

/// The signature `predict` uses when the request names none (TensorFlow Serving's).
pub const DEFAULT_SIGNATURE: &str = "serving_default";

/// The model server's cap on the rows of one merged model call (`tfimg serve --max-batch`;
/// 1 runs every request alone).
pub const MAX_BATCH_ENV: &str = "TFIMG_SERVING_MAX_BATCH";

/// The memory limit of a model server unless `--memory` (a team member's `memory:`, or
/// the team's `defaults.memory`) says otherwise: 8 GiB. The server takes hostile request
/// bytes, and whatever it was not foreseen to bound must not take the host with it; 8 GiB
/// holds TensorFlow with CUDA's libraries (2 to 3 GiB before any model) and a large model
/// loading (BERT-large's 1.3 GB weights, twice while they load), and leaves most of a
/// 16 GiB workstation alone. The server itself keeps its request bodies to an eighth of
/// its limit (`serving.py`'s BODY_BUDGET).
pub const DEFAULT_MEMORY: i64 = 8 * 1024 * 1024 * 1024;

/// `--max-batch` as written: digits only (the server refuses a sign or spaces), from 1.
/// A team member's `max_batch:` is a YAML number, checked in `team::serving`.
pub fn parse_max_batch(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>().ok().filter(|rows| *rows > 0)
}

/// The files that make a folder a SavedModel.
pub const SAVED_MODEL_FILES: &[&str] = &["saved_model.pb", "saved_model.pbtxt"];

/// A model name the server and its URLs take: letters, digits, `.`, `_`, `-`, starting
/// with a letter or digit (at most 64).
pub fn check_model_name(name: &str, from_folder: bool) -> Result<(), InputError> {
    if valid_model_name(name) {
        return Ok(());
    }
    let (message, hint) = match from_folder {
        true => (
            format!("the folder name `{name}` is not a valid model name"),
            "give the model a name with `--name`: letters, digits, `.`, `_` and `-`, starting with a letter or digit",
        ),
        false => (
            format!("`--name {name}` is not a valid model name"),
            "use letters, digits, `.`, `_` and `-`, starting with a letter or digit (at most 64)",
        ),
    };
    Err(InputError::new(printable(&message).into_owned(), hint))
}

/// Whether the server and its URLs take `name` as a model's name.
pub fn valid_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The version a folder entry stands for: a number (TensorFlow Serving's layout,
/// `MODEL_DIR/1/saved_model.pb`).
pub fn version_of(entry: &str) -> Option<u64> {
    (!entry.is_empty() && entry.bytes().all(|b| b.is_ascii_digit()))
        .then(|| entry.parse().ok())
        .flatten()
}

/// A model folder without a servable version (`what`: how the message names it, such as
/// ``MODEL_DIR `./export` ``): what is wrong and how to fix it.
pub fn no_version(what: &str, entries: &[String]) -> InputError {
    let detail = match entries.is_empty() {
        true => "it is empty".to_string(),
        false if entries.iter().any(|entry| version_of(entry).is_some()) => {
            "its numbered folders hold no `saved_model.pb`".to_string()
        }
        false => "it has no numbered version folder".to_string(),
    };
    InputError::new(
        printable(&format!("{what}: {detail}")).into_owned(),
        "save the model into a numbered folder, as TensorFlow Serving reads it: `tf.saved_model.save(model, \"MODEL_DIR/1\")` (or `model.save(\"MODEL_DIR/1\")`)",
    )
}

/// Where the model's folder appears in the serving container.
pub fn model_target(name: &str) -> String {
    format!("{MODELS_FOLDER}/{name}")
}

/// What the model server says about a model (`GET /v1/models/NAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelState {
    /// A version answers.
    Available { version: String },
    /// Not yet (loading, or not found yet).
    Waiting,
    /// The newest version failed to load, and none is served.
    Failed { message: String },
}

#[derive(Deserialize)]
struct StatusAnswer {
    model_version_status: Vec<VersionStatus>,
}

#[derive(Deserialize)]
struct VersionStatus {
    version: String,
    state: String,
    #[serde(default)]
    status: ErrorStatus,
}

#[derive(Default, Deserialize)]
struct ErrorStatus {
    #[serde(default)]
    error_message: String,
}

/// Reads a status answer: any version `AVAILABLE` is ready; only failed ones are a
/// failure; anything else (another status, not JSON) is still waiting.
pub fn model_state(status: u16, body: &[u8]) -> ModelState {
    if status != 200 {
        return ModelState::Waiting;
    }
    let Ok(answer) = serde_json::from_slice::<StatusAnswer>(body) else {
        return ModelState::Waiting;
    };
    let versions = &answer.model_version_status;
    if let Some(available) = versions.iter().find(|v| v.state == "AVAILABLE") {
        return ModelState::Available {
            version: available.version.clone(),
        };
    }
    match versions.iter().find(|v| !v.status.error_message.is_empty()) {
        Some(failed) if versions.iter().all(|v| v.state == "END") => ModelState::Failed {
            message: format!(
                "version {}: {}",
                failed.version, failed.status.error_message
            ),
        },
        _ => ModelState::Waiting,
    }
}

#[derive(Deserialize)]
struct Metadata {
    metadata: SignatureMap,
}

#[derive(Deserialize)]
struct SignatureMap {
    signature_def: Signatures,
}

#[derive(Deserialize)]
struct Signatures {
    signature_def: BTreeMap<String, Signature>,
}

#[derive(Deserialize)]
struct Signature {
    inputs: BTreeMap<String, TensorInfo>,
}

#[derive(Deserialize)]
struct TensorInfo {
    dtype: String,
    tensor_shape: Shape,
}

#[derive(Deserialize)]
struct Shape {
    #[serde(default)]
    dim: Vec<Dim>,
}

#[derive(Deserialize)]
struct Dim {
    size: String,
}

/// A `predict` body with one instance shaped like the default signature's inputs (zeros,
/// `""` for strings; an unknown dimension other than the batch one counts 1); `None`
/// when the metadata has no such signature.
pub fn example_body(metadata: &[u8]) -> Option<String> {
    let metadata: Metadata = serde_json::from_slice(metadata).ok()?;
    let signature = metadata
        .metadata
        .signature_def
        .signature_def
        .get(DEFAULT_SIGNATURE)?;
    let values: Vec<(String, serde_json::Value)> = signature
        .inputs
        .iter()
        .map(|(name, info)| (name.clone(), example_value(info)))
        .collect();
    let instance = match values.as_slice() {
        [(_, value)] => value.clone(),
        _ => serde_json::Value::Object(values.into_iter().collect()),
    };
    Some(serde_json::json!({ "instances": [instance] }).to_string())
}

/// One instance of a tensor: its shape without the batch dimension, filled.
fn example_value(info: &TensorInfo) -> serde_json::Value {
    let leaf = match info.dtype.as_str() {
        "DT_STRING" => serde_json::json!(""),
        "DT_BOOL" => serde_json::json!(false),
        "DT_FLOAT" | "DT_DOUBLE" | "DT_HALF" | "DT_BFLOAT16" => serde_json::json!(0.0),
        _ => serde_json::json!(0),
    };
    let sizes: Vec<usize> = info
        .tensor_shape
        .dim
        .iter()
        .skip(1)
        .map(|dim| dim.size.parse::<i64>().ok().filter(|size| *size > 0))
        .map(|size| size.map_or(1, |size| size.min(64) as usize))
        .collect();
    sizes.iter().rev().fold(leaf, |inner, size| {
        serde_json::Value::Array(vec![inner; *size])
    })
}

/// The ready-to-run `curl` line for `predict`.
pub fn curl_line(url: &str, body: &str) -> String {
    format!("curl -s -X POST {url}:predict -d '{body}'")
}

#[cfg(test)]
mod tests;
