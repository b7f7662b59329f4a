//! `tfimg serve MODEL_DIR`: a folder of numbered SavedModel versions behind TensorFlow
//! Serving's REST API. The story: the folder checked (a servable version in it) and the
//! model named, the serving line chosen by the TensorFlow that wrote it (`line`), the
//! serving spec of that line by the GPUs (`gpu-serving` where the engine's host can give
//! them, else `cpu-serving`), its image built when missing, the container started
//! by THE launcher with the folder mounted read-only at `/models/NAME` (copied in on an
//! engine on another host, where a mount would name that host's folders), the wait until
//! the model is `AVAILABLE`, and the `curl` line with an example body from its signature.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::app::build::Network;
use crate::app::gpu_ledger::GpuLedger;
use crate::app::launch::{self, LaunchRequest, Launched, TunnelMode};
use crate::app::run::{await_service, finish, spec_target, stream_until_exit, RunEnd, RunEvent};
use crate::app::session::Session;
use crate::app::{gpu_host, Interrupted};
use crate::engine::prelude::{Builds, ContainerIo, Containers, Daemon, Images, Tunnels};
use crate::host::prelude::{
    Clock, Confined, FileWrites, Files, Gpus, Identity, Probes, Secrets, State,
};
use crate::host::{Host, NvidiaFacts};
use crate::input::{printable, InputError, SpecError};
use crate::labels;
use crate::notice::Notice;
use crate::plan::batching::{self, Batching};
use crate::plan::gpus::{self, GpuSelection};
use crate::plan::model_config::{self, VersionPolicy};
use crate::plan::mounts::MountRequest;
use crate::plan::ports::PortRequest;
use crate::plan::serving::{self, ModelState, TryRequest};
use crate::plan::sync::SyncRequest;
use crate::plan::Resources;
use crate::spec::resolved::{
    SERVING_GRPC_PORT, SERVING_GRPC_PORT_NAME, SERVING_PORT, SERVING_PORT_NAME,
};
use crate::spec::ResolvedSpec;

/// `tfimg serve`'s options, resolved.
#[derive(Debug, Clone)]
pub struct ServeRequest {
    /// MODEL_DIR, absolute; with `model_config`, the model config file.
    pub model_dir: PathBuf,
    /// It as typed, for messages.
    pub shown: String,
    /// `--model-config FILE`: `model_dir` is TensorFlow Serving's model config file.
    pub model_config: bool,
    /// `--name`; the folder's name otherwise.
    pub name: Option<String>,
    /// `--spec`: the serving spec, instead of the line the model's writer chooses.
    pub spec: Option<String>,
    pub gpus: Option<GpuSelection>,
    /// `--share-gpus`: GPUs other tfimg containers hold may be taken too.
    pub share_gpus: bool,
    /// `-p PORT`: the host port of the REST API.
    pub port: Option<u16>,
    /// `--grpc-port PORT`: the host port of the gRPC API.
    pub grpc_port: Option<u16>,
    pub public: bool,
    pub detach: bool,
    /// `--max-batch ROWS`: the server's cap on merged rows (TFIMG_SERVING_MAX_BATCH).
    pub max_batch: Option<u32>,
    /// `--memory SIZE` in bytes; `serving::DEFAULT_MEMORY` otherwise.
    pub memory: Option<i64>,
    /// `--allow-reload-config` (with `model_config`): the server answers gRPC's
    /// `HandleReloadConfigRequest` (serving::ALLOW_RELOAD_CONFIG_ENV).
    pub allow_reload_config: bool,
    /// `--enable-batching`: TensorFlow Serving's batching, with its defaults or, from
    /// `--batching-parameters FILE` (absolute, and as typed), the file's.
    pub batching: Option<Option<(PathBuf, String)>>,
    /// `--model-config-poll SECONDS` (with `model_config`): how often the server rereads
    /// the file, 0 for once (serving::MODEL_CONFIG_POLL_ENV).
    pub model_config_poll: Option<u32>,
    /// `--grpc-channel-arguments`, checked, as the JSON the server takes
    /// (serving::GRPC_CHANNEL_ARGUMENTS_ENV).
    pub grpc_channel_arguments: Option<String>,
}

