use std::path::PathBuf;

use super::*;

#[test]
fn the_built_ins_are_listed_without_their_abstract_parents_and_with_their_support() {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let today = Date::parse("2026-11-26").unwrap();
    let (entries, problems) = list(&catalog, today);
    assert!(problems.is_empty(), "{problems:?}");
    let jupyter = entries
        .iter()
        .find(|entry| entry.name == "cpu-jupyter")
        .unwrap();
    assert_eq!((jupyter.service.as_str(), jupyter.gpu), ("jupyter", false));
    assert_eq!(jupyter.past_support, jupyter.support.is_past());
    assert_ne!(jupyter.support.cell(), "-");
    let gpu = entries
        .iter()
        .find(|entry| entry.name == "gpu-jupyter")
        .unwrap();
    assert!(gpu.cuda.is_some() && gpu.gpu);
    let names: Vec<&str> = entries.iter().map(|entry| entry.name.as_str()).collect();
    assert!(
        catalog
            .documents()
            .filter(|document| document.file.is_abstract == Some(true))
            .all(|document| !names.contains(&document.name.as_str())),
        "{names:?}"
    );
}
