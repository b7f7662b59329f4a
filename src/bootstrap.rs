//! Registry-free base images: debootstrap a Debian or Ubuntu root filesystem from an apt
//! mirror, pack it with tar and import it as an image (image create, `fromSrc=-`).

use std::path::Path;
use std::process::Stdio;

use anyhow::Context;
use bytes::Bytes;
use futures_util::Stream;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::engine::Engine;
use crate::input::InputError;
use crate::labels;
use crate::output::progress::Reporter;

/// What to debootstrap for an image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapTarget {
    pub reference: String,
    pub distribution: &'static str,
    pub suite: &'static str,
    pub default_mirror: &'static str,
    /// `-slim` tags drop documentation, man pages and locales, as Docker's do.
    pub slim: bool,
}

const DEBIAN_SUITES: &[(&str, &str)] = &[
    ("buster", "buster"),
    ("10", "buster"),
    ("bullseye", "bullseye"),
    ("11", "bullseye"),
    ("bookworm", "bookworm"),
    ("12", "bookworm"),
    ("trixie", "trixie"),
    ("13", "trixie"),
];

const UBUNTU_SUITES: &[(&str, &str)] = &[
    ("20.04", "focal"),
    ("focal", "focal"),
    ("22.04", "jammy"),
    ("jammy", "jammy"),
    ("24.04", "noble"),
    ("noble", "noble"),
];

impl BootstrapTarget {
    /// `debian:bullseye-slim`, `debian:11`, `docker.io/library/debian:bookworm`,
    /// `ubuntu:22.04`, ...
    pub fn parse(reference: &str) -> Result<BootstrapTarget, InputError> {
        let unknown = || {
            InputError::new(
                format!("tfimg cannot bootstrap `{reference}`"),
                "bootstrap takes Debian (`debian:bullseye-slim`, `debian:bookworm`, `debian:11`) or Ubuntu (`ubuntu:20.04`, `ubuntu:22.04`, `ubuntu:24.04`) references",
            )
        };
        let (repository, tag) = reference.rsplit_once(':').ok_or_else(unknown)?;
        // The last path segment names the distribution, so `team/debian:11` works too.
        let name = repository.rsplit('/').next().unwrap_or(repository);
        let (tag_base, slim) = match tag.strip_suffix("-slim") {
            Some(base) => (base, true),
            None => (tag, false),
        };
        let (distribution, table, mirror): (&'static str, &[(&str, &'static str)], &'static str) =
            match name {
                "debian" => ("debian", DEBIAN_SUITES, "http://deb.debian.org/debian"),
                "ubuntu" => ("ubuntu", UBUNTU_SUITES, "http://archive.ubuntu.com/ubuntu"),
                _ => return Err(unknown()),
            };
        // `11.6` and `11` both mean bullseye.
        let release = if distribution == "debian" {
            tag_base.split('.').next().unwrap_or(tag_base)
        } else {
            tag_base
        };
        let suite = table
            .iter()
            .find(|(name, _)| *name == release)
            .map(|(_, suite)| *suite)
            .ok_or_else(unknown)?;
        Ok(BootstrapTarget {
            reference: reference.to_string(),
            distribution,
            suite,
            default_mirror: mirror,
            slim,
        })
    }
}

/// dpkg settings of Docker's `-slim` images: documentation, man pages and locales are
/// never unpacked (copyright files are kept).
const SLIM_DPKG_CONFIG: &str = "\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
";

/// Runs debootstrap into a temporary folder, imports the result as `target.reference`, and
/// removes the folder whatever happens. Returns the image id.
pub async fn bootstrap(
    engine: &impl Engine,
    target: &BootstrapTarget,
    mirror: &str,
    reporter: &Reporter,
) -> anyhow::Result<String> {
    if !crate::host::on_path("debootstrap") {
        return Err(InputError::new(
            "debootstrap is not installed",
            "install it: `sudo apt-get install debootstrap` (Debian/Ubuntu)",
        )
        .into());
    }
    if crate::host::current_ids().map(|(uid, _)| uid) != Some(0) {
        return Err(InputError::new(
            "debootstrap needs root to create a root filesystem",
            format!("run `sudo tfimg base bootstrap {}`", target.reference),
        )
        .into());
    }
    let scratch = tempfile::Builder::new()
        .prefix("tfimg-bootstrap-")
        .tempdir_in(std::env::temp_dir())
        .context("cannot create a folder for debootstrap")?;
    let root = scratch.path().join("rootfs");
    let outcome = async {
        debootstrap(target, mirror, &root, reporter).await?;
        slim_down(target, &root)?;
        reporter.status(&format!(
            "importing the root filesystem as `{}`",
            target.reference
        ));
        let changes = vec![
            format!(
                "LABEL {}=\"{} {} from {mirror}\"",
                labels::BOOTSTRAP,
                target.distribution,
                target.suite
            ),
            "CMD [\"bash\"]".to_string(),
        ];
        let id = engine
            .import_rootfs(&target.reference, &changes, tar_stream(&root)?)
            .await?;
        anyhow::Ok(id)
    }
    .await;
    // debootstrap mounts /proc and /sys inside the target; never delete through a mount.
    for mount in crate::host::mounts_below(scratch.path()) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&mount)
            .status();
    }
    if crate::host::mounts_below(scratch.path()).is_empty() {
        drop(scratch);
    } else {
        tracing::warn!(
            "left {} in place: something is still mounted below it",
            scratch.path().display()
        );
        let _ = scratch.keep();
    }
    outcome
}

