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
mod tests {
    use super::*;

    #[test]
    fn volumes_are_named_and_mounted_read_write_unless_ro() {
        let volume = parse("data:/tf/data/").unwrap();
        assert_eq!(
            (
                volume.name.as_str(),
                volume.target.as_str(),
                volume.read_only
            ),
            ("data", "/tf/data", false)
        );
        assert_eq!(volume.labels["io.tfimg.volume"], "data");
        assert!(parse("my.data-1:/data:ro").unwrap().read_only);
        assert!(!parse("my_data:/data:rw").unwrap().read_only);
    }

    #[test]
    fn paths_bad_names_and_bad_destinations_are_refused_by_flag() {
        let message = |text: &str| parse(text).unwrap_err().message;
        let path = parse("./data:/d").unwrap_err();
        assert_eq!(
            path.message,
            "`--volume ./data:/d`: `./data` is a path; volumes are named (`--volume data:/tf/data`)"
        );
        assert_eq!(
            path.hint,
            "copy a local folder in with `--sync ./data`, or name a volume Docker keeps for you"
        );
        assert!(message("/srv/data:/d").contains("is a path"));
        assert!(message("~/data:/d").contains("is a path"));
        assert_eq!(
            message("d:/x"),
            "`--volume d:/x`: `d` is not a valid volume name"
        );
        assert_eq!(
            message("a b:/x"),
            "`--volume a b:/x`: `a b` is not a valid volume name"
        );
        assert_eq!(
            message("data"),
            "`--volume data`: the destination is missing"
        );
        assert_eq!(
            message("data:/x:bogus"),
            "`--volume data:/x:bogus`: `bogus` is not a volume option (`ro` or `rw`)"
        );
        assert_eq!(
            message("data:/x:ro:more"),
            "`--volume data:/x:ro:more`: too many `:` parts"
        );
        assert_eq!(
            message("data:relative"),
            "`--volume data:relative`: the destination `relative` must be an absolute path inside the container"
        );
        assert_eq!(
            message("data:/usr"),
            "`--volume data:/usr`: the destination `/usr` is a system folder of the image"
        );
        assert_eq!(message(":/x"), "`--volume :/x`: the volume name is empty");
        assert_eq!(
            message("data:"),
            "`--volume data:`: the destination after `:` is empty"
        );
    }
}