/// A model folder checked: the model's name and the versions it serves, highest last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    pub name: String,
    pub versions: Vec<u64>,
    /// Its folder, absolute, and as the user wrote it.
    pub folder: PathBuf,
    pub shown: String,
    /// In a model config: its `base_path` as written (what the server looks up).
    pub base_path: Option<String>,
    /// In a model config `tfimg serve` read: its version policy.
    pub policy: Option<VersionPolicy>,
}

/// What `tfimg serve` serves, checked: MODEL_DIR's model, or the models of a model
/// config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub models: Vec<Model>,
    /// `--model-config`: the file, absolute, and as typed.
    pub config: Option<(PathBuf, String)>,
    /// `--enable-batching`: the batching parameters read (serving::BATCHING_ENV).
    pub batching: Option<Batching>,
}

impl From<Model> for Served {
    fn from(model: Model) -> Served {
        Served {
            models: vec![model],
            config: None,
            batching: None,
        }
    }
}

impl Served {
    /// The model the container is named after, whose URL and request to try are printed.
    pub fn first(&self) -> &Model {
        &self.models[0]
    }
}

/// A model server that answers.
#[derive(Debug, Clone)]
pub struct Serving {
    pub launched: Launched,
    /// The model's status URL (the first model's, of a model config).
    pub url: String,
    /// The other models' status URLs.
    pub others: Vec<String>,
    /// The gRPC API's address (`127.0.0.1:8500`).
    pub grpc: String,
    /// The version the server answers with.
    pub version: String,
    /// A ready-to-run `predict` request, or why none can be printed.
    pub try_request: TryRequest,
    /// The same through gRPC.
    pub try_grpc: TryRequest,
    /// What to tell the user (the spec chosen, the copy on a remote engine).
    pub notes: Vec<Notice>,
}

impl Serving {
    /// What `tfimg serve` prints of it: the container's name (which `logs`, `stop` and
    /// `rm` take, as they take the model's), the model's address, the version served and
    /// the request to try; and, when there is no request to try, the note saying why.
    pub fn summary(&self) -> (Vec<String>, Option<Notice>) {
        let mut lines = vec![
            format!("{:<12}{}", "container", self.launched.name),
            format!("{:<12}{}", "model", self.url),
        ];
        lines.extend((self.others.iter()).map(|url| format!("{:<12}{url}", "model")));
        lines.push(format!("{:<12}{}", "grpc", self.grpc));
        if !self.version.is_empty() {
            lines.push(format!("{:<12}{}", "version", self.version));
        }
        let note = match (&self.try_request, &self.try_grpc) {
            (TryRequest::Command(rest), grpc) => {
                lines.push(format!("{:<12}{rest}", "try"));
                if let TryRequest::Command(grpc) = grpc {
                    lines.push(format!("{:<12}{grpc}", "try grpc"));
                }
                None
            }
            (TryRequest::Unavailable(why), _) => {
                Some(Notice::note(format!("no request to try: {why}")))
            }
        };
        (lines, note)
    }
}

/// What the request serves, checked (`check_model`, or `check_config` with
/// `--model-config`, which `--allow-reload-config` needs). Asks only the host; creates
/// nothing.
pub fn check(host: &impl Files, request: &ServeRequest) -> anyhow::Result<Served> {
    serving::flags::allow_reload_config(request.allow_reload_config, request.model_config)?;
    let batching = match &request.batching {
        None => None,
        Some(None) => Some(Batching::default()),
        Some(Some((file, shown))) => Some(check_batching(host, file, shown)?),
    };
    let mut served = match request.model_config {
        true => check_config(host, &request.model_dir, &request.shown)?,
        false => check_model(host, request)?.into(),
    };
    served.batching = batching;
    Ok(served)
}

/// `--batching-parameters FILE` read as TensorFlow Serving reads it, every problem named
/// at its line and column. Asks only the host.
pub(crate) fn check_batching(
    host: &impl Files,
    file: &Path,
    shown: &str,
) -> anyhow::Result<Batching> {
    let what = format!("the batching parameters file `{}`", printable(shown));
    let hint = "give TensorFlow Serving's batching parameters file, in protobuf's text format (`max_batch_size { value: 32 }`)";
    let kind = "batching parameters file";
    let text = small_text(host, file, (&what, kind), batching::MAX_FILE_BYTES, hint)?;
    Ok(batching::read(shown, &text)?)
}

