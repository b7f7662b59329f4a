//! The values of a launch as users write them (`--memory 8g`, `--cpus 1.5`, `-e KEY=value`,
//! `--restart on-failure:3`, and their team file twins) parsed into what the plan holds.
//! Pure: an inherited variable comes in through a function, never from the environment.

use crate::input::InputError;
use crate::labels;

/// What Docker does when a container stops (`--restart`, and services of teams).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartPolicy {
    No,
    Always,
    UnlessStopped,
    /// At most this many retries, when given.
    OnFailure(Option<u32>),
}

impl RestartPolicy {
    /// `no`, `always`, `unless-stopped`, `on-failure[:N]`.
    pub fn parse(text: &str) -> Result<RestartPolicy, InputError> {
        let policy = match text.split_once(':') {
            None => match text {
                "no" => Some(RestartPolicy::No),
                "always" => Some(RestartPolicy::Always),
                "unless-stopped" => Some(RestartPolicy::UnlessStopped),
                "on-failure" => Some(RestartPolicy::OnFailure(None)),
                _ => None,
            },
            Some(("on-failure", retries)) => retries
                .parse::<u32>()
                .ok()
                .map(|retries| RestartPolicy::OnFailure(Some(retries))),
            Some(_) => None,
        };
        policy.ok_or_else(|| {
            InputError::new(
                format!("`--restart {text}` is not a restart policy"),
                "use `no`, `always`, `unless-stopped` or `on-failure[:N]`",
            )
        })
    }

    /// As Docker and Compose write it.
    pub fn as_text(&self) -> String {
        match self {
            RestartPolicy::No => "no".to_string(),
            RestartPolicy::Always => "always".to_string(),
            RestartPolicy::UnlessStopped => "unless-stopped".to_string(),
            RestartPolicy::OnFailure(None) => "on-failure".to_string(),
            RestartPolicy::OnFailure(Some(retries)) => format!("on-failure:{retries}"),
        }
    }
}

/// The longest idle time tfimg takes: a year (Jupyter's setting is whole seconds).
pub const MAX_IDLE_SECONDS: u64 = 365 * 24 * 3600;

/// `--idle-kernels 1h`, a team's `idle: {kernels: 1h}` (`what` names which): how long a
/// Jupyter kernel may run nothing before Jupyter shuts it down, in whole seconds, at least
/// 10 and at most a year (a duration as humantime reads it: `90s`, `30m`, `2h 30m`).
pub fn parse_idle(text: &str, what: &str) -> Result<u64, InputError> {
    let hint = format!("write a duration of 10 seconds or more, like `{what} 1h` or `{what} 30m`");
    let duration = humantime::parse_duration(text.trim()).map_err(|error| {
        InputError::new(
            format!("`{what} {text}` is not a duration: {error}"),
            hint.clone(),
        )
    })?;
    let seconds = duration.as_secs();
    if !(10..=MAX_IDLE_SECONDS).contains(&seconds) || duration.subsec_nanos() != 0 {
        return Err(InputError::new(
            format!("`{what} {text}` must be whole seconds from 10 s to a year"),
            hint,
        ));
    }
    Ok(seconds)
}

/// [`parse_idle`] of a flag that may be absent.
pub fn parse_idle_flag(text: Option<&str>, flag: &str) -> Result<Option<u64>, InputError> {
    text.map(|text| parse_idle(text, flag)).transpose()
}

/// `512m`, `8g`, `1.5g`, `1048576` → bytes.
pub fn parse_size(text: &str, flag: &str) -> Result<i64, InputError> {
    let bad = || {
        InputError::new(
            format!("`{flag} {text}` is not a size"),
            format!("write sizes like `{flag} 512m` or `{flag} 8g` (b, k, m, g)"),
        )
    };
    let lower = text.trim().to_ascii_lowercase();
    let lower = lower
        .strip_suffix('b')
        .filter(|rest| !rest.is_empty() && rest.ends_with(['k', 'm', 'g']))
        .unwrap_or(&lower);
    let (number, unit) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 1024f64),
        Some('m') => (&lower[..lower.len() - 1], 1024f64 * 1024.0),
        Some('g') => (&lower[..lower.len() - 1], 1024f64 * 1024.0 * 1024.0),
        Some('b') => (&lower[..lower.len() - 1], 1f64),
        _ => (lower, 1f64),
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = value * unit;
    if !(4.0 * 1024.0 * 1024.0..1e15).contains(&bytes) {
        return Err(InputError::new(
            format!("`{flag} {text}` is out of range"),
            "sizes go from 4m to a few hundred g",
        ));
    }
    Ok(bytes as i64)
}

/// The smallest `--cpus` (Docker's own lower bound).
pub const MIN_CPUS: f64 = 0.01;

/// `1.5` → 1.5e9 nano-CPUs.
/// `flag` names the value in messages: `--cpus` on the command line, `cpus:` in a team
/// file.
pub fn parse_cpus(text: &str, flag: &str) -> Result<i64, InputError> {
    let value: f64 = text.trim().parse().map_err(|_| {
        InputError::new(
            format!("`{flag} {text}` is not a number"),
            format!("write `{flag} 2` or `{flag} 1.5`"),
        )
    })?;
    if !(value.is_finite() && value > 0.0 && value <= 1024.0) {
        return Err(InputError::new(
            format!("`{flag} {text}` is out of range"),
            "use a number above 0, such as 2",
        ));
    }
    // The kernel's smallest quota is 1 ms per 100 ms period; below it the value would
    // round to NanoCpus 0, which Docker reads as no limit at all.
    if value < MIN_CPUS {
        return Err(InputError::new(
            format!("`{flag} {text}` is below {MIN_CPUS}, the smallest share a container can get"),
            "use 0.01 or more, such as 0.5",
        ));
    }
    Ok((value * 1e9).round() as i64)
}

/// `KEY=value`; a bare `KEY` takes the value `inherited` finds (tfimg's own environment
/// value, as docker does).
pub fn parse_env(
    text: &str,
    inherited: impl Fn(&str) -> Option<String>,
) -> Result<(String, String), InputError> {
    let (key, value) = match text.split_once('=') {
        Some((key, value)) => (key.to_string(), value.to_string()),
        None => (text.to_string(), inherited(text).unwrap_or_default()),
    };
    let valid = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if key.is_empty() {
        return Err(InputError::new(
            format!("`-e {text}`: the variable has no name"),
            "write `-e KEY=value` with letters, digits and `_`",
        ));
    }
    if !valid {
        return Err(InputError::new(
            format!("`-e {text}`: `{key}` is not a valid variable name"),
            "write `-e KEY=value` with letters, digits and `_`",
        ));
    }
    if key.starts_with(labels::VARIABLE_PREFIX) {
        return Err(InputError::new(
            format!("`-e {text}`: `TFIMG_*` variables are set by tfimg"),
            "use `--uid`/`--gid`, `--ssh-key` or the printed token instead",
        ));
    }
    Ok((key, value))
}

#[cfg(test)]
mod tests;
