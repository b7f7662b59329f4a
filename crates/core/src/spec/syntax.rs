//! The small grammars a spec's strings must follow before they reach a Dockerfile or a
//! shell: identifiers, Debian package names, pip requirements, image references. Pure.

pub(crate) fn valid_identifier(name: &str, environment: bool) -> bool {
    let mut chars = name.chars();
    let first_ok = match chars.next() {
        Some(c) if environment => c.is_ascii_alphabetic() || c == '_',
        Some(c) => c.is_ascii_lowercase(),
        None => false,
    };
    first_ok
        && chars.all(|c| {
            if environment {
                c.is_ascii_alphanumeric() || c == '_'
            } else {
                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
            }
        })
}

/// Debian package names (policy 5.6.1), optionally `=version`; nothing a shell would read.
pub(crate) fn valid_apt_package(package: &str) -> bool {
    let (name, version) = match package.split_once('=') {
        Some((name, version)) => (name, Some(version)),
        None => (package, None),
    };
    let name_ok = name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '-' | '.'));
    let version_ok = version.is_none_or(|version| {
        !version.is_empty()
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '~' | ':'))
    });
    name_ok && version_ok
}

/// The normalised project name of a simple requirement (`Pandas_Foo[x]>=2` →
/// `pandas-foo`), or `None` when it has characters tfimg does not pass to a shell.
pub fn requirement_name(requirement: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || " ._-[],<>=!~*;:'\"()".contains(c);
    if requirement.is_empty() || !requirement.chars().all(allowed) || requirement.contains('\'') {
        return None;
    }
    let name: String = requirement
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .collect();
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
    }
    Some(name.to_ascii_lowercase().replace(['_', '.'], "-"))
}

/// Whether `c` may stand in the name of a Docker container or volume: a letter, a
/// digit, `_`, `.` or `-`.
pub fn docker_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Whether Docker takes `name` for a container or a volume (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`):
/// `--name`, `--volume`, a model's name (it names the server's container too).
pub fn valid_docker_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphanumeric()) && name.chars().all(docker_name_char)
}

/// A loose check of the Docker reference grammar: lowercase repository path, optional
/// registry host with port, tag and digest.
/// A registry host (and port) as `--registry` and `--registry-mirror` take it, trailing
/// `/` already cut: `127.0.0.1:5000`, `registry.example.com`.
pub fn valid_registry_host(host: &str) -> bool {
    !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
}

pub fn valid_image_reference(reference: &str) -> bool {
    if reference.is_empty()
        || reference.len() > 255
        || reference
            .chars()
            .any(|c| c.is_control() || c.is_whitespace())
    {
        return false;
    }
    let (name, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (reference, None),
    };
    if let Some(digest) = digest {
        let Some((algorithm, hex)) = digest.split_once(':') else {
            return false;
        };
        let algorithm_ok = !algorithm.is_empty()
            && algorithm.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '_' | '-')
            });
        if !algorithm_ok || hex.len() < 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
    }
    let (path, tag) = match name.rsplit_once(':') {
        Some((path, tag)) if !tag.contains('/') => (path, Some(tag)),
        _ => (name, None),
    };
    let tag_ok = tag.is_none_or(|tag| {
        !tag.is_empty()
            && tag.len() <= 128
            && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    });
    let mut components = path.split('/').peekable();
    let mut first = true;
    let mut path_ok = !path.is_empty();
    while let Some(component) = components.next() {
        let is_host = first
            && components.peek().is_some()
            && (component.contains(['.', ':']) || component == "localhost");
        let ok = if is_host {
            let (host, port) = match component.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (component, None),
            };
            !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
                && port
                    .is_none_or(|port| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
        } else {
            !component.is_empty()
                && component.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && component.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && component.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
                })
        };
        path_ok &= ok;
        first = false;
    }
    path_ok && tag_ok
}

/// `registry:5000/a/b:tag` → (`registry:5000/a/b`, `tag`); no tag means `latest`.
pub fn split_reference(reference: &str) -> (&str, &str) {
    if reference.contains('@') {
        // A digest reference names one image; there is no tag to split off.
        return (reference, "");
    }
    match reference.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => (repository, tag),
        _ => (reference, "latest"),
    }
}

/// Rewrites a Docker Hub reference to go through `mirror` (`debian:11` →
/// `mirror:5000/library/debian:11`); references to other registries stay as they are.
pub fn through_registry_mirror(reference: &str, mirror: &str) -> String {
    let first = reference.split('/').next().unwrap_or(reference);
    let has_registry = reference.contains('/')
        && (first.contains('.') || first.contains(':') || first == "localhost");
    if has_registry {
        let rest = &reference[first.len() + 1..];
        return if first == "docker.io"
            || first == "registry-1.docker.io"
            || first == "index.docker.io"
        {
            through_registry_mirror(rest, mirror)
        } else {
            reference.to_string()
        };
    }
    if reference.contains('/') {
        format!("{mirror}/{reference}")
    } else {
        format!("{mirror}/library/{reference}")
    }
}

#[cfg(test)]
mod tests;
