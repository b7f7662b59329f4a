//! Settings for restricted networks, from three places, strongest first: command-line
//! flags, environment variables (`TFIMG_CA_CERT`, `TFIMG_PIP_INDEX_URL`,
//! `TFIMG_APT_MIRROR`, `TFIMG_REGISTRY_MIRROR`, and the usual `HTTP_PROXY`, `HTTPS_PROXY`,
//! `NO_PROXY`), and the config file. Pure: the caller reads the config file, the CA file
//! and the environment (`app::settings`) and hands them in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::NetworkOptions;
use crate::input::InputError;
use crate::labels;

/// Everything network-related a build uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Network {
    /// Rendered into the image (and its build key).
    pub render: NetworkOptions,
    /// Docker Hub references are pulled through this registry host instead.
    pub registry_mirror: Option<String>,
    /// Proxy variables passed to the build as Docker's predefined build args: they reach
    /// RUN steps but never the image or its history.
    pub proxy_build_args: BTreeMap<String, String>,
}

/// What the flags (or their environment variables, merged by clap) chose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkChoices {
    pub ca_cert: Option<PathBuf>,
    pub pip_index_url: Option<String>,
    pub apt_mirror: Option<String>,
    pub registry_mirror: Option<String>,
}

/// `config.yaml`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub ca_cert: Option<PathBuf>,
    pub pip_index_url: Option<String>,
    pub apt_mirror: Option<String>,
    pub registry_mirror: Option<String>,
    #[serde(default)]
    pub proxy: Proxy,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Proxy {
    pub http: Option<String>,
    pub https: Option<String>,
    pub no: Option<String>,
}

/// Where the config file is looked for: `$TFIMG_CONFIG`, else
/// `$XDG_CONFIG_HOME/tfimg/config.yaml`, else `~/.config/tfimg/config.yaml`.
pub fn config_path(variable: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = variable(labels::CONFIG_VARIABLE) {
        return Some(PathBuf::from(path));
    }
    let base = variable("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| variable("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("tfimg").join("config.yaml"))
}

/// The config file, from what reading it gave: a missing file is an empty config.
pub fn parse_config(path: &Path, text: std::io::Result<Vec<u8>>) -> Result<Config, InputError> {
    // As `read_to_string` would: text that is not UTF-8 cannot be read.
    let text = text.and_then(|bytes| {
        String::from_utf8(bytes).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
    });
    let text = match text {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(error) => {
            return Err(InputError::new(
                format!("cannot read the config file `{}`: {error}", path.display()),
                format!(
                    "fix its permissions, or point {} at another file",
                    labels::CONFIG_VARIABLE
                ),
            ))
        }
    };
    if text.trim().is_empty() {
        return Ok(Config::default());
    }
    serde_yaml::from_str(&text).map_err(|error| {
        let place = error
            .location()
            .map(|at| format!(":{}:{}", at.line(), at.column()))
            .unwrap_or_default();
        let message = error.to_string();
        let message = message
            .rfind(" at line ")
            .map(|index| message[..index].to_string())
            .unwrap_or(message);
        InputError::new(
            format!("`{}`{place}: {message}", path.display()),
            "the config file takes ca_cert, pip_index_url, apt_mirror, registry_mirror and proxy (http, https, no); see docs/offline.md",
        )
    })
}

/// The CA file the flags or the config name, if any.
pub fn ca_path(choices: &NetworkChoices, config: &Config) -> Option<PathBuf> {
    choices.ca_cert.clone().or_else(|| config.ca_cert.clone())
}

/// Combines the flags and environment with the config file; `ca` is the CA file of
/// `ca_path`, read.
pub fn network(
    choices: &NetworkChoices,
    config: &Config,
    ca: Option<(&Path, std::io::Result<Vec<u8>>)>,
    environment: impl Fn(&str) -> Option<String>,
) -> Result<Network, InputError> {
    let ca_certificates = match ca {
        Some((path, contents)) => Some(check_ca(path, contents)?),
        None => None,
    };
    let apt_mirror = choices
        .apt_mirror
        .clone()
        .or_else(|| config.apt_mirror.clone())
        .map(|url| check_url(&url, "--apt-mirror"))
        .transpose()?;
    let pip_index_url = choices
        .pip_index_url
        .clone()
        .or_else(|| config.pip_index_url.clone())
        .map(|url| check_url(&url, "--pip-index-url"))
        .transpose()?;
    let registry_mirror = choices
        .registry_mirror
        .clone()
        .or_else(|| config.registry_mirror.clone())
        .map(|host| check_registry(&host))
        .transpose()?;
    Ok(Network {
        render: NetworkOptions {
            ca_certificates,
            apt_mirror,
            pip_index_url,
        },
        registry_mirror,
        proxy_build_args: proxy_build_args(&config.proxy, environment),
    })
}

