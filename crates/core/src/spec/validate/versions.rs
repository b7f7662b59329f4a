//! The TensorFlow release a spec names (found in the compatibility table, a minor taken
//! to its newest patch) and the Python it runs on: the spec's, checked against the
//! release's range and the base image's own, or the base image's.

use super::Resolver;
use crate::input::SpecError;
use crate::spec::compat::{self, TensorflowRow, Version};

impl Resolver<'_> {
    pub(super) fn tensorflow(&self) -> Result<(Version, &'static TensorflowRow), SpecError> {
        let Some(text) = &self.merged.tensorflow else {
            return Err(self.error(
                "tensorflow",
                "no TensorFlow version is set",
                format!(
                    "add `tensorflow: \"2.9.3\"` (known releases: {}) or `extends: gpu-jupyter`",
                    compat::known_tensorflow_minors()
                ),
            ));
        };
        let unknown = || {
            self.error(
                "tensorflow",
                format!("unknown TensorFlow version `{}`", text.0),
                format!(
                    "tfimg knows TensorFlow {}; write a release such as \"2.9\" or \"2.9.3\"",
                    compat::known_tensorflow_minors()
                ),
            )
        };
        let version = Version::parse(&text.0).ok_or_else(unknown)?;
        if version.precision() > 3 {
            return Err(unknown());
        }
        let row = compat::tensorflow_row(&version).ok_or_else(unknown)?;
        let full = if version.precision() == 2 {
            Version::parse(row.latest_patch).expect("table versions parse")
        } else {
            version
        };
        Ok((full, row))
    }

    /// The Python the image runs: the spec's `python`, else the one the base image ships.
    pub(super) fn python(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
        base: &str,
    ) -> Result<String, SpecError> {
        match &self.merged.python {
            Some(text) => self.requested_python(&text.0, tensorflow, row, base),
            None => self.shipped_python(tensorflow, row, base),
        }
    }

    /// The spec's `python`, as a minor: in the release's range, and the one the base
    /// ships when tfimg knows it.
    fn requested_python(
        &self,
        text: &str,
        tensorflow: &Version,
        row: &TensorflowRow,
        base: &str,
    ) -> Result<String, SpecError> {
        let (low, high) = (row.python_min, row.python_max);
        let shipped = compat::distribution_python(base);
        let python = Version::parse(text)
            .filter(|version| version.precision() <= 3 && version.major() == 3)
            .ok_or_else(|| {
                self.error(
                    "python",
                    format!("`{text}` is not a Python 3 version"),
                    format!(
                        "write `python: \"{high}\"` or remove `python` to use the base image's"
                    ),
                )
            })?;
        let python_minor = format!("{}.{}", python.major(), python.minor().unwrap_or(0));
        if !row.supports_python(&python) {
            return Err(self.error(
                "python",
                format!(
                    "Python {python_minor} is outside the range TensorFlow {tensorflow} supports ({low} to {high})"
                ),
                format!(
                    "set `python` between {low} and {high}{}",
                    releases_for_python(&python_minor)
                        .map(|releases| format!(", or use TensorFlow {releases} for Python {python_minor}"))
                        .unwrap_or_default()
                ),
            ));
        }
        if let Some(shipped) = shipped {
            if shipped != python_minor {
                return Err(self.error(
                    "python",
                    format!("`{base}` ships Python {shipped}, not {python_minor}"),
                    format!(
                        "remove `python` to use {shipped}, or set `base` to an image that ships Python {python_minor}{}",
                        ubuntu_for_python(&python_minor)
                            .map(|image| format!(" (such as `{image}`)"))
                            .unwrap_or_default()
                    ),
                ));
            }
        }
        Ok(python_minor)
    }

    /// The Python the base image ships, which tfimg must know, in the release's range.
    fn shipped_python(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
        base: &str,
    ) -> Result<String, SpecError> {
        let (low, high) = (row.python_min, row.python_max);
        let Some(shipped) = compat::distribution_python(base) else {
            return Err(self.error(
                "base",
                format!("tfimg does not know which Python `{base}` ships"),
                format!("set `python:` to the version its `python3` package installs (TensorFlow {tensorflow} supports {low} to {high})"),
            ));
        };
        let version = Version::parse(shipped).expect("table");
        if !row.supports_python(&version) {
            return Err(self.error(
                "base",
                format!(
                    "`{base}` ships Python {shipped}, outside the range TensorFlow {tensorflow} supports ({low} to {high})"
                ),
                format!(
                    "use a base that ships Python {low} to {high} (such as `debian:bullseye-slim`){}",
                    releases_for_python(shipped)
                        .map(|releases| format!(", or TensorFlow {releases}"))
                        .unwrap_or_default()
                ),
            ));
        }
        Ok(shipped.to_string())
    }

    /// tfimg's images need Python 3.8: their verification and JupyterLab 4 do.
    pub(super) fn refuse_old_python(&self, python: &str) -> Result<(), SpecError> {
        if Version::parse(python)
            .is_some_and(|version| version < Version::parse("3.8").expect("literal"))
        {
            let field = if self.merged.python.is_some() {
                "python"
            } else {
                "base"
            };
            return Err(self.error(
                field,
                format!("Python {python} is too old for tfimg's images (their verification and JupyterLab 4 need 3.8 or later)"),
                "use a base that ships Python 3.8 or later, such as `debian:bullseye-slim` (3.9) or `ubuntu:20.04` (3.8)",
            ));
        }
        Ok(())
    }
}

/// `2.12 to 2.16` — the TensorFlow releases that support a Python minor.
fn releases_for_python(python: &str) -> Option<String> {
    let version = Version::parse(python)?;
    let rows: Vec<&str> = compat::TENSORFLOW
        .iter()
        .filter(|row| row.supports_python(&version))
        .map(|row| row.minor)
        .collect();
    match rows.as_slice() {
        [] => None,
        [only] => Some(only.to_string()),
        [first, .., last] => Some(format!("{first} to {last}")),
    }
}

fn ubuntu_for_python(python: &str) -> Option<String> {
    ["18.04", "20.04", "22.04", "24.04"]
        .into_iter()
        .map(|release| format!("ubuntu:{release}"))
        .find(|image| compat::distribution_python(image) == Some(python))
}

#[cfg(test)]
mod tests;
