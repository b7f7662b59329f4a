//! The fake engine's one-off containers and programs on its host: each one-off is
//! recorded (`run-once IMAGE` in the calls, the whole request in `one_offs_run`) and ends
//! as the test scripted (`one_offs` in order, then `run_once`, else a verification that
//! passes); programs on an ssh engine's host answer from `host_programs`
//! (`run-on-host nvidia-smi ...` in the calls).

use super::{FakeEngine, FakeState};
use crate::engine::{EngineError, Finished, OneOff};

pub(super) fn run_once(state: &mut FakeState, spec: &OneOff) -> Result<Finished, EngineError> {
    state.record(format!("run-once {}", spec.image));
    state.one_offs_run.push(spec.clone());
    if let Some(next) = state.one_offs.pop_front() {
        return next;
    }
    Ok(state.run_once.clone().unwrap_or(Finished {
        exit_code: Some(0),
        output: "ok    tensorflow version: fake\n".to_string(),
        stdout: "ok    tensorflow version: fake\n".to_string(),
    }))
}

pub(super) fn run_on_host(engine: &FakeEngine, program: &[&str]) -> Option<String> {
    if !engine.tunnels.borrow().remote {
        return None;
    }
    let words = program.join(" ");
    let mut state = engine.state.borrow_mut();
    state.record(format!("run-on-host {words}"));
    state.host_programs.get(&words).cloned()
}
