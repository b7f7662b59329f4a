//! `tfimg save`: the targets' images and specs, every one found before anything is
//! written, streamed into `.<output>.<random>.partial` beside the output (never held in
//! memory: the image tarball goes from the daemon to the disk chunk by chunk, hashed on
//! the way), synced, and renamed over the output. A failure or an interrupt removes the
//! temporary file, so there is never half a bundle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use super::write::Saved;
use super::write::{write, write_failed, SmallPart};
use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::session::Session;
use crate::app::Interrupted;
use crate::bundle::layout::{self, IMAGES_PART};
use crate::bundle::{BundledImage, BundledSpec, Manifest, Part, SpecSource};
use crate::engine::prelude::{Builds, Containers, Daemon, Images};
use crate::engine::ImageFacts;
use crate::host::prelude::{Clock, FileWrites, Files, Processes, Secrets};
use crate::input::InputError;
use crate::labels;
use crate::spec::load::{Origin, SpecDocument};
use crate::spec::ResolvedSpec;

/// What `tfimg save` was asked to carry, one per argument.
pub enum SaveTarget {
    /// A spec: its current image and its files.
    Spec(Box<SpecTarget>),
    /// An image reference (or id), as it is.
    Image(String),
}

pub struct SpecTarget {
    pub resolved: ResolvedSpec,
    /// The spec files to carry, the spec's own last (none for a built-in).
    pub files: Vec<SpecFile>,
}

pub struct SpecFile {
    pub name: String,
    pub path: PathBuf,
    pub source: SpecSource,
}

pub struct SaveOptions<'a> {
    pub output: &'a Path,
    /// The options the specs were built with (they are part of the build key).
    pub network: &'a Network,
    pub tfimg_version: &'a str,
}

/// `tfimg save`'s targets, each taken as a spec (a `.yaml` file, or a name the catalog
/// knows as one) or else an image reference.
pub fn save_targets(
    host: &impl Files,
    catalog: &crate::spec::Catalog,
    targets: &[String],
) -> Result<Vec<SaveTarget>, crate::spec::SpecError> {
    let mut found = Vec::new();
    for target in targets {
        let spec_file = target.ends_with(".yaml") || target.ends_with(".yml");
        if spec_file || crate::app::catalog::is_spec(host, catalog, target) {
            let resolved = crate::app::catalog::resolve(host, catalog, target)?;
            let chain = crate::app::catalog::chain(host, catalog, target)?;
            found.push(SaveTarget::Spec(Box::new(spec_target(resolved, &chain))));
        } else {
            found.push(SaveTarget::Image(target.clone()));
        }
    }
    Ok(found)
}

/// A spec and the files of its `extends` chain that a bundle carries: the spec's own file
/// and the local specs it extends (built-ins are in every tfimg).
pub fn spec_target(resolved: ResolvedSpec, chain: &[SpecDocument]) -> SpecTarget {
    let last = chain.len().saturating_sub(1);
    let files = chain
        .iter()
        .enumerate()
        .filter_map(|(index, document)| match &document.origin {
            Origin::Builtin => None,
            Origin::Local(path) | Origin::File(path) => Some(SpecFile {
                name: document.name.clone(),
                path: path.clone(),
                source: if index == last {
                    SpecSource::File
                } else {
                    SpecSource::Parent
                },
            }),
        })
        .collect();
    SpecTarget { resolved, files }
}

/// An image to carry: the tags it gets on the other side, and the one reference the
/// daemon exports it by (a tag that surely names it, or its id).
struct GatheredImage {
    facts: ImageFacts,
    tags: Vec<String>,
    export_as: String,
}

/// Everything found before writing: the images (by id, in the targets' order), the
/// specs and their parts.
#[derive(Default)]
struct Gathered {
    images: Vec<GatheredImage>,
    specs: Vec<BundledSpec>,
    parts: Vec<SmallPart>,
}

