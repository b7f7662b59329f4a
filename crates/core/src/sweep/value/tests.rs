use super::*;

fn yaml(text: &str) -> serde_yaml::Value {
    serde_yaml::from_str(text).unwrap()
}

#[test]
fn canonical_texts() {
    let texts: Vec<String> = ["1e-3", "5e-4", "1e-5", "1.0", "3", "-0.5", "true", "low"]
        .iter()
        .map(|text| ParamValue::from_yaml(&yaml(text)).unwrap().text())
        .collect();
    assert_eq!(
        texts,
        ["0.001", "0.0005", "1e-5", "1.0", "3", "-0.5", "true", "low"]
    );
    assert_eq!(
        ParamValue::rounded(0.000316227766016838).text(),
        "0.000316228"
    );
    assert_eq!(ParamValue::rounded(123456789.0).text(), "123457000.0");
}

#[test]
fn what_is_not_a_value() {
    for (text, why) in [
        ("~", "it is empty (`~` or nothing)"),
        ("[1, 2]", "it is a list, not a single value"),
        ("{a: 1}", "it is a mapping, not a single value"),
        (".nan", ".nan is not a finite number"),
        (
            "\"a\\nb\"",
            "the text holds a control character (a newline, a tab)",
        ),
        (
            "18446744073709551615",
            "18446744073709551615 is too large (at most 9223372036854775807)",
        ),
    ] {
        assert_eq!(
            ParamValue::from_yaml(&yaml(text)).unwrap_err(),
            why,
            "{text}"
        );
    }
}

#[test]
fn yaml_text_quotes_what_would_read_as_another_type() {
    let text = |t: &str| ParamValue::Text(t.into()).yaml_text();
    assert_eq!(text("low"), "low");
    assert_eq!(text("1e-3"), "\"1e-3\"");
    assert_eq!(text("true"), "\"true\"");
    assert_eq!(text(""), "\"\"");
    assert_eq!(text("a, b"), "\"a, b\"");
    assert_eq!(
        set_text(&[
            ("lr".into(), ParamValue::Float(0.1)),
            ("aug".into(), ParamValue::Text("x".into()))
        ]),
        "{lr: 0.1, aug: x}"
    );
}
