//! The hub's images: JupyterHub's own (from the registry-free Debian 12 base), and each
//! hub member's server (her spec's image with the hub's single-user server), built like a
//! spec's image through the same network settings, each tagged with its build key so a
//! changed mirror, CA, base or spec image is a new image.

use crate::app::build::Network;
use crate::app::gateway::image::{build_keyed, Built};
use crate::engine::prelude::{Builds, Images};
use crate::input::InputError;
use crate::output::progress::Report;
use crate::render::dockerfile::hub::{self, HUB_BASE};
use crate::spec::ResolvedSpec;

/// Where a failed build's packages come from.
const HINT: &str = "its packages come from Debian, PyPI and npm: check `--apt-mirror`, `--pip-index-url` and `--ca-cert` (the ones spec builds use)";

/// The hub's image and a member's, by repository.
pub const HUB_IMAGE: &str = "tfimg/hub";
pub const MEMBER_IMAGE: &str = "tfimg/hub-member";

/// The hub's image for `network`: the existing one, or one built from the registry-free
/// Debian 12 base.
pub async fn image(
    engine: &(impl Images + Builds),
    network: &Network,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<String> {
    let base_id = crate::app::base::ensure_base(engine, HUB_BASE, network, false, false, reporter)
        .await
        .map_err(|error| {
            anyhow::Error::from(InputError::new(
                format!("the hub's image needs `{HUB_BASE}`: {error:#}"),
                format!(
                    "make it with `tfimg base bootstrap {HUB_BASE}`, or load it (`docker load`)"
                ),
            ))
        })?;
    let rendered = hub::hub(&network.render);
    build_keyed(
        engine,
        network,
        &rendered,
        &base_id,
        HUB_IMAGE,
        &Built {
            what: &format!("the hub's image (JupyterHub from `{HUB_BASE}`)"),
            hint: HINT,
        },
        reporter,
    )
    .await
}

/// The moving tag of `spec`'s hub server image, which exports name (the keyed tag names
/// one build): `tfimg/hub-member:cpu-jupyter-2.9.3`.
pub fn member_moving_tag(spec: &ResolvedSpec) -> String {
    format!("{MEMBER_IMAGE}:{}-{}", spec.name, spec.tensorflow)
}

/// A hub member's server image: `spec_image` (`spec`'s, built) with the hub's single-user
/// server and jupyter-server-proxy; also tagged with its moving tag.
pub async fn member_image(
    engine: &(impl Images + Builds),
    network: &Network,
    spec: &ResolvedSpec,
    spec_image: &str,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<String> {
    let user = spec.user.as_str();
    let base_id = match engine.image(spec_image).await? {
        Some(found) => found.id,
        None => anyhow::bail!("the image `{spec_image}` was not built before the hub's"),
    };
    let rendered = hub::member(spec_image, user, &network.render);
    let tag = build_keyed(
        engine,
        network,
        &rendered,
        &base_id,
        MEMBER_IMAGE,
        &Built {
            what: &format!("the hub's server image for `{spec_image}`"),
            hint: HINT,
        },
        reporter,
    )
    .await?;
    engine.tag(&tag, &member_moving_tag(spec)).await?;
    Ok(tag)
}
