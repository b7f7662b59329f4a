//! The fake's networks: a set of names, each call recorded (`ensure-network NAME`,
//! `remove-network NAME`).

use std::collections::BTreeMap;

use super::FakeEngine;
use crate::engine::{EngineError, Networks};

impl Networks for FakeEngine {
    async fn ensure_network(
        &self,
        name: &str,
        _labels: &BTreeMap<String, String>,
    ) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("ensure-network {name}"));
        state.networks.insert(name.to_string());
        Ok(())
    }

    async fn remove_network(&self, name: &str) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("remove-network {name}"));
        state.networks.remove(name);
        Ok(())
    }
}
