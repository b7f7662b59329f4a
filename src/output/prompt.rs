//! What tfimg reads from the person at the terminal, or from a pipe in their place.

use std::io::{IsTerminal, Read};

use crate::input::InputError;

/// `member`'s password: on a terminal asked twice, never echoed; otherwise the first line
/// of stdin, without its line end.
pub fn password(member: &str) -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password(format!("password for `{member}`: "))?;
        let again = rpassword::prompt_password("again: ")?;
        if first != again {
            let hint = "run it again and type the same password twice";
            return Err(InputError::new("the two passwords differ", hint).into());
        }
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// All of stdin, up to `limit` bytes.
pub fn stdin_text(limit: u64) -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin().take(limit).read_to_string(&mut text)?;
    Ok(text)
}
