//! `tfimg base bootstrap REF`, and the base-image step of `tfimg build`: use the local
//! image, else pull it (through `--registry-mirror` when set), else bootstrap it when
//! asked to, else say exactly which command makes it.

use std::process::ExitCode;
use std::time::Duration;

use crate::bootstrap::{self, BootstrapTarget};
use crate::cli::{BootstrapArgs, Progress};
use crate::config::{self, Network};
use crate::engine::prelude::*;
use crate::engine::{Docker, Engine};
use crate::input::InputError;
use crate::output::progress::Reporter;

/// A pull that has not finished in this time is treated as "no registry here".
const PULL_TIMEOUT: Duration = Duration::from_secs(300);

pub fn run(args: &BootstrapArgs) -> anyhow::Result<ExitCode> {
    let target = BootstrapTarget::parse(&args.reference)?;
    let config = config::load_config()?;
    let mirror = args
        .mirror
        .clone()
        .or(config.apt_mirror)
        .unwrap_or_else(|| target.default_mirror.to_string());
    super::runtime()?.block_on(async {
        let engine = Docker::connect().await?;
        if let Some(existing) = engine.image(&target.reference).await? {
            if !args.force {
                eprintln!(
                    "`{}` already exists ({}); `--force` replaces it",
                    target.reference,
                    short_id(&existing.id)
                );
                println!("{}", target.reference);
                return Ok(ExitCode::SUCCESS);
            }
        }
        let reporter = Reporter::new(Progress::Auto);
        let id = bootstrap::bootstrap(&engine, &target, &mirror, &reporter).await?;
        reporter.clear();
        eprintln!(
            "bootstrapped `{}` ({}) in {:.0} s",
            target.reference,
            short_id(&id),
            reporter.elapsed().as_secs_f64()
        );
        println!("{}", target.reference);
        Ok(ExitCode::SUCCESS)
    })
}

/// The base image's id, acquiring the image first when it is missing (or `pull` asks).
pub(crate) async fn ensure_base(
    engine: &impl Engine,
    reference: &str,
    network: &Network,
    pull: bool,
    bootstrap_base: bool,
    reporter: &Reporter,
) -> anyhow::Result<String> {
    if !pull {
        if let Some(image) = engine.image(reference).await? {
            return Ok(image.id);
        }
    }
    let source = match &network.registry_mirror {
        Some(mirror) => config::through_registry_mirror(reference, mirror),
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
            return bootstrap::bootstrap(engine, target, &mirror, reporter).await;
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

pub(crate) fn short_id(id: &str) -> &str {
    let id = id.strip_prefix("sha256:").unwrap_or(id);
    &id[..id.len().min(12)]
}
