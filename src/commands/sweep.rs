//! `tfimg sweep FILE [--dry-run] [-d] [--k8s]` and `tfimg sweep status|results|stop|report
//! SWEEP`: the flags made into `app::sweep`'s options, its story told there (the file
//! checked and its spec resolved before anything else, the slots planned, the image built
//! once, the trials run, here or in the background), and what it returns printed
//! (`show`): the dry run's trials and slots, the results table with the best trial.

use std::process::ExitCode;

use crate::app;
use crate::app::settings::Settings;
use crate::app::sweep::folder::{self, shown};
use crate::app::sweep::{K8sRequest, StartOptions, Started, Stopped};
use crate::cli::{Progress, SweepArgs, SweepCommand, SweepReportArgs, SweepRunArgs, SweepTarget};
use crate::host::Host;
use crate::output::sinks::Sinks;
use crate::output::ui::Terminal;

mod show;

pub fn run(args: &SweepArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    match &args.command {
        Some(SweepCommand::Status(status)) => show::status(status, settings, host),
        Some(SweepCommand::Results(results)) => show::results(results, settings, host),
        Some(SweepCommand::Stop(target)) => stop(target, settings, host),
        Some(SweepCommand::Report(args)) => report(args, settings, host),
        None => file(&args.run, settings, host),
    }
}

fn file(args: &SweepRunArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let file = args
        .file
        .clone()
        .expect("clap requires FILE without a subcommand");
    if args.k8s {
        let request = K8sRequest {
            file,
            folder: args.output.clone().expect("clap: `--k8s` requires `-o`"),
            registry: args.registry.clone(),
            volume_size: args.volume_size.clone(),
        };
        app::sweep::k8s_export(host, &super::catalog(settings, host), &request, &Terminal)?;
        return Ok(ExitCode::SUCCESS);
    }
    let loaded = app::sweep::load(host, &super::catalog(settings, host), &file)?;
    for warning in &loaded.warnings() {
        crate::output::notice(warning);
    }
    let connect = async || settings.connect().await;
    if args.dry_run {
        let planned = super::runtime()?.block_on(app::sweep::dry_run(
            connect,
            host,
            loaded,
            Sinks::plain(),
        ))?;
        return show::dry_run(&planned, args.json);
    }
    let network = settings.network(&args.network.choices(), host)?;
    let options = StartOptions {
        file,
        detach: args.detach,
        resume: args.resume,
        progress: if args.json {
            Progress::Json
        } else {
            Progress::Auto
        },
        argv: settings.argv().to_vec(),
    };
    let started = super::runtime_handling_interrupts()?.block_on(app::sweep::start(
        connect, host, &options, loaded, &network, &Terminal,
    ))?;
    match started {
        Started::Detached => Ok(ExitCode::SUCCESS),
        Started::Ended(ended) => show::ended(&ended),
    }
}

/// `tfimg sweep stop SWEEP`.
fn stop(target: &SweepTarget, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let current = settings.current_dir()?;
    let dir = folder::locate(host, &current, &target.sweep)?;
    let stopped = super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        app::sweep::stop(session, &dir).await
    })?;
    match stopped {
        Stopped::ByItsRun => errln!(
            "stopped the sweep in `{}`: its trial containers are removed, its results kept",
            shown(&current, &dir)
        ),
        Stopped::Here { containers, notes } => {
            for note in notes {
                errln!("{note}");
            }
            errln!(
                "no tfimg was running the sweep in `{}`; removed {} trial container(s), results kept",
                shown(&current, &dir),
                containers.len()
            )
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `tfimg sweep report SWEEP [-o FILE]`.
fn report(
    args: &SweepReportArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let current = settings.current_dir()?;
    let connect = async || settings.connect().await;
    let report = app::sweep::report(
        host,
        &current,
        &args.target.sweep,
        args.output.as_deref(),
        connect,
        Sinks::plain(),
    );
    let path = super::runtime()?.block_on(report)?;
    // `-o` as the user gave it; the default as it reads from here.
    let written = match &args.output {
        Some(output) => output.display().to_string(),
        None => shown(&current, &path),
    };
    errln!("report written to `{written}`");
    Ok(ExitCode::SUCCESS)
}
