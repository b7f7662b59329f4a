//! The real engine: Docker through bollard (the only module that imports it). It
//! connects (a unix socket, tcp, or ssh through the user's own `ssh`), negotiates the
//! API version down to what the daemon speaks (Engine 20.10 speaks 1.41), and turns
//! daemon failures into `EngineError`s that say what to do.

mod archive;
mod build;
mod containers;
mod create;
mod images;
mod networks;
mod one_off;
mod output;
mod ping;
pub mod ssh;
mod tunnels;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::endpoint::{Endpoint, Resolved, SshTarget};
use super::{Daemon, EngineError, EngineInfo, EngineVersion};

/// The local socket used when `DOCKER_HOST` is unset.
pub const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

/// Connecting and negotiating must not hang a command: a daemon that does not answer
/// within this is reported as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Seconds bollard waits for one request (image builds stream, so this bounds silence).
const REQUEST_TIMEOUT_SECONDS: u64 = 600;

/// A connected, version-negotiated client.
#[derive(Debug, Clone)]
pub struct Docker {
    client: bollard::Docker,
    endpoint: String,
    /// ` (context `NAME`)` when a Docker context chose the endpoint, for messages.
    origin: String,
    /// The ssh master every request of an `ssh://` endpoint goes through.
    session: Option<Arc<ssh::Session>>,
}

/// Where to connect, as `commands` resolved it.
#[derive(Debug, Clone)]
pub struct Connection {
    pub resolved: Resolved,
    /// For `ssh://`: the user's ssh command and the folder for control sockets.
    pub ssh: Option<(ssh::SshCommand, PathBuf)>,
}

impl Docker {
    /// Connects from `DOCKER_HOST`, else the local socket, and negotiates the API version.
    pub async fn connect() -> Result<Docker, EngineError> {
        let endpoint = std::env::var("DOCKER_HOST")
            .ok()
            .filter(|host| !host.is_empty())
            .unwrap_or_else(|| format!("unix://{DEFAULT_SOCKET}"));
        Docker::connect_to(endpoint).await
    }

    /// Connects to a resolved endpoint: unix, tcp or ssh.
    pub async fn open(connection: Connection) -> Result<Docker, EngineError> {
        let origin = match connection.resolved.origin.context() {
            Some(name) => format!(" (context `{name}`)"),
            None => String::new(),
        };
        let docker = match (&connection.resolved.endpoint, connection.ssh) {
            (Endpoint::Ssh(target), Some((command, control_dir))) => {
                let url = connection.resolved.url.clone();
                open_ssh(target.clone(), url, &origin, command, control_dir).await?
            }
            (Endpoint::Ssh(_), None) => {
                return Err(EngineError::UnsupportedHost {
                    endpoint: connection.resolved.url,
                })
            }
            _ => Docker::connect_to(connection.resolved.url).await?,
        };
        Ok(Docker { origin, ..docker })
    }

    /// The ssh master of an `ssh://` endpoint (its control socket serves port forwards).
    pub fn ssh_session(&self) -> Option<&Arc<ssh::Session>> {
        self.session.as_ref()
    }

    /// Connects to one endpoint (`unix:///path`, `tcp://host:port`).
    pub async fn connect_to(endpoint: String) -> Result<Docker, EngineError> {
        if let Some(path) = endpoint.strip_prefix("unix://") {
            check_socket(path, &endpoint)?;
        }
        // The docker CLI's question first (`HEAD /_ping` answers with the API version in a
        // header); `/version`, which makes the daemon ask containerd and runc for theirs,
        // only when the ping does not say.
        if let Some(version) = ping::api_version(&endpoint, CONNECT_TIMEOUT).await {
            return Ok(Docker {
                client: connect_to(&endpoint, &clamp(version))?,
                endpoint,
                origin: String::new(),
                session: None,
            });
        }
        let docker = connect_to(&endpoint, bollard::API_DEFAULT_VERSION)?;
        Ok(Docker {
            client: negotiate(docker, &endpoint).await?,
            endpoint,
            origin: String::new(),
            session: None,
        })
    }

    /// The error for an ssh transport failure.
    fn ssh_error(&self, problem: ssh::SshProblem) -> EngineError {
        ssh_error(&self.endpoint, &self.origin, problem)
    }

