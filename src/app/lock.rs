//! Locks on this machine: where a spec's lock lives and reading it (`SPEC.lock` beside its
//! file, or the built-in's embedded one), and `tfimg lock`'s story: make sure the base is
//! here, run the rendered resolution in a throw-away container of it (with the network
//! settings builds use), make the lock from what it prints, and write it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::app::session::Session;
use crate::app::Interrupted;
use crate::engine::prelude::{Containers, Images};
use crate::engine::OneOff;
use crate::host::prelude::{Clock, FileWrites, Files, Secrets};
use crate::input::{InputError, SpecError};
use crate::labels;
pub use crate::lock::builtin;
use crate::lock::{self, Inherited, LockFile, Locked};
use crate::render::lock_script;
use crate::render::network::Network;
use crate::spec::locked::Base;
use crate::spec::ResolvedSpec;

/// Installing the system packages and asking PyPI for a few hundred files' metadata.
const RESOLVE_DEADLINE: Duration = Duration::from_secs(1200);

/// Where the lock of `resolved` lives: beside its spec file; `None` for a built-in (its
/// lock is embedded).
pub fn lock_path(resolved: &ResolvedSpec) -> Option<PathBuf> {
    if resolved.source == "built-in" {
        return None;
    }
    Some(Path::new(&resolved.source).with_extension("lock"))
}

/// The lock `resolved` builds from: its file when there is one, else a built-in's
/// embedded lock; `None` when it has none.
pub fn find(host: &impl Files, resolved: &ResolvedSpec) -> Result<Option<Locked>, SpecError> {
    match lock_path(resolved) {
        Some(path) => read(host, &path, &resolved.name),
        None => Ok(builtin(&resolved.name).transpose()?),
    }
}

/// The lock file at `path` of spec `name`; `None` when there is no such file.
pub fn read(host: &impl Files, path: &Path, name: &str) -> Result<Option<Locked>, SpecError> {
    let display = path.display().to_string();
    match host.read_file(path) {
        Ok(bytes) => lock::load(bytes, &display, name).map(Some),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(SpecError::new(
            None,
            format!("cannot read `{display}`: {error}"),
            "check the file's permissions",
        )),
    }
}

/// The first lock that may give `resolved` its shared layers (`shares_layers`), from
/// `candidates`. So the variants of one TensorFlow in a project, and specs extending a
/// built-in, keep sharing the TensorFlow layer (and the ones below it) instead of each
/// resolving its own.
pub fn shared_lock(host: &impl Files, resolved: &ResolvedSpec, path: &Path) -> Option<Locked> {
    let inputs = crate::lock::check::inputs_of(resolved);
    candidates(host, resolved, Some(path))
        .find(|candidate| crate::lock::check::shares_layers(&inputs, &candidate.file.inputs))
}

/// For a spec without its own lock: the lock it inherits its layers from
/// (`lock::check::inherit`), from `candidates`; `None` when none shares them.
pub fn inherited(host: &impl Files, resolved: &ResolvedSpec) -> Option<Inherited> {
    let inputs = crate::lock::check::inputs_of(resolved);
    let path = lock_path(resolved);
    let found = candidates(host, resolved, path.as_deref())
        .find_map(|candidate| crate::lock::check::inherit(&inputs, candidate));
    found
}

