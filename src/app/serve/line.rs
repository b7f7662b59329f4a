//! Which serving line runs a model: the SavedModel says which TensorFlow wrote it
//! (`plan::serving::saved_model`), and `serve` takes the oldest serving line that loads
//! it (`cpu-serving`/`gpu-serving` on TensorFlow 2.9 for what 2.9 or older wrote, the
//! `tf218-` ones for what 2.10 to 2.18 wrote), refusing a model newer than every line.
//! `--spec` names the serving spec instead.

use std::path::Path;

use crate::host::prelude::Files;
use crate::input::InputError;
use crate::notice::Notice;
use crate::plan::serving::saved_model::{self, HEAD_BYTES};
use crate::plan::serving::version_of;
use crate::spec::{Catalog, ResolvedSpec, Service};

use super::{ServeRequest, Served};

/// The built-in serving lines, oldest first: (CPU spec, GPU spec).
pub const LINES: [(&str, &str); 2] = [
    ("cpu-serving", "gpu-serving"),
    ("tf218-cpu-serving", "tf218-gpu-serving"),
];

/// One serving line: its CPU and GPU specs (the same spec twice when `--spec` named it).
#[derive(Debug, Clone)]
pub struct ServingLine {
    pub cpu: ResolvedSpec,
    pub gpu: ResolvedSpec,
}

impl ServingLine {
    /// The TensorFlow its specs run, `major.minor`.
    fn tensorflow(&self) -> (u32, u32) {
        saved_model::minor_of(&self.cpu.tensorflow).unwrap_or((0, 0))
    }

    /// `--spec`'s line: one spec, whatever the GPUs.
    pub fn named(&self) -> bool {
        self.cpu.name == self.gpu.name
    }
}

/// The serving lines `serve` chooses from, oldest first (`--spec`'s alone), and the one it
/// chose for the model (`resolve`).
#[derive(Debug, Clone)]
pub struct ServingSpecs {
    pub lines: Vec<ServingLine>,
    /// The line that serves the model: `lines[chosen]`.
    pub chosen: usize,
    /// Why, when the model chose it; a warning when `--spec`'s is older than the model.
    pub said: Option<Notice>,
}

impl ServingSpecs {
    /// The serving specs of `catalog` (a project may override the built-ins), or the one
    /// `--spec` names, which must serve; and the line of `served`'s models, by which
    /// TensorFlow wrote them (`choose`), refused before anything exists when none loads them.
    pub fn resolve(
        host: &impl Files,
        catalog: &Catalog,
        request: &ServeRequest,
        served: &Served,
    ) -> anyhow::Result<ServingSpecs> {
        let mut specs = Self::lines(host, catalog, request.spec.as_deref())?;
        let (chosen, said) = choose(&specs, &writers(host, served))?;
        specs.chosen = chosen;
        specs.said = said;
        Ok(specs)
    }

    /// The chosen line.
    pub fn line(&self) -> &ServingLine {
        &self.lines[self.chosen]
    }

