//! `tfimg sweep`'s flags and subcommands.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use clap_complete::engine::ArgValueCompleter;

use super::{complete, NetworkArgs};

/// `tfimg sweep FILE [...]` or `tfimg sweep status|results|stop|report SWEEP [...]`.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    subcommand_value_name = "COMMAND",
    subcommand_help_heading = "Looking at a sweep"
)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: Option<SweepCommand>,

    #[command(flatten)]
    pub run: SweepRunArgs,
}

#[derive(Debug, Args)]
pub struct SweepRunArgs {
    /// The sweep file (see examples/sweep/sweep.yaml).
    #[arg(required = true, value_name = "FILE", add = ArgValueCompleter::new(complete::yaml_file))]
    pub file: Option<PathBuf>,

    /// Print the trials and the slot plan (the GPUs of each slot); create nothing.
    #[arg(long, conflicts_with_all = ["detach", "k8s", "resume"])]
    pub dry_run: bool,

    /// Run the sweep in the background and return (`tfimg sweep status` follows it).
    #[arg(short, long)]
    pub detach: bool,

    /// One JSON event per line on stdout instead of the live display (with `--dry-run`:
    /// the trials and slots as one JSON object).
    #[arg(long)]
    pub json: bool,

    /// Only go on with the sweep the file's journal records; never start a new one.
    #[arg(long)]
    pub resume: bool,

    /// Write the sweep as a Kubernetes Indexed Job (one completion per trial) into `-o DIR`
    /// instead of running it here.
    #[arg(long, requires = "output", conflicts_with_all = ["detach", "resume", "json"])]
    pub k8s: bool,

    /// With `--k8s`: the folder the manifests go to.
    #[arg(short, long, value_name = "DIR", requires = "k8s")]
    pub output: Option<PathBuf>,

    /// With `--k8s`: registry prefix for the image (`registry.example.com:5000`).
    #[arg(long, value_name = "HOST", requires = "k8s")]
    pub registry: Option<String>,

    /// With `--k8s`: the size of the claim holding every trial's folder.
    #[arg(long, value_name = "SIZE", default_value = crate::sweep::k8s::DEFAULT_VOLUME_SIZE, requires = "k8s")]
    pub volume_size: String,

    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Debug, Subcommand)]
pub enum SweepCommand {
    /// Where each trial of a sweep stands: queued, running, done, failed.
    Status(SweepStatusArgs),
    /// The results table, sorted by the objective (best first).
    Results(SweepResultsArgs),
    /// Stop a sweep: its trial containers are stopped and removed, every result is kept.
    Stop(SweepTarget),
    /// Write one self-contained HTML report: the results table and charts.
    Report(SweepReportArgs),
}

#[derive(Debug, Args)]
pub struct SweepTarget {
    /// The sweep's name (its folder under `./runs`), or its folder.
    #[arg(value_name = "SWEEP", add = ArgValueCompleter::new(complete::sweep))]
    pub sweep: String,
}

#[derive(Debug, Args)]
pub struct SweepStatusArgs {
    #[command(flatten)]
    pub target: SweepTarget,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SweepResultsArgs {
    #[command(flatten)]
    pub target: SweepTarget,

    /// Print JSON instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,

    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct SweepReportArgs {
    #[command(flatten)]
    pub target: SweepTarget,

    /// The HTML file to write [default: report.html in the sweep's folder].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
