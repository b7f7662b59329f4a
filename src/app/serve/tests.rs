use std::path::PathBuf;

use super::*;
use crate::app::session::Session;
use crate::app::testing::{block_on, target};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::spec::Catalog;

const AVAILABLE: &str = r#"{"model_version_status": [{"version": "3", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]}"#;
const LOADING: &str = r#"{"model_version_status": [{"version": "3", "state": "LOADING", "status": {"error_code": "OK", "error_message": ""}}]}"#;
const FAILED: &str = r#"{"model_version_status": [{"version": "3", "state": "END", "status": {"error_code": "UNKNOWN", "error_message": "loading failed: truncated file"}}]}"#;
const METADATA: &str = r#"{"model_spec": {"name": "mlp", "signature_name": "", "version": "3"}, "metadata": {"signature_def": {"signature_def": {"serving_default": {"inputs": {"x": {"dtype": "DT_FLOAT", "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "2", "name": ""}], "unknown_rank": false}, "name": "x:0"}}, "outputs": {}, "method_name": "tensorflow/serving/predict"}}}}}"#;

pub(super) fn request(dir: &str) -> ServeRequest {
    ServeRequest {
        model_dir: PathBuf::from(dir),
        shown: "./export/mlp".to_string(),
        model_config: false,
        name: None,
        spec: None,
        gpus: None,
        share_gpus: false,
        port: None,
        grpc_port: None,
        public: false,
        detach: true,
        max_batch: None,
        memory: None,
        allow_reload_config: false,
        batching: None,
        model_config_poll: None,
        grpc_channel_arguments: None,
    }
}

/// A host whose `/work/export/mlp` holds versions 1 and 3 (and a folder that is none).
fn host_with_model() -> FakeHost {
    let host = FakeHost::new();
    for path in [
        "/work/export/mlp",
        "/work/export/mlp/1/saved_model.pb",
        "/work/export/mlp/3/saved_model.pb",
        "/work/export/mlp/3/variables/variables.index",
        "/work/export/mlp/tmp/saved_model.pb",
        "/work/export/mlp/7/notes.txt",
    ] {
        host.paths.borrow_mut().insert(PathBuf::from(path));
    }
    host
}

/// The host of `host_with_model`, its checked model and the request that names it.
fn checked_mlp() -> (FakeHost, Model, ServeRequest) {
    let host = host_with_model();
    let asked = request("/work/export/mlp");
    let model = check_model(&host, &asked).unwrap();
    (host, model, asked)
}

fn specs() -> ServingSpecs {
    let host = FakeHost::new();
    ServingSpecs::lines(&host, &Catalog::builtin(PathBuf::from("/project")), None).unwrap()
}

#[test]
fn the_model_folder_needs_a_numbered_saved_model() {
    let host = host_with_model();
    let model = check_model(&host, &request("/work/export/mlp")).unwrap();
    assert_eq!(model.name, "mlp");
    assert_eq!(model.versions, vec![1, 3]);

    let missing = check_model(&host, &request("/work/nothing")).unwrap_err();
    assert_eq!(missing.message, "MODEL_DIR `./export/mlp` does not exist");
    host.paths.borrow_mut().insert(PathBuf::from("/work/empty"));
    let empty = check_model(&host, &request("/work/empty")).unwrap_err();
    assert_eq!(empty.message, "MODEL_DIR `./export/mlp`: it is empty");

    let mut named = request("/work/export/mlp");
    named.name = Some("bad name".to_string());
    let error = check_model(&host, &named).unwrap_err();
    assert_eq!(error.message, "`--name bad name` is not a valid model name");
}

/// The server's launch on `cpu-serving` without GPUs, on a `remote` engine or this one.
fn cpu_launch(host: &FakeHost, asked: &ServeRequest, model: &Model, remote: bool) -> LaunchRequest {
    launch_request(
        host,
        asked,
        &Served::from(model.clone()),
        target("cpu-serving"),
        GpuSelection::None,
        remote,
    )
    .unwrap()
}

