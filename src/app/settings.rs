//! What a command is run with besides its flags: the engine flags, the environment, the
//! current folder and the command line, captured once at start (`lib.rs`) and passed
//! down explicitly. Nothing is resolved on capture: a bad `DOCKER_HOST` or config file
//! concerns only the commands that connect or build, so `tfimg list` still works.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::engine::docker::ssh::SshCommand;
use crate::engine::endpoint::docker_config::{self, DockerConfig};
use crate::engine::endpoint::{self, Endpoint, EndpointInputs};
use crate::engine::{Connection, Docker, EngineError};
use crate::host::prelude::Files;
use crate::input::InputError;
use crate::labels;
use crate::render::network::{self, Network, NetworkChoices};

/// The settings of one run of tfimg.
#[derive(Debug, Clone)]
pub struct Settings {
    host_flag: Option<String>,
    context_flag: Option<String>,
    environment: BTreeMap<String, String>,
    current_dir: Result<PathBuf, String>,
    argv: Vec<String>,
}

impl Settings {
    /// `--host` with `--context` is bad input, refused at once.
    pub fn new(
        host_flag: Option<String>,
        context_flag: Option<String>,
        environment: BTreeMap<String, String>,
        current_dir: std::io::Result<PathBuf>,
        argv: Vec<String>,
    ) -> Result<Settings, InputError> {
        endpoint::check_flags(host_flag.as_deref(), context_flag.as_deref())?;
        Ok(Settings {
            host_flag,
            context_flag,
            environment,
            current_dir: current_dir.map_err(|error| error.to_string()),
            argv,
        })
    }

    /// An environment variable's value; an empty one counts as unset.
    pub fn variable(&self, name: &str) -> Option<String> {
        self.environment
            .get(name)
            .filter(|value| !value.is_empty())
            .cloned()
    }

    /// An environment variable's value as it is, empty or not (`-e KEY` passes it on).
    pub fn environment(&self, name: &str) -> Option<String> {
        self.environment.get(name).cloned()
    }

    /// The current folder; an error when it could not be read (it was removed).
    pub fn current_dir(&self) -> Result<PathBuf, InputError> {
        self.current_dir.clone().map_err(|error| {
            InputError::new(
                format!("cannot read the current folder: {error}"),
                "cd into an existing folder",
            )
        })
    }

    /// The command line tfimg was started with.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The engine the flags, the environment and the Docker config choose, connected and
    /// version-negotiated. Bad flags, variables or contexts are bad input (exit 1) before
    /// anything is asked of any daemon.
    pub async fn connect(&self) -> anyhow::Result<Docker> {
        Ok(self.try_connect().await??)
    }

    /// `connect`, with the engine's failure apart from bad input: for the commands that go
    /// on without a daemon (`doctor`, `compose`).
    pub async fn try_connect(&self) -> anyhow::Result<Result<Docker, EngineError>> {
        let connection = self.connection()?;
        Ok(Docker::open(connection).await)
    }

    /// The URL of the engine the settings choose, without connecting.
    pub fn engine_url(&self) -> anyhow::Result<String> {
        Ok(self.connection()?.resolved.url)
    }

    fn connection(&self) -> anyhow::Result<Connection> {
        let (docker_host, docker_context) = (
            self.variable("DOCKER_HOST"),
            self.variable("DOCKER_CONTEXT"),
        );
        let config = DockerConfig::from_env();
        // The config file is read only when nothing before it decides, as the docker CLI does.
        let decided = self.host_flag.is_some()
            || self.context_flag.is_some()
            || docker_host.is_some()
            || docker_context.is_some();
        let current_context = if decided {
            None
        } else {
            config.current_context()
        };
        let config_file = config.config_file().display().to_string();
        let inputs = EndpointInputs {
            host_flag: self.host_flag.as_deref(),
            context_flag: self.context_flag.as_deref(),
            docker_host: docker_host.as_deref(),
            docker_context: docker_context.as_deref(),
            current_context: current_context.as_deref(),
            config_file: &config_file,
        };
        let resolved = endpoint::resolve(&inputs, &mut |name| config.lookup(name))?;
        let ssh = match &resolved.endpoint {
            Endpoint::Ssh(_) => Some((
                SshCommand::parse(self.variable(labels::SSH_COMMAND_VARIABLE).as_deref())?,
                docker_config::control_dir()?,
            )),
            _ => None,
        };
        Ok(Connection { resolved, ssh })
    }

    /// The config file (`$TFIMG_CONFIG`, else `$XDG_CONFIG_HOME/tfimg/config.yaml`, else
    /// `~/.config/tfimg/config.yaml`), read; a missing one is empty, unless
    /// `$TFIMG_CONFIG` named it (a typo there would silently drop the user's mirrors).
    pub fn config(&self, host: &impl Files) -> Result<network::Config, InputError> {
        let Some(path) = network::config_path(|name| self.variable(name)) else {
            return Ok(network::Config::default());
        };
        let read = host.read_file(&path);
        let missing = matches!(&read, Err(error) if error.kind() == std::io::ErrorKind::NotFound);
        if missing && self.variable(crate::labels::CONFIG_VARIABLE).is_some() {
            return Err(InputError::new(
                format!(
                    "{} names `{}`, which does not exist",
                    crate::labels::CONFIG_VARIABLE,
                    path.display()
                ),
                format!(
                    "point {} at your config file, or unset it to use `$XDG_CONFIG_HOME/tfimg/config.yaml` (else `~/.config/tfimg/config.yaml`)",
                    crate::labels::CONFIG_VARIABLE
                ),
            ));
        }
        network::parse_config(&path, read)
    }

    /// The network settings: the flags (and their variables) over the config file, the CA
    /// file read and checked, the proxies from the environment.
    pub fn network(
        &self,
        choices: &NetworkChoices,
        host: &impl Files,
    ) -> Result<Network, InputError> {
        let config = self.config(host)?;
        let ca_path = network::ca_path(choices, &config);
        let ca = ca_path.as_deref().map(|path| (path, host.read_file(path)));
        network::network(choices, &config, ca, |name| self.environment(name))
    }
}

#[cfg(test)]
mod tests;