/// The text of a small file the user names (a `kind`: a model config, a batching
/// parameters file), or why it has none, naming it as `what`: a folder, unreadable, over
/// `limit` bytes (which no such file is), not UTF-8.
fn small_text(
    host: &impl Files,
    file: &Path,
    (what, kind): (&str, &str),
    limit: u64,
    hint: &str,
) -> Result<String, InputError> {
    let unreadable = |why: String| InputError::new(format!("{what} {why}"), hint);
    if host.is_folder(file) {
        return Err(unreadable("is a folder".into()));
    }
    let bytes = (host.read_at_most(file, limit + 1))
        .map_err(|error| unreadable(format!("cannot be read: {error}")))?;
    if bytes.len() as u64 > limit {
        let (size, unit) = match limit >= 1 << 20 {
            true => (limit >> 20, "MiB"),
            false => (limit >> 10, "KiB"),
        };
        return Err(unreadable(format!(
            "is over {size} {unit}, which no {kind} is"
        )));
    }
    String::from_utf8(bytes).map_err(|_| unreadable("is not UTF-8 text".into()))
}

/// A model config file read as TensorFlow Serving reads it, and each model's `base_path`
/// a folder on this machine holding a version its policy serves; every problem named at
/// the line and column of the file. Asks only the host; creates nothing.
pub fn check_config(host: &impl Files, file: &Path, shown: &str) -> anyhow::Result<Served> {
    let what = format!("the model config `{}`", printable(shown));
    let hint = "give TensorFlow Serving's model config file, in protobuf's text format (`model_config_list { config { ... } }`)";
    let kind = "model config";
    let text = small_text(
        host,
        file,
        (&what, kind),
        model_config::MAX_CONFIG_BYTES,
        hint,
    )?;
    let config = model_config::read(shown, &text)?;
    let mut models = Vec::new();
    for configured in config.models {
        let folder = crate::input::paths::lexical(Path::new(&configured.base_path));
        let what = format!(
            "model `{}`'s base_path `{}`",
            configured.name, configured.base_path
        );
        let at = Some(configured.base_path_at.clone());
        let on_disk = versions_in_folder(host, &folder, &what, BASE_PATH_HINT)
            .map_err(|error| SpecError::new(at.clone(), error.message, error.hint))?;
        let versions = configured.policy.served(&on_disk);
        if versions.is_empty() {
            return Err(SpecError::new(
                at,
                format!(
                    "model `{}`'s policy serves {}, and `{}` holds none of them (it holds {})",
                    configured.name,
                    configured.policy.describe(),
                    configured.base_path,
                    versions_list(&on_disk),
                ),
                "save those versions there, or change the model's `model_version_policy`",
            )
            .into());
        }
        models.push(Model {
            name: configured.name,
            versions,
            folder,
            shown: configured.base_path.clone(),
            base_path: Some(configured.base_path),
            policy: Some(configured.policy),
        });
    }
    Ok(Served {
        models,
        config: Some((file.to_path_buf(), shown.to_string())),
        batching: None,
    })
}

const BASE_PATH_HINT: &str = "write the absolute path of the folder that holds the model's numbered versions (`BASE_PATH/1/saved_model.pb`)";

/// MODEL_DIR holds at least one numbered SavedModel version, and the model's name is one
/// the server takes. Asks only the host; creates nothing.
pub fn check_model(host: &impl Files, request: &ServeRequest) -> Result<Model, InputError> {
    let folder = folder_name(&request.model_dir);
    if serving::version_of(&folder).is_some() && is_saved_model(host, &request.model_dir) {
        return Err(serving::version_folder_given(&request.shown));
    }
    let versions = model_versions(
        host,
        &request.model_dir,
        &format!("MODEL_DIR `{}`", request.shown),
    )?;
    let name = match &request.name {
        Some(name) => {
            serving::check_model_name(name, false)?;
            name.clone()
        }
        None => {
            let folder = folder_name(&request.model_dir);
            serving::check_model_name(&folder, true)?;
            folder
        }
    };
    Ok(Model {
        name,
        versions,
        folder: request.model_dir.clone(),
        shown: request.shown.clone(),
        base_path: None,
        policy: None,
    })
}

/// The servable versions in the model folder `dir` (named `what` in messages), lowest
/// first: numbered subfolders holding a SavedModel; an error when there is none.
pub fn model_versions(host: &impl Files, dir: &Path, what: &str) -> Result<Vec<u64>, InputError> {
    versions_in_folder(host, dir, what, FOLDER_HINT)
}

