//! The fake daemon: its facts (local unless a test puts it elsewhere), its one-off
//! containers and programs on its host. Each one-off is
//! recorded (`run-once IMAGE` in the calls, the whole request in `one_offs_run`) and ends
//! as the test scripted (`one_offs` in order, then `run_once`, else a verification that
//! passes); programs on an ssh engine's host answer from `host_programs`
//! (`run-on-host nvidia-smi ...` in the calls). `gpu_server` scripts a GPU host's probe.

use std::time::Duration;

use super::{FakeEngine, FakeState};
use crate::{Daemon, EngineError, EngineInfo, EngineVersion, Finished, OneOff};

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
        self.endpoint
            .get()
            .map(String::as_str)
            .unwrap_or("fake://engine")
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

impl FakeEngine {
    /// An engine on another host reached through ssh (its ports tunneled) holding `image`,
    /// whose host has `gpus` H100s (`GPU-0`, `GPU-1`, ...), driver 580.65.06 and the
    /// toolkit: its next two one-off containers print what nvidia-smi prints there, the
    /// query's rows, then the table (CUDA 13.0).
    pub fn gpu_server(image: &str, gpus: u32) -> FakeEngine {
        let engine = FakeEngine::new();
        engine.tunnels.borrow_mut().remote = true;
        engine.add_image(&[image], &[]);
        engine.answer_gpu_probe(gpus);
        engine
    }

    /// Queues the answers of one GPU probe (its query and its table) for a host of
    /// `gpus` H100s: each probe takes them.
    pub fn answer_gpu_probe(&self, gpus: u32) {
        let rows: String = (0..gpus)
            .map(|index| {
                format!("{index}, GPU-{index}, NVIDIA H100 80GB HBM3, 81559, 580.65.06, 9.0\n")
            })
            .collect();
        let table = "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |\n";
        let mut state = self.state.borrow_mut();
        for stdout in [rows, table.to_string()] {
            state.one_offs.push_back(Ok(Finished {
                stdout,
                ..Finished::default()
            }));
        }
    }
}
