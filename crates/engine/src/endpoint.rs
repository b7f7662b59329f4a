//! Which Docker Engine a command talks to, decided as the docker CLI decides it
//! (`resolveContextName` in docker/cli): `--context NAME`, else `--host URL`, else
//! `DOCKER_HOST`, else `DOCKER_CONTEXT`, else the `currentContext` of the Docker config
//! file, else the local socket; `--host` with `--context` is refused. A named context is
//! its `meta.json`'s `Endpoints.docker.Host`, in a folder named by the sha256 of the name.
//!
//! Pure: the caller reads the environment and the files and hands them in (`lookup`), so
//! the precedence is table-tested without a machine. `docker_config` reads the files.

pub mod docker_config;

use sha2::{Digest, Sha256};

use tfimg_core::input::InputError;

/// The local socket, when nothing names another engine.
pub const DEFAULT_URL: &str = "unix:///var/run/docker.sock";

/// How tfimg reaches a daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// The socket's path.
    Unix(String),
    /// `tcp://host:port` (or `http://`), as given.
    Tcp(String),
    Ssh(SshTarget),
}

/// `ssh://[user@]host[:port][/socket]`: what `ssh` is told to reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// The daemon's socket on that host, when not the remote docker CLI's default.
    pub socket: Option<String>,
}

/// What chose the endpoint (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    HostFlag,
    ContextFlag(String),
    DockerHost,
    DockerContext(String),
    CurrentContext(String),
    Default,
}

impl Origin {
    /// The Docker context that chose the endpoint, if one did.
    pub fn context(&self) -> Option<&str> {
        match self {
            Origin::ContextFlag(name)
            | Origin::DockerContext(name)
            | Origin::CurrentContext(name) => Some(name),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub endpoint: Endpoint,
    /// The URL as the user wrote it (the context's `Host`, `DOCKER_HOST`, ...).
    pub url: String,
    pub origin: Origin,
}

/// What the user set: flags, variables (empty counts as unset, as tfimg always did for
/// `DOCKER_HOST`) and the config file's `currentContext`.
#[derive(Debug, Default, Clone, Copy)]
pub struct EndpointInputs<'a> {
    pub host_flag: Option<&'a str>,
    pub context_flag: Option<&'a str>,
    pub docker_host: Option<&'a str>,
    pub docker_context: Option<&'a str>,
    pub current_context: Option<&'a str>,
    /// Where `current_context` was read (`~/.docker/config.json`), for messages.
    pub config_file: &'a str,
}

/// What the Docker config folder says about one context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextLookup {
    /// Its `Endpoints.docker.Host`.
    Host(String),
    NoDockerEndpoint,
    /// TLS material is stored for its Docker endpoint.
    Tls,
    Missing,
    /// Its `meta.json` cannot be read or parsed: why.
    Unreadable(String),
}

/// Who gave a URL, for messages (a password in it is never shown).
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    HostFlag,
    DockerHost,
    Context(&'a str),
}

const URL_HINT: &str =
    "write it as ssh://[user@]host[:port], tcp://host:port or unix:///path/to/docker.sock";

/// `--host` and `--context` together: bad input before anything else is looked at.
pub fn check_flags(host_flag: Option<&str>, context_flag: Option<&str>) -> Result<(), InputError> {
    if host_flag.is_some() && context_flag.is_some() {
        return Err(InputError::new(
            "`--host` and `--context` were both given",
            "keep one: --host names an endpoint, --context a Docker context",
        ));
    }
    Ok(())
}

/// The endpoint the inputs choose; `lookup` reads a named context.
pub fn resolve(
    inputs: &EndpointInputs<'_>,
    lookup: &mut dyn FnMut(&str) -> ContextLookup,
) -> Result<Resolved, InputError> {
    check_flags(inputs.host_flag, inputs.context_flag)?;
    if let Some(name) = inputs.context_flag {
        return from_context(inputs, name, Origin::ContextFlag(name.to_string()), lookup);
    }
    if let Some(url) = inputs.host_flag {
        return direct(url, Source::HostFlag, Origin::HostFlag);
    }
    if let Some(url) = set(inputs.docker_host) {
        return direct(url, Source::DockerHost, Origin::DockerHost);
    }
    if let Some(name) = set(inputs.docker_context) {
        return from_context(
            inputs,
            name,
            Origin::DockerContext(name.to_string()),
            lookup,
        );
    }
    if let Some(name) = set(inputs.current_context) {
        return from_context(
            inputs,
            name,
            Origin::CurrentContext(name.to_string()),
            lookup,
        );
    }
    default_endpoint(inputs)
}

/// A variable's value; empty counts as unset.
fn set(value: Option<&str>) -> Option<&str> {
    value.filter(|value| !value.is_empty())
}

