//! tfimg's pure core: what a spec, a lock, a rendered image, a launch plan, a team, a
//! sweep and a bundle are, and every decision over them. Pure: no file system, no
//! environment, no clock, no network, no printing, no process; the host and the engine
//! crates do the effects and the `tfimg` binary tells the stories (docs/architecture.md).
//!
//! From the ground up: `input` and `labels`; `spec`; `lock`; `render`; `plan`; `team`;
//! `sweep`; `bundle`.

pub mod bundle;
/// The properties the fuzzers hold every parser to (the `fuzzing` feature: `fuzz/` and
/// the integration tests, through tfimg-testing). Not part of tfimg's interface.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod input;
pub mod labels;
pub mod lock;
pub mod notice;
pub mod plan;
pub mod render;
pub mod spec;
pub mod sweep;
pub mod team;
