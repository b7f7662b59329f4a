use super::*;

/// YAML 1.1 booleans and null; ints (hex, octal, binary, `_`, signs, sexagesimal);
/// floats; timestamps; the merge and value keys. Separated by spaces.
const WORDS: &str = "y Y yes Yes YES n N no No NO true True TRUE false FALSE on On ON off \
        Off OFF ~ null Null NULL \
        0x1F 012 0o17 0b101 1_000 +12 -12 12 12:30 190:20:30 \
        1e3 1.5 6.8523015e+5 685.230_15e+03 .5 .inf -.inf +.INF .nan .NaN 2.9.3 190:20:30.15 \
        2001-12-14 2001-12-14t21:59:43.10-05:00 \
        << =";

/// Empty, structure, spaces, control and non-ASCII characters.
const OTHERS: &[&str] = &[
    "",
    "2001-12-14 21:59:43.10 -5",
    "a: b",
    "key:",
    "x #y",
    "#x",
    "&anchor",
    "*alias",
    "!tag",
    "|",
    ">",
    "'",
    "\"",
    "%x",
    "@x",
    "`x",
    "- x",
    "-",
    "?",
    ":x",
    "[a]",
    "{a: 1}",
    "---",
    "...",
    " lead",
    "trail ",
    "tab\there",
    "line\nbreak",
    "bell\u{7}",
    "del\u{7f}",
    "nel\u{85}",
    "ls\u{2028}",
    "bom\u{feff}",
    "naïve",
];

#[test]
fn every_ambiguous_string_is_double_quoted_and_reads_back_the_same() {
    for text in WORDS.split_whitespace().chain(OTHERS.iter().copied()) {
        let written = scalar(text);
        assert!(written.starts_with('"'), "{text:?} written as {written}");
        let document = to_yaml(&Value::Mapping(Mapping::from_iter([(
            Value::from(text),
            Value::from(text),
        )])));
        let read: Mapping = serde_yaml::from_str(&document).unwrap();
        assert_eq!(
            read.get(text),
            Some(&Value::from(text)),
            "{text:?} in {document}"
        );
        // Nothing but printable ASCII and the text's own non-ASCII letters.
        assert!(
            !written.contains(|c: char| c.is_control()),
            "{text:?} written as {written:?}"
        );
    }
}

#[test]
fn ordinary_strings_stay_plain() {
    for text in [
        "python",
        "-c",
        "--ca-cert",
        "tfimg/cpu-jupyter:2.9.3-5afd74bec266",
        "./work/alice:/tf/work:ro",
        "io.example.team",
        "no-new-privileges",
        "ALL",
        "TF_FORCE_GPU_ALLOW_GROWTH",
        "${EXAMPLE_UID:-1000}",
        "$$HOME",
        "import tensorflow as tf; print(tf.__version__)",
        "10Gi",
        "2048Mi",
        "500m",
        "3g",
        "sh",
        "a#b",
        "yesterday",
        "online",
        "nullable",
        "registry.example.com:5000/tfimg/cpu-ssh",
    ] {
        assert_eq!(scalar(text), text);
    }
    // Port mappings start with a digit: quoted, as Compose's own guide advises.
    assert_eq!(scalar("127.0.0.1:8888:8888"), "\"127.0.0.1:8888:8888\"");
}

#[test]
fn escapes_are_what_yaml_double_quotes_mean() {
    assert_eq!(scalar("a\"b\\c\nd\te"), r#""a\"b\\c\nd\te""#);
    assert_eq!(scalar("\u{7}\u{85}\u{2028}"), r#""\u0007\u0085\u2028""#);
    assert_eq!(scalar("naïve"), "\"naïve\"");
}

#[test]
fn documents_keep_block_layout_and_order() {
    let value: Value = serde_yaml::from_str(
            "version: '3.8'\nservices:\n  alice:\n    environment: {NOTE: 'on', YES: x}\n    command: [printf, '%s', $HOME]\n    devices:\n    - {driver: nvidia, device_ids: ['0']}\n    - [[a], []]\n    empty: {}\n    none: null\n    cpus: 1.5\n    count: 2\n    flag: true\n",
        )
        .unwrap();
    assert_eq!(
            to_yaml(&value),
            "version: \"3.8\"\nservices:\n  alice:\n    environment:\n      NOTE: \"on\"\n      \"YES\": x\n    command:\n    - printf\n    - \"%s\"\n    - $HOME\n    devices:\n    - driver: nvidia\n      device_ids:\n      - \"0\"\n    - - - a\n      - []\n    empty: {}\n    none: null\n    cpus: 1.5\n    count: 2\n    flag: true\n"
        );
    let back: Value = serde_yaml::from_str(&to_yaml(&value)).unwrap();
    assert_eq!(back, value);
    assert_eq!(to_yaml(&Value::from("on")), "\"on\"\n");
}
