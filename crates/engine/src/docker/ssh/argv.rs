//! The `ssh` command lines tfimg runs, built from the endpoint and the user's own words
//! (`TFIMG_SSH_COMMAND`, split as a shell would, like git's `GIT_SSH_COMMAND`). ssh keeps
//! the first value it reads for an `-o` option and the command line beats its config
//! files, so the options tfimg needs come first, then the user's words, then defaults
//! the user may override. Pure.

use std::path::Path;

use crate::endpoint::SshTarget;
use tfimg_core::input::InputError;
use tfimg_core::labels::SSH_COMMAND_VARIABLE;
use tfimg_core::plan::tunnels::Forward;

/// Options no user word may change: no tty, no agent or X11 forwarded to a Docker host, no
/// local command.
const MANDATORY: &[&str] = &[
    "-T",
    "-o",
    "ForwardAgent=no",
    "-o",
    "ForwardX11=no",
    "-o",
    "PermitLocalCommand=no",
];

/// Seconds ssh waits for the TCP connection and the handshake, unless the user says.
pub const CONNECT_TIMEOUT_SECONDS: u64 = 10;

/// Never a prompt (tfimg runs ssh without a terminal), a bounded connect, a dead link
/// noticed within 45 s.
fn defaults() -> Vec<String> {
    [
        format!("ConnectTimeout={CONNECT_TIMEOUT_SECONDS}"),
        "BatchMode=yes".to_string(),
        "ServerAliveInterval=15".to_string(),
        "ServerAliveCountMax=3".to_string(),
    ]
    .into_iter()
    .flat_map(|option| ["-o".to_string(), option])
    .collect()
}

/// ssh's flags that take a value (OpenSSH 9's getopt string).
const WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// Flags tfimg sets itself, that would break the transport (detach it, background it,
/// multiplex it, take its standard input) or that would undo `MANDATORY`. Found in any
/// spelling getopt reads: alone (`-f`) or among others (`-vfN`).
const FORBIDDEN: &[(char, &str)] = &[
    ('M', "tfimg runs its own master connection"),
    ('S', "tfimg manages control sockets itself"),
    ('O', "tfimg manages control sockets itself"),
    ('N', "tfimg runs its own commands on the host"),
    ('f', "tfimg waits for its ssh processes itself"),
    (
        'W',
        "tfimg reaches the daemon through `docker system dial-stdio`",
    ),
    ('L', "tfimg manages forwards and control sockets itself"),
    ('R', "tfimg manages forwards and control sockets itself"),
    ('D', "tfimg manages forwards and control sockets itself"),
    ('t', "the Docker API needs a connection without a terminal"),
    ('E', "tfimg reads ssh's errors to say what went wrong"),
    ('n', "the Docker API is spoken over ssh's standard input"),
    ('s', "tfimg runs its own commands on the host"),
    (
        'G',
        "ssh would print its configuration instead of connecting",
    ),
    ('V', "ssh would print its version instead of connecting"),
    (
        'Q',
        "ssh would print what it supports instead of connecting",
    ),
    ('y', "tfimg reads ssh's errors to say what went wrong"),
    // ssh's own flags beat the `-o ForwardAgent=no` and `-o ForwardX11=no` tfimg puts
    // first (an `-o` only sets what is still unset).
    ('A', "tfimg never forwards your agent to a Docker host"),
    ('X', "tfimg never forwards X11 to a Docker host"),
    ('Y', "tfimg never forwards X11 to a Docker host"),
];

/// `-o` options that do what a forbidden flag does (`-oForkAfterAuthentication=yes` is
/// `-f`): refused the same, in any case, whatever their value.
const FORBIDDEN_OPTIONS: &[(&str, char)] = &[
    ("forkafterauthentication", 'f'),
    ("sessiontype", 'N'),
    ("stdinnull", 'n'),
    ("stdioforward", 'W'),
];

/// The ssh program and the user's words for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCommand {
    pub program: String,
    pub words: Vec<String>,
    /// The user's `ConnectTimeout`, when they set one with `-o`.
    pub connect_timeout: Option<u64>,
}

impl Default for SshCommand {
    fn default() -> Self {
        SshCommand {
            program: "ssh".to_string(),
            words: Vec::new(),
            connect_timeout: None,
        }
    }
}

