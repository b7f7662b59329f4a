//! Dockerfile and shell text: lines, ENV instructions and the quoting that makes the
//! builder and the shell take values literally. Knows nothing about specs.

/// Appends `text` as one line.
pub(super) fn line(w: &mut String, text: &str) {
    w.push_str(text);
    w.push('\n');
}

/// One ENV instruction; the values are quoted here.
pub(super) fn env_block(w: &mut String, pairs: &[(&str, String)]) {
    let quoted: Vec<(&str, String)> = pairs
        .iter()
        .map(|(key, value)| (*key, quote(value)))
        .collect();
    env_block_quoted(w, &quoted);
}

/// One ENV instruction; the values are already as the Dockerfile must read them.
pub(super) fn env_block_quoted(w: &mut String, pairs: &[(&str, String)]) {
    let count = pairs.len();
    for (index, (key, value)) in pairs.iter().enumerate() {
        let lead = if index == 0 { "ENV " } else { "    " };
        let tail = if index + 1 < count { " \\" } else { "" };
        line(w, &format!("{lead}{key}={value}{tail}"));
    }
}

/// Dockerfile value quoting: plain when safe, else double quotes with `\`, `"` and `$`
/// escaped so the builder takes the text literally.
pub(super) fn quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | ',' | '+' | '@')
        });
    if plain {
        return value.to_string();
    }
    let mut quoted = String::from("\"");
    for c in value.chars() {
        if matches!(c, '\\' | '"' | '$') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// A requirement as one shell word: bare when it has nothing the shell reads, else in
/// single quotes (validation refuses requirements containing `'`, `$`, `\\` or newlines).
pub(super) fn shell_word(word: &str) -> String {
    if word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '=' | ',' | '[' | ']'))
    {
        word.to_string()
    } else {
        format!("'{word}'")
    }
}
