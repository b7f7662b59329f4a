#[test]
fn the_saving_tfimg_is_printed_with_its_escapes_escaped() {
    let manifest = crate::bundle::Manifest::new("0.1.0\u{1b}]0;owned\u{7}\u{1b}[2J", 0);
    let line = super::checked_line(
        std::path::Path::new("lab.tar"),
        &manifest,
        std::time::Duration::ZERO,
    );
    assert!(
        !line.contains('\u{1b}') && !line.contains('\u{7}'),
        "{line:?}"
    );
    assert!(
        line.contains("saved by tfimg 0.1.0\\u{1b}]0;owned\\u{7}\\u{1b}[2J on 1970-01-01"),
        "{line}"
    );
}

#[test]
fn a_loaded_spec_names_its_files_and_which_were_unchanged() {
    use crate::bundle::{BundledSpec, Manifest, SpecSource};
    use std::path::{Path, PathBuf};
    let mut manifest = Manifest::new("0.1.0", 0);
    manifest.specs.push(BundledSpec {
        name: "lab".to_string(),
        source: SpecSource::File,
        part: "specs/lab.yaml".to_string(),
        lock: Some("specs/lab.lock".to_string()),
        image: None,
    });
    let unchanged = [PathBuf::from("images/lab.lock")];
    let rows = super::loaded_rows(&manifest, Path::new("images"), &unchanged);
    assert_eq!(
        rows,
        [[
            "spec",
            "lab",
            "images/lab.yaml, images/lab.lock (unchanged)"
        ]]
    );
    let rows = super::saved_rows(&manifest);
    assert_eq!(rows, [["spec", "lab", "specs/lab.yaml, specs/lab.lock"]]);
}