#[test]
fn the_folder_is_mounted_read_only_here_and_copied_in_on_a_remote_engine() {
    let (host, model, mut asked) = checked_mlp();
    asked.port = Some(9000);
    let local = cpu_launch(&host, &asked, &model, false);
    let plans = local.mount_plans();
    let (mount, text) = &plans[0];
    assert_eq!(mount.source, PathBuf::from("/work/export/mlp"));
    assert_eq!(
        (mount.target.as_str(), mount.read_only),
        ("/models/mlp", true)
    );
    assert_eq!(*text, "./export/mlp");
    assert!(local.syncs.is_empty());
    assert_eq!(
        local.port_requests,
        vec![PortRequest {
            host: Some(9000),
            container: 8501
        }]
    );
    assert_eq!(local.extra_labels[labels::MODEL], "mlp");
    assert!(local.name.as_deref().unwrap().starts_with("serve-mlp-"));
    assert!(local.env.is_empty(), "the server's own default batch cap");

    let remote = cpu_launch(&host, &asked, &model, true);
    assert!(remote.mounts.is_empty());
    assert_eq!(remote.sync_plans()[0].target, "/models/mlp");
    assert!(remote.syncs[0].whole && remote.make_sync_parents);
}

#[test]
fn the_server_has_a_memory_limit_of_8_gib_unless_memory_says_otherwise() {
    let (host, model, mut asked) = checked_mlp();
    let launch = cpu_launch(&host, &asked, &model, false);
    assert_eq!(launch.resources.memory, Some(8 * 1024 * 1024 * 1024));
    asked.memory = Some(2 * 1024 * 1024 * 1024);
    let launch = cpu_launch(&host, &asked, &model, true);
    assert_eq!(launch.resources.memory, Some(2 * 1024 * 1024 * 1024));
}

#[test]
fn max_batch_reaches_the_server_as_its_environment_variable() {
    let (host, model, mut asked) = checked_mlp();
    asked.max_batch = Some(1);
    let launch = cpu_launch(&host, &asked, &model, false);
    assert_eq!(
        launch.env,
        vec![("TFIMG_SERVING_MAX_BATCH".to_string(), "1".to_string())]
    );
}

#[test]
fn batching_parameters_are_read_before_anything_and_reach_the_server_as_json() {
    let (host, _, mut asked) = checked_mlp();
    let file = PathBuf::from("/work/batching.config");
    asked.batching = Some(Some((file.clone(), "batching.config".into())));
    let text = b"max_batch_size { value: 8 }\nallowed_batch_sizes: 4\nallowed_batch_sizes: 8\n";
    host.files.borrow_mut().insert(file.clone(), text.to_vec());
    let served = check(&host, &asked).unwrap();
    let launch = launch_request(
        &host,
        &asked,
        &served,
        target("cpu-serving"),
        GpuSelection::None,
        false,
    )
    .unwrap();
    let (name, value) = &launch.env[0];
    assert_eq!(name, "TFIMG_SERVING_BATCHING");
    let sent: serde_json::Value = serde_json::from_str(value).unwrap();
    assert_eq!(
        (
            sent["max_batch_size"].as_u64(),
            &sent["allowed_batch_sizes"]
        ),
        (Some(8), &serde_json::json!([4, 8]))
    );
    // --enable-batching alone: TensorFlow Serving's defaults.
    asked.batching = Some(None);
    let served = check(&host, &asked).unwrap();
    assert_eq!(
        served.batching,
        Some(crate::plan::batching::Batching::default())
    );
    // A mistake is named at its line and column; a missing file by name.
    asked.batching = Some(Some((file.clone(), "batching.config".into())));
    host.files.borrow_mut().insert(
        file.clone(),
        b"max_batch_size { value: 8 }\nallowed_batch_sizes: 4\n".to_vec(),
    );
    let error = check(&host, &asked).unwrap_err().to_string();
    assert!(
        error.contains("batching.config:2:1") || error.contains("`batching.config`:2:1"),
        "{error}"
    );
    asked.batching = Some(Some((
        PathBuf::from("/work/none.config"),
        "none.config".into(),
    )));
    let error = check(&host, &asked).unwrap_err().to_string();
    assert!(
        error.contains("the batching parameters file `none.config` cannot be read"),
        "{error}"
    );
}

