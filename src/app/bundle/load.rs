//! `tfimg load`: first `check` — the whole bundle read and held to its manifest (any
//! problem refuses it whole, naming the part), then the spec files and locks it would
//! write compared with what is already in the folder (a different file is refused without
//! `--force`) — all before the daemon is asked anything. Then `load` streams the image
//! part into the daemon (hashed again on the way: a bundle that changed since the check
//! is cut off before its last byte, so the daemon never gets it whole), checks that every
//! image arrived, gives it the tags the manifest lists, and writes the specs.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use super::{human_size, PROGRESS_EVERY_BYTES};
use crate::app::session::Session;
use crate::app::Interrupted;
use crate::bundle::verify::TAIL_BYTES;
use crate::bundle::{BundleError, BundledImage, Located, SpecSource, Verified, Verifier};
use crate::engine::prelude::{Daemon, Images};
use crate::engine::TarStream;
use crate::host::prelude::{Clock, Confined, Files};
use crate::host::{FileStream, HostError};
use crate::input::InputError;
use crate::output::progress::Report;
use crate::plan::image::hex;
use crate::spec::load::BUILTIN_PREFIX;
use crate::spec::Catalog;

/// Spec and lock parts are small; a larger one is refused rather than read into memory.
const MAX_SMALL_PART_BYTES: u64 = 16 << 20;

pub struct LoadOptions<'a> {
    pub bundle: &'a Path,
    /// Where spec files and locks go (`./images`, where `tfimg list` finds them).
    pub folder: &'a Path,
    /// Replace spec files and locks that differ from the bundle's.
    pub force: bool,
}

/// A bundle that passed every check, and what loading it will write.
#[derive(Debug)]
pub struct Checked {
    pub verified: Verified,
    writes: Vec<SpecWrite>,
    /// Built-ins that this tfimg resolves differently from the tfimg that saved them.
    pub differing_builtins: Vec<String>,
}

#[derive(Debug)]
struct SpecWrite {
    path: PathBuf,
    bytes: Vec<u8>,
    /// The folder already holds exactly this.
    unchanged: bool,
}

#[derive(Debug)]
pub struct Loaded {
    pub images: Vec<BundledImage>,
    pub written: Vec<PathBuf>,
    pub unchanged: Vec<PathBuf>,
}

/// Every check before anything is loaded: the bundle, then the files it would write.
pub fn check(
    host: &impl Files,
    catalog: &Catalog,
    options: &LoadOptions<'_>,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Checked> {
    let folder = options.folder;
    if host.exists(folder) && !host.is_folder(folder) {
        return Err(InputError::new(
            format!("`-o {}` is not a folder", folder.display()),
            "give the folder the spec files go to (`./images` by default)",
        )
        .into());
    }
    let verified = verify_file(host, options.bundle, reporter)?;
    let mut writes = Vec::new();
    let mut differing_builtins = Vec::new();
    for spec in &verified.manifest.specs {
        let bytes = read_part(host, options.bundle, &verified, &spec.part)?;
        if spec.source == SpecSource::BuiltIn {
            let here = crate::spec::resolve(catalog, &format!("{BUILTIN_PREFIX}{}", spec.name));
            let same = here
                .ok()
                .and_then(|resolved| serde_yaml::to_string(&resolved).ok())
                .is_some_and(|text| text.as_bytes() == bytes.as_slice());
            if !same {
                differing_builtins.push(spec.name.clone());
            }
            continue;
        }
        if catalog.is_builtin(&spec.name) {
            return Err(builtin_name(&spec.name).into());
        }
        let yaml = folder.join(format!("{}.yaml", spec.name));
        writes.push(planned_write(host, yaml, bytes, &spec.part, options.force)?);
        if let Some(lock) = &spec.lock {
            let bytes = read_part(host, options.bundle, &verified, lock)?;
            let path = folder.join(format!("{}.lock", spec.name));
            writes.push(planned_write(host, path, bytes, lock, options.force)?);
        }
    }
    Ok(Checked {
        verified,
        writes,
        differing_builtins,
    })
}

/// Trust boundary **bundle bytes → tfimg**: a bundle's own spec named like a built-in
/// (`cpu-jupyter`, or a hidden parent such as `cpu-base`) would take the built-in's place
/// in `./images`, and every image built on it would quietly get the bundle's packages and
/// environment. A bundle never changes what a built-in means: refused before anything is
/// loaded.
fn builtin_name(name: &str) -> InputError {
    InputError::new(
        format!(
            "the bundle's spec `{name}` has the name of a built-in spec: written to `images/`, it would replace the built-in `{name}` for every spec built on it"
        ),
        "give that spec its own name where the bundle was made (`extends:` a built-in instead of replacing it) and save the bundle again",
    )
}

