//! User-defined bridge networks: a team's containers find each other there by name.
//!
//! Docker lets several networks share a name, and then refuses the name as ambiguous
//! wherever it is used (a container's network, a connect, an inspect). Two `tfimg up` of
//! one team at once made such twins before `up` took a lock, and an older tfimg may have
//! left them: `ensure_network` settles them (`settle`), and `remove_network` removes
//! every network of the name, each by its id.

use std::collections::{BTreeMap, HashMap};

use bollard::models::{NetworkConnectRequest, NetworkCreateRequest, NetworkDisconnectRequest};

use super::Docker;
use crate::{EngineError, Networks};

/// One of the networks that share a name, as `settle` weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Twin {
    id: String,
    labels: BTreeMap<String, String>,
    /// Containers on it.
    containers: usize,
    /// When it was made (RFC 3339, as the daemon writes it).
    created: String,
}

/// What to do about several networks of one name that should be one: keep the one
/// containers are on (else the oldest) and remove the others, when every one carries
/// `labels` (tfimg made them, for this team) and at most one has containers; otherwise
/// the reason nothing is removed.
fn settle(twins: &[Twin], labels: &BTreeMap<String, String>) -> Result<Vec<String>, String> {
    let ours = |twin: &Twin| {
        labels
            .iter()
            .all(|(key, value)| twin.labels.get(key) == Some(value))
    };
    if !twins.iter().all(ours) {
        return Err("some of them were not made by tfimg for this team".to_string());
    }
    let used: Vec<&Twin> = twins.iter().filter(|twin| twin.containers > 0).collect();
    if used.len() > 1 {
        return Err("containers are on more than one of them".to_string());
    }
    let keep = used.first().copied().or_else(|| {
        twins
            .iter()
            .min_by(|a, b| (&a.created, &a.id).cmp(&(&b.created, &b.id)))
    });
    Ok(twins
        .iter()
        .filter(|twin| Some(twin.id.as_str()) != keep.map(|kept| kept.id.as_str()))
        .map(|twin| twin.id.clone())
        .collect())
}

impl Docker {
    /// The ids of the networks named exactly `name` (the daemon's name filter also
    /// matches parts of names).
    async fn ids_named(&self, name: &str) -> Result<Vec<String>, EngineError> {
        let filters = HashMap::from([("name".to_string(), vec![name.to_string()])]);
        let options = bollard::query_parameters::ListNetworksOptions {
            filters: Some(filters),
        };
        let listed = self
            .client
            .list_networks(Some(options))
            .await
            .map_err(|error| self.fail(&format!("list networks named `{name}`"), error))?;
        Ok(listed
            .into_iter()
            .filter(|network| network.name.as_deref() == Some(name))
            .filter_map(|network| network.id)
            .collect())
    }

    /// The network `id` as `settle` weighs it; `None` when it is gone.
    async fn twin(&self, id: &str) -> Result<Option<Twin>, EngineError> {
        match self.client.inspect_network(id, None).await {
            Ok(network) => Ok(Some(Twin {
                id: id.to_string(),
                labels: network.labels.unwrap_or_default().into_iter().collect(),
                containers: network.containers.map_or(0, |containers| containers.len()),
                created: network.created.unwrap_or_default(),
            })),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(error) => Err(self.fail(&format!("inspect network `{id}`"), error)),
        }
    }

    /// Removes the network `id`, first taking off the containers still on it.
    async fn remove_one(&self, name: &str, id: &str) -> Result<(), EngineError> {
        let inspected = match self.client.inspect_network(id, None).await {
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
            match self.client.disconnect_network(id, request).await {
                Ok(()) => {}
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => {}
                Err(error) => {
                    return Err(self.fail(&format!("disconnect from network `{name}`"), error))
                }
            }
        }
        match self.client.remove_network(id).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(error) => Err(self.fail(&format!("remove network `{name}`"), error)),
        }
    }
}

impl Networks for Docker {
    async fn ensure_network(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), EngineError> {
        let ids = self.ids_named(name).await?;
        if ids.len() == 1 {
            return Ok(());
        }
        if ids.len() > 1 {
            let mut twins = Vec::new();
            for id in &ids {
                twins.extend(self.twin(id).await?);
            }
            let extra = settle(&twins, labels).map_err(|why| EngineError::DuplicateNetworks {
                name: name.to_string(),
                ids: ids.iter().map(|id| id.chars().take(12).collect()).collect(),
                why,
                hint: format!(
                    "remove the containers on them, then the extra networks (`docker network rm ID`); `tfimg down` of the team file removes its containers and every network named `{name}`"
                ),
            })?;
            for id in extra {
                self.remove_one(name, &id).await?;
            }
            return Ok(());
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
        // Twins (networks sharing a name) are one name here.
        names.dedup();
        Ok(names)
    }

    async fn remove_network(&self, name: &str) -> Result<(), EngineError> {
        for id in self.ids_named(name).await? {
            self.remove_one(name, &id).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
