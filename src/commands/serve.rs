//! `tfimg serve MODEL_DIR|--model-config FILE [--name N] [--spec S] [--gpus ...] [-p PORT]
//! [--public] [--max-batch ROWS | --enable-batching [--batching-parameters FILE]] [--memory
//! SIZE] [--allow-reload-config] [-d]`: the flags, MODEL_DIR (or the model config, its folders,
//! `--allow-reload-config`, the batching parameters) and the serving line
//! its writer needs checked first (exit 1 before anything exists), then `app::serve`; prints
//! the model's URL and a `curl` line. Detached, that is all; in the foreground it streams the
//! server's log until Ctrl-C, then stops and removes it.

use std::process::ExitCode;

use crate::app::serve::{self, ServeRequest, Serving, ServingSpecs};
use crate::app::settings::Settings;
use crate::cli::ServeArgs;
use crate::host::Host;
use crate::input::paths::lexical;
use crate::input::InputError;
use crate::output::progress::Reporter;
use crate::plan::serving::flags as serving_flags;

pub fn run(args: &ServeArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let request = resolve(args, settings)?;
    let model = serve::check(host, &request)?;
    let specs = ServingSpecs::resolve(host, &super::catalog(settings, host), &request, &model)?;
    let network = settings.network(&args.network.choices(), host)?;
    let reporter = Reporter::new(args.progress);
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::reported(&engine, host, &reporter);
        let serving = serve::serve(session, &request, model, &specs, &network).await?;
        serving.notes.iter().for_each(crate::output::notice);
        print(&serving, args.detach);
        if args.detach {
            return Ok(ExitCode::SUCCESS);
        }
        let after = serve::follow(session, &serving.launched).await?;
        Ok(ExitCode::from(after.exit_code()))
    })
}

/// Every flag checked, and MODEL_DIR (or the model config file) made absolute.
fn resolve(args: &ServeArgs, settings: &Settings) -> Result<ServeRequest, InputError> {
    let port = |text: &Option<String>, flag, api, example| {
        (text.as_deref())
            .map(|text| serving_flags::port(text, flag, api, example))
            .transpose()
    };
    let grpc_port = port(&args.grpc_port, "--grpc-port", "gRPC", 8500)?;
    let port = port(&args.port, "-p", "REST", 8501)?;
    let shown = serving_flags::source(args.model_dir.as_deref(), args.model_config.as_deref())?;
    let cwd = settings.current_dir()?;
    Ok(ServeRequest {
        model_dir: lexical(&cwd.join(shown)),
        shown: shown.to_string(),
        model_config: args.model_config.is_some(),
        name: args.name.clone(),
        spec: args.spec.clone(),
        gpus: args.gpus.clone(),
        share_gpus: args.share_gpus,
        port,
        grpc_port,
        public: args.public,
        detach: args.detach,
        max_batch: args.max_batch,
        memory: args.memory,
        allow_reload_config: args.allow_reload_config,
        model_config_poll: args.model_config_poll,
        grpc_channel_arguments: args.grpc_channel_arguments.clone(),
        batching: (args.enable_batching || args.batching_parameters.is_some())
            .then(|| (args.batching_parameters.clone()).map(|file| (cwd.join(&file), file))),
    })
}

/// The summary on stdout when detached (the foreground's stdout carries the server's log);
/// why there is no request to try, on stderr.
fn print(serving: &Serving, to_stdout: bool) {
    let (lines, note) = serving.summary();
    if let Some(note) = note {
        crate::output::notice(&note);
    }
    for line in lines {
        match to_stdout {
            true => outln!("{line}"),
            false => errln!("{line}"),
        }
    }
}