#[test]
fn the_gpus_choose_the_serving_spec() {
    let engine = FakeEngine::new();
    let host = FakeHost::new();
    let specs = specs();
    let chosen = |host: &FakeHost, requested: Option<GpuSelection>| {
        let (spec, gpus, _) = block_on(choose_spec(
            Session::quiet(&engine, host),
            requested.as_ref(),
            false,
            &specs.lines[0],
        ))
        .unwrap();
        (spec.name.clone(), gpus)
    };
    assert_eq!(
        chosen(&host, Some(GpuSelection::None)),
        ("cpu-serving".to_string(), GpuSelection::None)
    );
    // No NVIDIA driver on the fake host: the CPU one, without GPUs; asking for GPUs is
    // refused before the GPU image is built.
    assert_eq!(
        chosen(&host, None),
        ("cpu-serving".to_string(), GpuSelection::None)
    );
    let refused = block_on(choose_spec(
        Session::quiet(&engine, &host),
        Some(&GpuSelection::All),
        false,
        &specs.lines[0],
    ));
    assert!(refused
        .err()
        .is_some_and(|error| error.to_string().contains("no NVIDIA GPU or driver")),);
    let mut gpu_host = FakeHost::new();
    gpu_host.nvidia.driver = Some("535.104.05".to_string());
    assert_eq!(
        chosen(&gpu_host, Some(GpuSelection::All)),
        ("gpu-serving".to_string(), GpuSelection::All)
    );
}

fn serve_on(session: Session<'_, FakeEngine, FakeHost>) -> anyhow::Result<Serving> {
    let host = session.host;
    let request = request("/work/export/mlp");
    let model = check_model(host, &request).unwrap();
    block_on(serve(
        session,
        &request,
        model.into(),
        &specs(),
        &Network::default(),
    ))
}

#[test]
fn the_server_is_waited_for_until_its_model_is_available() {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let host = host_with_model();
    host.http_answers.borrow_mut().extend([
        (
            "/v1/models/mlp".to_string(),
            vec![
                (404, String::new()),
                (200, LOADING.into()),
                (200, AVAILABLE.into()),
            ],
        ),
        (
            "/v1/models/mlp/metadata".to_string(),
            vec![(200, METADATA.into())],
        ),
    ]);
    let serving = serve_on(Session::quiet(&engine, &host)).unwrap();
    assert_eq!(serving.url, "http://127.0.0.1:8501/v1/models/mlp");
    assert_eq!(serving.version, "3");
    assert_eq!(
        serving.try_request,
        TryRequest::Command(
            r#"curl -s -X POST http://127.0.0.1:8501/v1/models/mlp:predict -d '{"instances":[[0.0,0.0]]}'"#
                .to_string()
        )
    );
    assert_eq!(
        crate::output::notice_line(&serving.notes[0]),
        "note: serving the model `mlp` (versions 1, 3; the highest is served) with `cpu-serving`; `--name` names the model in the URLs, not the container"
    );
    let plan = engine.plan_of(&serving.launched.name).unwrap();
    assert_eq!(plan.labels[labels::MODEL], "mlp");
    assert_eq!(plan.memory, Some(8 * 1024 * 1024 * 1024));
    assert_eq!(plan.mounts[0].target, "/models/mlp");
    assert!(engine.calls_to("remove-container").is_empty());
    assert_eq!(serving.grpc, "127.0.0.1:8500");
    assert_eq!(
        serving.try_grpc,
        TryRequest::Command(
            r#"python3 -c 'import grpc, tensorflow as tf; from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc as api; r = predict_pb2.PredictRequest(); r.model_spec.name = "mlp"; r.inputs["x"].CopyFrom(tf.make_tensor_proto(tf.zeros([1, 2], "float"))); o = api.PredictionServiceStub(grpc.insecure_channel("127.0.0.1:8500")).Predict(r, 30).outputs; print({k: tf.make_ndarray(v).tolist() for k, v in o.items()})'"#
                .to_string()
        )
    );
    let (lines, note) = serving.summary();
    assert_eq!(lines[1], "model       http://127.0.0.1:8501/v1/models/mlp");
    assert_eq!(lines[2], "grpc        127.0.0.1:8500");
    assert_eq!(lines[3], "version     3");
    assert!(lines[4].starts_with("try         curl -s -X POST"));
    assert!(lines[5].starts_with("try grpc    python3 -c 'import grpc"));
    assert_eq!(note, None);
}

