//! SSH keys for containers (the user's own, one tfimg makes, one per team member) and
//! tfimg's own known_hosts, where each container's host key is pinned.

use std::path::{Path, PathBuf};

use super::machine::{data_folder, home_dir};
use tfimg_core::input::InputError;

/// Records `host_key` (`ssh-ed25519 AAAA...`) for `[127.0.0.1]:port` in `known_hosts`,
/// replacing what an earlier container on that port left.
pub fn pin_host_key(
    known_hosts: &std::path::Path,
    port: u16,
    host_key: &str,
) -> std::io::Result<()> {
    // ssh writes the default port without brackets.
    let host = if port == 22 {
        "127.0.0.1".to_string()
    } else {
        format!("[127.0.0.1]:{port}")
    };
    if let Some(folder) = known_hosts.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let existing = std::fs::read_to_string(known_hosts).unwrap_or_default();
    let mut lines: Vec<String> = existing
        .lines()
        .filter(|line| line.split_whitespace().next() != Some(host.as_str()))
        .map(str::to_string)
        .collect();
    let key: Vec<&str> = host_key.split_whitespace().take(2).collect();
    lines.push(format!("{host} {}", key.join(" ")));
    std::fs::write(known_hosts, lines.join("\n") + "\n")
}

/// A key pair of its own for one team member (made once, kept in tfimg's data folder).
pub fn member_ssh_key(team: &str, member: &str) -> Result<SshKey, InputError> {
    let folder = data_folder()?.join("teams").join(team).join(member);
    let private = folder.join("id_ed25519");
    if !private.is_file() {
        std::fs::create_dir_all(&folder).map_err(|error| {
            InputError::new(
                format!("cannot create `{}`: {error}", folder.display()),
                "check its permissions",
            )
        })?;
        let made = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C"])
            .arg(format!("tfimg {team}/{member}"))
            .arg("-f")
            .arg(&private)
            .stdin(std::process::Stdio::null())
            .status();
        if !made.is_ok_and(|status| status.success()) {
            return Err(InputError::new(
                "ssh-keygen could not make a key for a team member",
                "install openssh-client",
            ));
        }
    }
    ssh_key(Some(&private))
}

/// The SSH key a container admits: a public key text and the private key to log in with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshKey {
    pub public_key: String,
    /// The private key path for `ssh -i` (None when only a public key was given).
    pub identity: Option<std::path::PathBuf>,
}

/// `--ssh-key PATH` (a public key, or a private key whose `.pub` sits beside it), else
/// `~/.ssh/id_ed25519.pub` or `~/.ssh/id_rsa.pub`, else an ed25519 pair tfimg generates
/// once in its data folder.
pub fn ssh_key(explicit: Option<&Path>) -> Result<SshKey, InputError> {
    if let Some(path) = explicit {
        let is_public = path.extension().is_some_and(|ext| ext == "pub");
        let public = if is_public {
            path.to_path_buf()
        } else {
            let mut with_pub = path.as_os_str().to_owned();
            with_pub.push(".pub");
            PathBuf::from(with_pub)
        };
        return Ok(SshKey {
            public_key: read_public(&public)?,
            identity: if is_public {
                private_beside(&public)
            } else {
                Some(path.to_path_buf())
            },
        });
    }
    for name in ["id_ed25519.pub", "id_rsa.pub"] {
        let public = home_dir().join(".ssh").join(name);
        if public.is_file() {
            return Ok(SshKey {
                public_key: read_public(&public)?,
                identity: private_beside(&public),
            });
        }
    }
    let folder = data_folder()?.join("ssh");
    let (private, public) = (folder.join("id_ed25519"), folder.join("id_ed25519.pub"));
    if !public.is_file() {
        make_key_pair(&folder, &private, &public)?;
    }
    Ok(SshKey {
        public_key: read_public(&public)?,
        identity: Some(private),
    })
}

/// The one key line of a public key file.
fn read_public(path: &Path) -> Result<String, InputError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        InputError::new(
            format!("cannot read SSH public key `{}`: {error}", path.display()),
            "give `--ssh-key` a public key (`~/.ssh/id_ed25519.pub`) or a private key with its .pub beside it",
        )
    })?;
    let key = text
        .lines()
        .find(|line| line.starts_with("ssh-") || line.starts_with("ecdsa-"))
        .unwrap_or("");
    if key.is_empty() || key.contains("PRIVATE KEY") {
        return Err(InputError::new(
            format!("`{}` is not an SSH public key", path.display()),
            "give a key such as `~/.ssh/id_ed25519.pub` (one `ssh-ed25519 AAAA...` line)",
        ));
    }
    Ok(key.trim().to_string())
}

/// `id_x` beside `id_x.pub`, when it is there.
fn private_beside(public: &Path) -> Option<PathBuf> {
    let private = public.with_extension("");
    (public.extension().is_some_and(|ext| ext == "pub") && private.is_file()).then_some(private)
}

/// tfimg's own ed25519 pair, in a 0700 folder with the private key 0600. Made under a
/// temporary name and renamed, so two `tfimg run` at once never see half a key pair.
fn make_key_pair(folder: &Path, private: &Path, public: &Path) -> Result<(), InputError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(folder).map_err(|error| {
        InputError::new(
            format!("cannot create `{}`: {error}", folder.display()),
            "check its permissions",
        )
    })?;
    let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700));
    let temporary = folder.join(format!(".id_ed25519.{}", std::process::id()));
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "tfimg", "-f"])
        .arg(&temporary)
        .stdin(std::process::Stdio::null())
        .status();
    let mut temporary_public = temporary.clone().into_os_string();
    temporary_public.push(".pub");
    let installed = status.is_ok_and(|status| status.success())
        && std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600)).is_ok()
        && std::fs::rename(&temporary, private).is_ok()
        && std::fs::rename(&temporary_public, public).is_ok();
    if installed {
        return Ok(());
    }
    let _ = std::fs::remove_file(&temporary);
    let _ = std::fs::remove_file(&temporary_public);
    Err(InputError::new(
        "no SSH key found and ssh-keygen could not make one",
        "install openssh-client, or give a public key with `--ssh-key PATH`",
    ))
}