/// The images into the daemon, checked; then the spec files.
pub async fn load(
    session: Session<'_, impl Images + Daemon, impl Confined + Files + Clock>,
    checked: &Checked,
    options: &LoadOptions<'_>,
) -> anyhow::Result<Loaded> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let manifest = &checked.verified.manifest;
    let mut parts: Vec<&str> = Vec::new();
    for image in &manifest.images {
        if !parts.contains(&image.part.as_str()) {
            parts.push(&image.part);
        }
    }
    for part in parts {
        let located = checked
            .verified
            .locate(part)
            .expect("verified parts are located");
        let count = manifest
            .images
            .iter()
            .filter(|image| image.part == part)
            .count();
        reporter.status(&format!(
            "loading {count} image(s) ({}) into the Docker daemon at `{}`",
            human_size(located.size),
            engine.endpoint()
        ));
        import(session, options.bundle, located).await?;
    }
    settle_tags(engine, &manifest.images, reporter).await?;
    let mut loaded = Loaded {
        images: manifest.images.clone(),
        written: Vec::new(),
        unchanged: Vec::new(),
    };
    for write in &checked.writes {
        if write.unchanged {
            loaded.unchanged.push(write.path.clone());
            continue;
        }
        // `images/` may be shared: a link planted at the name is replaced, not followed.
        let (folder, name) = (
            write.path.parent().unwrap_or(Path::new(".")),
            write.path.file_name().unwrap_or_default().to_string_lossy(),
        );
        host.write_confined(folder, &name, &write.bytes)
            .map_err(|error| HostError {
                message: format!(
                    "the images were loaded, but `{}` could not be written: {error}",
                    write.path.display()
                ),
                hint: "check the folder's permissions, then load again (the images are kept)"
                    .to_string(),
            })?;
        loaded.written.push(write.path.clone());
    }
    Ok(loaded)
}

/// The whole file fed to the verifier, the tail (which holds `manifest.sha256`) first.
fn verify_file(
    host: &impl Files,
    path: &Path,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Verified> {
    let shown = path.display();
    // The reason quotes the bundle's own bytes (names, tags, paths): printed with their
    // control characters escaped, so a bundle cannot drive the terminal.
    let refused = |error: BundleError| {
        let reason = error.to_string();
        let reason = crate::input::printable(&reason);
        InputError::new(
            format!("`{shown}` is refused, nothing was loaded: {reason}"),
            error.hint(),
        )
    };
    let unreadable = |error: std::io::Error| {
        InputError::new(
            format!("cannot read `{shown}`: {error}"),
            "give the bundle `tfimg save` wrote",
        )
    };
    if host.is_folder(path) {
        return Err(InputError::new(
            format!("`{shown}` is a folder"),
            "give the bundle `tfimg save` wrote",
        )
        .into());
    }
    let (mut file, length) = host.open_file(path).map_err(unreadable)?;
    let mut tail = vec![0; length.min(TAIL_BYTES) as usize];
    file.seek(SeekFrom::Start(length - tail.len() as u64))
        .and_then(|_| file.read_exact(&mut tail))
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .map_err(unreadable)?;
    let mut verifier = Verifier::new(length, &tail);
    let mut buffer = vec![0; 1 << 20];
    let mut done = 0u64;
    loop {
        let read = file.read(&mut buffer).map_err(unreadable)?;
        if read == 0 {
            break;
        }
        verifier.feed(&buffer[..read]).map_err(refused)?;
        done += read as u64;
        if done % PROGRESS_EVERY_BYTES < read as u64 {
            reporter.live(&format!(
                "checking `{shown}`: {} of {}",
                human_size(done),
                human_size(length)
            ));
        }
    }
    Ok(verifier.finish().map_err(refused)?)
}

/// A small part's bytes, read again and checked again (the file may have changed since).
fn read_part(
    host: &impl Files,
    bundle: &Path,
    verified: &Verified,
    part: &str,
) -> anyhow::Result<Vec<u8>> {
    let located = verified
        .locate(part)
        .expect("the manifest's parts are located");
    if located.size > MAX_SMALL_PART_BYTES {
        return Err(InputError::new(
            format!(
                "part `{part}` of `{}` is {} bytes: a spec or lock is never that large",
                bundle.display(),
                located.size
            ),
            BundleError::ManifestAltered.hint(),
        )
        .into());
    }
    let mut bytes = vec![0; located.size as usize];
    let (mut file, _) = host.open_file(bundle).map_err(|_| changed(bundle, part))?;
    file.seek(SeekFrom::Start(located.offset))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|_| changed(bundle, part))?;
    if crate::bundle::layout::sha256_hex(&bytes) != located.sha256 {
        return Err(changed(bundle, part).into());
    }
    Ok(bytes)
}

