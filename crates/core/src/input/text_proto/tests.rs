use super::*;

fn scalar(text: &str) -> Value {
    Value::Scalar {
        text: text.into(),
        quoted: false,
    }
}

fn quoted(text: &str) -> Value {
    Value::Scalar {
        text: text.into(),
        quoted: true,
    }
}

fn message_of(value: &Value) -> &[Field] {
    match value {
        Value::Message(fields) => fields,
        other => panic!("not a message: {other:?}"),
    }
}

#[test]
fn a_model_config_as_tensorflow_serving_documents_it_reads_with_every_place() {
    let text = "model_config_list {\n  config {\n    name: 'my_first_model'\n    base_path: \"/tmp/my_first_model/\"\n    model_platform: 'tensorflow'\n    model_version_policy { specific { versions: 42 versions: 43 } }\n    version_labels { key: 'stable' value: 42 }\n  }\n}\n";
    let fields = parse(text).unwrap();
    assert_eq!(fields.len(), 1);
    assert_eq!(
        (fields[0].name.as_str(), fields[0].line, fields[0].column),
        ("model_config_list", 1, 1)
    );
    let config = &message_of(&fields[0].value)[0];
    let inner = message_of(&config.value);
    let names: Vec<&str> = inner.iter().map(|field| field.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "name",
            "base_path",
            "model_platform",
            "model_version_policy",
            "version_labels"
        ]
    );
    assert_eq!(inner[1].value, quoted("/tmp/my_first_model/"));
    assert_eq!((inner[1].line, inner[1].column), (4, 5));
    let specific = &message_of(&message_of(&inner[3].value)[0].value);
    assert_eq!(specific[0].value, scalar("42"));
    assert_eq!(specific[1].value, scalar("43"));
}

#[test]
fn colons_angle_brackets_lists_separators_and_comments_are_all_the_text_format() {
    let text = "# a comment\na: <b: 1; c: -2.5e-3, d: [1, 2,3]> e: [{f: x}, {f: y}] g {}\n";
    let fields = parse(text).unwrap();
    let names: Vec<&str> = fields.iter().map(|field| field.name.as_str()).collect();
    assert_eq!(names, ["a", "e", "e", "g"]);
    let a = message_of(&fields[0].value);
    let values: Vec<&Value> = a.iter().map(|field| &field.value).collect();
    assert_eq!(
        values,
        [
            &scalar("1"),
            &scalar("-2.5e-3"),
            &scalar("1"),
            &scalar("2"),
            &scalar("3")
        ]
    );
    assert_eq!(message_of(&fields[2].value)[0].value, scalar("y"));
    assert_eq!(fields[3].value, Value::Message(Vec::new()));
}

#[test]
fn strings_undo_c_escapes_and_adjacent_strings_join() {
    let fields = parse(r#"s: "a\tb\\c\'\"\101\x42\u00e9" 'd' "\U0001F600""#).unwrap();
    assert_eq!(fields[0].value, quoted("a\tb\\c'\"ABéd😀"));
}

#[test]
fn broken_text_names_its_line_and_column_and_never_panics() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        ("a {\n  b: 1\n", (1, 3), "not closed with `}`"),
        ("a: 'open\n", (1, 4), "past the end of its line"),
        ("a: \"open", (1, 4), "not closed"),
        ("a b", (1, 3), "expected `:` or `{`"),
        ("a: }", (1, 4), "expected a value"),
        ("a: [1 2]", (1, 7), "expected `,` or `]`"),
        ("[ext.x]: 1", (1, 1), "extensions"),
        ("a: 1 }", (1, 6), "expected a field name"),
        ("a: 'x\\q'", (1, 8), "not an escape"),
        ("a: '\\xff'", (1, 4), "not UTF-8"),
        ("a: '\\u12'", (1, 9), "not a Unicode character"),
        ("a: 'x' €", (1, 8), "no place in the text format"),
        ("a:", (1, 2), "ends where a value should be"),
        ("a: 1 2: 3", (1, 6), "expected a field name"),
    ];
    for (text, (line, column), wanted) in cases {
        let error = parse(text).expect_err(text);
        assert!(error.message.contains(wanted), "{text:?}: {error:?}");
        assert_eq!(
            (error.line, error.column),
            (*line, *column),
            "{text:?}: {error:?}"
        );
    }
}

#[test]
fn nesting_past_protobuf_s_limit_is_refused_not_followed() {
    let deep = format!("{}{}", "a {".repeat(100_000), "}".repeat(100_000));
    let error = parse(&deep).unwrap_err();
    assert!(error.message.contains("nested more than 100"), "{error:?}");
    let fine = format!("{}{}", "a {".repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
    assert!(parse(&fine).is_ok());
}

#[test]
fn any_text_at_all_parses_or_errs_without_a_panic() {
    let pieces = [
        "a", ":", "{", "}", "<", ">", "[", "]", "'", "\"", "\\", "1", "-", "#", "\n", ",", "e",
        "x", "é", " ",
    ];
    let mut seed = 7u64;
    for _ in 0..20_000 {
        let mut text = String::new();
        for _ in 0..(seed % 24) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let _ = parse(&text);
    }
}
