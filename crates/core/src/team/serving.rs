//! Serving members: a member whose spec serves models (`cpu-serving`, `gpu-serving`, or
//! a spec with `service: serving`) names its model's folder with `model:` (a folder of
//! numbered SavedModel versions, as for `tfimg serve`) and, optionally, the model's name
//! with `model_name:` (else the folder's name), and the server's cap on merged rows with
//! `max_batch:` (as `tfimg serve --max-batch`) or TensorFlow Serving's batching with
//! `batching:` (`true`, or its batching parameters file: `tfimg serve --enable-batching
//! [--batching-parameters FILE]`). The folder is mounted read-only at
//! `/models/NAME`. Or it names several models with `model_config:`, TensorFlow Serving's
//! model config file (as `tfimg serve --model-config`), which `app::team` reads. Checked here as written, without the disk: the folder's contents are
//! the use case's to check (`app::team`), the spec's kind once it is resolved
//! (`check_service`).

use std::path::{Component, Path, PathBuf};

use crate::input::paths::lexical;
use crate::input::source::{printable, Location, SpecError};
use crate::labels;
use crate::plan::batching::Batching;
use crate::plan::serving::valid_model_name;
use crate::plan::LaunchPlan;

use super::model::{BatchingValue, Member};
use super::read::Places;
use super::TeamMember;

/// A serving member's model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberModel {
    /// The folder as written.
    pub text: String,
    /// The folder; a relative one starts at the team file's folder.
    pub folder: PathBuf,
    /// The model's name in its URLs (`/v1/models/NAME`).
    pub name: String,
    /// Where `model:` is written, for errors about the folder.
    pub location: Location,
    /// `max_batch:`, the server's cap on merged rows; its own default otherwise.
    pub max_batch: Option<u32>,
    /// `batching:` (as `tfimg serve --enable-batching`): TensorFlow Serving's batching
    /// parameters, its defaults for `true`; for a file, once `app::team::check_models`
    /// read it.
    pub batching: Option<Batching>,
    /// `batching:`'s file (relative ones start at the team file's folder) and its name as
    /// written, for `app::team::check_models` to read.
    pub batching_file: Option<(PathBuf, String)>,
    /// `model_config:` (then `folder` is the file, and `name` empty): its models, once
    /// `app::team::check_models` read it.
    pub config: Option<Vec<ConfigModel>>,
    /// What to warn of, once `app::team::check_models` read which TensorFlow wrote each
    /// version: one newer than the member's spec, which may not load it.
    pub warning: Option<String>,
}

/// A model of a member's model config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigModel {
    pub name: String,
    pub folder: PathBuf,
    /// Its `base_path` as written, which the server looks up.
    pub base_path: String,
}

const MODEL_HINT: &str =
    "`model` names a folder of numbered SavedModel versions (`./export/fraud`, holding `1/saved_model.pb`)";

const NAME_HINT: &str =
    "use letters, digits, `.`, `_` and `-`, starting with a letter or digit (at most 64)";

/// A member's `model`, `model_name` and `max_batch` as written: a folder, a name the
/// server takes, a cap from 1 row, and no `command` (which would replace the model server).
pub(super) fn check(
    member: &Member,
    places: &Places,
    folder: &Path,
) -> Result<Option<MemberModel>, SpecError> {
    let at = |field: &str| places.member(&member.name, field);
    let bad = |field: &str, message: String, hint: &str| {
        places.bad(
            at(field),
            format!("member `{}`: {message}", member.name),
            hint,
        )
    };
    let batching = member_batching(member, places, folder)?;
    if let Some(text) = &member.model_config {
        return config_model(member, places, folder, text).map(|model| Some(batching(model)));
    }
    let Some(text) = &member.model else {
        let field = match (&member.model_name, member.max_batch, &member.batching) {
            (Some(_), _, _) => "model_name",
            (None, Some(_), _) => "max_batch",
            (None, None, Some(_)) => "batching",
            (None, None, None) => return Ok(None),
        };
        return Err(bad(
            field,
            format!("`{field}` without `model`"),
            "add `model: ./export/NAME`, the folder of the model's numbered versions",
        ));
    };
    if member.max_batch == Some(0) {
        return Err(bad(
            "max_batch",
            "`max_batch: 0` is not a number of rows".into(),
            "give a whole number of rows from 1 (every request alone), such as `max_batch: 64`",
        ));
    }
    if text.trim().is_empty() {
        return Err(bad("model", "`model` is empty".into(), MODEL_HINT));
    }
    if text.contains([':', '\0', '\n']) {
        return Err(bad(
            "model",
            printable(&format!(
                "the model folder `{text}` has a `:` or a control character"
            ))
            .into_owned(),
            "Docker and Compose mounts split at `:`: rename the folder (or use a link to it)",
        ));
    }
    if !member.command.is_empty() {
        return Err(bad(
            "model",
            "`model` with a `command`".into(),
            "a member with a `model` runs the model server: remove its `command`",
        ));
    }
    let path = lexical(&folder.join(text));
    let name = match &member.model_name {
        Some(name) if !valid_model_name(name) => {
            let message = format!("`model_name: {name}` is not a valid model name");
            return Err(bad(
                "model_name",
                printable(&message).into_owned(),
                NAME_HINT,
            ));
        }
        Some(name) => name.clone(),
        None => {
            let name = last_name(&path);
            if !valid_model_name(&name) {
                let message = match name.is_empty() {
                    true => format!("the model folder `{text}` has no name"),
                    false => {
                        format!("the folder name `{name}` of `model` is not a valid model name")
                    }
                };
                let message = printable(&message);
                return Err(bad(
                    "model",
                    message.into_owned(),
                    "name the model with `model_name:`: letters, digits, `.`, `_` and `-`, starting with a letter or digit",
                ));
            }
            name
        }
    };
    let location = at("model")
        .or_else(|| places.key("members"))
        .unwrap_or_else(|| places.at((1, 1)));
    Ok(Some(batching(MemberModel {
        text: text.clone(),
        folder: path,
        name,
        location,
        max_batch: member.max_batch,
        batching: None,
        batching_file: None,
        config: None,
        warning: None,
    })))
}

