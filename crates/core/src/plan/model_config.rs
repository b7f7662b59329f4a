//! TensorFlow Serving's model config file (its `--model_config_file`), as `tfimg serve
//! --model-config FILE` reads it before anything is created: each model's name, folder
//! (`base_path`), version policy and labels, every problem named at its line and column.
//! The server in the image parses the same file again with protobuf's own `text_format`
//! (`tfimg_serving`), and reloads it when it changes. Pure.
//!
//! ```text
//! model_config_list {
//!   config {
//!     name: "fraud"
//!     base_path: "/srv/models/fraud"
//!     model_platform: "tensorflow"
//!     model_version_policy { specific { versions: 1 versions: 2 } }
//!     version_labels { key: "stable" value: 1 }
//!     version_labels { key: "canary" value: 2 }
//!   }
//! }
//! ```
//!
//! As TensorFlow Serving reads it: `latest { num_versions: N }` (the default, N = 1),
//! `all {}` or `specific { versions: ... }`; a label names one version. Past what
//! TensorFlow Serving checks: a `base_path` is absolute (a relative one would name the
//! server's working directory, in a container), names and labels are ones a URL takes,
//! and what tfimg's server does not do (`custom_model_config`, `logging_config`, another
//! platform) is refused here rather than ignored there.

use std::collections::BTreeMap;

use crate::input::did_you_mean;
use crate::input::source::{printable, Location, SpecError};
use crate::input::text_proto::{self, Field, Value};
use crate::plan::serving::valid_model_name;

/// A model config file larger than this is no model config (1 MiB holds thousands of
/// models).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelConfig {
    pub models: Vec<ConfiguredModel>,
}

/// One `config { ... }` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredModel {
    pub name: String,
    /// As written: absolute, on the host that runs `tfimg serve`.
    pub base_path: String,
    /// Where `base_path` is written, for errors about the folder.
    pub base_path_at: Location,
    pub policy: VersionPolicy,
    /// `version_labels`: label → version.
    pub labels: BTreeMap<String, i64>,
}

/// `model_version_policy`, which of a model's versions are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionPolicy {
    /// The N highest.
    Latest(u32),
    All,
    /// These, as they appear.
    Specific(Vec<u64>),
}

impl VersionPolicy {
    /// The versions of `available` (lowest first) the policy serves, lowest first.
    pub fn served(&self, available: &[u64]) -> Vec<u64> {
        match self {
            VersionPolicy::Latest(count) => {
                let skip = available.len().saturating_sub(*count as usize);
                available[skip..].to_vec()
            }
            VersionPolicy::All => available.to_vec(),
            VersionPolicy::Specific(versions) => (available.iter())
                .filter(|version| versions.contains(version))
                .copied()
                .collect(),
        }
    }

    /// How a note names it: `the highest`, `the 2 highest`, `all`, `versions 1, 2`.
    pub fn describe(&self) -> String {
        match self {
            VersionPolicy::Latest(1) => "the highest version".into(),
            VersionPolicy::Latest(count) => format!("the {count} highest versions"),
            VersionPolicy::All => "every version".into(),
            VersionPolicy::Specific(versions) => {
                let listed: Vec<String> = versions.iter().map(u64::to_string).collect();
                format!("versions {}", listed.join(", "))
            }
        }
    }
}

/// TensorFlow Serving's words for a file that is not its text format, or names a field
/// its message lacks (its own test looks for them), after tfimg's.
const NOT_PARSED: &str =
    "TensorFlow Serving: Error parsing text-format tensorflow.serving.ModelServerConfig";
const CONFIG_HINT: &str = "write TensorFlow Serving's format: `model_config_list { config { name: \"NAME\" base_path: \"/abs/path/NAME\" } }`";
const CONFIG_FIELDS: &[&str] = &[
    "name",
    "base_path",
    "model_platform",
    "model_version_policy",
    "version_labels",
    "model_type",
    "logging_config",
];

