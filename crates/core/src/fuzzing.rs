//! The properties the fuzzers hold every input parser to, in one place: the cargo-fuzz
//! targets under `fuzz/` and the stable replay test `tests/fuzz_inputs.rs` both call
//! these functions. Each one runs a parser on (lossy UTF-8) bytes and panics, with a
//! message naming the broken property, when the parser panics, or when a rejection is
//! not a clear bad-input error:
//!
//! - the message is non-empty and one line with no control character (the hint is
//!   printed on its own line; quoted input comes escaped), shows its position once and
//!   up front (no second ` at line N column M` inside), says what to write rather than
//!   a Rust type (`expected struct SpecFile`), has no trailing period, and starts
//!   lowercase (an acronym or a product name may lead);
//! - spec, team and sweep errors name a file: the one being read, or for spec
//!   resolution a built-in the spec extends;
//! - it exits 1 (`input::Failure`, the code the binary ends with), with a non-empty
//!   one-line hint.
//!
//! Pure: nothing here touches the filesystem; the catalog holds the built-ins only, no
//! `images/` folder. Not part of tfimg's interface.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::input::{Exit, Failure, InputError};
use crate::plan::gpus::{GpuMode, GpuSelection};
use crate::plan::{mounts, ports};
use crate::render::{self, NetworkOptions};
use crate::spec::load::{Catalog, Origin, SpecDocument, BUILTIN_PREFIX};
use crate::spec::{validate, SpecError};

/// How the fuzzed spec and team files are named in errors.
pub const SPEC_DISPLAY: &str = "images/fuzzed.yaml";
pub const TEAM_DISPLAY: &str = "compose/fuzzed-team.yaml";
pub const SWEEP_DISPLAY: &str = "examples/fuzzed-sweep.yaml";
pub const MODEL_CONFIG_DISPLAY: &str = "fuzzed.config";

/// Words that may start an error message although they are capitalised.
const PROPER_NOUNS: &[&str] = &["Python", "TensorFlow", "Docker", "Debian", "Ubuntu"];

/// A spec file: parse it, walk its `extends` chain through the built-ins, resolve it and
/// render the Dockerfile of what resolves.
pub fn spec(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let origin = Origin::File(PathBuf::from(SPEC_DISPLAY));
    let document = match SpecDocument::parse(&text, SPEC_DISPLAY, origin, "fuzzed") {
        Ok(document) => document,
        Err(error) => return check_spec_error("spec", &text, &error, false),
    };
    let chain = match builtins().chain(document) {
        Ok(chain) => chain,
        Err(error) => return check_spec_error("spec", &text, &error, true),
    };
    match validate::resolve(&chain, builtins().current_dir()) {
        Ok(resolved) => {
            render::render(&resolved, &NetworkOptions::default());
        }
        Err(error) => check_spec_error("spec", &text, &error, true),
    }
}

/// A team file.
pub fn team(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Err(error) = crate::team::parse(&text, TEAM_DISPLAY, PathBuf::from("/lab")) {
        check_spec_error("team", &text, &error, false);
    }
}

/// A sweep file; when it parses, its trials (as many as the search says, each id once),
/// its slots on a host with two GPUs, and its fingerprint.
pub fn sweep(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let sweep = match crate::sweep::parse(&text, SWEEP_DISPLAY, Path::new("/lab")) {
        Ok(sweep) => sweep,
        Err(error) => return check_spec_error("sweep", &text, &error, false),
    };
    let trials = sweep.trials();
    if trials.len() != sweep.search.count() {
        violation(
            "sweep",
            &text,
            "",
            "the trials do not number what the search says",
        );
    }
    let ids: std::collections::BTreeSet<&str> = trials.iter().map(|t| t.id.as_str()).collect();
    if ids.len() != trials.len() {
        violation("sweep", &text, "", "two trials have one id");
    }
    if let Err(error) = crate::sweep::schedule::slots(&sweep.pool, &["0".into(), "1".into()], None)
    {
        check_spec_error("sweep", &text, &error, false);
    }
    sweep.fingerprint();
}

/// A `--gpus` value, then its plan in every `--gpu-mode`.
pub fn gpus(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let selection = match GpuSelection::parse(&text) {
        Ok(selection) => selection,
        Err(error) => return check_input_error("gpus", &text, &error),
    };
    for mode in [
        GpuMode::Auto,
        GpuMode::Devices,
        GpuMode::Cdi,
        GpuMode::Runtime,
    ] {
        if let Err(error) = selection.plan(mode) {
            check_input_error("gpus", &text, &error);
        }
    }
}

/// A `--mount` value (parsing only: `prepare` creates folders).
pub fn mounts(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Err(error) = mounts::parse(&text, Path::new("/home/user/project"), "/tf") {
        check_input_error("mounts", &text, &error);
    }
}

/// A `-p` value.
pub fn ports(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Err(error) = ports::PortRequest::parse(&text) {
        check_input_error("ports", &text, &error);
    }
}

/// A TensorFlow Serving model config file (`tfimg serve --model-config`), in protobuf's
/// text format.
pub fn model_config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Err(error) = crate::plan::model_config::read(MODEL_CONFIG_DISPLAY, &text) {
        check_spec_error("model_config", &text, &error, false);
    }
}

/// The built-ins only, seen from a folder that does not exist.
fn builtins() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::builtin(PathBuf::from("/nonexistent/tfimg-fuzz")))
}

