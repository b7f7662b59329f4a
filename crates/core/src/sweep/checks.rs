//! The checks of a sweep file as written, each error at its place with a hint: the name,
//! the image, the command's placeholders against the params, mounts and environment,
//! the GPU pool and how it is shared, limits, retries, the objective and the output.
//! Everything is refused here, before the caller builds, creates or writes anything.

use std::path::Path;

use serde_yaml::Value;

use crate::input::paths::lexical;
use crate::input::source::SpecError;
use crate::input::InputError;
use crate::labels;
use crate::plan::{self, mounts};

use super::early_stop::{Cutoff, EarlyStop, Rule};
use super::model::{CutoffFile, ModeFile, RuleFile, SweepFile};
use super::read::Places;
use super::search::{self, shortened, Search};
use super::template::CommandTemplate;
use super::{ImageSource, Mode, Objective, Pick, Sweep, TrialLimits, Warning, TRIAL_DIR};
use pool::pool;

mod pool;

/// Sweep names prefix trial container names (`<sweep>-t001`) and Kubernetes objects.
pub const MAX_SWEEP_NAME: usize = 40;

/// More than this is a loop, not a retry.
const MAX_RETRIES: u32 = 100;

/// A GPU shared by more trials than this is a typo.
const MAX_TRIALS_PER_GPU: u32 = 64;

/// More trials at once than this is a typo (and more containers than one host runs).
const MAX_PARALLEL: u32 = 1000;

/// A workdir to check mounts against before the spec is resolved: any valid workdir gives
/// the same verdict (workdirs are never system folders).
const PLACEHOLDER_WORKDIR: &str = "/tf";

pub(super) fn sweep(file: &SweepFile, places: &Places, folder: &Path) -> Result<Sweep, SpecError> {
    name(&file.sweep, places)?;
    let source = source(file, places)?;
    let sections = search::Sections {
        params: file.params.as_ref(),
        random: file.random.as_ref(),
        tpe: file.tpe.as_ref(),
        trials: file.trials.as_ref(),
    };
    let search = search::read(sections, places)?;
    let mut warnings = Vec::new();
    let command = command(&file.command, &search, places, &mut warnings)?;
    mount_texts(&file.mounts, folder, places)?;
    let env = env(&file.env, places)?;
    let pool = pool(file, places, &mut warnings)?;
    let limits = limits(file, places)?;
    let retries = file.retries.unwrap_or(0);
    if retries > MAX_RETRIES {
        return Err(places.bad(
            "retries",
            format!("`retries: {retries}` is more than {MAX_RETRIES}"),
            "a trial that failed a few times will fail again: use a few retries, such as `retries: 1`",
        ));
    }
    if file.max_failed == Some(0) {
        return Err(places.bad(
            "max_failed",
            "`max_failed: 0` would stop the sweep before any trial fails".into(),
            "`max_failed: 1` stops at the first trial that fails for good; leave it out to run every trial",
        ));
    }
    random_repeats(&search, places, &mut warnings);
    let objective = objective(file, places)?;
    if search.learns() && objective.is_none() {
        return Err(places.bad_key(
            "tpe",
            "`tpe` needs an `objective`: it proposes each trial from how the ended ones scored".into(),
            "add the metric the trials report, such as `objective: {metric: val_accuracy, mode: max}`",
        ));
    }
    let early_stop = early_stop(file, objective.as_ref(), places)?;
    let timeout = timeout(file, places)?;
    Ok(Sweep {
        name: file.sweep.clone(),
        folder: folder.to_path_buf(),
        source,
        command,
        mounts: file.mounts.clone(),
        mount_locations: (0..file.mounts.len())
            .map(|index| places.value(&format!("mounts[{index}]")))
            .collect(),
        env,
        search,
        pool,
        limits,
        retries,
        max_failed: file.max_failed,
        objective,
        timeout,
        early_stop,
        output: output(file, places, folder)?,
        warnings,
    })
}

