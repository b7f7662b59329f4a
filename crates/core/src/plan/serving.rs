//! `tfimg serve`'s decisions: the model's name (from `--name` or the folder), which
//! entries of MODEL_DIR are servable versions, where the model lands in the container,
//! what the model server's status says, and the request printed once it answers (a
//! `curl` line with an example body shaped like the default signature's inputs, or why
//! none can be printed). Pure: the use case lists the folder and asks the server.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::input::source::printable;
use crate::input::InputError;
use crate::spec::resolved::MODELS_FOLDER;
use crate::spec::syntax::valid_docker_name;

/// The signature `predict` uses when the request names none (TensorFlow Serving's).
pub const DEFAULT_SIGNATURE: &str = "serving_default";

/// The model server's cap on the rows of one merged model call (`tfimg serve --max-batch`;
/// 1 runs every request alone).
pub const MAX_BATCH_ENV: &str = "TFIMG_SERVING_MAX_BATCH";

/// `tfimg serve --enable-batching`: TensorFlow Serving's batching parameters, as JSON
/// (`batching::Batching::env_value`); the server batches as TensorFlow Serving does.
pub const BATCHING_ENV: &str = "TFIMG_SERVING_BATCHING";

/// `tfimg serve --grpc-channel-arguments`: gRPC core channel arguments for the model
/// server's gRPC port, as JSON (`[["grpc.max_connection_age_ms", 2000], ...]`), after its own.
pub const GRPC_CHANNEL_ARGUMENTS_ENV: &str = "TFIMG_SERVING_GRPC_CHANNEL_ARGUMENTS";

/// `tfimg serve --model-config-poll SECONDS`: how often the model server rereads its model
/// config file; `0` reads it once, at start (the server's own 1 s otherwise).
pub const MODEL_CONFIG_POLL_ENV: &str = "TFIMG_SERVING_MODEL_CONFIG_POLL";

/// `tfimg serve --allow-reload-config`: the model server answers gRPC's
/// `HandleReloadConfigRequest` when this variable is `1` (refused, UNIMPLEMENTED, otherwise).
pub const ALLOW_RELOAD_CONFIG_ENV: &str = "TFIMG_SERVING_ALLOW_RELOAD_CONFIG";

/// The memory limit of a model server unless `--memory` (a team member's `memory:`, or
/// the team's `defaults.memory`) says otherwise: 8 GiB. The server takes hostile request
/// bytes, and whatever it was not foreseen to bound must not take the host with it; 8 GiB
/// holds TensorFlow with CUDA's libraries (2 to 3 GiB before any model) and a large model
/// loading (BERT-large's 1.3 GB weights, twice while they load), and leaves most of a
/// 16 GiB workstation alone. The server itself keeps its request bodies to an eighth of
/// its limit (the model server's BODY_BUDGET, `tfimg_serving/settings.py`).
pub const DEFAULT_MEMORY: i64 = 8 * 1024 * 1024 * 1024;

/// `--max-batch` as written: digits only (the server refuses a sign or spaces), from 1.
/// A team member's `max_batch:` is a YAML number, checked in `team::serving`.
pub fn parse_max_batch(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>().ok().filter(|rows| *rows > 0)
}

/// `tfimg serve`'s flags as typed, each checked with the error that names it.
pub mod flags {
    use crate::input::InputError;

    /// `-p` or `--grpc-port` (`flag`) for the `api`'s host port: 1 to 65535.
    pub fn port(text: &str, flag: &str, api: &str, example: u16) -> Result<u16, InputError> {
        text.parse::<u16>().ok().filter(|port| *port > 0).ok_or_else(|| {
            InputError::new(
                format!("`{flag} {text}` is not a port"),
                format!("give the host port for the {api} API, from 1 to 65535, such as `{flag} {example}`"),
            )
        })
    }

    /// `--max-batch ROWS`.
    pub fn max_batch(text: &str) -> Result<u32, InputError> {
        super::parse_max_batch(text).ok_or_else(|| {
            InputError::new(
                format!("`--max-batch {text}` is not a number of rows"),
                "give a whole number of rows from 1 (every request alone), such as `--max-batch 64`",
            )
        })
    }

    /// The most `key=value` pairs `--grpc-channel-arguments` takes, and its longest text.
    pub const MAX_CHANNEL_ARGUMENTS: usize = 64;
    pub const MAX_CHANNEL_ARGUMENTS_BYTES: usize = 4096;

