//! `--volume NAME:DST[:ro]`: a named Docker volume that keeps data between runs (and on a
//! remote engine, stays on that host). Docker creates a missing one when the container is
//! created; tfimg never removes one. Pure.

use std::collections::BTreeMap;

use super::cache::VolumePlan;
use super::sync::check_destination;
use crate::input::source::printable;
use crate::input::InputError;
use crate::labels;
use crate::spec::syntax::valid_docker_name;

/// Parses one `--volume` value.
pub fn parse(text: &str) -> Result<VolumePlan, InputError> {
    let bad = |detail: String| {
        InputError::new(
            printable(&format!("`--volume {text}`: {detail}")),
            "write `--volume NAME:DST[:ro]`, such as `--volume data:/tf/data`",
        )
    };
    let mut parts: Vec<&str> = text.split(':').collect();
    let mut read_only = false;
    if parts.len() == 3 {
        match parts[2] {
            "ro" => read_only = true,
            "rw" => {}
            option => {
                return Err(bad(format!(
                    "`{option}` is not a volume option (`ro` or `rw`)"
                )))
            }
        }
        parts.pop();
    }
    let (name, target) = match parts.as_slice() {
        [name, target] => (*name, *target),
        [_] => return Err(bad("the destination is missing".to_string())),
        _ => return Err(bad("too many `:` parts".to_string())),
    };
    check_name(text, name)?;
    if target.is_empty() {
        return Err(bad("the destination after `:` is empty".to_string()));
    }
    let target = check_destination(text, target, "--volume")?;
    Ok(VolumePlan {
        name: name.to_string(),
        target,
        read_only,
        labels: BTreeMap::from([(labels::VOLUME.to_string(), name.to_string())]),
    })
}

/// A volume name as Docker takes it (`[a-zA-Z0-9][a-zA-Z0-9_.-]+`); a path is the usual
/// mistake (a bind mount's syntax), so it gets its own message.
fn check_name(text: &str, name: &str) -> Result<(), InputError> {
    if name.is_empty() {
        return Err(InputError::new(
            printable(&format!("`--volume {text}`: the volume name is empty")).into_owned(),
            "write `--volume NAME:DST[:ro]`, such as `--volume data:/tf/data`",
        ));
    }
    if name.contains('/') || name.starts_with(['.', '~']) {
        return Err(InputError::new(
            printable(&format!(
                "`--volume {text}`: `{name}` is a path; volumes are named (`--volume data:/tf/data`)"
            ))
            .into_owned(),
            format!(
                "copy a local folder in with `--sync {}`, or name a volume Docker keeps for you",
                printable(name)
            ),
        ));
    }
    if name.len() >= 2 && valid_docker_name(name) {
        return Ok(());
    }
    Err(InputError::new(
        printable(&format!(
            "`--volume {text}`: `{name}` is not a valid volume name"
        ))
        .into_owned(),
        "use at least two letters, digits, `_`, `.` and `-`, starting with a letter or digit",
    ))
}

#[cfg(test)]
mod tests;
