//! `tfimg list`: every buildable spec with its stack. A broken local spec is reported at
//! the end and makes the exit code 1, but never hides the others.

use std::process::ExitCode;

use serde::Serialize;

use crate::cli::ListArgs;
use crate::host::Host;
use crate::output::exit::EXIT_BAD_INPUT;
use crate::spec::support::{spec_support, SpecSupport};
use crate::spec::{self, ResolvedSpec, SpecError};

#[derive(Debug, Serialize)]
struct ListEntry {
    name: String,
    tensorflow: String,
    python: String,
    gpu: bool,
    cuda: Option<String>,
    cudnn: Option<String>,
    cuda_provider: Option<String>,
    service: String,
    base: String,
    source: String,
    image: String,
    description: String,
    /// Whether a part (base release, Python, TensorFlow line) is past its support.
    past_support: bool,
    support: SpecSupport,
}

pub fn run(args: &ListArgs, host: &impl Host) -> anyhow::Result<ExitCode> {
    let catalog = super::catalog();
    let today = host.today()?;
    let mut entries = Vec::new();
    let mut problems: Vec<SpecError> = catalog.broken().cloned().collect();
    for document in catalog.documents() {
        if document.file.is_abstract == Some(true) {
            continue;
        }
        match spec::resolve(&catalog, &document.name) {
            Ok(resolved) => {
                let support = spec_support(&catalog, &resolved, today);
                entries.push(entry(resolved, support));
            }
            Err(error) => problems.push(error),
        }
    }
    if args.json {
        crate::output::print_json(&entries)?;
    } else {
        print_table(&entries)?;
    }
    if !args.json && entries.iter().any(|entry| entry.past_support) {
        eprintln!(
            "note: `ended`: a part of the spec (base release, Python or TensorFlow line) is past its support as of {today}; `tfimg show SPEC` says which and what to move to"
        );
    }
    for problem in &problems {
        eprintln!("error: {problem}");
        eprintln!("hint: {}", problem.hint);
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BAD_INPUT)
    })
}

fn entry(resolved: ResolvedSpec, support: SpecSupport) -> ListEntry {
    ListEntry {
        past_support: support.is_past(),
        support,
        tensorflow: resolved.tensorflow.clone(),
        python: resolved.python.clone(),
        gpu: resolved.is_gpu(),
        cuda: resolved.gpu.as_ref().map(|gpu| gpu.cuda.clone()),
        cudnn: resolved.gpu.as_ref().map(|gpu| gpu.cudnn.clone()),
        cuda_provider: resolved
            .gpu
            .as_ref()
            .map(|gpu| gpu.provider.as_str().to_string()),
        service: resolved.service.as_str().to_string(),
        image: resolved.image_reference(),
        base: resolved.base,
        source: resolved.source,
        description: resolved.description,
        name: resolved.name,
    }
}

fn print_table(entries: &[ListEntry]) -> std::io::Result<()> {
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|entry| {
            let dash = || "-".to_string();
            vec![
                entry.name.clone(),
                entry.tensorflow.clone(),
                entry.python.clone(),
                entry.cuda.clone().unwrap_or_else(dash),
                entry.cudnn.clone().unwrap_or_else(dash),
                entry.service.clone(),
                support_cell(&entry.support).to_string(),
                entry.source.clone(),
                entry.description.clone(),
            ]
        })
        .collect();
    crate::output::print_table(
        &[
            "NAME",
            "TENSORFLOW",
            "PYTHON",
            "CUDA",
            "CUDNN",
            "SERVICE",
            "SUPPORT",
            "SOURCE",
            "DESCRIPTION",
        ],
        &rows,
    )
}

/// `ok`, `ended` (some part past its support), or `-` (no part tfimg has dates for).
fn support_cell(support: &SpecSupport) -> &'static str {
    if support.parts.is_empty() {
        "-"
    } else if support.is_past() {
        "ended"
    } else {
        "ok"
    }
}
