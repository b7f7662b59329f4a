//! What `tfimg save` and `tfimg load` print of a bundle: its contents as rows (with the
//! parts saved, or the files written), and the lines they say on the way. No I/O here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{BundledImage, BundledSpec, Manifest, SpecSource};
use crate::notice::Notice;

/// One row per image (its tags and id) and per spec (`files` says where it is), under
/// KIND, NAME and DETAIL.
pub fn contents_rows(
    manifest: &Manifest,
    files: impl Fn(&BundledSpec) -> String,
) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = manifest.images.iter().map(image_row).collect();
    for spec in &manifest.specs {
        let detail = match spec.source {
            SpecSource::BuiltIn => "built-in".to_string(),
            SpecSource::File | SpecSource::Parent => files(spec),
        };
        rows.push(vec!["spec".to_string(), spec.name.clone(), detail]);
    }
    rows
}

fn image_row(image: &BundledImage) -> Vec<String> {
    let short = image.id.trim_start_matches("sha256:");
    let name = match image.tags.is_empty() {
        true => "(untagged)".to_string(),
        false => image.tags.join(" "),
    };
    vec![
        "image".to_string(),
        name,
        format!("{}", &short[..12.min(short.len())]),
    ]
}

/// What `load` says once the bundle passed its check. The manifest's `tfimg` field is the
/// bundle's bytes: printed with its control characters escaped (a bundle may not drive
/// the terminal).
pub fn checked_line(bundle: &Path, manifest: &Manifest, elapsed: std::time::Duration) -> String {
    format!(
        "checked `{}`: saved by tfimg {} on {}; {} part(s), each with the size and sha256 its manifest gives ({:.1} s)",
        bundle.display(),
        crate::input::printable(&manifest.tfimg),
        crate::sweep::report::utc_text(manifest.created_unix.saturating_mul(1000)),
        manifest.parts.len(),
        elapsed.as_secs_f64()
    )
}

/// A size for people: `1.3 GB`, `512 kB`, `80 B`.
pub fn human_size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.0} kB", bytes as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.0} MB", bytes as f64 / 1e6),
        _ => format!("{:.1} GB", bytes as f64 / 1e9),
    }
}

/// `save`'s contents: each spec with its part and its lock.
pub fn saved_rows(manifest: &Manifest) -> Vec<Vec<String>> {
    contents_rows(manifest, |spec| {
        let mut parts = vec![spec.part.clone()];
        parts.extend(spec.lock.clone());
        parts.join(", ")
    })
}

/// What `save` says at its end.
pub fn saved_line(bundle: &Path, bytes: u64, manifest: &Manifest, elapsed: Duration) -> String {
    format!(
        "saved `{}` ({}, {} image(s), {} spec(s)) in {:.1} s",
        bundle.display(),
        human_size(bytes),
        manifest.images.len(),
        manifest.specs.len(),
        elapsed.as_secs_f64()
    )
}

/// `load`'s contents: each spec with the files written into `folder` (those left as
/// they were marked `(unchanged)`).
pub fn loaded_rows(manifest: &Manifest, folder: &Path, unchanged: &[PathBuf]) -> Vec<Vec<String>> {
    let written = |path: &Path| {
        let kept = unchanged.iter().any(|unchanged| unchanged == path);
        format!(
            "{}{}",
            path.display(),
            if kept { " (unchanged)" } else { "" }
        )
    };
    contents_rows(manifest, |spec| {
        let mut files = vec![written(&folder.join(format!("{}.yaml", spec.name)))];
        if spec.lock.is_some() {
            files.push(written(&folder.join(format!("{}.lock", spec.name))));
        }
        files.join(", ")
    })
}

/// The note for a built-in of this tfimg that resolves differently from the bundle's.
pub fn differing_builtin_note(name: &str, bundle: &Path) -> Notice {
    Notice::note(format!(
        "this tfimg's built-in `{name}` resolves differently from the bundle's (`tar -xOf {} specs/{name}.resolved.yaml` shows the bundle's); its image is loaded as it was built",
        bundle.display()
    ))
}

#[cfg(test)]
mod tests;
