//! `tfimg save TARGET... -o FILE` and `tfimg load FILE [-o DIR] [--force]`: each target
//! taken as a spec or an image, the use cases of `app::bundle` called, and what the bundle
//! holds (or what was loaded) printed on stdout as a table; progress and times on stderr.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use crate::app::bundle::{self, human_size, LoadOptions, SaveOptions, SaveTarget};
use crate::app::catalog;
use crate::app::settings::Settings;
use crate::bundle::{BundledImage, BundledSpec, Manifest, SpecSource};
use crate::cli::{LoadArgs, SaveArgs};
use crate::host::Host;
use crate::output::progress::Reporter;

pub fn save(args: &SaveArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let catalog = super::catalog();
    let network = settings.network(&args.network.choices(), host)?;
    let mut targets = Vec::new();
    for target in &args.targets {
        let spec_file = target.ends_with(".yaml") || target.ends_with(".yml");
        if spec_file || catalog::is_spec(&catalog, target) {
            let resolved = catalog::resolve(&catalog, target)?;
            let chain = catalog::chain(&catalog, target)?;
            let target = bundle::spec_target(resolved, &chain);
            targets.push(SaveTarget::Spec(Box::new(target)));
        } else {
            targets.push(SaveTarget::Image(target.clone()));
        }
    }
    bundle::check_output(host, &args.output)?;
    let reporter = Reporter::new(args.progress);
    let options = SaveOptions {
        output: &args.output,
        network: &network,
        tfimg_version: env!("CARGO_PKG_VERSION"),
    };
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let saved = bundle::save(&engine, host, &targets, &options, &reporter).await?;
        let summary = format!(
            "saved `{}` ({}, {} image(s), {} spec(s)) in {:.1} s",
            args.output.display(),
            human_size(saved.bytes),
            saved.manifest.images.len(),
            saved.manifest.specs.len(),
            reporter.elapsed().as_secs_f64()
        );
        if reporter.is_json() {
            reporter.result(json!({
                "bundle": args.output,
                "bytes": saved.bytes,
                "manifest": saved.manifest,
            }));
            return Ok(ExitCode::SUCCESS);
        }
        reporter.clear();
        print_contents(&saved.manifest, |spec| {
            let mut parts = vec![spec.part.clone()];
            parts.extend(spec.lock.clone());
            parts.join(", ")
        })?;
        reporter.status(&summary);
        Ok(ExitCode::SUCCESS)
    })
}

pub fn load(args: &LoadArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let reporter = Reporter::new(args.progress);
    let options = LoadOptions {
        bundle: &args.bundle,
        folder: &args.output,
        force: args.force,
    };
    let checked = bundle::check(host, &super::catalog(), &options, &reporter)?;
    let manifest = &checked.verified.manifest;
    reporter.status(&checked_line(&args.bundle, manifest, reporter.elapsed()));
    let checked_at = Instant::now();
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let loaded = bundle::load(&engine, host, &checked, &options, &reporter).await?;
        if reporter.is_json() {
            reporter.result(json!({
                "images": loaded.images,
                "written": loaded.written,
                "unchanged": loaded.unchanged,
            }));
            return Ok(ExitCode::SUCCESS);
        }
        reporter.clear();
        let written = |path: &Path| {
            let kept = loaded.unchanged.iter().any(|unchanged| unchanged == path);
            format!("{}{}", path.display(), if kept { " (unchanged)" } else { "" })
        };
        print_contents(manifest, |spec| {
            let mut files = vec![written(&args.output.join(format!("{}.yaml", spec.name)))];
            if spec.lock.is_some() {
                files.push(written(&args.output.join(format!("{}.lock", spec.name))));
            }
            files.join(", ")
        })?;
        for name in &checked.differing_builtins {
            reporter.status(&format!(
                "note: this tfimg's built-in `{name}` resolves differently from the bundle's (`tar -xOf {} specs/{name}.resolved.yaml` shows the bundle's); its image is loaded as it was built",
                args.bundle.display()
            ));
        }
        reporter.status(&format!(
            "loaded {} image(s) in {:.1} s",
            loaded.images.len(),
            checked_at.elapsed().as_secs_f64()
        ));
        Ok(ExitCode::SUCCESS)
    })
}

/// One row per image (its tags and id) and per spec (`files` says where it is).
fn print_contents(
    manifest: &Manifest,
    files: impl Fn(&BundledSpec) -> String,
) -> anyhow::Result<()> {
    let mut rows: Vec<Vec<String>> = manifest.images.iter().map(image_row).collect();
    for spec in &manifest.specs {
        let detail = match spec.source {
            SpecSource::BuiltIn => "built-in".to_string(),
            SpecSource::File | SpecSource::Parent => files(spec),
        };
        rows.push(vec!["spec".to_string(), spec.name.clone(), detail]);
    }
    Ok(crate::output::print_table(
        &["KIND", "NAME", "DETAIL"],
        &rows,
    )?)
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
fn checked_line(bundle: &Path, manifest: &Manifest, elapsed: std::time::Duration) -> String {
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
