//! What `tfimg sweep` writes besides running: the sweep as Kubernetes manifests
//! (`--k8s -o DIR`, made by `sweep::k8s`: an Indexed Job, or for a sweep that learns a Katib
//! Experiment; no daemon, the image named as `tfimg build` tags
//! it, every check before the folder is made) and the HTML report of a sweep's folder
//! (`report`, drawn by `sweep::report`). Both are written through the host.

use std::path::{Path, PathBuf};

use super::file::load;
use super::unwatched::look_named;
use crate::app::session::Sinks;
use crate::engine::prelude::{Containers, Daemon};
use crate::host::prelude::{Clock, Confined, FileWrites, Files, State, Trust};
use crate::input::InputError;
use crate::notice::Notice;
use crate::output::ui::Ui;
use crate::spec::Catalog;
use crate::sweep::k8s::{self, katib, K8sOptions};
use crate::sweep::trials::command_line;
use crate::sweep::{report, GpuPool, ImageSource};

/// The report's file name in the sweep's folder.
pub const REPORT_FILE: &str = "report.html";

/// `tfimg sweep FILE --k8s`'s flags.
#[derive(Debug, Clone)]
pub struct K8sRequest {
    /// The sweep file as the user named it.
    pub file: PathBuf,
    /// `-o`: the folder of the manifests (made when missing).
    pub folder: PathBuf,
    pub registry: Option<String>,
    pub volume_size: String,
}

/// Writes the sweep of `request.file` as `FOLDER/<sweep>.yaml`, and says what it holds
/// and how to start it.
pub fn k8s_export(
    host: &(impl Files + Confined),
    catalog: &Catalog,
    request: &K8sRequest,
    ui: &(impl Ui + ?Sized),
) -> anyhow::Result<()> {
    let folder = &request.folder;
    k8s::check_flags(request.registry.as_deref(), &request.volume_size)?;
    if host.exists(folder) && !host.is_folder(folder) {
        return Err(InputError::new(
            format!("`-o {}` is a file, not a folder", folder.display()),
            "name a folder for the manifests (it is made when missing)",
        )
        .into());
    }
    let loaded = load(host, catalog, &request.file)?;
    let (sweep, spec) = (&loaded.sweep, &loaded.spec);
    let image = match (spec, &sweep.source) {
        (Some(spec), _) => spec.image_reference(),
        (None, ImageSource::Image { reference, .. }) => reference.clone(),
        (None, ImageSource::Spec { name, .. }) => anyhow::bail!("spec `{name}` was not resolved"),
    };
    let options = K8sOptions {
        file: request.file.display().to_string(),
        image,
        registry: request.registry.clone(),
        volume_size: request.volume_size.clone(),
    };
    if k8s::learns(sweep) {
        let text = crate::app::catalog::sweep_text(host, &request.file)?;
        let export = katib::export(sweep, &text, &options)?;
        for warning in loaded.warnings() {
            ui.notice(&warning);
        }
        for note in &export.notes {
            ui.notice(&Notice::note(note.clone()));
        }
        let path = write(host, folder, &sweep.name, &export.manifests)?;
        let early = export
            .early_stopping
            .map_or(String::new(), |name| format!(" with {name} early stopping"));
        ui.note(&format!(
            "wrote `{}`: Katib Experiment `{}` ({}{early}, {} trial(s), {} at once{}, image `{}`)",
            path.display(),
            export.experiment,
            export.algorithm,
            export.max_trials,
            export.parallel,
            gpus_each(sweep),
            export.image,
        ));
        return start(folder, ui, " (Katib must be installed on the cluster)");
    }
    let trials = sweep.trials();
    let export = k8s::export(sweep, &trials, &options)?;
    for warning in loaded.warnings() {
        ui.notice(&warning);
    }
    for note in &export.notes {
        ui.notice(&Notice::note(note.clone()));
    }
    let path = write(host, folder, &sweep.name, &export.manifests)?;
    let gpus = gpus_each(sweep);
    ui.note(&format!(
        "wrote `{}`: Job `{}` ({} trial(s) by completion index, {} at once{gpus}, image `{}`), ConfigMap `{}` (each index's trial), PersistentVolumeClaim `{}` ({} ReadWriteMany: the trials' folders)",
        path.display(),
        export.job,
        export.completions,
        export.parallelism,
        export.image,
        export.config_map,
        export.claim,
        request.volume_size
    ));
    start(folder, ui, "")
}

/// Writes `FOLDER/<sweep>.yaml`: the folders above it are made; one another account owns
/// or can write is refused.
fn write(
    host: &impl Confined,
    folder: &Path,
    sweep: &str,
    manifests: &str,
) -> anyhow::Result<PathBuf> {
    let name = PathBuf::from(format!("{sweep}.yaml"));
    let path = folder.join(&name);
    crate::app::team::export::write(host, folder, &[(name, manifests.as_bytes(), 0o666)])?;
    Ok(path)
}

/// `, 2 GPU(s) each`, or nothing for a CPU sweep.
fn gpus_each(sweep: &crate::sweep::Sweep) -> String {
    match sweep.pool.gpus {
        GpuPool::Cpu => String::new(),
        _ => format!(", {} GPU(s) each", sweep.pool.gpus_per_trial),
    }
}

/// Says how to start what was written in `folder`.
fn start(folder: &Path, ui: &(impl Ui + ?Sized), after: &str) -> anyhow::Result<()> {
    let folder_text = folder.display().to_string();
    ui.note(&format!(
        "start it with: {}{after}",
        command_line(&["kubectl", "apply", "-f", &folder_text].map(String::from))
    ));
    Ok(())
}

/// `tfimg sweep report SWEEP [-o FILE]`: the sweep named `target` (from the folder
/// `current`) read back as `status` reads it (the engine `connect`ed only when it has
/// something to say of trials no tfimg watched), drawn as one HTML page and written whole
/// to `output`, else `<sweep dir>/report.html`; where it was written.
pub async fn report<E: Daemon + Containers>(
    host: &(impl FileWrites + Clock + State + Files + Confined + Trust),
    current: &Path,
    target: &str,
    output: Option<&Path>,
    connect: impl AsyncFnOnce() -> anyhow::Result<E>,
    sinks: Sinks<'_>,
) -> anyhow::Result<PathBuf> {
    let looked = look_named(host, current, target, connect, sinks).await?;
    for line in looked.lines() {
        sinks.ui.notice(&Notice::note(line));
    }
    let sweep = &looked.found;
    let now_ms = super::now_ms(host);
    let html = report::render(
        &sweep.sweep.name,
        &sweep.results(Some(now_ms)),
        &sweep.summaries(),
        &report::param_scales(&sweep.sweep.search),
        &report::utc_text(now_ms),
    );
    let path = output.map_or_else(|| sweep.dir.join(REPORT_FILE), Path::to_path_buf);
    host.write_file(&path, html.as_bytes()).map_err(|error| {
        InputError::new(
            format!("cannot write the report `{}`: {error}", path.display()),
            "give `-o` a file in a folder you can write",
        )
    })?;
    Ok(path)
}
