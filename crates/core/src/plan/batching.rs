//! TensorFlow Serving's batching (its `--enable_batching` and `--batching_parameters_file`),
//! as `tfimg serve --enable-batching [--batching-parameters FILE]` reads it before anything
//! is created: the `BatchingParameters` message in protobuf's text format, every problem
//! named at its line and column, then handed to the server as JSON
//! (`serving::BATCHING_ENV`). Pure.
//!
//! ```text
//! max_batch_size { value: 32 }
//! batch_timeout_micros { value: 2000 }
//! max_enqueued_batches { value: 100 }
//! num_batch_threads { value: 4 }
//! allowed_batch_sizes: 8
//! allowed_batch_sizes: 32
//! ```
//!
//! Each field is optional, with TensorFlow Serving's defaults (its batch scheduler's): at
//! most 1000 rows a batch, no wait for more, 10 batches queued, a thread per core. Its
//! checks: each number at least 1 (the timeout at least 0), allowed sizes increasing, the
//! last equal to `max_batch_size`. What tfimg's server does not do (large batch splitting,
//! padding inputs of different lengths) is refused here rather than ignored there;
//! `thread_pool_name` names nothing tfimg shares, and is taken and ignored.

use crate::input::did_you_mean;
use crate::input::source::{printable, Location, SpecError};
use crate::input::text_proto::{self, Field, Value};

/// A batching parameters file larger than this is none (its seven fields take a line each).
pub const MAX_FILE_BYTES: u64 = 64 * 1024;

/// TensorFlow Serving's defaults, its batch scheduler's (`num_batch_threads`: the cores the
/// server has, counted by the server).
pub const DEFAULT_MAX_BATCH_SIZE: u64 = 1000;
pub const DEFAULT_MAX_ENQUEUED_BATCHES: u64 = 10;

/// What the server batches by: TensorFlow Serving's `BatchingParameters`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batching {
    pub max_batch_size: u64,
    pub batch_timeout_micros: u64,
    pub max_enqueued_batches: u64,
    /// None: one per core the server has.
    pub num_batch_threads: Option<u64>,
    pub allowed_batch_sizes: Vec<u64>,
}

impl Default for Batching {
    fn default() -> Self {
        Batching {
            max_batch_size: DEFAULT_MAX_BATCH_SIZE,
            batch_timeout_micros: 0,
            max_enqueued_batches: DEFAULT_MAX_ENQUEUED_BATCHES,
            num_batch_threads: None,
            allowed_batch_sizes: Vec::new(),
        }
    }
}

impl Batching {
    /// The server's environment value (`serving::BATCHING_ENV`).
    pub fn env_value(&self) -> String {
        serde_json::json!({
            "max_batch_size": self.max_batch_size,
            "batch_timeout_micros": self.batch_timeout_micros,
            "max_enqueued_batches": self.max_enqueued_batches,
            "num_batch_threads": self.num_batch_threads,
            "allowed_batch_sizes": self.allowed_batch_sizes,
        })
        .to_string()
    }
}

const HINT: &str = "write TensorFlow Serving's batching parameters: `max_batch_size { value: 32 }`, one field a line";
const FIELDS: &[&str] = &[
    "max_batch_size",
    "batch_timeout_micros",
    "max_enqueued_batches",
    "num_batch_threads",
    "thread_pool_name",
    "allowed_batch_sizes",
    "enable_large_batch_splitting",
    "max_execution_batch_size",
    "pad_variable_length_inputs",
];

