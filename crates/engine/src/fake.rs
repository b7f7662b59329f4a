//! A recording stand-in for the engine, for the use cases' unit tests: images and
//! containers live in memory, every call that changes something is written to `calls`
//! (`create lab`, `start c1`, `remove-container c1`, `tag i1 tfimg/x:1`, ...), and the
//! test scripts what the daemon would answer: a start that fails, a build that fails, a
//! verification that exits 1. Built for this crate's tests and, through the `fake` feature,
//! for the binary's; never in a build of tfimg itself.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use futures_util::StreamExt;

use super::{
    BuildFailure, ContainerFacts, ContainerIo, Containers, EngineError, EngineInfo, Finished,
    ImageFacts, Images, OneOff, OutputChunk, StartFailure, TarStream,
};
use tfimg_core::plan::LaunchPlan;
mod archive;
mod build;
mod daemon;
mod networks;
mod tarball;
mod tunnels;

#[derive(Debug, Default)]
pub struct FakeEngine {
    pub state: RefCell<FakeState>,
    pub tunnels: RefCell<tunnels::FakeTunnels>,
    /// The engine's URL, when not `fake://engine` (`set_endpoint`).
    pub endpoint: std::cell::OnceCell<String>,
}

#[derive(Debug, Default)]
pub struct FakeState {
    /// What was done, in order.
    pub calls: Vec<String>,
    /// Images by id.
    pub images: BTreeMap<String, ImageFacts>,
    /// Containers by id.
    pub containers: BTreeMap<String, ContainerFacts>,
    /// What each created container was planned as, by id.
    pub plans: BTreeMap<String, LaunchPlan>,
    /// Every plan created, in order (kept when its container is removed).
    pub created: Vec<LaunchPlan>,
    /// The next starts fail with these, in order; then starts succeed.
    pub start_failures: VecDeque<StartFailure>,
    /// The next build fails with this.
    pub build_failure: Option<BuildFailure>,
    /// Exit code and output of the next one-off containers (verification).
    pub run_once: Option<Finished>,
    /// What a container printed, by its name (`stream_output` hands it over whole).
    pub output: BTreeMap<String, String>,
    /// What the next one-off containers end with, in order, before `run_once` answers.
    pub one_offs: VecDeque<Result<Finished, EngineError>>,
    /// Every one-off container asked for, in order.
    pub one_offs_run: Vec<OneOff>,
    /// The engine is on another host reached over tcp (an ssh one is `tunnels.remote`).
    pub tcp_elsewhere: bool,
    /// stdout of programs run on an ssh engine's host, by their words joined with spaces
    /// (a program missing here fails).
    pub host_programs: BTreeMap<String, String>,
    pub info: EngineInfo,
    pub cdi: bool,
    /// Exit codes of the next waits on a container, by its name (else its `exit_code`,
    /// else 0).
    pub exits: BTreeMap<String, VecDeque<i64>>,
    /// Containers (by name) whose wait does not return while they run: it returns 143
    /// once they are stopped.
    pub held: std::collections::BTreeSet<String>,
    /// The next `load_images` fails with this after reading its tarball, the next
    /// `export_images` half-way through.
    pub load_failure: Option<String>,
    pub export_failure: Option<String>,
    /// Volumes that exist (a created container's are made); every upload (container id,
    /// folder, each entry as `path uid:gid mode`); the tar a download gets, by path.
    pub volumes: std::collections::BTreeSet<String>,
    pub uploads: Vec<(String, String, Vec<String>)>,
    /// The contents of every file uploaded, by its path in the container (the last one).
    pub uploaded: BTreeMap<String, Vec<u8>>,
    pub archives: BTreeMap<String, Vec<u8>>,
    /// `/missing...` folders an upload made (they exist from then on).
    pub made_folders: std::collections::BTreeSet<String>,
    /// Networks that exist, by name.
    pub networks: BTreeMap<String, networks::FakeNetwork>,
    /// Containers another tfimg makes in the same instant as this one's next creates: each
    /// create adds the next of these beside its own (`created_s` as given, else just after
    /// the created one), as a racer that chose the same GPUs would.
    pub created_beside: VecDeque<ContainerFacts>,
    /// How many more listings a racer left `created` by `created_beside` stays so; at the
    /// listing after that it runs (`Some`), or it stays created for good (`None`).
    pub racers_start_after: Option<usize>,
    racers: Vec<String>,
    /// A container that ends with 137 was killed by the kernel for memory (`OOMKilled`).
    pub out_of_memory: bool,
    next_id: u32,
}

