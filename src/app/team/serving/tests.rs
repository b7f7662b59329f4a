//! Unit tests of serving members in `up` and the exports, on the fakes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use crate::app::session::Session;
use crate::app::team::{export_plans, up, Action, TeamImages, UpReport};
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::labels;
use crate::spec::Catalog;

const AVAILABLE: &str = r#"{"model_version_status": [{"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]}"#;
const LOADING: &str = r#"{"model_version_status": [{"version": "2", "state": "LOADING", "status": {"error_code": "OK", "error_message": ""}}]}"#;
const FAILED: &str = r#"{"model_version_status": [{"version": "2", "state": "END", "status": {"error_code": "UNKNOWN", "error_message": "loading failed: truncated file"}}]}"#;

const TEAM: &str = "team: lab\nmembers:\n  - name: ada\n    spec: cpu-headless\n    command: [sleep, '9']\n  - name: fraud\n    spec: cpu-serving\n    model: ./export/fraud\n";

fn team(text: &str) -> Team {
    crate::team::parse(text, "team.yaml", PathBuf::from("/project")).unwrap()
}

fn specs() -> BTreeMap<String, ResolvedSpec> {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    ["cpu-headless", "cpu-serving", "cpu-jupyter"]
        .into_iter()
        .map(|name| {
            (
                name.to_string(),
                crate::spec::resolve(&catalog, name).unwrap(),
            )
        })
        .collect()
}

fn images() -> TeamImages {
    TeamImages {
        specs: ["cpu-headless", "cpu-serving", "cpu-jupyter"]
            .into_iter()
            .map(|name| (name.to_string(), format!("tfimg/{name}:2.9.3-0123456789ab")))
            .collect(),
        gateway: None,
        ..Default::default()
    }
}

/// A host whose `/project/export/fraud` holds version 2, and whose model server answers
/// `answers` for the model's status, in turn.
fn host(answers: Vec<(u16, String)>) -> FakeHost {
    let host = FakeHost::new();
    for path in [
        "/project/export/fraud",
        "/project/export/fraud/2/saved_model.pb",
    ] {
        host.paths.borrow_mut().insert(PathBuf::from(path));
    }
    host.http_answers
        .borrow_mut()
        .insert("/v1/models/fraud".to_string(), answers);
    host
}

fn up_once(session: Session<'_, FakeEngine, FakeHost>, team: &Team) -> UpReport {
    crate::app::testing::block_on(up(
        session,
        team,
        &specs(),
        &images(),
        (4321, 4322),
        Some(false),
    ))
    .unwrap()
}

#[test]
fn up_mounts_the_model_read_only_and_waits_until_it_is_available() {
    let (engine, lab) = (FakeEngine::new(), team(TEAM));
    let host = host(vec![
        (404, String::new()),
        (200, LOADING.into()),
        (200, AVAILABLE.into()),
    ]);
    let mut lab = lab;
    assert!(check_models(&host, &mut lab, &specs()).is_ok());
    let report = up_once(Session::quiet(&engine, &host), &lab);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.actions["fraud"], Action::Created);
    let asked = host.http_asked.borrow().clone();
    assert_eq!(
        asked
            .iter()
            .filter(|path| *path == "/v1/models/fraud")
            .count(),
        3,
        "asked until AVAILABLE: {asked:?}"
    );
    let plan = engine.plan_of("lab-fraud").unwrap();
    let model = &plan.mounts[0];
    assert_eq!(model.source, PathBuf::from("/project/export/fraud"));
    assert_eq!(model.target, "/models/fraud");
    assert!(model.read_only);
    assert_eq!(plan.labels[labels::MODEL], "fraud");
    let url = plan.ports.iter().find(|port| port.name == "rest").unwrap();
    assert_eq!(url.container, 8501);
    assert_eq!(
        plan.labels[&labels::url_label("rest")],
        format!("http://127.0.0.1:{}/v1/models/fraud", url.host)
    );

    // The same file again: the model server is left alone.
    let again = up_once(Session::quiet(&engine, &host), &lab);
    assert_eq!(again.actions["fraud"], Action::Unchanged);
    // Another model name is another member: it is made again.
    let renamed = team(&format!("{TEAM}    model_name: fraud-v2\n"));
    host.http_answers.borrow_mut().insert(
        "/v1/models/fraud-v2".to_string(),
        vec![(200, AVAILABLE.into())],
    );
    let changed = up_once(Session::quiet(&engine, &host), &renamed);
    assert_eq!(changed.actions["fraud"], Action::Recreated);
    let plan = engine.plan_of("lab-fraud").unwrap();
    assert_eq!(plan.mounts[0].target, "/models/fraud-v2");
    assert!(
        !plan
            .env
            .iter()
            .any(|entry| entry.starts_with("TFIMG_SERVING_MAX_BATCH=")),
        "the server's own cap without `max_batch`: {:?}",
        plan.env
    );
    // A cap on merged rows reaches the server's environment, and changing it recreates
    // the member.
    let capped = team(&format!(
        "{TEAM}    model_name: fraud-v2\n    max_batch: 1\n"
    ));
    let changed = up_once(Session::quiet(&engine, &host), &capped);
    assert_eq!(changed.actions["fraud"], Action::Recreated);
    let plan = engine.plan_of("lab-fraud").unwrap();
    assert!(
        plan.env.contains(&"TFIMG_SERVING_MAX_BATCH=1".to_string()),
        "{:?}",
        plan.env
    );
}

