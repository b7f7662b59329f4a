//! `tpe:` in the run: each trial's params are proposed when a slot is free to start it,
//! from the objective values of the trials that ended (done, or stopped early: told the
//! value they reached) and the params of those still running (told as pending), and
//! journaled before the trial starts, so a resumed sweep runs the trials it proposed and
//! proposes only the rest.

use super::{Note, Runner};
use crate::engine::Engine;
use crate::host::Host;
use crate::sweep::journal::Event;
use crate::sweep::schedule::Progress;
use crate::sweep::search::Search;
use crate::sweep::trials;
use crate::sweep::value::{params_object, Param};

impl<E: Engine, H: Host> Runner<'_, E, H> {
    /// Makes trial `index` (and any before it) known: for `tpe:`, proposes its params
    /// and journals them. Other searches know every trial already.
    pub(super) fn propose(&mut self, index: usize) -> anyhow::Result<()> {
        let sweep = &self.run.sweep;
        let (Search::Tpe(tpe), Some(objective)) = (&sweep.search, &sweep.objective) else {
            return Ok(());
        };
        while self.trials.len() <= index {
            let next = self.trials.len();
            let values = self.ended_values();
            let ended: Vec<(&[Param], f64)> = values
                .iter()
                .map(|(trial, value)| (self.trials[*trial].params.as_slice(), *value))
                .collect();
            let taken: Vec<&[Param]> = self.trials.iter().map(|t| t.params.as_slice()).collect();
            let pending: Vec<&[Param]> = (0..self.trials.len())
                .filter(|trial| matches!(self.scheduler.progress(*trial), Progress::Running { .. }))
                .map(|trial| self.trials[trial].params.as_slice())
                .collect();
            let params = tpe.propose(next, objective.mode, &ended, &pending, &taken);
            let learned_from = if next < tpe.startup { 0 } else { ended.len() };
            let trial = trials::trial(sweep, next, params);
            self.journal(&Event::TrialProposed {
                trial: trial.id.clone(),
                params: params_object(&trial.params),
                time_ms: self.now_ms(),
            })?;
            (self.notify)(Note::Proposed {
                trial: trial.id.clone(),
                params: trial.params.clone(),
                learned_from,
            });
            self.trials.push(trial);
        }
        Ok(())
    }

    /// The objective value of every known trial that ended, in trial order: each read
    /// from its metrics once.
    fn ended_values(&mut self) -> Vec<(usize, f64)> {
        for trial in 0..self.trials.len() {
            let ended = matches!(
                self.scheduler.progress(trial),
                Progress::Done { .. } | Progress::StoppedEarly { .. }
            );
            if ended && !self.ended_values.contains_key(&trial) {
                let value = self.metric(trial).map(|(_, value)| value);
                self.ended_values.insert(trial, value);
            }
        }
        self.ended_values
            .iter()
            .filter_map(|(trial, value)| value.map(|value| (*trial, value)))
            .collect()
    }
}
