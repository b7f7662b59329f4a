//! Which tfimg container a name means: the container so called, or the one serving the
//! model so called. Asks the engine only; below the container stories and the tunnels,
//! which both name containers.

use crate::engine::{ContainerFacts, Containers};
use crate::input::InputError;
use crate::labels;

/// The tfimg container `name` names: the container so called, else the only one serving
/// the model so called; a bad-input error when there is none, when the container so
/// called is not tfimg's, or when several serve the model (naming them).
pub async fn find(engine: &impl Containers, name: &str) -> anyhow::Result<ContainerFacts> {
    match engine.container(name).await? {
        Some(container) if container.labels.contains_key(labels::SPEC) => return Ok(container),
        Some(_) => {
            return Err(InputError::new(
                format!("`{name}` was not started by tfimg"),
                "tfimg only manages its own containers; use `docker` for this one",
            )
            .into())
        }
        None => {}
    }
    let mut serving: Vec<ContainerFacts> = engine
        .containers_with_label(&labels::model_filter(name))
        .await?
        .into_iter()
        .filter(|container| container.labels.contains_key(labels::SPEC))
        .collect();
    serving.sort_by(|a, b| a.name.cmp(&b.name));
    match serving.len() {
        1 => Ok(serving.remove(0)),
        0 => Err(InputError::new(
            format!("no container named `{name}`"),
            "`tfimg ps` lists tfimg's containers",
        )
        .into()),
        _ => {
            let names: Vec<String> = serving.iter().map(|c| format!("`{}`", c.name)).collect();
            Err(InputError::new(
                format!(
                    "{} containers serve the model `{name}`: {}",
                    serving.len(),
                    names.join(", ")
                ),
                "name the container you mean",
            )
            .into())
        }
    }
}