/// `batching:` is `tfimg serve --enable-batching [--batching-parameters FILE]`: the file
/// read as serve reads it, its parameters in the server's environment, and a change to them
/// recreates the member.
#[test]
fn a_member_s_batching_reaches_its_server_and_its_file_is_read_as_serve_reads_it() {
    let host = host(vec![(200, AVAILABLE.into())]);
    (host.files.borrow_mut()).insert(
        PathBuf::from("/project/batching.config"),
        b"max_batch_size { value: 16 }\nbatch_timeout_micros { value: 2000 }\n".to_vec(),
    );
    let engine = FakeEngine::new();
    let up_with = |extra: &str| {
        let mut lab = team(&format!("{TEAM}{extra}"));
        check_models(&host, &mut lab, &specs()).map_err(|error| format!("{error:#}"))?;
        let report = up_once(Session::quiet(&engine, &host), &lab);
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        let plan = engine.plan_of("lab-fraud").unwrap();
        let batching = (plan.env.iter())
            .find_map(|entry| entry.strip_prefix("TFIMG_SERVING_BATCHING="))
            .map(|json| serde_json::from_str::<serde_json::Value>(json).unwrap());
        Ok::<_, String>((report.actions["fraud"], batching))
    };
    let (action, batching) = up_with("    batching: ./batching.config\n").unwrap();
    assert_eq!(action, Action::Created);
    let batching = batching.expect("the parameters in the server's environment");
    assert_eq!(
        (
            &batching["max_batch_size"],
            &batching["batch_timeout_micros"]
        ),
        (&serde_json::json!(16), &serde_json::json!(2000))
    );
    // TensorFlow Serving's defaults for `true`: another batching, another container.
    let (action, batching) = up_with("    batching: true\n").unwrap();
    assert_eq!(action, Action::Recreated);
    let defaults = crate::plan::batching::Batching::default();
    assert_eq!(
        batching.unwrap()["max_batch_size"],
        serde_json::json!(defaults.max_batch_size)
    );
    // A file that is not TensorFlow Serving's, or is missing, is the member's error.
    (host.files.borrow_mut()).insert(
        PathBuf::from("/project/bad.config"),
        b"max_batch_size: 0\n".to_vec(),
    );
    let error = up_with("    batching: ./bad.config\n").unwrap_err();
    assert!(
        error.starts_with("member `fraud`: its `batching`: "),
        "{error}"
    );
    let missing = up_with("    batching: ./nowhere.config\n").unwrap_err();
    assert!(
        missing.starts_with("member `fraud`: its `batching`: ")
            && missing.contains("nowhere.config"),
        "{missing}"
    );
}