fn check_spec_error(target: &str, input: &str, error: &SpecError, builtins_allowed: bool) {
    let fail = |property: &str| violation(target, input, &error.to_string(), property);
    let display = match target {
        "team" => TEAM_DISPLAY,
        "sweep" => SWEEP_DISPLAY,
        "model_config" => MODEL_CONFIG_DISPLAY,
        _ => SPEC_DISPLAY,
    };
    let Some(location) = &error.location else {
        return fail("the error names no file");
    };
    let named_builtin = builtins_allowed
        && location.file.starts_with(BUILTIN_PREFIX)
        && location.file.ends_with(".yaml");
    if location.file != display && !named_builtin {
        return fail("the error names another file");
    }
    if location.line == 0 || location.column == 0 {
        return fail("the error's line and column start at 1");
    }
    if !error
        .to_string()
        .starts_with(&format!("`{}`:", location.file))
    {
        return fail("the error does not start with its file");
    }
    check_error(target, input, error, &error.message, &error.hint);
}

fn check_input_error(target: &str, input: &str, error: &InputError) {
    check_error(target, input, error, &error.message, &error.hint);
}

/// What every rejection is held to, whatever its type: its words and its exit.
fn check_error(target: &str, input: &str, error: &dyn Failure, message: &str, hint: &str) {
    let shown = error.to_string();
    check_message(target, input, &shown, message, hint);
    check_classified(target, input, &shown, error);
}

fn check_message(target: &str, input: &str, shown: &str, message: &str, hint: &str) {
    // Only YAML files get serde_yaml's positions; a flag may well quote "at line 1 column 2".
    let from_yaml = matches!(target, "spec" | "team" | "sweep");
    let fail = |property: &str| violation(target, input, shown, property);
    if message.trim().is_empty() {
        return fail("the message is empty");
    }
    if shown.contains(['\n', '\r']) {
        return fail("the message spans several lines");
    }
    if shown.chars().any(char::is_control) {
        return fail("the message holds a control character");
    }
    if from_yaml && repeats_a_position(message) {
        return fail("the message repeats a position inside its text");
    }
    if names_a_rust_type(message, input) {
        return fail("the message names a Rust type instead of what to write");
    }
    if message.ends_with('.') && !message.ends_with("...") {
        return fail("the message ends with a period");
    }
    if !starts_lowercase(message) {
        return fail("the message starts with a capital letter");
    }
    if hint.trim().is_empty() {
        return fail("the hint is empty");
    }
    if hint.contains(['\n', '\r']) {
        fail("the hint spans several lines");
    }
}

fn check_classified(target: &str, input: &str, shown: &str, error: &dyn Failure) {
    if error.exit() != Exit::BadInput {
        violation(target, input, shown, "the error does not exit 1");
    }
    if error.hint().is_none_or(|hint| hint.trim().is_empty()) {
        violation(target, input, shown, "the classified error has no hint");
    }
}

/// serde_yaml's ` at line 3 column 1` or ` at position 12` left inside the text.
fn repeats_a_position(message: &str) -> bool {
    let digits = |text: &str| text.bytes().take_while(u8::is_ascii_digit).count();
    message.match_indices(" at ").any(|(index, _)| {
        let rest = &message[index + " at ".len()..];
        if let Some(rest) = rest.strip_prefix("position ") {
            return digits(rest) > 0;
        }
        rest.strip_prefix("line ").is_some_and(|rest| {
            let line = digits(rest);
            line > 0
                && rest[line..]
                    .strip_prefix(" column ")
                    .is_some_and(|rest| digits(rest) > 0)
        })
    })
}

/// serde's wording for derived types (`expected struct SpecFile`, `untagged enum
/// GpusValue`), unless the input itself holds those words and the message quotes them.
fn names_a_rust_type(message: &str, input: &str) -> bool {
    ["struct ", "enum "].iter().any(|kind| {
        message.match_indices(kind).any(|(index, _)| {
            let name_start = index + kind.len();
            let name_length = message[name_start..]
                .find(|c: char| !c.is_alphanumeric())
                .unwrap_or(message.len() - name_start);
            let phrase = &message[index..name_start + name_length];
            message[name_start..].starts_with(|c: char| c.is_ascii_uppercase())
                && !input.contains(phrase)
        })
    })
}

/// Lowercase, punctuation (a backtick around a name) or a digit; or a leading acronym
/// (`GPU 1 is given to ...`) or product name (`Python 3.6 is outside ...`).
fn starts_lowercase(message: &str) -> bool {
    let Some(first) = message.chars().next() else {
        return false;
    };
    if !first.is_uppercase() {
        return true;
    }
    let word: String = message
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    let acronym =
        word.chars().count() >= 2 && word.chars().all(|c| c.is_uppercase() || c.is_ascii_digit());
    acronym || PROPER_NOUNS.contains(&word.as_str())
}

fn violation(target: &str, input: &str, shown: &str, property: &str) {
    panic!(
        "{target}: {property}\n  input: {}\n  error: {}",
        shortened(input),
        shortened(shown)
    );
}

/// Debug-quoted, cut after 300 characters: a YAML bomb would flood the report.
fn shortened(text: &str) -> String {
    let quoted = format!("{text:?}");
    match quoted.char_indices().nth(300) {
        Some((cut, _)) => format!("{}... ({} bytes)", &quoted[..cut], text.len()),
        None => quoted,
    }
}
