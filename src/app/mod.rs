//! The use cases, between the commands and the outside world: each reads like the story
//! it implements and reaches Docker and this machine only through the `Engine` and `Host`
//! traits, so each is unit-tested against the fakes (and integration-tested for real).
//!
//! - `build`: a spec's image, up to date or built, verified and tagged.
//! - `bundle`: `tfimg save` and `tfimg load`, images and specs carried to offline machines.
//! - `base`: the base image a build starts from; `tfimg base bootstrap`.
//! - `catalog`: the specs and team files on this machine, read and handed to `spec`.
//! - `containers`: the tfimg container a command names (by its name, or a served model's).
//! - `files`: files out of containers (`--sync-back`, `tfimg pull-files`).
//! - `gpu_host`: the NVIDIA facts of the engine's host, which GPU decisions are made on.
//! - `gpu_ledger`: who holds which GPU of that host, and what a launch may take.
//! - `lock`: a spec resolved once into its lock (`tfimg lock`); a spec's lock found.
//! - `names`: the names a shell completes (specs, containers, teams, sweeps).
//! - `launch`: THE launcher, one container from a request (run, a team member, ...).
//! - `ready`: waiting until a started container's service answers.
//! - `push`: an image tagged for a registry and pushed (`tfimg push`).
//! - `run`: `tfimg run`'s target and what happens after the start.
//! - `serve`: a SavedModel folder behind TensorFlow Serving's REST API (`tfimg serve`).
//! - `sweep`: many trials queued onto GPU slots, journaled, resumed; a sweep's folder read back.
//! - `team`: a team brought to what its file says (`up`), and its exports' plans.
//! - `tunnels`: ports of containers on a remote engine carried to this machine, recorded.

pub mod base;
pub mod build;
pub mod bundle;
pub mod catalog;
pub mod containers;
pub mod doctor;
pub mod files;
pub mod gateway;
pub mod gpu_host;
pub mod gpu_ledger;
pub mod gpu_use;
pub mod hub;
pub mod launch;
pub mod lock;
pub mod names;
pub mod push;
pub mod ready;
pub mod run;
pub mod serve;
pub mod session;
pub use session::Session;
pub mod settings;
pub mod sweep;
pub mod team;
#[cfg(test)]
pub(crate) mod testing;
pub mod tunnels;

/// The host's type (the host owns the signals), where the stories name it.
pub use crate::host::Interrupted;