const FOLDER_HINT: &str =
    "give the folder that holds the model's numbered versions (`MODEL_DIR/1/saved_model.pb`)";

/// `model_versions`, with `missing` the hint for a folder that does not exist.
fn versions_in_folder(
    host: &impl Files,
    dir: &Path,
    what: &str,
    missing: &str,
) -> Result<Vec<u64>, InputError> {
    if !host.is_folder(dir) {
        let (problem, hint) = match host.exists(dir) {
            true => ("is not a folder", FOLDER_HINT),
            false => ("does not exist", missing),
        };
        return Err(InputError::new(format!("{what} {problem}"), hint));
    }
    let entries = host.folder_entries(dir);
    let mut versions: Vec<u64> = entries
        .iter()
        .filter_map(|entry| Some((serving::version_of(entry)?, entry)))
        .filter(|(_, entry)| is_saved_model(host, &dir.join(entry)))
        .map(|(version, _)| version)
        .collect();
    versions.sort_unstable();
    if versions.is_empty() {
        return Err(serving::no_version(what, &entries));
    }
    Ok(versions)
}

fn is_saved_model(host: &impl Files, folder: &Path) -> bool {
    serving::SAVED_MODEL_FILES
        .iter()
        .any(|file| host.exists(&folder.join(file)))
}

fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The serving spec of `line` for the GPUs: `--gpus none` the CPU one, other `--gpus` the
/// GPU one; without `--gpus`, the GPU one when the engine's host can give GPUs (as `run`
/// decides a GPU image's default), else the CPU one. `--spec`'s one spec takes the GPUs it
/// is made for: none for a CPU spec, and some for a GPU spec. The GPUs to ask for, and the
/// host's facts when they were read.
pub async fn choose_spec<'a>(
    session: Session<'_, impl Containers + Images + Daemon, impl Gpus + Secrets>,
    requested: Option<&GpuSelection>,
    share: bool,
    line: &'a ServingLine,
) -> anyhow::Result<(&'a ResolvedSpec, GpuSelection, Option<NvidiaFacts>)> {
    let Session { engine, .. } = session;
    let cpu_only = line.named() && line.cpu.gpu.is_none();
    if cpu_only {
        if requested.is_some_and(|asked| !asked.is_none()) {
            return Err(InputError::new(
                format!("`--spec {}` is a CPU image: it takes no GPU", line.cpu.name),
                "drop `--gpus`, or name a GPU serving spec (`tf218-gpu-serving`)",
            )
            .into());
        }
        return Ok((&line.cpu, GpuSelection::None, None));
    }
    if let Some(requested) = requested {
        let spec = match requested.is_none() && !line.named() {
            true => &line.cpu,
            false => &line.gpu,
        };
        let nvidia = launch::Launcher::of(session)
            .check_requested_gpus(Some(requested))
            .await?;
        return Ok((spec, requested.clone(), nvidia));
    }
    let gpu = &line.gpu;
    let nvidia = gpu_host::engine_nvidia(session, &[gpu.image_reference()]).await;
    let info = engine.info().await?;
    let facts = crate::doctor::gpu_host(&nvidia, &info, gpu.gpu.as_ref());
    let ledger = GpuLedger::read(engine, &nvidia, |_| false).await?;
    let sharing = ledger.sharing(share);
    let choice = gpus::choose(None, true, &gpu.name, Some(&facts), Some(&sharing));
    match (choice.selection.is_none(), line.named()) {
        (true, true) => Err(InputError::new(
            format!("`--spec {}` is a GPU image, and the engine's host has no free GPU to give it", gpu.name),
            "name a CPU serving spec (`cpu-serving`, `tf218-cpu-serving`), or free a GPU (`tfimg ps --gpus` shows who holds them)",
        )
        .into()),
        (true, false) => Ok((&line.cpu, GpuSelection::None, None)),
        (false, _) => Ok((gpu, choice.selection, Some(nvidia))),
    }
}

