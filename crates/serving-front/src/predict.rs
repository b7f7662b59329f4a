//! REST's `:predict` decoded here: the path's model and version, the JSON's rows of numbers
//! as one array, and the outputs written as the Python server writes them. Anything else
//! (another path, another form of body, a value that is not a number) is left to it: `None`.

use serde_json::Value;

use crate::link::{self, Api, Array, Dtype, Predict, Version};

/// Lists nested deeper are no tensor (numpy's limit, as the Python server's MAX_RANK).
const MAX_RANK: usize = 32;

/// The model and version of `/v1/models/NAME[/versions/N|/labels/L]:predict`, written as
/// TensorFlow Serving's documentation writes it; any other spelling is the Python server's.
pub fn route(path: &str) -> Option<(String, Version)> {
    let rest = path.strip_prefix("/v1/models/")?.strip_suffix(":predict")?;
    if rest.contains('%') || rest.contains(':') {
        return None;
    }
    let parts: Vec<&str> = rest.split('/').collect();
    let good = |part: &str| !part.is_empty();
    match parts.as_slice() {
        [name] if good(name) => Some((name.to_string(), Version::Highest)),
        [name, "versions", number]
            if good(name)
                && !number.is_empty()
                && number.len() <= 18
                && number.bytes().all(|b| b.is_ascii_digit()) =>
        {
            Some((name.to_string(), Version::Number(number.parse().ok()?)))
        }
        [name, "labels", label] if good(name) && good(label) => {
            Some((name.to_string(), Version::Label(label.to_string())))
        }
        _ => None,
    }
}

/// The predict of a body `{"instances": [...]}` (and `signature_name`), whose instances
/// are numbers or lists of them, nested alike: one array for the signature's only input.
pub fn decode(body: &[u8], model: String, version: Version) -> Option<Predict> {
    let Value::Object(fields) = serde_json::from_slice(body).ok()? else {
        return None;
    };
    let mut signature = String::new();
    let mut instances = None;
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("instances", Value::Array(list)) => instances = Some(list),
            ("signature_name", Value::String(name)) => signature = name,
            _ => return None,
        }
    }
    let instances = Value::Array(instances?);
    let mut shape = Vec::new();
    let mut probe = &instances;
    while let Value::Array(items) = probe {
        shape.push(items.len() as u64);
        probe = items.first()?;
        if shape.len() > MAX_RANK {
            return None;
        }
    }
    let mut numbers = Vec::new();
    flatten(&instances, &shape, &mut numbers)?;
    let data = if numbers.iter().all(|number| number.is_i64()) {
        let mut data = Vec::with_capacity(numbers.len() * 8);
        for number in numbers {
            data.extend_from_slice(&number.as_i64()?.to_le_bytes());
        }
        (Dtype::I64, data)
    } else {
        let mut data = Vec::with_capacity(numbers.len() * 8);
        for number in numbers {
            data.extend_from_slice(&number.as_f64()?.to_le_bytes());
        }
        (Dtype::F64, data)
    };
    Some(Predict {
        api: Api::Rest,
        model,
        version,
        signature,
        inputs: vec![Array {
            name: String::new(),
            dtype: data.0,
            shape,
            data: data.1,
        }],
    })
}

/// The numbers of `value`, if it has `shape` all through.
fn flatten<'a>(
    value: &'a Value,
    shape: &[u64],
    numbers: &mut Vec<&'a serde_json::Number>,
) -> Option<()> {
    match (value, shape.split_first()) {
        (Value::Number(number), None) => {
            numbers.push(number);
            Some(())
        }
        (Value::Array(items), Some((&length, inner))) if items.len() as u64 == length => {
            for item in items {
                flatten(item, inner, numbers)?;
            }
            Some(())
        }
        _ => None,
    }
}

/// The answer's JSON, as the Python server writes a row-format predict's: one output's
/// values as nested lists, several as one object per row; None when several outputs
/// differ in their first dimension (the Python server's error says so).
pub fn answer(outputs: &[Array]) -> Option<String> {
    let mut text = String::with_capacity(64);
    text.push_str("{\"predictions\":");
    if let [output] = outputs {
        write_array(&mut text, output, 0, &output.shape);
    } else {
        let rows = outputs.first().map(|output| output.shape.first().copied());
        let rows = rows.flatten()?;
        if outputs
            .iter()
            .any(|output| output.shape.first() != Some(&rows))
        {
            return None;
        }
        text.push('[');
        for row in 0..rows as usize {
            if row > 0 {
                text.push(',');
            }
            text.push('{');
            for (index, output) in outputs.iter().enumerate() {
                if index > 0 {
                    text.push(',');
                }
                text.push_str(&serde_json::to_string(&output.name).ok()?);
                text.push(':');
                let per_row: usize = output.shape[1..].iter().map(|d| *d as usize).product();
                write_array(&mut text, output, row * per_row, &output.shape[1..]);
            }
            text.push('}');
        }
        text.push(']');
    }
    text.push('}');
    Some(text)
}

/// The values of `array` from `start` in `shape`, as nested lists.
fn write_array(text: &mut String, array: &Array, start: usize, shape: &[u64]) -> usize {
    match shape.split_first() {
        None => {
            write_value(text, array, start);
            1
        }
        Some((&length, inner)) => {
            text.push('[');
            let mut at = start;
            for index in 0..length {
                if index > 0 {
                    text.push(',');
                }
                at += write_array(text, array, at, inner);
            }
            text.push(']');
            at - start
        }
    }
}

fn write_value(text: &mut String, array: &Array, index: usize) {
    match array.value(index) {
        link::Value::Bool(value) => text.push_str(if value { "true" } else { "false" }),
        link::Value::Int(value) => text.push_str(&value.to_string()),
        link::Value::Uint(value) => text.push_str(&value.to_string()),
        link::Value::F32(value) => write_float(text, value.into()),
        link::Value::F64(value) => write_float(text, value),
    }
}

fn write_float(text: &mut String, value: f64) {
    if value.is_nan() {
        text.push_str("NaN");
    } else if value.is_infinite() {
        text.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        // serde_json writes the shortest form that reads back (ryu), as orjson does.
        text.push_str(&serde_json::Number::from_f64(value).unwrap().to_string());
    }
}

#[cfg(test)]
mod tests;
