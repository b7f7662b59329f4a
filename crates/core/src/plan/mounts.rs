//! `--mount SRC[:DST][:ro]`: relative sources resolved from the current directory, DST
//! defaulting to `<workdir>/<basename of SRC>` (so `./notebooks` lands in
//! `/tf/notebooks`, where Jupyter opens); which destinations and missing sources are
//! refused. Pure: the launcher makes the missing folders.

use std::path::{Path, PathBuf};

use crate::input::paths::lexical;
use crate::input::source::printable;
use crate::input::InputError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountPlan {
    pub source: PathBuf,
    pub target: String,
    pub read_only: bool,
}

/// A `--mount` as typed, checked, its source resolved; the destination may wait for the
/// image's workdir (`./notebooks` → `<workdir>/notebooks`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountRequest {
    /// What the user wrote, for messages.
    pub text: String,
    pub source: PathBuf,
    /// `None`: under the workdir, by the source's name.
    pub target: Option<String>,
    pub read_only: bool,
}

/// Where a mount or sync of `source` goes when its destination is not given: under the
/// workdir, by the source's name.
pub fn default_target(source: &std::path::Path, workdir: &str) -> String {
    let name = source
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    format!("{}/{name}", workdir.trim_end_matches('/'))
}

impl MountRequest {
    /// The mount once the image's workdir is known.
    pub fn at(&self, workdir: &str) -> MountPlan {
        let target = self
            .target
            .clone()
            .unwrap_or_else(|| default_target(&self.source, workdir));
        MountPlan {
            source: self.source.clone(),
            target,
            read_only: self.read_only,
        }
    }
}

/// Parses one `--mount` value against the current directory and the image's workdir.
pub fn parse(text: &str, current_dir: &Path, workdir: &str) -> Result<MountPlan, InputError> {
    Ok(parse_request(text, current_dir)?.at(workdir))
}

/// The source of a `--mount` or `--sync` value as the user wrote it (`./nb` of
/// `./nb:/data:ro`): what comes before the first `:`.
pub fn source_text(text: &str) -> &str {
    text.split(':').next().unwrap_or(text)
}

/// SRC and DST of a `--mount` or `--sync` value (`parts`: split at `:`, options cut
/// off): the source resolved against `current_dir`, the destination as written (`None`:
/// under the workdir by the source's name, so the source needs one; `verb` says what
/// happens there, `mount` or `copy`). `bad` makes the error from what is wrong; the
/// destination's own checks are the caller's.
pub(crate) fn source_and_destination<'a>(
    parts: &[&'a str],
    current_dir: &Path,
    verb: &str,
    bad: impl Fn(String) -> InputError,
) -> Result<(PathBuf, Option<&'a str>), InputError> {
    let (source, target) = match parts {
        [source] => (*source, None),
        [source, target] => (*source, Some(*target)),
        _ => return Err(bad("too many `:` parts".to_string())),
    };
    if source.is_empty() {
        return Err(bad("the source is empty".to_string()));
    }
    let source = lexical(&current_dir.join(source));
    match target {
        Some("") => Err(bad("the destination after `:` is empty".to_string())),
        None if source.file_name().and_then(|name| name.to_str()).is_none() => Err(bad(format!(
            "the source has no name to {verb} under the workdir; give DST"
        ))),
        target => Ok((source, target)),
    }
}

/// Parses one `--mount` value against the current directory; the workdir comes later.
pub fn parse_request(text: &str, current_dir: &Path) -> Result<MountRequest, InputError> {
    let bad = |detail: String| {
        InputError::new(
            printable(&format!("`--mount {text}`: {detail}")),
            "write `--mount SRC[:DST][:ro]`, such as `--mount ./notebooks` or `--mount ./data:/data:ro`",
        )
    };
    // `source_text` is the first of these parts.
    let mut parts: Vec<&str> = text.split(':').collect();
    let mut read_only = false;
    if parts.len() > 1 {
        match *parts.last().expect("non-empty") {
            "ro" => {
                read_only = true;
                parts.pop();
            }
            "rw" => {
                parts.pop();
            }
            _ => {}
        }
    }
    // A third part with a `/` is a path: a `:` too many, not a misspelt option.
    if let [_, _, option] = parts.as_slice() {
        if !option.contains('/') {
            return Err(bad(format!(
                "`{option}` is not a mount option (`ro` or `rw`)"
            )));
        }
    }
    let (source, target) = source_and_destination(&parts, current_dir, "mount", bad)?;
    let target = match target {
        Some(target) => {
            if !valid_destination(target) {
                return Err(bad(format!(
                    "the destination `{target}` must be an absolute path inside the container"
                )));
            }
            if is_system_folder(target) {
                return Err(InputError::new(
                    printable(&format!(
                        "`--mount {text}`: the destination `{target}` is a system folder of the image"
                    )),
                    "mount under the workdir (the default) or a folder of its own, such as `--mount ./data:/data`",
                ));
            }
            Some(target.trim_end_matches('/').to_string())
        }
        None => None,
    };
    Ok(MountRequest {
        text: text.to_string(),
        source,
        target,
        read_only,
    })
}

/// Refuses a mount whose destination holds the image's home folder or workdir (`/home`
/// over `/home/tf`, `/mnt` over a workdir `/mnt/tf`): it would hide them, Docker would
/// create the missing workdir inside the host's folder as root, and the entrypoint could
/// not tell the image's files from the host's. Mounting at the folder itself is fine.
pub fn check_not_above(
    mount: &MountPlan,
    text: &str,
    home: &str,
    workdir: &str,
) -> Result<(), InputError> {
    let target = mount.target.trim_end_matches('/');
    let Some((what, path)) = hidden_folder(target, home, workdir) else {
        return Ok(());
    };
    Err(InputError::new(
        printable(&format!(
            "`--mount {text}`: the destination `{target}` would hide the image's {what} `{path}`"
        )),
        format!(
            "mount at `{path}` itself or beside it, such as `--mount {}:/data`",
            printable(text.split(':').next().unwrap_or(text))
        ),
    ))
}

/// The image's home folder or workdir that a mount (or volume) at `target` would hide,
/// being above it: `("workdir", "/mnt/tf")` for `/mnt`.
pub fn hidden_folder<'a>(
    target: &str,
    home: &'a str,
    workdir: &'a str,
) -> Option<(&'static str, &'a str)> {
    let target = target.trim_end_matches('/');
    [("home folder", home), ("workdir", workdir)]
        .into_iter()
        .map(|(what, path)| (what, path.trim_end_matches('/')))
        .find(|(_, path)| {
            path.strip_prefix(target)
                .is_some_and(|rest| rest.starts_with('/'))
        })
}

/// Whether `target` can be a path inside the container: absolute, without `..`, and
/// without `,` or a newline (which Docker's mount syntax and tfimg's labels use).
pub(crate) fn valid_destination(target: &str) -> bool {
    target.starts_with('/')
        && !target.split('/').any(|part| part == "..")
        && !target.contains([',', '\n'])
}

/// Folders of the image a mount would hide or break: the root, the system's programs,
/// libraries and configuration, the kernel's file systems (and anything under them), and
/// tfimg's venv and scripts.
pub(crate) fn is_system_folder(target: &str) -> bool {
    let parts: Vec<&str> = target
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    matches!(
        parts.as_slice(),
        [] | ["proc" | "sys" | "dev", ..]
            | ["usr" | "bin" | "sbin" | "etc" | "lib" | "lib32" | "lib64" | "libx32"]
            | ["opt", "venv" | "tfimg"]
    )
}

#[cfg(test)]
mod tests;
