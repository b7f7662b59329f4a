//! TensorFlow Serving's REST API as its page describes it
//! (`tensorflow_serving/g3doc/api_rest.md`), item by item, against `tfimg serve`. One
//! SavedModel (SAVE_CONFORMANCE) is saved in cpu-headless and served once for the file;
//! each documented behaviour is one named check of real HTTP requests to it. Every check
//! runs, and the ones that fail are listed together by name, so one run shows all that
//! broke. Where the page and TensorFlow Serving's code (`http_rest_api_handler.cc`,
//! `http_rest_api_util.cc`, `json_tensor.cc`) differ, the code wins: classify and regress
//! answer `results` (the page's examples say `result`), and an empty `signature_name` is
//! the default signature.
//!
//! The behaviours, as the checks name them:
//! - errors: every error is a JSON object with `error` only (checked on each error below)
//! - status: every version's state; `/versions/N` that version's; a version not served
//!   404; a version past int64 400 "Failed to convert version"; `/labels/L` every
//!   version's; an unknown model 404; no model name 400
//! - paths: the API's words in any case (`/V1/MODELS/m/VERSIONS/1`)
//! - metadata: model_spec and every signature_def, `__saved_model_init_op` included;
//!   `/versions/N/metadata`; `/labels/L/metadata` 400 "Unrecognized servable version label"
//! - classify: `results` of [label, score] pairs per example; "" as the label of a model
//!   without labels
//! - regress: `results`, one value per example in order (the page's regress example)
//! - context: features shared by every example
//! - features: numbers, strings and {"b64": ...}; true and false as int64 1 and 0; values
//!   of two kinds in one feature refused; a {"b64": ...} that is not base64 refused
//! - examples: an empty list refused
//! - predict: the row format with one input (the page's predict example) and with named
//!   inputs (one object per instance, predictions one object each); the columnar format
//!   with named inputs (outputs an object) and with one (its value); columnar inputs of
//!   different 0-th dimensions; a columnar key no input has ignored; `instances` with
//!   `inputs` refused; a row object whose keys are not the inputs refused
//! - signature_name: optional, and "" is `serving_default` too; an unknown one 400,
//!   naming it and the model's signatures
//! - versions: `/versions/N:predict`, a version not served 404; `/labels/L:predict` 400
//!   "Unrecognized servable version label"; an unknown model 404 (the page's example)
//! - JSON mapping: DT_BOOL true/false; DT_STRING strings; whole numbers within their
//!   dtype, one outside refused naming the input and the value (int32: 2**32 + 1, 2**40);
//!   a fraction for an int refused; DT_FLOAT numbers, NaN, Infinity, -Infinity and
//!   exponent notation; true/false refused for floats and ints; float32 precision
//!   (1435774380 is 1435774336)
//! - binary values: {"b64": ...} inputs decoded, and refused when not base64; outputs
//!   named `*_bytes` written as {"b64": ...}
//!
//! TF1 SavedModels: the page's Example section on TensorFlow Serving's own
//! `saved_model_half_plus_three` (tests/fixtures), and a `half_plus_two` made with
//! `tf.compat.v1` here. Served from a folder, without a model config file, a label is
//! answered as TensorFlow Serving answers one then, which the checks above assert: the
//! status for every version, 400 "Unrecognized servable version label" elsewhere. Labels
//! that name versions, and many models at once, are serve_models.rs's (a model config
//! file); gRPC is serve_grpc.rs's.

mod common;

use common::http;
use common::serving::{error_of, save_and_serve, serve_half_plus_three};
use serde_json::{json, Value};

/// A TF2 model with the signatures of TensorFlow Serving's `saved_model_half_plus_three`
/// (`serving_default`: y = x / 2 + 3; `tensorflow/serving/regress` and
/// `tensorflow/serving/classify` on the feature `x`; regress adds 10 times the int64
/// feature `flag`), and one signature for each JSON mapping and request format: `labelled`
/// (classes `no`, `yes`, the softmax of `x`'s 2 floats), `ints` (int32 `b`, 2 a row),
/// `floats` (float32 `x`, 2 a row), `bools`, `strings` (`text` back as `text` and
/// `text_bytes`), `sensors` (the page's `tag`, `signal` and `sensor`: the tag, and the
/// sums of the others) and `columns` (the sums of `a` and `b`, of any lengths). TensorFlow
/// 2 writes every signature as a predict one: the methods are set in saved_model.pb after.
const SAVE_CONFORMANCE: &str = r#"
import tensorflow as tf
from methods import set_methods

