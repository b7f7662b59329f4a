//! The spec file as a user writes it: every field optional, unknown fields rejected, so a
//! typo fails loudly instead of being ignored. Merging (`extends`) and defaults happen in
//! `load` and `validate`; this module only describes the shape.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// One YAML spec document.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
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
    pub ports: Option<BTreeMap<String, i64>>,
    pub user: Option<String>,
    pub workdir: Option<String>,
    /// Files and folders copied into the image, relative to the spec file's folder.
    pub files: Option<Vec<FileEntry>>,
}

/// One `files:` entry: `code`, `code:/tf/src`, or the long form with ignore patterns.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum FileEntry {
    Short(String),
    Full(FileEntryFull),
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
pub struct Packages {
    #[serde(default)]
    pub apt: Vec<String>,
    #[serde(default)]
    pub pip: Vec<String>,
}

/// What the container runs when started without a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Service {
    Jupyter,
    Ssh,
    None,
}

impl Service {
    pub fn as_str(self) -> &'static str {
        match self {
            Service::Jupyter => "jupyter",
            Service::Ssh => "ssh",
            Service::None => "none",
        }
    }
}

/// Where a GPU image's CUDA/cuDNN user-space libraries come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
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
        }
        deserializer.deserialize_any(VersionVisitor)
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
            // Paths are relative to the file that names them, so they never merge: a
            // child's `files` replace its parent's.
            files: scalar(&self.files, &child.files),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> SpecFile {
        serde_yaml::from_str(text).unwrap()
    }

    #[test]
    fn merge_scalars_override_lists_append_maps_merge() {
        let parent = parse(
            "name: base\nabstract: true\ntensorflow: \"2.9.3\"\ngpu: true\n\
             packages: {apt: [python3, tini], pip: [numpy]}\n\
             env: {A: \"1\", B: \"2\"}\nports: {jupyter: 8888}\n",
        );
        let child = parse(
            "name: child\nextends: base\ntensorflow: \"2.10\"\n\
             packages: {apt: [tini, git]}\nenv: {B: three}\nports: {tensorboard: 6006}\n",
        );
        let merged = parent.merged_with(&child);
        assert_eq!(merged.name.as_deref(), Some("child"));
        assert_eq!(merged.is_abstract, None);
        assert_eq!(merged.tensorflow, Some(VersionText("2.10".into())));
        assert_eq!(merged.gpu, Some(true));
        let packages = merged.packages.unwrap();
        assert_eq!(packages.apt, ["python3", "tini", "git"]);
        assert_eq!(packages.pip, ["numpy"]);
        let env = merged.env.unwrap();
        assert_eq!(env["A"], EnvValue("1".into()));
        assert_eq!(env["B"], EnvValue("three".into()));
        assert_eq!(merged.ports.unwrap().len(), 2);
    }

    #[test]
    fn env_accepts_scalars_and_versions_refuse_numbers() {
        let spec = parse("env: {A: true, B: 2, C: x}\n");
        let env = spec.env.unwrap();
        assert_eq!(env["A"].0, "true");
        assert_eq!(env["B"].0, "2");
        let error = serde_yaml::from_str::<SpecFile>("tensorflow: 2.10\n").unwrap_err();
        assert!(error.to_string().contains(UNQUOTED_VERSION), "{error}");
    }
}
