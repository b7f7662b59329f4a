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

use common::serving::{checks, client, metrics, save_and_serve, serve_half_plus_three, Served};
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
    client_checks_pass(&served, &["tf2", "/export"], Some(&export), 17);

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
    client_checks_pass(&served, &["tf1"], None, 3);
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
    client_checks_pass(&served, &["tf1"], None, 3);

    let (samples, output) = metrics(port);
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

/// Issue 44: calls that send their headers and never a request message hold no slot. 300
/// of them (spread over 6 connections, under the server's 100 streams a connection) are
/// held for 40 s, each opened again as soon as the server ends it; meanwhile a new
/// client's Predict, once a second with a deadline of 2 s (a limit that catches a server
/// holding it, as the issue's "within 2 s" asks), answers OK every time. The server ends
/// each stalled call with DEADLINE_EXCEEDED once its message is 30 s late (which shows
/// the calls were held there), and announces its cap on streams in its HTTP/2 SETTINGS.
/// Before: every probe was RESOURCE_EXHAUSTED "Concurrent RPC limit exceeded!" (grpcio's
/// `maximum_concurrent_rpcs` counted a call from its headers), for as long as the calls
/// stalled, and no SETTINGS capped the streams.
#[tokio::test]
async fn stalled_grpc_calls_hold_no_slot_and_a_new_client_is_answered_throughout() {
    let Some(_engine) = common::engine().await else { return };
    let served = serve_half_plus_three();
    let address = field(&served.stdout, "grpc").expect("serve prints the gRPC address");
    let (code, output) = client(
        &[
            "python",
            "/fixtures/stalled_grpc.py",
            &address,
            &served.model,
            "40",
        ],
        None,
    );
    let lines: Vec<&str> = (output.lines())
        .filter(|line| {
            ["probe ", "stalled ", "max_concurrent_streams"]
                .iter()
                .any(|start| line.starts_with(start))
                || line.ends_with("probes answered OK")
        })
        .collect();
    let report = lines.join("\n");
    eprintln!("{report}");
    let probes: Vec<&str> = (lines.iter())
        .filter(|line| line.starts_with("probe "))
        .copied()
        .collect();
    assert!(probes.len() >= 30, "a probe a second for 40 s: {report}");
    let bad: Vec<&&str> = (probes.iter())
        .filter(|line| !line.split(": ").nth(1).unwrap_or("").starts_with("OK "))
        .collect();
    assert!(bad.is_empty(), "probes not answered OK: {bad:?}\n{report}");
    assert!(lines.contains(&"max_concurrent_streams 100"), "{report}");
    let ended = (lines.iter())
        .find_map(|line| {
            line.strip_prefix("stalled calls ended by the server: ")?
                .strip_suffix(" DEADLINE_EXCEEDED the request message did not arrive within 30 s")
        })
        .and_then(|count| count.parse::<usize>().ok());
    assert!(
        ended.is_some_and(|count| count >= 300),
        "each stalled call is ended by the server once its message is 30 s late: {report}"
    );
    assert_eq!(code, 0, "{report}\n{output}");
    // And the server answers TensorFlow Serving's client as before.
    client_checks_pass(&served, &["tf1"], None, 3);
    drop(served);
}
