use super::*;
use crate::sweep::value::ParamValue;

fn template(arguments: &[&str]) -> Result<CommandTemplate, TemplateError> {
    let written: Vec<String> = arguments.iter().map(|a| a.to_string()).collect();
    CommandTemplate::parse(&written)
}

#[test]
fn placeholders_render_with_canonical_texts_and_braces_escape() {
    let command = template(&[
        "python",
        "train.py",
        "--lr={lr}",
        "{aug}",
        "{{\"a\": {lr}}}",
        "",
    ])
    .unwrap();
    let params = vec![
        ("lr".to_string(), ParamValue::Float(1e-3)),
        ("aug".to_string(), ParamValue::Text("high and low".into())),
    ];
    assert_eq!(
        command.render(&params),
        [
            "python",
            "train.py",
            "--lr=0.001",
            "high and low",
            "{\"a\": 0.001}",
            ""
        ]
    );
    assert_eq!(command.placeholders(), [(2, "lr"), (3, "aug"), (4, "lr")]);
    assert!(command.uses("aug") && !command.uses("wd"));
}

#[test]
fn broken_braces_name_the_argument() {
    let error = |arguments: &[&str]| {
        let error = template(arguments).unwrap_err();
        (error.index, error.message)
    };
    assert_eq!(
        error(&["a", "{lr"]),
        (1, "`{` in `{lr` is never closed".into())
    );
    assert_eq!(
        error(&["lr}"]),
        (0, "`}` in `lr}` closes no `{name}`".into())
    );
    assert_eq!(
        error(&["python", "a\0b"]),
        (
            1,
            "`a\0b` holds a NUL character, which no program argument can carry".into()
        )
    );
    assert_eq!(
        error(&["{}"]),
        (0, "`{}` in `{}` is not a param name".into())
    );
    assert_eq!(
        error(&["{learning rate}"]),
        (
            0,
            "`{learning rate}` in `{learning rate}` is not a param name".into()
        )
    );
}