impl FakeEngine {
    pub fn new() -> FakeEngine {
        FakeEngine::default()
    }

    /// Adds a local image with these tags and labels; its id.
    pub fn add_image(&self, tags: &[&str], image_labels: &[(&str, &str)]) -> String {
        let mut state = self.state.borrow_mut();
        // Shaped as Docker's ids are (a bundle's manifest checks them).
        state.next_id += 1;
        let id = format!("sha256:{:064x}", state.next_id);
        let facts = ImageFacts {
            id: id.clone(),
            tags: tags.iter().map(|tag| tag.to_string()).collect(),
            labels: image_labels
                .iter()
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .collect(),
            ..ImageFacts::default()
        };
        state.images.insert(id.clone(), facts);
        id
    }

    /// Adds a container as if an earlier tfimg had made it; its id.
    pub fn add_container(&self, name: &str, state_name: &str, labels: &[(&str, String)]) -> String {
        let mut state = self.state.borrow_mut();
        let id = state.new_id("container");
        state.containers.insert(
            id.clone(),
            ContainerFacts {
                id: id.clone(),
                name: name.to_string(),
                state: state_name.to_string(),
                labels: labels
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.clone()))
                    .collect(),
                ..ContainerFacts::default()
            },
        );
        id
    }

    pub fn calls(&self) -> Vec<String> {
        self.state.borrow().calls.clone()
    }

    /// The calls that start with `prefix` (`"create"`, `"start"`).
    pub fn calls_to(&self, prefix: &str) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter(|call| call.split(' ').next() == Some(prefix))
            .collect()
    }

    /// The names of the containers created, in order (removed ones too).
    pub fn created_names(&self) -> Vec<String> {
        let state = self.state.borrow();
        state.created.iter().map(|plan| plan.name.clone()).collect()
    }

    /// The names of the containers that exist now.
    pub fn container_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .state
            .borrow()
            .containers
            .values()
            .map(|container| container.name.clone())
            .collect();
        names.sort();
        names
    }

    /// The plan a container was created from.
    pub fn plan_of(&self, name: &str) -> Option<LaunchPlan> {
        let state = self.state.borrow();
        let id = state
            .containers
            .values()
            .find(|container| container.name == name)?
            .id
            .clone();
        state.plans.get(&id).cloned()
    }

    /// Every tag of every image.
    pub fn tags(&self) -> Vec<String> {
        let mut tags: Vec<String> = self
            .state
            .borrow()
            .images
            .values()
            .flat_map(|image| image.tags.clone())
            .collect();
        tags.sort();
        tags
    }
}

impl FakeState {
    pub(super) fn new_id(&mut self, kind: &str) -> String {
        self.next_id += 1;
        format!("{kind}{}", self.next_id)
    }

    pub(super) fn record(&mut self, call: String) {
        self.calls.push(call);
    }

    pub(super) fn image_id(&self, reference: &str) -> Option<String> {
        if self.images.contains_key(reference) {
            return Some(reference.to_string());
        }
        self.images
            .values()
            .find(|image| image.tags.iter().any(|tag| tag == reference))
            .map(|image| image.id.clone())
    }

    fn container_id(&self, name: &str) -> Option<String> {
        if self.containers.contains_key(name) {
            return Some(name.to_string());
        }
        self.containers
            .values()
            .find(|container| container.name == name)
            .map(|container| container.id.clone())
    }
}

/// Whether `labels` carry `filter` (`key` or `key=value`).
fn matches(labels: &HashMap<String, String>, filter: &str) -> bool {
    match filter.split_once('=') {
        Some((key, value)) => labels.get(key).map(String::as_str) == Some(value),
        None => labels.contains_key(filter),
    }
}

pub(super) fn missing(what: &str) -> EngineError {
    EngineError::Failed {
        what: what.to_string(),
        message: "no such object".to_string(),
    }
}

