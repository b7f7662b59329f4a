//! What the serving tests share: tfimg run with this network's CA and a data folder of
//! the test's own, a SavedModel saved by a script in `cpu-headless`, served under a unique
//! name (removed when the test ends, failed or not), and its answers read.

use std::path::Path;
use std::process::Command;

use super::{field, scratch, tfimg_with_env, unique, DockerGuard, Run, HOST_CA};

/// tfimg in `folder`, with its own data folder and the CA PyPI needs here.
pub fn tfimg(folder: &Path, args: &[&str]) -> Run {
    let data = folder.join(".data");
    tfimg_with_env(
        folder,
        args,
        &[
            ("XDG_DATA_HOME", data.to_str().unwrap()),
            ("TFIMG_CA_CERT", HOST_CA),
        ],
    )
}

/// The port of a local URL (`http://127.0.0.1:PORT/...`).
pub fn port_of(url: &str) -> u16 {
    let rest = url.strip_prefix("http://127.0.0.1:").expect("a local URL");
    rest.split('/').next().unwrap().parse().expect("a port")
}

/// `set_methods(path, {signature: method})`, beside every script `save_and_serve` runs:
/// TensorFlow 2 writes every signature as a predict one, so an Estimator-style model's
/// classify and regress methods are set in its saved_model.pb afterwards.
const METHODS: &str = r#"
from tensorflow.core.protobuf import saved_model_pb2


def set_methods(path, methods):
    saved = saved_model_pb2.SavedModel()
    with open(path + "/saved_model.pb", "rb") as file:
        saved.ParseFromString(file.read())
    for name, method in methods.items():
        saved.meta_graphs[0].signature_def[name].method_name = method
    with open(path + "/saved_model.pb", "wb") as file:
        file.write(saved.SerializeToString())
"#;

/// Runs `code/save.py` of `folder` in cpu-headless, which saves its model under `export/`.
pub fn save_in_cpu_headless(folder: &Path) {
    let saved = save_in(folder, "cpu-headless");
    assert_eq!(saved.code, 0, "saving the model failed: {}", saved.stderr);
}

/// `code/save.py` of `folder` run in `spec`, which saves its model under `export/`.
pub fn save_in(folder: &Path, spec: &str) -> Run {
    // tfimg makes `export` for the container's user (a folder made here by root would be
    // root's, and the container runs as the image's user then).
    tfimg(
        folder,
        &[
            "run",
            spec,
            "--mount",
            "./code:ro",
            "--mount",
            "./export",
            "--",
            "python",
            "code/save.py",
        ],
    )
}

/// The `error` of an error answer's JSON body; empty when it has none.
pub fn error_of(body: &str) -> String {
    json(body)["error"].as_str().unwrap_or_default().to_string()
}

pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
}

/// A model `tfimg serve -d` serves for one test, and what removes it.
pub struct Served {
    /// The model's name (unique).
    pub model: String,
    pub port: u16,
    /// The container's name, as `serve` printed it.
    pub container: String,
    /// What `serve` printed on stdout and stderr.
    pub stdout: String,
    pub stderr: String,
    pub folder: tempfile::TempDir,
    pub guard: DockerGuard,
}

/// `script` (which saves a SavedModel under `/tf/export/<export>/`; `@MODEL@` in it is the
/// model's name) run in cpu-headless in a folder of its own, and the model served from
/// there under a unique name starting with `prefix`.
pub fn save_and_serve(script: &str, export: &str, prefix: &str) -> Served {
    let model = unique(prefix);
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.model={model}"));
    let folder = scratch(&[
        ("code/save.py", &script.replace("@MODEL@", &model)),
        ("code/methods.py", METHODS),
    ]);
    save_in_cpu_headless(folder.path());
    serve_in(folder, &format!("./export/{export}"), model, guard)
}

/// TensorFlow Serving's own `saved_model_half_plus_three` (tests/fixtures), a TF1
/// SavedModel, served under a unique name starting with `half`.
pub fn serve_half_plus_three() -> Served {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/saved_model_half_plus_three");
    let model = unique("half");
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.model={model}"));
    serve_in(scratch(&[]), fixture.to_str().unwrap(), model, guard)
}

/// `tfimg serve MODEL_DIR --name MODEL -d` in `folder`.
fn serve_in(
    folder: tempfile::TempDir,
    model_dir: &str,
    model: String,
    guard: DockerGuard,
) -> Served {
    let served = tfimg(folder.path(), &["serve", model_dir, "--name", &model, "-d"]);
    assert_eq!(served.code, 0, "serve failed: {}", served.tail());
    let port = port_of(&field(&served.stdout, "model").expect("the model's URL"));
    let container = field(&served.stdout, "container").expect("the container's name");
    Served {
        model,
        port,
        container,
        stdout: served.stdout,
        stderr: served.stderr,
        folder,
        guard,
    }
}

/// The serving image `serve` built, which has the client package.
pub const CLIENT_IMAGE: &str = "tfimg/cpu-serving:2.9.3";

/// A container of the client image on the host's network, running `command` with the
/// fixtures at /fixtures and `export` (when given) at /export, read-only; its exit code
/// and output. It is removed when it ends, and by the guard if the test fails first.
pub fn client(command: &[&str], export: Option<&Path>) -> (i32, String) {
    client_on("host", command, export)
}

/// `client` on the Docker network `network` (`bridge`: an address of its own, beside the
/// model server's container).
pub fn client_on(network: &str, command: &[&str], export: Option<&Path>) -> (i32, String) {
    let name = unique("t-grpc-client");
    let _guard = DockerGuard::containers(&[&name]);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/serving");
    let mut args = vec![
        "run".to_string(),
        "--rm".into(),
        "--name".into(),
        name.clone(),
        "--network".into(),
        network.into(),
        "-v".into(),
        format!("{}:/fixtures:ro", fixtures.display()),
    ];
    if let Some(export) = export {
        args.extend(["-v".into(), format!("{}:/export:ro", export.display())]);
    }
    args.push(CLIENT_IMAGE.into());
    args.extend(command.iter().map(|word| word.to_string()));
    let output = Command::new("docker").args(&args).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), text)
}

/// The checks' lines of the client's output (TensorFlow's own log lines left out).
pub fn checks(output: &str) -> String {
    (output.lines())
        .filter(|line| {
            ["ok   ", "FAIL ", "Traceback"]
                .iter()
                .any(|start| line.starts_with(start))
                || line.ends_with("checks pass")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The samples of the server's metrics on `port` as the Prometheus project's own parser
/// reads them (fixtures/serving/scrape.py in the client image): (name, labels, value), the
/// first being ("content-type", {}, the answer's Content-Type); and the scrape's output.
pub fn metrics(port: u16) -> (Vec<(String, serde_json::Value, serde_json::Value)>, String) {
    let url = format!("http://127.0.0.1:{port}/monitoring/prometheus/metrics");
    let (code, output) = client(&["python", "/fixtures/scrape.py", &url], None);
    assert_eq!(code, 0, "{output}");
    let samples = (output.lines())
        .filter(|line| line.starts_with('['))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (samples, output)
}

/// The model names the metrics' samples carry a series for.
pub fn model_names(samples: &[(String, serde_json::Value, serde_json::Value)]) -> Vec<String> {
    let mut names: Vec<String> = (samples.iter())
        .filter_map(|(_, labels, _)| labels["model_name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}
