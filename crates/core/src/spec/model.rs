//! The spec file as a user writes it: every field optional, unknown fields rejected, so a
//! typo fails loudly instead of being ignored. Merging (`extends`) and defaults happen in
//! `load` and `validate`; this module only describes the shape.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// One YAML spec document.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping of spec fields such as `extends` and `tensorflow`"
)]
pub struct SpecFile {
    pub name: Option<String>,
    /// Abstract specs only exist to be extended; they are never built.
    #[serde(rename = "abstract")]
    pub is_abstract: Option<bool>,
    pub extends: Option<String>,
    pub description: Option<String>,
    pub base: Option<String>,
    pub tensorflow: Option<VersionText>,
    pub python: Option<VersionText>,
    pub gpu: Option<bool>,
    pub cuda_provider: Option<CudaProvider>,
    pub cuda: Option<VersionText>,
    pub cudnn: Option<VersionText>,
    pub service: Option<Service>,
    pub packages: Option<Packages>,
    pub env: Option<BTreeMap<String, EnvValue>>,
    pub ports: Option<BTreeMap<String, PortNumber>>,
    pub user: Option<String>,
    pub workdir: Option<String>,
    /// What the managed TensorBoard reads (specs with a `tensorboard` port); default the
    /// workdir.
    pub tensorboard_logdir: Option<String>,
    /// Files and folders copied into the image, relative to the spec file's folder.
    pub files: Option<Vec<FileEntry>>,
}

/// One `files:` entry: `code`, `code:/tf/src`, or the long form with ignore patterns.
// `expecting` replaces serde's "data did not match any variant of untagged enum
// FileEntry", which names a Rust type instead of what to write.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(
    untagged,
    expecting = "expected a path such as `code` or `code:/tf/src`, or a mapping with `src`, `dst` and `ignore`"
)]
pub enum FileEntry {
    Short(String),
    Full(FileEntryFull),
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `src`, `dst` and `ignore`"
)]
pub struct FileEntryFull {
    pub src: String,
    pub dst: Option<String>,
    /// gitignore-style patterns of files to leave out.
    #[serde(default)]
    pub ignore: Vec<String>,
}

impl FileEntry {
    /// (source, destination, ignore patterns).
    pub fn parts(&self) -> (String, Option<String>, Vec<String>) {
        match self {
            FileEntry::Short(text) => match text.split_once(':') {
                Some((source, destination)) => (
                    source.to_string(),
                    Some(destination.to_string()),
                    Vec::new(),
                ),
                None => (text.clone(), None, Vec::new()),
            },
            FileEntry::Full(full) => (full.src.clone(), full.dst.clone(), full.ignore.clone()),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `apt` and `pip` lists"
)]
pub struct Packages {
    #[serde(default)]
    pub apt: Vec<String>,
    #[serde(default)]
    pub pip: Vec<String>,
}

/// What the container runs when started without a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, PartialOrd, Ord)]
#[serde(
    rename_all = "lowercase",
    expecting = "one of `jupyter`, `ssh`, `serving`, `none`"
)]
pub enum Service {
    Jupyter,
    Ssh,
    /// A model server speaking TensorFlow Serving's REST API over `/models/NAME/VERSION`.
    Serving,
    None,
}

impl Service {
    pub fn as_str(self) -> &'static str {
        match self {
            Service::Jupyter => "jupyter",
            Service::Ssh => "ssh",
            Service::Serving => "serving",
            Service::None => "none",
        }
    }
}

/// Where a GPU image's CUDA/cuDNN user-space libraries come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", expecting = "one of `pip`, `image`")]
pub enum CudaProvider {
    /// NVIDIA's CUDA/cuDNN wheels from PyPI: needs no Docker Hub.
    Pip,
    /// An `nvidia/cuda` base image.
    Image,
}

impl CudaProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            CudaProvider::Pip => "pip",
            CudaProvider::Image => "image",
        }
    }
}

/// The serde error for a version written as a number; `load` rewrites it with the text
/// the user typed, which the number has already lost (`2.10` became 2.1).
pub const UNQUOTED_VERSION: &str = "a version must be a quoted string";

/// A version written as a YAML string. Numbers are refused because YAML reads `2.10` as
/// the float 2.1: the error tells the user to quote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionText(pub String);

