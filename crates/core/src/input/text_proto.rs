//! Protocol Buffers' text format, the format of TensorFlow Serving's model config file
//! (`model_config_list { config { name: "a" base_path: "/models/a" } }`), read into a tree
//! of fields with the line and column of each, without the messages' schema: what a field
//! means is its reader's (`plan::model_config`). Pure.
//!
//! The grammar, as protobuf's text format language specification has it: `#` comments to
//! the end of the line; a field is `name: scalar`, `name: [scalar, ...]`, `name {fields}`
//! or `name <fields>` (the `:` optional before a message, `name: [{...}, {...}]` a list of
//! messages), and may end in `,` or `;`; strings in `"` or `'` with C's escapes
//! (`\n`, `\t`, `\\`, `\'`, `\"`, octal `\123`, `\x41`, `\u00e9`, `\U0001f600`), adjacent
//! strings joined. Extensions and `Any` (`[type.googleapis.com/...]`) are refused: no
//! model config needs them. Nesting deeper than protobuf's own limit of 100 is refused
//! rather than followed (the reader recurses once per message).
//!
//! Chosen over a crate: the crates that read the text format (`protobuf`'s `text_format`,
//! `prost-reflect`) need the messages' descriptors, compiled from TensorFlow Serving's
//! `.proto` files and their imports at build time, to read six fields; and a model config
//! tfimg cannot read is still checked by the server, which parses it with protobuf's own
//! `text_format`.

/// One field as written: `name`, where its name starts, and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub line: usize,
    pub column: usize,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string (its text, escapes undone), a number or an identifier (`true`, an enum
    /// value), as written.
    Scalar {
        text: String,
        quoted: bool,
    },
    Message(Vec<Field>),
}

/// Where the text stops being the text format, and why; `line` and `column` start at 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Deeper messages are refused (protobuf's own parsers stop at 100 too).
pub const MAX_DEPTH: usize = 100;

/// The fields of `text`, in order (a repeated field's values each a field of their own).
pub fn parse(text: &str) -> Result<Vec<Field>, TextError> {
    let mut reader = Reader {
        tokens: tokens(text)?,
        next: 0,
    };
    reader.fields(None, 0)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    Mark(char),
}

struct Located {
    token: Token,
    line: usize,
    column: usize,
}

struct Reader {
    tokens: Vec<Located>,
    next: usize,
}

impl Reader {
    fn peek(&self) -> Option<&Located> {
        self.tokens.get(self.next)
    }

    fn take(&mut self) -> Option<&Located> {
        let token = self.tokens.get(self.next);
        self.next += 1;
        token
    }

    /// Where the next token is, or the end of the text.
    fn here(&self) -> (usize, usize) {
        match self.tokens.get(self.next).or(self.tokens.last()) {
            Some(token) => (token.line, token.column),
            None => (1, 1),
        }
    }

    fn error(&self, message: impl Into<String>) -> TextError {
        let (line, column) = self.here();
        TextError {
            line,
            column,
            message: message.into(),
        }
    }

    fn is_mark(&self, mark: char) -> bool {
        matches!(self.peek(), Some(Located { token: Token::Mark(c), .. }) if *c == mark)
    }

    /// Fields up to `end` (`}` or `>`), or to the end of the text at the top.
    /// `end` is the mark that closes the message, and where the message opened.
    fn fields(
        &mut self,
        end: Option<(char, usize, usize)>,
        depth: usize,
    ) -> Result<Vec<Field>, TextError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("messages are nested more than {MAX_DEPTH} deep")));
        }
        let mut fields = Vec::new();
        loop {
            let Some(token) = self.peek() else {
                return match end {
                    None => Ok(fields),
                    Some((end, line, column)) => Err(TextError {
                        line,
                        column,
                        message: format!("the message opened here is not closed with `{end}`"),
                    }),
                };
            };
            let (line, column) = (token.line, token.column);
            let name = match &token.token {
                Token::Mark(mark) if Some(*mark) == end.map(|(end, _, _)| end) => {
                    self.next += 1;
                    return Ok(fields);
                }
                Token::Word(word)
                    if word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') =>
                {
                    word.clone()
                }
                Token::Mark('[') => {
                    return Err(
                        self.error("extensions and `Any` fields (`[...]`) are not read here")
                    )
                }
                _ => {
                    return Err(self.error(format!(
                        "expected a field name, found {}",
                        describe(&token.token)
                    )))
                }
            };
            self.next += 1;
            let colon = self.is_mark(':');
            if colon {
                self.next += 1;
            }
            if self.is_mark('[') {
                self.next += 1;
                self.list(&name, line, column, depth, &mut fields)?;
            } else {
                let value = self.value(colon, depth)?;
                fields.push(Field {
                    name,
                    line,
                    column,
                    value,
                });
            }
            if self.is_mark(',') || self.is_mark(';') {
                self.next += 1;
            }
        }
    }

    /// `[v, v, ...]` after its `[`: each value a field named `name`.
    fn list(
        &mut self,
        name: &str,
        line: usize,
        column: usize,
        depth: usize,
        fields: &mut Vec<Field>,
    ) -> Result<(), TextError> {
        if self.is_mark(']') {
            self.next += 1;
            return Ok(());
        }
        loop {
            let value = self.value(true, depth)?;
            fields.push(Field {
                name: name.to_string(),
                line,
                column,
                value,
            });
            match self.take().map(|token| &token.token) {
                Some(Token::Mark(',')) => {}
                Some(Token::Mark(']')) => return Ok(()),
                _ => {
                    self.next -= 1;
                    return Err(self.error("expected `,` or `]` in the list"));
                }
            }
        }
    }

    /// A value: a message after `{` or `<`, else (only after a `:`) a scalar.
    fn value(&mut self, after_colon: bool, depth: usize) -> Result<Value, TextError> {
        let Some(token) = self.peek() else {
            return Err(self.error("the text ends where a value should be"));
        };
        let (line, column) = (token.line, token.column);
        match token.token.clone() {
            Token::Mark(open @ ('{' | '<')) => {
                self.next += 1;
                let end = if open == '{' { '}' } else { '>' };
                Ok(Value::Message(
                    self.fields(Some((end, line, column)), depth + 1)?,
                ))
            }
            _ if !after_colon => Err(self.error("expected `:` or `{` after the field's name")),
            Token::Text(mut text) => {
                self.next += 1;
                while let Some(Located {
                    token: Token::Text(more),
                    ..
                }) = self.peek()
                {
                    text.push_str(more);
                    self.next += 1;
                }
                Ok(Value::Scalar { text, quoted: true })
            }
            Token::Word(text) => {
                self.next += 1;
                Ok(Value::Scalar {
                    text,
                    quoted: false,
                })
            }
            Token::Mark(_) => Err(self.error(format!(
                "expected a value, found {}",
                describe(&token.token)
            ))),
        }
    }
}