#[test]
fn a_server_whose_grpc_never_answers_is_removed_naming_the_port() {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let mut host = host_with_model();
    host.grpc = false;
    host.http_answers.borrow_mut().extend([
        ("/v1/models/mlp".to_string(), vec![(200, AVAILABLE.into())]),
        (
            "/v1/models/mlp/metadata".to_string(),
            vec![(200, METADATA.into())],
        ),
    ]);
    let error = serve_on(Session::quiet(&engine, &host)).unwrap_err();
    let text = format!("{error:#}");
    assert!(
        text.contains("nothing answers gRPC on 127.0.0.1:8500 after 30 s"),
        "{text}"
    );
    assert_eq!(engine.calls_to("remove-container").len(), 1);
    assert!(engine.container_names().is_empty());
}

#[test]
fn grpc_port_publishes_the_grpc_api_on_the_port_given() {
    let host = host_with_model();
    let mut request = request("/work/export/mlp");
    request.grpc_port = Some(9500);
    request.port = Some(9501);
    let model = check_model(&host, &request).unwrap();
    let target = crate::app::launch::Target {
        spec_name: "cpu-serving".into(),
        image: "tfimg/cpu-serving:2.9.3".into(),
        service: crate::spec::model::Service::Serving,
        image_user: "tf".into(),
        workdir: "/tf".into(),
        ports: specs().lines[0].cpu.ports.clone(),
        gpu_image: false,
        gpu: None,
        tfimg_image: true,
        cuda_cache: None,
    };
    let launch = launch_request(
        &host,
        &request,
        &model.into(),
        target,
        GpuSelection::None,
        false,
    )
    .unwrap();
    let published: Vec<(Option<u16>, u16)> = (launch.port_requests.iter())
        .map(|port| (port.host, port.container))
        .collect();
    assert_eq!(published, [(Some(9501), 8501), (Some(9500), 8500)]);
}

#[test]
fn a_model_that_fails_to_load_ends_the_wait_and_leaves_nothing() {
    let engine = FakeEngine::new();
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let host = host_with_model();
    host.http_answers.borrow_mut().insert(
        "/v1/models/mlp".to_string(),
        vec![(200, LOADING.into()), (200, FAILED.into())],
    );
    let error = serve_on(Session::quiet(&engine, &host)).unwrap_err();
    let text = format!("{error:#}");
    assert!(text.contains("did not come up"), "{text}");
    assert!(
        text.contains(
            "the model server could not load `mlp`: version 3: loading failed: truncated file"
        ),
        "{text}"
    );
    assert_eq!(engine.calls_to("remove-container").len(), 1);
    assert!(engine.container_names().is_empty());
}

#[test]
fn ctrl_c_stops_a_foreground_server_removes_it_and_closes_its_tunnel() {
    let engine = FakeEngine::new();
    engine.tunnels.borrow_mut().remote = true;
    engine.add_image(&["debian:bullseye-slim"], &[]);
    let host = host_with_model();
    host.http_answers.borrow_mut().extend([
        ("/v1/models/mlp".to_string(), vec![(200, AVAILABLE.into())]),
        (
            "/v1/models/mlp/metadata".to_string(),
            vec![(200, METADATA.into())],
        ),
    ]);
    let serving = serve_on(Session::quiet(&engine, &host)).unwrap();
    let launched = &serving.launched;
    assert!(launched.tunnel.is_some());
    engine.state.borrow_mut().held.insert(launched.name.clone());
    host.interrupt.set(true);
    let ui = crate::output::ui::Recorded::default();
    let after = block_on(follow(
        Session::new(&engine, &host, crate::app::session::Sinks::new(&ui, &ui)),
        launched,
    ))
    .unwrap();
    assert_eq!(after.exit_code(), 130);
    let calls = engine.calls();
    let id = &launched.id;
    let stop = calls.iter().position(|call| *call == format!("stop {id}"));
    let cancel = calls
        .iter()
        .position(|call| call.starts_with("close-tunnel "));
    let removed = calls
        .iter()
        .position(|call| *call == format!("remove-container {id}"));
    assert!(
        stop.is_some() && stop < cancel && cancel < removed,
        "stopped, its tunnel closed, then removed: {calls:?}"
    );
    assert_eq!(
        *ui.notes.borrow(),
        [format!("tfimg: stopping `{}`", launched.name)]
    );
}

