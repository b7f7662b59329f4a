//! The GPUs a launch chose, held against every other tfimg of the engine's host between
//! choosing and creating. Two commands started in the same instant read the same holders
//! and choose the same free GPU; nothing but the daemon is shared by all of them (other
//! accounts in the docker group, another machine reaching the engine over ssh), so the
//! reservation lives there: the container is created with its `io.tfimg.gpus` label,
//! which is the claim, and before it starts the launch reads the claims again.
//!
//! A rival is another tfimg container whose GPUs overlap this one's (unless this launch
//! shares). One that runs holds them: this launch lets go. One just created (within
//! [`RACE_WINDOW_S`] of this one, by the daemon's clock) is a racer: of the two, the one
//! first in the daemon's order (creation second, then id) keeps the GPUs; the other lets
//! go. The first one waits until its later rival has either gone or started (a racer that
//! had not yet seen it when it looked), and lets go in the second case. Whoever reads the
//! listing after both exist sees the other, and at most one of two racers can miss the
//! other, so two launches never both keep a GPU. A racer that neither starts nor goes
//! within [`WAIT_POLLS`] polls is a container created and not started (`--no-start`),
//! which holds no GPU (`share::holder`), and is left out from then on.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::app::session::Session;
use crate::engine::prelude::Containers;
use crate::engine::{ContainerFacts, EngineError};
use crate::host::prelude::Clock;
use crate::host::NvidiaFacts;
use crate::labels;
use crate::plan::gpus::share;

/// Containers created this many seconds apart or closer are racers.
pub const RACE_WINDOW_S: i64 = 60;

/// How often the claims are read again while a racer is still deciding.
const POLL: Duration = Duration::from_millis(50);

/// Polls before a racer that neither starts nor goes counts as created-not-started (30 s).
pub const WAIT_POLLS: usize = 600;

/// How a launch stands after its claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Nobody else claims its GPUs: it may start.
    Kept,
    /// Another container holds or claimed them first: the launch lets go and chooses
    /// again once those have started or gone.
    LetGo {
        /// The rivals' names, for the note.
        holders: Vec<String>,
        /// The racers to wait for (created, not yet started), by id.
        racers: Vec<String>,
    },
}

/// Reads the claims on the GPUs of container `mine` until it knows whether the container
/// keeps them. `ignored`: racers found to be created-not-started (added to here).
pub async fn settle(
    session: Session<'_, impl Containers, impl Clock>,
    nvidia: &NvidiaFacts,
    mine: &str,
    kin: Option<&(String, String)>,
    ignored: &mut BTreeSet<String>,
) -> Result<Standing, EngineError> {
    let Session { engine, host, .. } = session;
    let mut polls = 0;
    loop {
        let containers = engine.containers_with_label(labels::GPUS).await?;
        let Some(own) = containers.iter().find(|container| container.id == mine) else {
            return Ok(Standing::Kept);
        };
        let rivals = rivals(own, &containers, nvidia, kin, ignored);
        if rivals.is_empty() {
            return Ok(Standing::Kept);
        }
        let first = |rival: &&ContainerFacts| order(rival) < order(own);
        if rivals.iter().any(|rival| !is_racer(rival) || first(rival)) {
            return Ok(Standing::LetGo {
                holders: rivals.iter().map(|rival| rival.name.clone()).collect(),
                racers: rivals
                    .iter()
                    .filter(|rival| is_racer(rival))
                    .map(|rival| rival.id.clone())
                    .collect(),
            });
        }
        // Only later racers: each lets go once it sees this one, or starts (then this
        // one lets go).
        polls += 1;
        if polls > WAIT_POLLS {
            ignored.extend(rivals.iter().map(|rival| rival.id.clone()));
            continue;
        }
        host.sleep(POLL).await;
    }
}

/// Waits until every racer of `racers` (ids) has started or gone, or was waited for
/// [`WAIT_POLLS`] polls (then it is added to `ignored`).
pub async fn wait_for(
    session: Session<'_, impl Containers, impl Clock>,
    racers: &[String],
    ignored: &mut BTreeSet<String>,
) -> Result<(), EngineError> {
    let Session { engine, host, .. } = session;
    for _ in 0..WAIT_POLLS {
        let containers = engine.containers_with_label(labels::GPUS).await?;
        let deciding = containers
            .iter()
            .any(|container| racers.contains(&container.id) && is_racer(container));
        if !deciding {
            return Ok(());
        }
        host.sleep(POLL).await;
    }
    ignored.extend(racers.iter().cloned());
    Ok(())
}

/// The containers among `containers` that claim a GPU `own` claims: those that hold
/// theirs, and racers created close to it. None when `own` shares, unless it claims
/// beside its `kin` (the containers carrying that label, which are never rivals).
fn rivals<'a>(
    own: &ContainerFacts,
    containers: &'a [ContainerFacts],
    nvidia: &NvidiaFacts,
    kin: Option<&(String, String)>,
    ignored: &BTreeSet<String>,
) -> Vec<&'a ContainerFacts> {
    let claim = |container: &ContainerFacts| {
        share::holder(&container.name, "running", &container.labels, &nvidia.gpus)
    };
    let Some(claimed) = claim(own).filter(|claimed| kin.is_some() || !claimed.sharing) else {
        return Vec::new();
    };
    let is_kin = |container: &ContainerFacts| {
        kin.is_some_and(|(key, value)| container.labels.get(key) == Some(value))
    };
    let close = |container: &ContainerFacts| match (container.created_s, own.created_s) {
        (Some(theirs), Some(ours)) => (theirs - ours).abs() <= RACE_WINDOW_S,
        _ => true,
    };
    containers
        .iter()
        .filter(|container| container.id != own.id && !ignored.contains(&container.id))
        .filter(|container| !is_kin(container))
        .filter(|container| {
            share::holder(
                &container.name,
                &container.state,
                &container.labels,
                &nvidia.gpus,
            )
            .is_some()
                || (is_racer(container) && close(container))
        })
        .filter(|container| {
            claim(container).is_some_and(|theirs| !theirs.gpus.is_disjoint(&claimed.gpus))
        })
        .collect()
}

/// Created and not started: it may be a launch still deciding.
fn is_racer(container: &ContainerFacts) -> bool {
    container.state == "created"
}

/// The daemon's order of creation: the second, then the id.
fn order(container: &ContainerFacts) -> (i64, &str) {
    (container.created_s.unwrap_or(i64::MAX), &container.id)
}