/// Whether `name` is a sweep's name as `name` checks it (what it holds, its end, its length).
pub fn is_sweep_name(name: &str) -> bool {
    sweep_name_characters(name) && !name.ends_with('-') && name.len() <= MAX_SWEEP_NAME
}

/// Whether `name` is made of what a sweep's name may hold (lowercase letters, digits and
/// `-`, starting with a letter).
fn sweep_name_characters(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn name(name: &str, places: &Places) -> Result<(), SpecError> {
    let hint = "use lowercase letters, digits and `-`, starting with a letter and ending with a letter or digit (it names the trials' containers)";
    if !sweep_name_characters(name) {
        return Err(places.bad(
            "sweep",
            format!("sweep name `{}` is not valid", shortened(name)),
            hint,
        ));
    }
    if name.ends_with('-') {
        return Err(places.bad("sweep", format!("sweep name `{name}` ends with `-`"), hint));
    }
    if name.len() > MAX_SWEEP_NAME {
        return Err(places.bad(
            "sweep",
            format!("sweep name `{}` is too long ({} characters, at most {MAX_SWEEP_NAME})", shortened(name), name.len()),
            "trial containers are `<sweep>-t001` and Kubernetes names at most 63 characters: use a shorter name",
        ));
    }
    Ok(())
}

fn source(file: &SweepFile, places: &Places) -> Result<ImageSource, SpecError> {
    match (&file.spec, &file.image) {
        (Some(_), Some(_)) => Err(places.bad_key(
            "image",
            "the sweep names both a `spec` and an `image`".into(),
            "keep `spec:` (built once, as `tfimg build` does) or `image:` (used as it is)",
        )),
        (None, None) => Err(places.bad_key(
            "sweep",
            "the sweep names no image to run".into(),
            "add `spec: cpu-headless` (a spec name or file) or `image: REFERENCE`",
        )),
        (Some(spec), None) => {
            if spec.trim().is_empty() {
                return Err(places.bad(
                    "spec",
                    "`spec` is empty".into(),
                    "name a spec from `tfimg list`, or a spec file",
                ));
            }
            Ok(ImageSource::Spec {
                name: spec.clone(),
                location: places.value("spec"),
            })
        }
        (None, Some(image)) => {
            if image.is_empty() || image.contains(|c: char| c.is_whitespace() || c.is_control()) {
                return Err(places.bad(
                    "image",
                    format!("image reference `{}` is not valid", shortened(image)),
                    "write an image reference such as `tfimg/cpu-headless:2.9.3`",
                ));
            }
            Ok(ImageSource::Image {
                reference: image.clone(),
                location: places.value("image"),
            })
        }
    }
}

/// The command: not empty, every `{name}` a param; params it never names are a warning
/// (they reach the trial anyway, as `TFIMG_PARAM_<NAME>` and in `params.json`).
fn command(
    written: &[String],
    search: &Search,
    places: &Places,
    warnings: &mut Vec<Warning>,
) -> Result<CommandTemplate, SpecError> {
    if written.is_empty() {
        return Err(places.bad(
            "command",
            "`command` is empty".into(),
            "write the trial's command with `{name}` for params: `command: [python, train.py, --lr, \"{lr}\"]`",
        ));
    }
    let template = CommandTemplate::parse(written).map_err(|error| {
        places.bad(
            &format!("command[{}]", error.index),
            error.message,
            error.hint,
        )
    })?;
    let names = search.names();
    for (index, used) in template.placeholders() {
        if !names.iter().any(|name| name == used) {
            let hint = match names
                .iter()
                .find(|name| name.eq_ignore_ascii_case(used) || close(name, used))
            {
                Some(near) => format!(
                    "did you mean `{{{near}}}`? The params are {}",
                    quoted(&names)
                ),
                None => format!(
                    "the params are {}; write `{{{{` and `}}}}` for literal braces",
                    quoted(&names)
                ),
            };
            return Err(places.bad(
                &format!("command[{index}]"),
                format!("`{{{used}}}` in the command is not a param"),
                hint,
            ));
        }
    }
    let section = match search {
        Search::Grid(_) => "params",
        Search::Random { .. } => "random",
        Search::Tpe(_) => "tpe",
        Search::List(_) => "trials",
    };
    for name in names.iter().filter(|name| !template.uses(name)) {
        let key = match search {
            Search::List(_) => format!("trials[0].{name}"),
            _ => format!("{section}.{name}"),
        };
        warnings.push(Warning {
            location: places.key(&key),
            message: format!(
                "the command never uses `{{{name}}}`: the trial gets it only as `{}` and in params.json",
                labels::param_variable(name)
            ),
        });
    }
    Ok(template)
}

/// `a`, `b` and `c` quoted for a hint.
fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    quoted.join(", ")
}

