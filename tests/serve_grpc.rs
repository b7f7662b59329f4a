//! `tfimg serve`'s gRPC API against TensorFlow Serving's own client: the
//! `tensorflow-serving-api` package's stubs, in a container on the host's network (the
//! serving image holds the package), calling the port `serve` printed. Every number is
//! compared with the same SavedModel run in-process in that container; errors with
//! TensorFlow Serving's status codes and messages; the hostile tensors a client may send
//! (a shape that claims 2**40 values, a message over 64 MiB) refused without harm. And
//! the `try grpc` line `serve` prints, run as a user would run it. And the metrics both
//! APIs feed, scraped at TensorFlow Serving's path and read with the Prometheus project's
//! own parser.

mod common;

use std::path::Path;

use common::serving::{checks, client, save_and_serve, serve_half_plus_three, Served};
use common::{field, http};

/// A TF2 model with the three kinds of signature: `serving_default` (float32 `x`, 3 a
/// row: `logits` = x W + b, and their softmax `probabilities`), and the classify (classes
/// `no`, `yes` and their scores) and regress (the sum of the logits) signatures on
/// serialized examples of the feature `x`.
const SAVE_GRPC: &str = r#"
import tensorflow as tf
from methods import set_methods

X = {"x": tf.io.FixedLenFeature([3], tf.float32)}
W = tf.constant([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]])


