use super::*;

#[test]
fn indexes_keys_values_and_list_items() {
    let text =
        "name: x\nports:\n  jupyter: 8888\npackages:\n  pip: [numpy, pandas]\n  apt:\n    - tini\n";
    let index = PositionIndex::build(text);
    assert_eq!(index.key("name"), Some((1, 1)));
    assert_eq!(index.value("name"), Some((1, 7)));
    assert_eq!(index.key("ports.jupyter"), Some((3, 3)));
    assert_eq!(index.value("ports.jupyter"), Some((3, 12)));
    assert_eq!(index.scalar("ports.jupyter"), Some("8888"));
    assert_eq!(index.value("packages.pip=pandas"), Some((5, 16)));
    assert_eq!(index.value("packages.apt=tini"), Some((7, 7)));
    assert_eq!(index.value("missing"), None);
}

#[test]
fn broken_yaml_gives_an_empty_index() {
    let index = PositionIndex::build("a: [\n");
    assert_eq!(index.key("a"), None);
}

#[test]
fn deep_nesting_gives_an_empty_index_without_recursing() {
    // Found by `just fuzz`: this overflowed the stack inside yaml-rust2.
    let deep = "- ".repeat(100_000) + "x";
    assert_eq!(PositionIndex::build(&deep).values.len(), 0);
    let nested = (0..=MAX_DEPTH).fold(String::from("x"), |inner, _| format!("[{inner}]"));
    assert_eq!(PositionIndex::build(&format!("a: {nested}")).key("a"), None);
    let shallow = PositionIndex::build("a:\n  b:\n    - c\n");
    assert_eq!(shallow.value("a.b=c"), Some((3, 7)));
}

#[test]
fn errors_print_location_then_message() {
    let error = SpecError::new(
        Some(Location {
            file: "images/x.yaml".into(),
            line: 3,
            column: 9,
        }),
        "bad",
        "fix it",
    );
    assert_eq!(error.to_string(), "`images/x.yaml`:3:9: bad");
}

#[test]
fn quoted_control_characters_are_escaped() {
    // Found by `just fuzz`: a tab or newline in an unknown key broke the error line.
    let error = SpecError::new(None, "unknown field `a\nb\t\u{1b}[2J`", "fix `x\ry`");
    assert_eq!(error.message, "unknown field `a\\nb\\t\\u{1b}[2J`");
    assert_eq!(error.hint, "fix `x\\ry`");
    assert!(matches!(printable("plain `é`"), Cow::Borrowed("plain `é`")));
    assert_eq!(
        printable("spec name `lab\u{200b}` and `\u{202e}cba`"),
        "spec name `lab\\u{200b}` and `\\u{202e}cba`"
    );
}