/// The model config `text` of the file shown as `file`.
pub fn read(file: &str, text: &str) -> Result<ModelConfig, SpecError> {
    let at = |line, column| {
        Some(Location {
            file: file.to_string(),
            line,
            column,
        })
    };
    let fields = text_proto::parse(text).map_err(|error| {
        let message = format!("{} ({NOT_PARSED})", error.message);
        SpecError::new(at(error.line, error.column), message, CONFIG_HINT)
    })?;
    let reader = Reader { file };
    let mut models: Vec<ConfiguredModel> = Vec::new();
    let mut lists = 0;
    for field in &fields {
        match field.name.as_str() {
            "model_config_list" => {
                lists += 1;
                if lists > 1 {
                    return Err(reader.bad(
                        field,
                        "`model_config_list` is given twice",
                        "put every `config { ... }` in one `model_config_list`",
                    ));
                }
                for entry in reader.message(field)? {
                    if entry.name != "config" {
                        return Err(reader.unknown(entry, &["config"]));
                    }
                    let model = reader.model(entry)?;
                    if let Some(first) = models.iter().find(|other| other.name == model.name) {
                        return Err(reader.bad(
                            entry,
                            format!(
                                "model `{}` is configured twice (first at line {})",
                                model.name, first.base_path_at.line
                            ),
                            "give each `config` a name of its own",
                        ));
                    }
                    models.push(model);
                }
            }
            "custom_model_config" => {
                return Err(reader.bad(
                    field,
                    "`custom_model_config` is not served by tfimg's model server",
                    "list the models in `model_config_list { config { ... } }`",
                ))
            }
            _ => return Err(reader.unknown(field, &["model_config_list"])),
        }
    }
    if models.is_empty() {
        return Err(SpecError::new(
            at(1, 1),
            "the model config names no model",
            CONFIG_HINT,
        ));
    }
    Ok(ModelConfig { models })
}

struct Reader<'a> {
    file: &'a str,
}