impl SshCommand {
    /// The value of `TFIMG_SSH_COMMAND` (unset or blank: plain `ssh`).
    pub fn parse(variable: Option<&str>) -> Result<SshCommand, InputError> {
        let Some(text) = variable.filter(|text| !text.trim().is_empty()) else {
            return Ok(SshCommand::default());
        };
        let bad = |why: String, hint: &str| {
            InputError::new(
                format!("`{SSH_COMMAND_VARIABLE}={text}`: {why}"),
                hint.to_string(),
            )
        };
        let example = format!(
            "close the quote; words are split as a shell splits them: `{SSH_COMMAND_VARIABLE}=\"ssh -i '/home/me/my key'\"`"
        );
        let mut words = shlex::split(text)
            .ok_or_else(|| {
                bad(
                    "cannot be split into words (an unclosed quote?)".into(),
                    &example,
                )
            })?
            .into_iter();
        let program = words.next().unwrap_or_default();
        let words: Vec<String> = words.collect();
        let connect_timeout = check_words(&words).map_err(|why| {
            bad(
                why,
                "set only ssh's own options (`-F`, `-i`, `-J`, `-o Key=value`); the host comes from the endpoint",
            )
        })?;
        Ok(SshCommand {
            program,
            words,
            connect_timeout,
        })
    }

    /// The seconds ssh may take to connect and authenticate.
    pub fn connect_seconds(&self) -> u64 {
        self.connect_timeout.unwrap_or(CONNECT_TIMEOUT_SECONDS)
    }
}

/// Refuses what tfimg must control; the user's `ConnectTimeout`.
fn check_words(words: &[String]) -> Result<Option<u64>, String> {
    let mut timeout = None;
    let mut index = 0;
    while index < words.len() {
        let word = &words[index];
        index += 1;
        let Some(flags) = word.strip_prefix('-').filter(|flags| !flags.is_empty()) else {
            return Err(format!(
                "`{word}` is not an option: the host and command come from the endpoint"
            ));
        };
        if flags == "-" {
            return Err("`--` ends ssh's options: the host comes from the endpoint".into());
        }
        for (position, flag) in flags.char_indices() {
            if let Some((_, why)) = FORBIDDEN.iter().find(|(forbidden, _)| *forbidden == flag) {
                return Err(format!("`-{flag}` may not be set: {why}"));
            }
            if !WITH_VALUE.contains(flag) {
                continue;
            }
            let rest = &flags[position + flag.len_utf8()..];
            let value = if rest.is_empty() {
                index += 1;
                words.get(index - 1).cloned().unwrap_or_default()
            } else {
                rest.to_string()
            };
            if flag == 'o' {
                // ssh keeps the first value it reads.
                let given = check_option(&value)?;
                timeout = timeout.or(given);
            }
            break;
        }
    }
    Ok(timeout)
}

/// One `-o Key=value`: `Control*` is tfimg's; a `ConnectTimeout` is returned.
fn check_option(option: &str) -> Result<Option<u64>, String> {
    // What ssh itself reads as the keyword: `-o=StdinNull=yes` is `StdinNull`.
    let Some((key, value)) = config_keyword(option) else {
        return Ok(None);
    };
    let value = value.trim();
    let lower = key.to_ascii_lowercase();
    if lower.starts_with("control") {
        return Err(format!(
            "`-o {key}` may not be set: tfimg manages control sockets itself"
        ));
    }
    if matches!(
        lower.as_str(),
        "localforward"
            | "remoteforward"
            | "dynamicforward"
            | "clearallforwardings"
            | "requesttty"
            | "remotecommand"
    ) {
        return Err(format!(
            "`-o {key}` may not be set: tfimg manages forwards and commands itself"
        ));
    }
    if let Some((_, flag)) = FORBIDDEN_OPTIONS.iter().find(|(name, _)| *name == lower) {
        let why = FORBIDDEN
            .iter()
            .find(|(forbidden, _)| forbidden == flag)
            .map_or("", |(_, why)| *why);
        return Err(format!(
            "`-o {key}` may not be set (it is `-{flag}`): {why}"
        ));
    }
    if lower == "connecttimeout" {
        return Ok(value.parse().ok());
    }
    Ok(None)
}