fn direct(url: &str, source: Source<'_>, origin: Origin) -> Result<Resolved, InputError> {
    Ok(Resolved {
        endpoint: parse_endpoint(url, source)?,
        url: url.to_string(),
        origin,
    })
}

/// The `default` context: `DOCKER_HOST`, else the local socket.
fn default_endpoint(inputs: &EndpointInputs<'_>) -> Result<Resolved, InputError> {
    match set(inputs.docker_host) {
        Some(url) => direct(url, Source::DockerHost, Origin::DockerHost),
        None => Ok(Resolved {
            endpoint: Endpoint::Unix(DEFAULT_URL["unix://".len()..].to_string()),
            url: DEFAULT_URL.to_string(),
            origin: Origin::Default,
        }),
    }
}

fn from_context(
    inputs: &EndpointInputs<'_>,
    name: &str,
    origin: Origin,
    lookup: &mut dyn FnMut(&str) -> ContextLookup,
) -> Result<Resolved, InputError> {
    if name == "default" {
        return default_endpoint(inputs);
    }
    let named = match &origin {
        Origin::ContextFlag(_) => format!("the Docker context `{name}` (`--context`)"),
        Origin::DockerContext(_) => format!("the Docker context `{name}` (`DOCKER_CONTEXT`)"),
        _ => format!(
            "the current Docker context `{name}` (in `{}`)",
            inputs.config_file
        ),
    };
    let inspect = format!(
        "`docker context inspect {name}` shows it; `docker context update {name} --docker host=ssh://user@host` sets its endpoint"
    );
    match lookup(name) {
        ContextLookup::Host(url) => Ok(Resolved {
            endpoint: parse_endpoint(&url, Source::Context(name))?,
            url,
            origin,
        }),
        ContextLookup::Missing => Err(missing_context(inputs, name, &origin)),
        ContextLookup::NoDockerEndpoint => Err(InputError::new(
            format!("{named} has no Docker endpoint"),
            inspect,
        )),
        ContextLookup::Tls => Err(InputError::new(
            format!("{named} uses TLS, which tfimg does not support yet"),
            "use an ssh:// context or endpoint (`docker context create NAME --docker host=ssh://user@host`)",
        )),
        ContextLookup::Unreadable(reason) => Err(InputError::new(
            format!("{named} cannot be read: {reason}"),
            inspect,
        )),
    }
}

fn missing_context(inputs: &EndpointInputs<'_>, name: &str, origin: &Origin) -> InputError {
    let create = format!("`docker context create {name} --docker host=ssh://user@host`");
    match origin {
        Origin::CurrentContext(_) => InputError::new(
            format!(
                "the current Docker context `{name}` (in `{}`) does not exist",
                inputs.config_file
            ),
            format!("`docker context use default`, or create it: {create}"),
        ),
        Origin::DockerContext(_) => InputError::new(
            format!("no Docker context named `{name}` (`DOCKER_CONTEXT`)"),
            format!("`docker context ls` lists them; {create} makes one"),
        ),
        _ => InputError::new(
            format!("no Docker context named `{name}` (`--context`)"),
            format!("`docker context ls` lists them; {create} makes one"),
        ),
    }
}

/// An endpoint URL: `unix:///path`, `tcp://host:port` (`http://`), `ssh://[user@]host[:port][/socket]`.
pub fn parse_endpoint(text: &str, source: Source<'_>) -> Result<Endpoint, InputError> {
    let bad = |why: &str| {
        InputError::new(
            format!("{}: {why}", given_by(text, source)),
            URL_HINT.to_string(),
        )
    };
    let scheme = text.split_once("://").map(|(scheme, _)| scheme);
    match scheme {
        Some("unix") => {
            let path = &text["unix://".len()..];
            if !path.starts_with('/') || path.len() < 2 {
                return Err(bad("the socket path must be absolute"));
            }
            Ok(Endpoint::Unix(path.to_string()))
        }
        Some("tcp" | "http") => {
            let url = url::Url::parse(text).map_err(|error| bad(&format!("not a URL ({error})")))?;
            if url.host_str().is_none_or(str::is_empty) {
                return Err(bad("no host in the URL"));
            }
            Ok(Endpoint::Tcp(text.to_string()))
        }
        Some("ssh") => parse_ssh(text, source).map(Endpoint::Ssh),
        _ => Err(InputError::new(
            format!(
                "{}: tfimg speaks unix://, tcp:// and ssh://",
                given_by(text, source)
            ),
            "ssh://user@host reaches a remote Docker through ssh; unix:///var/run/docker.sock is the local one",
        )),
    }
}

