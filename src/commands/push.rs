//! `tfimg push IMAGE --registry HOST`: the image tagged for the registry and pushed (the
//! story is `app::push`); prints the reference by digest that a cluster should pull.

use std::process::ExitCode;

use crate::app::push;
use crate::app::settings::Settings;
use crate::cli::PushArgs;
use crate::output::progress::Reporter;

pub fn run(args: &PushArgs, settings: &Settings) -> anyhow::Result<ExitCode> {
    let target = push::target(&args.image, &args.registry)?;
    let reporter = Reporter::new(args.progress);
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        outln!(
            "{}",
            push::push(&engine, &args.image, &target, &reporter).await?
        );
        Ok(ExitCode::SUCCESS)
    })
}
