use super::*;

const TWO_MODELS: &str = r#"model_config_list {
  config {
    name: "fraud"
    base_path: "/srv/models/fraud"
    model_platform: "tensorflow"
    model_version_policy { specific { versions: 1 versions: 2 } }
    version_labels { key: "stable" value: 1 }
    version_labels { key: "canary" value: 2 }
  }
  config: {
    name: 'churn',
    base_path: '/srv/models/churn',
    model_version_policy: { latest: { num_versions: 2 } },
  }
}
"#;

#[test]
fn two_models_with_policies_and_labels_read_as_tensorflow_serving_reads_them() {
    let config = read("models.config", TWO_MODELS).unwrap();
    assert_eq!(config.models.len(), 2);
    let fraud = &config.models[0];
    assert_eq!(fraud.name, "fraud");
    assert_eq!(fraud.base_path, "/srv/models/fraud");
    assert_eq!((fraud.base_path_at.line, fraud.base_path_at.column), (4, 5));
    assert_eq!(fraud.policy, VersionPolicy::Specific(vec![1, 2]));
    assert_eq!(
        fraud.labels,
        BTreeMap::from([("canary".to_string(), 2), ("stable".to_string(), 1)])
    );
    assert_eq!(config.models[1].policy, VersionPolicy::Latest(2));
    let default = read(
        "m",
        "model_config_list { config { name: 'a' base_path: '/a' } }",
    )
    .unwrap();
    assert_eq!(default.models[0].policy, VersionPolicy::Latest(1));
    let all = "model_config_list { config { name: 'a' base_path: '/a' model_version_policy { all {} } } }";
    assert_eq!(read("m", all).unwrap().models[0].policy, VersionPolicy::All);
}

#[test]
fn a_policy_serves_what_tensorflow_serving_serves_of_the_versions_on_disk() {
    let on_disk = [1, 2, 5, 7];
    assert_eq!(VersionPolicy::Latest(1).served(&on_disk), [7]);
    assert_eq!(VersionPolicy::Latest(2).served(&on_disk), [5, 7]);
    assert_eq!(VersionPolicy::Latest(9).served(&on_disk), on_disk);
    assert_eq!(VersionPolicy::All.served(&on_disk), on_disk);
    assert_eq!(
        VersionPolicy::Specific(vec![5, 1, 3]).served(&on_disk),
        [1, 5]
    );
    assert!(VersionPolicy::Specific(vec![3]).served(&on_disk).is_empty());
    assert!(VersionPolicy::Latest(1).served(&[]).is_empty());
}

#[test]
fn every_mistake_names_its_line_and_column_with_a_hint() {
    let wrap = |inner: &str| format!("model_config_list {{\n  config {{\n{inner}\n  }}\n}}\n");
    let cases: Vec<(String, (usize, usize), &str)> = vec![
        (wrap("    name: 'a'\n    base_path: 'models/a'"), (4, 5), "not an absolute path"),
        (wrap("    name: 'a b'\n    base_path: '/a'"), (3, 5), "not a model name"),
        (wrap("    name: 'a'\n    base_pth: '/a'"), (4, 5), "did you mean `base_path`?"),
        (wrap("    name: 'a'"), (2, 3), "has no `base_path`"),
        (wrap("    name: 'a' name: 'b' base_path: '/a'"), (3, 15), "given twice"),
        (wrap("    name: a\n    base_path: '/a'"), (3, 5), "is a string"),
        (wrap("    name: 'a' base_path: '/a' model_platform: 'tensorrt'"), (3, 31), "not served by tfimg"),
        (wrap("    name: 'a' base_path: '/a' model_version_policy { latest { num_versions: 0 } }"), (3, 63), "serves nothing"),
        (wrap("    name: 'a' base_path: '/a' model_version_policy { specific { versions: -1 } }"), (3, 65), "negative"),
        (wrap("    name: 'a' base_path: '/a' model_version_policy { specific { } }"), (3, 54), "names no version"),
        (wrap("    name: 'a' base_path: '/a' model_version_policy { newest {} }"), (3, 54), "not a field here"),
        (wrap("    name: 'a' base_path: '/a' model_version_policy { all {} latest {} }"), (3, 31), "holds one policy"),
        (wrap("    name: 'a' base_path: '/a' version_labels { key: 'x/y' value: 1 }"), (3, 48), "not a label a URL takes"),
        (wrap("    name: 'a' base_path: '/a' version_labels { key: 'x' }"), (3, 31), "needs a `key` and a `value`"),
        (wrap("    name: 'a' base_path: '/a' version_labels { key: 'x' value: 1 } version_labels { key: 'x' value: 2 }"), (3, 68), "given twice"),
        (wrap("    name: 'a' base_path: '/a' logging_config {}"), (3, 31), "not done by tfimg"),
        (wrap("    name: 'a' base_path: '/a'\n  }\n  config {\n    name: 'a' base_path: '/b'"), (5, 3), "configured twice"),
        ("model_config_list {}".into(), (1, 1), "names no model"),
        ("".into(), (1, 1), "names no model"),
        ("custom_model_config {}".into(), (1, 1), "not served"),
        ("model_config_list { model { } }".into(), (1, 21), "not a field here"),
        ("model_config_list {".into(), (1, 19), "not closed"),
    ];
    for (text, (line, column), wanted) in &cases {
        let error = read("models.config", text).expect_err(text);
        let shown = format!("{error} hint: {}", error.hint);
        assert!(shown.contains(wanted), "{text}\n{shown}");
        assert!(!error.hint.is_empty(), "{text}: no hint");
        let location = error.location.as_ref().expect("a location");
        assert_eq!(
            (location.line, location.column),
            (*line, *column),
            "{text}\n{shown}"
        );
        assert_eq!(location.file, "models.config");
    }
}