    /// The lines, before the model chose one (the first, until then).
    pub fn lines(
        host: &impl Files,
        catalog: &Catalog,
        named: Option<&str>,
    ) -> anyhow::Result<ServingSpecs> {
        let resolve = |name: &str| crate::app::catalog::resolve(host, catalog, name);
        let only = |lines| ServingSpecs {
            lines,
            chosen: 0,
            said: None,
        };
        if let Some(name) = named {
            let spec = resolve(name)?;
            if spec.service != Service::Serving {
                return Err(InputError::new(
                    format!(
                        "`--spec {name}` does not serve models (its service is `{}`)",
                        spec.service.as_str()
                    ),
                    format!(
                        "give a serving spec: {}, or one of yours that extends them",
                        LINES
                            .iter()
                            .flat_map(|(cpu, gpu)| [*cpu, *gpu])
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .into());
            }
            return Ok(only(vec![ServingLine {
                cpu: spec.clone(),
                gpu: spec,
            }]));
        }
        let mut lines = Vec::new();
        for (cpu, gpu) in LINES {
            lines.push(ServingLine {
                cpu: resolve(cpu)?,
                gpu: resolve(gpu)?,
            });
        }
        Ok(only(lines))
    }
}

/// One servable version and the TensorFlow that wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    pub model: String,
    pub version: u64,
    pub tensorflow: String,
}

/// Which TensorFlow wrote each version `served` serves, where its `saved_model.pb` says; by
/// model and version.
pub fn writers(host: &impl Files, served: &Served) -> Vec<Writer> {
    let mut found = Vec::new();
    for model in &served.models {
        for entry in host.folder_entries(&model.folder) {
            let Some(version) = version_of(&entry) else {
                continue;
            };
            if !model.versions.contains(&version) {
                continue;
            }
            if let Some(tensorflow) = written_by(host, &model.folder.join(&entry)) {
                found.push(Writer {
                    model: model.name.clone(),
                    version,
                    tensorflow,
                });
            }
        }
    }
    found.sort_by(|a, b| (&a.model, a.version).cmp(&(&b.model, b.version)));
    found
}

fn written_by(host: &impl Files, version: &Path) -> Option<String> {
    let head = host
        .read_at_most(&version.join("saved_model.pb"), HEAD_BYTES)
        .ok()?;
    saved_model::written_by(&head)
}

/// What to warn of when a version of `writers` was written by a TensorFlow newer than
/// `spec`'s, which may not load it (the newest such writer).
pub fn newer_than(spec: &ResolvedSpec, writers: &[Writer]) -> Option<String> {
    let runs = saved_model::minor_of(&spec.tensorflow)?;
    let writer = writers
        .iter()
        .filter_map(|writer| Some((saved_model::minor_of(&writer.tensorflow)?, writer)))
        .filter(|(minor, _)| *minor > runs)
        .max_by_key(|(minor, _)| *minor)?
        .1;
    Some(format!(
        "`{}` version {} was written by TensorFlow {}, newer than `{}` (TensorFlow {}), which may not load it",
        writer.model, writer.version, writer.tensorflow, spec.name, spec.tensorflow
    ))
}

/// The line (its index in `specs`) that serves what `writers` wrote: the oldest that loads the newest of them (the
/// first line when none says), with a note when the model chose it; `--spec`'s line, with a
/// warning when it is older than a writer. Refused when every line is older.
pub fn choose(
    specs: &ServingSpecs,
    writers: &[Writer],
) -> Result<(usize, Option<Notice>), InputError> {
    let newest = writers
        .iter()
        .filter_map(|writer| Some((saved_model::minor_of(&writer.tensorflow)?, writer)))
        .max_by_key(|(minor, _)| *minor);
    let Some((minor, writer)) = newest else {
        return Ok((0, None));
    };
    if specs.lines[0].named() {
        return Ok((
            0,
            newer_than(&specs.lines[0].cpu, writers).map(Notice::warning),
        ));
    }
    let said = |line: &ServingLine| {
        format!(
            "`{}` version {} was written by TensorFlow {}: served by the TensorFlow {} line (`{}`, `{}`)",
            writer.model,
            writer.version,
            writer.tensorflow,
            line.cpu.tensorflow,
            line.cpu.name,
            line.gpu.name
        )
    };
    let tensorflows: Vec<(u32, u32)> = specs.lines.iter().map(ServingLine::tensorflow).collect();
    match saved_model::line_for(minor, &tensorflows) {
        Some(0) => Ok((0, None)),
        Some(index) => Ok((index, Some(Notice::note(said(&specs.lines[index]))))),
        None => {
            let newest_line = specs.lines.last().expect("two built-in lines");
            Err(InputError::new(
                format!(
                    "`{}` version {} was written by TensorFlow {}, newer than every serving image tfimg builds (the newest runs TensorFlow {}), which would not load it",
                    writer.model, writer.version, writer.tensorflow, newest_line.cpu.tensorflow
                ),
                format!(
                    "save the model with TensorFlow {} or older, or name a serving spec of your own with `--spec` (it is then served as you say)",
                    newest_line.cpu.tensorflow
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests;
