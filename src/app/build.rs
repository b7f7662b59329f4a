//! Building a spec's image: render it, make sure the base image is here, compute the
//! build key, and either find the image up to date or build it through the engine, verify
//! it in a throw-away container, check the base did not move, and only then tag it.
//! Builds of one key are serialised by a lock file; earlier builds of the spec are pruned
//! in the background (never while a build runs).

use std::collections::HashMap;
use std::time::Duration;

use crate::app::session::Session;
use crate::app::Interrupted;
use crate::engine::prelude::{Builds, Containers, Daemon, Images};
use crate::engine::{BuildEvent, BuildFailure, BuildRequest, OneOff};
use crate::host::archive::BuildContext;
use crate::host::prelude::{Clock, Processes, Secrets};
use crate::host::HostError;
use crate::input::InputError;
use crate::labels;
use crate::notice::Notice;
use crate::output::progress::Report;
use crate::plan::image::{self, ImagePlan};
use crate::render::dockerfile::TFIMG_DIR;
use crate::render::files::VERIFY;
use crate::render::{self, Rendered};
use crate::spec::ResolvedSpec;

pub use lock::{lock, IMAGES_LOCK};
pub use prune::{prune_after_builds, prune_superseded};

/// Verification imports TensorFlow once; generous for a loaded two-core machine.
const VERIFY_DEADLINE: Duration = Duration::from_secs(600);

pub use crate::render::network::Network;

#[derive(Debug, Clone, Default)]
pub struct BuildOptions<'a> {
    pub tags: &'a [String],
    pub no_cache: bool,
    pub pull: bool,
    pub bootstrap_base: bool,
    pub no_verify: bool,
    /// Report whether the current image exists, but never build (`run --no-build`).
    pub only_check: bool,
    /// Say so when the image is up to date (`build` does; `run` keeps quiet).
    pub announce_up_to_date: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub plan: ImagePlan,
    pub image_id: String,
    pub up_to_date: bool,
}

/// Every `--tag` a valid image reference; else the first that is not.
pub fn check_tags(tags: &[String]) -> Result<(), InputError> {
    match tags
        .iter()
        .find(|tag| !crate::spec::syntax::valid_image_reference(tag))
    {
        Some(tag) => Err(InputError::new(
            format!("`--tag {tag}` is not a valid image reference"),
            "write it like `team/lab:1`",
        )),
        None => Ok(()),
    }
}

/// The warning that the base image here is not the one `resolved`'s lock was made on, said
/// only where the user can act on it: the spec's own lock file, which `tfimg lock` makes
/// again on this base. A built-in's lock, or the parent's a derived spec inherits, was made
/// on another machine's base (a pulled or bootstrapped base differs per machine) while apt
/// and pip stay pinned: nothing to do, so it goes to the log (`-v`) only (issue 45).
fn base_drift(resolved: &ResolvedSpec, base_id: &str) -> Option<Notice> {
    let pins = crate::lock::pins(resolved)?;
    let locked = pins.locked;
    if locked.file.base.id == base_id {
        return None;
    }
    let text = format!(
        "the base image `{}` here ({}) is not the one `{}` was made on ({}); apt and pip stay pinned",
        resolved.base,
        short_id(base_id),
        locked.display,
        short_id(&locked.file.base.id)
    );
    if !pins.own || resolved.source == "built-in" {
        tracing::info!("{text}");
        return None;
    }
    Some(Notice::warning(format!(
        "{text}; `tfimg lock {}` makes the lock on this one",
        resolved.source
    )))
}