/// The launch of the model server: each model's folder read-only at `/models/NAME` (copied
/// in when `remote`, as a model config file is), the REST and gRPC ports, the models named
/// in labels, a memory limit always (`--memory`, else `serving::DEFAULT_MEMORY`).
pub fn launch_request(
    host: &(impl Secrets + Identity),
    request: &ServeRequest,
    served: &Served,
    target: launch::Target,
    gpus: GpuSelection,
    remote: bool,
) -> anyhow::Result<LaunchRequest> {
    let mut models = served_launch(
        served,
        request.max_batch,
        request.allow_reload_config,
        remote,
    );
    if let Some(seconds) = request.model_config_poll {
        let name = serving::MODEL_CONFIG_POLL_ENV.to_string();
        models.env.push((name, seconds.to_string()));
    }
    if let Some(arguments) = &request.grpc_channel_arguments {
        let name = serving::GRPC_CHANNEL_ARGUMENTS_ENV.to_string();
        models.env.push((name, arguments.clone()));
    }
    let name = format!("serve-{}", served.first().name);
    let port_requests = [
        (request.port, SERVING_PORT),
        (request.grpc_port, SERVING_GRPC_PORT),
    ]
    .into_iter()
    .filter_map(|(host, container)| {
        host.map(|host| PortRequest {
            host: Some(host),
            container,
        })
    })
    .collect();
    Ok(LaunchRequest {
        env: models.env,
        mounts: models.mounts,
        syncs: models.syncs,
        make_sync_parents: true,
        port_requests,
        public: request.public,
        gpus: Some(gpus),
        share_gpus: request.share_gpus,
        resources: Resources {
            memory: Some(request.memory.unwrap_or(serving::DEFAULT_MEMORY)),
            ..Resources::default()
        },
        extra_labels: models.labels,
        tunnel: match request.detach {
            true => TunnelMode::Detached,
            false => TunnelMode::Session,
        },
        ..LaunchRequest::new(
            target,
            launch::container_name(host, &name)?,
            Some(crate::plan::user::unattended(host.container_ids())),
        )
    })
}

/// What a model server's launch takes of what it serves (`tfimg serve`'s, or a team
/// member's).
pub struct ServedLaunch {
    /// Each model's folder read-only at `/models/NAME`, and a model config file at
    /// `serving::MODEL_CONFIG_TARGET`, with the text that names them.
    pub mounts: Vec<MountRequest>,
    /// The same copied in, on an engine on another host.
    pub syncs: Vec<SyncRequest>,
    /// The server's cap on merged rows when given, or its batching parameters; with a
    /// model config, its variables naming the file and each base_path's folder; and
    /// whether it answers `HandleReloadConfigRequest`, when it does.
    pub env: Vec<(String, String)>,
    /// The first model (`labels::MODEL`), and all of them when more (`labels::MODELS`):
    /// readiness waits for each.
    pub labels: BTreeMap<String, String>,
}

/// The mounts (or copies, when `remote`), variables and labels of `served`, and
/// `max_batch` (`--max-batch`, a member's `max_batch:`) and `allow_reload_config`
/// (`--allow-reload-config`; never for a team member) for the server.
pub fn served_launch(
    served: &Served,
    max_batch: Option<u32>,
    allow_reload_config: bool,
    remote: bool,
) -> ServedLaunch {
    let mut copies: Vec<(PathBuf, String, String)> = (served.models.iter())
        .map(|model| {
            let target = serving::model_target(&model.name);
            (model.folder.clone(), target, model.shown.clone())
        })
        .collect();
    let mut env: Vec<(String, String)> = max_batch
        .map(|rows| (serving::MAX_BATCH_ENV.to_string(), rows.to_string()))
        .into_iter()
        .collect();
    if let Some(batching) = &served.batching {
        env.push((serving::BATCHING_ENV.to_string(), batching.env_value()));
    }
    if allow_reload_config {
        env.push((
            serving::ALLOW_RELOAD_CONFIG_ENV.to_string(),
            "1".to_string(),
        ));
    }
    if let Some((file, shown)) = &served.config {
        let target = serving::MODEL_CONFIG_TARGET.to_string();
        copies.push((file.clone(), target.clone(), shown.clone()));
        let base_paths: BTreeMap<String, String> = (served.models.iter())
            .filter_map(|model| {
                let base_path = model.base_path.as_ref()?;
                Some((
                    serving::base_path_key(base_path),
                    serving::model_target(&model.name),
                ))
            })
            .collect();
        env.push((serving::MODEL_CONFIG_ENV.to_string(), target));
        env.push((
            serving::BASE_PATHS_ENV.to_string(),
            serde_json::json!(base_paths).to_string(),
        ));
    }
    let (mut mounts, mut syncs) = (Vec::new(), Vec::new());
    for (source, target, text) in copies {
        match remote {
            false => mounts.push(MountRequest {
                text,
                source,
                target: Some(target),
                read_only: true,
            }),
            true => syncs.push(SyncRequest {
                text,
                source,
                target: Some(target),
                whole: true,
            }),
        }
    }
    let names: Vec<&str> = served
        .models
        .iter()
        .map(|model| model.name.as_str())
        .collect();
    let mut labels = BTreeMap::from([(labels::MODEL.to_string(), names[0].to_string())]);
    if names.len() > 1 {
        labels.insert(labels::MODELS.to_string(), names.join(","));
    }
    ServedLaunch {
        mounts,
        syncs,
        env,
        labels,
    }
}

