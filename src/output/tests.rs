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
