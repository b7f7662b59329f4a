//! `tfimg sweep report SWEEP [-o FILE]`: the sweep's folder read back (its file's copy,
//! journal and each trial's metrics, and what the engine says of trials no tfimg
//! watched, as `status` reads it) and drawn as one self-contained HTML page, written
//! whole (`<sweep dir>/report.html` unless `-o`).

use std::process::ExitCode;

use crate::app::settings::Settings;
use crate::cli::SweepReportArgs;
use crate::host::Host;
use crate::input::InputError;
use crate::sweep::report;

/// The report's file name in the sweep's folder.
const REPORT_FILE: &str = "report.html";

pub(super) fn run(
    args: &SweepReportArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let looked = super::show::look(settings, host, &args.target.sweep)?;
    for line in super::show::unwatched_lines(&looked) {
        eprintln!("note: {line}");
    }
    let sweep = &looked.found;
    let now_ms = crate::app::sweep::now_ms(host);
    let html = report::render(
        &sweep.sweep.name,
        &sweep.results(Some(now_ms)),
        &sweep.summaries(),
        &report::utc_text(now_ms),
    );
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| sweep.dir.join(REPORT_FILE));
    host.write_file(&path, html.as_bytes()).map_err(|error| {
        InputError::new(
            format!("cannot write the report `{}`: {error}", path.display()),
            "give `-o` a file in a folder you can write",
        )
    })?;
    // `-o` as the user gave it; the default as it reads from here.
    let written = match &args.output {
        Some(output) => output.display().to_string(),
        None => super::shown(settings, &path),
    };
    eprintln!("report written to `{written}`");
    Ok(ExitCode::SUCCESS)
}