fn changed(bundle: &Path, part: &str) -> InputError {
    InputError::new(
        format!("`{}` changed while it was loaded: part `{part}` no longer matches its sha256", bundle.display()),
        "load it again from a copy nothing writes to (the daemon unpacks an image tarball whole before it loads any of it)",
    )
}

/// The file `path` with the bundle's `bytes`: unchanged when it holds them already,
/// refused when it holds something else (unless `force`).
fn planned_write(
    host: &impl Files,
    path: PathBuf,
    bytes: Vec<u8>,
    part: &str,
    force: bool,
) -> anyhow::Result<SpecWrite> {
    let unchanged =
        match host.read_file(&path) {
            Ok(existing) if existing == bytes => true,
            Ok(_) if force => false,
            Ok(_) => return Err(InputError::new(
                format!(
                    "`{}` exists and differs from the bundle's `{part}`",
                    path.display()
                ),
                "move it away, load into another folder (`-o DIR`), or replace it with `--force`",
            )
            .into()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
            Err(error) => {
                return Err(InputError::new(
                    format!("cannot read `{}`: {error}", path.display()),
                    "check the folder's permissions, or load into another folder (`-o DIR`)",
                )
                .into())
            }
        };
    Ok(SpecWrite {
        path,
        bytes,
        unchanged,
    })
}

/// Streams one part into the daemon's `docker load`.
async fn import(
    session: Session<'_, impl Images, impl Files + Clock>,
    bundle: &Path,
    located: &Located,
) -> anyhow::Result<()> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let file = host.file_stream(bundle, located.offset, located.size)?;
    let altered = Arc::new(AtomicBool::new(false));
    let stream = checked_stream(file, located, altered.clone());
    let loaded = tokio::select! {
        loaded = engine.load_images(stream, |line| reporter.output(line)) => loaded,
        _ = host.interrupted() => return Err(Interrupted {
            what: "`tfimg load` was stopped before the daemon had the whole image tarball; it loads none of a tarball it did not receive whole".to_string(),
        }.into()),
    };
    if altered.load(Ordering::SeqCst) {
        return Err(changed(bundle, &located.path).into());
    }
    Ok(loaded?)
}

/// The part's bytes as they are read, hashed again: if they no longer match (or the file
/// ends early), the stream fails instead of handing over its last chunk.
fn checked_stream(file: FileStream, located: &Located, altered: Arc<AtomicBool>) -> impl TarStream {
    struct State {
        file: FileStream,
        hasher: Sha256,
        remaining: u64,
        expected: String,
        altered: Arc<AtomicBool>,
    }
    let state = State {
        file,
        hasher: Sha256::new(),
        remaining: located.size,
        expected: located.sha256.clone(),
        altered,
    };
    futures_util::stream::unfold(Some(state), |state| async move {
        let mut state = state?;
        let fail = |state: State| {
            state.altered.store(true, Ordering::SeqCst);
            Some((
                Err(std::io::Error::other(
                    "the bundle changed while it was loaded",
                )),
                None,
            ))
        };
        match state.file.next().await {
            Some(Err(error)) => Some((Err(error), None)),
            Some(Ok(chunk)) if chunk.len() as u64 > state.remaining => fail(state),
            Some(Ok(chunk)) => {
                state.hasher.update(&chunk);
                state.remaining -= chunk.len() as u64;
                if state.remaining == 0 && hex(&state.hasher.clone().finalize()) != state.expected {
                    return fail(state);
                }
                Some((Ok(chunk), Some(state)))
            }
            None if state.remaining > 0 => fail(state),
            None => None,
        }
    })
}

/// Every image of the manifest is in the daemon now, and each of its tags names it (the
/// tarball carries one reference per image; the other tags are set here, as a build sets
/// them).
async fn settle_tags(
    engine: &impl Images,
    images: &[BundledImage],
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<()> {
    for image in images {
        if engine.image(&image.id).await?.is_none() {
            return Err(HostError {
                message: format!("the daemon did not load image `{}` from `{}`", image.id, image.part),
                hint: "the daemon reported no error; run `tfimg load` again, and see `docker images` and the daemon's log".to_string(),
            }
            .into());
        }
        for tag in &image.tags {
            let found = engine.image(tag).await?.map(|found| found.id);
            if found.as_deref() != Some(image.id.as_str()) {
                engine.tag(&image.id, tag).await?;
                reporter.output(&format!("Tagged {tag}"));
            }
        }
    }
    Ok(())
}