impl Images for FakeEngine {
    async fn image(&self, reference: &str) -> Result<Option<ImageFacts>, EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("inspect-image {reference}"));
        Ok(state
            .image_id(reference)
            .map(|id| state.images[&id].clone()))
    }

    async fn images_with_label(&self, label: &str) -> Result<Vec<ImageFacts>, EngineError> {
        let state = self.state.borrow();
        Ok(state
            .images
            .values()
            .filter(|image| matches(&image.labels, label))
            .cloned()
            .collect())
    }

    async fn tag(&self, image: &str, reference: &str) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("tag {image} {reference}"));
        let id = state.image_id(image).ok_or_else(|| missing("tag"))?;
        for other in state.images.values_mut() {
            other.tags.retain(|tag| tag != reference);
        }
        let facts = state.images.get_mut(&id).expect("found above");
        facts.tags.push(reference.to_string());
        Ok(())
    }

    async fn remove_image(&self, reference: &str, _force: bool) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("remove-image {reference}"));
        if state.images.remove(reference).is_none() {
            let Some(id) = state.image_id(reference) else {
                return Ok(());
            };
            let facts = state.images.get_mut(&id).expect("found above");
            facts.tags.retain(|tag| tag != reference);
            if facts.tags.is_empty() {
                state.images.remove(&id);
            }
        }
        Ok(())
    }

    async fn history(&self, _reference: &str) -> Result<Vec<String>, EngineError> {
        Ok(Vec::new())
    }

    async fn pull(&self, reference: &str, _progress: impl FnMut(&str)) -> Result<(), EngineError> {
        self.state.borrow_mut().record(format!("pull {reference}"));
        Err(missing("pull"))
    }

    async fn push(
        &self,
        reference: &str,
        _progress: impl FnMut(&str),
    ) -> Result<String, EngineError> {
        self.state.borrow_mut().record(format!("push {reference}"));
        Err(missing("push"))
    }

    /// A stand-in tarball (see `tarball`), in several chunks.
    async fn export_images(
        &self,
        references: &[String],
        mut sink: impl FnMut(bytes::Bytes) -> std::ops::ControlFlow<()>,
    ) -> Result<(), EngineError> {
        let (chunks, failure) = tarball::export(&mut self.state.borrow_mut(), references)?;
        let _ = chunks.into_iter().try_for_each(&mut sink);
        failure.map_or(Ok(()), Err)
    }

    async fn load_images(
        &self,
        tarball: impl TarStream,
        progress: impl FnMut(&str),
    ) -> Result<(), EngineError> {
        let bytes = tarball::read_all(tarball).await?;
        tarball::load(&mut self.state.borrow_mut(), &bytes, progress)
    }

    async fn import_rootfs(
        &self,
        reference: &str,
        _changes: &[String],
        tarball: impl TarStream,
    ) -> Result<String, EngineError> {
        let _ = tarball.collect::<Vec<_>>().await;
        self.state
            .borrow_mut()
            .record(format!("import {reference}"));
        Ok(self.add_image(&[reference], &[]))
    }
}