const CONFIG: &str = "model_config_list {\n  config {\n    name: 'mlp'\n    base_path: '/work/export/mlp/'\n    model_version_policy { specific { versions: 1 versions: 2 } }\n    version_labels { key: 'stable' value: 1 }\n  }\n  config { name: 'other' base_path: '/work/export/mlp' model_version_policy { all {} } }\n}\n";

/// `host_with_model`, with `CONFIG` at `/work/models.config` and `--model-config` naming it.
fn config_request(text: &str) -> (FakeHost, ServeRequest) {
    let host = host_with_model();
    (host.files.borrow_mut()).insert(
        PathBuf::from("/work/models.config"),
        text.as_bytes().to_vec(),
    );
    let mut asked = request("/work/models.config");
    asked.shown = "models.config".into();
    asked.model_config = true;
    (host, asked)
}

#[test]
fn a_model_config_serves_each_model_s_policy_of_the_versions_on_disk() {
    let (host, asked) = config_request(CONFIG);
    let served = check(&host, &asked).unwrap();
    let names: Vec<(&str, &[u64])> = (served.models.iter())
        .map(|model| (model.name.as_str(), model.versions.as_slice()))
        .collect();
    assert_eq!(names, [("mlp", &[1][..]), ("other", &[1, 3][..])]);
    assert_eq!(
        served.config,
        Some((PathBuf::from("/work/models.config"), "models.config".into()))
    );
    let notes = serving_notes(&served, "cpu-serving");
    assert_eq!(
        crate::output::notice_line(&notes[0]),
        "note: serving `mlp` from `/work/export/mlp/`: versions 1, 2 (now 1)"
    );
    assert_eq!(
        crate::output::notice_line(&notes[1]),
        "note: serving `other` from `/work/export/mlp`: every version (now 1, 3)"
    );
}

#[test]
fn a_model_config_s_mistakes_name_the_file_s_line_and_column_before_anything_exists() {
    let cases = [
        ("model_config_list { config { name: 'a' base_path: '/work/nothing' } }", "`models.config`:1:40: model `a`'s base_path `/work/nothing` does not exist"),
        ("model_config_list { config { name: 'a' base_path: '/work/export/mlp' model_version_policy { specific { versions: 2 } } } }", "`models.config`:1:40: model `a`'s policy serves versions 2, and `/work/export/mlp` holds none of them (it holds 1, 3)"),
        ("model_config_list { config { name: 'a' base_path: 'export/mlp' } }", "`models.config`:1:40: `base_path: \"export/mlp\"` is not an absolute path"),
        ("model_config_list {", "`models.config`:1:19: the message opened here is not closed with `}` (TensorFlow Serving: Error parsing text-format tensorflow.serving.ModelServerConfig)"),
    ];
    for (text, wanted) in cases {
        let (host, asked) = config_request(text);
        let error = check(&host, &asked).unwrap_err();
        assert_eq!(error.to_string(), wanted, "{text}");
    }
    let (host, mut asked) = config_request(CONFIG);
    asked.model_dir = PathBuf::from("/work/missing.config");
    let error = check(&host, &asked).unwrap_err().to_string();
    assert!(
        error.starts_with("the model config `models.config` cannot be read"),
        "{error}"
    );
    let (host, asked) = config_request(&"#".repeat(2 << 20));
    let error = check(&host, &asked).unwrap_err().to_string();
    assert_eq!(
        error,
        "the model config `models.config` is over 1 MiB, which no model config is"
    );
    let (host, asked) = config_request("");
    (host.files.borrow_mut()).insert(PathBuf::from("/work/models.config"), vec![0xff, 0xfe]);
    let error = check(&host, &asked).unwrap_err().to_string();
    assert_eq!(error, "the model config `models.config` is not UTF-8 text");
}