/// Whether `a` and `b` differ by one edit (a typo).
fn close(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    match long.len() - short.len() {
        0 => {
            short
                .iter()
                .zip(long.iter())
                .filter(|(x, y)| x != y)
                .count()
                == 1
        }
        1 => (0..long.len()).any(|skip| {
            long.iter()
                .enumerate()
                .filter(|(index, _)| *index != skip)
                .map(|(_, c)| c)
                .eq(short.iter())
        }),
        _ => false,
    }
}

fn mount_texts(texts: &[String], folder: &Path, places: &Places) -> Result<(), SpecError> {
    for (index, text) in texts.iter().enumerate() {
        let path = format!("mounts[{index}]");
        // In the file's words: `./a:b`, not `--mount ./a:b`.
        let mount = mounts::parse(text, folder, PLACEHOLDER_WORKDIR).map_err(|error| {
            places.bad(
                &path,
                error.message.replacen("`--mount ", "`", 1),
                "write mounts as `SRC[:DST][:ro]`, such as `./code:/tf/code:ro` (SRC relative to the sweep file's folder)",
            )
        })?;
        let trial_dir = Path::new(TRIAL_DIR);
        let target = Path::new(&mount.target);
        if target.starts_with(trial_dir) || trial_dir.starts_with(target) {
            return Err(places.bad(
                &path,
                format!("`{text}`: `{}` is where each trial's own folder is mounted", mount.target),
                format!("mount somewhere else; the trial's folder is `{TRIAL_DIR}` (`$TFIMG_TRIAL_DIR`)"),
            ));
        }
    }
    Ok(())
}

fn env(mapping: &serde_yaml::Mapping, places: &Places) -> Result<Vec<(String, String)>, SpecError> {
    let mut env = Vec::new();
    for (key, value) in mapping {
        let name = search::key_text(key);
        let path = format!("env.{name}");
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(places.bad_key(
                &path,
                format!("`{}` is not a valid variable name", shortened(&name)),
                "use letters, digits and `_`, starting with a letter",
            ));
        }
        if name.starts_with(labels::VARIABLE_PREFIX) {
            return Err(places.bad_key(
                &path,
                format!("`{name}`: `TFIMG_*` variables are set by tfimg"),
                format!(
                    "each trial gets its params as `{}<NAME>` already; use another name",
                    labels::PARAM_VARIABLE_PREFIX
                ),
            ));
        }
        let text = match value {
            Value::String(text) if text.contains('\0') => {
                return Err(places.bad(
                    &path,
                    format!("`{path}` holds a NUL character, which no variable can carry"),
                    "remove the `\\0`: the trial would get the value only up to it",
                ))
            }
            Value::String(text) => text.clone(),
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            _ => {
                return Err(places.bad(
                    &path,
                    format!("`{path}` must be a string, number or boolean"),
                    "write `env: {NAME: value}`",
                ))
            }
        };
        env.push((name, text));
    }
    Ok(env)
}

