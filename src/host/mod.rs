//! Facts about this machine, read in one place: who we run as, GPUs and drivers,
//! the NVIDIA toolkit, free ports, keys. Nothing here talks to Docker.

pub mod nvidia;

/// The real uid and gid of this process, from /proc (no libc call needed).
pub fn current_ids() -> Option<(u32, u32)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u32> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("Uid:")?, field("Gid:")?))
}

/// Whether an executable is on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|folder| {
            let candidate = folder.join(program);
            candidate.is_file()
                && std::fs::metadata(&candidate)
                    .map(|meta| {
                        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0
                    })
                    .unwrap_or(false)
        })
    })
}

/// Mount points at or below `folder`, deepest first (from /proc/self/mounts).
pub fn mounts_below(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return Vec::new();
    };
    let mut found: Vec<std::path::PathBuf> = mounts
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .map(|target| std::path::PathBuf::from(target.replace("\\040", " ")))
        .filter(|target| target.starts_with(folder))
        .collect();
    found.sort_by_key(|path| std::cmp::Reverse(path.components().count()));
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_random_hex_and_ports_probe() {
        let token = super::random_hex(24).unwrap();
        assert_eq!(token.len(), 48);
        assert_ne!(token, super::random_hex(24).unwrap());
        let port = super::any_free_port("127.0.0.1").unwrap();
        let held = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        assert!(!super::port_is_free("127.0.0.1", port));
        drop(held);
    }

    #[test]
    fn private_files_are_0600_and_never_reuse_a_wider_file() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("lab.alice.env");
        let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().mode() & 0o7777;
        super::write_private(&path, b"TOKEN=one\n").unwrap();
        assert_eq!(mode(&path), 0o600);
        // A file that was there, world-readable, with a second name (what another user
        // could have kept open): the secret never goes into it.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let other_name = folder.path().join("kept");
        std::fs::hard_link(&path, &other_name).unwrap();
        super::write_private(&path, b"TOKEN=two\n").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"TOKEN=two\n");
        assert_eq!(std::fs::read(&other_name).unwrap(), b"TOKEN=one\n");
        assert_ne!(
            std::fs::metadata(&path).unwrap().ino(),
            std::fs::metadata(&other_name).unwrap().ino()
        );
        // Nothing else is left in the folder; a folder that is missing is an error.
        let names: Vec<_> = std::fs::read_dir(folder.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(super::write_private(&folder.path().join("missing/x"), b"").is_err());
    }

    #[test]
    fn ids_and_path_lookups_work_here() {
        assert!(super::current_ids().is_some());
        assert!(super::on_path("sh"));
        assert!(!super::on_path("tfimg-no-such-program"));
    }
}

/// Whether `ip:port` can be bound right now (TCP).
pub fn port_is_free(ip: &str, port: u16) -> bool {
    std::net::TcpListener::bind((ip, port)).is_ok()
}

/// A port the kernel hands out as free on `ip`.
pub fn any_free_port(ip: &str) -> Option<u16> {
    let listener = std::net::TcpListener::bind((ip, 0)).ok()?;
    listener.local_addr().ok().map(|address| address.port())
}

/// `bytes` random bytes as lowercase hex, from the kernel's CSPRNG.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buffer)?;
    Ok(buffer.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// The HTTP status of `GET path` on 127.0.0.1:`port`, or `None` when nothing answers.
/// (Just enough HTTP for a readiness probe; no client library needed.)
pub async fn http_status(port: u16, path: &str) -> Option<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let request =
            format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = vec![0u8; 64];
        let read = stream.read(&mut head).await.ok()?;
        let line = String::from_utf8_lossy(&head[..read]).into_owned();
        line.split_whitespace().nth(1)?.parse().ok()
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), probe)
        .await
        .ok()
        .flatten()
}

/// Whether an SSH server on 127.0.0.1:`port` sends its banner.
pub async fn ssh_banner(port: u16) -> bool {
    use tokio::io::AsyncReadExt;
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let mut banner = [0u8; 8];
        stream.read_exact(&mut banner).await.ok()?;
        Some(banner.starts_with(b"SSH-2.0"))
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

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

/// Free bytes on the file system holding `path` (statvfs), or `None` when unreadable.
pub fn free_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a valid NUL-terminated string and `stats` a valid out-pointer.
    let result = unsafe { libc::statvfs(path.as_ptr(), &mut stats) };
    (result == 0).then(|| stats.f_bavail as u64 * stats.f_frsize as u64)
}

