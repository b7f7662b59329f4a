//! Serving members in `up` and the exports: each member's model folder holds a servable
//! version (checked before anything is built or created, with the place of its `model:`),
//! and a member's launch mounts it read-only at `/models/NAME` and names the model in a
//! label, which makes the launcher's plan print the model's URL and `up` wait until the
//! model is `AVAILABLE` (`ready`), as `tfimg serve` does.

use std::collections::BTreeMap;

use crate::app::launch::LaunchRequest;
use crate::app::serve::model_versions;
use crate::host::Host;
use crate::input::source::SpecError;
use crate::labels;
use crate::plan::mounts::MountPlan;
use crate::plan::serving::{model_target, MAX_BATCH_ENV};
use crate::spec::{ResolvedSpec, Service};
use crate::team::{serving, Team, TeamMember};

/// Every member's model against its spec's kind, then every model folder on this machine
/// (`host`): a numbered version with a SavedModel in it.
pub fn check_models(
    host: &impl Host,
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
) -> Result<(), SpecError> {
    for member in &team.members {
        let resolved = &specs[&member.spec];
        serving::check_service(member, &resolved.name, resolved.service == Service::Serving)?;
        let Some(model) = &member.model else {
            continue;
        };
        let what = format!("the model folder `{}`", model.text);
        model_versions(host, &model.folder, &what).map_err(|error| {
            SpecError::new(
                Some(model.location.clone()),
                format!("member `{}`: {}", member.name, error.message),
                error.hint,
            )
        })?;
    }
    Ok(())
}

/// The member's model in its launch: the folder read-only at `/models/NAME`, the model
/// named in a label.
pub(super) fn add_model(member: &TeamMember, request: &mut LaunchRequest) {
    let Some(model) = &member.model else {
        return;
    };
    let mount = MountPlan {
        source: model.folder.clone(),
        target: model_target(&model.name),
        read_only: true,
    };
    request.mounts.push((mount, model.text.clone()));
    request
        .extra_labels
        .insert(labels::MODEL.to_string(), model.name.clone());
    if let Some(rows) = model.max_batch {
        request
            .env
            .push((MAX_BATCH_ENV.to_string(), rows.to_string()));
    }
}

#[cfg(test)]
mod tests;
