use super::*;

#[test]
fn messages_lose_their_positions() {
    // Found by `just fuzz`: libyaml's errors carried a second position in the text.
    assert_eq!(
            strip_positions(
                "could not find expected ':' at line 3 column 1, while scanning a simple key at line 2 column 1"
            ),
            "could not find expected ':', while scanning a simple key"
        );
    assert_eq!(
        strip_positions("invalid type: string \"met at noon\" at position 12"),
        "invalid type: string \"met at noon\""
    );
}

#[test]
fn bytes_are_decoded_with_the_place_of_the_first_bad_one() {
    let error = decode(b"name: lab\ndescription: caf\xe9\n".to_vec()).unwrap_err();
    assert_eq!(error.place().pair(), (2, 17));
    assert_eq!(
        error.error("x.yaml", error.place(), &SPEC).to_string(),
        "`x.yaml`:2:17: the file is not valid UTF-8"
    );
    let error = decode(vec![b'a'; MAX_FILE_BYTES + 1]).unwrap_err();
    assert_eq!(
        error.error("x.yaml", error.place(), &TEAM).to_string(),
        "`x.yaml`:1:1: the file is larger than 1 MiB"
    );
    assert_eq!(decode("é: ok\n".into()).unwrap(), "é: ok\n");
}

#[test]
fn earlier_errors_win_over_later_problems() {
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Small {
        name: Option<String>,
        files: Option<Vec<serde_yaml::Value>>,
    }
    let text = "{a: ".repeat(30_000);
    let problem = scan(&text).problem.unwrap();
    let error = earlier_error::<Small>(&text, problem.place()).unwrap();
    assert_eq!(
        strip_positions(&error.to_string()),
        "unknown field `a`, expected `name` or `files`"
    );
    // An unclosed bracket the cut leaves is not an earlier error.
    let text = format!("name: x\nfiles:\n  - {}\n", "[".repeat(200));
    let problem = scan(&text).problem.unwrap();
    assert!(earlier_error::<Small>(&text, problem.place()).is_none());
}

#[test]
fn tabs_and_duplicates_are_explained() {
    let text = "a: 1\nb:\n  \tc: 1\n";
    let error = serde_yaml::from_str::<serde_yaml::Value>(text).unwrap_err();
    let explained = explain(&error, text, &scan(text));
    assert_eq!(
        explained,
        Explained {
            at: (3, 3),
            message: "a tab indents this line; YAML indents with spaces only".into(),
            hint: Some("replace the tab with spaces".into()),
        }
    );
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Named {
        name: String,
    }
    let text = "name: a\nname: b\n";
    let error = serde_yaml::from_str::<Named>(text).unwrap_err();
    let explained = explain(&error, text, &scan(text));
    assert_eq!(
        (explained.at, explained.message.as_str()),
        ((2, 1), "duplicate field `name`")
    );
}