pub async fn save(
    session: Session<
        '_,
        impl Images + Builds + Containers + Daemon,
        impl Clock + Files + Secrets + FileWrites + Processes,
    >,
    targets: &[SaveTarget],
    options: &SaveOptions<'_>,
) -> anyhow::Result<Saved> {
    let Session { engine, host, .. } = session;
    check_output(host, options.output)?;
    let mut gathered = Gathered::default();
    for target in targets {
        match target {
            SaveTarget::Image(reference) => gather_image(engine, reference, &mut gathered).await?,
            SaveTarget::Spec(target) => {
                gather_spec(session, target, options.network, &mut gathered).await?
            }
        }
    }
    let created = host
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let manifest = gathered.manifest(options.tfimg_version, created);
    refuse_unbundlable(&manifest)?;
    let name = options
        .output
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let temporary = options
        .output
        .with_file_name(format!(".{name}.{}.partial", host.random_hex(4)?));
    let references = gathered.references();
    let writing = write(session, &temporary, &gathered.parts, &references, manifest);
    let written = tokio::select! {
        written = writing => written,
        _ = host.interrupted() => Err(Interrupted {
            what: format!("`tfimg save` was stopped; no bundle was written to `{}`", options.output.display()),
        }.into()),
    };
    let saved = written.and_then(|saved| {
        host.rename(&temporary, options.output)
            .map_err(|error| write_failed(options.output, &error))?;
        Ok(saved)
    });
    if saved.is_err() {
        let _ = host.remove_file(&temporary);
    }
    saved
}

/// An image as it is, with only the tag that was asked for (as `docker save` does: the
/// image's other tags may be moving ones that mean something else elsewhere).
async fn gather_image(
    engine: &impl Images,
    reference: &str,
    gathered: &mut Gathered,
) -> anyhow::Result<()> {
    let image = find_image(engine, reference).await?;
    let tags: Vec<String> = [reference.to_string(), format!("{reference}:latest")]
        .into_iter()
        .filter(|tag| image.tags.contains(tag))
        .take(1)
        .collect();
    let export_as = tags.first().cloned().unwrap_or_else(|| image.id.clone());
    gathered.add_image(image, tags, export_as);
    Ok(())
}

/// What `load` would refuse is refused now, before a byte is written (the image part's
/// digest is not known yet: any well-formed one stands in).
fn refuse_unbundlable(manifest: &Manifest) -> Result<(), InputError> {
    let mut probe = manifest.clone();
    for part in probe.parts.iter_mut().filter(|part| part.sha256.is_empty()) {
        part.sha256 = "0".repeat(64);
    }
    probe.validate().map_err(|error| {
        InputError::new(
            format!("these targets cannot be bundled: {error}"),
            "save the image under a plain `name:tag` reference",
        )
    })
}

/// The output's folder must exist, and the output must not be a folder (checked again
/// by `save`; the command asks first, before it connects to the daemon).
pub fn check_output(host: &impl Files, output: &Path) -> Result<(), InputError> {
    let shown = output.display();
    if host.is_folder(output) || output.file_name().is_none() {
        return Err(InputError::new(
            format!("`-o {shown}` is a folder"),
            "give the bundle's file name, such as `-o lab.tar`",
        ));
    }
    let folder = match output.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !host.is_folder(folder) {
        return Err(InputError::new(
            format!(
                "`-o {shown}`: the folder `{}` does not exist",
                folder.display()
            ),
            "make the folder first, or write the bundle elsewhere",
        ));
    }
    Ok(())
}

async fn find_image(engine: &impl Images, reference: &str) -> anyhow::Result<ImageFacts> {
    engine.image(reference).await?.ok_or_else(|| {
        InputError::new(
            format!("no spec or image named `{reference}`"),
            "give a spec from `tfimg list`, a spec file, or a local image (`docker images`)",
        )
        .into()
    })
}

