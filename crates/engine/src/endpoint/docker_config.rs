//! The docker CLI's own configuration, read where and as it reads it: the folder
//! (`$DOCKER_CONFIG`, else `~/.docker`), `config.json`'s `currentContext`, a named
//! context's `contexts/meta/<sha256>/meta.json` (and whether TLS material is stored for
//! it). Also the private folder where tfimg's ssh control sockets live. The reading half
//! of `endpoint`, which is pure; here in engine (not host) so that host imports no engine.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::endpoint::{self, ContextLookup};
use tfimg_host::{current_ids, home_dir, HostError};

/// The docker CLI's config folder.
#[derive(Debug, Clone)]
pub struct DockerConfig {
    pub folder: PathBuf,
}

impl DockerConfig {
    /// `$DOCKER_CONFIG`, else `~/.docker`.
    pub fn from_env() -> DockerConfig {
        let folder = std::env::var_os("DOCKER_CONFIG")
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home_dir().join(".docker"));
        DockerConfig { folder }
    }

    pub fn config_file(&self) -> PathBuf {
        self.folder.join("config.json")
    }

    /// `currentContext` of `config.json`; a missing file is none, an unreadable one is
    /// warned about and skipped, as the docker CLI does.
    pub fn current_context(&self) -> Option<String> {
        let path = self.config_file();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                tracing::warn!("cannot read `{}`: {error}", path.display());
                return None;
            }
        };
        endpoint::parse_current_context(&text).unwrap_or_else(|error| {
            tracing::warn!("cannot read `{}`: {error}", path.display());
            None
        })
    }

    /// A named context's Docker endpoint.
    pub fn lookup(&self, name: &str) -> ContextLookup {
        let digest = endpoint::context_folder(name);
        let meta = self
            .folder
            .join("contexts/meta")
            .join(&digest)
            .join("meta.json");
        let text = match std::fs::read_to_string(&meta) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return ContextLookup::Missing
            }
            Err(error) => {
                return ContextLookup::Unreadable(format!("`{}`: {error}", meta.display()))
            }
        };
        match endpoint::parse_context_meta(&text) {
            ContextLookup::Host(_) if self.has_tls(&digest) => ContextLookup::Tls,
            ContextLookup::Unreadable(why) => {
                ContextLookup::Unreadable(format!("`{}`: {why}", meta.display()))
            }
            found => found,
        }
    }

    fn has_tls(&self, digest: &str) -> bool {
        self.folder
            .join("contexts/tls")
            .join(digest)
            .join("docker")
            .is_dir()
    }
}

/// The folder for tfimg's ssh control sockets: `$XDG_RUNTIME_DIR/tfimg`, else
/// `/tmp/tfimg-<uid>`; made 0700, and refused when someone else could reach into it (a
/// control socket gives its master's access to the Docker host).
pub fn control_dir() -> Result<PathBuf, HostError> {
    let uid = current_ids().map_or(0, |(uid, _)| uid);
    let folder = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .filter(|base| base.is_dir())
        .map(|base| base.join("tfimg"))
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/tfimg-{uid}")));
    private_folder(&folder, uid)?;
    Ok(folder)
}

fn private_folder(folder: &Path, uid: u32) -> Result<(), HostError> {
    let made = std::fs::DirBuilder::new().mode(0o700).create(folder);
    if let Err(error) = made {
        if error.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(HostError {
                message: format!("cannot make `{}`: {error}", folder.display()),
                hint: "set XDG_RUNTIME_DIR to a folder of yours that tfimg may write".to_string(),
            });
        }
    }
    let refused = |why: String| {
        HostError {
        message: format!(
            "`{}` is not a private folder of yours ({why}): tfimg keeps its ssh control sockets there",
            folder.display()
        ),
        hint: format!(
            "remove it (`rm -r {}`) so tfimg makes it again, or set XDG_RUNTIME_DIR to a folder only you can enter",
            folder.display()
        ),
    }
    };
    let meta = std::fs::symlink_metadata(folder).map_err(|error| refused(error.to_string()))?;
    if !meta.is_dir() {
        return Err(refused("not a folder".to_string()));
    }
    if meta.uid() != uid {
        return Err(refused(format!("owned by uid {}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(refused(format!("mode {:o}", meta.mode() & 0o777)));
    }
    Ok(())
}
