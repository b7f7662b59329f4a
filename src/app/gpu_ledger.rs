//! The GPU ledger: who holds which GPU of an engine's host. Every tfimg container that
//! was given GPUs says so in its labels (`io.tfimg.gpus`); the ledger reads them from one
//! listing, adds what launches prepared but not started yet will hold (a team's earlier
//! members, a sweep's own slots), and answers what a new launch may take (`sharing`):
//! held GPUs refused unless it shares, a count given the least-loaded free ones.

use crate::engine::prelude::Containers;
use crate::engine::{ContainerFacts, EngineError};
use crate::host::NvidiaFacts;
use crate::labels;
use crate::plan::gpus::share::{self, Holder, Sharing};

/// The holders of the GPUs of one host (`nvidia`'s facts).
#[derive(Debug, Clone)]
pub struct GpuLedger<'a> {
    nvidia: &'a NvidiaFacts,
    holders: Vec<Holder>,
}

impl<'a> GpuLedger<'a> {
    /// The engine's tfimg containers that hold GPUs of the host of `nvidia`, but those
    /// `skip` leaves out (the one a launch replaces, a sweep's own trials). Nothing is
    /// asked of a host without GPUs.
    pub async fn read(
        engine: &impl Containers,
        nvidia: &'a NvidiaFacts,
        skip: impl Fn(&ContainerFacts) -> bool,
    ) -> Result<GpuLedger<'a>, EngineError> {
        if nvidia.gpus.is_empty() {
            return Ok(GpuLedger::among(&[], nvidia, skip));
        }
        let containers = engine.containers_with_label(labels::GPUS).await?;
        Ok(GpuLedger::among(&containers, nvidia, skip))
    }

    /// The holders among `containers` (a listing already made), but those `skip` leaves
    /// out.
    pub fn among(
        containers: &[ContainerFacts],
        nvidia: &'a NvidiaFacts,
        skip: impl Fn(&ContainerFacts) -> bool,
    ) -> GpuLedger<'a> {
        let holders = containers
            .iter()
            .filter(|container| !skip(container))
            .filter_map(|container| {
                share::holder(
                    &container.name,
                    &container.state,
                    &container.labels,
                    &nvidia.gpus,
                )
            })
            .collect();
        GpuLedger { nvidia, holders }
    }

    /// `holder` holds its GPUs too (a launch prepared before this one, a sweep's slots).
    pub fn hold(&mut self, holder: Holder) {
        self.holders.push(holder);
    }

    /// Who holds what.
    pub fn holders(&self) -> &[Holder] {
        &self.holders
    }

    /// What a launch on this host may take: `share` takes held GPUs too.
    pub fn sharing(&self, share: bool) -> Sharing<'_> {
        let nvidia = self.nvidia;
        Sharing {
            host: &nvidia.gpus,
            used_mib: nvidia.used_mib(),
            holders: &self.holders,
            share,
            engine_host: nvidia.probe.as_ref().map(|probe| probe.engine.as_str()),
        }
    }
}
