//! The command template: a list of arguments in which `{name}` stands for a param's
//! canonical text, `{{` and `}}` for literal braces. Each argument stays one argument
//! (no shell splits it), so a value with spaces is passed whole. Pure.

use super::value::Param;

/// One argument, in pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Param(String),
}

/// The parsed `command:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTemplate {
    /// The arguments as written (for the fingerprint and messages).
    pub written: Vec<String>,
    pub arguments: Vec<Vec<Piece>>,
}

/// Why an argument does not parse, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// The argument's index in `command:`.
    pub index: usize,
    pub message: String,
    pub hint: &'static str,
}

const BRACE_HINT: &str = "write `{name}` for a param's value, `{{` and `}}` for literal braces";

/// Whether `name` can name a param: letters, digits and `_`, not starting with a digit.
pub fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl CommandTemplate {
    pub fn parse(written: &[String]) -> Result<CommandTemplate, TemplateError> {
        let arguments = written
            .iter()
            .enumerate()
            .map(|(index, text)| {
                parse_argument(text).map_err(|(message, hint)| TemplateError {
                    index,
                    message,
                    hint,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(CommandTemplate {
            written: written.to_vec(),
            arguments,
        })
    }

    /// Each `{name}` with the index of the argument it is in, in order.
    pub fn placeholders(&self) -> Vec<(usize, &str)> {
        let mut found = Vec::new();
        for (index, pieces) in self.arguments.iter().enumerate() {
            for piece in pieces {
                if let Piece::Param(name) = piece {
                    found.push((index, name.as_str()));
                }
            }
        }
        found
    }

    /// Whether `{name}` appears anywhere.
    pub fn uses(&self, name: &str) -> bool {
        self.placeholders().iter().any(|(_, used)| *used == name)
    }

    /// The arguments with every `{name}` replaced by the param's canonical text (a name
    /// `params` lacks stays as written: the sweep's checks make that impossible).
    pub fn render(&self, params: &[Param]) -> Vec<String> {
        self.arguments
            .iter()
            .map(|pieces| {
                pieces
                    .iter()
                    .map(|piece| match piece {
                        Piece::Text(text) => text.clone(),
                        Piece::Param(name) => params
                            .iter()
                            .find(|(param, _)| param == name)
                            .map_or_else(|| format!("{{{name}}}"), |(_, value)| value.text()),
                    })
                    .collect()
            })
            .collect()
    }
}

fn parse_argument(text: &str) -> Result<Vec<Piece>, (String, &'static str)> {
    if text.contains('\0') {
        return Err((
            format!("`{text}` holds a NUL character, which no program argument can carry"),
            "remove the `\\0`: the program would get the argument only up to it",
        ));
    }
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(index) = rest.find(['{', '}']) {
        literal.push_str(&rest[..index]);
        let after = &rest[index + 1..];
        if rest[index..].starts_with("{{") {
            literal.push('{');
            rest = &after[1..];
            continue;
        }
        if rest[index..].starts_with("}}") {
            literal.push('}');
            rest = &after[1..];
            continue;
        }
        if rest[index..].starts_with('}') {
            return Err((format!("`}}` in `{text}` closes no `{{name}}`"), BRACE_HINT));
        }
        let Some(end) = after.find('}') else {
            return Err((format!("`{{` in `{text}` is never closed"), BRACE_HINT));
        };
        let name = &after[..end];
        if !valid_name(name) {
            return Err((
                format!("`{{{name}}}` in `{text}` is not a param name"),
                "param names have letters, digits and `_`; write `{{` and `}}` for literal braces",
            ));
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut literal)));
        }
        pieces.push(Piece::Param(name.to_string()));
        rest = &after[end + 1..];
    }
    literal.push_str(rest);
    if !literal.is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(literal));
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests;