/// The whole story after `check_model`, up to a model that answers. A server that does not come up (or an
/// interrupt while waiting) leaves nothing behind: the container is removed, and the
/// error carries its last output.
pub async fn serve(
    session: Session<
        '_,
        impl Containers + Tunnels + Images + Builds + ContainerIo + Daemon,
        impl Host,
    >,
    request: &ServeRequest,
    served: Served,
    specs: &ServingSpecs,
    network: &Network,
) -> anyhow::Result<Serving> {
    let reporter = session.report;
    let Session { engine, host, .. } = session;
    let remote = engine.remote_endpoint().is_some();
    // Said now: a model the line may not load fails before the other notes are printed.
    if let Some(said) = &specs.said {
        session.ui.notice(said);
    }
    let (spec, gpus, nvidia) = choose_spec(
        session,
        request.gpus.as_ref(),
        request.share_gpus,
        specs.line(),
    )
    .await?;
    let mut notes = serving_notes(&served, &spec.name);
    if request.allow_reload_config {
        notes.push(Notice::note(RELOAD_ALLOWED));
    }
    if remote {
        notes.push(Notice::note(format!(
            "the engine runs on another host: `{}` is copied into the container (a mount would name that host's folders); a new version needs `tfimg serve` again",
            request.shown
        )));
    }
    let target = spec_target(session, spec, network, false).await?;
    reporter.clear();
    let launch_request = launch_request(host, request, &served, target, gpus, remote)?;
    let prepared = launch::Launcher::of(session)
        .prepare(launch_request, nvidia)
        .await?;
    notes.extend(prepared.notes.iter().cloned());
    let reserved = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let launched = launch::Launcher::of(session)
        .start(prepared, &reserved, false, |_| {})
        .await?;
    notes.extend(launched.notes.iter().cloned());
    let mut ready = await_service(session, &launched, false).await;
    if let Ok(Some(_)) = ready {
        let grpc_port = host_port(&launched, SERVING_GRPC_PORT_NAME, SERVING_GRPC_PORT);
        if let Err(error) = grpc_ready(host, grpc_port).await {
            ready = Err(error);
        }
    }
    match ready {
        Ok(Some(_)) => {}
        Ok(None) | Err(_) => {
            if launched.tunnel.is_some() {
                crate::app::tunnels::TunnelStore::of(session)
                    .close(&launched.id)
                    .await;
            }
            let _ = engine.remove_container(&launched.id, true).await;
            return Err(match ready {
                Err(error) => error,
                _ => Interrupted {
                    what: format!("`{}` was removed", launched.name),
                }
                .into(),
            });
        }
    }
    answered(host, launched, &served, notes).await
}

/// In the foreground: the server's output until it exits or the user interrupts (it is
/// stopped); then it is removed and its tunnel closed, whatever the end.
pub async fn follow(
    session: Session<
        '_,
        impl Containers + ContainerIo + Tunnels + Daemon,
        impl Clock + State + Files + FileWrites + Confined,
    >,
    launched: &Launched,
) -> anyhow::Result<RunEnd> {
    let ui = session.ui;
    let on_event = |event| {
        if let RunEvent::Stopping = event {
            ui.note(&format!("tfimg: stopping `{}`", launched.name));
        }
    };
    let outcome = stream_until_exit(session, launched, on_event, |chunk| ui.output(chunk)).await;
    finish(session, launched, outcome, false, false).await
}