class Model(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def predict(self, x):
        logits = tf.matmul(x, W) + [0.1, -0.2]
        return {"logits": logits, "probabilities": tf.nn.softmax(logits)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def classify(self, inputs):
        logits = self.predict(tf.io.parse_example(inputs, X)["x"])["logits"]
        classes = tf.tile(tf.constant([["no", "yes"]]), [tf.shape(logits)[0], 1])
        return {"classes": classes, "scores": tf.nn.softmax(logits)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def regress(self, inputs):
        logits = self.predict(tf.io.parse_example(inputs, X)["x"])["logits"]
        return {"outputs": tf.reduce_sum(logits, axis=1, keepdims=True)}


model = Model()
path = "/tf/export/grpc/1"
tf.saved_model.save(model, path, signatures={
    "serving_default": model.predict,
    "tensorflow/serving/classify": model.classify,
    "tensorflow/serving/regress": model.regress,
})
set_methods(path, {"tensorflow/serving/classify": "tensorflow/serving/classify",
                   "tensorflow/serving/regress": "tensorflow/serving/regress"})
"#;

/// fixtures/serving/grpc_client.py against the gRPC address `serve` printed for `served`,
/// with `args` after the address and the model (its kind, and the export's path in the
/// container); every one of its `count` checks passes.
fn client_checks_pass(served: &Served, args: &[&str], export: Option<&Path>, count: usize) {
    let address = field(&served.stdout, "grpc").expect("serve prints the gRPC address");
    let mut command = vec![
        "python",
        "/fixtures/grpc_client.py",
        &address,
        &served.model,
    ];
    command.extend(args);
    let (code, output) = client(&command, export);
    let found = checks(&output);
    assert_eq!(code, 0, "{found}\n{output}");
    assert!(
        found.ends_with(&format!("{count} of {count} checks pass")),
        "{found}"
    );
}

#[tokio::test]
async fn tensorflow_serving_s_own_grpc_client_gets_the_in_process_numbers() {
    let Some(_engine) = common::engine().await else { return };
    let served = save_and_serve(SAVE_GRPC, "grpc", "grpc");
    let address = field(&served.stdout, "grpc").expect("serve prints the gRPC address");
    assert!(address.starts_with("127.0.0.1:"), "{}", served.stdout);
    let export = served.folder.path().join("export/grpc/1");
    client_checks_pass(&served, &["tf2", "/export"], Some(&export), 14);

    // The example `serve` printed, as a user runs it where the package is installed.
    let try_grpc = (served.stdout.lines())
        .find_map(|line| line.strip_prefix("try grpc"))
        .expect("serve prints a gRPC request to try")
        .trim();
    let (code, output) = client(&["sh", "-c", try_grpc], None);
    assert_eq!(code, 0, "{try_grpc}\n{output}");
    for key in ["'logits': [[0.1", "'probabilities': [["] {
        assert!(output.contains(key), "{try_grpc}\n{output}");
    }
    drop(served);
}

/// TensorFlow Serving's own TF1 test model answers over gRPC as its REST page documents
/// it answers over REST.
#[tokio::test]
async fn the_tf1_half_plus_three_answers_over_grpc() {
    let Some(_engine) = common::engine().await else { return };
    let served = serve_half_plus_three();
    client_checks_pass(&served, &["tf1"], None, 2);
    drop(served);
}

/// The Prometheus metrics count what REST and gRPC answered, by model and status, with
/// TensorFlow Serving's names; requests for made-up models share one series (a client
/// cannot grow the server's memory by inventing names).
#[tokio::test]
async fn the_metrics_count_rest_and_grpc_requests_by_model_and_status() {
    let Some(_engine) = common::engine().await else { return };
    let served = serve_half_plus_three();
    let model = served.model.clone();
    let port = served.port;
    let predict = format!("/v1/models/{model}:predict");
    for _ in 0..3 {
        let (status, _) = http("POST", port, &predict, &[], r#"{"instances": [1.0]}"#);
        assert_eq!(status, 200);
    }
    let (status, _) = http("POST", port, &predict, &[], r#"{"instances": ["a"]}"#);
    assert_eq!(status, 400);
    for made_up in 0..200 {
        let path = format!("/v1/models/made-up-{made_up}:predict");
        let (status, _) = http("POST", port, &path, &[], r#"{"instances": [1.0]}"#);
        assert_eq!(status, 404);
    }
    client_checks_pass(&served, &["tf1"], None, 2);

    let metrics = format!("http://127.0.0.1:{port}/monitoring/prometheus/metrics");
    let (code, output) = client(&["python", "/fixtures/scrape.py", &metrics], None);
    assert_eq!(code, 0, "{output}");
    let samples: Vec<(String, serde_json::Value, serde_json::Value)> = (output.lines())
        .filter(|line| line.starts_with('['))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let value = |name: &str, labels: serde_json::Value| {
        (samples.iter())
            .find(|(found, with, _)| found == name && *with == labels)
            .map(|(_, _, value)| value.clone())
    };
    let text = || {
        output
            .lines()
            .filter(|line| !line.contains("_bucket"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        value("content-type", serde_json::json!({})),
        Some(serde_json::json!(
            "text/plain; version=0.0.4; charset=utf-8"
        )),
        "{}",
        text()
    );
    // Every answer counts once, under its status: serve's own readiness requests (the
    // status and the metadata, as many as it took) among them.
    let count = ":tensorflow:serving:request_count_total";
    let answered: f64 = (samples.iter())
        .filter(|(name, labels, _)| {
            name == ":tensorflow:serving:request_latency_count" && labels["model_name"] == model
        })
        .filter_map(|(_, _, value)| value.as_f64())
        .sum();
    for (labels, wanted) in [
        (
            serde_json::json!({"model_name": model, "status": "OK"}),
            answered - 1.0,
        ),
        (
            serde_json::json!({"model_name": model, "status": "INVALID_ARGUMENT"}),
            1.0,
        ),
        (
            serde_json::json!({"model_name": "", "status": "NOT_FOUND"}),
            200.0,
        ),
    ] {
        assert_eq!(
            value(count, labels.clone()),
            Some(serde_json::json!(wanted)),
            "{labels}: {}",
            text()
        );
    }
    let series = samples.iter().filter(|(name, _, _)| name == count).count();
    assert_eq!(series, 3, "{}", text());
    let latency = ":tensorflow:serving:request_latency_count";
    for (api, entrypoint, wanted) in [
        ("predict", "REST", 4.0),
        ("predict", "GRPC", 1.0),
        ("regress", "GRPC", 1.0),
    ] {
        let labels = serde_json::json!({"model_name": model, "API": api, "entrypoint": entrypoint});
        assert_eq!(
            value(latency, labels.clone()),
            Some(serde_json::json!(wanted)),
            "{labels}: {}",
            text()
        );
    }
    let loaded =
        serde_json::json!({"model_path": format!("/models/{model}/00000123"), "status": "success"});
    assert_eq!(
        value(
            ":tensorflow:cc:saved_model:load_attempt_count_total",
            loaded
        ),
        Some(serde_json::json!(1.0)),
        "{}",
        text()
    );
    drop(served);
}