/// `batching:`, as what it adds to the member's model: TensorFlow Serving's defaults for
/// `true`, a file to read, or nothing for `false`. Not beside `max_batch`, which caps the
/// merging that batching replaces (`tfimg serve` refuses both flags together).
fn member_batching(
    member: &Member,
    places: &Places,
    folder: &Path,
) -> Result<impl Fn(MemberModel) -> MemberModel, SpecError> {
    let at = places.member(&member.name, "batching");
    let bad = |message: String, hint: &str| {
        places.bad(
            at.clone(),
            format!("member `{}`: {message}", member.name),
            hint,
        )
    };
    let (batching, file) = match &member.batching {
        None | Some(BatchingValue::On(false)) => (None, None),
        Some(_) if member.max_batch.is_some() => {
            return Err(bad(
                "`batching` with `max_batch`".into(),
                "TensorFlow Serving's batching takes its largest batch from `max_batch_size` in its parameters file: remove `max_batch`",
            ))
        }
        Some(BatchingValue::On(true)) => (Some(Batching::default()), None),
        Some(BatchingValue::File(text)) => {
            if text.trim().is_empty() || text.contains([':', '\0', '\n']) {
                return Err(bad(
                    printable(&format!("`batching: {text}` is not a file name tfimg reads")).into_owned(),
                    "give `true` (TensorFlow Serving's defaults) or its batching parameters file (`./batching.config`), without `:` or control characters",
                ));
            }
            (None, Some((lexical(&folder.join(text)), text.clone())))
        }
    };
    Ok(move |model: MemberModel| MemberModel {
        batching: batching.clone(),
        batching_file: file.clone(),
        ..model
    })
}

/// `model_config:`: a file, without `model` or `model_name` (the file names the models),
/// or a `command`.
fn config_model(
    member: &Member,
    places: &Places,
    folder: &Path,
    text: &str,
) -> Result<MemberModel, SpecError> {
    let at = places.member(&member.name, "model_config");
    let bad = |message: &str, hint: &str| {
        places.bad(
            at.clone(),
            format!("member `{}`: {message}", member.name),
            hint,
        )
    };
    if member.model.is_some() || member.model_name.is_some() {
        return Err(bad(
            "`model_config` with `model` or `model_name`",
            "name the models in the model config file, or serve one folder with `model:`",
        ));
    }
    if text.trim().is_empty() || text.contains([':', '\0', '\n']) {
        return Err(bad(
            &printable(&format!("`model_config: {text}` is not a file name tfimg mounts")),
            "give TensorFlow Serving's model config file (`./models.config`), without `:` or control characters",
        ));
    }
    if !member.command.is_empty() {
        return Err(bad(
            "`model_config` with a `command`",
            "a member with a `model_config` runs the model server: remove its `command`",
        ));
    }
    let location = at
        .or_else(|| places.key("members"))
        .unwrap_or_else(|| places.at((1, 1)));
    Ok(MemberModel {
        text: text.to_string(),
        folder: lexical(&folder.join(text)),
        name: String::new(),
        location,
        max_batch: member.max_batch,
        batching: None,
        batching_file: None,
        config: Some(Vec::new()),
        warning: None,
    })
}

/// The last named folder of `path` (`./export/fraud/` gives `fraud`); empty when it has
/// none (`/`).
fn last_name(path: &Path) -> String {
    match path.components().next_back() {
        Some(Component::Normal(name)) => name.to_string_lossy().into_owned(),
        _ => String::new(),
    }
}

/// A member's model against its resolved spec: a serving spec serves the member's model
/// (unless a `command` replaces the server), and only a serving spec takes one.
pub fn check_service(member: &TeamMember, spec_name: &str, serving: bool) -> Result<(), SpecError> {
    match (&member.model, serving) {
        (None, true) if member.command.is_empty() => Err(SpecError::new(
            Some(member.spec_location.clone()),
            format!(
                "member `{}`: `{spec_name}` serves a model, and the member names none",
                member.name
            ),
            "add `model: ./export/NAME` (a folder of numbered SavedModel versions, `NAME/1/saved_model.pb`)",
        )),
        (Some(model), false) => Err(SpecError::new(
            Some(model.location.clone()),
            format!(
                "member `{}`: `model` needs a serving spec, and `{spec_name}` is not one",
                member.name
            ),
            "use `spec: cpu-serving` (or `gpu-serving`), or a spec with `service: serving`",
        )),
        _ => Ok(()),
    }
}

/// The model a launch plan's model server serves (none when a command replaces the
/// server): what the exports probe.
pub fn plan_model(plan: &LaunchPlan) -> Option<&str> {
    let serving = plan.labels.get(labels::SERVICE).map(String::as_str) == Some("serving");
    (serving && plan.command.is_empty())
        .then(|| plan.labels.get(labels::MODEL).map(String::as_str))
        .flatten()
}