/// The image of `resolved` for its current build key: the existing one, or a new one
/// built, verified and tagged. `None` only with `only_check` when no current image exists.
pub async fn build_spec(
    session: Session<
        '_,
        impl Images + Builds + Containers + Daemon,
        impl Clock + Secrets + Processes,
    >,
    resolved: &ResolvedSpec,
    network: &Network,
    options: &BuildOptions<'_>,
) -> anyhow::Result<Option<Built>> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let started = host.now();
    if let Some(locked) = &resolved.lock {
        if let Some(error) = super::lock::disagreement(resolved, locked) {
            return Err(error.into());
        }
    }
    let rendered = render::render(resolved, &network.render);
    let Some(base_id) = base_image(engine, resolved, network, options, reporter).await? else {
        return Ok(None);
    };
    let context = BuildContext::from_rendered(&rendered, &resolved.files)?;
    let key = image::build_key(&rendered.dockerfile, &context.digest()?, &base_id);
    let plan = image::plan(resolved, key, options.tags);
    tracing::debug!("`{}` has build key {}", plan.tag, plan.key);

    // Held until this build is tagged: a concurrent build of the same key waits, then
    // finds the image up to date instead of building it a second time.
    let _lock = if options.only_check {
        None
    } else {
        let name = format!("build-{}.lock", &plan.key[..16]);
        let waiting = "waiting for another tfimg that builds the same image";
        lock(host, &name, false, waiting, reporter).await?
    };
    if !options.no_cache {
        if let Some(built) = up_to_date(engine, &plan, options, reporter).await? {
            return Ok(Some(built));
        }
    }
    if options.only_check {
        return Ok(None);
    }
    // Said when an image is made from it, not on every command that finds one.
    if let Some(note) = base_drift(resolved, &base_id) {
        reporter.notice(&note);
    }
    reporter.status(&format!(
        "building `{}` from `{}` (build key {})",
        plan.tag,
        resolved.base,
        &plan.key[..12]
    ));
    if let Some(pins) = crate::lock::pins(resolved).filter(|pins| !pins.own) {
        reporter.status(&inherited_note(resolved, pins));
    }
    let waiting = "waiting for tfimg to finish removing superseded images";
    let _images_lock = lock(host, IMAGES_LOCK, true, waiting, reporter).await?;
    let request = BuildRequest {
        build_args: network
            .proxy_build_args
            .clone()
            .into_iter()
            .chain([(labels::BUILD_KEY_ARG.to_string(), plan.key.clone())])
            .collect(),
        no_cache: options.no_cache,
    };
    let image_id = run_build(session, resolved, &rendered, context, &request).await?;
    if !options.no_verify {
        reporter.status(
            "verifying: TensorFlow imports, computes (also XLA-compiled), and keeps its pins",
        );
        if let Err(error) = verify(session, &image_id, &resolved.name).await {
            // Nothing was tagged: dropping the image leaves no trace of the failure.
            let _ = engine.remove_image(&image_id, true).await;
            return Err(error);
        }
    }
    check_base(engine, resolved, &base_id, &image_id).await?;
    tag(session, resolved, &plan, &image_id, started).await?;
    Ok(Some(Built {
        plan,
        image_id,
        up_to_date: false,
    }))
}

/// The base image's id: made present (pulled, bootstrapped when asked), or, when the
/// build is only a check, `None` if it is missing.
async fn base_image(
    engine: &impl Images,
    resolved: &ResolvedSpec,
    network: &Network,
    options: &BuildOptions<'_>,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Option<String>> {
    if options.only_check {
        return Ok(engine.image(&resolved.base).await?.map(|image| image.id));
    }
    let id = super::base::ensure_base(
        engine,
        &resolved.base,
        network,
        options.pull,
        options.bootstrap_base,
        reporter,
    )
    .await?;
    Ok(Some(id))
}

/// Tags the verified image, then has earlier builds cleaned up: not on the user's
/// critical path, so a detached tfimg does it (as `git gc --auto` does), else it is done
/// here. Says how long the build took since it `started`.
async fn tag(
    session: Session<'_, impl Images + Daemon, impl Processes + Clock>,
    resolved: &ResolvedSpec,
    plan: &ImagePlan,
    image_id: &str,
    started: std::time::SystemTime,
) -> anyhow::Result<()> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    for tag in plan.all_tags() {
        engine.tag(image_id, &tag).await?;
    }
    if !host.spawn_prune(&resolved.name, &plan.key, engine.endpoint()) {
        prune_superseded(engine, &resolved.name, &plan.key, reporter).await;
    }
    reporter.status(&format!(
        "built `{}` in {:.0} s",
        plan.tag,
        host.now()
            .duration_since(started)
            .unwrap_or_default()
            .as_secs_f64()
    ));
    Ok(())
}

/// The image already built for `plan`'s key, its moved tags set again (usually none).
async fn up_to_date(
    engine: &impl Images,
    plan: &ImagePlan,
    options: &BuildOptions<'_>,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Option<Built>> {
    let Some(existing) = engine.image(&plan.keyed_tag).await? else {
        return Ok(None);
    };
    if existing.labels.get(labels::BUILD_KEY) != Some(&plan.key) {
        return Ok(None);
    }
    for tag in plan.all_tags() {
        if !existing.tags.contains(&tag) {
            engine.tag(&existing.id, &tag).await?;
        }
    }
    if options.announce_up_to_date {
        reporter.status(&format!(
            "`{}` is up to date (build key {})",
            plan.tag,
            &plan.key[..12]
        ));
    }
    Ok(Some(Built {
        plan: plan.clone(),
        image_id: existing.id,
        up_to_date: true,
    }))
}