fn limits(file: &SweepFile, places: &Places) -> Result<TrialLimits, SpecError> {
    let value_error = |field: &str| {
        let field = field.to_string();
        move |error: InputError| places.bad(&field, error.message, error.hint)
    };
    let nano_cpus = file
        .cpus_per_trial
        .as_ref()
        .map(|cpus| plan::parse_cpus(&cpus.0, "cpus_per_trial:"))
        .transpose()
        .map_err(value_error("cpus_per_trial"))?;
    let memory = file
        .memory
        .as_ref()
        .map(|memory| plan::parse_size(&memory.0, "memory:"))
        .transpose()
        .map_err(value_error("memory"))?;
    let shm_size = match &file.shm_size {
        Some(size) => plan::parse_size(&size.0, "shm_size:").map_err(value_error("shm_size"))?,
        None => plan::DEFAULT_SHM,
    };
    Ok(TrialLimits {
        nano_cpus,
        memory,
        shm_size,
    })
}

fn objective(file: &SweepFile, places: &Places) -> Result<Option<Objective>, SpecError> {
    let Some(objective) = &file.objective else {
        return Ok(None);
    };
    if !super::metrics::valid_metric_name(&objective.metric) {
        return Err(places.bad(
            "objective.metric",
            format!("metric name `{}` is not valid", shortened(&objective.metric)),
            "name a metric the trials report, such as `val_accuracy` (letters, digits, `_`, `.`, `/`, `-`)",
        ));
    }
    let mode = match objective.mode {
        ModeFile::Max => Mode::Max,
        ModeFile::Min => Mode::Min,
    };
    let pick = match &objective.pick {
        None => Pick::default(),
        Some(Value::String(text)) if text == "last" => Pick::Last,
        Some(Value::String(text)) if text == "best" => Pick::Best,
        Some(other) => {
            let written = match other {
                Value::String(text) => shortened(text),
                other => shortened(serde_yaml::to_string(other).unwrap_or_default().trim()),
            };
            return Err(places.bad(
                "objective.use",
                format!("`objective.use: {written}` is neither `last` nor `best`"),
                "`use: last` (the default) ranks each trial by the last value it reported, the model it saves at its end; `use: best` by its best epoch's, for trials that keep their best checkpoint",
            ));
        }
    };
    Ok(Some(Objective {
        metric: objective.metric.clone(),
        mode,
        pick,
    }))
}

/// A trial's timeout is at least a second and at most a year (beyond, it is a typo).
const MAX_TIMEOUT_SECONDS: u64 = 366 * 24 * 3600;

/// `timeout:`: a duration as humantime reads it (`90s`, `30m`, `2h 30m`, `1day`).
fn timeout(file: &SweepFile, places: &Places) -> Result<Option<std::time::Duration>, SpecError> {
    let Some(written) = &file.timeout else {
        return Ok(None);
    };
    let text = written.0.trim();
    let hint = "write how long one attempt of a trial may run, with its unit, such as `timeout: 30m` or `timeout: 2h 30m`";
    let duration = humantime::parse_duration(text).map_err(|error| {
        places.bad(
            "timeout",
            format!("`timeout: {}` is not a duration: {error}", shortened(text)),
            hint,
        )
    })?;
    if duration.as_secs() < 1 || duration.as_secs() > MAX_TIMEOUT_SECONDS {
        return Err(places.bad(
            "timeout",
            format!("`timeout: {}` is out of range", shortened(text)),
            "a timeout goes from 1s to a year",
        ));
    }
    Ok(Some(duration))
}

/// ASHA's reduction when the file gives none: each rung keeps the top third (W&B's
/// hyperband `eta`; Ray Tune and Optuna default to 4).
pub const DEFAULT_REDUCTION: u32 = 3;

/// ASHA's brackets when the file gives none: ASHA alone (Ray Tune's `ASHAScheduler`).
pub const DEFAULT_BRACKETS: u32 = 1;

