//! `tfimg sweep FILE --k8s -o DIR [--registry HOST] [--volume-size SIZE]`: the sweep as
//! Kubernetes manifests in `DIR/<sweep>.yaml` (`sweep::k8s` makes them). No daemon and no
//! host fact is needed: the image is named as `tfimg build` tags it, the slots come from
//! the file alone. Everything is checked before the folder is made.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::cli::SweepRunArgs;
use crate::host::Host;
use crate::input::InputError;
use crate::sweep::k8s::{self, K8sOptions};
use crate::sweep::trials::command_line;
use crate::sweep::ImageSource;

pub(super) fn export(
    args: &SweepRunArgs,
    file: &Path,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let folder = args.output.as_deref().expect("clap: `--k8s` requires `-o`");
    k8s::check_flags(args.registry.as_deref(), &args.volume_size)?;
    if folder.exists() && !folder.is_dir() {
        return Err(InputError::new(
            format!("`-o {}` is a file, not a folder", folder.display()),
            "name a folder for the manifests (it is made when missing)",
        )
        .into());
    }
    let (sweep, spec) = super::load(file)?;
    let image = match (&spec, &sweep.source) {
        (Some(spec), _) => spec.image_reference(),
        (None, ImageSource::Image { reference, .. }) => reference.clone(),
        (None, ImageSource::Spec { name, .. }) => anyhow::bail!("spec `{name}` was not resolved"),
    };
    let trials = sweep.trials();
    let options = K8sOptions {
        file: file.display().to_string(),
        image,
        registry: args.registry.clone(),
        volume_size: args.volume_size.clone(),
    };
    let export = k8s::export(&sweep, &trials, &options)?;
    super::print_warnings(&sweep, spec.as_ref());
    for note in &export.notes {
        eprintln!("note: {note}");
    }
    // The folders above it are made.
    let path = folder.join(format!("{}.yaml", sweep.name));
    host.write_file(&path, export.manifests.as_bytes())
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    let gpus = match sweep.pool.gpus {
        crate::sweep::GpuPool::Cpu => String::new(),
        _ => format!(", {} GPU(s) each", sweep.pool.gpus_per_trial),
    };
    eprintln!(
        "wrote `{}`: Job `{}` ({} trial(s) by completion index, {} at once{gpus}, image `{}`), ConfigMap `{}` (each index's trial), PersistentVolumeClaim `{}` ({} ReadWriteMany: the trials' folders)",
        path.display(),
        export.job,
        export.completions,
        export.parallelism,
        export.image,
        export.config_map,
        export.claim,
        args.volume_size
    );
    let folder_text = folder.display().to_string();
    eprintln!(
        "start it with: {}",
        command_line(&["kubectl", "apply", "-f", &folder_text].map(String::from))
    );
    Ok(ExitCode::SUCCESS)
}
