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

#[test]
fn the_example_body_has_one_instance_shaped_like_the_input() {
    assert_eq!(
        example_body(METADATA.as_bytes()).as_deref(),
        Some(r#"{"instances":[[0.0,0.0,0.0,0.0]]}"#)
    );
    let two_inputs = METADATA.replace(
        r#""name": "serving_default_dense_input:0"}}"#,
        r#""name": "a:0"}, "tag": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}]}, "name": "b:0"}}"#,
    );
    assert_eq!(
        example_body(two_inputs.as_bytes()).as_deref(),
        Some(r#"{"instances":[{"dense_input":[0.0,0.0,0.0,0.0],"tag":""}]}"#)
    );
    assert_eq!(example_body(b"{}"), None);
}

#[test]
fn the_curl_line_posts_to_predict() {
    assert_eq!(
        curl_line(
            "http://127.0.0.1:8501/v1/models/mlp",
            r#"{"instances":[[0.0]]}"#
        ),
        r#"curl -s -X POST http://127.0.0.1:8501/v1/models/mlp:predict -d '{"instances":[[0.0]]}'"#
    );
}
