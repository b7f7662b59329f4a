//! Code and data without bind mounts: `run`'s `--sync`, `--sync-back` and `--volume`, and
//! `tfimg pull-files`.

use std::path::PathBuf;

use clap::Args;
use clap_complete::engine::ArgValueCompleter;

use super::complete;

#[derive(Debug, Args)]
pub struct FilesArgs {
    /// Copy a local folder or file into the container before it starts: `SRC[:DST]`; DST
    /// defaults to `<workdir>/<name of SRC>`. What `.gitignore` and `.dockerignore` leave
    /// out stays behind, and so does `.git`. Works on remote engines, unlike `--mount`.
    #[arg(long = "sync", value_name = "SRC[:DST]")]
    pub syncs: Vec<String>,

    /// After the command exits (or Ctrl-C), copy each `--sync` destination back into its
    /// source: new and changed files only; nothing local is deleted.
    #[arg(long)]
    pub sync_back: bool,

    /// Mount a named Docker volume: `NAME:DST[:ro]`. Docker creates it on first use and
    /// keeps it between runs; `rm` and `down` never remove it.
    #[arg(long = "volume", value_name = "NAME:DST[:ro]")]
    pub volumes: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PullFilesArgs {
    /// A container tfimg started (running or stopped).
    #[arg(add = ArgValueCompleter::new(complete::container))]
    pub name: String,

    /// The local folder (or file) to copy into; a missing folder is created.
    pub destination: PathBuf,

    /// The path in the container [default: its first `--sync` destination, else its
    /// workdir].
    #[arg(long, value_name = "PATH")]
    pub from: Option<String>,
}
