use super::*;

const METADATA: &str = r#"{"model_spec": {"name": "mlp", "signature_name": "", "version": "1"},
 "metadata": {"signature_def": {"signature_def": {
  "serving_default": {"inputs": {"dense_input": {"dtype": "DT_FLOAT",
     "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "4", "name": ""}], "unknown_rank": false},
     "name": "serving_default_dense_input:0"}},
   "outputs": {}, "method_name": "tensorflow/serving/predict"}}}}}"#;

#[test]
fn model_names_are_checked_naming_the_flag_or_the_folder() {
    assert!(check_model_name("mlp", false).is_ok());
    assert!(check_model_name("mlp_v2.1-b", true).is_ok());
    let flag = check_model_name("my model", false).unwrap_err();
    assert_eq!(flag.message, "`--name my model` is not a valid model name");
    let folder = check_model_name(".hidden", true).unwrap_err();
    assert_eq!(
        folder.message,
        "the folder name `.hidden` is not a valid model name"
    );
    assert!(folder.hint.contains("--name"));
    assert!(check_model_name(&"m".repeat(65), false).is_err());
}

#[test]
fn only_numbered_folders_are_versions() {
    assert_eq!(version_of("1"), Some(1));
    assert_eq!(version_of("0007"), Some(7));
    assert_eq!(version_of("v1"), None);
    assert_eq!(version_of(""), None);
    assert_eq!(version_of("99999999999999999999999"), None);
}

#[test]
fn a_folder_without_a_version_says_what_it_lacks() {
    let empty = no_version("MODEL_DIR `./export`", &[]);
    assert_eq!(empty.message, "MODEL_DIR `./export`: it is empty");
    assert!(empty.hint.contains("MODEL_DIR/1"));
    let unnumbered = no_version("MODEL_DIR `./export`", &["saved_model.pb".to_string()]);
    assert_eq!(
        unnumbered.message,
        "MODEL_DIR `./export`: it has no numbered version folder"
    );
    let hollow = no_version("MODEL_DIR `./export`", &["1".to_string()]);
    assert_eq!(
        hollow.message,
        "MODEL_DIR `./export`: its numbered folders hold no `saved_model.pb`"
    );
}

#[test]
fn the_status_answer_says_available_waiting_or_failed() {
    let available = br#"{"model_version_status": [{"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]}"#;
    assert_eq!(
        model_state(200, available),
        ModelState::Available {
            version: "2".into()
        }
    );
    let loading = br#"{"model_version_status": [{"version": "1", "state": "LOADING", "status": {"error_code": "OK", "error_message": ""}}]}"#;
    assert_eq!(model_state(200, loading), ModelState::Waiting);
    assert_eq!(
        model_state(
            404,
            br#"{"error": "Could not find any versions of model mlp"}"#
        ),
        ModelState::Waiting
    );
    assert_eq!(model_state(200, b"not json"), ModelState::Waiting);
    let failed = br#"{"model_version_status": [{"version": "1", "state": "END", "status": {"error_code": "UNKNOWN", "error_message": "loading failed: bad file"}}]}"#;
    assert_eq!(
        model_state(200, failed),
        ModelState::Failed {
            message: "version 1: loading failed: bad file".into()
        }
    );
}

/// METADATA with the default signature's input `dense_input` shaped `dims` (JSON sizes).
fn metadata_with_input(dims: &str) -> String {
    METADATA.replace(
        r#"[{"size": "-1", "name": ""}, {"size": "4", "name": ""}]"#,
        dims,
    )
}

fn command(request: TryRequest) -> String {
    match request {
        TryRequest::Command(command) => command,
        TryRequest::Unavailable(why) => panic!("no command: {why}"),
    }
}

const URL: &str = "http://127.0.0.1:8501/v1/models/mlp";