async fn debootstrap(
    target: &BootstrapTarget,
    mirror: &str,
    root: &Path,
    reporter: &Reporter,
) -> anyhow::Result<()> {
    reporter.status(&format!(
        "debootstrap {} ({} {}) from {mirror}",
        target.reference, target.distribution, target.suite
    ));
    let mut child = tokio::process::Command::new("debootstrap")
        .arg("--variant=minbase")
        .arg(target.suite)
        .arg(root)
        .arg(mirror)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start debootstrap")?;
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    let mut tail: Vec<String> = Vec::new();
    while let Some(line) = lines.next_line().await? {
        reporter.output(&line);
        tail.push(line);
        if tail.len() > 15 {
            tail.remove(0);
        }
    }
    let mut errors = String::new();
    stderr.read_to_string(&mut errors).await?;
    let status = child.wait().await?;
    if !status.success() {
        let log = root.join("debootstrap/debootstrap.log");
        let log_tail = std::fs::read_to_string(&log)
            .map(|text| {
                text.lines()
                    .rev()
                    .take(10)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        anyhow::bail!(
            "debootstrap of {} from {mirror} failed ({status}):\n{}\n{}{}",
            target.suite,
            tail.join("\n"),
            errors.trim(),
            if log_tail.is_empty() {
                String::new()
            } else {
                format!("\n{log_tail}")
            }
        );
    }
    Ok(())
}

fn slim_down(target: &BootstrapTarget, root: &Path) -> anyhow::Result<()> {
    for folder in ["var/cache/apt/archives", "var/lib/apt/lists"] {
        remove_contents(&root.join(folder), |name| {
            name != "lock" && name != "partial"
        })?;
    }
    if target.slim {
        std::fs::write(
            root.join("etc/dpkg/dpkg.cfg.d/tfimg-slim"),
            SLIM_DPKG_CONFIG,
        )?;
        for folder in [
            "usr/share/man",
            "usr/share/info",
            "usr/share/locale",
            "usr/share/groff",
            "usr/share/lintian",
        ] {
            remove_contents(&root.join(folder), |_| true)?;
        }
        // Keep each package's copyright file, as dpkg's path-include does.
        let docs = root.join("usr/share/doc");
        if let Ok(entries) = std::fs::read_dir(&docs) {
            for entry in entries.flatten() {
                let package = entry.path();
                if package.is_dir() {
                    remove_contents(&package, |name| name != "copyright")?;
                }
            }
        }
    }
    Ok(())
}

fn remove_contents(folder: &Path, keep_unless: impl Fn(&str) -> bool) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !keep_unless(&name) {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() && !kind.is_symlink() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// The root filesystem as a tar stream. GNU tar keeps what a root filesystem needs (device
/// nodes, hard links, numeric owners, extended attributes).
fn tar_stream(
    root: &Path,
) -> anyhow::Result<impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static> {
    let mut child = tokio::process::Command::new("tar")
        .arg("--numeric-owner")
        .arg("--xattrs")
        .arg("-C")
        .arg(root)
        .arg("-c")
        .arg(".")
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start tar")?;
    let stdout = child.stdout.take().expect("piped");
    let stream = futures_util::stream::unfold(
        (stdout, Some(child)),
        |(mut stdout, mut child)| async move {
            let mut buffer = vec![0u8; 256 * 1024];
            match stdout.read(&mut buffer).await {
                Ok(0) => {
                    let status = match child.take() {
                        Some(mut child) => child.wait().await,
                        None => return None,
                    };
                    match status {
                        Ok(status) if status.success() => None,
                        Ok(status) => Some((
                            Err(std::io::Error::other(format!("tar failed: {status}"))),
                            (stdout, None),
                        )),
                        Err(error) => Some((Err(error), (stdout, None))),
                    }
                }
                Ok(read) => {
                    buffer.truncate(read);
                    Some((Ok(Bytes::from(buffer)), (stdout, child)))
                }
                Err(error) => Some((Err(error), (stdout, None))),
            }
        },
    );
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_map_to_suites() {
        let target = BootstrapTarget::parse("debian:bullseye-slim").unwrap();
        assert_eq!(
            (target.distribution, target.suite, target.slim),
            ("debian", "bullseye", true)
        );
        assert_eq!(
            BootstrapTarget::parse("debian:11").unwrap().suite,
            "bullseye"
        );
        assert_eq!(
            BootstrapTarget::parse("debian:12.5-slim").unwrap().suite,
            "bookworm"
        );
        assert_eq!(
            BootstrapTarget::parse("docker.io/library/debian:bookworm")
                .unwrap()
                .suite,
            "bookworm"
        );
        let ubuntu = BootstrapTarget::parse("ubuntu:22.04").unwrap();
        assert_eq!(
            (ubuntu.suite, ubuntu.default_mirror),
            ("jammy", "http://archive.ubuntu.com/ubuntu")
        );
        assert_eq!(
            BootstrapTarget::parse("lab/debian:11").unwrap().suite,
            "bullseye"
        );
        assert!(BootstrapTarget::parse("alpine:3.19").is_err());
        assert!(BootstrapTarget::parse("debian").is_err());
        assert!(BootstrapTarget::parse("debian:sid").is_err());
    }
}