#[test]
fn a_model_that_fails_to_load_is_the_member_s_failure() {
    let (engine, host) = (FakeEngine::new(), host(vec![(200, FAILED.into())]));
    let report = up_once(Session::quiet(&engine, &host), &team(TEAM));
    assert_eq!(report.started, ["ada"]);
    let (member, error) = &report.failures[0];
    assert_eq!(member, "fraud");
    assert_eq!(
        format!("{error:#}"),
        "the model server could not load `fraud`: version 2: loading failed: truncated file"
    );
}

#[test]
fn models_are_checked_against_their_specs_and_folders_at_their_place() {
    let host = host(Vec::new());
    let error = |text: &str| {
        check_models(&host, &mut team(text), &specs())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        error("team: lab\nmembers:\n  - name: bob\n    spec: cpu-serving\n"),
        "`team.yaml`:4:5: member `bob`: `cpu-serving` serves a model, and the member names none"
    );
    assert_eq!(
        error("team: lab\nmembers:\n  - name: bob\n    spec: cpu-jupyter\n    model: ./export/fraud\n"),
        "`team.yaml`:5:5: member `bob`: `model` needs a serving spec, and `cpu-jupyter` is not one"
    );
    assert_eq!(
        error(
            "team: lab\nmembers:\n  - name: bob\n    spec: cpu-serving\n    model: ./export/spam\n"
        ),
        "`team.yaml`:5:5: member `bob`: the model folder `./export/spam` does not exist"
    );
    for path in ["/project/export/empty", "/project/export/empty/1/notes.txt"] {
        host.paths.borrow_mut().insert(PathBuf::from(path));
    }
    assert_eq!(
        error("team: lab\nmembers:\n  - name: bob\n    spec: cpu-serving\n    model: export/empty\n"),
        "`team.yaml`:5:5: member `bob`: the model folder `export/empty`: its numbered folders hold no `saved_model.pb`"
    );
    // A command replaces the server: no model needed.
    let mut batch = team(
        "team: lab\nmembers:\n  - name: bob\n    spec: cpu-serving\n    command: [python, x.py]\n",
    );
    assert!(check_models(&host, &mut batch, &specs()).is_ok());
}

#[test]
fn a_model_is_refused_on_a_remote_engine_and_exported_with_its_mount() {
    let lab = team(TEAM);
    let error = crate::app::team::check_mounts_are_local(&lab, Some("ssh://gpu-box")).unwrap_err();
    assert_eq!(
        error.message,
        "member `fraud`: the model folder `./export/fraud` is on this machine, and the engine runs on `ssh://gpu-box`"
    );
    let host = host(Vec::new());
    let images = images().specs;
    let (plans, _) = export_plans(&host, &lab, &specs(), &images, (4321, 4322), false).unwrap();
    let (_, plan) = plans.iter().find(|(name, _)| name == "fraud").unwrap();
    assert_eq!(plan.mounts[0].target, "/models/fraud");
    assert!(host.made.borrow().is_empty(), "{:?}", host.made.borrow());
}