    /// Wraps a bollard error from an operation described by `what` ("tag image").
    pub(crate) fn fail(&self, what: &str, error: bollard::errors::Error) -> EngineError {
        match error {
            bollard::errors::Error::DockerResponseServerError { message, .. } => {
                EngineError::Failed {
                    what: what.to_string(),
                    message,
                }
            }
            bollard::errors::Error::DockerStreamError { error } => EngineError::Failed {
                what: what.to_string(),
                message: error,
            },
            bollard::errors::Error::HyperResponseError { .. }
            | bollard::errors::Error::HyperLegacyError { .. }
            | bollard::errors::Error::IOError { .. }
            | bollard::errors::Error::RequestTimeoutError => {
                match self.session.as_ref().and_then(|session| session.problem()) {
                    Some(problem) => self.ssh_error(problem),
                    None => EngineError::Unreachable {
                        endpoint: self.endpoint.clone(),
                        reason: error.to_string(),
                    },
                }
            }
            other => EngineError::Failed {
                what: what.to_string(),
                message: other.to_string(),
            },
        }
    }
}

impl Daemon for Docker {
    /// Whether the daemon still answers (a ping through a fresh connection check).
    async fn still_there(&self) -> Result<(), EngineError> {
        if let Some(path) = self.endpoint.strip_prefix("unix://") {
            check_socket(path, &self.endpoint)?;
        }
        if let Some(session) = self.session.as_ref().filter(|session| !session.alive()) {
            if let Some(problem) = session.problem() {
                return Err(self.ssh_error(problem));
            }
        }
        match tokio::time::timeout(CONNECT_TIMEOUT, self.client.ping()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(self.fail("ping", error)),
            Err(_) => Err(EngineError::Timeout {
                endpoint: self.endpoint.clone(),
                seconds: CONNECT_TIMEOUT.as_secs(),
            }),
        }
    }

    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn on_this_machine(&self) -> bool {
        super::endpoint::on_this_machine(&self.endpoint)
    }

    async fn run_on_host(&self, program: &[&str], deadline: Duration) -> Option<String> {
        self.session.as_ref()?.run_program(program, deadline).await
    }

    /// Whether GPUs can be requested as CDI devices: API 1.44 or later and CDI spec
    /// folders reported by the daemon.
    async fn cdi_supported(&self) -> bool {
        let client = self.client.client_version();
        if (client.major_version, client.minor_version) < (1, 44) {
            return false;
        }
        match self.client.info().await {
            Ok(info) => info.cdi_spec_dirs.is_some_and(|dirs| !dirs.is_empty()),
            Err(_) => false,
        }
    }

    async fn info(&self) -> Result<EngineInfo, EngineError> {
        let info = self
            .client
            .info()
            .await
            .map_err(|error| self.fail("read the daemon's info", error))?;
        let mut runtimes: Vec<String> = info.runtimes.unwrap_or_default().into_keys().collect();
        runtimes.sort();
        Ok(EngineInfo {
            storage_driver: info.driver.unwrap_or_default(),
            root_dir: info.docker_root_dir.unwrap_or_default(),
            runtimes,
            default_runtime: info.default_runtime.unwrap_or_default(),
            cdi_spec_dirs: info.cdi_spec_dirs.unwrap_or_default(),
        })
    }

    async fn version(&self) -> Result<EngineVersion, EngineError> {
        let version = self
            .client
            .version()
            .await
            .map_err(|error| map_connect_error(error, &self.endpoint))?;
        let client = self.client.client_version();
        Ok(EngineVersion {
            version: version.version.unwrap_or_default(),
            api_version: version.api_version.unwrap_or_default(),
            negotiated_api: format!("{}.{}", client.major_version, client.minor_version),
            os: version.os.unwrap_or_default(),
            arch: version.arch.unwrap_or_default(),
        })
    }
}

/// Never a newer API than the daemon speaks, nor than bollard knows.
fn clamp(version: bollard::ClientVersion) -> bollard::ClientVersion {
    let known = bollard::API_DEFAULT_VERSION;
    if (version.major_version, version.minor_version) < (known.major_version, known.minor_version) {
        version
    } else {
        *known
    }
}