fn parse_ssh(text: &str, source: Source<'_>) -> Result<SshTarget, InputError> {
    let bad = |why: &str| {
        InputError::new(
            format!("{}: {why}", given_by(text, source)),
            "write it as ssh://[user@]host[:port]".to_string(),
        )
    };
    let url = url::Url::parse(text).map_err(|error| bad(&format!("not a URL ({error})")))?;
    let host = match url.host() {
        Some(url::Host::Ipv6(address)) => address.to_string(),
        Some(host) => host.to_string(),
        None => String::new(),
    };
    if host.is_empty() {
        return Err(bad("no host in the URL"));
    }
    let user = decoded(url.username());
    if url.password().is_some() {
        let login = user
            .clone()
            .map_or(host.clone(), |user| format!("{user}@{host}"));
        return Err(InputError::new(
            format!(
                "{}: a password in the URL is not accepted",
                given_by(text, source)
            ),
            format!("use a key and an agent (`ssh-copy-id {login}`); tfimg never sends passwords"),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("an ssh URL takes no query or fragment"));
    }
    if host.starts_with('-') || user.as_deref().is_some_and(|user| user.starts_with('-')) {
        return Err(bad("a host or user may not start with `-`"));
    }
    let path = decoded(url.path()).filter(|path| path != "/");
    // `%00` and other control characters decode into words ssh could never be given.
    let words = [Some(host.as_str()), user.as_deref(), path.as_deref()];
    if words
        .iter()
        .flatten()
        .any(|word| word.chars().any(char::is_control))
    {
        return Err(bad(
            "a user, host or path may not hold control characters (`%00`, `%0a`)",
        ));
    }
    Ok(SshTarget {
        user,
        host,
        port: url.port(),
        socket: path,
    })
}

fn decoded(text: &str) -> Option<String> {
    let text = percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned();
    (!text.is_empty()).then_some(text)
}

/// `` `--host URL` ``, `` `DOCKER_HOST=URL` `` or `` the Docker context `x` (`URL`) ``, a
/// password in the URL masked.
fn given_by(text: &str, source: Source<'_>) -> String {
    let shown = masked(text);
    match source {
        Source::HostFlag => format!("`--host {shown}`"),
        Source::DockerHost => format!("`DOCKER_HOST={shown}`"),
        Source::Context(name) => format!("the Docker context `{name}` (`{shown}`)"),
    }
}

/// `ssh://me:secret@h` → `ssh://me:***@h`.
fn masked(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((login, host)) if login.contains(':') => {
            let user = login.split_once(':').map_or(login, |(user, _)| user);
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => text.to_string(),
    }
}

/// The folder of a context under `contexts/meta/`: the sha256 of its name, in hex (what
/// docker/cli's `contextdirOf` computes).
pub fn context_folder(name: &str) -> String {
    Sha256::digest(name.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A context's `meta.json`: `Endpoints.docker.Host`. Object keys are matched without
/// regard to case, as Go's encoding/json does.
pub fn parse_context_meta(json: &str) -> ContextLookup {
    let value: serde_json::Value = match serde_json::from_str(json) {
        Ok(value) => value,
        Err(error) => return ContextLookup::Unreadable(format!("`meta.json`: {error}")),
    };
    let host = field(&value, "Endpoints")
        .and_then(|endpoints| endpoints.get("docker"))
        .and_then(|docker| field(docker, "Host"))
        .and_then(serde_json::Value::as_str)
        .filter(|host| !host.is_empty());
    match host {
        Some(host) => ContextLookup::Host(host.to_string()),
        None => ContextLookup::NoDockerEndpoint,
    }
}

/// The `currentContext` of a Docker `config.json` (empty or absent: none); an unparsable
/// file is an error naming why.
pub fn parse_current_context(json: &str) -> Result<Option<String>, String> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|error| error.to_string())?;
    Ok(field(&value, "currentContext")
        .and_then(serde_json::Value::as_str)
        .filter(|name| !name.is_empty())
        .map(str::to_string))
}

fn field<'a>(value: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    value
        .as_object()?
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(key))
        .map(|(_, value)| value)
}

/// Whether the engine at `url` runs on this machine as far as its GPUs go: a `unix://`
/// socket. Any other (ssh, tcp, even tcp on loopback, which may be a tunnel to another
/// host) is asked about its own host.
pub fn on_this_machine(url: &str) -> bool {
    url.starts_with("unix://")
}

impl Endpoint {
    /// Whether the daemon runs on another machine: ssh always; tcp unless on loopback.
    pub fn is_remote(&self) -> bool {
        match self {
            Endpoint::Unix(_) => false,
            Endpoint::Ssh(_) => true,
            Endpoint::Tcp(url) => !url::Url::parse(url)
                .ok()
                .and_then(|url| url.host_str().map(str::to_string))
                .is_some_and(|host| host == "localhost" || host == "127.0.0.1" || host == "[::1]"),
        }
    }
}

#[cfg(test)]
mod tests;
