//! `tfimg serve MODEL_DIR [--name N] [--gpus ...] [-p PORT] [--public] [--max-batch ROWS]
//! [--memory SIZE] [-d]`: the flags
//! and MODEL_DIR checked first (exit 1 before anything exists), then `app::serve` (the
//! serving image built when missing, the model server started by the launcher and waited
//! for); it prints the model's URL and a `curl` line. Detached, that is all; in the
//! foreground it streams the server's log until Ctrl-C, then stops and removes it.

use std::process::ExitCode;

use crate::app::serve::{self, ServeRequest, Serving, ServingSpecs};
use crate::app::settings::Settings;
use crate::cli::ServeArgs;
use crate::host::Host;
use crate::input::paths::lexical;
use crate::input::InputError;
use crate::output::progress::Reporter;
use crate::output::ui::Terminal;
use crate::plan::gpus::GpuSelection;
use crate::plan::serving::parse_max_batch;

pub fn run(args: &ServeArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let request = resolve(args, settings)?;
    let model = serve::check_model(host, &request)?;
    let specs = ServingSpecs::resolve(host, &super::catalog(settings, host))?;
    let network = settings.network(&args.network.choices(), host)?;
    let reporter = Reporter::new(args.progress);
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let serving =
            serve::serve(&engine, host, &request, model, &specs, &network, &reporter).await?;
        for note in &serving.notes {
            eprintln!("{note}");
        }
        print(&serving, args.detach);
        if args.detach {
            return Ok(ExitCode::SUCCESS);
        }
        let after = serve::follow(&engine, host, &serving.launched, &Terminal).await?;
        Ok(ExitCode::from(after.exit_code()))
    })
}

/// Every flag checked, and MODEL_DIR made absolute.
fn resolve(args: &ServeArgs, settings: &Settings) -> Result<ServeRequest, InputError> {
    let gpus = args.gpus.as_deref().map(GpuSelection::parse).transpose()?;
    let port = |text: &Option<String>, flag: &str, api: &str, example: u16| {
        (text.as_deref())
            .map(|text| {
                text.parse::<u16>().ok().filter(|port| *port > 0).ok_or_else(|| {
                    InputError::new(
                        format!("`{flag} {text}` is not a port"),
                        format!("give the host port for the {api} API, from 1 to 65535, such as `{flag} {example}`"),
                    )
                })
            })
            .transpose()
    };
    let grpc_port = port(&args.grpc_port, "--grpc-port", "gRPC", 8500)?;
    let port = port(&args.port, "-p", "REST", 8501)?;
    let max_batch = args
        .max_batch
        .as_deref()
        .map(|text| {
            parse_max_batch(text).ok_or_else(|| {
                InputError::new(
                    format!("`--max-batch {text}` is not a number of rows"),
                    "give a whole number of rows from 1 (every request alone), such as `--max-batch 64`",
                )
            })
        })
        .transpose()?;
    let memory = args
        .memory
        .as_deref()
        .map(|text| crate::plan::parse_size(text, "--memory"))
        .transpose()?;
    if args.model_dir.is_empty() {
        return Err(InputError::new(
            "MODEL_DIR is empty",
            "give the folder that holds the model's numbered versions (`MODEL_DIR/1/saved_model.pb`)",
        ));
    }
    let current_dir = settings.current_dir()?;
    Ok(ServeRequest {
        model_dir: lexical(&current_dir.join(&args.model_dir)),
        shown: args.model_dir.clone(),
        name: args.name.clone(),
        gpus,
        port,
        grpc_port,
        public: args.public,
        detach: args.detach,
        max_batch,
        memory,
    })
}

/// The summary on stdout when detached (the foreground's stdout carries the server's log);
/// why there is no request to try, on stderr.
fn print(serving: &Serving, to_stdout: bool) {
    let (lines, note) = serving.summary();
    if let Some(note) = note {
        eprintln!("{note}");
    }
    for line in lines {
        match to_stdout {
            true => println!("{line}"),
            false => eprintln!("{line}"),
        }
    }
}