/// A member with `model_config:` is launched as `tfimg serve --model-config` launches:
/// each model's folder and the file mounted read-only, the server told where, and `up`
/// waits for every model.
#[test]
fn a_member_s_model_config_serves_each_of_its_models_and_up_waits_for_all() {
    let text = "team: lab\nmembers:\n  - name: fraud\n    spec: cpu-serving\n    model_config: ./models.config\n";
    let mut lab = team(text);
    let host = host(vec![(200, AVAILABLE.into())]);
    for path in [
        "/project/export/churn",
        "/project/export/churn/1/saved_model.pb",
    ] {
        host.paths.borrow_mut().insert(PathBuf::from(path));
    }
    host.http_answers.borrow_mut().insert(
        "/v1/models/churn".to_string(),
        vec![(404, String::new()), (200, AVAILABLE.into())],
    );
    let config = "model_config_list {\n  config { name: 'fraud' base_path: '/project/export/fraud' }\n  config { name: 'churn' base_path: '/project/export/churn' }\n}\n";
    (host.files.borrow_mut()).insert(PathBuf::from("/project/models.config"), config.into());
    check_models(&host, &mut lab, &specs()).unwrap();
    let engine = FakeEngine::new();
    let report = up_once(Session::quiet(&engine, &host), &lab);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let plan = engine.plan_of("lab-fraud").unwrap();
    let mounts: Vec<(&str, &str, bool)> = (plan.mounts.iter())
        .map(|mount| {
            (
                mount.source.to_str().unwrap(),
                mount.target.as_str(),
                mount.read_only,
            )
        })
        .collect();
    assert_eq!(
        mounts,
        [
            ("/project/export/fraud", "/models/fraud", true),
            ("/project/export/churn", "/models/churn", true),
            (
                "/project/models.config",
                crate::plan::serving::MODEL_CONFIG_TARGET,
                true
            ),
        ]
    );
    assert_eq!(plan.labels[labels::MODEL], "fraud");
    assert_eq!(plan.labels[labels::MODELS], "fraud,churn");
    // The team file is the one source of a member's models: no reload over gRPC.
    let reload = crate::plan::serving::ALLOW_RELOAD_CONFIG_ENV;
    assert!(
        !plan.env.iter().any(|variable| variable.starts_with(reload)),
        "{:?}",
        plan.env
    );
    let asked = host.http_asked.borrow().clone();
    assert!(
        asked.contains(&"/v1/models/churn".to_string()),
        "up waited for churn too: {asked:?}"
    );

    let fresh = self::host(Vec::new());
    let refused = |text: &str| {
        let mut lab = team(text);
        check_models(&fresh, &mut lab, &specs())
            .map(|_| ())
            .map_err(|error| format!("{error:#}"))
    };
    assert_eq!(
        crate::team::parse(
            &format!("{text}    model: ./export/fraud\n"),
            "team.yaml",
            PathBuf::from("/project")
        )
        .map(|_| ())
        .map_err(|error| error.to_string()),
        Err(
            "`team.yaml`:5:5: member `fraud`: `model_config` with `model` or `model_name`"
                .to_string()
        )
    );
    (fresh.files.borrow_mut()).insert(
        PathBuf::from("/project/models.config"),
        b"model_config_list { config { name: 'x' base_path: '/nowhere' } }".to_vec(),
    );
    assert_eq!(
        refused(text),
        Err("member `fraud`: its `model_config`: `./models.config`:1:40: model `x`'s base_path `/nowhere` does not exist".to_string())
    );
}

#[test]
fn a_model_a_newer_tensorflow_wrote_than_the_member_s_spec_is_warned_of() {
    let (engine, host) = (FakeEngine::new(), host(vec![(200, AVAILABLE.into())]));
    // `saved_model.pb`'s `meta_graphs[0].meta_info_def.tensorflow_version`: 2.18.1.
    let info = [&[0x2a, 6][..], b"2.18.1"].concat();
    let graph = [&[0x0a, info.len() as u8][..], &info].concat();
    let file = [&[0x12, graph.len() as u8][..], &graph].concat();
    host.files.borrow_mut().insert(
        PathBuf::from("/project/export/fraud/2/saved_model.pb"),
        file,
    );
    let mut lab = team(TEAM);
    check_models(&host, &mut lab, &specs()).unwrap();
    let warning = lab.members[1].model.as_ref().unwrap().warning.clone();
    assert_eq!(
        warning.as_deref(),
        Some("`fraud` version 2 was written by TensorFlow 2.18.1, newer than `cpu-serving` (TensorFlow 2.9.3), which may not load it")
    );
    let report = up_once(Session::quiet(&engine, &host), &lab);
    let said: Vec<&str> = report
        .notes
        .iter()
        .map(crate::notice::Notice::text)
        .collect();
    assert!(
        said.iter()
            .any(|note| note
                .starts_with("`fraud`: `fraud` version 2 was written by TensorFlow 2.18.1")),
        "{said:?}"
    );
    // Written by the spec's own TensorFlow: nothing to say.
    let mut same = team(TEAM);
    let info = [&[0x2a, 5][..], b"2.9.3"].concat();
    let graph = [&[0x0a, info.len() as u8][..], &info].concat();
    let file = [&[0x12, graph.len() as u8][..], &graph].concat();
    host.files.borrow_mut().insert(
        PathBuf::from("/project/export/fraud/2/saved_model.pb"),
        file,
    );
    check_models(&host, &mut same, &specs()).unwrap();
    assert_eq!(same.members[1].model.as_ref().unwrap().warning, None);
}
