//! `gpus:`, `gpus_per_trial`, `trials_per_gpu` and `max_parallel`: the pool of GPUs (or CPU
//! slots) and how it is shared out, each problem at its place.

use serde_yaml::Value;

use super::super::model::SweepFile;
use super::super::read::Places;
use super::super::{GpuPool, Pool, Warning};
use super::{MAX_PARALLEL, MAX_TRIALS_PER_GPU};
use crate::input::source::SpecError;
use crate::input::InputError;
use crate::plan::gpus::{GpuSelection, MAX_GPU_COUNT};

pub(super) fn pool(
    file: &SweepFile,
    places: &Places,
    warnings: &mut Vec<Warning>,
) -> Result<Pool, SpecError> {
    let gpus = gpu_pool(file.gpus.as_ref(), places)?;
    let location = if file.gpus.is_some() {
        places.value("gpus")
    } else {
        places.key("sweep")
    };
    let on_cpu = |field: &str| {
        places.bad(
            field,
            format!("`{field}` is set but the sweep has no `gpus`"),
            "add `gpus: [0, 1]` (or `all`) to run trials on GPUs; on the CPU, `max_parallel` sets how many run at once",
        )
    };
    if gpus == GpuPool::Cpu {
        for (field, set) in [
            ("gpus_per_trial", file.gpus_per_trial.is_some()),
            ("trials_per_gpu", file.trials_per_gpu.is_some()),
        ] {
            if set {
                return Err(on_cpu(field));
            }
        }
    }
    let gpus_per_trial = file.gpus_per_trial.unwrap_or(1);
    let trials_per_gpu = file.trials_per_gpu.unwrap_or(1);
    if gpus_per_trial == 0 || gpus_per_trial > MAX_GPU_COUNT {
        return Err(places.bad(
            "gpus_per_trial",
            format!("`gpus_per_trial: {gpus_per_trial}` is out of range"),
            "give each trial 1 GPU or more; leave `gpus` out to run on the CPU",
        ));
    }
    let sized = match &gpus {
        GpuPool::Devices(devices) => Some(devices.len()),
        GpuPool::Count(count) => Some(*count as usize),
        GpuPool::Cpu | GpuPool::All => None,
    };
    if let Some(size) = sized {
        if gpus_per_trial as usize > size {
            return Err(places.bad(
                "gpus_per_trial",
                format!(
                    "`gpus_per_trial: {gpus_per_trial}` is more than the {size} GPU(s) of the pool"
                ),
                "give the pool more GPUs in `gpus`, or give each trial fewer",
            ));
        }
        let idle = size % gpus_per_trial as usize;
        if idle > 0 {
            warnings.push(Warning {
                location: places.value("gpus_per_trial"),
                message: format!(
                    "{idle} GPU(s) of the pool stay idle: {size} GPUs, {gpus_per_trial} per trial"
                ),
            });
        }
    }
    if trials_per_gpu == 0 || trials_per_gpu > MAX_TRIALS_PER_GPU {
        return Err(places.bad(
            "trials_per_gpu",
            format!(
                "`trials_per_gpu: {trials_per_gpu}` is out of range (1 to {MAX_TRIALS_PER_GPU})"
            ),
            "1 gives each trial its GPUs alone; 2 or more share a GPU between that many trials",
        ));
    }
    if trials_per_gpu > 1 && gpus_per_trial > 1 {
        return Err(places.bad(
            "trials_per_gpu",
            format!("`trials_per_gpu: {trials_per_gpu}` with `gpus_per_trial: {gpus_per_trial}`"),
            "GPUs are shared only between trials of one GPU each: set `gpus_per_trial: 1`, or `trials_per_gpu: 1`",
        ));
    }
    if let Some(parallel) = file.max_parallel {
        if parallel == 0 || parallel > MAX_PARALLEL {
            return Err(places.bad(
                "max_parallel",
                format!("`max_parallel: {parallel}` is out of range (1 to {MAX_PARALLEL})"),
                "say how many trials run at once, such as `max_parallel: 4`",
            ));
        }
    }
    Ok(Pool {
        gpus,
        gpus_per_trial,
        trials_per_gpu,
        max_parallel: file.max_parallel,
        location,
    })
}

fn gpu_pool(value: Option<&Value>, places: &Places) -> Result<GpuPool, SpecError> {
    let hint = "give the number of GPUs trials may use (`gpus: 2`: the least-loaded free ones), list them (`gpus: [0, 1, 2]`, UUIDs too), write `all` (every free GPU), or leave `gpus` out on a CPU host";
    let bad = |message: String| places.bad("gpus", message, hint);
    let text = match value {
        None => return Ok(GpuPool::Cpu),
        Some(Value::String(text)) => text.clone(),
        // A number is how many GPUs, as a team member's `gpus: 1` and `run --gpus 2`
        // (`0`, as `--gpus 0`, is GPU 0); GPU 2 alone is `[2]`.
        Some(Value::Number(number)) => number.to_string(),
        Some(Value::Sequence(items)) => {
            if items.is_empty() {
                return Err(bad("`gpus` is an empty list".into()));
            }
            let mut listed = Vec::new();
            for (index, item) in items.iter().enumerate() {
                match item {
                    Value::Number(number) if number.is_u64() => listed.push(number.to_string()),
                    Value::String(text) => listed.push(text.clone()),
                    _ => {
                        return Err(places.bad(
                            &format!("gpus[{index}]"),
                            "a GPU must be an index or a UUID".into(),
                            hint,
                        ))
                    }
                }
            }
            format!("device={}", listed.join(","))
        }
        Some(_) => {
            return Err(bad(
                "`gpus` must be `all`, `none` or a list of GPU indices and UUIDs".into(),
            ))
        }
    };
    let selection = GpuSelection::parse(&text).map_err(|error: InputError| {
        let message = error.message.replace("`--gpus ", "`gpus: ");
        bad(message)
    })?;
    match selection {
        GpuSelection::None => Ok(GpuPool::Cpu),
        GpuSelection::All => Ok(GpuPool::All),
        GpuSelection::Devices(devices) => Ok(GpuPool::Devices(devices)),
        GpuSelection::Count(count) => Ok(GpuPool::Count(count)),
    }
}