    /// `--grpc-channel-arguments ARGS`, TensorFlow Serving's `--grpc_channel_arguments`:
    /// `key=value` pairs separated by commas, each key a gRPC core channel argument
    /// (`grpc.` and lowercase letters, digits, `.`, `_`, `-`: gRPC ignores a key it does not
    /// know, so a typo is caught here). A value that is a whole number fitting a C `int` is
    /// given to gRPC as one, any other as text, as TensorFlow Serving gives them. As JSON
    /// for the server (`GRPC_CHANNEL_ARGUMENTS_ENV`).
    pub fn grpc_channel_arguments(text: &str) -> Result<String, InputError> {
        let shown = crate::input::source::printable(&text.chars().take(200).collect::<String>())
            .into_owned();
        let bad = |what: String| {
            InputError::new(
                what,
                "give gRPC channel arguments as `key=value` pairs separated by commas, as TensorFlow Serving takes them: `--grpc-channel-arguments grpc.max_connection_age_ms=2000,grpc.keepalive_time_ms=30000`",
            )
        };
        if text.len() > MAX_CHANNEL_ARGUMENTS_BYTES {
            return Err(bad(format!(
                "`--grpc-channel-arguments` is over {MAX_CHANNEL_ARGUMENTS_BYTES} bytes"
            )));
        }
        let pairs: Vec<&str> = text.split(',').collect();
        if pairs.len() > MAX_CHANNEL_ARGUMENTS {
            return Err(bad(format!(
                "`--grpc-channel-arguments` has {} pairs, over {MAX_CHANNEL_ARGUMENTS}",
                pairs.len()
            )));
        }
        let mut arguments = Vec::new();
        for pair in pairs {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(bad(format!(
                    "`--grpc-channel-arguments {shown}`: `{}` is no `key=value` pair",
                    crate::input::source::printable(pair)
                )));
            };
            let known = key.strip_prefix("grpc.").is_some_and(|rest| {
                !rest.is_empty()
                    && rest.bytes().all(|byte| {
                        byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"._-".contains(&byte)
                    })
            });
            if !known {
                return Err(bad(format!(
                    "`--grpc-channel-arguments {shown}`: `{}` is not a gRPC channel argument (they start with `grpc.`)",
                    crate::input::source::printable(key)
                )));
            }
            let value = match value.parse::<i32>() {
                Ok(number) if !value.starts_with('+') => serde_json::json!(number),
                _ => serde_json::json!(value),
            };
            arguments.push(serde_json::json!([key, value]));
        }
        Ok(serde_json::Value::Array(arguments).to_string())
    }

    /// `--model-config-poll SECONDS`, TensorFlow Serving's
    /// `--model_config_file_poll_wait_seconds`: whole seconds, 0 to read the file once.
    pub fn model_config_poll(text: &str) -> Result<u32, InputError> {
        let digits = !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
        digits.then(|| text.parse::<u32>().ok()).flatten().filter(|seconds| *seconds <= 86_400).ok_or_else(|| {
            InputError::new(
                format!("`--model-config-poll {}` is not a number of seconds", crate::input::source::printable(text)),
                "give whole seconds from 0 (read the model config once, at start) to 86400, such as `--model-config-poll 60`",
            )
        })
    }

    /// `--allow-reload-config` needs `--model-config`: a reload replaces the model config in
    /// force, and MODEL_DIR serves none (nor names a `base_path` a reload could look up).
    pub fn allow_reload_config(allow: bool, model_config: bool) -> Result<(), InputError> {
        match allow && !model_config {
            true => Err(InputError::new(
                "`--allow-reload-config` needs `--model-config`: `HandleReloadConfigRequest` replaces a model config, and MODEL_DIR has none",
                "serve a model config file (`tfimg serve --model-config ./models.config --allow-reload-config`), or leave the flag out",
            )),
            false => Ok(()),
        }
    }

    /// What is served, as typed: MODEL_DIR, or `--model-config FILE` (clap keeps them
    /// apart); never empty.
    pub fn source<'a>(
        model_dir: Option<&'a str>,
        model_config: Option<&'a str>,
    ) -> Result<&'a str, InputError> {
        let (shown, what, hint) = match model_config {
            Some(file) => (file, "--model-config", "give TensorFlow Serving's model config file (`--model-config ./models.config`)"),
            None => (
                model_dir.unwrap_or_default(),
                "MODEL_DIR",
                "give the folder that holds the model's numbered versions (`MODEL_DIR/1/saved_model.pb`)",
            ),
        };
        match shown.is_empty() {
            true => Err(InputError::new(format!("{what} is empty"), hint)),
            false => Ok(shown),
        }
    }
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
    name.len() <= 64 && valid_docker_name(name)
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

