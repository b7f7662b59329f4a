//! The hub's images: JupyterHub's own (from the registry-free Debian 12 base), and each
//! hub member's server (her spec's image with the hub's single-user server), built like a
//! spec's image through the same network settings, each tagged with its build key so a
//! changed mirror, CA, base or spec image is a new image.

use crate::app::build::Network;
use crate::engine::prelude::{Builds, Images};
use crate::engine::BuildRequest;
use crate::host::archive::BuildContext;
use crate::input::InputError;
use crate::output::progress::Report;
use crate::render::dockerfile::hub::{self, HUB_BASE};
use crate::render::Rendered;
use crate::spec::ResolvedSpec;

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
    build(
        engine,
        network,
        &rendered,
        &base_id,
        HUB_IMAGE,
        &format!("the hub's image (JupyterHub from `{HUB_BASE}`)"),
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
    let tag = build(
        engine,
        network,
        &rendered,
        &base_id,
        MEMBER_IMAGE,
        &format!("the hub's server image for `{spec_image}`"),
        reporter,
    )
    .await?;
    engine.tag(&tag, &member_moving_tag(spec)).await?;
    Ok(tag)
}

/// `rendered` built on `base_id` and tagged `repository:<build key>`, unless that image
/// exists.
async fn build(
    engine: &(impl Images + Builds),
    network: &Network,
    rendered: &Rendered,
    base_id: &str,
    repository: &str,
    what: &str,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<String> {
    let context = BuildContext::from_rendered(rendered, &[])?;
    let key = crate::plan::image::build_key(&rendered.dockerfile, &context.digest()?, base_id);
    let tag = format!("{repository}:{}", &key[..12]);
    if engine.image(&tag).await?.is_some() {
        return Ok(tag);
    }
    reporter.status(&format!("building {what}: `{tag}`"));
    let request = BuildRequest {
        build_args: network.proxy_build_args.clone().into_iter().collect(),
        no_cache: false,
    };
    let built = engine
        .build(&request, context.into_stream(), |_| {})
        .await?;
    match built {
        Ok(id) => {
            engine.tag(&id, &tag).await?;
            Ok(tag)
        }
        Err(failure) => Err(InputError::new(
            format!("{what} did not build: {}", failure.message),
            "its packages come from Debian, PyPI and npm: check `--apt-mirror`, `--pip-index-url` and `--ca-cert` (the ones spec builds use)",
        )
        .into()),
    }
}
