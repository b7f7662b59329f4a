//! Base images: the one a build starts from (the local image, else a pull through
//! `--registry-mirror` when set, else a bootstrap when asked to, else the exact command
//! that makes it), and `tfimg base bootstrap` itself (a debootstrapped root filesystem
//! imported as an image).

use std::time::Duration;

use crate::engine::prelude::Images;
use crate::host::debootstrap::{RootFilesystem, Steps};
use crate::input::InputError;
use crate::labels;
use crate::output::progress::Report;
use crate::plan::base::BootstrapTarget;
use crate::render::network::Network;

/// A pull that has not finished in this time is treated as "no registry here".
const PULL_TIMEOUT: Duration = Duration::from_secs(300);

/// The base image's id, acquiring the image first when it is missing (or `pull` asks).
pub async fn ensure_base(
    engine: &impl Images,
    reference: &str,
    network: &Network,
    pull: bool,
    bootstrap_base: bool,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<String> {
    if !pull {
        if let Some(image) = engine.image(reference).await? {
            return Ok(image.id);
        }
    }
    let source = match &network.registry_mirror {
        Some(mirror) => crate::spec::syntax::through_registry_mirror(reference, mirror),
        None => reference.to_string(),
    };
    reporter.status(&format!("pulling base image `{source}`"));
    let pulled = tokio::time::timeout(
        PULL_TIMEOUT,
        engine.pull(&source, |line| reporter.output(line)),
    )
    .await;
    let failure = match pulled {
        Ok(Ok(())) => {
            if source != reference {
                engine.tag(&source, reference).await?;
            }
            if let Some(image) = engine.image(reference).await? {
                return Ok(image.id);
            }
            "the pull finished but the image is missing".to_string()
        }
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("no answer within {} s", PULL_TIMEOUT.as_secs()),
    };
    if pull {
        if let Some(image) = engine.image(reference).await? {
            reporter.status(&format!(
                "could not pull `{source}` ({failure}); using the local image"
            ));
            return Ok(image.id);
        }
    }
    let bootstrappable = BootstrapTarget::parse(reference).ok();
    if bootstrap_base {
        if let Some(target) = &bootstrappable {
            let mirror = network
                .render
                .apt_mirror
                .clone()
                .unwrap_or_else(|| target.default_mirror.to_string());
            return bootstrap(engine, target, &mirror, reporter).await;
        }
    }
    let hint = match bootstrappable {
        Some(_) => format!(
            "make it without a registry: `tfimg base bootstrap {reference}` (or add `--bootstrap-base`), or use `--registry-mirror HOST`"
        ),
        None => "load it (`docker load`, `docker import`), use `--registry-mirror HOST`, or base the spec on an image `tfimg base bootstrap` can make (`debian:bullseye-slim`)".to_string(),
    };
    Err(InputError::new(
        format!(
            "base image `{reference}` is not on this machine and could not be pulled: {failure}"
        ),
        hint,
    )
    .into())
}

/// Debootstraps `target` from `mirror` and imports it as `target.reference`; the image id.
/// The temporary root filesystem is removed whatever happens.
pub async fn bootstrap(
    engine: &impl Images,
    target: &BootstrapTarget,
    mirror: &str,
    reporter: &(impl Report + ?Sized),
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
    let root = RootFilesystem::make(target, mirror, &Said(reporter)).await?;
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
        .import_rootfs(&target.reference, &changes, root.tar()?)
        .await?;
    Ok(id)
}

/// What `tfimg base bootstrap` did: found the image there already (without `--force`), or
/// made it; its id either way.
#[derive(Debug, PartialEq, Eq)]
pub enum Bootstrapped {
    Existing(String),
    Made(String),
}

/// `tfimg base bootstrap`'s story: `target` left as it is when it exists and `force` is
/// off, else debootstrapped from `mirror` (the flag's, else the config's, else the
/// distribution's default) and imported.
pub async fn bootstrap_unless_present(
    engine: &impl Images,
    target: &BootstrapTarget,
    mirror: Option<String>,
    force: bool,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Bootstrapped> {
    if let Some(existing) = engine.image(&target.reference).await? {
        if !force {
            return Ok(Bootstrapped::Existing(existing.id));
        }
    }
    let mirror = mirror.unwrap_or_else(|| target.default_mirror.to_string());
    let id = bootstrap(engine, target, &mirror, reporter).await?;
    Ok(Bootstrapped::Made(id))
}

/// The first 12 hex digits of an image id.
pub fn short_id(id: &str) -> &str {
    let id = id.strip_prefix("sha256:").unwrap_or(id);
    &id[..id.len().min(12)]
}

#[cfg(test)]
mod tests;

/// debootstrap's steps and lines, said through the story's report.
struct Said<'a, R: ?Sized>(&'a R);

impl<R: Report + ?Sized> Steps for Said<'_, R> {
    fn status(&self, message: &str) {
        self.0.status(message);
    }

    fn output(&self, line: &str) {
        self.0.output(line);
    }
}