#[test]
fn a_model_config_mounts_each_folder_and_the_file_read_only_and_names_them_to_the_server() {
    let (host, asked) = config_request(CONFIG);
    let served = check(&host, &asked).unwrap();
    let launch = |remote| {
        launch_request(
            &host,
            &asked,
            &served,
            target("cpu-serving"),
            GpuSelection::None,
            remote,
        )
        .unwrap()
    };
    let local = launch(false);
    let plans = local.mount_plans();
    let mounts: Vec<(&Path, &str, bool)> = (plans.iter())
        .map(|(mount, _)| {
            (
                mount.source.as_path(),
                mount.target.as_str(),
                mount.read_only,
            )
        })
        .collect();
    assert_eq!(
        mounts,
        [
            (Path::new("/work/export/mlp"), "/models/mlp", true),
            (Path::new("/work/export/mlp"), "/models/other", true),
            (
                Path::new("/work/models.config"),
                serving::MODEL_CONFIG_TARGET,
                true
            ),
        ]
    );
    let env: BTreeMap<&str, &str> = local
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env[serving::MODEL_CONFIG_ENV], serving::MODEL_CONFIG_TARGET);
    assert!(
        !env.contains_key(serving::ALLOW_RELOAD_CONFIG_ENV),
        "HandleReloadConfigRequest is off unless asked: {env:?}"
    );
    let base_paths: BTreeMap<String, String> =
        serde_json::from_str(env[serving::BASE_PATHS_ENV]).unwrap();
    assert_eq!(
        base_paths.len(),
        1,
        "both spellings of one folder are one key: {base_paths:?}"
    );
    assert!(["/models/mlp", "/models/other"].contains(&base_paths["/work/export/mlp"].as_str()));
    assert_eq!(local.extra_labels[labels::MODEL], "mlp");
    assert_eq!(local.extra_labels[labels::MODELS], "mlp,other");
    assert!(local.name.as_deref().unwrap().starts_with("serve-mlp-"));
    let remote = launch(true);
    assert!(remote.mounts.is_empty());
    let syncs = remote.sync_plans();
    let targets: Vec<&str> = syncs.iter().map(|sync| sync.target.as_str()).collect();
    assert_eq!(
        targets,
        ["/models/mlp", "/models/other", serving::MODEL_CONFIG_TARGET]
    );
}

#[test]
fn allow_reload_config_tells_the_server_to_answer_reloads_and_says_the_risk() {
    let (host, mut asked) = config_request(CONFIG);
    asked.allow_reload_config = true;
    let served = check(&host, &asked).unwrap();
    let launch = launch_request(
        &host,
        &asked,
        &served,
        target("cpu-serving"),
        GpuSelection::None,
        false,
    )
    .unwrap();
    let reload: Vec<&(String, String)> = (launch.env.iter())
        .filter(|(name, _)| name == serving::ALLOW_RELOAD_CONFIG_ENV)
        .collect();
    assert_eq!(
        reload,
        [&(
            serving::ALLOW_RELOAD_CONFIG_ENV.to_string(),
            "1".to_string()
        )]
    );
    assert!(RELOAD_ALLOWED.contains("anyone who reaches the gRPC port"));
    // A folder has no model config for a reload to replace: refused before anything.
    let (host, _, mut from_folder) = checked_mlp();
    from_folder.allow_reload_config = true;
    let refused = check(&host, &from_folder).unwrap_err().to_string();
    assert!(
        refused.starts_with("`--allow-reload-config` needs `--model-config`"),
        "{refused}"
    );
}

#[test]
fn the_model_config_poll_and_grpc_channel_arguments_reach_the_server_only_when_given() {
    let (host, mut asked) = config_request(CONFIG);
    let env_of = |asked: &ServeRequest| {
        let served = check(&host, asked).unwrap();
        let launch = launch_request(
            &host,
            asked,
            &served,
            target("cpu-serving"),
            GpuSelection::None,
            false,
        )
        .unwrap();
        (launch.env.into_iter())
            .filter(|(name, _)| {
                name == serving::MODEL_CONFIG_POLL_ENV
                    || name == serving::GRPC_CHANNEL_ARGUMENTS_ENV
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(env_of(&asked), [], "the server's own poll and options");
    asked.model_config_poll = Some(0);
    asked.grpc_channel_arguments = Some(r#"[["grpc.max_connection_age_ms",2000]]"#.into());
    assert_eq!(
        env_of(&asked),
        [
            (serving::MODEL_CONFIG_POLL_ENV.to_string(), "0".to_string()),
            (
                serving::GRPC_CHANNEL_ARGUMENTS_ENV.to_string(),
                r#"[["grpc.max_connection_age_ms",2000]]"#.to_string()
            ),
        ]
    );
}
