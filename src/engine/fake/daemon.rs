//! The fake daemon: its facts (local unless a test puts it elsewhere), its one-off
//! containers and programs on its host. Each one-off is
//! recorded (`run-once IMAGE` in the calls, the whole request in `one_offs_run`) and ends
//! as the test scripted (`one_offs` in order, then `run_once`, else a verification that
//! passes); programs on an ssh engine's host answer from `host_programs`
//! (`run-on-host nvidia-smi ...` in the calls).

use std::time::Duration;

use super::{FakeEngine, FakeState};
use crate::engine::{Daemon, EngineError, EngineInfo, EngineVersion, Finished, OneOff};

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

fn run_on_host(engine: &FakeEngine, program: &[&str]) -> Option<String> {
    if !engine.tunnels.borrow().remote {
        return None;
    }
    let words = program.join(" ");
    let mut state = engine.state.borrow_mut();
    state.record(format!("run-on-host {words}"));
    state.host_programs.get(&words).cloned()
}

impl Daemon for FakeEngine {
    fn endpoint(&self) -> &str {
        "fake://engine"
    }

    fn on_this_machine(&self) -> bool {
        !self.tunnels.borrow().remote && !self.state.borrow().tcp_elsewhere
    }

    async fn run_on_host(&self, program: &[&str], _deadline: Duration) -> Option<String> {
        run_on_host(self, program)
    }

    async fn version(&self) -> Result<EngineVersion, EngineError> {
        Ok(EngineVersion {
            version: "fake".to_string(),
            api_version: "1.41".to_string(),
            negotiated_api: "1.41".to_string(),
            os: "linux".to_string(),
            arch: "amd64".to_string(),
        })
    }

    async fn info(&self) -> Result<EngineInfo, EngineError> {
        let mut state = self.state.borrow_mut();
        state.record("info".to_string());
        Ok(state.info.clone())
    }

    async fn cdi_supported(&self) -> bool {
        self.state.borrow().cdi
    }

    async fn still_there(&self) -> Result<(), EngineError> {
        Ok(())
    }
}