X = {"x": tf.io.FixedLenFeature([1], tf.float32)}
FLAGGED = {"x": tf.io.FixedLenFeature([1], tf.float32),
           "flag": tf.io.FixedLenFeature([1], tf.int64, default_value=[0])}
PAIR = {"x": tf.io.FixedLenFeature([2], tf.float32)}

class Conformance(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def half_plus_three(self, x):
        return {"y": x * 0.5 + 3.0}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def regress(self, inputs):
        features = tf.io.parse_example(inputs, FLAGGED)
        flag = tf.cast(features["flag"], tf.float32)
        return {"outputs": features["x"] * 0.5 + 3.0 + 10.0 * flag}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def classify(self, inputs):
        return {"scores": tf.io.parse_example(inputs, X)["x"] * 0.5 + 3.0}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def labelled(self, inputs):
        x = tf.io.parse_example(inputs, PAIR)["x"]
        classes = tf.tile(tf.constant([["no", "yes"]]), [tf.shape(x)[0], 1])
        return {"classes": classes, "scores": tf.nn.softmax(x)}

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.int32)])
    def ints(self, b):
        return {"b": tf.identity(b)}

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def floats(self, x):
        return {"x": tf.identity(x)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.bool)])
    def bools(self, f):
        return {"f": tf.identity(f)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def strings(self, text):
        return {"text": tf.identity(text), "text_bytes": tf.identity(text)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None, 5], tf.int32),
                                  tf.TensorSpec([None, 2, 2], tf.float32)])
    def sensors(self, tag, signal, sensor):
        return {"tag": tf.identity(tag), "signal": tf.reduce_sum(signal, axis=1),
                "sensor": tf.reduce_sum(sensor, axis=[1, 2])}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def columns(self, a, b):
        return {"a": tf.reduce_sum(a), "b": tf.reduce_sum(b)}

model = Conformance()
path = "/tf/export/conformance/1"
tf.saved_model.save(model, path, signatures={
    "serving_default": model.half_plus_three,
    "tensorflow/serving/regress": model.regress,
    "tensorflow/serving/classify": model.classify,
    "labelled": model.labelled,
    "ints": model.ints, "floats": model.floats, "bools": model.bools, "strings": model.strings,
    "sensors": model.sensors, "columns": model.columns,
})
set_methods(path, {"tensorflow/serving/regress": "tensorflow/serving/regress",
                   "tensorflow/serving/classify": "tensorflow/serving/classify",
                   "labelled": "tensorflow/serving/classify"})
print("saved", flush=True)
"#;

/// The signatures SAVE_CONFORMANCE's model has, as the metadata lists them.
const SIGNATURES: &[&str] = &[
    "__saved_model_init_op",
    "bools",
    "columns",
    "floats",
    "ints",
    "labelled",
    "sensors",
    "serving_default",
    "strings",
    "tensorflow/serving/classify",
    "tensorflow/serving/regress",
];

/// What one check found wrong.
type Outcome = Result<(), String>;

/// The behaviours checked, and those that failed with what went wrong.
#[derive(Default)]
struct Checks {
    count: usize,
    failed: Vec<String>,
}

impl Checks {
    fn check(&mut self, behaviour: &str, outcome: Outcome) {
        self.count += 1;
        if let Err(wrong) = outcome {
            self.failed.push(format!("{behaviour}: {wrong}"));
        }
    }

    /// Fails the test naming every behaviour that failed.
    fn assert_all_passed(&self, what: &str) {
        eprintln!(
            "{what}: {} of {} behaviours pass",
            self.count - self.failed.len(),
            self.count
        );
        assert!(
            self.failed.is_empty(),
            "{} of {} behaviours of {what} fail:\n- {}",
            self.failed.len(),
            self.count,
            self.failed.join("\n- ")
        );
    }
}

/// The model's server, and the requests the checks send it.
struct Server {
    port: u16,
    model: String,
}

impl Server {
    /// `path` with `{m}` standing for the model's name.
    fn path(&self, path: &str) -> String {
        path.replace("{m}", &self.model)
    }

    fn send(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        http(method, self.port, &self.path(path), &[], body)
    }

