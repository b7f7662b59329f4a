//! What `tfimg sweep` shows: the dry run's trials and slots, each trial's start and end as
//! it happens (a live summary on a terminal, plain lines otherwise, JSON events with
//! `--json`), the results table with the best trial at the end, and `status`/`results`.

use std::process::ExitCode;

use super::Planned;
use crate::app::settings::Settings;
use crate::app::sweep::unwatched::{self, Looked, Seen, Unwatched};
use crate::app::sweep::{folder, Counts, Finished, Note, SweepRun};
use crate::cli::{SweepResultsArgs, SweepStatusArgs};
use crate::host::Host;
use crate::output;
use crate::output::progress::Reporter;
use crate::sweep::journal::StopReason;
use crate::sweep::results::{duration_text, number_text, Results, RowStatus};
use crate::sweep::schedule::{Outcome, Slot};
use crate::sweep::{Sweep, Trial};

/// One note of a running sweep, as the user sees it.
pub(super) fn note(reporter: &Reporter, sweep: &Sweep, note: &Note) {
    match note {
        Note::Started {
            trial,
            attempt,
            gpus,
            container,
        } => {
            let on = if gpus.is_empty() {
                "the CPU".to_string()
            } else {
                format!("GPU {}", gpus.join(","))
            };
            let again = if *attempt > 1 {
                format!(" (attempt {attempt})")
            } else {
                String::new()
            };
            reporter.status(&format!("{trial} started on {on}{again}"));
            reporter.event(
                "trial_started",
                serde_json::json!({
                    "trial": trial, "attempt": attempt, "gpus": gpus, "container": container,
                }),
            );
        }
        Note::Ended {
            trial,
            attempt,
            outcome,
            exit_code,
            seconds,
            metric,
            away,
        } => {
            reporter.status(&ended_line(
                trial,
                *attempt,
                *outcome,
                *exit_code,
                *seconds,
                metric.as_ref(),
                *away,
                sweep,
            ));
            reporter.event(
                "trial_ended",
                serde_json::json!({
                    "trial": trial, "attempt": attempt, "outcome": outcome_text(*outcome),
                    "exit_code": exit_code, "seconds": seconds,
                    "metric": metric.as_ref().zip(sweep.objective.as_ref()).map(|((_, value), objective)| {
                        serde_json::json!({&objective.metric: value, "use": objective.pick.as_str()})
                    }),
                }),
            );
        }
        Note::Progress(counts) => {
            reporter.live(&progress_line(counts));
            reporter.event("progress", counts_json(counts));
        }
        Note::Resumed {
            done,
            failed,
            reattached,
        } => {
            reporter.status(&format!(
                "going on with sweep `{}`: {done} trial(s) done, {failed} failed for good, {reattached} still running",
                sweep.name
            ));
            reporter.event(
                "resumed",
                serde_json::json!({"done": done, "failed": failed, "reattached": reattached}),
            );
        }
        Note::Said(message) => {
            reporter.status(&format!("note: {message}"));
            reporter.event("note", serde_json::json!({"message": message}));
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn ended_line(
    trial: &str,
    attempt: u32,
    outcome: Outcome,
    exit_code: Option<i64>,
    seconds: f64,
    metric: Option<&(String, f64)>,
    away: bool,
    sweep: &Sweep,
) -> String {
    let exit = exit_code.map_or("its container vanished".to_string(), |code| {
        format!("exit {code}")
    });
    let time = duration_text((seconds * 1000.0) as u64);
    let metric = metric.map_or(String::new(), |(name, value)| {
        format!(": {name} {}", number_text(*value))
    });
    let away = if away { " while tfimg was away" } else { "" };
    match outcome {
        Outcome::Done if attempt > 1 => {
            format!("{trial} done (attempt {attempt}) in {time}{away}{metric}")
        }
        Outcome::Done => format!("{trial} done in {time}{away}{metric}"),
        Outcome::Retry { retry } => format!(
            "{trial} failed ({exit}) after {time}{away}; queued again (retry {retry} of {})",
            sweep.retries
        ),
        Outcome::Failed => format!(
            "{trial} failed ({exit}) after {time}{away}: see `{}`",
            sweep
                .trial_dir(trial)
                .join(crate::sweep::trials::STDERR_FILE)
                .display()
        ),
        Outcome::Stopped => format!("{trial} stopped after {time}{away}"),
    }
}

fn outcome_text(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Done => "done",
        Outcome::Retry { .. } => "retry",
        Outcome::Failed => "failed",
        Outcome::Stopped => "stopped",
    }
}

/// `12/27 done · 3 running · 12 queued · 0 failed · ETA 1m20s · t013 0.9100`.
fn progress_line(counts: &Counts) -> String {
    let mut line = format!(
        "{}/{} done · {} running · {} queued · {} failed",
        counts.done, counts.total, counts.running, counts.queued, counts.failed
    );
    if let Some(eta) = counts.eta_seconds {
        line.push_str(&format!(" · ETA {}", duration_text(eta * 1000)));
    }
    for (trial, metric) in &counts.running_metrics {
        line.push_str(&format!(
            " · {trial} {}",
            metric.map_or("…".to_string(), number_text)
        ));
    }
    line
}

fn counts_json(counts: &Counts) -> serde_json::Value {
    serde_json::json!({
        "total": counts.total, "queued": counts.queued, "running": counts.running,
        "done": counts.done, "failed": counts.failed, "eta_seconds": counts.eta_seconds,
    })
}

/// The end of a sweep: its results table and best trial; exit 1 when trials failed.
pub(super) fn finished(
    host: &impl Host,
    reporter: &Reporter,
    run: &SweepRun,
    finished: &Finished,
) -> anyhow::Result<ExitCode> {
    let found = folder::read(host, &run.sweep.output)?;
    let results = found.results(None);
    if reporter.is_json() {
        let mut value = results.to_json();
        value["reason"] = serde_json::to_value(finished.reason)?;
        value["counts"] = counts_json(&finished.counts);
        reporter.result(value);
    } else {
        print_results(&results)?;
    }
    let counts = &finished.counts;
    eprintln!(
        "sweep `{}`: {} of {} trials done, {} failed; results in `{}`",
        run.sweep.name,
        counts.done,
        counts.total,
        counts.failed,
        run.sweep.output.display()
    );
    match finished.reason {
        StopReason::MaxFailed => {
            eprintln!("error: the sweep stopped early: `max_failed` trials failed");
            Ok(ExitCode::from(output::exit::EXIT_BAD_INPUT))
        }
        _ if counts.failed > 0 => Ok(ExitCode::from(output::exit::EXIT_BAD_INPUT)),
        _ => Ok(ExitCode::SUCCESS),
    }
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

/// The sweep the user named, read for `status` and `results`: when no tfimg runs it, what
/// the engine says of the trials no tfimg watched.
pub(super) fn look(settings: &Settings, host: &impl Host, target: &str) -> anyhow::Result<Looked> {
    let dir = super::sweep_dir(settings, host, target)?;
    let mut looked = unwatched::look(host, &dir)?;
    if looked.asks_engine() {
        super::super::runtime()?.block_on(async {
            let engine = settings.connect().await;
            looked
                .learn(
                    engine
                        .as_ref()
                        .map_err(|error| anyhow::anyhow!("{error:#}")),
                    host,
                )
                .await;
        });
    }
    Ok(looked)
}

/// `tfimg sweep results SWEEP [--json|--csv]`.
pub(super) fn results(
    args: &SweepResultsArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let looked = look(settings, host, &args.target.sweep)?;
    for line in unwatched_lines(&looked) {
        eprintln!("note: {line}");
    }
    let results = looked.found.results(Some(crate::app::sweep::now_ms(host)));
    if args.json {
        output::print_json(&results.to_json())?;
    } else if args.csv {
        output::print_text(&results.to_csv())?;
    } else {
        print_results(&results)?;
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
    let mut results = found.results(Some(crate::app::sweep::now_ms(host)));
    results.rows.sort_by(|a, b| a.trial.cmp(&b.trial));
    let mut tally = std::collections::BTreeMap::<String, usize>::new();
    for row in &results.rows {
        let word = row.status.to_string();
        *tally
            .entry(word.split(' ').next().unwrap_or_default().to_string())
            .or_default() += 1;
    }
    if args.json {
        let mut value = results.to_json();
        value["sweep"] = serde_json::json!(found.sweep.name);
        value["running"] = serde_json::json!(looked.running);
        value["tally"] = serde_json::json!(tally);
        value["unwatched"] = looked
            .unwatched
            .iter()
            .map(unwatched_json)
            .collect::<serde_json::Value>();
        value["unreached"] = serde_json::json!(looked.unreached);
        output::print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    let header = results.header();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    output::print_table(&header, &results.table_rows())?;
    let tally: Vec<String> = tally
        .iter()
        .map(|(word, count)| format!("{count} {word}"))
        .collect();
    let state = match looked.running {
        true => "its tfimg is running it",
        false => "no tfimg is running it",
    };
    let mut text = format!(
        "\nsweep `{}` in `{}`: {}; {state}\n",
        found.sweep.name,
        super::shown(settings, &found.dir),
        tally.join(", "),
    );
    let unfinished = results
        .rows
        .iter()
        .any(|row| !matches!(row.status, RowStatus::Done { .. } | RowStatus::Failed));
    let lines = unwatched_lines(&looked);
    if !looked.running && lines.is_empty() && unfinished {
        text.push_str("`tfimg sweep FILE` goes on with it\n");
    }
    for line in lines {
        text.push_str(&line);
        text.push('\n');
    }
    output::print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// What `status` and `results` say of the trials no tfimg watched: those whose
/// containers run on, those that ended (shown as they ended, not recorded yet), and why
/// the engine could not say.
pub(super) fn unwatched_lines(looked: &Looked) -> Vec<String> {
    let name = &looked.found.sweep.name;
    let mut lines = Vec::new();
    let ended: Vec<String> = looked
        .unwatched
        .iter()
        .filter_map(|unwatched| match unwatched.seen {
            Seen::Running => None,
            Seen::Ended { code, .. } => Some(format!("{} (exit {code})", unwatched.trial)),
            Seen::NeverStarted => Some(format!("{} (never started)", unwatched.trial)),
            Seen::Gone => Some(format!("{} (container gone)", unwatched.trial)),
        })
        .collect();
    if !ended.is_empty() {
        lines.push(format!(
            "ended while no tfimg watched: {}; shown as they ended, recorded by `tfimg sweep FILE` (which goes on with the sweep) or `tfimg sweep stop {name}`",
            ended.join(", ")
        ));
    }
    let running: Vec<&str> = looked
        .unwatched
        .iter()
        .filter(|unwatched| unwatched.seen == Seen::Running)
        .map(|unwatched| unwatched.trial.as_str())
        .collect();
    if !running.is_empty() {
        lines.push(format!(
            "running while no tfimg watches them: {}; `tfimg sweep FILE` watches them again, `tfimg sweep stop {name}` stops them",
            running.join(", ")
        ));
    }
    if let Some(error) = &looked.unreached {
        lines.push(format!(
            "the engine could not say how the trials no tfimg watched are doing ({error}); shown as the journal has them"
        ));
    }
    lines
}

fn unwatched_json(unwatched: &Unwatched) -> serde_json::Value {
    let (state, exit_code) = match unwatched.seen {
        Seen::Running => ("running", None),
        Seen::Ended { code, .. } => ("exited", Some(code)),
        Seen::NeverStarted => ("created", None),
        Seen::Gone => ("gone", None),
    };
    serde_json::json!({
        "trial": unwatched.trial,
        "attempt": unwatched.attempt,
        "container": unwatched.container,
        "state": state,
        "exit_code": exit_code,
        "adopted": unwatched.adopted,
    })
}

/// The trials (id, each param, the command) and the slots (slot → GPU ids).
pub(super) fn print_dry_run(sweep: &Sweep, trials: &[Trial], slots: &[Slot]) -> anyhow::Result<()> {
    let mut header = vec!["TRIAL".to_string()];
    header.extend(
        sweep
            .param_names()
            .iter()
            .map(|name| name.to_ascii_uppercase()),
    );
    header.push("COMMAND".to_string());
    let rows: Vec<Vec<String>> = trials
        .iter()
        .map(|trial| {
            let mut row = vec![trial.id.clone()];
            row.extend(trial.params.iter().map(|(_, value)| value.text()));
            row.push(trial.command_line());
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    output::print_table(&header, &rows)?;
    output::print_text("\n")?;
    let rows: Vec<Vec<String>> = slots
        .iter()
        .map(|slot| vec![(slot.index + 1).to_string(), slot.describe()])
        .collect();
    output::print_table(&["SLOT", "GPUS"], &rows)?;
    Ok(())
}

pub(super) fn dry_run_json(planned: &Planned, trials: &[Trial]) -> serde_json::Value {
    let sweep = &planned.sweep;
    let trials: Vec<serde_json::Value> = trials
        .iter()
        .map(|trial| {
            let params: serde_json::Map<String, serde_json::Value> = trial
                .params
                .iter()
                .map(|(name, value)| (name.clone(), value.to_json()))
                .collect();
            serde_json::json!({"trial": trial.id, "params": params, "command": trial.command})
        })
        .collect();
    let slots: Vec<serde_json::Value> = planned
        .slots
        .iter()
        .map(|slot| serde_json::json!({"slot": slot.index + 1, "gpus": slot.gpus}))
        .collect();
    serde_json::json!({
        "sweep": sweep.name,
        "image": sweep.source.describe(),
        "search": sweep.search.describe(),
        "output": sweep.output,
        "objective": sweep.objective,
        "trials": trials,
        "slots": slots,
    })
}
