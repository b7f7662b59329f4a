//! `tfimg render SPEC [-o DIR]`: the Dockerfile on stdout, or the whole build context
//! (Dockerfile plus generated files, with their modes) written into DIR.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::ExitCode;

use anyhow::Context;

use crate::cli::RenderArgs;
use crate::error::InputError;
use crate::{render, spec};

pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let resolved = spec::resolve(&super::catalog(), &args.spec)?;
    let network = crate::config::network(&args.network, &crate::config::load_config()?)?;
    let rendered = render::render(&resolved, &network.render);
    let Some(folder) = &args.output else {
        crate::output::print_text(&rendered.dockerfile)?;
        return Ok(ExitCode::SUCCESS);
    };
    if folder.exists() && !folder.is_dir() {
        return Err(InputError::new(
            format!("`{}` exists and is not a folder", folder.display()),
            "give `-o` a folder path (it is created when missing)",
        )
        .into());
    }
    fs::create_dir_all(folder).with_context(|| format!("cannot create `{}`", folder.display()))?;
    let mut written = vec![(
        "Dockerfile".to_string(),
        rendered.dockerfile.into_bytes(),
        0o644,
    )];
    written.extend(
        rendered
            .files
            .into_iter()
            .map(|(name, file)| (name, file.contents, file.mode)),
    );
    for (name, contents, mode) in &written {
        let path = folder.join(name);
        fs::write(&path, contents).with_context(|| format!("cannot write `{}`", path.display()))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(*mode))
            .with_context(|| format!("cannot set the mode of `{}`", path.display()))?;
    }
    eprintln!(
        "wrote {} files for `{}` to {}",
        written.len(),
        resolved.name,
        folder.display()
    );
    Ok(ExitCode::SUCCESS)
}