fn describe(token: &Token) -> String {
    match token {
        Token::Word(word) => format!("`{}`", crate::input::printable(word)),
        Token::Text(_) => "a string".into(),
        Token::Mark(mark) => format!("`{mark}`"),
    }
}

/// The tokens of `text`: words (names, numbers, `-inf`), strings, and marks.
fn tokens(text: &str) -> Result<Vec<Located>, TextError> {
    let mut found = Vec::new();
    let mut chars = Scanner {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
        column: 1,
    };
    while let Some(c) = chars.peek() {
        let (line, column) = (chars.line, chars.column);
        let token = match c {
            '#' => {
                while chars.peek().is_some_and(|c| c != '\n') {
                    chars.bump();
                }
                continue;
            }
            c if c.is_whitespace() => {
                chars.bump();
                continue;
            }
            '"' | '\'' => Token::Text(chars.string(c)?),
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+') => {
                let mut word = String::new();
                while let Some(c) = chars.peek() {
                    let exponent_sign = matches!(c, '-' | '+')
                        && word.ends_with(['e', 'E'])
                        && word.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
                    let first_sign = matches!(c, '-' | '+') && word.is_empty();
                    if !(c.is_ascii_alphanumeric()
                        || matches!(c, '_' | '.')
                        || exponent_sign
                        || first_sign)
                    {
                        break;
                    }
                    word.push(c);
                    chars.bump();
                }
                Token::Word(word)
            }
            '{' | '}' | '<' | '>' | '[' | ']' | ':' | ',' | ';' | '/' => {
                chars.bump();
                Token::Mark(c)
            }
            other => {
                return Err(TextError {
                    line,
                    column,
                    message: format!(
                        "`{}` has no place in the text format",
                        other.escape_default()
                    ),
                })
            }
        };
        found.push(Located {
            token,
            line,
            column,
        });
    }
    Ok(found)
}

struct Scanner {
    chars: Vec<char>,
    at: usize,
    line: usize,
    column: usize,
}

impl Scanner {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn error(&self, message: impl Into<String>) -> TextError {
        TextError {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }

    /// A string opened by `quote`, its escapes undone; its bytes must be UTF-8.
    fn string(&mut self, quote: char) -> Result<String, TextError> {
        let (line, column) = (self.line, self.column);
        self.bump();
        let mut bytes = Vec::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(TextError {
                    line,
                    column,
                    message: format!("the string opened here is not closed with {quote}"),
                });
            };
            match c {
                '\n' => {
                    return Err(TextError {
                        line,
                        column,
                        message: "the string opened here runs past the end of its line".into(),
                    })
                }
                '\\' => self.escape(&mut bytes)?,
                c if c == quote => break,
                c => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        String::from_utf8(bytes).map_err(|_| TextError {
            line,
            column,
            message: "the string's escapes make bytes that are not UTF-8 text".into(),
        })
    }

    fn escape(&mut self, bytes: &mut Vec<u8>) -> Result<(), TextError> {
        let Some(c) = self.bump() else {
            return Err(self.error("the text ends inside an escape"));
        };
        let simple = match c {
            'n' => Some(b'\n'),
            't' => Some(b'\t'),
            'r' => Some(b'\r'),
            'a' => Some(0x07),
            'b' => Some(0x08),
            'f' => Some(0x0c),
            'v' => Some(0x0b),
            '\\' | '\'' | '"' | '?' => Some(c as u8),
            _ => None,
        };
        if let Some(byte) = simple {
            bytes.push(byte);
            return Ok(());
        }
        let (radix, most) = match c {
            '0'..='7' => (8, 3),
            'x' | 'X' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            other => {
                return Err(self.error(format!(
                    "`\\{}` is not an escape of the text format",
                    other.escape_default()
                )))
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(c);
        }
        while digits.len() < most {
            match self.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(d);
                    self.bump();
                }
                _ => break,
            }
        }
        let value = u32::from_str_radix(&digits, radix).unwrap_or(u32::MAX);
        match c {
            'u' | 'U' => {
                let Some(c) = char::from_u32(value).filter(|_| digits.len() == most) else {
                    return Err(self.error(format!("`\\{c}{digits}` is not a Unicode character")));
                };
                bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
            _ => match u8::try_from(value) {
                Ok(byte) if !digits.is_empty() => bytes.push(byte),
                _ => return Err(self.error(format!("`\\{c}{digits}` is not a byte"))),
            },
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