impl Reader<'_> {
    fn at(&self, field: &Field) -> Location {
        Location {
            file: self.file.to_string(),
            line: field.line,
            column: field.column,
        }
    }

    fn bad(&self, field: &Field, message: impl Into<String>, hint: impl Into<String>) -> SpecError {
        SpecError::new(Some(self.at(field)), message, hint)
    }

    fn unknown(&self, field: &Field, known: &[&str]) -> SpecError {
        let listed: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
        self.bad(
            field,
            format!(
                "`{}` is not a field here ({NOT_PARSED})",
                printable(&field.name)
            ),
            format!(
                "{}the fields here are {}",
                did_you_mean(&field.name, known.iter().copied()),
                listed.join(", ")
            ),
        )
    }

    fn message<'f>(&self, field: &'f Field) -> Result<&'f [Field], SpecError> {
        match &field.value {
            Value::Message(fields) => Ok(fields),
            Value::Scalar { .. } => Err(self.bad(
                field,
                format!("`{}` is a message, not a value", field.name),
                format!("write `{} {{ ... }}`", field.name),
            )),
        }
    }

    fn string<'f>(&self, field: &'f Field) -> Result<&'f str, SpecError> {
        match &field.value {
            Value::Scalar { text, quoted: true } => Ok(text),
            _ => Err(self.bad(
                field,
                format!("`{}` is a string", field.name),
                format!("write `{}: \"...\"`", field.name),
            )),
        }
    }

    fn number<T: std::str::FromStr>(&self, field: &Field, what: &str) -> Result<T, SpecError> {
        match &field.value {
            Value::Scalar {
                text,
                quoted: false,
            } => text.parse().map_err(|_| {
                self.bad(
                    field,
                    format!("`{}: {}` is not {what}", field.name, printable(text)),
                    format!("write {what}, such as `{}: 1`", field.name),
                )
            }),
            _ => Err(self.bad(
                field,
                format!("`{}` is not {what}", field.name),
                format!("write {what}, such as `{}: 1`", field.name),
            )),
        }
    }

    /// A string a URL carries (a model's name, a label): what a model name may be.
    fn url_word(&self, field: &Field, what: &str) -> Result<String, SpecError> {
        let text = self.string(field)?;
        if !valid_model_name(text) {
            return Err(self.bad(
                field,
                format!("`{}` is not {what}", printable(text)),
                "use letters, digits, `.`, `_` and `-`, starting with a letter or digit (at most 64)",
            ));
        }
        Ok(text.to_string())
    }

    /// A field that may appear once, given twice: protobuf's parser refuses it too.
    fn once(&self, seen: &mut Vec<String>, field: &Field) -> Result<(), SpecError> {
        if seen.contains(&field.name) {
            return Err(self.bad(
                field,
                format!("`{}` is given twice", field.name),
                "keep one",
            ));
        }
        seen.push(field.name.clone());
        Ok(())
    }

    fn model(&self, entry: &Field) -> Result<ConfiguredModel, SpecError> {
        let mut seen = Vec::new();
        let (mut name, mut base_path, mut policy) = (None, None, None);
        let mut labels = BTreeMap::new();
        for field in self.message(entry)? {
            if field.name != "version_labels" {
                self.once(&mut seen, field)?;
            }
            match field.name.as_str() {
                "name" => name = Some(self.url_word(field, "a model name tfimg's server takes")?),
                "base_path" => {
                    let text = self.string(field)?;
                    if !text.starts_with('/') || text.contains('\0') {
                        return Err(self.bad(
                            field,
                            format!("`base_path: \"{}\"` is not an absolute path", printable(text)),
                            "write the model folder's absolute path on this machine (it is mounted read-only into the server)",
                        ));
                    }
                    base_path = Some((text.to_string(), self.at(field)));
                }
                "model_platform" => {
                    let text = self.string(field)?;
                    if text != "tensorflow" {
                        return Err(self.bad(
                            field,
                            format!("`model_platform: \"{}\"` is not served by tfimg's model server", printable(text)),
                            "serve SavedModels: `model_platform: \"tensorflow\"`, or leave the field out",
                        ));
                    }
                }
                "model_version_policy" => policy = Some(self.policy(field)?),
                "version_labels" => {
                    let (label, version) = self.label(field)?;
                    if labels.insert(label.clone(), version).is_some() {
                        return Err(self.bad(
                            field,
                            format!("label `{label}` is given twice"),
                            "give each label one version",
                        ));
                    }
                }
                "model_type" => {
                    return Err(self.bad(
                        field,
                        "`model_type` is deprecated in TensorFlow Serving",
                        "write `model_platform: \"tensorflow\"` instead",
                    ))
                }
                "logging_config" => {
                    return Err(self.bad(
                        field,
                        "`logging_config` (request logging) is not done by tfimg's model server",
                        "leave it out; the server's metrics are at /monitoring/prometheus/metrics",
                    ))
                }
                _ => return Err(self.unknown(field, CONFIG_FIELDS)),
            }
        }
        let missing = |what: &str| {
            self.bad(
                entry,
                format!("this `config` has no `{what}`"),
                "give each model `name: \"NAME\"` and `base_path: \"/abs/path/NAME\"`",
            )
        };
        let name = name.ok_or_else(|| missing("name"))?;
        let (base_path, base_path_at) = base_path.ok_or_else(|| missing("base_path"))?;
        Ok(ConfiguredModel {
            name,
            base_path,
            base_path_at,
            policy: policy.unwrap_or(VersionPolicy::Latest(1)),
            labels,
        })
    }

    fn policy(&self, field: &Field) -> Result<VersionPolicy, SpecError> {
        let fields = self.message(field)?;
        let hint =
            "choose one: `latest { num_versions: 1 }`, `all {}` or `specific { versions: 1 }`";
        let [choice] = fields else {
            return Err(self.bad(field, "`model_version_policy` holds one policy", hint));
        };
        let inner = self.message(choice)?;
        match choice.name.as_str() {
            "all" => match inner.first() {
                None => Ok(VersionPolicy::All),
                Some(extra) => Err(self.unknown(extra, &[])),
            },
            "latest" => {
                let mut count = 1;
                let mut seen = Vec::new();
                for field in inner {
                    self.once(&mut seen, field)?;
                    if field.name != "num_versions" {
                        return Err(self.unknown(field, &["num_versions"]));
                    }
                    count = self.number::<u32>(field, "a number of versions from 1")?;
                    if count == 0 {
                        return Err(self.bad(
                            field,
                            "`num_versions: 0` serves nothing",
                            "serve at least one: `num_versions: 1`",
                        ));
                    }
                }
                Ok(VersionPolicy::Latest(count))
            }
            "specific" => {
                let mut versions = Vec::new();
                for field in inner {
                    if field.name != "versions" {
                        return Err(self.unknown(field, &["versions"]));
                    }
                    let version = self.number::<i64>(field, "a version number")?;
                    let version = u64::try_from(version).map_err(|_| {
                        self.bad(
                            field,
                            format!("version {version} is negative"),
                            "write the number of a version folder, such as `versions: 1`",
                        )
                    })?;
                    versions.push(version);
                }
                if versions.is_empty() {
                    return Err(self.bad(
                        choice,
                        "`specific` names no version",
                        "list them: `specific { versions: 1 versions: 2 }`",
                    ));
                }
                Ok(VersionPolicy::Specific(versions))
            }
            _ => Err(self.unknown(choice, &["latest", "all", "specific"])),
        }
    }

    /// `version_labels { key: "stable" value: 1 }`.
    fn label(&self, field: &Field) -> Result<(String, i64), SpecError> {
        let (mut key, mut value) = (None, None);
        let mut seen = Vec::new();
        for inner in self.message(field)? {
            self.once(&mut seen, inner)?;
            match inner.name.as_str() {
                "key" => key = Some(self.url_word(inner, "a label a URL takes (`/labels/LABEL`)")?),
                "value" => value = Some(self.number::<i64>(inner, "a version number")?),
                _ => return Err(self.unknown(inner, &["key", "value"])),
            }
        }
        match (key, value) {
            (Some(key), Some(value)) => Ok((key, value)),
            _ => Err(self.bad(
                field,
                "a version label needs a `key` and a `value`",
                "write `version_labels { key: \"stable\" value: 1 }`",
            )),
        }
    }
}

#[cfg(test)]
mod tests;
