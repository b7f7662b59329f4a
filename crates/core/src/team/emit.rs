//! YAML text for the exports (Compose files, Kubernetes manifests), read by YAML 1.1
//! readers (docker-compose's PyYAML, kubernetes-validate, Go's yaml.v2) and YAML 1.2 ones
//! (Compose v2, kubectl, serde_yaml) alike. Every string that any of them could take for
//! another type (`on`, `YES`, `y`, `~`, `0x1F`, `1_000`, `12:30`, `2001-12-14`, `<<`) or
//! for structure (`a: b`, `#x`, `*x`) is double-quoted; the rest stays plain so the file
//! reads like one written by hand. Pure: values in, text out.
//!
//! serde_yaml 0.9 quotes only what YAML 1.2's core schema reads as non-strings (`true`,
//! `null`, `12`, `012`), and yaml-rust2's emitter adds the 1.1 booleans but not `1_000`,
//! `0b1` or dates; neither lets the caller choose. Hence this small block-style emitter.

use serde_yaml::{Mapping, Value};

/// `value` as a YAML document (block style, two-space indents, ending in a newline).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Mapping(map) if !map.is_empty() => mapping(&mut out, map, 0),
        Value::Sequence(items) if !items.is_empty() => sequence(&mut out, items, 0),
        other => {
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
    out
}

/// The text of a string scalar: plain where every reader takes it back as this string,
/// double-quoted otherwise.
pub fn scalar(text: &str) -> String {
    if plain_is_safe(text) {
        text.to_string()
    } else {
        quoted(text)
    }
}

fn mapping(out: &mut String, map: &Mapping, indent: usize) {
    for (key, value) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(&inline(key));
        out.push(':');
        match value {
            Value::Mapping(inner) if !inner.is_empty() => {
                out.push('\n');
                mapping(out, inner, indent + 2);
            }
            // Sequences under a key sit at the key's indent, as serde_yaml writes them.
            Value::Sequence(items) if !items.is_empty() => {
                out.push('\n');
                sequence(out, items, indent);
            }
            other => {
                out.push(' ');
                out.push_str(&inline(other));
                out.push('\n');
            }
        }
    }
}

fn sequence(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push_str("- ");
        match item {
            // The first key shares the dash's line; the others line up under it.
            Value::Mapping(inner) if !inner.is_empty() => {
                let mut nested = String::new();
                mapping(&mut nested, inner, indent + 2);
                out.push_str(&nested[indent + 2..]);
            }
            Value::Sequence(inner) if !inner.is_empty() => {
                let mut nested = String::new();
                sequence(&mut nested, inner, indent + 2);
                out.push_str(&nested[indent + 2..]);
            }
            other => {
                out.push_str(&inline(other));
                out.push('\n');
            }
        }
    }
}

/// A value on one line: scalars, and empty collections as `{}` / `[]`.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => scalar(text),
        Value::Sequence(_) => "[]".to_string(),
        Value::Mapping(_) => "{}".to_string(),
        Value::Tagged(tagged) => format!("{} {}", tagged.tag, inline(&tagged.value)),
    }
}

/// Words YAML 1.1 resolves to booleans or null (any letter case, to be safe with readers
/// that are lenient about it), the merge key and the 1.1 `value` key.
const SPECIAL_WORDS: &[&str] = &[
    "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~", "<<", "=",
];

fn plain_is_safe(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let second = text.chars().nth(1);
    // Printable ASCII only: anything else is written with escapes.
    let printable = text.chars().all(|c| (' '..='~').contains(&c));
    // Indicators that start another construct; `-x` and `--flag` are fine in block style.
    let starts_well = !"?:,[]{}#&*!|>'\"%@`".contains(first)
        && (first != '-' || second.is_some_and(|c| c != ' '));
    // A `: ` or a trailing `:` makes a key, a ` #` starts a comment.
    let no_structure = !text.contains(": ") && !text.ends_with(':') && !text.contains(" #");
    let trimmed = !text.starts_with(' ') && !text.ends_with(' ');
    let special = SPECIAL_WORDS.contains(&text.to_ascii_lowercase().as_str());
    printable
        && starts_well
        && no_structure
        && trimmed
        && !special
        && !number_like(text)
        && reads_back(text)
}

/// What may be a number or a date: YAML 1.1's ints (`0b1`, `012`, `0x1F`, `1_000`),
/// floats (`1e3`, `.5`), sexagesimals (`12:30`) and timestamps (`2001-12-14 1:2:3 -5`)
/// begin with a digit, or a sign or dot and a digit, and use no letters but hex digits,
/// `x`, `o`, `t` and `z`; `.inf` and `.nan` are the others. `10Gi` and `500m` are not.
fn number_like(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let digits = unsigned.strip_prefix('.').unwrap_or(unsigned);
    if digits.starts_with(|c: char| c.is_ascii_digit()) {
        return unsigned
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "xXoOtTzZ_.:+- ".contains(c));
    }
    match unsigned.strip_prefix('.') {
        Some(rest) => ["inf", "nan"].contains(&rest.to_ascii_lowercase().as_str()),
        None => false,
    }
}

/// A YAML 1.2 reader (serde_yaml) takes the plain text back as this very string: the
/// safety net for whatever the rules above did not think of.
fn reads_back(text: &str) -> bool {
    matches!(serde_yaml::from_str::<Value>(text), Ok(Value::String(read)) if read == text)
}

/// A double-quoted scalar: `\`, `"` and every character YAML does not allow raw escaped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            // C0 and C1 controls, DEL, line/paragraph separators, the BOM and non-characters.
            c if c < ' '
                || ('\u{7f}'..='\u{9f}').contains(&c)
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
