use super::*;

#[test]
fn builtins_parse_and_chain() {
    let catalog = Catalog::builtin(PathBuf::from("/"));
    assert_eq!(
        catalog.names(),
        [
            "cpu-headless",
            "cpu-jupyter",
            "cpu-serving",
            "cpu-ssh",
            "gpu-headless",
            "gpu-jupyter",
            "gpu-serving",
            "gpu-ssh",
            "tf218-cpu-headless",
            "tf218-cpu-jupyter",
            "tf218-cpu-serving",
            "tf218-cpu-ssh",
            "tf218-gpu-headless",
            "tf218-gpu-jupyter",
            "tf218-gpu-serving",
            "tf218-gpu-ssh",
        ]
    );
    let leaf = catalog.find("gpu-jupyter").unwrap();
    let chain = catalog.chain(leaf).unwrap();
    let names: Vec<_> = chain.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["base", "gpu-base", "gpu-jupyter"]);
    // The current line is its 2.9 sibling with another base and TensorFlow.
    let leaf = catalog.find("tf218-gpu-jupyter").unwrap();
    let chain = catalog.chain(leaf).unwrap();
    let names: Vec<_> = chain.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["base", "gpu-base", "gpu-jupyter", "tf218-gpu-jupyter"]
    );
}

#[test]
fn extends_errors_name_the_file_even_without_positions() {
    // Found by `just fuzz`: when yaml-rust2 could not index a file serde_yaml read,
    // this error named no file.
    let catalog = Catalog::builtin(PathBuf::from("/"));
    let text = "name: x\nextends: nothing\n";
    let mut document =
        SpecDocument::parse(text, "x.yaml", Origin::File("x.yaml".into()), "x").unwrap();
    document.positions = PositionIndex::default();
    let error = catalog.chain(document).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`x.yaml`:1:1: `extends: nothing` names no spec"
    );
}

#[test]
fn yaml_messages_lose_their_positions() {
    let error = SpecDocument::parse("name: x\nextend", "x.yaml", Origin::Builtin, "x").unwrap_err();
    assert_eq!(
        error.to_string(),
        "`x.yaml`:3:1: could not find expected ':', while scanning a simple key"
    );
}

#[test]
fn broken_yaml_is_named_for_what_it_is_and_where() {
    let error = |text: &str| {
        let error = SpecDocument::parse(text, "x.yaml", Origin::Builtin, "x").unwrap_err();
        (error.to_string(), error.hint)
    };
    for empty in ["", " \n", "# later\n", "---\n", "null\n", "~\n"] {
        assert_eq!(
            error(empty).0,
            "`x.yaml`:1:1: the spec is empty",
            "{empty:?}"
        );
    }
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    assert_eq!(
        error(&format!("extends: x\nfiles:\n  - {deep}\n")).0,
        "`x.yaml`:3:131: the YAML nests too deeply (more than 128 levels)"
    );
    // The first problem in the file wins: an unknown field before the deep part.
    assert_eq!(
        error(&"{a: ".repeat(30_000)).0,
        "`x.yaml`:1:2: unknown field `a`, expected one of `name`, `abstract`, `extends`, `description`, `base`, `tensorflow`, `python`, `gpu`, `cuda_provider`, `cuda`, `cudnn`, `service`, `packages`, `env`, `ports`, `user`, `workdir`, `tensorboard_logdir`, `files`"
    );
    let mut levels = vec![String::from("&a0 [x, x, x, x, x, x, x, x, x]")];
    for level in 1..10 {
        levels.push(format!(
            "&a{level} [{}]",
            vec![format!("*a{}", level - 1); 9].join(", ")
        ));
    }
    assert_eq!(
        error(&format!(
            "extends: x\nfiles:\n  - [{}]\n",
            levels.join(", ")
        )),
        (
            "`x.yaml`:3:3: the anchors and aliases expand to too many values".into(),
            "write the values out instead of repeating aliases (`*name`)".into()
        )
    );
    assert_eq!(
        error("name: a\nname: b\n").0,
        "`x.yaml`:2:1: duplicate field `name`"
    );
    assert_eq!(
        error("packages:\n\tpip: [numpy]\n"),
        (
            "`x.yaml`:2:1: a tab indents this line; YAML indents with spaces only".into(),
            "replace the tab with spaces".into()
        )
    );
    assert_eq!(
        error("extends: x\n---\nextends: y\n"),
        (
            "`x.yaml`:2:1: the file holds more than one YAML document".into(),
            "a spec is one document: remove the `---` line and what follows it".into()
        )
    );
    assert_eq!(
        error("tensorflow: 99999999999999999999\n").0,
        "`x.yaml`:1:13: tensorflow: version 99999999999999999999 is not quoted, so YAML reads it as a number"
    );
}

#[test]
fn bad_names_are_shown_shortened_and_escaped() {
    let error = |name: &str| {
        let text = format!("name: {name}\n");
        let error = SpecDocument::parse(&text, "x.yaml", Origin::Builtin, "x").unwrap_err();
        (error.to_string(), error.hint)
    };
    assert_eq!(
        error(&"a".repeat(100_000)),
        (
            format!(
                "`x.yaml`:1:7: spec name `{}…` is too long (100000 characters, at most 64)",
                "a".repeat(64)
            ),
            "use at most 64 lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit (it becomes the image name)".into()
        )
    );
    assert_eq!(
        error("lab\u{200b}").0,
        "`x.yaml`:1:7: spec name `lab\\u{200b}` is not valid"
    );
    assert!(SpecDocument::parse(
        &format!("name: {}\n", "a".repeat(64)),
        "x.yaml",
        Origin::Builtin,
        "x"
    )
    .is_ok());
}

#[test]
fn spec_files_must_be_utf_8() {
    let bytes = b"name: lab\ndescription: caf\xe9\n".to_vec();
    let error = file_document("./x.yaml", Ok(bytes)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`./x.yaml`:2:17: the file is not valid UTF-8"
    );
    assert_eq!(error.hint, "save the file as UTF-8");
    let unreadable = file_document("./y.yaml", Err("No such file".into())).unwrap_err();
    assert_eq!(
        unreadable.to_string(),
        "cannot read spec file `./y.yaml`: No such file"
    );
}

#[test]
fn names_must_be_image_friendly() {
    assert!(valid_name("gpu-jupyter"));
    assert!(valid_name("tf2.9_lab"));
    assert!(!valid_name("GPU"));
    assert!(!valid_name("-x"));
    assert!(!valid_name(""));
    assert!(!valid_name("a b"));
}
