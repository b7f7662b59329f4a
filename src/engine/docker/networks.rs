//! User-defined bridge networks: a team's containers find each other there by name.

use std::collections::{BTreeMap, HashMap};

use bollard::models::{NetworkConnectRequest, NetworkCreateRequest, NetworkDisconnectRequest};

use super::Docker;
use crate::engine::{EngineError, Networks};

impl Networks for Docker {
    async fn ensure_network(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), EngineError> {
        match self.client.inspect_network(name, None).await {
            Ok(_) => return Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {}
            Err(error) => return Err(self.fail(&format!("inspect network `{name}`"), error)),
        }
        let request = NetworkCreateRequest {
            name: name.to_string(),
            driver: Some("bridge".to_string()),
            labels: Some(labels.clone().into_iter().collect()),
            ..Default::default()
        };
        match self.client.create_network(request).await {
            Ok(_) => Ok(()),
            // Made meanwhile by another `up` of the same team.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409, ..
            }) => Ok(()),
            Err(error) => Err(self.fail(&format!("create network `{name}`"), error)),
        }
    }

    async fn connect_network(&self, name: &str, container: &str) -> Result<(), EngineError> {
        let request = NetworkConnectRequest {
            container: container.to_string(),
            endpoint_config: None,
        };
        match self.client.connect_network(name, request).await {
            Ok(()) => Ok(()),
            // Already on it: Docker 20.10 says 403 "already exists in network", later ones
            // 409 or nothing.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 403 | 409,
                message,
            }) if message.contains("already") => Ok(()),
            Err(error) => {
                Err(self.fail(&format!("connect `{container}` to network `{name}`"), error))
            }
        }
    }

    async fn networks_with_label(&self, label: &str) -> Result<Vec<String>, EngineError> {
        let filters = HashMap::from([("label".to_string(), vec![label.to_string()])]);
        let options = bollard::query_parameters::ListNetworksOptions {
            filters: Some(filters),
        };
        let listed = self
            .client
            .list_networks(Some(options))
            .await
            .map_err(|error| self.fail("list networks", error))?;
        let mut names: Vec<String> = listed
            .into_iter()
            .filter_map(|network| network.name)
            .collect();
        names.sort();
        Ok(names)
    }

    async fn remove_network(&self, name: &str) -> Result<(), EngineError> {
        let inspected = match self.client.inspect_network(name, None).await {
            Ok(inspected) => inspected,
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => return Ok(()),
            Err(error) => return Err(self.fail(&format!("inspect network `{name}`"), error)),
        };
        // A member's network still holds the gateway when the member leaves the team.
        for container in inspected.containers.unwrap_or_default().into_keys() {
            let request = NetworkDisconnectRequest {
                container,
                force: Some(true),
            };
            match self.client.disconnect_network(name, request).await {
                Ok(()) => {}
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => {}
                Err(error) => {
                    return Err(self.fail(&format!("disconnect from network `{name}`"), error))
                }
            }
        }
        match self.client.remove_network(name).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(error) => Err(self.fail(&format!("remove network `{name}`"), error)),
        }
    }
}