fn check_ca(path: &Path, contents: std::io::Result<Vec<u8>>) -> Result<Vec<u8>, InputError> {
    let contents = contents.map_err(|error| {
        InputError::new(
            format!("cannot read `--ca-cert` file `{}`: {error}", path.display()),
            "give the path of a PEM file with your network's CA certificate(s)",
        )
    })?;
    let text = String::from_utf8_lossy(&contents);
    if text.contains("PRIVATE KEY") {
        return Err(InputError::new(
            format!("`{}` holds a private key; it would be copied into the image", path.display()),
            "give a file with only the CA certificate (`openssl x509 -in FILE -out ca.pem` extracts it)",
        ));
    }
    if !text.contains("-----BEGIN CERTIFICATE-----") {
        return Err(InputError::new(
            format!("`{}` holds no PEM certificate", path.display()),
            "give a PEM file (`-----BEGIN CERTIFICATE-----`); convert DER with `openssl x509 -inform der -in CA.cer -out CA.pem`",
        ));
    }
    Ok(contents)
}
/// Mirror and index URLs end up in apt's sources and pip's environment inside the image:
/// plain http(s) URLs only, and never credentials.
fn check_url(url: &str, flag: &str) -> Result<String, InputError> {
    let url = url.trim_end_matches('/');
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return Err(InputError::new(
            format!("`{flag}` needs an http:// or https:// URL, got `{url}`"),
            format!("write it like `{flag} https://mirror.example/path`"),
        ));
    };
    let host = rest.split('/').next().unwrap_or("");
    if host.contains('@') {
        return Err(InputError::new(
            format!("`{flag}` carries credentials (`user:password@`); they would be stored in the image"),
            "use a mirror that needs no credentials, or let a proxy (HTTPS_PROXY, never stored in the image) authenticate",
        ));
    }
    let safe = |c: char| c.is_ascii_alphanumeric() || "-._~:/%+".contains(c);
    if host.is_empty() || !rest.chars().all(safe) {
        return Err(InputError::new(
            format!("`{flag}` URL `{url}` has characters tfimg does not put into an image"),
            "use letters, digits and `-._~:/%+` only",
        ));
    }
    Ok(url.to_string())
}

fn check_registry(host: &str) -> Result<String, InputError> {
    let host = host
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_end_matches('/');
    if !crate::spec::syntax::valid_registry_host(host) {
        return Err(InputError::new(
            format!("`--registry-mirror` must be a registry host such as `mirror.example:5000`, got `{host}`"),
            "give the host (and port) of a registry that mirrors Docker Hub",
        ));
    }
    Ok(host.to_string())
}

/// Proxy variables for the build: the environment wins over the config file; both spellings
/// (`HTTPS_PROXY`, `https_proxy`) are passed since tools read one or the other.
pub fn proxy_build_args(
    config: &Proxy,
    environment: impl Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut args = BTreeMap::new();
    let entries = [
        ("HTTP_PROXY", &config.http),
        ("HTTPS_PROXY", &config.https),
        ("NO_PROXY", &config.no),
        ("ALL_PROXY", &None),
        ("FTP_PROXY", &None),
    ];
    for (name, configured) in entries {
        let lower = name.to_ascii_lowercase();
        let value = environment(name)
            .or_else(|| environment(&lower))
            .or_else(|| configured.clone())
            .filter(|value| !value.is_empty());
        if let Some(value) = value {
            args.insert(name.to_string(), value.clone());
            args.insert(lower, value);
        }
    }
    args
}

#[cfg(test)]
mod tests;
