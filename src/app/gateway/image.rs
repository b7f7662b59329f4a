//! The gateway's image: nginx from Debian's packages, built like a spec's image through
//! the same network settings.

use crate::app::build::Network;
use crate::engine::prelude::{Builds, Images};
use crate::engine::BuildRequest;
use crate::host::archive::BuildContext;
use crate::input::InputError;
use crate::output::progress::Report;
use crate::render::{self, dockerfile::GATEWAY_BASE, Rendered};
use crate::team::gateway::nginx::GATEWAY_IMAGE;

/// The gateway's image for `network` (its apt mirror and CA, as spec builds use them):
/// the existing one, or one built from the registry-free Debian base and also tagged
/// `tfimg/gateway:latest`. Its tag carries the build key, so a changed mirror, CA or base
/// is a new image. With `only_check`, `None` instead of a build (or a missing base).
pub async fn image(
    engine: &(impl Images + Builds),
    network: &Network,
    only_check: bool,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Option<String>> {
    let base = GATEWAY_BASE;
    let base_id = if only_check {
        match engine.image(base).await? {
            Some(found) => found.id,
            None => return Ok(None),
        }
    } else {
        crate::app::base::ensure_base(engine, base, network, false, false, reporter)
            .await
            .map_err(|error| {
                anyhow::Error::from(InputError::new(
                    format!("the gateway image needs `{base}`: {error:#}"),
                    format!(
                        "make it with `tfimg base bootstrap {base}`, or load it (`docker load`)"
                    ),
                ))
            })?
    };
    let rendered = render::dockerfile::gateway(&network.render);
    let tag = keyed_tag(&rendered, &base_id, GATEWAY_IMAGE)?;
    if engine.image(&tag).await?.is_some() {
        return Ok(Some(tag));
    }
    if only_check {
        return Ok(None);
    }
    let built = build_keyed(
        engine,
        network,
        &rendered,
        &base_id,
        GATEWAY_IMAGE,
        &Built {
            what: &format!("the gateway image (nginx from `{base}`)"),
            hint: "nginx comes from Debian's packages: check `--apt-mirror` and `--ca-cert` (the ones spec builds use)",
        },
        reporter,
    )
    .await?;
    engine
        .tag(&built, &format!("{GATEWAY_IMAGE}:latest"))
        .await?;
    Ok(Some(built))
}

/// `repository:<build key>` of `rendered` on `base_id`: the key covers the Dockerfile, the
/// context and the base, so a changed mirror, CA or base is a new image.
pub fn keyed_tag(rendered: &Rendered, base_id: &str, repository: &str) -> anyhow::Result<String> {
    let context = BuildContext::from_rendered(rendered, &[])?;
    let key = crate::plan::image::build_key(&rendered.dockerfile, &context.digest()?, base_id);
    Ok(format!("{repository}:{}", &key[..12]))
}

/// What a keyed build makes, for its messages: `building WHAT: TAG`, `WHAT did not
/// build: ...` with `hint`.
pub struct Built<'a> {
    pub what: &'a str,
    pub hint: &'a str,
}

/// `rendered` (an image tfimg makes besides specs': the gateway's, the hub's) built on
/// `base_id` through the build network's proxies and tagged with its `keyed_tag`, unless
/// that image exists; the tag.
pub async fn build_keyed(
    engine: &(impl Images + Builds),
    network: &Network,
    rendered: &Rendered,
    base_id: &str,
    repository: &str,
    built: &Built<'_>,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<String> {
    let tag = keyed_tag(rendered, base_id, repository)?;
    if engine.image(&tag).await?.is_some() {
        return Ok(tag);
    }
    let context = BuildContext::from_rendered(rendered, &[])?;
    reporter.status(&format!("building {}: `{tag}`", built.what));
    let request = BuildRequest {
        build_args: network.proxy_build_args.clone().into_iter().collect(),
        no_cache: false,
    };
    match engine
        .build(&request, context.into_stream(), |_| {})
        .await?
    {
        Ok(id) => {
            engine.tag(&id, &tag).await?;
            Ok(tag)
        }
        Err(failure) => Err(InputError::new(
            format!("{} did not build: {}", built.what, failure.message),
            built.hint,
        )
        .into()),
    }
}
