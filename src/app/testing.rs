//! What the use cases' unit tests share: a runtime for one future, a launch request
//! for a built-in spec (its image as a build would tag it, nothing else asked for), and
//! that request launched on the fakes.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::app::launch::{self, LaunchRequest, Launched, Target};
use crate::app::session::Session;
use crate::engine::fake::FakeEngine;
use crate::host::fake::FakeHost;
use crate::spec::Catalog;

/// Runs `future` to its end on a runtime of its own.
pub fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The launch target of the built-in `spec`, as `tfimg/SPEC:2.9.3-0123456789ab`.
pub fn target(spec: &str) -> Target {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, spec).unwrap();
    crate::app::run::target_of_spec(&resolved, format!("tfimg/{spec}:2.9.3-0123456789ab"))
}

/// A launch of the built-in `spec` named `lab`, as uid/gid 4321/4322, with defaults.
pub fn request(spec: &str) -> LaunchRequest {
    LaunchRequest::new(target(spec), "lab".to_string(), Some((4321, 4322)))
}

/// `request` checked and started as `run` does: the launcher's `prepare`, then `start`
/// (no port reserved before it), on a runtime of its own.
pub fn prepare_and_start(
    session: Session<'_, FakeEngine, FakeHost>,
    request: LaunchRequest,
) -> anyhow::Result<Launched> {
    block_on(async {
        let prepared = launch::Launcher::of(session).prepare(request, None).await?;
        let reserved = RefCell::new(BTreeSet::new());
        launch::Launcher::of(session)
            .start(prepared, &reserved, false, |_| {})
            .await
    })
}

/// `app::team::up` of `team`, whose members all use the built-in `spec` (its image as
/// `target` tags it), as uid/gid 4321/4322, with `gateway` as the gateway's image.
pub fn up_team(
    session: Session<'_, crate::engine::fake::FakeEngine, crate::host::fake::FakeHost>,
    team: &crate::team::Team,
    spec: &str,
    gateway: Option<&str>,
) -> crate::app::team::UpReport {
    up_team_result(session, team, spec, gateway).unwrap()
}

/// [`up_team`], its error kept.
pub fn up_team_result(
    session: Session<'_, crate::engine::fake::FakeEngine, crate::host::fake::FakeHost>,
    team: &crate::team::Team,
    spec: &str,
    gateway: Option<&str>,
) -> anyhow::Result<crate::app::team::UpReport> {
    let catalog = Catalog::builtin(PathBuf::from("/project"));
    let resolved = crate::spec::resolve(&catalog, spec).unwrap();
    let specs = BTreeMap::from([(spec.to_string(), resolved)]);
    let images = crate::app::team::TeamImages {
        specs: BTreeMap::from([(spec.to_string(), target(spec).image)]),
        gateway: gateway.map(str::to_string),
        ..Default::default()
    };
    block_on(crate::app::team::up(
        session,
        team,
        &specs,
        &images,
        (4321, 4322),
        Some(false),
    ))
}
