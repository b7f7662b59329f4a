//! The gateway's image: nginx from Debian's packages, built like a spec's image through
//! the same network settings.

use crate::app::build::Network;
use crate::engine::prelude::{Builds, Images};
use crate::engine::BuildRequest;
use crate::host::archive::BuildContext;
use crate::input::InputError;
use crate::output::progress::Report;
use crate::render::{self, dockerfile::GATEWAY_BASE};
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
    let context = BuildContext::from_rendered(&rendered, &[])?;
    let key = crate::plan::image::build_key(&rendered.dockerfile, &context.digest()?, &base_id);
    let tag = format!("{GATEWAY_IMAGE}:{}", &key[..12]);
    if engine.image(&tag).await?.is_some() {
        return Ok(Some(tag));
    }
    if only_check {
        return Ok(None);
    }
    reporter.status(&format!(
        "building the gateway image `{tag}` (nginx from `{base}`)"
    ));
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
            engine.tag(&id, &format!("{GATEWAY_IMAGE}:latest")).await?;
            Ok(Some(tag))
        }
        Err(failure) => Err(InputError::new(
            format!("the gateway image did not build: {}", failure.message),
            "nginx comes from Debian's packages: check `--apt-mirror` and `--ca-cert` (the ones spec builds use)",
        )
        .into()),
    }
}
