//! `tfimg save` and `tfimg load`'s flags.

use std::path::PathBuf;

use clap::Args;
use clap_complete::engine::ArgValueCompleter;

use super::{complete, NetworkArgs, Progress};

#[derive(Debug, Args)]
pub struct SaveArgs {
    /// What to carry: specs (a name from `tfimg list` or a spec file: its current image,
    /// the spec file, the local specs it extends and their locks) and images (any local
    /// reference or id).
    #[arg(required = true, value_name = "SPEC|IMAGE", add = ArgValueCompleter::new(complete::spec))]
    pub targets: Vec<String>,

    /// The bundle to write (a tar; written beside it first, then renamed into place).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,

    /// The options the specs were built with: they are part of the build key that names
    /// a spec's current image.
    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// A bundle written by `tfimg save`.
    pub bundle: PathBuf,

    /// Where the bundle's spec files and locks go (`tfimg list` reads `./images`).
    #[arg(short, long, value_name = "DIR", default_value = "images")]
    pub output: PathBuf,

    /// Replace spec files and locks in DIR that differ from the bundle's.
    #[arg(long)]
    pub force: bool,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,
}