/// The locks `resolved` may share layers with, nearest first: its ancestors' (`NAME.lock`
/// beside `path`, or the built-in's), then the other `*.lock` files beside `path` in name
/// order, then every built-in's. Unreadable ones are skipped.
fn candidates<'a>(
    host: &'a impl Files,
    resolved: &'a ResolvedSpec,
    path: Option<&'a Path>,
) -> impl Iterator<Item = Locked> + 'a {
    let folder = path.map(|path| match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_path_buf(),
        _ => PathBuf::from("."),
    });
    let own = path.and_then(Path::file_name);
    let from_file = move |candidate: PathBuf| {
        if own.is_some() && candidate.file_name() == own {
            return None;
        }
        let bytes = host.read_file(&candidate).ok()?;
        crate::lock::load_any(bytes, &candidate.display().to_string(), None).ok()
    };
    let ancestors = {
        let folder = folder.clone();
        resolved.extends.iter().rev().filter_map(move |name| {
            let beside = folder
                .as_ref()
                .and_then(|folder| from_file(folder.join(format!("{name}.lock"))));
            beside.or_else(|| builtin(name)?.ok())
        })
    };
    let siblings = folder
        .map(|folder| host.files_with_extension(&folder, "lock"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(from_file);
    let builtins = crate::spec::load::builtin_lock_names().filter_map(|name| builtin(name)?.ok());
    ancestors.chain(siblings).chain(builtins)
}

/// `resolved` resolved into its lock, in a throw-away container of its base image; the
/// layers it shares with `shared` are taken from that lock.
pub async fn resolve(
    session: Session<'_, impl Containers + Images, impl Secrets + Clock>,
    resolved: &ResolvedSpec,
    network: &Network,
    shared: Option<&Locked>,
) -> anyhow::Result<LockFile> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let base_id =
        super::base::ensure_base(engine, &resolved.base, network, false, false, reporter).await?;
    reporter.status(&format!(
        "resolving `{}` on `{}`: apt packages, then pip's versions and hashes{}",
        resolved.name,
        resolved.base,
        shared
            .map(|shared| format!(" (the layers up to TensorFlow's from `{}`)", shared.display))
            .unwrap_or_default()
    ));
    let shared = shared.map(|shared| &shared.file);
    let mut env: Vec<String> = network
        .proxy_build_args
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    if let Some(pem) = &network.render.ca_certificates {
        env.extend(ca_parts(&String::from_utf8_lossy(pem)));
    }
    let marker = format!("{}-{}", resolved.name, host.random_hex(6)?);
    let one_off = OneOff {
        image: base_id.clone(),
        command: vec![
            "sh".to_string(),
            "-c".to_string(),
            lock_script::script(resolved, &network.render, shared),
        ],
        env,
        labels: HashMap::from([(labels::LOCK_RESOLVE.to_string(), marker.clone())]),
        network_disabled: false,
        ..OneOff::default()
    };
    let finished = tokio::select! {
        finished = engine.run_once(&one_off, RESOLVE_DEADLINE) => finished?,
        _ = host.interrupted() => {
            let label = labels::lock_resolve_filter(&marker);
            for container in engine.containers_with_label(&label).await.unwrap_or_default() {
                let _ = engine.remove_container(&container.id, true).await;
            }
            return Err(Interrupted {
                what: format!("the resolution of `{}` was stopped; no lock was written", resolved.name),
            }
            .into());
        }
    };
    let base = Base {
        reference: resolved.base.clone(),
        id: base_id,
    };
    let made = if finished.exit_code == Some(0) {
        lock::resolve::lock_from_output(resolved, base, &finished.output, shared)
    } else {
        Err(format!(
            "the resolution exited with {}",
            finished.exit_text()
        ))
    };
    made.map_err(|why| {
        let tail: Vec<&str> = finished.output.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        InputError::new(
            format!(
                "cannot lock `{}`: {why}:\n  | {}",
                resolved.name,
                tail.join("\n  | ")
            ),
            "the resolution's output is above: a package pip or apt cannot find, or a network that needs `--ca-cert PATH`",
        )
        .into()
    })
}

/// The CA as variables of at most ~100 KiB each, cut between lines (the kernel refuses
/// one variable over 128 KiB, and a system bundle is bigger).
fn ca_parts(pem: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut part = String::new();
    for line in pem.trim_end().lines() {
        if part.len() + line.len() > 100_000 {
            parts.push(std::mem::take(&mut part));
        }
        if !part.is_empty() {
            part.push('\n');
        }
        part.push_str(line);
    }
    parts.push(part);
    parts
        .iter()
        .enumerate()
        .map(|(index, part)| format!("{}{index}={part}", labels::LOCK_CA_VARIABLE))
        .collect()
}

/// Writes `lock` to `path` (a temporary file, synced, renamed over the old one); its text.
pub fn write(host: &impl FileWrites, path: &Path, lock: &LockFile) -> anyhow::Result<String> {
    let text = lock::to_text(lock);
    // What tfimg writes it must read back: the same checks as any lock.
    lock::read::parse(&text, &path.display().to_string(), Some(&lock.spec))
        .map_err(|error| anyhow::anyhow!("tfimg made a lock it cannot read: {error}"))?;
    host.write_file(path, text.as_bytes()).map_err(|error| {
        InputError::new(
            format!("cannot write `{}`: {error}", path.display()),
            "check that the folder exists and is writable, or give another with `-o FILE`",
        )
    })?;
    Ok(text)
}