/// The batching parameters `text` of the file shown as `file`.
pub fn read(file: &str, text: &str) -> Result<Batching, SpecError> {
    let fields = text_proto::parse(text).map_err(|error| {
        let at = Location {
            file: file.to_string(),
            line: error.line,
            column: error.column,
        };
        SpecError::new(Some(at), error.message, HINT)
    })?;
    let reader = Reader { file };
    let mut batching = Batching::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut sizes: Vec<(u64, &Field)> = Vec::new();
    let mut max_at = None;
    for field in &fields {
        let name = field.name.as_str();
        if name != "allowed_batch_sizes" {
            if seen.contains(&name) {
                return Err(reader.bad(field, format!("`{name}` is given twice"), "keep one"));
            }
            seen.push(name);
        }
        match name {
            "max_batch_size" => {
                batching.max_batch_size = reader.wrapped(field, 1)?;
                max_at = Some(field);
            }
            "batch_timeout_micros" => batching.batch_timeout_micros = reader.wrapped(field, 0)?,
            "max_enqueued_batches" => batching.max_enqueued_batches = reader.wrapped(field, 1)?,
            "num_batch_threads" => batching.num_batch_threads = Some(reader.wrapped(field, 1)?),
            "thread_pool_name" => {
                reader.wrapped_string(field)?;
            }
            "allowed_batch_sizes" => sizes.push((reader.number(field, 1)?, field)),
            "enable_large_batch_splitting" | "max_execution_batch_size" => {
                return Err(reader.bad(
                    field,
                    format!("`{name}` is not done by tfimg's model server: a request over `max_batch_size` rows is refused, never split"),
                    "leave the field out, and raise `max_batch_size` to the largest request you take",
                ))
            }
            "pad_variable_length_inputs" => {
                if !matches!(&field.value, Value::Scalar { text, quoted: false } if text == "false") {
                    return Err(reader.bad(
                        field,
                        "`pad_variable_length_inputs` is not done by tfimg's model server: requests whose inputs differ past the batch dimension are run in batches of their own",
                        "leave the field out",
                    ));
                }
            }
            _ => {
                let listed: Vec<String> = FIELDS.iter().map(|name| format!("`{name}`")).collect();
                return Err(reader.bad(
                    field,
                    format!("`{}` is not a batching parameter", printable(name)),
                    format!(
                        "{}the fields are {}",
                        did_you_mean(name, FIELDS.iter().copied()),
                        listed.join(", ")
                    ),
                ));
            }
        }
    }
    for pair in sizes.windows(2) {
        if pair[1].0 <= pair[0].0 {
            return Err(reader.bad(
                pair[1].1,
                "allowed_batch_sizes entries must be monotonically increasing",
                format!(
                    "list the sizes smallest first, each larger than {}",
                    pair[0].0
                ),
            ));
        }
    }
    if let Some((last, field)) = sizes.last() {
        if *last != batching.max_batch_size {
            return Err(reader.bad(
                field,
                format!(
                    "the last of allowed_batch_sizes, {last}, is not max_batch_size, {max} (TensorFlow Serving: Last entry in allowed_batch_sizes must match max_batch_size; last entry was {last}; expected {max})",
                    max = batching.max_batch_size
                ),
                match max_at {
                    Some(at) => format!("end the list with {} (`max_batch_size` at line {}), or change that", batching.max_batch_size, at.line),
                    None => format!("end the list with {DEFAULT_MAX_BATCH_SIZE}, the default `max_batch_size`, or set `max_batch_size {{ value: {last} }}`"),
                },
            ));
        }
    }
    batching.allowed_batch_sizes = sizes.into_iter().map(|(size, _)| size).collect();
    Ok(batching)
}

struct Reader<'a> {
    file: &'a str,
}

impl Reader<'_> {
    fn bad(&self, field: &Field, message: impl Into<String>, hint: impl Into<String>) -> SpecError {
        let at = Location {
            file: self.file.to_string(),
            line: field.line,
            column: field.column,
        };
        SpecError::new(Some(at), message, hint)
    }

    /// A whole number from `least`, as written (`allowed_batch_sizes: 8`).
    fn number(&self, field: &Field, least: u64) -> Result<u64, SpecError> {
        let parsed = match &field.value {
            Value::Scalar {
                text,
                quoted: false,
            } => text.parse::<u64>().ok().filter(|value| *value >= least),
            _ => None,
        };
        parsed.ok_or_else(|| {
            let shown = match &field.value {
                Value::Scalar { text, .. } => format!("`{}: {}`", field.name, printable(text)),
                Value::Message(_) => format!("`{} {{ ... }}`", field.name),
            };
            self.bad(
                field,
                format!("{shown} is not a whole number from {least}"),
                format!(
                    "write a whole number from {least}, such as `{}: 32`",
                    field.name
                ),
            )
        })
    }

    /// The one `value` of a wrapper message (`max_batch_size { value: 32 }`), from `least`.
    fn wrapped(&self, field: &Field, least: u64) -> Result<u64, SpecError> {
        let value = self.value_of(field, &format!("{least}"))?;
        self.number(value, least).map_err(|_| {
            self.bad(
                value,
                format!("`{}` takes a whole number from {least}", field.name),
                format!("write `{} {{ value: {} }}`", field.name, least.max(1) * 32),
            )
        })
    }

    fn wrapped_string(&self, field: &Field) -> Result<(), SpecError> {
        let value = self.value_of(field, "\"...\"")?;
        match &value.value {
            Value::Scalar { quoted: true, .. } => Ok(()),
            _ => Err(self.bad(
                value,
                format!("`{}` takes a string", field.name),
                format!("write `{} {{ value: \"...\" }}`", field.name),
            )),
        }
    }

    fn value_of<'f>(&self, field: &'f Field, example: &str) -> Result<&'f Field, SpecError> {
        let hint = format!(
            "write `{} {{ value: {example} }}`, as TensorFlow Serving's file does",
            field.name
        );
        match &field.value {
            Value::Message(fields) => {
                if let Some(other) = fields.iter().find(|value| value.name != "value") {
                    return Err(self.bad(
                        other,
                        format!(
                            "`{}` is not a field of `{}`",
                            printable(&other.name),
                            field.name
                        ),
                        hint,
                    ));
                }
                match fields.as_slice() {
                    [value] => Ok(value),
                    [] => Err(self.bad(field, format!("`{}` has no `value`", field.name), hint)),
                    [_, extra, ..] => {
                        Err(self.bad(extra, format!("`{}` has one `value`", field.name), hint))
                    }
                }
            }
            Value::Scalar { .. } => Err(self.bad(
                field,
                format!("`{}` is a message (a wrapper), not a value", field.name),
                hint,
            )),
        }
    }
}

#[cfg(test)]
mod tests;