/// The rule of `early_stop: {max_epochs: N}` with no `rule:`: ASHA with its defaults
/// (`default_grace`, `DEFAULT_REDUCTION`, one bracket). Chosen from bench row 14's
/// replays (bench/search/replay.py) of two recorded 27-grids, one whose best settings
/// start slowly, each in 12 random orders per seed, as tfimg runs a grid with
/// `early_stop` (bench/search/replay.md): the first rung at a quarter of `max_epochs`,
/// keeping a third, kept the grid's best (within 0.5 pp) in 98% and 100% of the runs at
/// 52% and 48% of the grid's trial-epochs (medians); a first rung at epoch 1 (Ray Tune's
/// default) lost the slow starters in two runs of three; two brackets in turn, the first
/// from epoch 1, in one of three; the median rule kept them at 58–67%.
pub const DEFAULT_RULE: RuleFile = RuleFile::Asha;

/// The grace when the file gives none and `max_epochs` is known: a quarter of a full
/// trial, so a configuration that starts slowly (a higher dropout, a wider layer, a
/// lower learning rate) is not judged on its first epochs; at least 1.
pub fn default_grace(max_epochs: Option<u32>) -> u32 {
    max_epochs.map_or(1, |max| (max / 4).max(1))
}

/// The median rule compares a trial with at least this many others (Ray Tune's
/// `min_samples_required`).
pub const DEFAULT_MIN_TRIALS: u32 = 3;

fn early_stop(
    file: &SweepFile,
    objective: Option<&Objective>,
    places: &Places,
) -> Result<Option<EarlyStop>, SpecError> {
    let Some(written) = &file.early_stop else {
        return Ok(None);
    };
    if objective.is_none() {
        return Err(places.bad_key(
            "early_stop",
            "`early_stop` needs an `objective`: it stops the trials whose objective is losing".into(),
            "add the metric the trials report each epoch, such as `objective: {metric: val_accuracy, mode: max}`",
        ));
    }
    let Some(rule) = written.rule.or(written.max_epochs.map(|_| DEFAULT_RULE)) else {
        return Err(places.bad(
            "early_stop",
            "`early_stop` needs `max_epochs`: the epochs (or steps) a full trial reports".into(),
            "add it, such as `early_stop: {max_epochs: 12}` (the default rule), or name a rule: `early_stop: {rule: median}`",
        ));
    };
    let (own, other, other_key) = match rule {
        RuleFile::Asha => ("asha", "median", "min_trials"),
        RuleFile::Median => ("median", "asha", "reduction"),
    };
    let (misplaced, other_key) = match rule {
        RuleFile::Asha => (written.min_trials.is_some(), other_key),
        RuleFile::Median if written.brackets.is_some() => (true, "brackets"),
        RuleFile::Median if written.cutoff.is_some() => (true, "cutoff"),
        RuleFile::Median => (written.reduction.is_some(), other_key),
    };
    if misplaced {
        return Err(places.bad_key(
            &format!("early_stop.{other_key}"),
            format!("`{other_key}` is a setting of the {other} rule, not of `{own}`"),
            "asha takes `max_epochs`, `grace`, `reduction`, `brackets` and `cutoff`; median takes `grace`, `min_trials` and `max_epochs`",
        ));
    }
    let at_least = |key: &str, value: Option<u32>, least: u32, default: u32, hint: &str| {
        let value = value.unwrap_or(default);
        if value < least {
            return Err(places.bad(
                &format!("early_stop.{key}"),
                format!("`{key}: {value}` is less than {least}"),
                hint.to_string(),
            ));
        }
        Ok(value)
    };
    let grace = at_least(
        "grace",
        written.grace,
        1,
        default_grace(written.max_epochs),
        "`grace` is the first epoch (or step) a trial can be stopped at, such as `grace: 1`",
    )?;
    let max_epochs = match written.max_epochs {
        Some(max) => Some(at_least(
            "max_epochs",
            Some(max),
            1,
            1,
            "`max_epochs` is the epochs (or steps) a full trial reports, such as `max_epochs: 9`",
        )?),
        None if rule == RuleFile::Asha => {
            return Err(places.bad(
                "early_stop",
                "`early_stop: {rule: asha}` needs `max_epochs`: its rungs follow from the epochs (or steps) a full trial reports".into(),
                "add it, such as `early_stop: {rule: asha, max_epochs: 9, grace: 1, reduction: 3}`",
            ))
        }
        None => None,
    };
    if let Some(max) = max_epochs.filter(|max| grace >= *max) {
        return Err(places.bad(
            "early_stop.grace",
            format!(
                "`grace: {grace}` is not below `max_epochs: {max}`: no trial would ever be judged"
            ),
            format!("give a grace below {max}, such as `grace: 1`"),
        ));
    }
    let rule = match rule {
        RuleFile::Asha => {
            let max_epochs = max_epochs.unwrap_or(1);
            let reduction = at_least(
                "reduction",
                written.reduction,
                2,
                DEFAULT_REDUCTION,
                "each rung keeps the top 1/reduction of the trials that reach it: `reduction: 2` keeps half, `reduction: 3` a third",
            )?;
            let cutoff = match written.cutoff {
                None | Some(CutoffFile::Quantile) => Cutoff::Quantile,
                Some(CutoffFile::Rank) => Cutoff::Rank,
            };
            let one = Rule::Asha {
                max_epochs,
                grace,
                reduction,
                brackets: 1,
                cutoff,
            };
            // The brackets that judge: the first whose first rung is not below
            // `max_epochs` judges none, nor any past it (by 32: reduction^32 > u32::MAX).
            let judging = (1..=32)
                .find(|bracket| one.bracket_rungs(*bracket).is_empty())
                .unwrap_or(32);
            let brackets = at_least(
                "brackets",
                written.brackets,
                1,
                DEFAULT_BRACKETS,
                "trials take the brackets in turn: `brackets: 1` is ASHA alone, `brackets: 2` adds one whose first rung is `grace × reduction`",
            )?;
            if brackets > judging {
                return Err(places.bad(
                    "early_stop.brackets",
                    format!(
                        "`brackets: {brackets}`: bracket {} would first judge at epoch {}, not below `max_epochs: {max_epochs}`, so its trials would never be judged",
                        judging + 1,
                        u64::from(grace).saturating_mul(u64::from(reduction).saturating_pow(judging)),
                    ),
                    format!("give at most `brackets: {judging}` (or a higher `max_epochs`)"),
                ));
            }
            Rule::Asha {
                max_epochs,
                grace,
                reduction,
                brackets,
                cutoff,
            }
        }
        RuleFile::Median => Rule::Median {
            grace,
            min_trials: at_least(
                "min_trials",
                written.min_trials,
                1,
                DEFAULT_MIN_TRIALS,
                "a trial is compared with the running averages of at least this many others, such as `min_trials: 3`",
            )?,
            max_epochs,
        },
    };
    Ok(Some(EarlyStop {
        rule,
        location: places.key("early_stop"),
    }))
}