/// Streams the context to the engine's build; the new image's id. An interrupt removes
/// the running step's container; a cache lookup that lost an image is retried once.
async fn run_build(
    session: Session<'_, impl Builds + Containers + Daemon, impl Clock>,
    resolved: &ResolvedSpec,
    rendered: &Rendered,
    context: BuildContext,
    request: &BuildRequest,
) -> anyhow::Result<String> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let mut context = Some(context);
    loop {
        let retried = context.is_none();
        let stream = match context.take() {
            Some(context) => context.into_stream(),
            None => BuildContext::from_rendered(rendered, &resolved.files)?.into_stream(),
        };
        // The container of the step running now: an interrupted build must not leave it.
        let running = std::cell::RefCell::new(None::<String>);
        let outcome = tokio::select! {
            built = engine.build(request, stream, |event| {
                if let BuildEvent::Container(id) = event {
                    running.replace(Some(id.clone()));
                }
                reporter.build_event(event)
            }) => Some(built),
            _ = host.interrupted() => None,
        };
        let Some(built) = outcome else {
            // The request is dropped, so the daemon cancels the build; the step's container
            // is removed before tfimg exits, whatever the daemon is still doing.
            reporter.clear();
            if let Some(id) = running.take() {
                remove_build_container(session, &id).await;
            }
            return Err(Interrupted {
                what: format!(
                    "the build of `{}` was stopped and nothing was tagged",
                    resolved.name
                ),
            }
            .into());
        };
        match built? {
            Ok(id) => return Ok(id),
            // Someone else (`docker rmi`, `docker image prune`) deleted an image the
            // daemon's cache lookup was reading: a second build does not meet it again.
            Err(failure) if !retried && failure.message.starts_with("unable to find image") => {
                reporter.status(&format!(
                    "the daemon lost an image during its cache lookup ({}); building again",
                    failure.message
                ));
            }
            Err(failure) => {
                if failure.message.ends_with("returned a non-zero code: 137") {
                    // SIGKILL: the daemon shutting down kills the step (so does the OOM
                    // killer). A daemon that is going away is the failure to report.
                    daemon_gone_during(session, &resolved.name).await?;
                }
                return Err(build_failed(resolved, &failure).into());
            }
        }
    }
}

/// The key names the base the build started from; a base removed or replaced since
/// (`docker rmi`, a forced bootstrap) would make that a lie, so nothing is tagged.
async fn check_base(
    engine: &impl Images,
    resolved: &ResolvedSpec,
    base_id: &str,
    image_id: &str,
) -> anyhow::Result<()> {
    let base_now = engine.image(&resolved.base).await?;
    if base_now.as_ref().map(|image| image.id.as_str()) == Some(base_id) {
        return Ok(());
    }
    let _ = engine.remove_image(image_id, true).await;
    Err(HostError {
        message: format!(
            "the base image `{}` was {} while `{}` was building; nothing was tagged",
            resolved.base,
            if base_now.is_some() {
                "replaced"
            } else {
                "removed"
            },
            resolved.name
        ),
        hint: format!(
            "make sure `{}` stays (`tfimg base bootstrap {}` makes it) and build again",
            resolved.base, resolved.base
        ),
    }
    .into())
}

/// The first 12 hex digits of an image id.
fn short_id(id: &str) -> &str {
    let hex = id.strip_prefix("sha256:").unwrap_or(id);
    &hex[..hex.len().min(12)]
}

/// An error when the daemon stops answering within 3 s (it is shutting down).
async fn daemon_gone_during(
    session: Session<'_, impl Daemon, impl Clock>,
    name: &str,
) -> anyhow::Result<()> {
    let Session { engine, host, .. } = session;
    for _ in 0..12 {
        if let Err(error) = engine.still_there().await {
            return Err(anyhow::Error::from(error).context(format!(
                "the Docker daemon went away while `{name}` was building; nothing was tagged"
            )));
        }
        host.sleep(Duration::from_millis(250)).await;
    }
    Ok(())
}

/// Waits (up to 20 s) until the container of an interrupted build step is gone, removing
/// it when the daemon has not.
async fn remove_build_container(session: Session<'_, impl Containers, impl Clock>, id: &str) {
    let Session { engine, host, .. } = session;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        match engine.container(id).await {
            Ok(Some(_)) => {
                let _ = engine.remove_container(id, true).await;
            }
            Ok(None) | Err(_) => return,
        }
        host.sleep(Duration::from_millis(100)).await;
    }
}

