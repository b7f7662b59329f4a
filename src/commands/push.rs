//! `tfimg push IMAGE --registry HOST`: tag an image for a registry (keeping its path, so
//! `tfimg/cpu-jupyter:2.9.3` becomes `HOST/tfimg/cpu-jupyter:2.9.3`), push it, and print
//! the reference by digest that a cluster should pull.

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::cli::PushArgs;
use crate::engine::prelude::*;
use crate::input::InputError;
use crate::output::progress::Reporter;

pub fn run(args: &PushArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    let registry = args.registry.trim_end_matches('/');
    if !crate::spec::syntax::valid_registry_host(registry) {
        return Err(InputError::new(
            format!("`--registry {}` is not a registry host", args.registry),
            "give a host and port such as `127.0.0.1:5000` or `registry.example.com`",
        )
        .into());
    }
    let path = args.image.split('@').next().unwrap_or(&args.image);
    let target = format!("{registry}/{path}");
    if !crate::spec::syntax::valid_image_reference(&target) {
        return Err(InputError::new(
            format!("`{target}` is not a valid image reference"),
            "push an image by its name and tag, such as `tfimg/cpu-jupyter:2.9.3`",
        )
        .into());
    }
    let reporter = Reporter::new(args.progress);
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let Some(image) = engine.image(&args.image).await? else {
            return Err(InputError::new(
                format!("no image named `{}` on this machine", args.image),
                "build it first (`tfimg build SPEC`), or check `docker images`",
            )
            .into());
        };
        engine.tag(&image.id, &target).await?;
        reporter.status(&format!("pushing `{target}`"));
        let digest = engine.push(&target, |line| reporter.output(line)).await?;
        reporter.clear();
        let repository = crate::spec::syntax::split_reference(&target).0.to_string();
        println!("{repository}@{digest}");
        Ok(ExitCode::SUCCESS)
    })
}
