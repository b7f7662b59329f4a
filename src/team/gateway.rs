//! A team's gateway: one published port in front of every member's Jupyter and
//! TensorBoard, with TLS, routing by path (`/alice/`) or by host name (`alice.DOMAIN`).
//! This module checks `gateway:` as written and says where each member is reached; `nginx`
//! renders the proxy's configuration. Pure: certificates and files are the caller's.

pub mod ingress;
pub mod nginx;

use std::path::{Path, PathBuf};

use crate::input::source::SpecError;

use super::model::{GatewayFile, TeamFile, TlsValue};
use super::read::Places;
use super::TeamMember;

/// The host port a gateway publishes when the file names none.
pub const DEFAULT_PORT: u16 = 8443;

/// The port nginx listens on inside its container (unprivileged: it runs without root).
pub const LISTEN_PORT: u16 = 8443;

/// Services the gateway carries; a member's fixed host port for one of them is refused.
pub const ROUTED_SERVICES: [&str; 2] = ["jupyter", "tensorboard"];

/// How members are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `https://HOST:PORT/<member>/`
    Path,
    /// `https://<member>.<domain>:PORT/`
    Host,
}

/// Where the certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    /// Made by tfimg once per team and kept with the team's files.
    SelfSigned,
    /// Given in the file (relative paths start at the team file's folder).
    Files { cert: PathBuf, key: PathBuf },
}

/// `gateway:` with defaults applied and values checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gateway {
    pub port: u16,
    /// Published on every address instead of 127.0.0.1.
    pub public: bool,
    pub tls: Tls,
    pub route: Route,
    pub domain: Option<String>,
}

impl Gateway {
    /// The path Jupyter serves under (its `base_url`), ending in `/`.
    pub fn base_url(&self, member: &str) -> String {
        match self.route {
            Route::Path => format!("/{member}/"),
            Route::Host => "/".to_string(),
        }
    }

    /// The gateway's own address: `https://127.0.0.1:8443/` (`0.0.0.0` when public).
    pub fn address(&self) -> String {
        let host = match (&self.domain, self.public) {
            (Some(domain), _) => domain.as_str(),
            (None, true) => "0.0.0.0",
            (None, false) => "127.0.0.1",
        };
        format!("https://{host}:{}/", self.port)
    }

    /// The member's address through the gateway, without a token: `https://127.0.0.1:8443/alice/`.
    pub fn url(&self, member: &str, service: &str) -> String {
        let host = match (self.route, &self.domain) {
            (Route::Host, Some(domain)) => format!("{member}.{domain}"),
            (Route::Path, Some(domain)) => domain.clone(),
            (_, None) => "127.0.0.1".to_string(),
        };
        let path = self.base_url(member);
        let service_path = if service == "tensorboard" {
            "tensorboard/"
        } else {
            "lab"
        };
        format!("https://{host}:{}{path}{service_path}", self.port)
    }
}

/// The checked `gateway:` of `file`, if it has one.
pub(super) fn check(
    file: &TeamFile,
    places: &Places,
    folder: &Path,
) -> Result<Option<Gateway>, SpecError> {
    let Some(written) = &file.gateway else {
        return Ok(None);
    };
    let port = match written.port {
        None => DEFAULT_PORT,
        Some(number) => number.port().ok_or_else(|| {
            places.bad(
                places.value("gateway.port"),
                format!("gateway port {number} is out of range"),
                "host ports go from 1 to 65535",
            )
        })?,
    };
    let route = route(written, places)?;
    let domain = domain(written, route, places)?;
    Ok(Some(Gateway {
        port,
        public: written.public,
        tls: tls(written, places, folder)?,
        route,
        domain,
    }))
}

fn route(written: &GatewayFile, places: &Places) -> Result<Route, SpecError> {
    match written.route.as_deref() {
        None | Some("path") => Ok(Route::Path),
        Some("host") => Ok(Route::Host),
        Some(other) => Err(places.bad(
            places.value("gateway.route"),
            format!("gateway route `{}` is not `path` or `host`", short(other)),
            "`route: path` reaches members at /<member>/, `route: host` at <member>.<domain>",
        )),
    }
}

fn domain(
    written: &GatewayFile,
    route: Route,
    places: &Places,
) -> Result<Option<String>, SpecError> {
    let Some(domain) = &written.domain else {
        if route == Route::Host {
            return Err(places.bad(
                places.value("gateway.route"),
                "`route: host` needs a `domain`".to_string(),
                "add `domain: lab.example` under `gateway`: members are then reached at <member>.lab.example",
            ));
        }
        return Ok(None);
    };
    if !is_domain(domain) {
        return Err(places.bad(
            places.value("gateway.domain"),
            format!("gateway domain `{}` is not a host name", short(domain)),
            "use lowercase letters, digits, `-` and dots, such as `lab.example` (at most 200 characters)",
        ));
    }
    Ok(Some(domain.clone()))
}

/// A DNS name made of labels of lowercase letters, digits and inner `-`.
fn is_domain(text: &str) -> bool {
    text.len() <= 200
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

fn tls(written: &GatewayFile, places: &Places, folder: &Path) -> Result<Tls, SpecError> {
    match &written.tls {
        None => Ok(Tls::SelfSigned),
        Some(TlsValue::Word(word)) if word == "self-signed" => Ok(Tls::SelfSigned),
        Some(TlsValue::Word(word)) => Err(places.bad(
            places.value("gateway.tls"),
            format!("gateway `tls: {}` is not `self-signed`", short(word)),
            "write `tls: self-signed`, or `tls: {cert: cert.pem, key: key.pem}` for your own certificate",
        )),
        Some(TlsValue::Files(files)) => {
            for (field, path) in [("cert", &files.cert), ("key", &files.key)] {
                if path.trim().is_empty() || path.contains('\0') {
                    return Err(places.bad(
                        places.value(&format!("gateway.tls.{field}")),
                        format!("gateway `tls.{field}` is not a file path"),
                        "give the path of a PEM file, relative to the team file's folder",
                    ));
                }
            }
            Ok(Tls::Files {
                cert: folder.join(&files.cert),
                key: folder.join(&files.key),
            })
        }
    }
}

/// With a gateway, the members' Jupyter and TensorBoard are reached through it only: a
/// fixed host port for them, or the gateway's own port on a member, is refused.
pub(super) fn check_members(
    gateway: &Gateway,
    members: &[TeamMember],
    places: &Places,
) -> Result<(), SpecError> {
    for member in members {
        if member.name == "gateway" {
            return Err(places.bad(
                places.member(&member.name, "name"),
                "member `gateway` has the name of the team's gateway container".to_string(),
                "rename the member: with a `gateway:` the container `<team>-gateway` is the proxy",
            ));
        }
        for (service, port) in &member.ports {
            if ROUTED_SERVICES.contains(&service.as_str()) {
                return Err(places.bad(
                    places.member(&member.name, "ports"),
                    format!(
                        "member `{}`: `{service}` is reached through the gateway, so it has no host port of its own",
                        member.name
                    ),
                    "remove it from the member's `ports`: the gateway publishes one port for the whole team",
                ));
            }
            if *port == gateway.port {
                return Err(places.bad(
                    places.member(&member.name, "ports"),
                    format!(
                        "host port {port} is given to both the gateway and `{}` ({service})",
                        member.name
                    ),
                    "give the member another port, or the gateway another `port`",
                ));
            }
        }
    }
    Ok(())
}

/// A value as echoed in a message: at most 64 characters, then `…`.
fn short(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