impl Containers for FakeEngine {
    async fn create(&self, plan: &LaunchPlan) -> Result<String, EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("create {}", plan.name));
        if state.container_id(&plan.name).is_some() {
            return Err(EngineError::Failed {
                what: format!("create container `{}`", plan.name),
                message: format!(
                    "Conflict. The container name \"/{}\" is already in use",
                    plan.name
                ),
            });
        }
        let id = state.new_id("container");
        let second = i64::from(state.next_id);
        let facts = ContainerFacts {
            id: id.clone(),
            name: plan.name.clone(),
            image: plan.image.clone(),
            state: "created".to_string(),
            created_s: Some(second),
            labels: plan.labels.clone().into_iter().collect(),
            user: plan.user.clone().unwrap_or_default(),
            env: plan.env.clone(),
            published: tunnels::published(plan),
            ..ContainerFacts::default()
        };
        state.containers.insert(id.clone(), facts);
        let volumes = plan.volumes.iter().map(|volume| volume.name.clone());
        state.volumes.extend(volumes);
        state.plans.insert(id.clone(), plan.clone());
        state.created.push(plan.clone());
        if let Some(mut racer) = state.created_beside.pop_front() {
            racer.id = state.new_id("container");
            racer.created_s = racer.created_s.or(Some(i64::from(state.next_id)));
            state.racers.push(racer.id.clone());
            state.containers.insert(racer.id.clone(), racer);
        }
        Ok(id)
    }
    async fn start(&self, id: &str) -> Result<(), StartFailure> {
        let mut state = self.state.borrow_mut();
        state.record(format!("start {id}"));
        if let Some(failure) = state.start_failures.pop_front() {
            return Err(failure);
        }
        match state.containers.get_mut(id) {
            Some(container) => {
                container.state = "running".to_string();
                Ok(())
            }
            None => Err(StartFailure::Engine(missing("start"))),
        }
    }
    async fn container(&self, name: &str) -> Result<Option<ContainerFacts>, EngineError> {
        let state = self.state.borrow();
        Ok(state
            .container_id(name)
            .map(|id| state.containers[&id].clone()))
    }
    async fn containers_with_label(&self, label: &str) -> Result<Vec<ContainerFacts>, EngineError> {
        let mut state = self.state.borrow_mut();
        state.racers_start_after = match state.racers_start_after {
            Some(0) => {
                for id in state.racers.clone() {
                    if let Some(racer) = state.containers.get_mut(&id) {
                        if racer.state == "created" {
                            racer.state = "running".to_string();
                        }
                    }
                }
                None
            }
            Some(left) => Some(left - 1),
            None => None,
        };
        Ok(state
            .containers
            .values()
            .filter(|container| matches(&container.labels, label))
            .cloned()
            .collect())
    }
    async fn wait(&self, id: &str) -> Result<i64, EngineError> {
        loop {
            {
                let mut state = self.state.borrow_mut();
                let id = state.container_id(id).ok_or_else(|| missing("wait"))?;
                let container = &state.containers[&id];
                let name = container.name.clone();
                if container.state == "exited" && state.held.contains(&name) {
                    return Ok(143);
                }
                if !state.held.contains(&name) {
                    let scripted = state.exits.get_mut(&name).and_then(VecDeque::pop_front);
                    let out_of_memory = state.out_of_memory;
                    let container = state.containers.get_mut(&id).expect("found above");
                    let code = scripted.or(container.exit_code).unwrap_or(0);
                    container.state = "exited".to_string();
                    container.exit_code = Some(code);
                    // The kernel's SIGKILL, when scripted so (`exits` 137 beside `out_of_memory`).
                    container.oom_killed = code == 137 && out_of_memory;
                    return Ok(code);
                }
            }
            tokio::task::yield_now().await;
        }
    }
    async fn stop(&self, id: &str, _seconds: i32) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("stop {id}"));
        if let Some(container) = state.containers.get_mut(id) {
            container.state = "exited".to_string();
        }
        Ok(())
    }
    async fn remove_container(&self, id: &str, _force: bool) -> Result<(), EngineError> {
        let mut state = self.state.borrow_mut();
        state.record(format!("remove-container {id}"));
        if let Some(id) = state.container_id(id) {
            state.containers.remove(&id);
            state.plans.remove(&id);
        }
        Ok(())
    }
    async fn run_once(&self, spec: &OneOff, _deadline: Duration) -> Result<Finished, EngineError> {
        daemon::run_once(&mut self.state.borrow_mut(), spec)
    }
}

impl ContainerIo for FakeEngine {
    async fn output(&self, _id: &str) -> Result<String, EngineError> {
        Ok(String::new())
    }
    async fn stream_output(
        &self,
        id: &str,
        follow: bool,
        _tail: Option<&str>,
        mut sink: impl FnMut(OutputChunk),
    ) -> Result<(), EngineError> {
        let printed = {
            let state = self.state.borrow();
            state
                .container_id(id)
                .and_then(|id| state.output.get(&state.containers[&id].name).cloned())
        };
        if let Some(printed) = printed {
            sink(OutputChunk::Stderr(printed.into_bytes()));
        }
        // Following a held container lasts while it runs (until it is stopped).
        while follow && {
            let state = self.state.borrow();
            state.container_id(id).is_some_and(|id| {
                let container = &state.containers[&id];
                container.state == "running" && state.held.contains(&container.name)
            })
        } {
            tokio::task::yield_now().await;
        }
        Ok(())
    }
    async fn exec(
        &self,
        id: &str,
        command: &[String],
        _user: &str,
        _sink: impl FnMut(OutputChunk),
    ) -> Result<i64, EngineError> {
        self.state
            .borrow_mut()
            .record(format!("exec {id} {}", command.join(" ")));
        Ok(0)
    }
    async fn upload(
        &self,
        id: &str,
        folder: &str,
        tar: impl TarStream,
    ) -> Result<bool, EngineError> {
        let bytes = tarball::read_all(tar).await?;
        archive::upload(&mut self.state.borrow_mut(), id, folder, &bytes)
    }
    async fn download(
        &self,
        id: &str,
        path: &str,
        sink: impl FnMut(bytes::Bytes) -> std::ops::ControlFlow<()>,
    ) -> Result<bool, EngineError> {
        let mut state = self.state.borrow_mut();
        Ok(archive::download(&mut state, id, path, sink))
    }
    async fn volume_exists(&self, name: &str) -> Result<bool, EngineError> {
        Ok(self.state.borrow().volumes.contains(name))
    }
}