/// ssh's word separators in a configuration line (OpenSSH's `WHITESPACE`).
const SSH_WHITESPACE: &[char] = &[' ', '\t', '\r', '\n'];

/// The keyword of one configuration line and the rest, split as OpenSSH's
/// `process_config_line` splits an `-o` value (`strdelim` in its misc.c): trailing
/// whitespace dropped; the keyword ends at whitespace, a quote or one `=`; an empty first
/// word (leading whitespace, or an `=` first: `-o=Key=value`) is skipped once; a quoted
/// keyword is what is between its quotes. `None` where ssh reads no keyword (an empty
/// line, an unclosed quote, a comment): it then sets nothing. ssh compares keywords
/// without regard to case.
fn config_keyword(line: &str) -> Option<(String, &str)> {
    let line = line.trim_end_matches(|c| SSH_WHITESPACE.contains(&c) || c == '\u{c}');
    let (mut keyword, mut rest) = next_word(line)?;
    if keyword.is_empty() {
        (keyword, rest) = next_word(rest)?;
    }
    (!keyword.is_empty() && !keyword.starts_with('#')).then_some((keyword, rest))
}

/// OpenSSH's `strdelim`: the first word of `text` and what follows it; `None` for an
/// unclosed quote.
fn next_word(text: &str) -> Option<(String, &str)> {
    let Some(at) = text.find(|c| SSH_WHITESPACE.contains(&c) || c == '"' || c == '=') else {
        return Some((text.to_string(), ""));
    };
    let (word, rest) = (&text[..at], &text[at + 1..]);
    match text.as_bytes()[at] {
        b'"' => {
            // The quote is taken out and the word runs to the next quote.
            let close = rest.find('"')?;
            let word = format!("{word}{}", &rest[..close]);
            Some((word, rest[close + 1..].trim_start_matches(SSH_WHITESPACE)))
        }
        b'=' => Some((word.to_string(), rest.trim_start_matches(SSH_WHITESPACE))),
        _ => {
            let rest = rest.trim_start_matches(SSH_WHITESPACE);
            // One `=` after the whitespace is part of the separator.
            let rest = rest
                .strip_prefix('=')
                .map_or(rest, |after| after.trim_start_matches(SSH_WHITESPACE));
            Some((word.to_string(), rest))
        }
    }
}

/// `[-l USER] [-p PORT] -- HOST`, in docker/cli's order.
fn target_args(target: &SshTarget) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(user) = &target.user {
        args.extend(["-l".to_string(), user.clone()]);
    }
    if let Some(port) = target.port {
        args.extend(["-p".to_string(), port.to_string()]);
    }
    args.extend(["--".to_string(), target.host.clone()]);
    args
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|word| word.to_string()).collect()
}

fn path(control: &Path) -> String {
    control.to_string_lossy().into_owned()
}

/// The session's master: authenticates once, holds the connection, serves `-S CTL`.
pub fn master_args(command: &SshCommand, target: &SshTarget, control: &Path) -> Vec<String> {
    master(command, target, control, true)
}

/// A master on `control` (holding the connection with `-N` when `hold`), up to its host:
/// what the session's and a detached container's masters share.
fn master(command: &SshCommand, target: &SshTarget, control: &Path, hold: bool) -> Vec<String> {
    let mut args = words(&["-M", "-S"]);
    args.push(path(control));
    if hold {
        args.push("-N".to_string());
    }
    args.extend(words(&[
        "-o",
        "ControlPersist=no",
        "-o",
        "ExitOnForwardFailure=no",
    ]));
    args.extend(words(MANDATORY));
    args.extend(command.words.iter().cloned());
    args.extend(defaults());
    args.extend(target_args(target));
    args
}

/// One connection to the daemon: a channel of the master running `docker system
/// dial-stdio` (with `--host` for a socket named in the URL, quoted for the remote shell).
pub fn dial_args(command: &SshCommand, target: &SshTarget, control: &Path) -> Vec<String> {
    channel_args(command, target, control, remote_command(target))
}