/// A spec's current image (refused when it has none: `save` never builds), its files and
/// their locks.
async fn gather_spec(
    session: Session<
        '_,
        impl Images + Builds + Containers + Daemon,
        impl Files + Clock + Secrets + Processes,
    >,
    target: &SpecTarget,
    network: &Network,
    gathered: &mut Gathered,
) -> anyhow::Result<()> {
    let Session { engine, host, .. } = session;
    let resolved = &target.resolved;
    let check = BuildOptions {
        only_check: true,
        ..BuildOptions::default()
    };
    let Some(built) = build_spec(session, resolved, network, &check).await? else {
        let shown = match target.files.last() {
            Some(file) => file.path.display().to_string(),
            None => resolved.name.clone(),
        };
        return Err(InputError::new(
            format!("`{}` has no image for its current build key", resolved.name),
            format!("build it first (`tfimg build {shown}`, with the same `--ca-cert` and mirror options): `tfimg save` carries built images only"),
        )
        .into());
    };
    let image = find_image(engine, &built.plan.keyed_tag).await?;
    let image_id = image.id.clone();
    // The moving tag may name a newer build here; `load` sets it on this one there.
    let tags = vec![built.plan.tag.clone(), built.plan.keyed_tag.clone()];
    gathered.add_image(image, tags, built.plan.keyed_tag.clone());
    if target.files.is_empty() {
        let path = layout::spec_part_path(&resolved.name, true);
        let bytes = serde_yaml::to_string(resolved)?.into_bytes();
        gathered.add_spec(
            &resolved.name,
            SpecSource::BuiltIn,
            Some(&image_id),
            path,
            bytes,
            None,
        )?;
    }
    for file in &target.files {
        let read = |path: &Path| host.read_file(path);
        let bytes = read(&file.path).map_err(|error| unreadable(&file.path, &error))?;
        let lock_path = file.path.with_extension("lock");
        let lock = match read(&lock_path) {
            Ok(bytes) => Some((layout::lock_part_path(&file.name), bytes)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => return Err(unreadable(&lock_path, &error).into()),
        };
        let image = (file.source == SpecSource::File).then_some(image_id.as_str());
        let path = layout::spec_part_path(&file.name, false);
        gathered.add_spec(&file.name, file.source, image, path, bytes, lock)?;
    }
    Ok(())
}

fn unreadable(path: &Path, error: &std::io::Error) -> InputError {
    InputError::new(
        format!("cannot read `{}`: {error}", path.display()),
        "check the file's permissions",
    )
}

impl Gathered {
    fn add_image(&mut self, facts: ImageFacts, tags: Vec<String>, export_as: String) {
        match self
            .images
            .iter_mut()
            .find(|known| known.facts.id == facts.id)
        {
            Some(known) => {
                for tag in tags {
                    if !known.tags.contains(&tag) {
                        known.tags.push(tag);
                    }
                }
            }
            None => self.images.push(GatheredImage {
                facts,
                tags,
                export_as,
            }),
        }
    }

    /// A spec's part (and lock); the same spec twice is carried once, two different
    /// specs of one name are refused.
    fn add_spec(
        &mut self,
        name: &str,
        source: SpecSource,
        image: Option<&str>,
        path: String,
        bytes: Vec<u8>,
        lock: Option<(String, Vec<u8>)>,
    ) -> Result<(), InputError> {
        if let Some(known) = self.specs.iter_mut().find(|spec| spec.name == name) {
            let same = self
                .parts
                .iter()
                .any(|part| part.path == known.part && part.bytes == bytes);
            if !same {
                return Err(InputError::new(
                    format!("two different specs named `{name}` were given"),
                    "save them into separate bundles, or rename one (`name:` in the file)",
                ));
            }
            // A spec saved itself outranks the same spec carried as a parent.
            if source == SpecSource::File {
                known.source = source;
                known.image = image.map(str::to_string);
            }
            return Ok(());
        }
        self.specs.push(BundledSpec {
            name: name.to_string(),
            source,
            part: path.clone(),
            lock: lock.as_ref().map(|(path, _)| path.clone()),
            image: image.map(str::to_string),
        });
        self.parts.push(SmallPart { path, bytes });
        if let Some((path, bytes)) = lock {
            self.parts.push(SmallPart { path, bytes });
        }
        Ok(())
    }

    /// The manifest with the image part pending (its size and digest come from the export).
    fn manifest(&self, tfimg_version: &str, created: u64) -> Manifest {
        let mut manifest = Manifest::new(tfimg_version, created);
        for part in &self.parts {
            manifest.parts.push(Part {
                path: part.path.clone(),
                size: part.bytes.len() as u64,
                sha256: layout::sha256_hex(&part.bytes),
            });
        }
        manifest.parts.push(Part {
            path: IMAGES_PART.to_string(),
            size: 0,
            sha256: String::new(),
        });
        manifest.images = self
            .images
            .iter()
            .map(|image| {
                let mut tags = image.tags.clone();
                tags.sort();
                BundledImage {
                    id: image.facts.id.clone(),
                    tags,
                    labels: image
                        .facts
                        .labels
                        .iter()
                        .filter(|(key, _)| key.starts_with(labels::PREFIX))
                        .map(|(key, value)| (key.clone(), value.clone()))
                        .collect::<BTreeMap<_, _>>(),
                    part: IMAGES_PART.to_string(),
                }
            })
            .collect();
        manifest.specs = self.specs.clone();
        manifest
    }

    /// What the daemon exports: one reference per image.
    fn references(&self) -> Vec<String> {
        self.images
            .iter()
            .map(|image| image.export_as.clone())
            .collect()
    }
}