#[test]
fn the_request_to_try_has_one_instance_shaped_like_the_input() {
    assert_eq!(
        command(try_request(URL, METADATA.as_bytes())),
        r#"curl -s -X POST http://127.0.0.1:8501/v1/models/mlp:predict -d '{"instances":[[0.0,0.0,0.0,0.0]]}'"#
    );
    let two_inputs = METADATA.replace(
        r#""name": "serving_default_dense_input:0"}}"#,
        r#""name": "a:0"}, "tag": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}]}, "name": "b:0"}}"#,
    );
    assert_eq!(
        command(try_request(URL, two_inputs.as_bytes())),
        r#"curl -s -X POST http://127.0.0.1:8501/v1/models/mlp:predict -d '{"instances":[{"dense_input":[0.0,0.0,0.0,0.0],"tag":""}]}'"#
    );
    // An unknown dimension past the batch counts 1; integers and booleans have their zero.
    let unknown = metadata_with_input(
        r#"[{"size": "-1", "name": ""}, {"size": "-1", "name": ""}, {"size": "2", "name": ""}]"#,
    )
    .replace("DT_FLOAT", "DT_INT32");
    assert!(
        command(try_request(URL, unknown.as_bytes())).ends_with(r#"-d '{"instances":[[[0,0]]]}'"#)
    );
    let flag = METADATA.replace("DT_FLOAT", "DT_BOOL");
    assert!(command(try_request(URL, flag.as_bytes()))
        .ends_with(r#"-d '{"instances":[[false,false,false,false]]}'"#));
}

/// Issue 28, item 8: the line sent 64 zeros for any input wider than 64, so a 784-wide
/// model's own example failed. Every value is sent; past LITERAL_BODY_BYTES python3 writes
/// the body, as short for an image as for 4 values.
#[test]
fn a_wide_input_s_request_is_made_by_python_with_every_value() {
    let wide = metadata_with_input(r#"[{"size": "-1", "name": ""}, {"size": "784", "name": ""}]"#);
    assert_eq!(
        command(try_request(URL, wide.as_bytes())),
        r#"python3 -c 'import json; print(json.dumps({"instances": [[0.0] * 784]}))' | curl -s -X POST http://127.0.0.1:8501/v1/models/mlp:predict -d @-"#
    );
    let image = metadata_with_input(
        r#"[{"size": "-1", "name": ""}, {"size": "224", "name": ""}, {"size": "224", "name": ""}, {"size": "3", "name": ""}]"#,
    );
    assert!(command(try_request(URL, image.as_bytes()))
        .contains(r#"json.dumps({"instances": [[[[0.0] * 3] * 224] * 224]})"#));
    // 64 floats are written out; 128 are over LITERAL_BODY_BYTES.
    let narrow = metadata_with_input(r#"[{"size": "-1", "name": ""}, {"size": "64", "name": ""}]"#);
    assert!(command(try_request(URL, narrow.as_bytes())).starts_with("curl "));
    let wider = metadata_with_input(r#"[{"size": "-1", "name": ""}, {"size": "128", "name": ""}]"#);
    assert!(command(try_request(URL, wider.as_bytes())).starts_with("python3 -c "));
}

#[test]
fn a_name_with_a_quote_stays_one_word_of_the_command() {
    let quoted = METADATA.replace(r#""dense_input""#, r#""it's""#).replace(
        r#""name": "serving_default_dense_input:0"}}"#,
        r#""name": "a:0"}, "b": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}]}, "name": "b:0"}}"#,
    );
    let line = command(try_request(URL, quoted.as_bytes()));
    let words = shlex::split(&line).expect("words");
    assert_eq!(
        words.last().map(String::as_str),
        Some(r#"{"instances":[{"b":"","it's":[0.0,0.0,0.0,0.0]}]}"#),
        "{line}"
    );
}

#[test]
fn without_a_predict_default_signature_it_says_why_there_is_no_request() {
    let other = METADATA.replace("serving_default", "scores");
    assert_eq!(
        try_request(URL, other.as_bytes()),
        TryRequest::Unavailable(
            "the model has no `serving_default` signature; name one of its signatures (`scores`) in a request's `signature_name`".into()
        )
    );
    let classify = METADATA.replace("tensorflow/serving/predict", "tensorflow/serving/classify");
    assert_eq!(
        try_request(URL, classify.as_bytes()),
        TryRequest::Unavailable(
            "its default signature takes tf.Example features, which its metadata does not name: POST `{\"examples\": [{\"FEATURE\": VALUE}]}` to http://127.0.0.1:8501/v1/models/mlp:classify".into()
        )
    );
    assert_eq!(
        try_request(URL, b"{}"),
        TryRequest::Unavailable("the server's metadata for the model is unreadable".into())
    );
}

/// The gRPC line feeds every input a tensor of zeros of its dtype (strings and booleans
/// included: `tf.zeros` makes `b""` and `False`), shaped as the REST line's instance with
/// a batch of one, through TensorFlow Serving's own client.
#[test]
fn the_grpc_request_to_try_feeds_each_input_zeros_of_its_dtype() {
    let two_inputs = METADATA.replace(
        r#""name": "serving_default_dense_input:0"}}"#,
        r#""name": "a:0"}, "tag": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}]}, "name": "b:0"}}"#,
    );
    assert_eq!(
        command(try_grpc(
            "127.0.0.1:9500",
            "mlp",
            URL,
            two_inputs.as_bytes()
        )),
        r#"python3 -c 'import grpc, tensorflow as tf; from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc as api; r = predict_pb2.PredictRequest(); r.model_spec.name = "mlp"; r.inputs["dense_input"].CopyFrom(tf.make_tensor_proto(tf.zeros([1, 4], "float"))); r.inputs["tag"].CopyFrom(tf.make_tensor_proto(tf.zeros([1], "string"))); o = api.PredictionServiceStub(grpc.insecure_channel("127.0.0.1:9500")).Predict(r, 30).outputs; print({k: tf.make_ndarray(v).tolist() for k, v in o.items()})'"#
    );
    let classify = METADATA.replace("tensorflow/serving/predict", "tensorflow/serving/classify");
    assert!(matches!(
        try_grpc("127.0.0.1:9500", "mlp", URL, classify.as_bytes()),
        TryRequest::Unavailable(why) if why.contains("tf.Example features")
    ));
}

#[test]
fn allow_reload_config_needs_a_model_config() {
    assert!(flags::allow_reload_config(true, true).is_ok());
    assert!(flags::allow_reload_config(false, false).is_ok());
    let refused = flags::allow_reload_config(true, false).unwrap_err();
    assert_eq!(
        refused.message,
        "`--allow-reload-config` needs `--model-config`: `HandleReloadConfigRequest` replaces a model config, and MODEL_DIR has none"
    );
    assert!(refused
        .hint
        .contains("--model-config ./models.config --allow-reload-config"));
}

#[test]
fn a_version_folder_points_at_its_parent_as_written() {
    let hint = |shown: &str| version_folder_given(shown).hint;
    assert_eq!(
        hint("./export/fraud/1"),
        "serve the folder that holds the numbered versions: `tfimg serve ./export/fraud`"
    );
    assert!(hint("/srv/m/3/").ends_with("`tfimg serve /srv/m`"));
    assert!(hint("1").ends_with("`tfimg serve ..`"));
    assert!(hint("/1").ends_with("`tfimg serve /`"));
}

#[test]
fn grpc_channel_arguments_are_tensorflow_serving_s_pairs_with_numbers_as_numbers() {
    let json = flags::grpc_channel_arguments(
        "grpc.max_connection_age_ms=2000,grpc.lb_policy_name=grpclb,grpc.primary_user_agent=",
    )
    .unwrap();
    assert_eq!(
        json,
        r#"[["grpc.max_connection_age_ms",2000],["grpc.lb_policy_name","grpclb"],["grpc.primary_user_agent",""]]"#
    );
    // Past a C int, or with a sign gRPC's own reading would not take, a value is text.
    let json = flags::grpc_channel_arguments("grpc.a=2147483648,grpc.b=+5,grpc.c=-1").unwrap();
    assert_eq!(
        json,
        r#"[["grpc.a","2147483648"],["grpc.b","+5"],["grpc.c",-1]]"#
    );
    let error = |text: &str| flags::grpc_channel_arguments(text).unwrap_err().to_string();
    assert_eq!(
        error("max_connection_age_ms=2000"),
        "`--grpc-channel-arguments max_connection_age_ms=2000`: `max_connection_age_ms` is not a gRPC channel argument (they start with `grpc.`)"
    );
    assert_eq!(
        error("grpc.a=1,grpc.b"),
        "`--grpc-channel-arguments grpc.a=1,grpc.b`: `grpc.b` is no `key=value` pair"
    );
    assert!(
        error("").contains("`` is no `key=value` pair"),
        "{}",
        error("")
    );
    assert!(error("grpc.=1").contains("is not a gRPC channel argument"));
    assert!(
        error("grpc.A\u{1b}[31m=1").contains("grpc.A\\u{1b}[31m"),
        "{}",
        error("grpc.A\u{1b}[31m=1")
    );
    let many = vec!["grpc.a=1"; 65].join(",");
    assert_eq!(
        error(&many),
        "`--grpc-channel-arguments` has 65 pairs, over 64"
    );
    let long = format!("grpc.a={}", "x".repeat(5000));
    assert_eq!(
        error(&long),
        "`--grpc-channel-arguments` is over 4096 bytes"
    );
}

#[test]
fn the_model_config_poll_is_whole_seconds_from_zero() {
    assert_eq!(flags::model_config_poll("0").unwrap(), 0);
    assert_eq!(flags::model_config_poll("60").unwrap(), 60);
    for bad in ["", "-1", "1.5", "+3", "86401", "99999999999999999999"] {
        let error = flags::model_config_poll(bad).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!(
                "`--model-config-poll {bad}` is not a number of seconds"
            )),
            "{error}"
        );
    }
}
