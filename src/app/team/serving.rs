//! Serving members in `up` and the exports: each member's model folder holds a servable
//! version (checked before anything is built or created, with the place of its `model:`),
//! and a member's launch mounts it read-only at `/models/NAME` and names the model in a
//! label, which makes the launcher's plan print the model's URL and `up` wait until the
//! model is `AVAILABLE` (`ready`), as `tfimg serve` does. A member's `model_config:` is
//! read here as `tfimg serve --model-config` reads one (`serve::check_config`), and its
//! models are launched as `serve` launches them (`serve::served_launch`); so is its
//! `batching:` file (`serve::check_batching`).

use std::collections::BTreeMap;

use crate::app::launch::LaunchRequest;
use crate::app::serve::{self, model_versions, Model, Served};
use crate::host::prelude::Files;
use crate::input::source::SpecError;
use crate::spec::{ResolvedSpec, Service};
use crate::team::serving::{ConfigModel, MemberModel};
use crate::team::{serving, Team, TeamMember};

/// Every member's model against its spec's kind, then every model folder on this machine
/// (`host`): a numbered version with a SavedModel in it; a model config read, its models
/// kept in the member; a warning kept when a TensorFlow newer than the member's spec wrote
/// a version it serves.
pub fn check_models(
    host: &impl Files,
    team: &mut Team,
    specs: &BTreeMap<String, ResolvedSpec>,
) -> anyhow::Result<()> {
    for member in &mut team.members {
        let resolved = &specs[&member.spec];
        serving::check_service(member, &resolved.name, resolved.service == Service::Serving)?;
        let Some(model) = &mut member.model else {
            continue;
        };
        if let Some((file, shown)) = &model.batching_file {
            let read = serve::check_batching(host, file, shown).map_err(|error| {
                error.context(format!("member `{}`: its `batching`", member.name))
            })?;
            model.batching = Some(read);
        }
        if model.config.is_some() {
            let served =
                serve::check_config(host, &model.folder, &model.text).map_err(|error| {
                    error.context(format!("member `{}`: its `model_config`", member.name))
                })?;
            model.warning = serve::newer_than(resolved, &serve::writers(host, &served));
            model.name = served.first().name.clone();
            model.config = Some(
                (served.models.into_iter())
                    .map(|model| ConfigModel {
                        name: model.name,
                        folder: model.folder,
                        base_path: model.base_path.unwrap_or_default(),
                    })
                    .collect(),
            );
            continue;
        }
        let what = format!("the model folder `{}`", model.text);
        let versions = model_versions(host, &model.folder, &what).map_err(|error| {
            SpecError::new(
                Some(model.location.clone()),
                format!("member `{}`: {}", member.name, error.message),
                error.hint,
            )
        })?;
        let served: Served = Model {
            name: model.name.clone(),
            versions,
            folder: model.folder.clone(),
            shown: model.text.clone(),
            base_path: None,
            policy: None,
        }
        .into();
        model.warning = serve::newer_than(resolved, &serve::writers(host, &served));
    }
    Ok(())
}

/// The member's models in its launch, as `tfimg serve` launches them: each folder
/// read-only at `/models/NAME` (and a model config file), the models named in labels.
pub(super) fn add_model(member: &TeamMember, request: &mut LaunchRequest) {
    let Some(model) = &member.model else {
        return;
    };
    // HandleReloadConfigRequest stays off: the team file is the one source of a member's
    // models, and a reload over gRPC would change them for anyone reaching the port.
    let launch = serve::served_launch(&served_of(model), model.max_batch, false, false);
    request.mounts.extend(launch.mounts);
    request.env.extend(launch.env);
    request.extra_labels.extend(launch.labels);
}

/// A member's model as `serve` takes it: its folder, or the models of its config file.
fn served_of(model: &MemberModel) -> Served {
    let served =
        |name: &str, folder: &std::path::Path, shown: &str, base_path: Option<&str>| Model {
            name: name.to_string(),
            versions: Vec::new(),
            folder: folder.to_path_buf(),
            shown: shown.to_string(),
            base_path: base_path.map(str::to_string),
            policy: None,
        };
    let mut served: Served = match &model.config {
        None => served(&model.name, &model.folder, &model.text, None).into(),
        Some(models) => Served {
            models: (models.iter())
                .map(|each| {
                    served(
                        &each.name,
                        &each.folder,
                        &each.base_path,
                        Some(&each.base_path),
                    )
                })
                .collect(),
            config: Some((model.folder.clone(), model.text.clone())),
            batching: None,
        },
    };
    served.batching = model.batching.clone();
    served
}

#[cfg(test)]
mod tests;
