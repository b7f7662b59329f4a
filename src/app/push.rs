//! `tfimg push IMAGE --registry HOST`'s story: the registry and the reference it makes
//! checked (before the engine is asked anything), the image found, tagged for the
//! registry (keeping its path, so `tfimg/cpu-jupyter:2.9.3` becomes
//! `HOST/tfimg/cpu-jupyter:2.9.3`) and pushed; the reference by digest a cluster should pull.

use crate::engine::prelude::Images;
use crate::input::InputError;
use crate::output::progress::Report;
use crate::spec::syntax;

/// Where `image` goes in `registry`: `registry/path` (a digest left off), checked.
pub fn target(image: &str, registry: &str) -> Result<String, InputError> {
    let host = registry.trim_end_matches('/');
    if !syntax::valid_registry_host(host) {
        return Err(InputError::new(
            format!("`--registry {registry}` is not a registry host"),
            "give a host and port such as `127.0.0.1:5000` or `registry.example.com`",
        ));
    }
    let path = image.split('@').next().unwrap_or(image);
    let target = format!("{host}/{path}");
    if !syntax::valid_image_reference(&target) {
        return Err(InputError::new(
            format!("`{target}` is not a valid image reference"),
            "push an image by its name and tag, such as `tfimg/cpu-jupyter:2.9.3`",
        ));
    }
    Ok(target)
}

/// `image` tagged as `target` and pushed; `REPOSITORY@DIGEST` of what was pushed.
pub async fn push(
    engine: &impl Images,
    image: &str,
    target: &str,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<String> {
    let Some(facts) = engine.image(image).await? else {
        return Err(InputError::new(
            format!("no image named `{image}` on this machine"),
            "build it first (`tfimg build SPEC`), or check `docker images`",
        )
        .into());
    };
    engine.tag(&facts.id, target).await?;
    reporter.status(&format!("pushing `{target}`"));
    let digest = engine.push(target, |line| reporter.output(line)).await?;
    reporter.clear();
    let repository = syntax::split_reference(target).0;
    Ok(format!("{repository}@{digest}"))
}

#[cfg(test)]
mod tests;
