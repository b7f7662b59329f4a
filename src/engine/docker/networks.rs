//! User-defined bridge networks: a team's containers find each other there by name.

use std::collections::BTreeMap;

use bollard::models::NetworkCreateRequest;

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

    async fn remove_network(&self, name: &str) -> Result<(), EngineError> {
        match self.client.remove_network(name).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(error) => Err(self.fail(&format!("remove network `{name}`"), error)),
        }
    }
}