/// tfimg's data folder: `$XDG_DATA_HOME/tfimg`, else `~/.local/share/tfimg`.
pub fn data_dir() -> std::path::PathBuf {
    if let Some(base) = std::env::var_os("XDG_DATA_HOME").filter(|value| !value.is_empty()) {
        return std::path::PathBuf::from(base).join("tfimg");
    }
    home_dir().join(".local/share/tfimg")
}

pub fn home_dir() -> std::path::PathBuf {
    std::env::var_os("HOME")
        .filter(|value| !value.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("/"))
}

/// The NVIDIA facts of this machine (nvidia-smi, /proc, PATH).
pub fn nvidia_facts() -> nvidia::NvidiaFacts {
    nvidia::facts(
        &run_program,
        &|path| std::fs::read_to_string(path).ok(),
        &on_path,
    )
}

/// A program's stdout when it ran and succeeded within 10 s (nvidia-smi can hang on a
/// wedged driver; a check must not).
pub fn run_program(program: &str, args: &[&str]) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut output = String::new();
                use std::io::Read;
                child.stdout.take()?.read_to_string(&mut output).ok()?;
                return status.success().then_some(output);
            }
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Writes a file that holds secrets (tokens, keys): readable by its owner only from the
/// moment it exists. The bytes go to a new file opened with mode 0600 beside `path`, which
/// then replaces `path` by a rename, so a `path` that was there with a wider mode never
/// holds the new secret and no reader ever sees half a file.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => std::path::Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temporary = folder.join(format!(".{name}.{}.{}", std::process::id(), random_hex(6)?));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// A key pair of its own for one team member (made once, kept in tfimg's data folder).
pub fn member_ssh_key(team: &str, member: &str) -> Result<SshKey, crate::input::InputError> {
    let folder = data_dir().join("teams").join(team).join(member);
    let private = folder.join("id_ed25519");
    if !private.is_file() {
        std::fs::create_dir_all(&folder).map_err(|error| {
            crate::input::InputError::new(
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
            return Err(crate::input::InputError::new(
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
pub fn ssh_key(explicit: Option<&std::path::Path>) -> Result<SshKey, crate::input::InputError> {
    use crate::input::InputError;
    let read_public = |path: &std::path::Path| -> Result<String, InputError> {
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
    };
    let private_beside = |public: &std::path::Path| {
        let private = public.with_extension("");
        (public.extension().is_some_and(|ext| ext == "pub") && private.is_file()).then_some(private)
    };
    if let Some(path) = explicit {
        let is_public = path.extension().is_some_and(|ext| ext == "pub");
        let public = if is_public {
            path.to_path_buf()
        } else {
            let mut with_pub = path.as_os_str().to_owned();
            with_pub.push(".pub");
            std::path::PathBuf::from(with_pub)
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
    let folder = data_dir().join("ssh");
    let private = folder.join("id_ed25519");
    let public = folder.join("id_ed25519.pub");
    if !public.is_file() {
        std::fs::create_dir_all(&folder).map_err(|error| {
            InputError::new(
                format!("cannot create `{}`: {error}", folder.display()),
                "check its permissions",
            )
        })?;
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700));
        // Made under a temporary name and renamed, so two `tfimg run` at once never see
        // half a key pair; the private key is 0600 (ssh-keygen's mode, made sure of).
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
            && std::fs::rename(&temporary, &private).is_ok()
            && std::fs::rename(&temporary_public, &public).is_ok();
        if !installed {
            let _ = std::fs::remove_file(&temporary);
            let _ = std::fs::remove_file(&temporary_public);
            return Err(InputError::new(
                "no SSH key found and ssh-keygen could not make one",
                "install openssh-client, or give a public key with `--ssh-key PATH`",
            ));
        }
    }
    Ok(SshKey {
        public_key: read_public(&public)?,
        identity: Some(private),
    })
}
