//! A param's value: typed as YAML wrote it (whole number, number, boolean, text) with
//! one canonical text, the same on every machine, that commands, `TFIMG_PARAM_*`
//! variables, tables and the journal's fingerprint use. Pure.

use std::fmt;

use serde::{Serialize, Serializer};

/// One value of a param.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Int(i64),
    /// Always finite.
    Float(f64),
    Bool(bool),
    Text(String),
}

/// Random draws keep this many significant digits: `--lr 0.000316228`, not
/// `0.00031622776601683794`, and the last bit `exp`/`ln` may differ in between C
/// libraries cannot change a value.
pub const RANDOM_DIGITS: usize = 6;

impl ParamValue {
    /// A YAML scalar as a value, or why it cannot be one (a phrase such as "a list").
    pub fn from_yaml(value: &serde_yaml::Value) -> Result<ParamValue, String> {
        use serde_yaml::Value;
        match value {
            Value::Bool(flag) => Ok(ParamValue::Bool(*flag)),
            Value::Number(number) => {
                if let Some(whole) = number.as_i64() {
                    return Ok(ParamValue::Int(whole));
                }
                if number.is_u64() {
                    return Err(format!("{number} is too large (at most {})", i64::MAX));
                }
                match number.as_f64() {
                    Some(float) if float.is_finite() => Ok(ParamValue::Float(float)),
                    _ => Err(format!("{number} is not a finite number")),
                }
            }
            Value::String(text) => {
                if text.chars().any(char::is_control) {
                    return Err("the text holds a control character (a newline, a tab)".into());
                }
                Ok(ParamValue::Text(text.clone()))
            }
            Value::Null => Err("it is empty (`~` or nothing)".into()),
            Value::Sequence(_) => Err("it is a list, not a single value".into()),
            Value::Mapping(_) => Err("it is a mapping, not a single value".into()),
            Value::Tagged(_) => Err("it has a YAML tag (`!name`)".into()),
        }
    }

    /// A float rounded to `RANDOM_DIGITS` significant digits (Rust's float formatting
    /// and parsing are exact, so every machine rounds alike).
    pub fn rounded(value: f64) -> ParamValue {
        let text = format!("{value:.*e}", RANDOM_DIGITS - 1);
        ParamValue::Float(text.parse().unwrap_or(value))
    }

    /// The canonical text: `3`, `0.001`, `1e-5`, `1.0`, `true`, `low`. Floats are Rust's
    /// shortest text that reads back as the same number (an exponent below 1e-5 and from
    /// 1e16), which Python's `float()` reads too.
    pub fn text(&self) -> String {
        match self {
            ParamValue::Int(whole) => whole.to_string(),
            ParamValue::Float(float) => format!("{float:?}"),
            ParamValue::Bool(flag) => flag.to_string(),
            ParamValue::Text(text) => text.clone(),
        }
    }

    /// The value as a number (for charts), when it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Int(whole) => Some(*whole as f64),
            ParamValue::Float(float) => Some(*float),
            _ => None,
        }
    }

    /// The value as JSON: numbers, booleans and strings stay what they are.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            ParamValue::Int(whole) => serde_json::Value::from(*whole),
            ParamValue::Float(float) => serde_json::Value::from(*float),
            ParamValue::Bool(flag) => serde_json::Value::Bool(*flag),
            ParamValue::Text(text) => serde_json::Value::String(text.clone()),
        }
    }

    /// A value `to_json` wrote, read back (the journal's proposals); `None` for what it
    /// never writes (null, lists, objects, non-finite numbers).
    pub fn from_json(value: &serde_json::Value) -> Option<ParamValue> {
        match value {
            serde_json::Value::Bool(flag) => Some(ParamValue::Bool(*flag)),
            serde_json::Value::Number(number) => match number.as_i64() {
                Some(whole) => Some(ParamValue::Int(whole)),
                None => number
                    .as_f64()
                    .filter(|float| float.is_finite())
                    .map(ParamValue::Float),
            },
            serde_json::Value::String(text) => Some(ParamValue::Text(text.clone())),
            _ => None,
        }
    }

    /// How YAML would write it back: text that would read as another type is quoted
    /// (`"1e-3"`, `"true"`, `""`), for messages and fingerprints.
    pub fn yaml_text(&self) -> String {
        match self {
            ParamValue::Text(text) => {
                let plain = serde_yaml::from_str::<serde_yaml::Value>(text)
                    .is_ok_and(|value| value == serde_yaml::Value::String(text.clone()));
                if plain && !text.contains([',', '[', ']', '{', '}', '#', ':']) {
                    text.clone()
                } else {
                    format!("{text:?}")
                }
            }
            other => other.text(),
        }
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for ParamValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// A param's name and value: one coordinate of a trial.
pub type Param = (String, ParamValue);

/// `params` as one JSON object by name (the journal's proposals, `--json` events).
pub fn params_object(params: &[Param]) -> serde_json::Map<String, serde_json::Value> {
    params
        .iter()
        .map(|(name, value)| (name.clone(), value.to_json()))
        .collect()
}

/// The params `names` (in that order) of an object `params_object` wrote: none when one
/// is missing or is what it never writes.
pub fn params_from_object(
    names: &[String],
    object: &serde_json::Map<String, serde_json::Value>,
) -> Option<Vec<Param>> {
    names
        .iter()
        .map(|name| Some((name.clone(), ParamValue::from_json(object.get(name)?)?)))
        .collect()
}

/// `[a, b, c]` as messages and fingerprints show a list of values.
pub fn list_text(values: &[ParamValue]) -> String {
    let items: Vec<String> = values.iter().map(ParamValue::yaml_text).collect();
    format!("[{}]", items.join(", "))
}

/// `{lr: 0.1, wd: 0}` as messages and fingerprints show a param set.
pub fn set_text(params: &[Param]) -> String {
    let items: Vec<String> = params
        .iter()
        .map(|(name, value)| format!("{name}: {}", value.yaml_text()))
        .collect();
    format!("{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests;