/// A program of tfimg's own run on the engine's host through the master (`nvidia-smi
/// --query-gpu=...`), each word quoted for the remote shell.
pub fn program_args(
    command: &SshCommand,
    target: &SshTarget,
    control: &Path,
    program: &[&str],
) -> Vec<String> {
    let quoted = shlex::try_join(program.iter().copied()).unwrap_or_default();
    channel_args(command, target, control, quoted)
}

/// A channel of the master running `remote` in the remote user's shell.
fn channel_args(
    command: &SshCommand,
    target: &SshTarget,
    control: &Path,
    remote: String,
) -> Vec<String> {
    let mut args = words(&["-S"]);
    args.push(path(control));
    args.extend(words(&["-o", "ControlMaster=no"]));
    args.extend(words(MANDATORY));
    args.extend(command.words.iter().cloned());
    args.extend(defaults());
    args.extend(target_args(target));
    args.push(remote);
    args
}

/// What the remote shell runs.
pub fn remote_command(target: &SshTarget) -> String {
    docker_command(target, "system dial-stdio")
}

/// `docker ARGS` for the remote shell, with `--host` for a socket named in the URL.
fn docker_command(target: &SshTarget, args: &str) -> String {
    match &target.socket {
        None => format!("docker {args}"),
        Some(socket) => {
            let host = format!("--host=unix://{socket}");
            let quoted = shlex::try_quote(&host)
                .map(|quoted| quoted.into_owned())
                .unwrap_or(host);
            format!("docker {quoted} {args}")
        }
    }
}

/// A question to a running master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlOp<'a> {
    /// `-O check`: whether it runs (its pid on stderr).
    Check,
    /// `-O exit`: ends it.
    Exit,
    /// `-O forward -L 127.0.0.1:LOCAL:127.0.0.1:REMOTE`: a local forward added.
    Forward(&'a Forward),
    /// `-O cancel -L ...`: that forward removed.
    Cancel(&'a Forward),
}

/// `-L 127.0.0.1:LOCAL:127.0.0.1:REMOTE`: only this machine's loopback listens, and the
/// far end is the engine host's loopback (where tunneled ports are published).
fn local_forward(forward: &Forward) -> [String; 2] {
    [
        "-L".to_string(),
        format!("127.0.0.1:{}:127.0.0.1:{}", forward.local, forward.remote),
    ]
}

/// `ssh -S CTL -O check|exit|forward|cancel [-L SPEC] [-l USER] [-p PORT] -- HOST`.
pub fn control_args(
    command: &SshCommand,
    target: &SshTarget,
    control: &Path,
    op: ControlOp<'_>,
) -> Vec<String> {
    let mut args = words(&["-S"]);
    args.push(path(control));
    args.push("-O".to_string());
    let (name, forward) = match op {
        ControlOp::Check => ("check", None),
        ControlOp::Exit => ("exit", None),
        ControlOp::Forward(forward) => ("forward", Some(forward)),
        ControlOp::Cancel(forward) => ("cancel", Some(forward)),
    };
    args.push(name.to_string());
    if let Some(forward) = forward {
        args.extend(local_forward(forward));
    }
    args.extend(command.words.iter().cloned());
    args.extend(target_args(target));
    args
}

/// A master of its own that outlives tfimg (`-f`: ssh goes to the background once
/// authenticated) and carries a detached container's forwards. With `wait_for` it runs
/// `docker wait ID` there and so ends when the container stops or is removed; without,
/// it holds the connection (`-N`) until it is told to exit. Its messages go to `log`.
pub fn detached_args(
    command: &SshCommand,
    target: &SshTarget,
    control: &Path,
    log: &Path,
    wait_for: Option<&str>,
) -> Vec<String> {
    let mut args = words(&["-f", "-E"]);
    args.push(path(log));
    args.extend(master(command, target, control, wait_for.is_none()));
    if let Some(id) = wait_for {
        args.push(docker_command(target, &format!("wait {id}")));
    }
    args
}

/// The pid in `-O check`'s `Master running (pid=1234)`.
pub fn parse_check_pid(stderr: &str) -> Option<u32> {
    let start = stderr.find("Master running (pid=")? + "Master running (pid=".len();
    let rest = &stderr[start..];
    rest[..rest.find(')')?].parse().ok()
}

#[cfg(test)]
mod tests;