    /// The answer is `status` with exactly the JSON `wanted`.
    fn answers(&self, method: &str, path: &str, body: &str, status: u16, wanted: Value) -> Outcome {
        let (got, answer) = self.send(method, path, body);
        let parsed: Option<Value> = serde_json::from_str(&answer).ok();
        match got == status && parsed.as_ref() == Some(&wanted) {
            true => Ok(()),
            false => Err(format!(
                "{method} {} {body} answered {got} {answer}, not {status} {wanted}",
                self.path(path)
            )),
        }
    }

    /// `POST path` with `body` is 200 with exactly the JSON `wanted`.
    fn posts(&self, path: &str, body: &str, wanted: Value) -> Outcome {
        self.answers("POST", path, body, 200, wanted)
    }

    /// `POST path` with `body` is 400 with an error holding each of `fragments`.
    fn refuses_post(&self, path: &str, body: &str, fragments: &[&str]) -> Outcome {
        self.refuses("POST", path, body, 400, fragments)
    }

    /// The answer is `status` and a JSON object with `error` only, whose text holds each
    /// of `fragments` (`{m}` standing for the model's name).
    fn refuses(
        &self,
        method: &str,
        path: &str,
        body: &str,
        status: u16,
        fragments: &[&str],
    ) -> Outcome {
        let (got, answer) = self.send(method, path, body);
        let request = format!("{method} {} {body}", self.path(path));
        let parsed: Option<Value> = serde_json::from_str(&answer).ok();
        let only_error = parsed
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(|object| {
                object.len() == 1 && object.get("error").is_some_and(Value::is_string)
            });
        if got != status || !only_error {
            return Err(format!(
                "{request} answered {got} {answer}, not {status} with {{\"error\": ...}}"
            ));
        }
        let error = error_of(&answer);
        match fragments
            .iter()
            .map(|fragment| self.path(fragment))
            .find(|fragment| !error.contains(fragment.as_str()))
        {
            Some(missing) => Err(format!(
                "{request}: the error {error:?} does not say {missing:?}"
            )),
            None => Ok(()),
        }
    }
}

/// At most 300 characters of an answer, for a failure's line.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(300) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

/// The checks of the page's Example section on a model with `saved_model_half_plus_three`'s
/// signatures, served as version `version`.
fn page_example(checks: &mut Checks, server: &Server, version: &str) {
    checks.check(
        "the page's example: the status",
        server.answers(
            "GET",
            "/v1/models/{m}",
            "",
            200,
            json!({"model_version_status": [{"version": version, "state": "AVAILABLE",
                "status": {"error_code": "OK", "error_message": ""}}]}),
        ),
    );
    checks.check(
        "the page's example: predict in the row format with one input",
        server.posts(
            "/v1/models/{m}:predict",
            r#"{"instances": [1.0,2.0,5.0]}"#,
            json!({"predictions": [3.5, 4.0, 5.5]}),
        ),
    );
    checks.check(
        "the page's example: regress on a signature named in `signature_name`, `results` in order",
        server.posts(
            "/v1/models/{m}:regress",
            r#"{"signature_name": "tensorflow/serving/regress", "examples": [{"x": 1.0}, {"x": 2.0}]}"#,
            json!({"results": [3.5, 4.0]}),
        ),
    );
    checks.check(
        "the page's example: an unknown model is 404 `Servable not found for request: Latest(half)`",
        server.answers(
            "POST",
            "/v1/models/half:predict",
            r#"{"instances": [1.0,5.0]}"#,
            404,
            json!({"error": "Servable not found for request: Latest(half)"}),
        ),
    );
}

