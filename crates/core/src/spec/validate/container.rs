//! What the container runs as and exposes: its ports (each service's own added), the
//! user, the workdir (never a system folder), the environment (never a variable tfimg
//! manages) and the folder TensorBoard serves.

use std::collections::BTreeMap;

use super::Resolver;
use crate::input::SpecError;
use crate::spec::model::Service;
use crate::spec::resolved::{
    SERVING_GRPC_PORT, SERVING_GRPC_PORT_NAME, SERVING_PORT, SERVING_PORT_NAME, TENSORBOARD_PORT,
};
use crate::spec::syntax::valid_identifier;

const DEFAULT_USER: &str = "tf";
const DEFAULT_WORKDIR: &str = "/tf";

/// Container ports each service listens on unless the spec says otherwise.
fn service_ports(service: Service) -> &'static [(&'static str, u16)] {
    match service {
        Service::Jupyter => &[("jupyter", 8888)],
        Service::Ssh => &[("ssh", 22)],
        Service::Serving => &[
            (SERVING_PORT_NAME, SERVING_PORT),
            (SERVING_GRPC_PORT_NAME, SERVING_GRPC_PORT),
        ],
        Service::None => &[],
    }
}

impl Resolver<'_> {
    pub(super) fn ports(&self, service: Service) -> Result<BTreeMap<String, u16>, SpecError> {
        let mut ports = BTreeMap::new();
        for (name, number) in self.merged.ports.clone().unwrap_or_default() {
            let path = format!("ports.{name}");
            if !valid_identifier(&name, false) {
                return Err(self.error(
                    &path,
                    format!("port name `{name}` is not valid"),
                    "use lowercase letters, digits and `-`, such as `jupyter` or `tensorboard`",
                ));
            }
            let Some(port) = number.port() else {
                // As written: YAML reads `1e10` as the float 10000000000.
                let written = self
                    .chain
                    .iter()
                    .rev()
                    .find_map(|document| document.positions.scalar(&path))
                    .map_or_else(|| number.to_string(), str::to_string);
                return Err(self.error(
                    &path,
                    format!("port {written} for `{name}` is out of range"),
                    "container ports go from 1 to 65535",
                ));
            };
            if let Some((other, _)) = ports.iter().find(|(_, existing)| **existing == port) {
                return Err(self.error(
                    &path,
                    format!("port {port} is given to both `{other}` and `{name}`"),
                    "give each service its own container port",
                ));
            }
            ports.insert(name, port);
        }
        for &(name, port) in service_ports(service) {
            if !ports.contains_key(name) {
                if let Some((other, _)) = ports.iter().find(|(_, existing)| **existing == port) {
                    return Err(self.error(
                        &format!("ports.{other}"),
                        format!("port {port} of `{other}` is the {name} service's own port"),
                        format!("give `{other}` another port, or set `ports.{name}` to move the service"),
                    ));
                }
                ports.insert(name.to_string(), port);
            }
        }
        Ok(ports)
    }

    pub(super) fn user(&self) -> Result<String, SpecError> {
        let user = self
            .merged
            .user
            .clone()
            .unwrap_or_else(|| DEFAULT_USER.to_string());
        if user == "root" {
            return Err(self.error(
                "user",
                "`user: root` is not allowed: containers run as the host user",
                "remove `user` (the default `tf` takes the host uid/gid at run time); `tfimg run --user root` opts out per run",
            ));
        }
        let valid = user.len() <= 32
            && user.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && user
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !valid {
            return Err(self.error(
                "user",
                format!("user name `{user}` is not valid"),
                "use lowercase letters, digits, `_` and `-`, starting with a letter (at most 32)",
            ));
        }
        Ok(user)
    }

    pub(super) fn workdir(&self) -> Result<String, SpecError> {
        let workdir = self
            .merged
            .workdir
            .clone()
            .unwrap_or_else(|| DEFAULT_WORKDIR.to_string());
        let parts: Vec<&str> = workdir.split('/').filter(|part| !part.is_empty()).collect();
        let normalized = format!("/{}", parts.join("/"));
        let syntax_ok = workdir.starts_with('/')
            && !parts.is_empty()
            && workdir
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
            && !parts.iter().any(|part| *part == ".." || *part == ".");
        if !syntax_ok {
            return Err(self.error(
                "workdir",
                format!("workdir `{workdir}` is not valid"),
                "use an absolute path of its own, such as `/tf` or `/workspace` (not a system folder, no `.` or `..`)",
            ));
        }
        // The workdir is handed to the user at build and at every start: under a system
        // folder that would be a user-writable folder among the system's programs (first
        // on PATH for `/opt/venv/bin`), read by the entrypoint's root phase.
        if let Some(system) = system_folder(&parts) {
            return Err(self.error(
                "workdir",
                format!("workdir `{workdir}` is {system}"),
                "use a folder of its own, such as `/tf` or `/workspace` (the user gets to own it)",
            ));
        }
        Ok(normalized)
    }

    pub(super) fn env(&self) -> Result<BTreeMap<String, String>, SpecError> {
        let mut env = BTreeMap::new();
        for (key, value) in self.merged.env.clone().unwrap_or_default() {
            let path = format!("env.{key}");
            if !valid_identifier(&key, true) {
                return Err(self.error(
                    &path,
                    format!("environment variable name `{key}` is not valid"),
                    "use letters, digits and `_`, not starting with a digit",
                ));
            }
            if key.starts_with(crate::labels::VARIABLE_PREFIX) {
                return Err(self.error(
                    &path,
                    format!("`{key}` is reserved: tfimg sets `TFIMG_*` variables at run time"),
                    "choose another name",
                ));
            }
            // tfimg sets these itself; a second value would silently win or lose.
            const MANAGED: &[&str] = &[
                "LD_LIBRARY_PATH",
                "PATH",
                "PIP_CONSTRAINT",
                "VIRTUAL_ENV",
                "PIP_CERT",
                "PIP_INDEX_URL",
                "REQUESTS_CA_BUNDLE",
                "SSL_CERT_FILE",
            ];
            if MANAGED.contains(&key.as_str()) || key.starts_with("NVIDIA_") {
                return Err(self.error(
                    &path,
                    format!("`{key}` is set by tfimg in every image"),
                    "leave it out: library paths, the venv, pins and certificates are managed from the spec and the build options; GPU visibility is chosen with `tfimg run --gpus`",
                ));
            }
            if value.0.contains(['\n', '\r', '\0']) {
                return Err(self.error(
                    &path,
                    format!("the value of `{key}` spans several lines"),
                    "environment values baked into an image must fit on one line",
                ));
            }
            env.insert(key, value.0);
        }
        Ok(env)
    }

    /// The folder the managed TensorBoard serves: `tensorboard_logdir:`, else the workdir,
    /// for specs with a `tensorboard` port; none without one (nothing would serve it).
    pub(super) fn tensorboard_logdir(
        &self,
        ports: &BTreeMap<String, u16>,
        workdir: &str,
    ) -> Result<Option<String>, SpecError> {
        let Some(logdir) = &self.merged.tensorboard_logdir else {
            return Ok(ports
                .contains_key(TENSORBOARD_PORT)
                .then(|| workdir.to_string()));
        };
        let parts: Vec<&str> = logdir.split('/').filter(|part| !part.is_empty()).collect();
        // The entrypoint passes it to TensorBoard as one shell word: the same characters
        // as a workdir.
        let valid = logdir.starts_with('/')
            && logdir
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
            && !parts.iter().any(|part| *part == ".." || *part == ".");
        if !valid {
            return Err(self.error(
                "tensorboard_logdir",
                format!(
                    "tensorboard_logdir `{}` is not valid",
                    crate::input::printable(logdir)
                ),
                format!("use an absolute path of letters, digits, `-`, `_`, `.` and `/`, without `.` or `..` parts, such as `{workdir}/logs`"),
            ));
        }
        if !ports.contains_key(TENSORBOARD_PORT) {
            return Err(self.error(
                "tensorboard_logdir",
                "`tensorboard_logdir` is set but the spec has no `tensorboard` port, so no TensorBoard runs",
                "add `ports: {tensorboard: 6006}` to run TensorBoard, or remove `tensorboard_logdir`",
            ));
        }
        Ok(Some(format!("/{}", parts.join("/"))))
    }
}

/// What makes a workdir (its parts, `/opt/venv/bin` → `["opt", "venv", "bin"]`) a system
/// folder, if anything: a top-level folder of the system itself, anything under the
/// system's programs, libraries, state and kernel file systems, tfimg's venv and scripts,
/// or a hidden folder (`/home/tf/.ssh`).
fn system_folder(parts: &[&str]) -> Option<&'static str> {
    const TOP_ONLY: &[&str] = &["home", "media", "mnt", "opt", "srv", "tmp"];
    const WHOLE: &[&str] = &[
        "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root", "run",
        "sbin", "sys", "usr", "var",
    ];
    match parts {
        [] => Some("the root folder"),
        [top] if TOP_ONLY.contains(top) => Some("a system folder"),
        [top, ..] if WHOLE.contains(top) => Some("a system folder or inside one"),
        ["opt", "venv" | "tfimg", ..] => {
            Some("tfimg's Python environment or scripts, or inside them")
        }
        _ if parts.iter().any(|part| part.starts_with('.')) => {
            Some("a hidden folder or inside one")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
