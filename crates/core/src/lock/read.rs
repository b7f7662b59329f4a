//! Reading a lock file: the same YAML guards as specs (size, UTF-8, nesting, aliases, one
//! document), serde with unknown fields denied, then the values themselves: a lock's names
//! and versions end up in the Dockerfile and in pip's requirement files, so anything that
//! is not a plain package name, version or sha256 is refused with its place.

use crate::input::source::{PositionIndex, SpecError};
use crate::input::yaml::{self, location, FileKind, Problem, Step};

use crate::spec::locked::{AptPackage, Distribution, LockFile, FORMAT};

pub const LOCK: FileKind = FileKind {
    noun: "lock file",
    empty_hint: "make it again with `tfimg lock SPEC`",
    hint: "a lock file is written by `tfimg lock SPEC`: make it again rather than editing it",
};

/// The lock file `display` from its bytes; with `spec`, it must be that spec's.
pub fn parse_bytes(
    bytes: Vec<u8>,
    display: &str,
    spec: Option<&str>,
) -> Result<LockFile, SpecError> {
    let text =
        yaml::decode(bytes).map_err(|problem| problem.error(display, problem.place(), &LOCK))?;
    parse(&text, display, spec)
}

/// The lock file `display` from its text; with `spec`, it must be that spec's.
pub fn parse(text: &str, display: &str, spec: Option<&str>) -> Result<LockFile, SpecError> {
    let scan = yaml::scan(text);
    if text.trim().is_empty() || (scan.problem.is_none() && scan.empty) {
        return Err(SpecError::new(
            Some(location(display, (1, 1))),
            "the lock file is empty",
            LOCK.empty_hint,
        ));
    }
    if let Some(problem) = &scan.problem {
        let at = match problem {
            Problem::AliasBomb { path, .. } => path.first().map_or(problem.place(), Step::value_at),
            _ => problem.place(),
        };
        if *problem != Problem::TooLarge {
            if let Some(error) = yaml::earlier_error::<LockFile>(text, at) {
                return Err(serde_error(&error, text, &scan, display));
            }
        }
        return Err(problem.error(display, at, &LOCK));
    }
    let file: LockFile =
        serde_yaml::from_str(text).map_err(|error| serde_error(&error, text, &scan, display))?;
    let positions = PositionIndex::build(text);
    check_values(&file, &positions, display)?;
    let Some(spec) = spec else {
        return Ok(file);
    };
    if file.spec != spec {
        let at = positions.value("spec").unwrap_or((1, 1));
        return Err(SpecError::new(
            Some(location(display, at)),
            format!("the lock is for spec `{}`, not `{spec}`", file.spec),
            format!("a spec's lock is the file of the same name beside it: make it with `tfimg lock {spec}`"),
        ));
    }
    Ok(file)
}

fn serde_error(
    error: &serde_yaml::Error,
    text: &str,
    scan: &yaml::Scan,
    display: &str,
) -> SpecError {
    let explained = yaml::explain(error, text, scan);
    let hint = explained.hint.unwrap_or_else(|| LOCK.hint.to_string());
    SpecError::new(
        Some(location(display, explained.at)),
        explained.message,
        hint,
    )
}

/// The format version, then every name, version and hash.
fn check_values(
    file: &LockFile,
    positions: &PositionIndex,
    display: &str,
) -> Result<(), SpecError> {
    let at = |path: &str| Some(location(display, positions.value(path).unwrap_or((1, 1))));
    if file.lock != FORMAT {
        return Err(SpecError::new(
            at("lock"),
            format!(
                "lock format {} is not one this tfimg reads (it reads {FORMAT})",
                file.lock
            ),
            "make the lock again with `tfimg lock SPEC`, or use the tfimg that wrote it",
        ));
    }
    let groups = [
        ("apt.system", &file.apt.system),
        ("apt.variant", &file.apt.variant),
    ];
    for (path, packages) in groups {
        if let Some(message) = packages.iter().find_map(apt_problem) {
            return Err(SpecError::new(at(path), message, LOCK.hint));
        }
    }
    for (group, distributions) in file.pip.in_order() {
        let path = format!("pip.{group}");
        let hashed = group != "venv";
        if let Some(message) = distributions
            .iter()
            .find_map(|distribution| pip_problem(distribution, hashed))
        {
            return Err(SpecError::new(at(&path), message, LOCK.hint));
        }
    }
    Ok(())
}

fn apt_problem(package: &AptPackage) -> Option<String> {
    let name_ok = !package.name.is_empty()
        && package
            .name
            .starts_with(|c: char| c.is_ascii_alphanumeric())
        && package
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    if !name_ok {
        return Some(format!("`{}` is not a Debian package name", package.name));
    }
    let version_ok = !package.version.is_empty()
        && package
            .version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+~:-".contains(c));
    (!version_ok).then(|| {
        format!(
            "`{}` is not a Debian version (of `{}`)",
            package.version, package.name
        )
    })
}

fn pip_problem(distribution: &Distribution, hashed: bool) -> Option<String> {
    let plain = |text: &str, extra: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    let name = &distribution.name;
    if !plain(name, "._-") {
        return Some(format!("`{name}` is not a Python distribution name"));
    }
    if !plain(&distribution.version, ".+!_-") {
        return Some(format!(
            "`{}` is not a Python version (of `{name}`)",
            distribution.version
        ));
    }
    match &distribution.sha256 {
        Some(hash)
            if hash.len() != 64
                || !hash
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) =>
        {
            Some(format!(
                "the sha256 of `{name}` is not 64 lowercase hexadecimal digits"
            ))
        }
        None if hashed => Some(format!("`{name}` has no sha256")),
        _ => None,
    }
}