/// MODEL_DIR given as one of its own version folders (`./export/fraud/1`, which holds the
/// SavedModel): the folder above it, as the user wrote it, is the one to serve.
pub fn version_folder_given(shown: &str) -> InputError {
    let trimmed = shown.trim_end_matches('/');
    let parent = match trimmed.rsplit_once('/') {
        Some(("", _)) => "/",
        Some((parent, _)) => parent,
        None => "..",
    };
    InputError::new(
        printable(&format!("MODEL_DIR `{shown}` is a version folder of the model (it holds `saved_model.pb` and its name is the version number)")).into_owned(),
        printable(&format!("serve the folder that holds the numbered versions: `tfimg serve {parent}`")).into_owned(),
    )
}

/// `--model-config`: the server's variable naming the model config file in the container,
/// where the file is mounted read-only, and the variable mapping each `base_path` to where
/// its folder is mounted (JSON: `base_path_key` → `/models/NAME`).
pub const MODEL_CONFIG_ENV: &str = "TFIMG_SERVING_MODEL_CONFIG";
pub const MODEL_CONFIG_TARGET: &str = "/etc/tfimg-serving/models.config";
pub const BASE_PATHS_ENV: &str = "TFIMG_SERVING_BASE_PATHS";

/// A `base_path` as the server looks it up: without trailing `/` (`/srv/m/` and `/srv/m`
/// name one folder), as the model server's `container_path` (`tfimg_serving/model_config.py`) does.
pub fn base_path_key(base_path: &str) -> String {
    match base_path.trim_end_matches('/') {
        "" => "/".to_string(),
        trimmed => trimmed.to_string(),
    }
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
    #[serde(default)]
    method_name: String,
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

/// What `serve` prints for a user to try the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TryRequest {
    /// A command line whose answer is the model's prediction for one instance.
    Command(String),
    /// Why no such command can be printed.
    Unavailable(String),
}

/// An example body up to this size is written out in the `curl` line; a larger one (an
/// image's 784 values and more) is made by python3 and piped to curl instead: written out
/// it would fill the terminal, and one argument of a command line holds at most 128 KiB.
pub const LITERAL_BODY_BYTES: usize = 512;

