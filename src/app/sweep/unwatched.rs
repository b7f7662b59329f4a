//! Attempts no tfimg watched: the run was killed (`kill -9`, a closed terminal) while
//! their containers ran on. Their containers say what became of them, and that is what
//! going on with the sweep (`resume`), `tfimg sweep stop` (`stop`) and `tfimg sweep
//! status|results` (here, read only) go by: an attempt that ended by itself keeps its
//! result (exit 0 is done, and never runs again), one still running runs on, one killed by
//! a signal runs again without using a retry. A container made just before the kill has
//! no journal line yet: its labels name its trial and attempt, and it is adopted (its
//! start written to the journal) rather than removed, so a trial that finished in it is
//! not run again over its own folder.

use std::path::Path;

use super::folder::SweepFolder;
use crate::app::session::{Session, Sinks};
use crate::engine::prelude::{Containers, Daemon};
use crate::engine::{ContainerFacts, EngineError};
use crate::host::prelude::{Clock, Confined, Files, State, Trust};
use crate::host::LockAttempt;
use crate::labels;
use crate::sweep::journal::{Attempt, AttemptEnd, Event, Replay};
use crate::sweep::trials::STATUS_FILE;
use crate::sweep::Trial;

pub use crate::sweep::unwatched::{exit_of, Seen, Unwatched};

/// What the container `facts` say of its attempt (`None`: there is none).
pub fn seen(facts: Option<&ContainerFacts>) -> Seen {
    match facts {
        Some(facts) => Seen::of_state(&facts.state, facts.exit_code, facts.finished_ms),
        None => Seen::Gone,
    }
}

/// The container a journal line names, as its own labels tell it.
#[derive(Debug, Clone)]
pub enum Named {
    /// It is that trial of that sweep.
    Trial(Box<ContainerFacts>),
    /// It is there, but its labels do not make it that trial: acted on never (a journal
    /// another account wrote, or one edited by hand, can name any container).
    Stranger(String),
    Gone,
}

impl Named {
    /// The trial's container, when it is one.
    pub fn facts(&self) -> Option<&ContainerFacts> {
        match self {
            Named::Trial(facts) => Some(facts),
            _ => None,
        }
    }

    /// What is said of a stranger a journal named for `trial`.
    pub fn stranger_note(&self, trial: &str) -> Option<String> {
        match self {
            Named::Stranger(name) => Some(format!(
                "{trial}: the journal names container `{name}`, whose labels do not make it this trial's; it is left alone and the trial counts as gone"
            )),
            _ => None,
        }
    }
}

/// The container `id` that the journal names for `trial` of `sweep`, inspected: a trial's
/// only when its labels say it is that sweep's trial (`io.tfimg.sweep`, `io.tfimg.trial`).
pub async fn named(
    engine: &impl Containers,
    sweep: &str,
    trial: &str,
    id: &str,
) -> Result<Named, EngineError> {
    let Some(facts) = engine.container(id).await? else {
        return Ok(Named::Gone);
    };
    let says = |key: &str, wanted: &str| facts.labels.get(key).map(String::as_str) == Some(wanted);
    if says(labels::SWEEP, sweep) && says(labels::TRIAL, trial) {
        Ok(Named::Trial(Box::new(facts)))
    } else {
        Ok(Named::Stranger(facts.name))
    }
}

