//! The flags of the team commands (`up`, `down`) and of the exporters (`compose`, `k8s`,
//! and `push`, which puts their images where a cluster pulls them).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use clap_complete::engine::ArgValueCompleter;

use super::{complete, container_id, examples, NetworkArgs, Progress};

#[derive(Debug, Args)]
pub struct K8sArgs {
    /// The team file.
    #[arg(add = ArgValueCompleter::new(complete::yaml_file))]
    pub file: PathBuf,

    /// Write `<team>.yaml` (and `<team>.tfjob.yaml`) into this folder instead of printing.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Registry prefix for the images (`registry.example.com:5000`).
    #[arg(long, value_name = "HOST")]
    pub registry: Option<String>,

    /// The non-root uid the pods run as (the images' own user is 1000).
    #[arg(long, default_value_t = 1000, value_parser = container_id)]
    pub uid: u32,

    /// The gid the pods run as (and own their volumes with).
    #[arg(long, default_value_t = 1000, value_parser = container_id)]
    pub gid: u32,

    /// Size requested for each folder's PersistentVolumeClaim.
    #[arg(long, default_value = "10Gi")]
    pub volume_size: String,

    /// Also write multi-worker members as Kubeflow TFJobs.
    #[arg(long)]
    pub tfjob: bool,

    /// Build the members' images that are missing first (needs the Docker daemon).
    #[arg(long)]
    pub build: bool,

    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The image to push (`tfimg/cpu-jupyter:2.9.3`).
    pub image: String,

    /// The registry host (`127.0.0.1:5000`, `registry.example.com`).
    #[arg(long, value_name = "HOST")]
    pub registry: String,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,
}

#[derive(Debug, Args)]
pub struct ComposeArgs {
    /// The team file.
    #[arg(add = ArgValueCompleter::new(complete::yaml_file))]
    pub file: PathBuf,

    /// Write the Compose file here (env files go beside it) instead of printing it.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Build the members' images that are missing first (needs the Docker daemon).
    #[arg(long)]
    pub build: bool,

    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Args)]
pub struct DownArgs {
    /// The team file.
    #[arg(add = ArgValueCompleter::new(complete::yaml_file))]
    pub file: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum HubCommand {
    /// Set a member's password at the team's hub, read from stdin (one line): she signs
    /// in with it, then changes it herself at /hub/change-password.
    #[command(after_help = examples::HUB_PASSWD)]
    Passwd(HubPasswdArgs),
    /// Internal: the hub's spawner asks which GPUs a member's server takes (a JSON
    /// request on stdin, the grant as JSON on stdout).
    #[command(hide = true)]
    Gpus,
}

#[derive(Debug, Args)]
pub struct HubPasswdArgs {
    /// The team file.
    #[arg(add = ArgValueCompleter::new(complete::yaml_file))]
    pub file: PathBuf,

    /// The member (a name in the team file).
    pub member: String,
}

#[derive(Debug, Args)]
pub struct TeamArgs {
    /// The team file.
    #[arg(add = ArgValueCompleter::new(complete::yaml_file))]
    pub file: PathBuf,

    /// When a member (or the gateway) fails to start, remove what this `up` started, also
    /// where members already ran before it (the default only for a team that had none).
    #[arg(long, conflicts_with = "no_rollback")]
    pub rollback: bool,

    /// Keep the members that came up when another fails, even for a team that had none
    /// running before (the default then removes what this `up` made).
    #[arg(long)]
    pub no_rollback: bool,

    #[arg(long, value_enum, default_value = "auto")]
    pub progress: Progress,

    #[command(flatten)]
    pub network: NetworkArgs,
}

impl TeamArgs {
    /// `--rollback`: yes; `--no-rollback`: no; neither: `up` decides (it rolls back a team
    /// that had no container before).
    pub fn rollback_choice(&self) -> Option<bool> {
        match (self.rollback, self.no_rollback) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}
