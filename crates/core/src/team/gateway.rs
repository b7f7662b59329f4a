//! A team's gateway: one published port in front of every member's Jupyter and
//! TensorBoard, with TLS, routing by host name (`alice.DOMAIN`, the default) or by path
//! (`/alice/`). This module checks `gateway:` as written and says where each member is
//! reached; `nginx` renders the proxy's configuration. Pure: certificates and files are
//! the caller's.
//!
//! Members of one team are different people, and each controls what their own container
//! serves (Jupyter's files, anything listening on TensorBoard's port). Routing by host
//! gives every member a browser origin of their own, so a page one member serves cannot
//! frame another's Jupyter or read its cookies. Path routing puts the whole team on one
//! origin: a member's page there acts as any member who opens it. It stays as an explicit
//! choice (`route: path`) for a team whose members trust each other.

pub mod ingress;
pub mod nginx;

use std::path::{Path, PathBuf};

use crate::input::source::{Location, SpecError};

use super::model::{GatewayFile, TeamFile, TlsValue};
use super::read::Places;
use super::TeamMember;
// The port nginx listens on in its container is the image's (its Dockerfile's `EXPOSE`).
pub use crate::render::dockerfile::gateway::LISTEN_PORT;

/// The host port a gateway publishes when the file names none.
pub const DEFAULT_PORT: u16 = 8443;

/// Services the gateway carries; a member's fixed host port for one of them is refused.
pub const ROUTED_SERVICES: [&str; 2] = ["jupyter", "tensorboard"];

/// The parent of the members' host names when the file names no domain: `<team>.localhost`.
/// Browsers and curl send every `*.localhost` name to this machine's loopback without any
/// DNS set-up, and a wildcard certificate needs a name under its star that is not a
/// top-level domain: OpenSSL (curl, Python) and Chromium refuse `*.localhost` itself.
pub const DEFAULT_DOMAIN_PARENT: &str = "localhost";

/// How members are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `https://HOST:PORT/<member>/`: one browser origin for the whole team.
    Path,
    /// `https://<member>.<domain>:PORT/`: an origin per member (the default).
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
    /// The domain the members' names are under (host routing: the file's, else
    /// `<team>.localhost`), or the gateway's own name (path routing, when given).
    pub domain: Option<String>,
    /// Set when `domain` is the `<team>.localhost` default: where the file would name a
    /// domain, for the exports that need one written (a cluster or another machine has
    /// no `localhost` the users' browsers reach).
    pub default_domain: Option<Location>,
}

impl Gateway {
    /// The path Jupyter serves under (its `base_url`), ending in `/`.
    pub fn base_url(&self, member: &str) -> String {
        match self.route {
            Route::Path => format!("/{member}/"),
            Route::Host => "/".to_string(),
        }
    }

    /// The gateway's own address: `https://<domain>:8443/` (`<team>.localhost` by
    /// default), else (path routing without a domain) `https://127.0.0.1:8443/`
    /// (`0.0.0.0` when public).
    pub fn address(&self) -> String {
        let host = match (&self.domain, self.public) {
            (Some(domain), _) => domain.as_str(),
            (None, true) => "0.0.0.0",
            (None, false) => "127.0.0.1",
        };
        format!("https://{host}:{}/", self.port)
    }

    /// The member's address through the gateway, without a token:
    /// `https://alice.lab.localhost:8443/lab`, or `https://127.0.0.1:8443/alice/lab` by path.
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