impl<'de> Deserialize<'de> for VersionText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;
        impl Visitor<'_> for VersionVisitor {
            type Value = VersionText;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a quoted version string such as \"2.9.3\"")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<VersionText, E> {
                Ok(VersionText(value.to_string()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<VersionText, E> {
                Err(E::custom(UNQUOTED_VERSION))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<VersionText, E> {
                Err(E::custom(UNQUOTED_VERSION))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<VersionText, E> {
                Err(E::custom(UNQUOTED_VERSION))
            }
            // Past `u64`: `tensorflow: 99999999999999999999`.
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<VersionText, E> {
                Err(E::custom(UNQUOTED_VERSION))
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<VersionText, E> {
                Err(E::custom(UNQUOTED_VERSION))
            }
        }
        deserializer.deserialize_any(VersionVisitor)
    }
}

/// A port as YAML reads it: any number, so `1e10` or `99999999999999999999` reach the
/// range check and its message (ports go from 1 to 65535) instead of serde's `expected
/// i64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PortNumber {
    Integer(i128),
    Float(f64),
}

impl PortNumber {
    /// The port, when it is a whole number from 1 to 65535.
    pub fn port(self) -> Option<u16> {
        match self {
            PortNumber::Integer(number) => u16::try_from(number).ok().filter(|port| *port > 0),
            PortNumber::Float(number) if number.fract() == 0.0 && number.abs() < 1e6 => {
                PortNumber::Integer(number as i128).port()
            }
            PortNumber::Float(_) => None,
        }
    }
}

impl fmt::Display for PortNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortNumber::Integer(number) => write!(f, "{number}"),
            PortNumber::Float(number) => write!(f, "{number}"),
        }
    }
}

impl<'de> Deserialize<'de> for PortNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PortVisitor;
        impl Visitor<'_> for PortVisitor {
            type Value = PortNumber;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a port number from 1 to 65535")
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<PortNumber, E> {
                Ok(PortNumber::Integer(value.into()))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<PortNumber, E> {
                Ok(PortNumber::Integer(value.into()))
            }
            fn visit_i128<E: de::Error>(self, value: i128) -> Result<PortNumber, E> {
                Ok(PortNumber::Integer(value))
            }
            fn visit_u128<E: de::Error>(self, value: u128) -> Result<PortNumber, E> {
                Ok(PortNumber::Integer(
                    i128::try_from(value).unwrap_or(i128::MAX),
                ))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<PortNumber, E> {
                Ok(PortNumber::Float(value))
            }
        }
        deserializer.deserialize_any(PortVisitor)
    }
}

/// An environment value: YAML strings, booleans and numbers are all accepted and kept as
/// the text the container will see (`true`, `1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvValue(pub String);

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EnvVisitor;
        impl Visitor<'_> for EnvVisitor {
            type Value = EnvValue;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
            fn visit_bool<E: de::Error>(self, value: bool) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<EnvValue, E> {
                Ok(EnvValue(value.to_string()))
            }
        }
        deserializer.deserialize_any(EnvVisitor)
    }
}

impl SpecFile {
    /// `self` extended by `child`: scalars in the child override, lists append (without
    /// repeating an entry), maps merge key by key with the child winning.
    pub fn merged_with(&self, child: &SpecFile) -> SpecFile {
        fn scalar<T: Clone>(parent: &Option<T>, child: &Option<T>) -> Option<T> {
            child.clone().or_else(|| parent.clone())
        }
        fn map<V: Clone>(
            parent: &Option<BTreeMap<String, V>>,
            child: &Option<BTreeMap<String, V>>,
        ) -> Option<BTreeMap<String, V>> {
            match (parent, child) {
                (None, None) => None,
                (parent, child) => {
                    let mut merged = parent.clone().unwrap_or_default();
                    merged.extend(child.clone().unwrap_or_default());
                    Some(merged)
                }
            }
        }
        fn list(parent: &[String], child: &[String]) -> Vec<String> {
            let mut merged = parent.to_vec();
            for item in child {
                if !merged.contains(item) {
                    merged.push(item.clone());
                }
            }
            merged
        }
        let packages = match (&self.packages, &child.packages) {
            (None, None) => None,
            (parent, child) => {
                let parent = parent.clone().unwrap_or_default();
                let child = child.clone().unwrap_or_default();
                Some(Packages {
                    apt: list(&parent.apt, &child.apt),
                    pip: list(&parent.pip, &child.pip),
                })
            }
        };
        SpecFile {
            // Identity is never inherited: a child of an abstract base is concrete.
            name: child.name.clone(),
            is_abstract: child.is_abstract,
            extends: child.extends.clone(),
            description: scalar(&self.description, &child.description),
            base: scalar(&self.base, &child.base),
            tensorflow: scalar(&self.tensorflow, &child.tensorflow),
            python: scalar(&self.python, &child.python),
            gpu: scalar(&self.gpu, &child.gpu),
            cuda_provider: scalar(&self.cuda_provider, &child.cuda_provider),
            cuda: scalar(&self.cuda, &child.cuda),
            cudnn: scalar(&self.cudnn, &child.cudnn),
            service: scalar(&self.service, &child.service),
            packages,
            env: map(&self.env, &child.env),
            ports: map(&self.ports, &child.ports),
            user: scalar(&self.user, &child.user),
            workdir: scalar(&self.workdir, &child.workdir),
            tensorboard_logdir: scalar(&self.tensorboard_logdir, &child.tensorboard_logdir),
            // Paths are relative to the file that names them, so they never merge: a
            // child's `files` replace its parent's.
            files: scalar(&self.files, &child.files),
        }
    }
}

#[cfg(test)]
mod tests;