/// What a spec without its own lock takes from the one it inherits, and what stays loose.
fn inherited_note(resolved: &ResolvedSpec, pins: crate::lock::Pins) -> String {
    let loose = match pins.whole() {
        true => String::new(),
        false => format!("; `tfimg lock {}` pins the rest too", resolved.source),
    };
    format!(
        "`{}` has no lock of its own: `{}` pins {} (the images built from it share them){loose}",
        resolved.name,
        pins.locked.display,
        pins.layers(),
    )
}

fn build_failed(resolved: &ResolvedSpec, failure: &BuildFailure) -> InputError {
    let name = &resolved.name;
    if let Some(pins) = crate::lock::pins(resolved) {
        let locked = pins.locked;
        let refused = crate::lock::hash_mismatches(&failure.output);
        if !refused.is_empty() {
            return InputError::new(
                format!(
                    "pip refused {}: its sha256 is not the lock's (`{}`)",
                    refused
                        .iter()
                        .map(|package| format!("`{package}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    locked.display
                ),
                "the file PyPI serves is not the one locked: the lock was altered, or the file was replaced upstream; make the lock again (`tfimg lock SPEC`) only if you trust the change",
            );
        }
    }
    let mut message = match &failure.step {
        Some((index, total, instruction)) => {
            let instruction: String = instruction.chars().take(120).collect();
            format!(
                "building `{name}` failed at step {index}/{total} `{instruction}`: {}",
                failure.message
            )
        }
        None => format!("building `{name}` failed: {}", failure.message),
    };
    for line in &failure.output {
        message.push_str("\n  | ");
        message.push_str(line);
    }
    let tls_inspected = failure.output.iter().any(|line| {
        line.contains("CERTIFICATE_VERIFY_FAILED") || line.contains("certificate verify failed")
    });
    let hint = if failure.message.ends_with("returned a non-zero code: 137") {
        "the step was killed (SIGKILL), most often by the kernel's out-of-memory killer: give Docker more memory or build fewer images at once".to_string()
    } else if tls_inspected {
        format!("this network inspects TLS: give its CA with `--ca-cert PATH` (or `ca_cert:` in ~/.config/tfimg/config.yaml, or {})", labels::CA_CERT_VARIABLE)
    } else {
        "the step's output is above; fix the spec (`tfimg show` prints what it resolves to) and build again".to_string()
    };
    InputError::new(message, hint)
}

async fn verify(
    session: Session<'_, impl Containers, impl Secrets + Clock>,
    image_id: &str,
    name: &str,
) -> anyhow::Result<()> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let marker = format!("{name}-{}", host.random_hex(6)?);
    let one_off = OneOff {
        image: image_id.to_string(),
        command: vec!["python".to_string(), format!("{TFIMG_DIR}/{VERIFY}")],
        labels: HashMap::from([(labels::VERIFY.to_string(), marker.clone())]),
        network_disabled: true,
        ..OneOff::default()
    };
    let finished = tokio::select! {
        finished = engine.run_once(&one_off, VERIFY_DEADLINE) => finished?,
        _ = host.interrupted() => {
            // The one-off container must not outlive an interrupted build.
            let label = labels::verify_filter(&marker);
            for container in engine.containers_with_label(&label).await.unwrap_or_default() {
                let _ = engine.remove_container(&container.id, true).await;
            }
            return Err(Interrupted {
                what: format!("the verification of `{name}` was stopped and nothing was tagged"),
            }
            .into());
        }
    };
    let lines: Vec<&str> = finished
        .output
        .lines()
        .filter(|line| line.starts_with("ok ") || line.starts_with("FAIL "))
        .collect();
    for line in &lines {
        reporter.output(line);
    }
    if finished.exit_code == Some(0) {
        return Ok(());
    }
    let shown: Vec<&str> = if lines.is_empty() {
        finished
            .output
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect()
    } else {
        lines
    };
    Err(InputError::new(
        format!(
            "verification of `{name}` failed (exit {}); the image was not tagged:\n  | {}",
            finished.exit_text(),
            shown.join("\n  | ")
        ),
        "the failing checks are marked FAIL; `--no-verify` skips verification",
    )
    .into())
}

mod lock;
mod prune;
#[cfg(test)]
mod tests;