    /// `compose` and `k8s` (`export`) need a domain written in the file for host routing:
    /// the `<team>.localhost` default names this machine only.
    pub fn check_exported(&self, export: &str) -> Result<(), SpecError> {
        let Some(place) = &self.default_domain else {
            return Ok(());
        };
        Err(SpecError::new(
            Some(place.clone()),
            format!("`tfimg {export}` needs the gateway's `domain`: members are reached by host name (`route: host`, the default)"),
            "add `domain: lab.example` under `gateway` (its `*.lab.example` names pointing at the gateway), or `route: path` to put the whole team on one origin (docs/lab.md says what it risks)",
        ))
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
    let (domain, default_domain) = domain(&file.team, written, route, places)?;
    Ok(Some(Gateway {
        port,
        public: written.public,
        tls: tls(written.tls.as_ref(), "gateway", places, folder)?,
        route,
        domain,
        default_domain,
    }))
}

fn route(written: &GatewayFile, places: &Places) -> Result<Route, SpecError> {
    match written.route.as_deref() {
        None | Some("host") => Ok(Route::Host),
        Some("path") => Ok(Route::Path),
        Some(other) => Err(places.bad(
            places.value("gateway.route"),
            format!("gateway route `{}` is not `path` or `host`", short(other)),
            "`route: host` (the default) reaches members at <member>.<domain>, `route: path` at /<member>/ on one origin",
        )),
    }
}

/// The domain and, when it is the `<team>.localhost` default, where the file would name
/// one. A public gateway routing by host needs a domain the users' machines resolve.
fn domain(
    team: &str,
    written: &GatewayFile,
    route: Route,
    places: &Places,
) -> Result<(Option<String>, Option<Location>), SpecError> {
    let Some(domain) = &written.domain else {
        if route == Route::Path {
            return Ok((None, None));
        }
        if written.public {
            return Err(places.bad(
                places.value("gateway.public"),
                "a public gateway needs a `domain`: members are reached by host name (`route: host`, the default)".to_string(),
                "add `domain: lab.example` under `gateway` (its `*.lab.example` names pointing at this machine); `localhost` names reach no other machine",
            ));
        }
        let place = places
            .value("gateway.route")
            .or_else(|| places.key("gateway"));
        return Ok((Some(format!("{team}.{DEFAULT_DOMAIN_PARENT}")), place));
    };
    if !is_domain(domain) {
        return Err(places.bad(
            places.value("gateway.domain"),
            format!("gateway domain `{}` is not a host name", short(domain)),
            "use lowercase letters, digits, `-` and dots, such as `lab.example` (at most 200 characters)",
        ));
    }
    Ok((Some(domain.clone()), None))
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

/// `tls:` under `key` (`gateway`, `hub`).
pub(super) fn tls(
    written: Option<&TlsValue>,
    key: &str,
    places: &Places,
    folder: &Path,
) -> Result<Tls, SpecError> {
    match written {
        None => Ok(Tls::SelfSigned),
        Some(TlsValue::Word(word)) if word == "self-signed" => Ok(Tls::SelfSigned),
        Some(TlsValue::Word(word)) => Err(places.bad(
            places.value(&format!("{key}.tls")),
            format!("{key} `tls: {}` is not `self-signed`", short(word)),
            "write `tls: self-signed`, or `tls: {cert: cert.pem, key: key.pem}` for your own certificate",
        )),
        Some(TlsValue::Files(files)) => {
            for (field, path) in [("cert", &files.cert), ("key", &files.key)] {
                if path.trim().is_empty() || path.contains('\0') {
                    return Err(places.bad(
                        places.value(&format!("{key}.tls.{field}")),
                        format!("{key} `tls.{field}` is not a file path"),
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
    check_front_door(("gateway", "the proxy"), gateway.port, members, places)
}

/// A team's front door (`role`: `gateway` or `hub`, and what its container is) on host
/// port `port`: no member takes its container's name (`<team>-<role>`), a fixed host port
/// for a service it carries, or its port.
pub(super) fn check_front_door(
    (role, what): (&str, &str),
    port: u16,
    members: &[TeamMember],
    places: &Places,
) -> Result<(), SpecError> {
    for member in members {
        if member.name == role {
            return Err(places.bad(
                places.member(&member.name, "name"),
                format!("member `{role}` has the name of the team's {role} container"),
                &format!(
                    "rename the member: with a `{role}:` the container `<team>-{role}` is {what}"
                ),
            ));
        }
        for (service, taken) in &member.ports {
            if ROUTED_SERVICES.contains(&service.as_str()) {
                return Err(places.bad(
                    places.member(&member.name, "ports"),
                    format!(
                        "member `{}`: `{service}` is reached through the {role}, so it has no host port of its own",
                        member.name
                    ),
                    &format!("remove it from the member's `ports`: the {role} publishes one port for the whole team"),
                ));
            }
            if *taken == port {
                return Err(places.bad(
                    places.member(&member.name, "ports"),
                    format!(
                        "host port {port} is given to both the {role} and `{}` ({service})",
                        member.name
                    ),
                    &format!("give the member another port, or the {role} another `port`"),
                ));
            }
        }
    }
    Ok(())
}

/// A value as echoed in a message: at most 64 characters, then `…`.
pub(super) fn short(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
