//! The names a shell completes (`tfimg run <TAB>`, `tfimg rm <TAB>`, `tfimg sweep status
//! <TAB>`): the specs, tfimg's containers, its teams and its sweeps, found where the
//! commands that take them look. Read only: completing a word creates nothing, and a name
//! offered is only a suggestion (the command checks it as always).

use std::collections::BTreeSet;
use std::path::Path;

use crate::engine::prelude::Containers;
use crate::host::prelude::Files;
use crate::labels;
use crate::sweep::journal::JOURNAL_FILE;
use crate::sweep::FILE_COPY;

/// A name and a few words about it (a shell that shows descriptions shows them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub about: String,
}

/// The buildable specs seen from `current_dir`: the built-ins and `./images/*.yaml`
/// (`tfimg list`'s names), sorted.
pub fn specs(host: &impl Files, current_dir: &Path) -> Vec<String> {
    let mut names = super::catalog::load(host, current_dir).names();
    names.sort();
    names
}

/// The containers tfimg made (`tfimg ps`'s, those with an `io.tfimg.spec` label), by
/// name, each with its spec and status.
pub async fn containers(engine: &impl Containers) -> anyhow::Result<Vec<Named>> {
    let mut found: Vec<Named> = engine
        .containers_with_label(labels::SPEC)
        .await?
        .into_iter()
        .map(|container| Named {
            about: format!(
                "{}, {}",
                container
                    .labels
                    .get(labels::SPEC)
                    .map(String::as_str)
                    .unwrap_or("-"),
                container.status
            ),
            name: container.name,
        })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// The teams whose containers the engine holds (`tfimg ps --team NAME`), sorted.
pub async fn teams(engine: &impl Containers) -> anyhow::Result<Vec<String>> {
    let teams: BTreeSet<String> = engine
        .containers_with_label(labels::TEAM)
        .await?
        .into_iter()
        .filter_map(|container| container.labels.get(labels::TEAM).cloned())
        .collect();
    Ok(teams.into_iter().collect())
}

/// The sweeps `tfimg sweep status|results|stop|report NAME` finds from `current_dir`:
/// each folder of `./runs` holding a sweep, and each sweep tfimg remembers running
/// (`remembered`: the `sweeps` folder of its data folder, when there is one), sorted.
pub fn sweeps(host: &impl Files, current_dir: &Path, remembered: Option<&Path>) -> Vec<String> {
    let runs = current_dir.join("runs");
    let mut names: BTreeSet<String> = host
        .folder_entries(&runs)
        .into_iter()
        .filter(|name| {
            let folder = runs.join(name);
            host.exists(&folder.join(JOURNAL_FILE)) || host.exists(&folder.join(FILE_COPY))
        })
        .collect();
    if let Some(remembered) = remembered {
        names.extend(
            host.folder_entries(remembered)
                .into_iter()
                .filter(|name| crate::sweep::checks::is_sweep_name(name)),
        );
    }
    names.into_iter().collect()
}

#[cfg(test)]
mod tests;
