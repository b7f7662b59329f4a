//! Settings for restricted networks, from three places, strongest first: command-line
//! flags, environment variables (`TFIMG_CA_CERT`, `TFIMG_PIP_INDEX_URL`,
//! `TFIMG_APT_MIRROR`, `TFIMG_REGISTRY_MIRROR`, and the usual `HTTP_PROXY`, `HTTPS_PROXY`,
//! `NO_PROXY`), and the config file (`$TFIMG_CONFIG`, else
//! `$XDG_CONFIG_HOME/tfimg/config.yaml`, else `~/.config/tfimg/config.yaml`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::app::build::Network;
use crate::cli::NetworkArgs;
use crate::input::InputError;
use crate::labels;
use crate::render::NetworkOptions;

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

/// Where the config file is looked for.
pub fn config_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(labels::CONFIG_VARIABLE).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("tfimg").join("config.yaml"))
}

/// Reads the config file; a missing file is an empty config.
pub fn load_config() -> Result<Config, InputError> {
    let Some(path) = config_path() else {
        return Ok(Config::default());
    };
    let text = match std::fs::read_to_string(&path) {
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
            "the config file takes ca_cert, pip_index_url, apt_mirror, registry_mirror and proxy (http, https, no); see README.md",
        )
    })
}

/// Combines flags and environment (already merged by clap) with the config file.
pub fn network(args: &NetworkArgs, config: &Config) -> Result<Network, InputError> {
    let ca_path = args.ca_cert.clone().or_else(|| config.ca_cert.clone());
    let ca_certificates = match ca_path {
        Some(path) => Some(read_ca(&path)?),
        None => None,
    };
    let apt_mirror = args
        .apt_mirror
        .clone()
        .or_else(|| config.apt_mirror.clone())
        .map(|url| check_url(&url, "--apt-mirror"))
        .transpose()?;
    let pip_index_url = args
        .pip_index_url
        .clone()
        .or_else(|| config.pip_index_url.clone())
        .map(|url| check_url(&url, "--pip-index-url"))
        .transpose()?;
    let registry_mirror = args
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
        proxy_build_args: proxy_build_args(&config.proxy, |name| std::env::var(name).ok()),
    })
}

fn read_ca(path: &Path) -> Result<Vec<u8>, InputError> {
    let contents = std::fs::read(path).map_err(|error| {
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
mod tests {
    use super::*;

    #[test]
    fn urls_refuse_credentials_and_odd_characters() {
        assert_eq!(
            check_url("http://m.example/debian/", "--apt-mirror").unwrap(),
            "http://m.example/debian"
        );
        assert!(check_url("ftp://m", "--apt-mirror").is_err());
        let error = check_url("https://user:secret@nexus/simple", "--pip-index-url").unwrap_err();
        assert!(error.message.contains("credentials"), "{}", error.message);
        assert!(check_url("http://m/de|bian", "--apt-mirror").is_err());
        assert!(check_url("http://m/$(x)", "--apt-mirror").is_err());
    }

    #[test]
    fn proxies_come_from_the_environment_before_the_config_and_in_both_spellings() {
        let config = Proxy {
            http: Some("http://config:3128".into()),
            https: None,
            no: Some("localhost".into()),
        };
        let env = |name: &str| match name {
            "https_proxy" => Some("http://user:pw@env:3128".to_string()),
            "NO_PROXY" => Some("*".to_string()),
            _ => None,
        };
        let args = proxy_build_args(&config, env);
        assert_eq!(args["HTTP_PROXY"], "http://config:3128");
        assert_eq!(args["http_proxy"], "http://config:3128");
        assert_eq!(args["HTTPS_PROXY"], "http://user:pw@env:3128");
        assert_eq!(args["no_proxy"], "*");
        assert!(!args.contains_key("ALL_PROXY"));
    }
}
