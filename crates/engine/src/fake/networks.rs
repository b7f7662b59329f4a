//! The fake's networks: names with their labels and the containers on them, each call
//! recorded (`ensure-network NAME`, `connect-network NAME CONTAINER`, `remove-network NAME`).

use std::collections::{BTreeMap, BTreeSet};

use super::FakeEngine;
use crate::{EngineError, Networks};

/// A network of the fake: its labels and the containers (ids or names) joined to it after
/// their create.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FakeNetwork {
    pub labels: BTreeMap<String, String>,
    pub connected: BTreeSet<String>,
}

impl Networks for FakeEngine {
    async fn ensure_network(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("ensure-network {name}"));
        state
            .networks
            .entry(name.to_string())
            .or_insert_with(|| FakeNetwork {
                labels: labels.clone(),
                connected: BTreeSet::new(),
            });
        Ok(())
    }

    async fn connect_network(&self, name: &str, container: &str) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("connect-network {name} {container}"));
        match state.networks.get_mut(name) {
            Some(network) => {
                network.connected.insert(container.to_string());
                Ok(())
            }
            None => Err(EngineError::Failed {
                what: format!("connect `{container}` to network `{name}`"),
                message: "no such network".to_string(),
            }),
        }
    }

    async fn networks_with_label(&self, label: &str) -> Result<Vec<String>, EngineError> {
        let (key, value) = label.split_once('=').unwrap_or((label, ""));
        let state = self.state.borrow();
        Ok(state
            .networks
            .iter()
            .filter(|(_, network)| network.labels.get(key).map(String::as_str) == Some(value))
            .map(|(name, _)| name.clone())
            .collect())
    }

    async fn remove_network(&self, name: &str) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("remove-network {name}"));
        state.networks.remove(name);
        Ok(())
    }
}
