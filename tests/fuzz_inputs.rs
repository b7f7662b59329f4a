//! The fuzzers' properties on stable Rust, in every `cargo test`: replays the committed
//! corpora and crash reproducers under `fuzz/`, feeds hand-made YAML bombs and deep
//! nesting, then runs a bounded, seeded mutation loop over the corpora. The checks
//! themselves live in `tfimg_testing::fuzzing`, shared with the cargo-fuzz targets (`just fuzz`).

use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

type Check = fn(&[u8]);

/// Each target with how many mutated inputs the loop tries: 26 000 in all. The YAML
/// files come first (the bombs go to them).
const TARGETS: &[(&str, Check, usize)] = &[
    ("spec", tfimg_testing::fuzzing::spec, 8_000),
    ("team", tfimg_testing::fuzzing::team, 6_000),
    ("sweep", tfimg_testing::fuzzing::sweep, 4_000),
    ("gpus", tfimg_testing::fuzzing::gpus, 2_000),
    ("mounts", tfimg_testing::fuzzing::mounts, 2_000),
    ("ports", tfimg_testing::fuzzing::ports, 2_000),
    ("model_config", tfimg_testing::fuzzing::model_config, 2_000),
];

/// Fragments the mutations insert: YAML structure, anchors, tags, odd scalars and text.
const TOKENS: &[&str] = &[
    "&a ",
    "*a",
    "[",
    "]",
    "{",
    "}",
    "- ",
    ": ",
    ", ",
    "\n",
    "\n  ",
    "\n- ",
    "---\n",
    "? ",
    "<<: ",
    "!!str ",
    "!!binary ",
    "!x ",
    "|\n  ",
    "\"",
    "'",
    "#",
    "~",
    "\t",
    "\r",
    "\0",
    "\\",
    "é",
    "\u{202e}",
    "\u{feff}",
    "😀",
    "99999999999999999999999999999999999999",
    "4294967296",
    "65536",
    "-1",
    "1e999",
    ".nan",
    "0x1F",
    "0o17",
    "true",
    "null",
    "name: ",
    "extends: ",
    "builtin:",
    "tensorflow: ",
    "python: ",
    "cuda: ",
    "gpu: true",
    "cuda_provider: image",
    "service: ",
    "files: ",
    "ports: ",
    "env: ",
    "members: ",
    "gpus: ",
    "workers: ",
    "shared: true",
    "sweep: ",
    "command: ",
    "params: ",
    "random: ",
    "trials: ",
    "count: ",
    "seed: ",
    "{uniform: [0, 1]}",
    "{loguniform: [1e-5, 1]}",
    "{int: [1, 9]}",
    "{choice: [a, b]}",
    "gpus_per_trial: ",
    "trials_per_gpu: ",
    "max_parallel: ",
    "\"{lr}\"",
    "{{",
    "}}",
    "\"2.9\"",
    "\"11.2\"",
    ",",
    ":",
    "/",
    "..",
    ":ro",
    "/tcp",
    "device=",
    "GPU-",
    "MIG-",
    "all",
];

#[test]
fn corpora_and_regressions_keep_the_properties() {
    let mut findings = Findings::default();
    for (target, check, _) in TARGETS {
        let inputs = committed_inputs(target);
        assert!(
            !inputs.is_empty(),
            "fuzz/corpus/{target} holds no seed inputs"
        );
        for (path, data) in &inputs {
            findings.run(check, data, &path.display().to_string());
        }
        eprintln!("{target}: {} committed inputs replayed", inputs.len());
    }
    findings.assert_none();
}

#[test]
fn bombs_and_deep_nesting_are_rejected_cleanly() {
    // Nine levels of nine aliases: 9^9 copies of `x` when expanded. Untagged enums
    // (`gpus:` in a team, `files:` in a spec) buffer their whole value, aliases expanded.
    let laughs = {
        let mut levels = vec![String::from("&a0 [x, x, x, x, x, x, x, x, x]")];
        for level in 1..10 {
            let row = vec![format!("*a{}", level - 1); 9].join(", ");
            levels.push(format!("&a{level} [{row}]"));
        }
        format!("[{}]", levels.join(", "))
    };
    let member = "team: lab\nmembers:\n  - name: a\n    spec: cpu-jupyter\n    gpus: ";
    let depth = 10_000;
    let nested_mappings: String = (0..2_000)
        .map(|level| format!("{}a:\n", " ".repeat(level)))
        .collect();
    let cases = [
        (
            "spec",
            "billion laughs in `files`",
            format!("name: x\nfiles: {laughs}\n"),
        ),
        (
            "spec",
            "billion laughs in one `files` entry",
            format!("files: [{laughs}]\n"),
        ),
        (
            "spec",
            "billion laughs in `env`",
            format!("env: {{A: {laughs}}}\n"),
        ),
        (
            "team",
            "billion laughs in `gpus`",
            format!("{member}{laughs}\n"),
        ),
        (
            "both",
            "billion laughs at the top",
            format!("a: {laughs}\n"),
        ),
        ("both", "flow sequences", "[".repeat(depth)),
        (
            "both",
            "closed flow sequences",
            "[".repeat(depth) + &"]".repeat(depth),
        ),
        ("both", "flow mappings", "{a: ".repeat(depth)),
        ("both", "block sequences", "- ".repeat(depth) + "x"),
        (
            "spec",
            "block sequences in `files`",
            format!("files:\n{}x", "- ".repeat(depth)),
        ),
        (
            "team",
            "block sequences in `gpus`",
            format!("{member}\n{}x", "- ".repeat(depth)),
        ),
        ("both", "keys in flow sequences", "[a: ".repeat(depth)),
        ("both", "explicit keys", "? ".repeat(depth) + "x"),
        ("both", "nested block mappings", nested_mappings),
        ("both", "anchors everywhere", "&a [".repeat(depth)),
        (
            "both",
            "a long scalar",
            format!("name: {}", "a".repeat(1 << 20)),
        ),
        (
            "both",
            "a long number",
            format!("ports: {{jupyter: {}}}", "9".repeat(100_000)),
        ),
    ];
    let mut findings = Findings::default();
    for (wanted, name, text) in &cases {
        for (target, check, _) in &TARGETS[..3] {
            if wanted == target || *wanted == "both" {
                findings.run(check, text.as_bytes(), &format!("{target}: {name}"));
            }
        }
    }
    eprintln!(
        "{} hand-made bombs tried on spec, team and sweep",
        cases.len()
    );
    findings.assert_none();
}

