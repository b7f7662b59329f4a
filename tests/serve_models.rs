//! `tfimg serve --model-config FILE`: TensorFlow Serving's model config file, with two
//! models, a `specific` version policy and labels, against the real Engine. `adder`'s
//! version N answers y = x + N, so every answer says which version gave it. Over REST:
//! each model served as its policy says, `/labels/L` routes, TensorFlow Serving's errors
//! for an unknown label and a version the policy leaves out. Over gRPC, with TensorFlow
//! Serving's own client package (fixtures/serving/grpc_client.py): a `version_label`, and
//! (with `--allow-reload-config`) a `HandleReloadConfigRequest` that serves every version,
//! then one that adds made-up names and one that drops them, leaving no metrics series of
//! theirs. Then the file is rewritten in place and the server follows it: a new policy, a
//! new label, a model dropped; a file that does not parse is logged and changes nothing.
//! Without the flag, `HandleReloadConfigRequest` is refused (issue 44).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::serving::{
    checks, client, error_of, json, metrics, model_names, port_of, save_in_cpu_headless, tfimg,
};
use common::{field, http, scratch, unique, wait_for, DockerGuard};

/// `adder` versions 1, 2 and 3 (y = x + N) and `scaler` version 1 (y = 10 x), each with
/// `serving_default` on float32 `x` of shape [None].
const SAVE_TWO_MODELS: &str = r#"
import tensorflow as tf


class Affine(tf.Module):
    def __init__(self, scale, shift):
        super().__init__()
        self.scale, self.shift = scale, shift

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return {"y": x * self.scale + self.shift}


for version in (1, 2, 3):
    model = Affine(1.0, float(version))
    tf.saved_model.save(model, f"/tf/export/adder/{version}", signatures={"serving_default": model.__call__})
model = Affine(10.0, 0.0)
tf.saved_model.save(model, "/tf/export/scaler/1", signatures={"serving_default": model.__call__})
"#;

/// The model config: `adder` versions 1 and 2, labelled `stable` and `canary`; `scaler`'s
/// highest version.
fn first_config(folder: &Path, adder: &str, scaler: &str) -> String {
    format!(
        "# two models, as TensorFlow Serving's docs write them\n\
         model_config_list {{\n\
         \x20 config {{\n\
         \x20   name: \"{adder}\"\n\
         \x20   base_path: \"{}/export/adder/\"\n\
         \x20   model_platform: \"tensorflow\"\n\
         \x20   model_version_policy {{ specific {{ versions: 1 versions: 2 }} }}\n\
         \x20   version_labels {{ key: \"stable\" value: 1 }}\n\
         \x20   version_labels {{ key: \"canary\" value: 2 }}\n\
         \x20 }}\n\
         \x20 config {{ name: \"{scaler}\" base_path: \"{}/export/scaler\" }}\n\
         }}\n",
        folder.display(),
        folder.display()
    )
}