/// Where `tfimg lock` writes the lock of `resolved`: `output` when given, else beside its
/// file; a built-in without `-o` has nowhere to put it.
pub fn destination(resolved: &ResolvedSpec, output: Option<&Path>) -> Result<PathBuf, InputError> {
    output
        .map(Path::to_path_buf)
        .or_else(|| lock_path(resolved))
        .ok_or_else(|| no_file(resolved))
}

/// `tfimg lock`'s story: `resolved` resolved (sharing the layers of a lock beside it unless
/// `fresh`) and written to `path`; the lock made.
pub async fn make(
    session: Session<'_, impl Containers + Images, impl Secrets + Files + Clock + FileWrites>,
    resolved: &ResolvedSpec,
    network: &Network,
    path: &Path,
    fresh: bool,
) -> anyhow::Result<LockFile> {
    let Session { host, .. } = session;
    let shared = match fresh {
        true => None,
        false => shared_lock(host, resolved, path),
    };
    let made = resolve(session, resolved, network, shared.as_ref()).await?;
    write(host, path, &made)?;
    Ok(made)
}

/// What `tfimg lock` says once the lock is written.
pub fn locked_line(resolved: &ResolvedSpec, made: &LockFile, elapsed: Duration) -> String {
    let pip: usize = made
        .pip
        .in_order()
        .iter()
        .map(|(_, group)| group.len())
        .sum();
    format!(
        "locked `{}` in {:.0} s: {} apt packages, {} pip distributions",
        resolved.name,
        elapsed.as_secs_f64(),
        made.apt.system.len() + made.apt.variant.len(),
        pip
    )
}

/// `tfimg lock --check`: the lock at `output` (else beside the spec's file, else a
/// built-in's embedded one) when it fits `resolved`; an error naming what is missing or
/// each difference.
pub fn check(
    host: &impl Files,
    resolved: &ResolvedSpec,
    output: Option<&Path>,
) -> anyhow::Result<Locked> {
    let locked = match output
        .map(Path::to_path_buf)
        .or_else(|| lock_path(resolved))
    {
        Some(path) => read(host, &path, &resolved.name)?.ok_or_else(|| {
            InputError::new(
                format!(
                    "`{}` has no lock: `{}` does not exist",
                    resolved.name,
                    path.display()
                ),
                format!("make it with `tfimg lock {}`", lock_argument(resolved)),
            )
        })?,
        None => match builtin(&resolved.name) {
            Some(locked) => locked?,
            None => return Err(no_file(resolved).into()),
        },
    };
    if let Some(error) = disagreement(resolved, &locked) {
        return Err(error.into());
    }
    Ok(locked)
}

/// A built-in has no file to put a lock beside.
fn no_file(resolved: &ResolvedSpec) -> InputError {
    let name = &resolved.name;
    InputError::new(
        format!("`{name}` is a built-in spec: it has no file to put a lock beside"),
        format!(
            "to lock your own copy, write `images/{name}.yaml` with `extends: builtin:{name}` and run `tfimg lock {name}`; or give the lock's path with `-o FILE`"
        ),
    )
}

/// The error of a lock that does not fit its spec any more: each difference, and the fix.
pub fn disagreement(resolved: &ResolvedSpec, locked: &Locked) -> Option<InputError> {
    let differences = lock::differences(resolved, &locked.file);
    if differences.is_empty() {
        return None;
    }
    Some(InputError::new(
        format!(
            "`{}` does not fit spec `{}` any more:\n  - {}",
            locked.display,
            resolved.name,
            differences.join("\n  - ")
        ),
        format!(
            "make the lock again with `tfimg lock {}`",
            lock_argument(resolved)
        ),
    ))
}

/// How a user names `resolved` to `tfimg lock`.
fn lock_argument(resolved: &ResolvedSpec) -> String {
    match lock_path(resolved) {
        Some(_) if resolved.source.starts_with("images/") => resolved.name.clone(),
        Some(_) => resolved.source.clone(),
        None => format!("{} -o images/{}.lock", resolved.name, resolved.name),
    }
}

#[cfg(test)]
mod tests;