fn status_api(checks: &mut Checks, server: &Server) {
    let available = json!({"model_version_status": [{"version": "1", "state": "AVAILABLE",
        "status": {"error_code": "OK", "error_message": ""}}]});
    checks.check(
        "status: /versions/N answers that version",
        server.answers(
            "GET",
            "/v1/models/{m}/versions/1",
            "",
            200,
            available.clone(),
        ),
    );
    checks.check(
        "status: a version not served is 404",
        server.refuses(
            "GET",
            "/v1/models/{m}/versions/7",
            "",
            404,
            &["Could not find version 7 of model {m}"],
        ),
    );
    checks.check(
        "status: a version past int64 is 400 `Failed to convert version` (issue 28, item 7)",
        server.refuses(
            "GET",
            "/v1/models/{m}/versions/18446744073709551615",
            "",
            400,
            &["Failed to convert version: 18446744073709551615 to numeric."],
        ),
    );
    checks.check(
        "status: /labels/L answers for every version, no label having one without a model config file (issue 28, item 7)",
        server.answers("GET", "/v1/models/{m}/labels/stable", "", 200, available.clone()),
    );
    checks.check(
        "status: an unknown model is 404",
        server.refuses(
            "GET",
            "/v1/models/no-such-model",
            "",
            404,
            &["Could not find any versions of model no-such-model"],
        ),
    );
    checks.check(
        "status: no model name is 400",
        server.refuses(
            "GET",
            "/v1/models",
            "",
            400,
            &["Missing model name in request."],
        ),
    );
    checks.check(
        "paths: the API's words match in any case, GET /V1/MODELS/m/VERSIONS/1 (issue 28, item 7)",
        server.answers("GET", "/V1/MODELS/{m}/VERSIONS/1", "", 200, available),
    );
    checks.check(
        "paths: the API's words match in any case, POST /V1/Models/m:predict (issue 28, item 7)",
        server.posts(
            "/V1/Models/{m}:predict",
            r#"{"instances": [1.0]}"#,
            json!({"predictions": [3.5]}),
        ),
    );
}