fn predict(port: u16, path: &str) -> (u16, serde_json::Value, String) {
    let (status, body) = http("POST", port, path, &[], r#"{"instances": [1.0, 2.0]}"#);
    let parsed = serde_json::from_str(&body).unwrap_or_default();
    (status, parsed, body)
}

/// The versions of `model` and their states, as its status lists them.
fn states(port: u16, model: &str) -> Vec<(String, String)> {
    let (_, body) = http("GET", port, &format!("/v1/models/{model}"), &[], "");
    let status: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    (status["model_version_status"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter())
    .map(|entry| {
        let text = |key: &str| entry[key].as_str().unwrap_or_default().to_string();
        (text("version"), text("state"))
    })
    .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[tokio::test]
async fn a_model_config_serves_two_models_by_policy_and_label_and_follows_its_changes() {
    let Some(_engine) = common::engine().await else { return };
    let (adder, scaler) = (unique("adder"), unique("scaler"));
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.model={adder}"));
    let folder = scratch(&[("code/save.py", SAVE_TWO_MODELS)]);
    save_in_cpu_headless(folder.path());
    let config = folder.path().join("models.config");
    std::fs::write(&config, first_config(folder.path(), &adder, &scaler)).unwrap();

    let served = tfimg(
        folder.path(),
        &[
            "serve",
            "--model-config",
            "models.config",
            "--allow-reload-config",
            "-d",
        ],
    );
    assert_eq!(served.code, 0, "serve failed: {}", served.tail());
    // Both models answer once `serve` returns: it waited for each.
    let urls: Vec<&str> = (served.stdout.lines())
        .filter_map(|line| line.strip_prefix("model"))
        .map(str::trim)
        .collect();
    let port = port_of(urls[0]);
    assert_eq!(
        urls,
        [
            format!("http://127.0.0.1:{port}/v1/models/{adder}"),
            format!("http://127.0.0.1:{port}/v1/models/{scaler}")
        ],
        "{}",
        served.stdout
    );
    for wanted in [
        format!(
            "note: serving `{adder}` from `{}/export/adder/`: versions 1, 2 (now 1, 2)",
            folder.path().display()
        ),
        "the server rereads `models.config` when it changes".to_string(),
        "note: gRPC's `HandleReloadConfigRequest` is allowed (`--allow-reload-config`): anyone who reaches the gRPC port can change the models served".to_string(),
    ] {
        assert!(
            served.stderr.contains(&wanted),
            "{wanted}\n{}",
            served.stderr
        );
    }
    let container = field(&served.stdout, "container").expect("the container's name");

    // The policy's versions, not the folder's highest; the status answers for every
    // version whatever the label, as TensorFlow Serving's does.
    let both = pairs(&[("2", "AVAILABLE"), ("1", "AVAILABLE")]);
    assert_eq!(states(port, &adder), both);
    let (_, by_label) = http(
        "GET",
        port,
        &format!("/v1/models/{adder}/labels/stable"),
        &[],
        "",
    );
    assert_eq!(
        json(&by_label)["model_version_status"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let cases = [
        (
            format!("/v1/models/{adder}:predict"),
            "[3.0, 4.0]",
            "the highest version the policy serves",
        ),
        (
            format!("/v1/models/{adder}/labels/stable:predict"),
            "[2.0, 3.0]",
            "stable, version 1",
        ),
        (
            format!("/v1/models/{adder}/labels/canary:predict"),
            "[3.0, 4.0]",
            "canary, version 2",
        ),
        (
            format!("/v1/models/{adder}/versions/1:predict"),
            "[2.0, 3.0]",
            "version 1",
        ),
        (
            format!("/v1/models/{scaler}:predict"),
            "[10.0, 20.0]",
            "the other model",
        ),
    ];
    for (path, wanted, what) in &cases {
        let (status, answer, body) = predict(port, path);
        assert_eq!(
            (status, answer["predictions"].to_string()),
            (200, wanted.replace(' ', "")),
            "{what}: {path} {body}"
        );
    }
    let (status, body) = http(
        "GET",
        port,
        &format!("/v1/models/{adder}/labels/stable/metadata"),
        &[],
        "",
    );
    assert_eq!(
        (status, json(&body)["model_spec"]["version"].as_str()),
        (200, Some("1")),
        "{body}"
    );
    let (status, _, body) = predict(port, &format!("/v1/models/{adder}/versions/3:predict"));
    assert_eq!(
        (status, error_of(&body)),
        (
            404,
            format!("Servable not found for request: Specific({adder}, 3)")
        )
    );
    let (status, _, body) = predict(port, &format!("/v1/models/{adder}/labels/nope:predict"));
    assert_eq!(
        (status, error_of(&body)),
        (400, "Unrecognized servable version label: nope".to_string())
    );

    // gRPC, with TensorFlow Serving's client: a label, and a reload sent over the API.
    let address = field(&served.stdout, "grpc").expect("serve prints the gRPC address");
    let base_path = format!("{}/export/adder", folder.path().display());
    let (code, output) = client(
        &[
            "python",
            "/fixtures/grpc_client.py",
            &address,
            &adder,
            "config",
            &base_path,
        ],
        None,
    );
    let found = checks(&output);
    assert_eq!(code, 0, "{found}\n{output}");
    assert!(found.ends_with("8 of 8 checks pass"), "{found}");
    // The made-up names the reloads added, then dropped, left no series in the metrics;
    // nor did `scaler`, which the reloaded config dropped too.
    let (samples, scraped) = metrics(port);
    assert_eq!(
        model_names(&samples),
        ["".to_string(), adder.clone()],
        "{scraped}"
    );

    // The file rewritten in place: the highest version only, `stable` now 3, `scaler` gone.
    let second = first_config(folder.path(), &adder, &scaler)
        .replace(
            "specific { versions: 1 versions: 2 }",
            "latest { num_versions: 1 }",
        )
        .replace("key: \"stable\" value: 1", "key: \"stable\" value: 3")
        .replace("    version_labels { key: \"canary\" value: 2 }\n", "");
    let second = second[..second
        .find(&format!("  config {{ name: \"{scaler}\""))
        .unwrap()]
        .to_string()
        + "}\n";
    std::fs::write(&config, &second).unwrap();
    let only_three = pairs(&[("3", "AVAILABLE"), ("2", "END"), ("1", "END")]);
    wait_for(
        "the server to follow the rewritten config",
        Duration::from_secs(120),
        || states(port, &adder) == only_three,
    );
    for (path, wanted) in [
        (format!("/v1/models/{adder}:predict"), "[4.0,5.0]"),
        (
            format!("/v1/models/{adder}/labels/stable:predict"),
            "[4.0,5.0]",
        ),
    ] {
        let (status, answer, body) = predict(port, &path);
        assert_eq!(
            (status, answer["predictions"].to_string()),
            (200, wanted.to_string()),
            "{path} {body}"
        );
    }
    assert_eq!(states(port, &scaler), pairs(&[("1", "END")]));
    let (status, _, body) = predict(port, &format!("/v1/models/{scaler}:predict"));
    assert_eq!(
        (status, error_of(&body)),
        (
            404,
            format!("Servable not found for request: Latest({scaler})")
        )
    );

    // A file that does not parse is logged, and the config in force stays.
    std::fs::write(&config, "model_config_list { config { name: ").unwrap();
    wait_for(
        "the server to log the broken config",
        Duration::from_secs(30),
        || {
            logged(
                &container,
                "is not applied: the model config does not parse",
            )
        },
    );
    let (status, answer, body) =
        predict(port, &format!("/v1/models/{adder}/labels/stable:predict"));
    assert_eq!(
        (status, answer["predictions"].to_string()),
        (200, "[4.0,5.0]".to_string()),
        "{body}"
    );

    // A config naming only a model whose folder is not in the container: the model in force
    // keeps answering until the new one loads (TensorFlow Serving's order); before, it was
    // unloaded and the server served nothing.
    std::fs::write(
        &config,
        "model_config_list { config { name: \"ghost\" base_path: \"/nowhere/ghost\" } }\n",
    )
    .unwrap();
    wait_for(
        "the server to say it keeps serving",
        Duration::from_secs(60),
        || {
            logged(
                &container,
                &format!("still serving {adder} until ghost load"),
            )
        },
    );
    let (status, answer, body) = predict(port, &format!("/v1/models/{adder}:predict"));
    assert_eq!(
        (status, answer["predictions"].to_string()),
        (200, "[4.0,5.0]".to_string()),
        "{body}"
    );
    assert_eq!(states(port, &adder), only_three);
    drop(guard);
}

/// Whether the server's log (its stderr) holds `text` yet.
fn logged(container: &str, text: &str) -> bool {
    let logs = Command::new("docker")
        .args(["logs", container])
        .output()
        .unwrap();
    String::from_utf8_lossy(&logs.stderr).contains(text)
}

/// A config's mistakes, and a folder that is not there, are named at their line and
/// column, before tfimg reaches the Engine.
#[test]
fn a_broken_model_config_exits_1_naming_the_line_and_column() {
    let folder = scratch(&[
        (
            "relative.config",
            "model_config_list {\n  config { name: 'a' base_path: 'export/a' }\n}\n",
        ),
        (
            "missing.config",
            "model_config_list {\n  config { name: 'a' base_path: '/nowhere/a' }\n}\n",
        ),
    ]);
    for (file, wanted) in [
        (
            "relative.config",
            "`relative.config`:2:22: `base_path: \"export/a\"` is not an absolute path",
        ),
        (
            "missing.config",
            "`missing.config`:2:22: model `a`'s base_path `/nowhere/a` does not exist",
        ),
    ] {
        let run = tfimg(folder.path(), &["serve", "--model-config", file, "-d"]);
        assert_eq!(run.code, 1, "{}", run.tail());
        assert!(run.stderr.contains(wanted), "{wanted}\n{}", run.stderr);
        assert!(run.stderr.contains("hint: "), "{}", run.stderr);
    }
    let both = tfimg(
        folder.path(),
        &["serve", "./export", "--model-config", "missing.config"],
    );
    assert_eq!(
        both.code, 1,
        "MODEL_DIR with --model-config: {}",
        both.stderr
    );
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.stderr
    );
}

/// Issue 44: without `--allow-reload-config`, anyone who reaches the gRPC port could
/// replace the model config: an empty list unloaded every model, and 40 made-up names for
/// the model's folder loaded it 40 times, each name then a series of the metrics. Now the
/// call is UNIMPLEMENTED, naming the flag, whatever it asks; the model still answers
/// (REST and gRPC), and the metrics have series for the configured model and `""` only.
#[tokio::test]
async fn handle_reload_config_request_is_refused_unless_asked() {
    let Some(_engine) = common::engine().await else { return };
    let model = unique("half");
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.model={model}"));
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/saved_model_half_plus_three");
    let base_path = fixture.to_str().unwrap();
    let config = format!(
        "model_config_list {{ config {{ name: \"{model}\" base_path: \"{base_path}\" }} }}\n"
    );
    let folder = scratch(&[("models.config", &config)]);
    let served = tfimg(
        folder.path(),
        &["serve", "--model-config", "models.config", "-d"],
    );
    assert_eq!(served.code, 0, "serve failed: {}", served.tail());
    assert!(
        !served.stderr.contains("HandleReloadConfigRequest"),
        "{}",
        served.stderr
    );
    let port = port_of(&field(&served.stdout, "model").expect("the model's URL"));
    let address = field(&served.stdout, "grpc").expect("serve prints the gRPC address");
    let (code, output) = client(
        &[
            "python",
            "/fixtures/grpc_client.py",
            &address,
            &model,
            "reload-off",
            base_path,
        ],
        None,
    );
    let found = checks(&output);
    assert_eq!(code, 0, "{found}\n{output}");
    assert!(found.ends_with("4 of 4 checks pass"), "{found}");
    assert_eq!(states(port, &model), pairs(&[("123", "AVAILABLE")]));
    let (status, answer, body) = predict(port, &format!("/v1/models/{model}:predict"));
    assert_eq!(
        (status, answer["predictions"].to_string()),
        (200, "[3.5,4.0]".to_string()),
        "{body}"
    );
    let (samples, scraped) = metrics(port);
    assert_eq!(
        model_names(&samples),
        ["".to_string(), model.clone()],
        "{scraped}"
    );
    drop(guard);
}
