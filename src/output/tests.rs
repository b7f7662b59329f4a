#[test]
fn cells_cannot_forge_rows_columns_or_terminal_escapes() {
    let rows = vec![vec![
        "lab".to_string(),
        "two\nlines\tand\u{1b}[2Jclear\u{202e}rtl".to_string(),
    ]];
    assert_eq!(
        super::table(&["NAME", "DESCRIPTION"], &rows),
        "NAME\tDESCRIPTION\nlab\ttwo\\nlines\\tand\\u{1b}[2Jclear\\u{202e}rtl\n"
    );
}

#[test]
fn each_error_ends_the_command_with_its_own_code_and_hint_under_any_context() {
    use anyhow::Context;

    use super::exit::classify;
    use crate::engine::EngineError;
    use crate::host::{HostError, Interrupted};
    use crate::input::{InputError, SpecError};

    let under_context = |error: anyhow::Error| {
        Err::<(), _>(error)
            .context("while building `lab`")
            .unwrap_err()
    };
    let cases: Vec<(anyhow::Error, Option<&str>, u8)> = vec![
        (
            InputError::new("bad --gpus", "write `--gpus 0,1`").into(),
            Some("write `--gpus 0,1`"),
            1,
        ),
        (
            SpecError::new(None, "unknown field", "remove it").into(),
            Some("remove it"),
            1,
        ),
        (
            Interrupted {
                what: "the build".into(),
            }
            .into(),
            None,
            130,
        ),
        (
            HostError {
                message: "no driver".into(),
                hint: "install it".into(),
            }
            .into(),
            Some("install it"),
            2,
        ),
        (
            EngineError::Daemon {
                message: "gone".into(),
            }
            .into(),
            None,
            2,
        ),
        (anyhow::anyhow!("an error of no area"), None, 2),
    ];
    for (error, hint, code) in cases {
        let shown = format!("{error:#}");
        let wrapped = under_context(error);
        assert_eq!(
            classify(&wrapped),
            (hint.map(str::to_string), code),
            "{shown}"
        );
    }
}