fn output(
    file: &SweepFile,
    places: &Places,
    folder: &Path,
) -> Result<std::path::PathBuf, SpecError> {
    let output = file.output.as_deref().unwrap_or("runs");
    if output.trim().is_empty() || output.contains(|c: char| c.is_control()) {
        return Err(places.bad(
            "output",
            format!("`output: {}` is not a folder", shortened(output)),
            "name the folder the trials' results go to, such as `output: runs`",
        ));
    }
    Ok(lexical(&folder.join(output).join(&file.sweep)))
}

/// A warning when a random search over finite choices draws more trials than there are
/// combinations: some trials repeat.
fn random_repeats(search: &Search, places: &Places, warnings: &mut Vec<Warning>) {
    let Search::Random { count, params, .. } = search else {
        return;
    };
    let sizes: Option<Vec<u128>> = params
        .iter()
        .map(|(_, distribution)| distribution.size())
        .collect();
    let Some(combinations) = sizes.map(|sizes| {
        sizes
            .iter()
            .fold(1u128, |product, size| product.saturating_mul(*size))
    }) else {
        return;
    };
    if (*count as u128) > combinations {
        warnings.push(Warning {
            location: places.value("random.count"),
            message: format!(
                "`random` draws {count} trials from {combinations} combinations: some trials repeat (`params:` runs each combination once)"
            ),
        });
    }
}
