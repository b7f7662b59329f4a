//! Command-line definitions (clap) and nothing else: raw flags as the user typed them.
//! Each subcommand resolves its `…Args` into options in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Reproducible TensorFlow images and containers, GPU and CPU, from declarative specs.
#[derive(Debug, Parser)]
#[command(name = "tfimg", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the built-in and local specs with their TensorFlow, Python, CUDA and cuDNN.
    List(ListArgs),
    /// Print a spec fully resolved (defaults, versions, pins) as YAML.
    Show(ShowArgs),
    /// Print the Dockerfile a spec renders to, or write it with its context to a folder.
    Render(RenderArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A spec name (`tfimg list`) or the path of a spec file.
    pub spec: String,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// A spec name (`tfimg list`) or the path of a spec file.
    pub spec: String,

    /// Write the Dockerfile and every context file into this folder instead of printing.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}
