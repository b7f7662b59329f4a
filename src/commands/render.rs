//! `tfimg render SPEC [-o DIR]`: the Dockerfile on stdout, or the whole build context
//! (Dockerfile plus generated files, with their modes) written into DIR.

use std::process::ExitCode;

use anyhow::Context;

use crate::app::settings::Settings;
use crate::cli::RenderArgs;
use crate::host::archive::BuildContext;
use crate::host::Host;
use crate::input::InputError;
use crate::render;

pub fn run(args: &RenderArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let resolved = crate::app::catalog::resolve(host, &super::catalog(settings, host), &args.spec)?;
    let network = settings.network(&args.network.choices(), host)?;
    let rendered = render::render(&resolved, &network.render);
    let Some(folder) = &args.output else {
        crate::output::print_text(&rendered.dockerfile)?;
        return Ok(ExitCode::SUCCESS);
    };
    if host.exists(folder) && !host.is_folder(folder) {
        return Err(InputError::new(
            format!("`{}` exists and is not a folder", folder.display()),
            "give `-o` a folder path (it is created when missing)",
        )
        .into());
    }
    let context = BuildContext::from_rendered(&rendered, &resolved.files)?;
    // The folder (and those above it) is made by the unpacking.
    context
        .unpack_into(folder)
        .with_context(|| format!("cannot write the build context into `{}`", folder.display()))?;
    errln!(
        "wrote {} files for `{}` to {}",
        context.len(),
        resolved.name,
        folder.display()
    );
    Ok(ExitCode::SUCCESS)
}