/// The request to try on the model at `url` (its status URL), from the server's
/// `metadata` answer: a `predict` of one instance shaped like the default signature's
/// inputs (zeros, `""` for strings, `false` for booleans; an unknown dimension other than
/// the batch one counts 1), or why none can be printed.
pub fn try_request(url: &str, metadata: &[u8]) -> TryRequest {
    let signature = match default_signature(url, metadata) {
        Ok(signature) => signature,
        Err(why) => return TryRequest::Unavailable(why),
    };
    let instance = |value: fn(&TensorInfo) -> String| match signature.inputs.len() {
        1 => value(signature.inputs.values().next().unwrap()),
        _ => {
            let fields: Vec<String> = (signature.inputs.iter())
                .map(|(name, info)| format!("{}:{}", json_text(name), value(info)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
    };
    let body = format!("{{\"instances\":[{}]}}", instance(json_value));
    let predict = format!("{url}:predict");
    let command = match body.len() <= LITERAL_BODY_BYTES {
        true => format!("curl -s -X POST {predict} -d {}", quoted(&body)),
        false => {
            let program = format!(
                "import json; print(json.dumps({{\"instances\": [{}]}}))",
                instance(python_value)
            );
            format!(
                "python3 -c {} | curl -s -X POST {predict} -d @-",
                quoted(&program)
            )
        }
    };
    TryRequest::Command(command)
}

/// The gRPC request to try on model `model` at `address` (`127.0.0.1:8500`): Predict
/// through TensorFlow Serving's own client (`pip install tensorflow-serving-api`), with
/// the same instance of zeros as `try_request`'s, or why none can be printed.
pub fn try_grpc(address: &str, model: &str, url: &str, metadata: &[u8]) -> TryRequest {
    let signature = match default_signature(url, metadata) {
        Ok(signature) => signature,
        Err(why) => return TryRequest::Unavailable(why),
    };
    let inputs: Vec<String> = (signature.inputs.iter())
        .map(|(name, info)| {
            let shape: Vec<String> = std::iter::once(1)
                .chain(instance_sizes(info))
                .map(|size| size.to_string())
                .collect();
            let dtype = info.dtype.strip_prefix("DT_").unwrap_or(&info.dtype);
            format!(
                "r.inputs[{}].CopyFrom(tf.make_tensor_proto(tf.zeros([{}], {})))",
                json_text(name),
                shape.join(", "),
                json_text(&dtype.to_ascii_lowercase())
            )
        })
        .collect();
    let program = format!(
        "import grpc, tensorflow as tf; from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc as api; r = predict_pb2.PredictRequest(); r.model_spec.name = {}; {}; o = api.PredictionServiceStub(grpc.insecure_channel({})).Predict(r, 30).outputs; print({{k: tf.make_ndarray(v).tolist() for k, v in o.items()}})",
        json_text(model),
        inputs.join("; "),
        json_text(address)
    );
    TryRequest::Command(format!("python3 -c {}", quoted(&program)))
}

/// The default signature in the server's `metadata` answer for the model at `url`, or why
/// no request to try can be made from it.
fn default_signature(url: &str, metadata: &[u8]) -> Result<Signature, String> {
    let Ok(metadata) = serde_json::from_slice::<Metadata>(metadata) else {
        return Err("the server's metadata for the model is unreadable".into());
    };
    let mut signatures = metadata.metadata.signature_def.signature_def;
    let Some(signature) = signatures.remove(DEFAULT_SIGNATURE) else {
        let names: Vec<String> = signatures
            .keys()
            .filter(|name| !name.starts_with("__"))
            .map(|name| format!("`{name}`"))
            .collect();
        return Err(format!(
            "the model has no `{DEFAULT_SIGNATURE}` signature; name one of its signatures ({}) in a request's `signature_name`",
            names.join(", ")
        ));
    };
    for verb in ["classify", "regress"] {
        if signature.method_name == format!("tensorflow/serving/{verb}") {
            return Err(format!(
                "its default signature takes tf.Example features, which its metadata does not name: POST `{{\"examples\": [{{\"FEATURE\": VALUE}}]}}` to {url}:{verb}"
            ));
        }
    }
    Ok(signature)
}

/// An instance's value of the tensor as JSON: its shape without the batch dimension,
/// filled with zeros (`[[0.0,0.0],[0.0,0.0]]`).
fn json_value(info: &TensorInfo) -> String {
    instance_sizes(info)
        .iter()
        .rev()
        .fold(leaf(info).0.to_string(), |inner, size| {
            format!("[{}]", vec![inner; *size].join(","))
        })
}

/// The same value as a Python expression (`[[0.0] * 2] * 2`), as short for 150 528
/// values as for 4.
fn python_value(info: &TensorInfo) -> String {
    instance_sizes(info)
        .iter()
        .rev()
        .fold(leaf(info).1.to_string(), |inner, size| match size {
            1 => format!("[{inner}]"),
            _ => format!("[{inner}] * {size}"),
        })
}

/// The tensor's zero in JSON and in Python.
fn leaf(info: &TensorInfo) -> (&'static str, &'static str) {
    match info.dtype.as_str() {
        "DT_STRING" => ("\"\"", "\"\""),
        "DT_BOOL" => ("false", "False"),
        "DT_FLOAT" | "DT_DOUBLE" | "DT_HALF" | "DT_BFLOAT16" => ("0.0", "0.0"),
        _ => ("0", "0"),
    }
}

/// The sizes of one instance: the tensor's dimensions without the batch one, an unknown
/// one counting 1.
fn instance_sizes(info: &TensorInfo) -> Vec<usize> {
    (info.tensor_shape.dim.iter().skip(1))
        .map(|dim| dim.size.parse::<usize>().ok().filter(|size| *size > 0))
        .map(|size| size.unwrap_or(1))
        .collect()
}

/// A name as a JSON string, which Python reads as the same string.
fn json_text(name: &str) -> String {
    serde_json::Value::String(name.to_string()).to_string()
}

/// `text` as one word of a POSIX shell's command line.
fn quoted(text: &str) -> String {
    shlex::try_quote(text)
        .map(|word| word.into_owned())
        .unwrap_or_else(|_| "''".to_string())
}

pub mod saved_model;

#[cfg(test)]
mod tests;
