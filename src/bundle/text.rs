//! What `tfimg save` and `tfimg load` print of a bundle: its contents as rows, and the
//! line `load` says once the bundle passed its check.

use std::path::Path;

use super::{BundledImage, BundledSpec, Manifest, SpecSource};

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

#[cfg(test)]
mod tests {
    #[test]
    fn the_saving_tfimg_is_printed_with_its_escapes_escaped() {
        let manifest = crate::bundle::Manifest::new("0.1.0\u{1b}]0;owned\u{7}\u{1b}[2J", 0);
        let line = super::checked_line(
            std::path::Path::new("lab.tar"),
            &manifest,
            std::time::Duration::ZERO,
        );
        assert!(
            !line.contains('\u{1b}') && !line.contains('\u{7}'),
            "{line:?}"
        );
        assert!(
            line.contains("saved by tfimg 0.1.0\\u{1b}]0;owned\\u{7}\\u{1b}[2J on 1970-01-01"),
            "{line}"
        );
    }
}