/// `/version`'s answer, when the ping did not say.
async fn negotiate(
    docker: bollard::Docker,
    endpoint: &str,
) -> Result<bollard::Docker, EngineError> {
    tokio::time::timeout(CONNECT_TIMEOUT, docker.negotiate_version())
        .await
        .map_err(|_| EngineError::Timeout {
            endpoint: endpoint.to_string(),
            seconds: CONNECT_TIMEOUT.as_secs(),
        })?
        .map_err(|error| map_connect_error(error, endpoint))
}

fn ssh_error(endpoint: &str, origin: &str, problem: ssh::SshProblem) -> EngineError {
    EngineError::Ssh {
        endpoint: endpoint.to_string(),
        origin: origin.to_string(),
        cause: problem.cause,
        hint: problem.hint,
    }
}

/// The ssh branch: the master, one dial asked `HEAD /_ping` (its failure classified),
/// then bollard over the pooled dials.
async fn open_ssh(
    target: SshTarget,
    endpoint: String,
    origin: &str,
    command: ssh::SshCommand,
    control_dir: PathBuf,
) -> Result<Docker, EngineError> {
    let failed = |problem| ssh_error(&endpoint, origin, problem);
    let session = ssh::Session::open(target, command, &control_dir)
        .await
        .map_err(failed)?;
    let mut stream = session.dial().await.map_err(failed)?;
    let asked = tokio::time::timeout(CONNECT_TIMEOUT, ping::ask(&mut stream)).await;
    let version = match asked {
        Ok(Some(version)) => Some(clamp(version)),
        Ok(None) => match stream.failure().await {
            Some(problem) => return Err(failed(problem)),
            None => None,
        },
        Err(_) => {
            return Err(EngineError::Timeout {
                endpoint,
                seconds: CONNECT_TIMEOUT.as_secs(),
            })
        }
    };
    let connected = |version: &bollard::ClientVersion| {
        ssh::client(Arc::clone(&session), REQUEST_TIMEOUT_SECONDS, version)
            .map_err(|error| map_connect_error(error, &endpoint))
    };
    let client = match version {
        Some(version) => connected(&version)?,
        None => negotiate(connected(bollard::API_DEFAULT_VERSION)?, &endpoint).await?,
    };
    Ok(Docker {
        client,
        endpoint,
        origin: origin.to_string(),
        session: Some(session),
    })
}

fn connect_to(
    endpoint: &str,
    version: &bollard::ClientVersion,
) -> Result<bollard::Docker, EngineError> {
    let result = if let Some(path) = endpoint.strip_prefix("unix://") {
        bollard::Docker::connect_with_unix(path, REQUEST_TIMEOUT_SECONDS, version)
    } else if endpoint.starts_with("tcp://") || endpoint.starts_with("http://") {
        bollard::Docker::connect_with_http(endpoint, REQUEST_TIMEOUT_SECONDS, version)
    } else {
        return Err(EngineError::UnsupportedHost {
            endpoint: endpoint.to_string(),
        });
    };
    result.map_err(|error| map_connect_error(error, endpoint))
}

/// A missing socket or a permission problem is clearer before any request is made.
fn check_socket(path: &str, endpoint: &str) -> Result<(), EngineError> {
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Ok(()),
        Err(error) => Err(match error.kind() {
            std::io::ErrorKind::PermissionDenied => EngineError::PermissionDenied {
                endpoint: endpoint.to_string(),
            },
            std::io::ErrorKind::NotFound => EngineError::Unreachable {
                endpoint: endpoint.to_string(),
                reason: "the socket does not exist (is the daemon running?)".to_string(),
            },
            std::io::ErrorKind::ConnectionRefused => EngineError::Unreachable {
                endpoint: endpoint.to_string(),
                reason: "connection refused (the daemon is not running)".to_string(),
            },
            _ => EngineError::Unreachable {
                endpoint: endpoint.to_string(),
                reason: error.to_string(),
            },
        }),
    }
}

fn map_connect_error(error: bollard::errors::Error, endpoint: &str) -> EngineError {
    match error {
        bollard::errors::Error::DockerResponseServerError { message, .. } => {
            EngineError::Daemon { message }
        }
        other => EngineError::Unreachable {
            endpoint: endpoint.to_string(),
            reason: other.to_string(),
        },
    }
}