/// The starts to add to the journal for containers of the sweep that no journal line
/// owns but whose labels name one of `trials` and its next attempt (made by a run killed
/// before it wrote the start), when that trial has nothing running and is not done.
/// Containers that never started are not adopted (they did nothing; they are removed as
/// strays). `image`: the image id to record (the container's image reference when the
/// caller knows none); `now_ms` when the daemon does not say when it started.
pub async fn adoptions(
    engine: &impl Containers,
    sweep: &str,
    trials: &[Trial],
    replay: &Replay,
    image: Option<&str>,
    now_ms: u64,
) -> Result<Vec<Event>, EngineError> {
    let mut events = Vec::new();
    for listed in engine
        .containers_with_label(&labels::sweep_filter(sweep))
        .await?
    {
        let owned = replay.trials.values().any(|history| {
            history
                .attempts
                .iter()
                .any(|attempt| attempt.container_id == listed.id)
        });
        let trial = listed.labels.get(labels::TRIAL);
        let attempt = listed
            .labels
            .get(labels::ATTEMPT)
            .and_then(|number| number.parse::<u32>().ok());
        let (Some(trial), Some(attempt)) = (trial, attempt) else {
            continue;
        };
        if owned || !trials.iter().any(|known| &known.id == trial) {
            continue;
        }
        let history = replay.trial(trial);
        let open = history.last().is_some_and(|last| last.end.is_none());
        if open || history.done().is_some() || attempt != history.next_attempt() {
            continue;
        }
        // Inspected for its GPUs, its state and its start (a listing has none of them).
        let Some(facts) = engine.container(&listed.id).await? else {
            continue;
        };
        if seen(Some(&facts)) == Seen::NeverStarted {
            continue;
        }
        let gpus = facts
            .device_requests
            .iter()
            .flat_map(|request| request.device_ids.clone())
            .collect();
        events.push(Event::TrialStarted {
            trial: trial.clone(),
            attempt,
            container: facts.name.clone(),
            container_id: facts.id.clone(),
            gpus,
            image: image.map_or(facts.image.clone(), str::to_string),
            time_ms: facts.started_ms.unwrap_or(now_ms),
        });
    }
    Ok(events)
}

/// The end `status.json` in the trial's folder `dir` records for `attempt`, when it
/// records one for that very attempt and container: what is left to go by when the
/// container is gone. The trial could have written the file itself; it says no more
/// than the trial's own exit code would.
pub fn recorded_end(host: &impl Confined, dir: &Path, attempt: &Attempt) -> Option<AttemptEnd> {
    let read = host.read_confined(dir, STATUS_FILE, 0, 64 * 1024).ok()?;
    let status: serde_json::Value = serde_json::from_slice(&read.bytes).ok()?;
    let same = status["attempt"].as_u64() == Some(u64::from(attempt.number))
        && status["container"].as_str() == Some(attempt.container.as_str());
    if !same {
        return None;
    }
    Some(AttemptEnd {
        exit_code: Some(status["exit_code"].as_i64()?),
        stopped: status["stopped"].as_bool().unwrap_or(false),
        finished_ms: status["finished_ms"].as_u64()?,
    })
}

/// What became of the attempts of the sweep in `dir` that no tfimg watches (a run must
/// not hold its lock), learned from their containers; `replay` (the journal's) is
/// brought up to date with it: adopted attempts added, learned ends set. Nothing is
/// written: the next run or `tfimg sweep stop` records them.
pub async fn learn(
    session: Session<'_, impl Containers, impl Confined>,
    dir: &Path,
    sweep: &str,
    trials: &[Trial],
    replay: &mut Replay,
    now_ms: u64,
) -> Result<Vec<Unwatched>, EngineError> {
    let Session { engine, host, .. } = session;
    let mut adopted = Vec::new();
    for event in adoptions(engine, sweep, trials, replay, None, now_ms).await? {
        if let Event::TrialStarted { container_id, .. } = &event {
            adopted.push(container_id.clone());
        }
        replay.apply(&event);
    }
    let mut learned = Vec::new();
    for trial in trials {
        let Some(history) = replay.trials.get_mut(&trial.id) else {
            continue;
        };
        let Some(attempt) = history.attempts.last_mut() else {
            continue;
        };
        if attempt.end.is_some() {
            continue;
        }
        let named = named(engine, sweep, &trial.id, &attempt.container_id).await?;
        let unwatched = Unwatched {
            trial: trial.id.clone(),
            attempt: attempt.number,
            container: attempt.container.clone(),
            seen: seen(named.facts()),
            adopted: adopted.contains(&attempt.container_id),
        };
        let recorded = match unwatched.seen {
            Seen::Gone => recorded_end(host, &dir.join(&trial.id), attempt),
            _ => None,
        };
        attempt.end = unwatched.seen.end(recorded, now_ms);
        learned.push(unwatched);
    }
    Ok(learned)
}

