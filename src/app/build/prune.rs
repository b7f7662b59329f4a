//! Cleaning up after a build: the keyed tags of a spec's earlier builds, once nothing
//! else names them.

use crate::app::session::Session;
use crate::engine::prelude::Images;
use crate::host::prelude::{Clock, State};
use crate::labels;
use crate::output::progress::Report;

/// Drops the keyed tags of this spec's earlier builds once nothing else names them (no
/// `tfimg/<name>:<tensorflow>` tag left on them), so superseded images do not pile up.
/// Images a container still uses stay; failures here never fail the build.
pub async fn prune_superseded(
    engine: &impl Images,
    name: &str,
    key: &str,
    reporter: &(impl Report + ?Sized),
) {
    let label = labels::spec_filter(name);
    let Ok(images) = engine.images_with_label(&label).await else {
        return;
    };
    let repository = format!("tfimg/{name}:");
    for image in images {
        if image.labels.get(labels::BUILD_KEY).map(String::as_str) == Some(key) {
            continue;
        }
        let ours: Vec<&String> = image
            .tags
            .iter()
            .filter(|tag| tag.starts_with(&repository))
            .collect();
        let still_named = ours.iter().any(|tag| !is_keyed_tag(tag));
        if still_named || ours.len() != image.tags.len() {
            continue;
        }
        for tag in ours {
            if engine.remove_image(tag, false).await.is_ok() {
                reporter.output(&format!("removed superseded `{tag}`"));
            }
        }
    }
}

/// The hidden `tfimg prune-superseded NAME KEY` that a build starts in the background:
/// waits for running builds (they hold the images lock shared), then prunes.
pub async fn prune_after_builds(
    session: Session<'_, impl Images, impl Clock + State>,
    name: &str,
    key: &str,
) -> anyhow::Result<()> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let _images_lock = super::lock(
        host,
        super::IMAGES_LOCK,
        false,
        "waiting for builds",
        reporter,
    )
    .await?;
    prune_superseded(engine, name, key, reporter).await;
    Ok(())
}

/// `tfimg/x:2.9.3-0123456789ab`: a tag naming one build key.
fn is_keyed_tag(tag: &str) -> bool {
    tag.rsplit_once('-')
        .is_some_and(|(_, key)| key.len() == 12 && key.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests;
