//! `tfimg list`: every buildable spec with its stack. A broken local spec is reported at
//! the end and makes the exit code 1, but never hides the others.

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::cli::ListArgs;
use crate::host::Host;
use crate::output::exit::EXIT_BAD_INPUT;
use crate::spec::listing::{self, ListEntry};

pub fn run(args: &ListArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let catalog = super::catalog(settings, host);
    let today = host.today()?;
    let (entries, problems) = listing::list(&catalog, today);
    if args.json {
        crate::output::print_json(&entries)?;
    } else {
        print_table(&entries)?;
    }
    if !args.json && entries.iter().any(|entry| entry.past_support) {
        crate::output::note(format!(
            "`ended`: a part of the spec (base release, Python or TensorFlow line) is past its support as of {today}; `tfimg show SPEC` says which and what to move to"
        ));
    }
    for problem in &problems {
        errln!("error: {problem}");
        errln!("hint: {}", problem.hint);
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BAD_INPUT)
    })
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
                entry.support.cell().to_string(),
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