/// What `tfimg sweep status|results` show of a sweep: its folder, whether a tfimg runs it,
/// and, when none does, what its containers say of the attempts no tfimg watches (shown
/// as they stand, recorded by the next run or `tfimg sweep stop`).
#[derive(Debug, Clone)]
pub struct Looked {
    /// The folder, its replay brought up to date with `unwatched`.
    pub found: SweepFolder,
    /// A tfimg runs the sweep now (it holds the sweep's lock).
    pub running: bool,
    pub unwatched: Vec<Unwatched>,
    /// Why the engine could not say (the journal's word stands then).
    pub unreached: Option<String>,
}

/// The sweep the user named (`target`, from the folder `current`), read for `status`,
/// `results` and `report`: when the engine has something to say (`Looked::asks_engine`),
/// what it says of the trials no tfimg watched; it is connected (`connect`) only then, and
/// its failure is said in `unreached`, not returned.
pub async fn look_named<E: Daemon + Containers>(
    host: &(impl State + Files + Confined + Trust + Clock),
    current: &Path,
    target: &str,
    connect: impl AsyncFnOnce() -> anyhow::Result<E>,
    sinks: Sinks<'_>,
) -> anyhow::Result<Looked> {
    let dir = super::folder::locate(host, current, target)?;
    let mut looked = look(host, &dir)?;
    if looked.asks_engine() {
        let engine = connect().await;
        let connected = engine
            .as_ref()
            .map_err(|error| anyhow::anyhow!("{error:#}"));
        looked.learn(connected, host, sinks).await;
    }
    Ok(looked)
}

/// Reads the sweep in `dir` for `status` and `results`, asking no engine (see
/// [`Looked::asks_engine`] and [`Looked::learn`]).
pub fn look(host: &(impl State + Files + Confined), dir: &Path) -> anyhow::Result<Looked> {
    let found = super::folder::read(host, dir)?;
    let running = matches!(
        host.try_lock(&super::lock_name(&found.sweep.output), false),
        LockAttempt::Busy
    );
    Ok(Looked {
        found,
        running,
        unwatched: Vec::new(),
        unreached: None,
    })
}

impl Looked {
    /// What to say of the trials no tfimg watched (`sweep::unwatched::unwatched_lines`).
    pub fn lines(&self) -> Vec<String> {
        crate::sweep::unwatched::unwatched_lines(
            &self.found.sweep.name,
            &self.unwatched,
            self.unreached.as_deref(),
        )
    }

    /// Whether the engine has something to say: no tfimg runs the sweep, and its last run
    /// did not end as it should (an attempt still open, or no `sweep_stopped` after its
    /// last start: a container made just before a kill has no journal line).
    pub fn asks_engine(&self) -> bool {
        let replay = &self.found.replay;
        let open = replay
            .trials
            .values()
            .any(|history| history.last().is_some_and(|last| last.end.is_none()));
        let cut_short = replay.runs > 0 && replay.last_stop.is_none();
        !self.running && (open || cut_short)
    }

    /// What the engine (`connected`, or why it could not be) says of the attempts no
    /// tfimg watched: `unwatched`, and the replay brought up to date with it. A failure
    /// leaves the journal's word and says why in `unreached`.
    pub async fn learn(
        &mut self,
        connected: anyhow::Result<&impl Containers>,
        host: &(impl Clock + Confined),
        sinks: Sinks<'_>,
    ) {
        let now_ms = super::attempt::now_ms(host);
        let found = &mut self.found;
        let learned = match connected {
            Ok(engine) => learn(
                Session::new(engine, host, sinks),
                &found.dir,
                &found.sweep.name,
                &found.trials,
                &mut found.replay,
                now_ms,
            )
            .await
            .map_err(anyhow::Error::from),
            Err(error) => Err(error),
        };
        match learned {
            Ok(unwatched) => self.unwatched = unwatched,
            Err(error) => self.unreached = Some(format!("{error:#}")),
        }
    }
}