/// What the ready server says: the version it serves, and a request to try (or why there
/// is none).
async fn answered(
    host: &impl Probes,
    launched: Launched,
    served: &Served,
    notes: Vec<Notice>,
) -> anyhow::Result<Serving> {
    let port = host_port(&launched, SERVING_PORT_NAME, SERVING_PORT);
    let grpc_port = host_port(&launched, SERVING_GRPC_PORT_NAME, SERVING_GRPC_PORT);
    let model = served.first();
    let url = crate::plan::serving_url(port, Some(&model.name));
    let others = (served.models[1..].iter())
        .map(|other| crate::plan::serving_url(port, Some(&other.name)))
        .collect();
    let grpc = format!("127.0.0.1:{grpc_port}");
    let status_path = format!("/v1/models/{}", model.name);
    let version = match host.http_get(port, &status_path).await {
        Some((status, body)) => match serving::model_state(status, &body) {
            ModelState::Available { version } => version,
            _ => String::new(),
        },
        None => String::new(),
    };
    let metadata_path = format!("{status_path}/metadata");
    let (try_request, try_grpc) = match host.http_get(port, &metadata_path).await {
        Some((200, body)) => (
            serving::try_request(&url, &body),
            serving::try_grpc(&grpc, &model.name, &url, &body),
        ),
        answer => {
            let why = match answer {
                Some((status, _)) => format!("the server answered {status} for its metadata"),
                None => "the server did not answer for its metadata".into(),
            };
            (
                TryRequest::Unavailable(why.clone()),
                TryRequest::Unavailable(why),
            )
        }
    };
    Ok(Serving {
        launched,
        url,
        others,
        grpc,
        version,
        try_request,
        try_grpc,
        notes,
    })
}

/// The host port published for the container port named `name`.
fn host_port(launched: &Launched, name: &str, default: u16) -> u16 {
    (launched.plan.ports.iter())
        .find(|port| port.name == name)
        .map_or(default, |port| port.host)
}

/// The gRPC server starts before the REST one answers, in the same process: it answers
/// within `GRPC_WAIT` of the model being available, or the server is not what tfimg
/// built.
async fn grpc_ready(host: &(impl Probes + Clock), port: u16) -> anyhow::Result<()> {
    for _ in 0..GRPC_WAIT.as_secs() {
        if host.grpc_answers(port).await {
            return Ok(());
        }
        host.sleep(std::time::Duration::from_secs(1)).await;
    }
    anyhow::bail!(
        "the model server answers REST, but nothing answers gRPC on 127.0.0.1:{port} after {} s; its log (`tfimg logs`) says why",
        GRPC_WAIT.as_secs()
    )
}

const GRPC_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// What is served, with which spec: `serving the model `mlp` (versions 1, 3; the highest
/// is served) with `cpu-serving`; ...`, saying that `--name` names the model (`run
/// --name` names a container), or a line per model of a model config.
fn serving_notes(served: &Served, spec: &str) -> Vec<Notice> {
    let mut notes: Vec<Notice> = (served.models.iter())
        .map(|model| match (&model.base_path, &model.policy) {
            (Some(base_path), Some(policy)) => Notice::note(format!(
                "serving `{}` from `{base_path}`: {} (now {})",
                model.name,
                policy.describe(),
                versions_list(&model.versions)
            )),
            _ => Notice::note(format!(
                "serving the model `{}` (versions {}; the highest is served) with `{spec}`; `--name` names the model in the URLs, not the container",
                model.name,
                versions_list(&model.versions)
            )),
        })
        .collect();
    if let Some((_, shown)) = &served.config {
        notes.push(Notice::note(format!(
            "with `{spec}`; the server rereads `{shown}` when it changes (policies and labels; a new base_path needs `tfimg serve` again)"
        )));
    }
    notes
}

/// What `serve --allow-reload-config` says of the risk it takes.
pub const RELOAD_ALLOWED: &str = "gRPC's `HandleReloadConfigRequest` is allowed (`--allow-reload-config`): anyone who reaches the gRPC port can change the models served";

/// `1, 3`, or `no version`.
fn versions_list(versions: &[u64]) -> String {
    if versions.is_empty() {
        return "no version".into();
    }
    let all: Vec<String> = versions.iter().map(u64::to_string).collect();
    all.join(", ")
}

mod line;

pub use line::{newer_than, writers, ServingLine, ServingSpecs};

#[cfg(test)]
mod tests;
