//! What `tfimg sweep` prints of what `app::sweep` returns (the text and JSON are
//! `sweep::progress`'s): the dry run's trials and slots, the results table with the best
//! trial at the end of a run, and `status`/`results`.

use std::process::ExitCode;

use crate::app;
use crate::app::settings::Settings;
use crate::app::sweep::folder::shown;
use crate::app::sweep::unwatched::Looked;
use crate::app::sweep::{Ended, Planned};
use crate::cli::{SweepResultsArgs, SweepStatusArgs};
use crate::host::Host;
use crate::output::sinks::Sinks;
use crate::output::{self, progress::Report};
use crate::sweep::progress;
use crate::sweep::results::Results;

/// `--dry-run`: the trials (id, each param, the command) and the slots (slot → GPU ids),
/// or all of it as JSON; then what would run where.
pub(super) fn dry_run(planned: &Planned, json: bool) -> anyhow::Result<ExitCode> {
    let (sweep, slots) = (&planned.sweep, &planned.slots);
    let trials = sweep.trials();
    if json {
        output::print_json(&progress::dry_run_json(sweep, &trials, slots))?;
    } else {
        let (header, rows) = progress::trials_table(sweep, &trials);
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        output::print_table(&header, &rows)?;
        output::print_text("\n")?;
        output::print_table(&["SLOT", "GPUS"], &progress::slot_rows(slots))?;
    }
    for line in progress::dry_run_lines(sweep, trials.len(), slots.len()) {
        errln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The end of a sweep: its results table and best trial; exit 1 when trials failed.
pub(super) fn ended(ended: &Ended) -> anyhow::Result<ExitCode> {
    let finished = &ended.finished;
    if ended.reporter.is_json() {
        ended.reporter.result(finished.json(&ended.results));
    } else {
        print_results(&ended.results)?;
    }
    let closing = finished.closing_lines(&ended.sweep, &ended.results);
    for line in closing {
        errln!("{line}");
    }
    ended.objective_warning.iter().for_each(output::notice);
    Ok(match finished.failed() {
        true => ExitCode::from(output::exit::EXIT_BAD_INPUT),
        false => ExitCode::SUCCESS,
    })
}

/// The results table, then the best trial and its command.
fn print_results(results: &Results) -> anyhow::Result<()> {
    let header = results.header();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    output::print_table(&header, &results.table_rows())?;
    if let Some(best) = results.best_line() {
        output::print_text(&format!("\n{best}\n"))?;
    }
    Ok(())
}

/// The sweep the user named, read for `status` and `results`.
fn look(settings: &Settings, host: &impl Host, target: &str) -> anyhow::Result<Looked> {
    let current = settings.current_dir()?;
    let connect = async || settings.connect().await;
    let looked = app::sweep::look_named(host, &current, target, connect, Sinks::plain());
    super::super::runtime()?.block_on(looked)
}

/// `tfimg sweep results SWEEP [--json|--csv]`.
pub(super) fn results(
    args: &SweepResultsArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let looked = look(settings, host, &args.target.sweep)?;
    for line in looked.lines() {
        output::note(line);
    }
    let results = looked.found.results(Some(app::sweep::now_ms(host)));
    if args.json {
        output::print_json(&results.to_json())?;
    } else if args.csv {
        output::print_text(&results.to_csv())?;
    } else {
        print_results(&results)?;
    }
    if let Some(warning) = looked.found.objective_warning(&results) {
        output::notice(&warning);
    }
    Ok(ExitCode::SUCCESS)
}

/// `tfimg sweep status SWEEP [--json]`: whether a tfimg runs it, each trial, and what
/// became of the trials no tfimg watched.
pub(super) fn status(
    args: &SweepStatusArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let looked = look(settings, host, &args.target.sweep)?;
    let found = &looked.found;
    let mut results = found.results(Some(app::sweep::now_ms(host)));
    results.rows.sort_by(|a, b| a.trial.cmp(&b.trial));
    let name = &found.sweep.name;
    let state = (looked.running, found.unproposed());
    if args.json {
        let unreached = looked.unreached.as_deref();
        let value = progress::status_json(&results, name, state, &looked.unwatched, unreached);
        output::print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    let header = results.header();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    output::print_table(&header, &results.table_rows())?;
    let dir = shown(&settings.current_dir().unwrap_or_default(), &found.dir);
    let text = progress::status_text(&results, name, &dir, state, &looked.lines());
    output::print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}
