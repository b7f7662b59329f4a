use std::path::PathBuf;

use super::*;
use crate::app::serve::{check_model, choose_spec, ServeRequest};
use crate::app::session::Session;
use crate::app::testing::block_on;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::plan::gpus::GpuSelection;

/// The head of a `saved_model.pb` TensorFlow `version` wrote: `meta_graphs[0]`
/// (field 2) holding `meta_info_def` (field 1) holding `tensorflow_version` (field 5).
fn saved_by(version: &str) -> Vec<u8> {
    let info = [&[0x2a, version.len() as u8][..], version.as_bytes()].concat();
    let graph = [&[0x0a, info.len() as u8][..], &info].concat();
    [&[0x08, 0x01, 0x12, graph.len() as u8][..], &graph].concat()
}

/// `/work/export/mlp` with versions `1` and `0003`, written by `first` and `second`.
fn host_with(first: &str, second: &str) -> FakeHost {
    let host = FakeHost::new();
    host.paths
        .borrow_mut()
        .insert(PathBuf::from("/work/export/mlp"));
    for (version, writer) in [("1", first), ("0003", second)] {
        let file = PathBuf::from(format!("/work/export/mlp/{version}/saved_model.pb"));
        host.paths.borrow_mut().insert(file.clone());
        host.files.borrow_mut().insert(file, saved_by(writer));
    }
    host
}

fn served(host: &FakeHost) -> Served {
    check_model(host, &request()).unwrap().into()
}

fn request() -> ServeRequest {
    crate::app::serve::tests::request("/work/export/mlp")
}

fn specs(named: Option<&str>) -> anyhow::Result<ServingSpecs> {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    ServingSpecs::lines(&FakeHost::new(), &catalog, named)
}

#[test]
fn each_served_version_says_which_tensorflow_wrote_it() {
    let host = host_with("2.9.3", "2.18.0");
    let found = writers(&host, &served(&host));
    assert_eq!(
        found,
        [
            Writer {
                model: "mlp".into(),
                version: 1,
                tensorflow: "2.9.3".into()
            },
            Writer {
                model: "mlp".into(),
                version: 3,
                tensorflow: "2.18.0".into()
            },
        ]
    );
}

#[test]
fn the_oldest_line_that_loads_the_newest_writer_serves_the_model() {
    let specs = specs(None).unwrap();
    let chosen = |first: &str, second: &str| {
        let host = host_with(first, second);
        choose(&specs, &writers(&host, &served(&host))).map(|(index, note)| {
            let line = &specs.lines[index];
            (
                line.cpu.name.clone(),
                note.map(|note| note.text().to_string()),
            )
        })
    };
    assert_eq!(
        chosen("1.15.0", "2.9.3").unwrap(),
        ("cpu-serving".to_string(), None)
    );
    let (name, note) = chosen("2.9.3", "2.16.1").unwrap();
    assert_eq!(name, "tf218-cpu-serving");
    assert_eq!(
        note.unwrap(),
        "`mlp` version 3 was written by TensorFlow 2.16.1: served by the TensorFlow 2.18.1 line (`tf218-cpu-serving`, `tf218-gpu-serving`)"
    );
    // A file that does not say: the first line, as before.
    assert_eq!(chosen("", "").unwrap(), ("cpu-serving".to_string(), None));
    let refused = chosen("2.9.3", "2.20.0").unwrap_err();
    assert_eq!(
        refused.message,
        "`mlp` version 3 was written by TensorFlow 2.20.0, newer than every serving image tfimg builds (the newest runs TensorFlow 2.18.1), which would not load it"
    );
    assert!(refused.hint.contains("`--spec`"), "{}", refused.hint);
}

#[test]
fn spec_names_the_serving_spec_and_warns_when_the_model_is_newer() {
    let named = specs(Some("cpu-serving")).unwrap();
    assert_eq!(named.lines.len(), 1);
    assert!(named.lines[0].named());
    let host = host_with("2.9.3", "2.18.0");
    let (index, note) = choose(&named, &writers(&host, &served(&host))).unwrap();
    let line = &named.lines[index];
    assert_eq!(line.cpu.name, "cpu-serving");
    assert_eq!(
        note.unwrap().text(),
        "`mlp` version 3 was written by TensorFlow 2.18.0, newer than `cpu-serving` (TensorFlow 2.9.3), which may not load it"
    );
    let not_serving = specs(Some("cpu-jupyter")).unwrap_err().to_string();
    assert!(
        not_serving
            .contains("`--spec cpu-jupyter` does not serve models (its service is `jupyter`)"),
        "{not_serving}"
    );

    // A CPU spec takes no GPU; a GPU spec needs one.
    let engine = FakeEngine::new();
    let host = FakeHost::new();
    let cpu = specs(Some("tf218-cpu-serving")).unwrap();
    let refused = block_on(choose_spec(
        Session::quiet(&engine, &host),
        Some(&GpuSelection::All),
        false,
        &cpu.lines[0],
    ))
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains("is a CPU image: it takes no GPU"),
        "{refused}"
    );
    let (spec, gpus, _) = block_on(choose_spec(
        Session::quiet(&engine, &host),
        None,
        false,
        &cpu.lines[0],
    ))
    .unwrap();
    assert_eq!(
        (spec.name.as_str(), gpus),
        ("tf218-cpu-serving", GpuSelection::None)
    );
    let gpu = specs(Some("tf218-gpu-serving")).unwrap();
    let refused = block_on(choose_spec(
        Session::quiet(&engine, &host),
        None,
        false,
        &gpu.lines[0],
    ))
    .unwrap_err()
    .to_string();
    assert!(refused.contains("no free GPU to give it"), "{refused}");
}

#[test]
fn resolve_keeps_the_line_the_model_chose_and_why() {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let host = host_with("2.9.3", "2.18.1");
    let specs = ServingSpecs::resolve(&host, &catalog, &request(), &served(&host)).unwrap();
    assert_eq!(specs.lines.len(), 2);
    assert_eq!(specs.line().gpu.name, "tf218-gpu-serving");
    assert!(specs.said.is_some());
    let mut named = request();
    named.spec = Some("cpu-serving".to_string());
    let specs = ServingSpecs::resolve(&host, &catalog, &named, &served(&host)).unwrap();
    assert_eq!(specs.line().cpu.name, "cpu-serving");
    assert!(matches!(
        specs.said,
        Some(crate::notice::Notice::Warning(_))
    ));
    let newer = host_with("2.9.3", "2.21.0");
    let refused = ServingSpecs::resolve(&newer, &catalog, &request(), &served(&newer));
    assert!(refused.is_err());
}
