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
    /// Build a spec's image through the Docker API, verify it, and tag it.
    Build(BuildArgs),
    /// Base images without a registry.
    #[command(subcommand)]
    Base(BaseCommand),
}

#[derive(Debug, Subcommand)]
pub enum BaseCommand {
    /// Build a Debian or Ubuntu base image from an apt mirror with debootstrap and import
    /// it under REF (for machines where Docker Hub is unreachable).
    Bootstrap(BootstrapArgs),
}

#[derive(Debug, Args)]
pub struct BootstrapArgs {
    /// The image reference to create: `debian:bullseye-slim`, `debian:bookworm`,
    /// `debian:11`, `ubuntu:22.04`, ...
    pub reference: String,

    /// The apt mirror debootstrap downloads from (default: the distribution's own).
    #[arg(long, value_name = "URL", env = "TFIMG_APT_MIRROR")]
    pub mirror: Option<String>,

    /// Replace an existing image of that name.
    #[arg(long)]
    pub force: bool,
}

/// Settings for restricted networks, shared by `render` and `build`. Each can also come
/// from the environment or `~/.config/tfimg/config.yaml`.
#[derive(Debug, Clone, Default, Args)]
pub struct NetworkArgs {
    /// A PEM file with extra CA certificates (a TLS-inspecting proxy's), trusted by apt,
    /// pip and curl during the build and inside the image.
    #[arg(long, value_name = "PATH", env = "TFIMG_CA_CERT")]
    pub ca_cert: Option<PathBuf>,

    /// pip's package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI.
    #[arg(long, value_name = "URL", env = "TFIMG_PIP_INDEX_URL")]
    pub pip_index_url: Option<String>,

    /// An apt mirror replacing http://deb.debian.org/debian (or Ubuntu's archive).
    #[arg(long, value_name = "URL", env = "TFIMG_APT_MIRROR")]
    pub apt_mirror: Option<String>,

    /// A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`).
    #[arg(long, value_name = "HOST", env = "TFIMG_REGISTRY_MIRROR")]
    pub registry_mirror: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Progress {
    /// A live display on a terminal, plain lines otherwise.
    Auto,
    /// The daemon's output line by line (for CI logs).
    Plain,
    /// One JSON event per line on stdout.
    Json,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// A spec name (`tfimg list`) or the path of a spec file.
    pub spec: String,

    /// An extra tag for the image (`team/lab:1`), besides `tfimg/<name>:<tensorflow>`.
    #[arg(long, short, value_name = "TAG")]
    pub tag: Vec<String>,

    /// Rebuild every layer, even when an image with the same build key exists.
    #[arg(long)]
    pub no_cache: bool,

    /// Pull the base image first (from Docker Hub or `--registry-mirror`).
    #[arg(long)]
    pub pull: bool,

    /// Make a missing Debian/Ubuntu base with `tfimg base bootstrap` instead of failing.
    #[arg(long)]
    pub bootstrap_base: bool,

    /// Skip the check that TensorFlow imports and its CUDA libraries resolve.
    #[arg(long)]
    pub no_verify: bool,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,

    #[command(flatten)]
    pub network: NetworkArgs,
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

    #[command(flatten)]
    pub network: NetworkArgs,
}
