//! A root filesystem made on this machine: debootstrap from an apt mirror into a
//! temporary folder, slimmed as Docker's `-slim` images are, streamed out by GNU tar.

use std::path::Path;
use std::process::Stdio;

use anyhow::Context;
use bytes::Bytes;
use futures_util::Stream;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use tfimg_core::plan::base::BootstrapTarget;

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

/// A root filesystem in a temporary folder, removed when dropped (after unmounting what
/// debootstrap mounted inside it: never delete through a mount).
/// Where debootstrap's progress goes (the output layer's reporter): a step, then each
/// line of its output.
pub trait Steps {
    fn status(&self, message: &str);
    fn output(&self, line: &str);
}

pub struct RootFilesystem {
    scratch: Option<tempfile::TempDir>,
    root: std::path::PathBuf,
}

impl RootFilesystem {
    /// Debootstraps `target` from `mirror` (needs root and debootstrap).
    pub async fn make(
        target: &BootstrapTarget,
        mirror: &str,
        reporter: &impl Steps,
    ) -> anyhow::Result<RootFilesystem> {
        let scratch = tempfile::Builder::new()
            .prefix("tfimg-bootstrap-")
            .tempdir_in(std::env::temp_dir())
            .context("cannot create a folder for debootstrap")?;
        let root = scratch.path().join("rootfs");
        let made = RootFilesystem {
            scratch: Some(scratch),
            root,
        };
        debootstrap(target, mirror, &made.root, reporter).await?;
        slim_down(target, &made.root)?;
        Ok(made)
    }

    /// The root filesystem as a tar stream.
    pub fn tar(
        &self,
    ) -> anyhow::Result<impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static> {
        tar_stream(&self.root)
    }
}

impl Drop for RootFilesystem {
    fn drop(&mut self) {
        let Some(scratch) = self.scratch.take() else {
            return;
        };
        for mount in super::mounts_below(scratch.path()) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&mount)
                .status();
        }
        if super::mounts_below(scratch.path()).is_empty() {
            drop(scratch);
        } else {
            tracing::warn!(
                "left {} in place: something is still mounted below it",
                scratch.path().display()
            );
            let _ = scratch.keep();
        }
    }
}

async fn debootstrap(
    target: &BootstrapTarget,
    mirror: &str,
    root: &Path,
    reporter: &impl Steps,
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