fn metadata_api(checks: &mut Checks, server: &Server) {
    let (status, body) = server.send("GET", "/v1/models/{m}/metadata", "");
    let metadata: Value = serde_json::from_str(&body).unwrap_or_default();
    let signatures = &metadata["metadata"]["signature_def"]["signature_def"];
    let names: Vec<&str> = signatures
        .as_object()
        .map(|map| map.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let default = &signatures["serving_default"];
    let whole = status == 200
        && metadata["model_spec"]
            == json!({"name": server.model, "signature_name": "", "version": "1"})
        && names == SIGNATURES
        && default["method_name"] == "tensorflow/serving/predict"
        && default["inputs"]["x"]["dtype"] == "DT_FLOAT"
        && default["inputs"]["x"]["tensor_shape"]
            == json!({"dim": [{"size": "-1", "name": ""}], "unknown_rank": false})
        && signatures["tensorflow/serving/regress"]["method_name"] == "tensorflow/serving/regress";
    checks.check(
        "metadata: model_spec and every signature_def, `__saved_model_init_op` included (issue 28, item 7)",
        match whole {
            true => Ok(()),
            false => Err(format!("{status} {}", shortened(&body))),
        },
    );
    let (status, body) = server.send("GET", "/v1/models/{m}/versions/1/metadata", "");
    let versioned: Value = serde_json::from_str(&body).unwrap_or_default();
    checks.check(
        "metadata: /versions/N/metadata",
        match status == 200 && versioned == metadata {
            true => Ok(()),
            false => Err(format!("{status} {}", shortened(&body))),
        },
    );
    checks.check(
        "metadata: /labels/L/metadata is 400 `Unrecognized servable version label` (issue 28, item 7)",
        server.refuses(
            "GET",
            "/v1/models/{m}/labels/stable/metadata",
            "",
            400,
            &["Unrecognized servable version label: stable"],
        ),
    );
}

fn classify_and_regress_api(checks: &mut Checks, server: &Server) {
    let regress = "/v1/models/{m}:regress";
    let with = |features: &str| {
        format!(r#"{{"signature_name": "tensorflow/serving/regress", "examples": [{features}]}}"#)
    };
    checks.check(
        "classify: `results` (the page says `result`: the code wins), [label, score] pairs per example",
        server.posts(
            "/v1/models/{m}:classify",
            r#"{"signature_name": "labelled", "examples": [{"x": [3.0, 3.0]}, {"x": [-1.0, -1.0]}]}"#,
            json!({"results": [[["no", 0.5], ["yes", 0.5]], [["no", 0.5], ["yes", 0.5]]]}),
        ),
    );
    checks.check(
        "classify: a model without labels scores with the label \"\"",
        server.posts(
            "/v1/models/{m}:classify",
            r#"{"signature_name": "tensorflow/serving/classify", "examples": [{"x": 1.0}, {"x": 2.0}]}"#,
            json!({"results": [[["", 3.5]], [["", 4.0]]]}),
        ),
    );
    checks.check(
        "context: features shared by every example",
        server.posts(
            regress,
            r#"{"signature_name": "tensorflow/serving/regress", "context": {"x": 2.0}, "examples": [{}, {"flag": 1}]}"#,
            json!({"results": [4.0, 14.0]}),
        ),
    );
    checks.check(
        "features: numbers, strings and {\"b64\": ...}, a value or a list",
        server.posts(
            regress,
            &with(r#"{"x": [1.0], "caption": "seaside", "image": {"b64": "aW1hZ2UgYnl0ZXM="}, "sizes": [1, 2]}"#),
            json!({"results": [3.5]}),
        ),
    );
    checks.check(
        "features: true and false are int64 1 and 0 (issue 28, item 3)",
        server.posts(
            regress,
            &with(r#"{"x": 1.0, "flag": true}"#),
            json!({"results": [13.5]}),
        ),
    );
    checks.check(
        "features: values of two kinds in one feature are refused, [1, 2.5] (issue 28, item 4)",
        server.refuses_post(
            regress,
            &with(r#"{"x": 1.0, "n": [1, 2.5]}"#),
            &["feature `n`"],
        ),
    );
    checks.check(
        "features: a {\"b64\": ...} that is not base64 is refused (issue 28, item 2)",
        server.refuses_post(
            regress,
            &with(r#"{"x": 1.0, "image": {"b64": "Zm9v!!!"}}"#),
            &["feature `image`", "base64"],
        ),
    );
    checks.check(
        "examples: an empty list is refused",
        server.refuses_post(regress, &with(""), &["examples"]),
    );
}

fn predict_api(checks: &mut Checks, server: &Server) {
    let predict = "/v1/models/{m}:predict";
    let sensors_rows = r#"{"signature_name": "sensors", "instances": [
        {"tag": "foo", "signal": [1, 2, 3, 4, 5], "sensor": [[1, 2], [3, 4]]},
        {"tag": "bar", "signal": [3, 4, 1, 2, 5], "sensor": [[4, 5], [6, 8]]}]}"#;
    let sensors_columns = r#"{"signature_name": "sensors", "inputs": {
        "tag": ["foo", "bar"], "signal": [[1, 2, 3, 4, 5], [3, 4, 1, 2, 5]],
        "sensor": [[[1, 2], [3, 4]], [[4, 5], [6, 8]]]}}"#;
    checks.check(
        "predict: the row format with named inputs, one object per instance; predictions one object each",
        server.posts(
            predict,
            sensors_rows,
            json!({"predictions": [{"tag": "foo", "signal": 15, "sensor": 10.0},
                {"tag": "bar", "signal": 15, "sensor": 23.0}]}),
        ),
    );
    checks.check(
        "predict: the columnar format with named inputs; outputs an object of named outputs",
        server.posts(
            predict,
            sensors_columns,
            json!({"outputs": {"tag": ["foo", "bar"], "signal": [15, 15], "sensor": [10.0, 23.0]}}),
        ),
    );
    checks.check(
        "predict: the columnar format with one input, `inputs` its value and `outputs` the output's",
        server.posts(predict, r#"{"inputs": [1.0, 2.0]}"#, json!({"outputs": [3.5, 4.0]})),
    );
    checks.check(
        "predict: columnar inputs need not share their 0-th dimension",
        server.posts(
            predict,
            r#"{"signature_name": "columns", "inputs": {"a": [1.0, 2.0], "b": [1.0, 2.0, 3.0]}}"#,
            json!({"outputs": {"a": 3.0, "b": 6.0}}),
        ),
    );
    checks.check(
        "predict: a columnar key no input has is ignored (issue 28, item 7)",
        server.posts(
            predict,
            r#"{"inputs": {"x": [1.0], "extra": [[1, 2]]}}"#,
            json!({"outputs": [3.5]}),
        ),
    );
    checks.check(
        "predict: `instances` and `inputs` together are refused",
        server.refuses_post(
            predict,
            r#"{"instances": [1.0], "inputs": [1.0]}"#,
            &["instances"],
        ),
    );
    checks.check(
        "predict: a row object whose keys are not the inputs is refused",
        server.refuses_post(
            predict,
            r#"{"signature_name": "sensors", "instances": [{"tag": "foo", "signal": [1, 2, 3, 4, 5]}]}"#,
            &["sensor"],
        ),
    );
    checks.check(
        "signature_name: optional, `serving_default` when absent",
        server.posts(
            predict,
            r#"{"instances": [1.0]}"#,
            json!({"predictions": [3.5]}),
        ),
    );
    checks.check(
        "signature_name: \"\" is `serving_default` too (issue 28, item 5)",
        server.posts(
            predict,
            r#"{"signature_name": "", "instances": [1.0]}"#,
            json!({"predictions": [3.5]}),
        ),
    );
    let listed: Vec<String> = SIGNATURES[1..]
        .iter()
        .map(|name| format!("`{name}`"))
        .collect();
    let unknown = format!(
        "Serving signature name: \"nope\" not found in signature def; the model's signatures are {}",
        listed.join(", ")
    );
    checks.check(
        "signature_name: an unknown one is 400, naming it and the model's signatures (issue 28, item 6)",
        server.refuses_post(
            predict,
            r#"{"signature_name": "nope", "instances": [1.0]}"#,
            &[&unknown],
        ),
    );
    checks.check(
        "versions: /versions/N:predict",
        server.posts(
            "/v1/models/{m}/versions/1:predict",
            r#"{"instances": [2.0]}"#,
            json!({"predictions": [4.0]}),
        ),
    );
    checks.check(
        "versions: a version not served is 404",
        server.refuses(
            "POST",
            "/v1/models/{m}/versions/2:predict",
            r#"{"instances": [2.0]}"#,
            404,
            &["Servable not found for request: Specific({m}, 2)"],
        ),
    );
    checks.check(
        "versions: /labels/L:predict is 400 `Unrecognized servable version label` (issue 28, item 7)",
        server.refuses_post(
            "/v1/models/{m}/labels/stable:predict",
            r#"{"instances": [2.0]}"#,
            &["Unrecognized servable version label: stable"],
        ),
    );
}

fn json_mapping(checks: &mut Checks, server: &Server) {
    let predict = "/v1/models/{m}:predict";
    let ints =
        |values: &str| format!(r#"{{"signature_name": "ints", "inputs": {{"b": {values}}}}}"#);
    let floats = |values: &str| format!(r#"{{"signature_name": "floats", "instances": {values}}}"#);
    let strings =
        |values: &str| format!(r#"{{"signature_name": "strings", "instances": {values}}}"#);
    checks.check(
        "DT_BOOL: true and false",
        server.posts(
            predict,
            r#"{"signature_name": "bools", "instances": [true, false]}"#,
            json!({"predictions": [true, false]}),
        ),
    );
    checks.check(
        "DT_STRING: strings",
        server.posts(
            predict,
            r#"{"signature_name": "strings", "inputs": {"text": ["Hello World!"]}}"#,
            json!({"outputs": {"text": ["Hello World!"], "text_bytes": [{"b64": "SGVsbG8gV29ybGQh"}]}}),
        ),
    );
    checks.check(
        "DT_INT32: whole numbers within int32",
        server.posts(
            predict,
            &ints("[[2147483647, -2147483648]]"),
            json!({"outputs": [[2147483647, -2147483648]]}),
        ),
    );
    checks.check(
        "DT_INT32: 2**32 + 1 is refused, naming the input and the value (issue 28, item 1)",
        server.refuses_post(
            predict,
            &ints("[[4294967297, -4294967296]]"),
            &["input `b`", "4294967297", "int32"],
        ),
    );
    checks.check(
        "DT_INT32: 2**40 is refused, naming the input and the value (issue 28, item 1)",
        server.refuses_post(
            predict,
            &ints("[[1099511627776, 0]]"),
            &["input `b`", "1099511627776"],
        ),
    );
    checks.check(
        "DT_INT32: a number with a fraction is refused",
        server.refuses_post(predict, &ints("[[1, 2.5]]"), &["input `b`"]),
    );
    checks.check(
        "DT_INT32: true and false are refused (issue 28, item 3)",
        server.refuses_post(predict, &ints("[[false, 1]]"), &["input `b`"]),
    );
    checks.check(
        "DT_FLOAT: true and false are refused (issue 28, item 3)",
        server.refuses_post(predict, &floats("[[true, 1.0]]"), &["input `x`"]),
    );
    let (status, body) = server.send(
        "POST",
        predict,
        &floats("[[NaN, Infinity], [-Infinity, 1.5e3]]"),
    );
    let compact: String = body.split_whitespace().collect();
    checks.check(
        "DT_FLOAT: numbers, NaN, Infinity, -Infinity and exponent notation",
        match (status, compact.as_str()) {
            (200, r#"{"predictions":[[NaN,Infinity],[-Infinity,1500.0]]}"#) => Ok(()),
            _ => Err(format!("{status} {body}")),
        },
    );
    let (status, body) = server.send("POST", predict, &floats("[[1435774380, 0]]"));
    let value =
        serde_json::from_str::<Value>(&body).unwrap_or_default()["predictions"][0][0].as_f64();
    checks.check(
        "floating point precision: 1435774380 as a float32 is 1435774336",
        match status == 200 && value.map(|value| value as f32) == Some(1435774336.0) {
            true => Ok(()),
            false => Err(format!("{status} {body}")),
        },
    );
    checks.check(
        "binary values: a {\"b64\": ...} input is decoded",
        server.posts(
            predict,
            &strings(r#"[{"b64": "aW1hZ2UgYnl0ZXM="}]"#),
            json!({"predictions": [{"text": "image bytes", "text_bytes": {"b64": "aW1hZ2UgYnl0ZXM="}}]}),
        ),
    );
    for bad in ["****", "Zm9v!!!"] {
        checks.check(
            &format!(
                "binary values: {{\"b64\": \"{bad}\"}} is not base64, refused (issue 28, item 2)"
            ),
            server.refuses_post(
                predict,
                &strings(&format!(r#"[{{"b64": "{bad}"}}]"#)),
                &["input `text`", "base64"],
            ),
        );
    }
    checks.check(
        "binary values: outputs named `*_bytes` are {\"b64\": ...}",
        server.posts(
            predict,
            &strings(r#"["\u0000\u00ff"]"#),
            json!({"predictions": [{"text": "\u{0}\u{ff}", "text_bytes": {"b64": "AMO/"}}]}),
        ),
    );
}

/// Every behaviour of the page (but those of issue 31, below) on one served model; the
/// failures are listed together.
#[tokio::test]
async fn tensorflow_serving_s_rest_api_as_its_page_describes_it() {
    let Some(_engine) = common::engine().await else { return };
    let served = save_and_serve(SAVE_CONFORMANCE, "conformance", "conformance");
    let server = Server {
        port: served.port,
        model: served.model.clone(),
    };
    let mut checks = Checks::default();
    page_example(&mut checks, &server, "1");
    status_api(&mut checks, &server);
    metadata_api(&mut checks, &server);
    classify_and_regress_api(&mut checks, &server);
    predict_api(&mut checks, &server);
    json_mapping(&mut checks, &server);
    checks.assert_all_passed("api_rest.md");
    drop(served);
}

/// The page's Example section on TensorFlow Serving's own testdata model: its status
/// names version 123, predict answers [3.5, 4.0, 5.5], regress on
/// `tensorflow/serving/regress` answers [3.5, 4.0], and an unknown model is 404 with the
/// page's error. The model is `tests/fixtures/saved_model_half_plus_three/00000123`,
/// copied from tensorflow/serving's testdata (see the fixture's README): a TF1 SavedModel
/// whose signatures declare shapes its tensors do not have, served through the session.
#[tokio::test]
async fn the_page_s_example_answers_on_tensorflow_serving_s_half_plus_three() {
    let Some(_engine) = common::engine().await else { return };
    let served = serve_half_plus_three();
    let server = Server {
        port: served.port,
        model: served.model.clone(),
    };
    let mut checks = Checks::default();
    page_example(&mut checks, &server, "123");
    checks.assert_all_passed("api_rest.md's Example on saved_model_half_plus_three");
    drop(served);
}

/// A TF1 SavedModel made with `tf.compat.v1` as TensorFlow Serving's testdata generator
/// makes `saved_model_half_plus_two` (written here, not copied): `x` and `x2` parsed from
/// serialized examples fed to the placeholder `tf_example`, `y = 0.5 x + 2`,
/// `y2 = 0.5 x + 3`; predict feeds `x` itself, a tensor that is no placeholder. The
/// signature builder declares `x` as `[?, 1]`.
const SAVE_TF1_HALF_PLUS_TWO: &str = r#"
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()
features = {"x": tf.FixedLenFeature([1], tf.float32),
            "x2": tf.FixedLenFeature([1], tf.float32, default_value=[0.0])}
info = tf.saved_model.utils.build_tensor_info
constants = tf.saved_model.signature_constants


def signature(inputs, outputs, method):
    return tf.saved_model.signature_def_utils.build_signature_def(
        {k: info(v) for k, v in inputs.items()}, {k: info(v) for k, v in outputs.items()}, method)


with tf.Session(graph=tf.Graph()) as session:
    a, b, c = tf.Variable(0.5, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
    serialized = tf.placeholder(tf.string, shape=[None], name="tf_example")
    parsed = tf.parse_example(serialized, features)
    x = tf.identity(parsed["x"], name="x")
    y = tf.identity(a * x + b, name="y")
    y2 = tf.identity(a * x + c, name="y2")
    session.run(tf.global_variables_initializer())
    builder = tf.saved_model.builder.SavedModelBuilder("/tf/export/half_plus_two/1")
    builder.add_meta_graph_and_variables(session, ["serve"], signature_def_map={
        "serving_default": signature({"x": x}, {"y": y}, constants.PREDICT_METHOD_NAME),
        "regress_x_to_y": signature({"inputs": serialized}, {"outputs": y}, constants.REGRESS_METHOD_NAME),
        "regress_x_to_y2": signature({"inputs": serialized}, {"outputs": y2}, constants.REGRESS_METHOD_NAME),
        "classify_x_to_y": signature({"inputs": serialized}, {"scores": y}, constants.CLASSIFY_METHOD_NAME),
    })
    builder.save()
"#;

/// A TF1 model answers as TensorFlow Serving documents `half_plus_two`: predict on
/// `[1.0, 2.0, 5.0]` is `[2.5, 3.0, 4.5]` (its Docker guide), regress and classify run on
/// the serialized examples, and the metadata shows the signatures as declared.
#[tokio::test]
async fn a_tf1_model_answers_predict_regress_classify_and_metadata_as_tf_serving_documents() {
    let Some(_engine) = common::engine().await else { return };
    let served = save_and_serve(SAVE_TF1_HALF_PLUS_TWO, "half_plus_two", "tf1");
    let server = Server {
        port: served.port,
        model: served.model.clone(),
    };
    let mut checks = Checks::default();
    checks.check(
        "tf1: predict in the row format (TensorFlow Serving's Docker guide)",
        server.posts(
            "/v1/models/{m}:predict",
            r#"{"instances": [1.0, 2.0, 5.0]}"#,
            json!({"predictions": [2.5, 3.0, 4.5]}),
        ),
    );
    checks.check(
        "tf1: predict in the columnar format, rows of one",
        server.posts(
            "/v1/models/{m}:predict",
            r#"{"inputs": {"x": [[1.0], [3.0]]}}"#,
            json!({"outputs": [[2.5], [3.5]]}),
        ),
    );
    checks.check(
        "tf1: regress on examples fed to the string placeholder",
        server.posts(
            "/v1/models/{m}:regress",
            r#"{"signature_name": "regress_x_to_y2", "examples": [{"x": 1.0}, {"x": -2.0}]}"#,
            json!({"results": [3.5, 2.0]}),
        ),
    );
    checks.check(
        "tf1: classify with scores only (no classes: empty labels)",
        server.posts(
            "/v1/models/{m}:classify",
            r#"{"signature_name": "classify_x_to_y", "examples": [{"x": 1.0}], "context": {"x2": 4.0}}"#,
            json!({"results": [[["", 2.5]]]}),
        ),
    );
    checks.check(
        "tf1: a value the graph's tensor cannot take is 400",
        server.refuses_post("/v1/models/{m}:predict", r#"{"instances": ["a"]}"#, &["x"]),
    );
    let (status, body) = server.send("GET", "/v1/models/{m}/metadata", "");
    let metadata: Value = serde_json::from_str(&body).unwrap_or_default();
    let defs = &metadata["metadata"]["signature_def"]["signature_def"];
    checks.check(
        "tf1: metadata shows each signature as declared",
        match (
            status,
            defs["serving_default"]["inputs"]["x"]["name"].as_str(),
            defs["regress_x_to_y"]["method_name"].as_str(),
            defs["classify_x_to_y"]["outputs"]["scores"]["dtype"].as_str(),
        ) {
            (200, Some("x:0"), Some("tensorflow/serving/regress"), Some("DT_FLOAT")) => Ok(()),
            _ => Err(format!(
                "the metadata answered {status} {}",
                shortened(&body)
            )),
        },
    );
    checks.assert_all_passed("a TF1 half_plus_two");
    drop(served);
}