#[test]
fn mutated_inputs_keep_the_properties() {
    let mut random = XorShift(0x7f4a_7c15_9e37_79b9);
    let mut findings = Findings::default();
    let mut total = 0;
    for (target, check, count) in TARGETS {
        let seeds: Vec<Vec<u8>> = committed_inputs(target)
            .into_iter()
            .map(|(_, data)| data)
            .collect();
        for _ in 0..*count {
            let input = mutate(&mut random, &seeds);
            findings.run(check, &input, &format!("{target} (generated)"));
        }
        eprintln!("{target}: {count} generated inputs");
        total += count;
    }
    eprintln!("{total} generated inputs in all");
    findings.assert_none();
}

/// Every file of `fuzz/corpus/<target>` and `fuzz/regressions/<target>`.
fn committed_inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut inputs = Vec::new();
    for folder in ["corpus", "regressions"] {
        let Ok(entries) = fs::read_dir(root.join(folder).join(target)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .map(|entry| entry.expect("readable folder").path())
            .filter(|path| path.is_file())
            .collect();
        paths.sort();
        for path in paths {
            let data = fs::read(&path).expect("readable corpus file");
            inputs.push((path, data));
        }
    }
    inputs
}

/// Runs inputs and collects the broken properties, so one run reports every kind of
/// failure (each with its first input) instead of stopping at the first.
#[derive(Default)]
struct Findings {
    first_input: std::collections::BTreeMap<String, (String, usize)>,
}

impl Findings {
    fn run(&mut self, check: &Check, data: &[u8], name: &str) {
        let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| check(data))) else {
            return;
        };
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
            .unwrap_or_else(|| "a panic without a message".to_string());
        // The first line names the target and the property.
        let kind = message.lines().next().unwrap_or_default().to_string();
        let entry = self.first_input.entry(kind).or_insert_with(|| {
            let bytes = match data.len() {
                0..=200 => format!("{data:?}"),
                length => format!("{length} bytes"),
            };
            (format!("{name}: {message}\n  bytes: {bytes}"), 0)
        });
        entry.1 += 1;
    }

    fn assert_none(self) {
        let report: Vec<String> = self
            .first_input
            .into_values()
            .map(|(example, count)| format!("{count} input(s), first: {example}"))
            .collect();
        assert!(report.is_empty(), "{}", report.join("\n\n"));
    }
}

/// One to four mutations of a seed.
fn mutate(random: &mut XorShift, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seeds[random.below(seeds.len())].clone();
    for _ in 0..=random.below(4) {
        let at = random.below(data.len() + 1);
        match random.below(9) {
            0 if !data.is_empty() => {
                let index = at.min(data.len() - 1);
                data[index] ^= 1 << random.below(8);
            }
            1 => data.insert(at, random.next() as u8),
            2 => {
                let end = (at + random.below(16)).min(data.len());
                data.drain(at..end);
            }
            3 => {
                let other = &seeds[random.below(seeds.len())];
                let from = random.below(other.len() + 1);
                let to = (from + random.below(64)).min(other.len());
                data.splice(at..at, other[from..to].iter().copied());
            }
            4 => {
                let text = String::from_utf8_lossy(&data).into_owned();
                let lines: Vec<&str> = text.split_inclusive('\n').collect();
                if !lines.is_empty() {
                    let line = lines[random.below(lines.len())].to_string();
                    let place = random.below(lines.len() + 1);
                    let mut out: String = lines[..place].concat();
                    out += &line;
                    out += &lines[place..].concat();
                    data = out.into_bytes();
                }
            }
            5 => data.truncate(at),
            6 => {
                // Replace a run of digits with a very long number.
                if let Some(start) = data.iter().skip(at).position(u8::is_ascii_digit) {
                    let start = at + start;
                    let end = data[start..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(data.len(), |length| start + length);
                    let long = "9".repeat(1 + random.below(64));
                    data.splice(start..end, long.bytes());
                }
            }
            _ => {
                let token = TOKENS[random.below(TOKENS.len())];
                data.splice(at..at, token.bytes());
            }
        }
    }
    data
}

/// xorshift64*: deterministic, so a failure reproduces on every run.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}
