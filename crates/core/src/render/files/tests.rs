//! Unit tests of the build context's files.

/// A module added to the package is carried too: the list names every file there is.
#[test]
fn the_serving_package_carries_every_module_of_its_folder() {
    let folder = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/render/templates/tfimg_serving"
    );
    let mut on_disk: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".py"))
        .collect();
    on_disk.sort();
    let carried: Vec<&str> = super::SERVING_MODULES
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(on_disk, carried);
}
