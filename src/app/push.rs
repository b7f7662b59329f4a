//! `tfimg push IMAGE --registry HOST`'s story: the registry and the reference it makes
//! checked (before the engine is asked anything), the image found, tagged for the
//! registry (keeping its path, so `tfimg/cpu-jupyter:2.9.3` becomes
//! `HOST/tfimg/cpu-jupyter:2.9.3`) and pushed; the reference by digest a cluster should pull.

use crate::engine::Engine;
use crate::input::InputError;
use crate::output::progress::Reporter;
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
    engine: &impl Engine,
    image: &str,
    target: &str,
    reporter: &Reporter,
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
mod tests {
    use super::*;
    use crate::app::testing::block_on;
    use crate::cli::Progress;
    use crate::engine::fake::FakeEngine;

    #[test]
    fn the_target_keeps_the_image_s_path_under_the_registry() {
        let target = target("tfimg/cpu-jupyter:2.9.3@sha256:abc", "127.0.0.1:5000/");
        assert_eq!(target.unwrap(), "127.0.0.1:5000/tfimg/cpu-jupyter:2.9.3");
    }

    #[test]
    fn a_registry_that_is_not_a_host_is_refused_before_the_engine() {
        let error = target("tfimg/lab:1", "not a host").unwrap_err();
        assert_eq!(
            error.to_string(),
            "`--registry not a host` is not a registry host"
        );
    }

    #[test]
    fn an_image_missing_here_is_refused_and_nothing_is_tagged() {
        let engine = FakeEngine::new();
        let reporter = Reporter::new(Progress::Plain);
        let error = block_on(push(
            &engine,
            "tfimg/lab:1",
            "r:5000/tfimg/lab:1",
            &reporter,
        ));
        let error = error.unwrap_err().to_string();
        assert_eq!(error, "no image named `tfimg/lab:1` on this machine");
        assert!(engine.calls_to("tag").is_empty());
    }

    #[test]
    fn the_image_is_tagged_for_the_registry_before_the_push() {
        let engine = FakeEngine::new();
        let id = engine.add_image(&["tfimg/lab:1"], &[]);
        let reporter = Reporter::new(Progress::Plain);
        let pushed = block_on(push(
            &engine,
            "tfimg/lab:1",
            "r:5000/tfimg/lab:1",
            &reporter,
        ));
        // The fake engine's registry is unreachable: the push itself fails.
        assert!(pushed.is_err());
        assert_eq!(
            engine.calls_to("tag"),
            [format!("tag {id} r:5000/tfimg/lab:1")]
        );
        assert_eq!(engine.calls_to("push"), ["push r:5000/tfimg/lab:1"]);
    }
}
