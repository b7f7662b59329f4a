//! Bad input, as a user types it, through the real binary: broken spec and team files
//! (wrong types, unknown fields, huge values, odd Unicode, empty files, YAML bombs, deep
//! nesting, duplicate keys, tabs, several documents, escaping paths), bad `tfimg run`
//! flags, and `tfimg save`/`tfimg load` misused (no target or output, an output that is a
//! folder, bundles that are empty, text, a plain tar, or hold an escaping path or a link). Every case must exit 1 with nothing on stdout, name the place (the file's
//! line and column, or the flag), stay readable, finish quickly, and leave nothing behind:
//! no file in the scratch folder, no container. The exit code and whole stderr of every
//! case are one snapshot (`tests/snapshots/bad_inputs__bad_inputs_exit_1_...snap`).
//! Where the product is known to fall short, the snapshot records the output a user
//! should get, so those cases fail until the product is fixed; one run lists them all.
//!
//! Team files are given to `tfimg compose` with `DOCKER_HOST` pointing at no daemon, so a
//! team file that is wrongly accepted ends at the engine instead of building images.
//! Sweep files are given to `tfimg sweep FILE --dry-run` the same way, sweep names to
//! `tfimg sweep report`.
//! `run` cases use `cpu-headless` with `--no-start --no-build` and a unique `--name`
//! against the real engine.
//!
//! In the snapshot, what a terminal would not show is made visible: a unit of up to 8
//! characters repeated 16 times or more is written `⟨'a' × 100000⟩` or `⟨'{a: ' × 10000⟩`,
//! a tab `⟨tab⟩`, invisible or control characters `⟨U+200B⟩`, bytes that are not UTF-8
//! `⟨byte 0xE9⟩`; files and containers a case left behind are listed under `created:`.
//! Temporary folders read `[DIR]` and the unique container name `[NAME]`. The `note:`
//! `run --no-build` prints when the warm image is older than the spec depends on the
//! machine's cache and is left out.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{scratch, tfimg_with_env, unique, DockerGuard, HOST_CA};

/// A bad input must be refused within this (debug build, busy 2-core machine).
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// The snapshot every case's exit code and whole stderr are recorded in.
const SNAPSHOT: &str = "bad_inputs_exit_1_with_a_clear_message_and_create_nothing";

/// Where team and spec commands look for a daemon: nowhere.
const NO_DAEMON: (&str, &str) = ("DOCKER_HOST", "unix:///nonexistent/tfimg-bad-inputs.sock");

struct Case {
    name: &'static str,
    input: Input,
    /// What the message must name: `` `./file.yaml`:line:column ``, a file, or a flag.
    names: String,
}

enum Input {
    /// `file` (when given) written into a scratch folder, then `tfimg <args>` there.
    File {
        args: Vec<String>,
        file: Option<(String, Vec<u8>)>,
    },
    /// `tfimg run cpu-headless --no-start --no-build --name <unique> <flags>`, against
    /// the real engine unless `no_daemon`.
    Run { flags: Vec<String>, no_daemon: bool },
    /// `tfimg <args>` with one of tfimg's own environment variables set to `value`.
    Variable {
        args: Vec<String>,
        variable: &'static str,
        value: &'static str,
    },
    /// `tfimg <args>` with these variables (`[DIR]` in a value is the scratch folder) and
    /// `file` written first; only what `env` names chooses the engine.
    Environment {
        args: Vec<String>,
        env: Vec<(&'static str, &'static str)>,
        file: Option<(String, Vec<u8>)>,
    },
}

/// `tfimg <args>` with `TFIMG_TODAY=<value>`: the message must name the variable.
fn today(name: &'static str, value: &'static str, args: &[&str]) -> Case {
    Case {
        name,
        names: "`TFIMG_TODAY`".to_string(),
        input: Input::Variable {
            args: args.iter().map(|arg| arg.to_string()).collect(),
            variable: "TFIMG_TODAY",
            value,
        },
    }
}

/// `tfimg show ./<name>.yaml` on a spec with `text`; the error is at `at` (`line:column`).
fn spec(name: &'static str, at: &str, text: &str) -> Case {
    spec_bytes(name, at, text.as_bytes().to_vec())
}

fn spec_bytes(name: &'static str, at: &str, bytes: Vec<u8>) -> Case {
    let path = format!("./{name}.yaml");
    Case {
        name,
        names: format!("`{path}`:{at}"),
        input: Input::File {
            args: vec!["show".into(), path.clone()],
            file: Some((path, bytes)),
        },
    }
}

/// `tfimg lock SPEC --check -o ./<name>.lock` on a lock file with `text`.
fn lock(name: &'static str, spec: &str, at: &str, text: &str) -> Case {
    let path = format!("./{name}.lock");
    Case {
        name,
        names: format!("`{path}`:{at}"),
        input: Input::File {
            args: ["lock", spec, "--check", "-o", &path]
                .iter()
                .map(|arg| arg.to_string())
                .collect(),
            file: Some((path, text.as_bytes().to_vec())),
        },
    }
}

/// A real lock, for cases that break one thing in it.
const BUILTIN_LOCK: &str = include_str!("../images/cpu-headless.lock");

/// `tfimg compose ./<name>.yaml` on a team file.
fn team(name: &'static str, at: &str, text: &str) -> Case {
    let path = format!("./{name}.yaml");
    Case {
        name,
        names: format!("`{path}`:{at}"),
        input: Input::File {
            args: vec!["compose".into(), path.clone()],
            file: Some((path, text.as_bytes().to_vec())),
        },
    }
}

/// `tfimg k8s ./<name>.yaml` on a team file with `text`; the error is at `at`.
fn team_k8s(name: &'static str, at: &str, text: &str) -> Case {
    let path = format!("./{name}.yaml");
    Case {
        name,
        names: format!("`{path}`:{at}"),
        input: Input::File {
            args: vec!["k8s".into(), path.clone()],
            file: Some((path, text.as_bytes().to_vec())),
        },
    }
}

/// `tfimg sweep ./<name>.yaml --dry-run` on a sweep file.
fn sweep(name: &'static str, at: &str, text: &str) -> Case {
    let path = format!("./{name}.yaml");
    Case {
        name,
        names: format!("`{path}`:{at}"),
        input: Input::File {
            args: vec!["sweep".into(), path.clone(), "--dry-run".into()],
            file: Some((path, text.as_bytes().to_vec())),
        },
    }
}

/// `tfimg sweep ./<name>.yaml --k8s [-o out] <flags>` on a sweep file; the message must
/// name `names` (`line:column` in the file, or a flag).
fn sweep_k8s(name: &'static str, names: &str, text: &str, flags: &[&str]) -> Case {
    let path = format!("./{name}.yaml");
    let mut args: Vec<String> = ["sweep", &path, "--k8s"].map(String::from).to_vec();
    if !flags.contains(&"-o") {
        args.extend(["-o".to_string(), "out".to_string()]);
    }
    args.extend(flags.iter().map(|flag| flag.to_string()));
    let names = match names.starts_with('`') || names.starts_with('\'') {
        true => names.to_string(),
        false => format!("`{path}`:{names}"),
    };
    Case {
        name,
        names,
        input: Input::File {
            args,
            file: Some((path, text.as_bytes().to_vec())),
        },
    }
}

/// A sweep file whose command uses `{lr}`, with `rest` from line 4 on.
fn sweep_with(rest: &str) -> String {
    format!("sweep: lab\nspec: cpu-headless\ncommand: [python, train.py, --lr, \"{{lr}}\"]\n{rest}")
}

/// A team file whose members start with `alice` on line 5, `spec: cpu-headless` by default.
fn members(rest: &str) -> String {
    format!("team: lab\ndefaults:\n  spec: cpu-headless\nmembers:\n{rest}")
}

/// `tfimg run ... <flags>`; the message must contain `names` (the flag as it echoes it).
fn run(name: &'static str, names: &str, flags: &[&str]) -> Case {
    Case {
        name,
        names: names.to_string(),
        input: Input::Run {
            flags: flags.iter().map(|flag| flag.to_string()).collect(),
            no_daemon: false,
        },
    }
}

/// `tfimg <args>` choosing an engine through `env` (and `file`, such as a Docker config):
/// the message must name `names`.
fn engine(
    name: &'static str,
    names: &str,
    args: &[&str],
    env: &[(&'static str, &'static str)],
    file: Option<(&str, &str)>,
) -> Case {
    Case {
        name,
        names: names.to_string(),
        input: Input::Environment {
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: env.to_vec(),
            file: file.map(|(path, text)| (path.to_string(), text.as_bytes().to_vec())),
        },
    }
}

/// `tfimg <args>` in a folder holding `./b.tar` with `bundle` (when given); the message
/// must name `names`.
fn file_case(name: &'static str, names: &str, args: &[&str], bundle: Option<Vec<u8>>) -> Case {
    Case {
        name,
        names: names.to_string(),
        input: Input::File {
            args: args.iter().map(|arg| arg.to_string()).collect(),
            file: bundle.map(|bytes| ("./b.tar".to_string(), bytes)),
        },
    }
}

/// `tfimg serve ARGS` in a scratch folder holding `file` (path, bytes) when given.
fn serve_case(name: &'static str, names: &str, args: &[&str], file: Option<(&str, &[u8])>) -> Case {
    Case {
        name,
        names: names.to_string(),
        input: Input::File {
            args: args.iter().map(|arg| arg.to_string()).collect(),
            file: file.map(|(path, bytes)| (format!("./{path}"), bytes.to_vec())),
        },
    }
}

/// A tar of `entries` (path, kind, bytes) as ustar headers written by hand (the tar crate
/// refuses to write `..`), mtime 0, ended by two zero blocks.
fn hand_tar(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, kind, bytes) in entries {
        let mut header = tar::Header::new_ustar();
        header.as_mut_bytes()[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(*kind);
        if *kind == tar::EntryType::Symlink {
            header.set_link_name("/etc/passwd").unwrap();
        }
        header.set_cksum();
        builder.append(&header, *bytes).unwrap();
    }
    builder.into_inner().unwrap()
}

/// A bundle made by hand, laid out as `tfimg save` lays it out: a manifest listing one
/// spec in `part` (holding `bytes`), the entry for it of `kind`, the manifest's checksum.
fn hand_bundle(part: &str, kind: tar::EntryType, bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    let hex = |bytes: &[u8]| -> String {
        sha2::Sha256::digest(bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    };
    let manifest = serde_json::to_vec_pretty(&serde_json::json!({
        "kind": "tfimg-bundle", "format": 1, "tfimg": "0.1.0", "created_unix": 0,
        "parts": [{"path": part, "size": bytes.len(), "sha256": hex(bytes)}],
        "images": [],
        "specs": [{"name": "x", "source": "file", "part": part, "lock": null, "image": null}],
    }))
    .unwrap();
    let checksum = format!("{}  manifest.json\n", hex(&manifest));
    hand_tar(&[
        ("manifest.json", tar::EntryType::Regular, &manifest),
        (part, kind, bytes),
        (
            "manifest.sha256",
            tar::EntryType::Regular,
            checksum.as_bytes(),
        ),
    ])
}

/// Nine levels of nine aliases: 9^10 values once expanded.
fn billion_laughs() -> String {
    let mut levels = vec![format!("&a0 [{}]", ["x"; 9].join(", "))];
    for level in 1..10 {
        let previous = format!("*a{}", level - 1);
        levels.push(format!("&a{level} [{}]", [previous.as_str(); 9].join(", ")));
    }
    format!("[{}]", levels.join(", "))
}

fn nested_sequences(depth: usize) -> String {
    "[".repeat(depth) + &"]".repeat(depth)
}

fn cases() -> Vec<Case> {
    let long_name = "a".repeat(100_000);
    let laughs = billion_laughs();
    vec![
        // Wrong types.
        spec(
            "ports-string",
            "2:8",
            "extends: cpu-jupyter\nports: \"8888\"\n",
        ),
        spec("env-list", "2:6", "extends: cpu-headless\nenv: [A, B]\n"),
        spec(
            "name-negative-number",
            "1:7",
            "name: -1\nextends: cpu-headless\n",
        ),
        spec("gpu-number", "2:6", "extends: cpu-headless\ngpu: 1\n"),
        spec(
            "workdir-in-the-venv-bin",
            "2:10",
            "extends: cpu-headless\nworkdir: /opt/venv/bin\n",
        ),
        spec(
            "workdir-in-lib",
            "2:10",
            "extends: cpu-headless\nworkdir: /lib/x86_64-linux-gnu\n",
        ),
        spec(
            "workdir-in-proc",
            "2:10",
            "extends: cpu-headless\nworkdir: /proc/self\n",
        ),
        spec(
            "workdir-in-dev-shm",
            "2:10",
            "extends: cpu-headless\nworkdir: /dev/shm\n",
        ),
        spec(
            "workdir-in-the-ssh-folder",
            "2:10",
            "extends: cpu-headless\nworkdir: /home/tf/.ssh\n",
        ),
        spec(
            "pip-map",
            "3:8",
            "extends: cpu-headless\npackages:\n  pip: {numpy: 1}\n",
        ),
        spec(
            "top-level-sequence",
            "1:1",
            "- extends: cpu-headless\n- tensorflow: \"2.9\"\n",
        ),
        // Unknown fields.
        spec(
            "unknown-top-field",
            "2:1",
            "extends: cpu-headless\ncolour: blue\n",
        ),
        spec(
            "unknown-packages-field",
            "3:3",
            "extends: cpu-headless\npackages:\n  conda: [numpy]\n",
        ),
        spec(
            "unknown-files-field",
            "3:3",
            "extends: cpu-headless\nfiles:\n  - {src: code, dest: /x}\n",
        ),
        // Huge values.
        spec(
            "tensorflow-huge-number",
            "2:13",
            "extends: cpu-headless\ntensorflow: 99999999999999999999\n",
        ),
        spec(
            "tensorflow-huge-quoted",
            "2:13",
            "extends: cpu-headless\ntensorflow: \"99999999999999999999\"\n",
        ),
        spec(
            "port-1e10",
            "3:12",
            "extends: cpu-jupyter\nports:\n  jupyter: 1e10\n",
        ),
        spec(
            "name-100000-characters",
            "1:7",
            &format!("name: {long_name}\nextends: cpu-headless\n"),
        ),
        // Unicode.
        spec("name-emoji", "1:7", "name: lab-😀\nextends: cpu-headless\n"),
        spec(
            "env-key-right-to-left",
            "3:9",
            "extends: cpu-headless\nenv:\n  \u{5e9}\u{5dc}\u{5d5}\u{5dd}: \"1\"\n",
        ),
        spec(
            "name-zero-width-space",
            "1:7",
            "name: lab\u{200b}\nextends: cpu-headless\n",
        ),
        spec_bytes(
            "not-utf-8",
            "3:17",
            b"name: lab\nextends: cpu-headless\ndescription: caf\xe9\n".to_vec(),
        ),
        // Empty files.
        spec("zero-bytes", "1:1", ""),
        spec("only-whitespace", "1:1", "   \n\t\n  \n"),
        spec("only-a-comment", "1:1", "# nothing here yet\n"),
        spec("only-a-document-marker", "1:1", "---\n"),
        spec("null", "1:1", "null\n"),
        // Bombs and deep nesting: a clear error, quickly.
        spec(
            "billion-laughs",
            "3:3",
            &format!("extends: cpu-headless\nfiles:\n  - {laughs}\n"),
        ),
        spec(
            "billion-laughs-as-unknown-fields",
            "1:1",
            &format!("a: {laughs}\nextends: cpu-headless\n"),
        ),
        spec("sequences-10000-deep", "1:1", &nested_sequences(10_000)),
        spec(
            "sequences-10000-deep-in-files",
            "3:131",
            &format!(
                "extends: cpu-headless\nfiles:\n  - {}\n",
                nested_sequences(10_000)
            ),
        ),
        spec(
            "maps-2000-deep",
            "1:1",
            &(0..2_000)
                .map(|level| format!("{}a:\n", " ".repeat(level)))
                .collect::<String>(),
        ),
        spec("flow-maps-10000-deep", "1:2", &"{a: ".repeat(10_000)),
        // Unclosed flow mappings cost the YAML parser quadratic time: 30 000 levels (120 kB)
        // must still be refused within the time limit.
        spec("flow-maps-30000-deep", "1:2", &"{a: ".repeat(30_000)),
        // Duplicate keys, tabs, several documents.
        spec(
            "duplicate-key",
            "2:1",
            "name: a\nname: b\nextends: cpu-headless\n",
        ),
        spec(
            "tab-indentation",
            "3:1",
            "extends: cpu-headless\npackages:\n\tpip: [numpy]\n",
        ),
        spec(
            "two-documents",
            "2:1",
            "extends: cpu-headless\n---\nextends: cpu-jupyter\n",
        ),
        // Paths.
        spec(
            "files-source-escapes-to-etc",
            "2:1",
            "extends: cpu-headless\nfiles: [\"../../../../../../../../../../etc\"]\n",
        ),
        spec(
            "files-source-absolute",
            "2:1",
            "extends: cpu-headless\nfiles: [\"/etc\"]\n",
        ),
        spec(
            "files-destination-relative",
            "2:1",
            "extends: cpu-headless\nfiles: [\"code:relative\"]\n",
        ),
        spec(
            "files-destination-with-dot-dot",
            "2:1",
            "extends: cpu-headless\nfiles: [{src: code, dst: /tf/../etc}]\n",
        ),
        Case {
            name: "files-source-missing-render-o",
            names: "`./missing-source.yaml`:2:1".into(),
            input: Input::File {
                args: ["render", "./missing-source.yaml", "-o", "out"]
                    .map(String::from)
                    .to_vec(),
                file: Some((
                    "./missing-source.yaml".into(),
                    b"extends: cpu-headless\nfiles: [\"nope\"]\n".to_vec(),
                )),
            },
        },
        Case {
            name: "spec-path-with-spaces-missing",
            names: "`./my specs/lab.yaml`".into(),
            input: Input::File {
                args: vec!["show".into(), "./my specs/lab.yaml".into()],
                file: None,
            },
        },
        Case {
            name: "spec-path-with-spaces",
            names: "`./my specs/lab.yaml`:2:10".into(),
            input: Input::File {
                args: vec!["show".into(), "./my specs/lab.yaml".into()],
                file: Some((
                    "./my specs/lab.yaml".into(),
                    b"extends: cpu-base\nservice: jupiter\n".to_vec(),
                )),
            },
        },
        // Team files.
        team(
            "member-without-name",
            "5:5",
            &members("  - spec: cpu-headless\n"),
        ),
        team(
            "duplicate-member-names",
            "7:5",
            &members("  - name: alice\n  - name: bob\n  - name: alice\n"),
        ),
        team(
            "member-with-unknown-spec",
            "6:5",
            &members("  - name: alice\n    spec: gpu-jupyterr\n"),
        ),
        team(
            "ports-clash",
            "8:5",
            &members(concat!(
                "  - name: alice\n    ports: {jupyter: 8890}\n",
                "  - name: bob\n    ports:\n      tensorboard: 8890\n",
            )),
        ),
        team(
            "gpus-clash",
            "8:5",
            &members("  - name: alice\n    gpus: [0]\n  - name: bob\n    gpus: \"0\"\n"),
        ),
        team(
            "negative-gpus",
            "6:5",
            &members("  - name: alice\n    gpus: -1\n"),
        ),
        team(
            "zero-workers",
            "6:5",
            &members("  - name: alice\n    workers: 0\n    command: [python, train.py]\n"),
        ),
        team(
            "team-name-uppercase",
            "1:7",
            "team: VisionLab\nmembers:\n  - name: alice\n    spec: cpu-headless\n",
        ),
        team(
            "team-name-unicode",
            "1:7",
            "team: équipe\nmembers:\n  - name: alice\n    spec: cpu-headless\n",
        ),
        team(
            "unknown-member-field",
            "6:5",
            &members("  - name: alice\n    gpu_ids: [0]\n"),
        ),
        team(
            "model-config-with-model",
            "8:5",
            &members("  - name: fraud\n    spec: cpu-serving\n    model: ./export\n    model_config: ./models.config\n"),
        ),
        team(
            "unknown-team-field",
            "2:1",
            "team: lab\nmember:\n  - name: alice\n",
        ),
        team(
            "team-name-90-characters",
            "1:7",
            &format!(
                "team: {}\nmembers:\n  - name: alice\n    spec: cpu-headless\n",
                "a".repeat(90)
            ),
        ),
        team(
            "team-name-ends-with-dash",
            "1:7",
            "team: lab-\nmembers:\n  - name: alice\n    spec: cpu-headless\n",
        ),
        team(
            "member-name-ends-with-dash",
            "5:5",
            &members("  - name: alice-\n"),
        ),
        team(
            "team-and-member-names-too-long-for-kubernetes",
            "5:5",
            &format!(
                "team: {}\ndefaults:\n  spec: cpu-headless\nmembers:\n  - name: {}\n",
                "t".repeat(40),
                "m".repeat(20)
            ),
        ),
        team(
            "workers-over-100000",
            "6:5",
            &members("  - name: alice\n    workers: 100001\n    command: [python, train.py]\n"),
        ),
        team("member-name-number", "5:5", &members("  - name: 42\n")),
        team("member-name-emoji", "5:5", &members("  - name: alice😀\n")),
        team(
            "member-ports-string",
            "6:12",
            &members("  - name: alice\n    ports: \"8888\"\n"),
        ),
        team(
            "member-env-list",
            "6:10",
            &members("  - name: alice\n    env: [A=1]\n"),
        ),
        team(
            "member-port-huge",
            "6:5",
            &members("  - name: alice\n    ports: {jupyter: 99999999999999999999}\n"),
        ),
        team(
            "member-memory-huge",
            "6:5",
            &members("  - name: alice\n    memory: 99999999999999999999g\n"),
        ),
        team(
            "member-mount-relative-destination",
            "6:5",
            &members("  - name: alice\n    mounts: [\"./a:relative\"]\n"),
        ),
        team("team-null", "1:1", "null\n"),
        team(
            "team-billion-laughs",
            "6:5",
            &members(&format!("  - name: alice\n    gpus: {laughs}\n")),
        ),
        team(
            "team-sequences-10000-deep",
            "6:136",
            &members(&format!(
                "  - name: alice\n    gpus: {}\n",
                nested_sequences(10_000)
            )),
        ),
        team(
            "team-duplicate-key",
            "2:1",
            "team: lab\nteam: lab2\nmembers: [{name: a, spec: cpu-headless}]\n",
        ),
        team(
            "team-tab-indentation",
            "3:1",
            "team: lab\nmembers:\n\t- name: alice\n",
        ),
        team(
            "team-two-documents",
            "3:1",
            "team: lab\nmembers: [{name: a, spec: cpu-headless}]\n---\nteam: b\n",
        ),
        // Serving members.
        team(
            "team-serving-member-without-model",
            "6:5",
            &members("  - name: alice\n    spec: cpu-serving\n"),
        ),
        team(
            "team-model-on-a-jupyter-member",
            "7:5",
            &members("  - name: alice\n    spec: cpu-jupyter\n    model: ./export/fraud\n"),
        ),
        team(
            "team-model-folder-missing",
            "7:5",
            &members("  - name: alice\n    spec: cpu-serving\n    model: ./export/fraud\n"),
        ),
        team(
            "team-model-name-without-model",
            "7:5",
            &members("  - name: alice\n    spec: cpu-serving\n    model_name: fraud\n"),
        ),
        team(
            "team-model-name-invalid",
            "8:5",
            &members(
                "  - name: alice\n    spec: cpu-serving\n    model: ./export/fraud\n    model_name: \"fraud detector\"\n",
            ),
        ),
        team(
            "team-model-with-command",
            "7:5",
            &members(
                "  - name: alice\n    spec: cpu-serving\n    model: ./export/fraud\n    command: [python, x.py]\n",
            ),
        ),
        team(
            "team-model-folder-has-colon",
            "6:5",
            &members("  - name: alice\n    model: \"./export:fraud\"\n"),
        ),
        team(
            "team-max-batch-zero",
            "8:5",
            &members(
                "  - name: alice\n    spec: cpu-serving\n    model: ./export/fraud\n    max_batch: 0\n",
            ),
        ),
        team(
            "team-env-sets-a-tfimg-variable",
            "7:7",
            &members("  - name: alice\n    env:\n      TFIMG_UID: 0\n"),
        ),
        team(
            "team-batching-with-max-batch",
            "8:5",
            &members(
                "  - name: alice\n    spec: cpu-serving\n    model: ./export/fraud\n    batching: true\n    max_batch: 8\n",
            ),
        ),
        team(
            "team-max-batch-without-model",
            "7:5",
            &members("  - name: alice\n    spec: cpu-serving\n    max_batch: 8\n"),
        ),
        // Team gateways.
        team(
            "gateway-route-unknown",
            "7:10",
            &members("  - name: alice\ngateway:\n  route: subdomain\n"),
        ),
        team(
            "gateway-host-route-without-domain",
            "7:10",
            &members("  - name: alice\ngateway:\n  route: host\n"),
        ),
        team(
            "gateway-compose-without-domain",
            "6:1",
            &members("  - name: alice\ngateway:\n  port: 9443\n"),
        ),
        team_k8s(
            "gateway-k8s-without-domain",
            "6:1",
            &members("  - name: alice\ngateway:\n  port: 9443\n"),
        ),
        team(
            "gateway-public-without-domain",
            "7:11",
            &members("  - name: alice\ngateway:\n  public: true\n"),
        ),
        team(
            "gateway-domain-not-a-host-name",
            "7:11",
            &members("  - name: alice\ngateway:\n  domain: lab_example.org\n"),
        ),
        team(
            "gateway-port-out-of-range",
            "7:9",
            &members("  - name: alice\ngateway:\n  port: 70000\n"),
        ),
        team(
            "gateway-tls-unknown-word",
            "7:8",
            &members("  - name: alice\ngateway:\n  tls: off\n"),
        ),
        team(
            "gateway-tls-without-key",
            "7:3",
            &members("  - name: alice\ngateway:\n  tls: {cert: cert.pem}\n"),
        ),
        team(
            "gateway-unknown-field",
            "7:3",
            &members("  - name: alice\ngateway:\n  ssl: true\n"),
        ),
        team(
            "gateway-member-with-jupyter-port",
            "6:5",
            &members("  - name: alice\n    ports: {jupyter: 8890}\ngateway: {port: 9443}\n"),
        ),
        team(
            "gateway-member-on-gateway-port",
            "7:5",
            &members("  - name: carol\n    spec: cpu-ssh\n    ports: {ssh: 9443}\ngateway: {port: 9443}\n"),
        ),
        // Team hubs.
        team(
            "hub-and-gateway",
            "7:1",
            &members("  - name: alice\ngateway: {port: 9443}\nhub: {auth: native}\n"),
        ),
        team(
            "hub-auth-unknown",
            "7:9",
            &members("  - name: alice\nhub:\n  auth: ldap\n"),
        ),
        team(
            "hub-admin-not-a-member",
            "7:11",
            &members("  - name: alice\nhub:\n  admins: [mallory]\n"),
        ),
        team(
            "hub-unknown-field",
            "7:3",
            &members("  - name: alice\nhub:\n  signup: true\n"),
        ),
        team(
            "hub-member-named-hub",
            "5:5",
            &members("  - name: hub\nhub: {}\n"),
        ),
        team(
            "hub-choices-without-hub",
            "6:5",
            &members("  - name: alice\n    choices: [cpu-jupyter]\n"),
        ),
        team(
            "hub-choice-listed-twice",
            "7:5",
            &members("  - name: alice\n    spec: cpu-jupyter\n    choices: [lab, lab]\nhub: {}\n"),
        ),
        team_k8s(
            "hub-choice-unknown-spec",
            "7:5",
            &members("  - name: alice\n    spec: cpu-jupyter\n    choices: [cpu-jupytr]\nhub: {}\n"),
        ),
        team_k8s(
            "hub-choice-serves-no-jupyter",
            "7:5",
            &members("  - name: alice\n    spec: cpu-jupyter\n    choices: [cpu-ssh]\nhub: {}\n"),
        ),
        team_k8s(
            "hub-choices-of-a-headless-member",
            "6:5",
            &members("  - name: alice\n    choices: [cpu-jupyter]\nhub: {}\n"),
        ),
        Case {
            name: "hub-compose",
            names: "`tfimg compose` does not write a team's hub".into(),
            input: Input::File {
                args: vec!["compose".into(), "./hub-compose.yaml".into()],
                file: Some((
                    "./hub-compose.yaml".into(),
                    members("  - name: alice\nhub: {}\n").into_bytes(),
                )),
            },
        },
        Case {
            name: "hub-passwd-not-a-member",
            names: "`dave` is not a member of team `lab`".into(),
            input: Input::File {
                args: vec!["hub".into(), "passwd".into(), "./hub-passwd.yaml".into(), "dave".into()],
                file: Some((
                    "./hub-passwd.yaml".into(),
                    members("  - name: alice\n    spec: cpu-jupyter\nhub: {}\n").into_bytes(),
                )),
            },
        },
        Case {
            name: "hub-passwd-without-hub",
            names: "team file `./no-hub.yaml` has no `hub:`".into(),
            input: Input::File {
                args: vec!["hub".into(), "passwd".into(), "./no-hub.yaml".into(), "alice".into()],
                file: Some((
                    "./no-hub.yaml".into(),
                    members("  - name: alice\n").into_bytes(),
                )),
            },
        },
        team(
            "gateway-member-named-gateway",
            "5:5",
            &members("  - name: gateway\ngateway: {}\n"),
        ),
        Case {
            name: "team-path-with-spaces-missing",
            names: "`./our team.yaml`".into(),
            input: Input::File {
                args: vec!["compose".into(), "./our team.yaml".into()],
                file: None,
            },
        },
        // Sweep files.
        sweep(
            "sweep-unknown-param-in-command",
            "3:49",
            "sweep: lab\nspec: cpu-headless\ncommand: [python, train.py, --lr, \"{lr}\", --wd, \"{wd}\"]\nparams: {lr: [0.1, 0.01]}\n",
        ),
        sweep(
            "sweep-misspelt-param-in-command",
            "3:35",
            "sweep: lab\nspec: cpu-headless\ncommand: [python, train.py, --lr, \"{lr_rate}\"]\nparams: {lr_rte: [0.1]}\n",
        ),
        sweep("sweep-empty-grid", "4:1", &sweep_with("params: {}\n")),
        sweep("sweep-empty-axis", "5:7", &sweep_with("params:\n  lr: []\n")),
        sweep("sweep-axis-not-a-list", "5:7", &sweep_with("params:\n  lr: 0.1\n")),
        sweep(
            "sweep-param-value-a-list",
            "5:13",
            &sweep_with("params:\n  lr: [0.1, [0.2, 0.3]]\n"),
        ),
        sweep(
            "sweep-same-value-twice",
            "5:15",
            &sweep_with("params:\n  lr: [0.001, 1e-3]\n"),
        ),
        sweep(
            "sweep-params-and-random",
            "5:1",
            &sweep_with("params: {lr: [0.1]}\nrandom: {count: 4, lr: {uniform: [0, 1]}}\n"),
        ),
        sweep("sweep-defines-no-trials", "1:1", &sweep_with("")),
        sweep(
            "sweep-gpus-per-trial-larger-than-the-pool",
            "6:17",
            &sweep_with("params: {lr: [0.1]}\ngpus: [0, 1]\ngpus_per_trial: 3\n"),
        ),
        sweep(
            "sweep-gpus-a-count-above-the-limit",
            "5:7",
            &sweep_with("params: {lr: [0.1]}\ngpus: 1001\n"),
        ),
        sweep(
            "sweep-shared-gpus-with-two-per-trial",
            "7:17",
            &sweep_with("params: {lr: [0.1]}\ngpus: [0, 1]\ngpus_per_trial: 2\ntrials_per_gpu: 2\n"),
        ),
        sweep(
            "sweep-gpus-per-trial-without-gpus",
            "5:17",
            &sweep_with("params: {lr: [0.1]}\ngpus_per_trial: 2\n"),
        ),
        sweep(
            "sweep-random-without-count",
            "4:1",
            &sweep_with("random:\n  seed: 7\n  lr: {loguniform: [1e-5, 1e-2]}\n"),
        ),
        sweep(
            "sweep-loguniform-from-zero",
            "4:37",
            &sweep_with("random: {count: 4, lr: {loguniform: [0, 1]}}\n"),
        ),
        sweep(
            "sweep-unknown-distribution",
            "4:25",
            &sweep_with("random: {count: 4, lr: {gaussian: [0, 1]}}\n"),
        ),
        sweep(
            "sweep-duplicate-trials",
            "7:5",
            &sweep_with("trials:\n  - {lr: 0.1}\n  - {lr: 0.01}\n  - {lr: 0.1}\n"),
        ),
        sweep(
            "sweep-trial-missing-a-param",
            "6:5",
            &sweep_with("trials:\n  - {lr: 0.1, wd: 0}\n  - {lr: 0.2}\n"),
        ),
        sweep(
            "sweep-unknown-field",
            "5:1",
            &sweep_with("params: {lr: [0.1]}\ngpu_ids: [0]\n"),
        ),
        sweep(
            "sweep-asha-without-max-epochs",
            "6:13",
            &sweep_with("params: {lr: [0.1]}\nobjective: {metric: acc, mode: max}\nearly_stop: {rule: asha}\n"),
        ),
        sweep(
            "sweep-grace-past-max-epochs",
            "6:48",
            &sweep_with("params: {lr: [0.1]}\nobjective: {metric: acc, mode: max}\nearly_stop: {rule: asha, max_epochs: 3, grace: 5}\n"),
        ),
        sweep(
            "sweep-tpe-only-fixed-params",
            "4:1",
            &sweep_with("tpe: {count: 4, lr: {choice: [0.1]}}\nobjective: {metric: acc, mode: max}\n"),
        ),
        sweep(
            "sweep-tpe-count-past-its-space",
            "4:14",
            &sweep_with("tpe: {count: 9, lr: {choice: [0.1, 0.01]}}\nobjective: {metric: acc, mode: max}\n"),
        ),
        sweep(
            "sweep-tpe-without-objective",
            "4:1",
            &sweep_with("tpe: {count: 9, lr: {loguniform: [1e-5, 1e-2]}}\n"),
        ),
        sweep(
            "sweep-timeout-without-unit",
            "5:10",
            &sweep_with("params: {lr: [0.1]}\ntimeout: 3600\n"),
        ),
        sweep(
            "sweep-spec-and-image",
            "4:1",
            &sweep_with("image: tfimg/cpu-headless:2.9.3\nparams: {lr: [0.1]}\n"),
        ),
        sweep(
            "sweep-unknown-spec",
            "2:7",
            "sweep: lab\nspec: cpu-headlesss\ncommand: [python, \"{lr}\"]\nparams: {lr: [0.1]}\n",
        ),
        sweep(
            "sweep-name-uppercase",
            "1:8",
            "sweep: LR-Grid\nspec: cpu-headless\ncommand: [python, \"{lr}\"]\nparams: {lr: [0.1]}\n",
        ),
        sweep(
            "sweep-brace-never-closed",
            "3:19",
            "sweep: lab\nspec: cpu-headless\ncommand: [python, \"{lr\"]\nparams: {lr: [0.1]}\n",
        ),
        sweep(
            "sweep-mount-relative-destination",
            "5:10",
            &sweep_with("params: {lr: [0.1]}\nmounts: [\"./code:code\"]\n"),
        ),
        sweep(
            "sweep-mount-over-the-trial-folder",
            "5:10",
            &sweep_with("params: {lr: [0.1]}\nmounts: [\"./out:/tfimg/trial\"]\n"),
        ),
        sweep(
            "sweep-env-sets-a-tfimg-variable",
            "5:7",
            &sweep_with("params: {lr: [0.1]}\nenv: {TFIMG_TRIAL: x}\n"),
        ),
        sweep(
            "sweep-max-failed-0",
            "5:13",
            &sweep_with("params: {lr: [0.1]}\nmax_failed: 0\n"),
        ),
        sweep(
            "sweep-objective-without-mode",
            "5:12",
            &sweep_with("params: {lr: [0.1]}\nobjective: {metric: val_accuracy}\n"),
        ),
        sweep(
            "sweep-objective-use-unknown",
            "5:51",
            &sweep_with("params: {lr: [0.1]}\nobjective: {metric: val_accuracy, mode: max, use: final}\n"),
        ),
        sweep(
            "sweep-billion-laughs",
            "4:9",
            &sweep_with(&format!("params: {{lr: {laughs}}}\n")),
        ),
        sweep("sweep-empty-file", "1:1", ""),
        sweep(
            "sweep-nul-in-a-command-argument",
            "3:27",
            "sweep: lab\nspec: cpu-headless\ncommand: [python, \"{lr}\", \"a\\0b\"]\nparams: {lr: [0.1]}\n",
        ),
        sweep(
            "sweep-nul-in-an-env-value",
            "5:10",
            &sweep_with("params: {lr: [0.1]}\nenv: {A: \"x\\0y\"}\n"),
        ),
        // `--k8s`: what a cluster cannot have, and the export's flags.
        sweep_k8s(
            "sweep-k8s-gpus-all",
            "5:7",
            &sweep_with("params: {lr: [0.1]}\ngpus: all\n"),
            &[],
        ),
        sweep_k8s(
            "sweep-k8s-writable-mount",
            "7:5",
            &sweep_with("params: {lr: [0.1]}\nmounts:\n  - ./code:/tf/code:ro\n  - ./out:/tf/out\n"),
            &[],
        ),
        sweep_k8s(
            "sweep-k8s-configmap-over-1-mib",
            "`./sweep-k8s-configmap-over-1-mib.yaml`",
            &sweep_with("random: {count: 10000, seed: 1, lr: {loguniform: [1e-5, 1e-2]}}\n"),
            &[],
        ),
        sweep_k8s(
            "sweep-k8s-registry-not-a-host",
            "`--registry",
            &sweep_with("params: {lr: [0.1]}\n"),
            &["--registry", "registry example"],
        ),
        sweep_k8s(
            "sweep-k8s-volume-size-not-a-size",
            "`--volume-size",
            &sweep_with("params: {lr: [0.1]}\n"),
            &["--volume-size", "10GB"],
        ),
        sweep_k8s(
            "sweep-k8s-output-is-a-file",
            "`-o ./sweep-k8s-output-is-a-file.yaml`",
            &sweep_with("params: {lr: [0.1]}\n"),
            &["-o", "./sweep-k8s-output-is-a-file.yaml"],
        ),
        sweep_k8s(
            "sweep-k8s-and-detach",
            "'--detach'",
            &sweep_with("params: {lr: [0.1]}\n"),
            &["--detach"],
        ),
        Case {
            name: "sweep-k8s-without-output",
            names: "--output <DIR>".into(),
            input: Input::File {
                args: ["sweep", "./lab.yaml", "--k8s"].map(String::from).to_vec(),
                file: Some(("./lab.yaml".into(), sweep_with("params: {lr: [0.1]}\n").into_bytes())),
            },
        },
        Case {
            name: "sweep-file-missing",
            names: "`./nothing.yaml`".into(),
            input: Input::File {
                args: vec!["sweep".into(), "./nothing.yaml".into(), "--dry-run".into()],
                file: None,
            },
        },
        Case {
            name: "sweep-report-of-no-sweep",
            names: "`nothing`".into(),
            input: Input::File {
                args: vec!["sweep".into(), "report".into(), "nothing".into()],
                file: None,
            },
        },
        // `save` and `load`.
        file_case("save-without-output", "--output <FILE>", &["save", "cpu-headless"], None),
        file_case("save-without-target", "<SPEC|IMAGE>", &["save", "-o", "b.tar"], None),
        file_case("save-output-is-a-folder", "`-o .`", &["save", "cpu-headless", "-o", "."], None),
        file_case(
            "save-output-in-a-missing-folder",
            "`-o ./no/such/b.tar`",
            &["save", "cpu-headless", "-o", "./no/such/b.tar"],
            None,
        ),
        file_case(
            "save-spec-file-missing",
            "`./nothing.yaml`",
            &["save", "./nothing.yaml", "-o", "b.tar"],
            None,
        ),
        file_case("load-without-bundle", "<BUNDLE>", &["load"], None),
        file_case("load-bundle-missing", "`./nothing.tar`", &["load", "./nothing.tar"], None),
        file_case("load-empty-file", "`./b.tar`", &["load", "./b.tar"], Some(Vec::new())),
        file_case(
            "load-text-file",
            "`./b.tar`",
            &["load", "./b.tar"],
            Some(b"not a bundle\n".to_vec()),
        ),
        file_case(
            "load-plain-tar",
            "`notes.txt`",
            &["load", "./b.tar"],
            Some(hand_tar(&[("notes.txt", tar::EntryType::Regular, b"hello\n")])),
        ),
        file_case(
            "load-part-escaping-the-bundle",
            "`../evil.yaml`",
            &["load", "./b.tar"],
            Some(hand_bundle("../evil.yaml", tar::EntryType::Regular, b"name: x\n")),
        ),
        file_case(
            "load-part-is-a-link",
            "`specs/x.yaml`",
            &["load", "./b.tar"],
            Some(hand_bundle("specs/x.yaml", tar::EntryType::Symlink, b"")),
        ),
        file_case(
            "load-output-is-a-file",
            "`-o ./b.tar`",
            &["load", "./b.tar", "-o", "./b.tar"],
            Some(hand_bundle("specs/x.yaml", tar::EntryType::Regular, b"name: x\n")),
        ),
        // `run` flags.
        // `tfimg serve`: MODEL_DIR must hold a numbered SavedModel version.
        serve_case("serve-model-dir-missing", "`./nothing`", &["serve", "./nothing"], None),
        serve_case(
            "serve-model-dir-is-a-file",
            "`./model`",
            &["serve", "./model"],
            Some(("model", b"not a folder\n")),
        ),
        serve_case(
            "serve-model-dir-without-versions",
            "`./model`",
            &["serve", "./model"],
            Some(("model/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-version-without-saved-model",
            "`./model`",
            &["serve", "./model"],
            Some(("model/1/variables/variables.index", b"")),
        ),
        serve_case(
            "serve-bad-model-name",
            "`--name my model`",
            &["serve", "./model", "--name", "my model"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-spec-not-serving",
            "`--spec cpu-jupyter`",
            &["serve", "./model", "--spec", "cpu-jupyter"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        // `meta_graphs[0].meta_info_def.tensorflow_version`: 2.20.0, newer than any line.
        serve_case(
            "serve-model-newer-than-every-line",
            "TensorFlow 2.20.0",
            &["serve", "./model"],
            Some((
                "model/1/saved_model.pb",
                b"\x12\x0a\x0a\x08\x2a\x062.20.0",
            )),
        ),
        serve_case(
            "serve-port-zero",
            "`-p 0`",
            &["serve", "./model", "-p", "0"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-grpc-port-too-large",
            "`--grpc-port 70000`",
            &["serve", "./model", "--grpc-port", "70000"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-model-config-relative-base-path",
            "`models.config`:1:40",
            &["serve", "--model-config", "models.config"],
            Some((
                "models.config",
                b"model_config_list { config { name: 'a' base_path: 'model' } }",
            )),
        ),
        serve_case(
            "serve-model-config-unknown-field",
            "`models.config`:2:3",
            &["serve", "--model-config", "models.config"],
            Some(("models.config", b"model_config_list {\n  confg { name: 'a' }\n}\n")),
        ),
        serve_case(
            "serve-model-config-missing",
            "`nothing.config`",
            &["serve", "--model-config", "nothing.config"],
            None,
        ),
        serve_case(
            "serve-max-batch-zero",
            "`--max-batch 0`",
            &["serve", "./model", "--max-batch", "0"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-max-batch-negative",
            "`--max-batch -4`",
            &["serve", "./model", "--max-batch", "-4"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-grpc-channel-arguments-not-grpc",
            "`--grpc-channel-arguments max_connection_age_ms=2000`",
            &["serve", "./model", "--grpc-channel-arguments", "max_connection_age_ms=2000"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-model-config-poll-negative",
            "`--model-config-poll -1`",
            &["serve", "--model-config", "models.config", "--model-config-poll", "-1"],
            Some(("models.config", b"model_config_list {}\n")),
        ),
        serve_case(
            "serve-max-batch-signed",
            "`--max-batch +8`",
            &["serve", "./model", "--max-batch", "+8"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-batching-parameters-unknown-field",
            "`batching.config`:2:1",
            &["serve", "./model", "--batching-parameters", "batching.config"],
            Some((
                "batching.config",
                b"max_batch_size { value: 8 }\nmax_batch_sise { value: 3 }\n",
            )),
        ),
        serve_case(
            "serve-batching-parameters-last-size",
            "`batching.config`:2:1",
            &["serve", "./model", "--enable-batching", "--batching-parameters", "batching.config"],
            Some((
                "batching.config",
                b"max_batch_size { value: 8 }\nallowed_batch_sizes: 4\n",
            )),
        ),
        serve_case(
            "serve-allow-reload-config-without-model-config",
            "`--allow-reload-config`",
            &["serve", "./model", "--allow-reload-config"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        serve_case(
            "serve-memory-not-a-size",
            "`--memory lots`",
            &["serve", "./model", "--memory", "lots"],
            Some(("model/1/saved_model.pb", b"")),
        ),
        // Lock files.
        lock(
            "lock-malformed",
            "cpu-headless",
            "3:1",
            "lock: 1\nspec: \"cpu-headless\n",
        ),
        lock(
            "lock-unknown-field",
            "cpu-headless",
            "3:1",
            "lock: 1\nspec: cpu-headless\nbogus: 1\n",
        ),
        lock(
            "lock-format-2",
            "cpu-headless",
            "3:7",
            &BUILTIN_LOCK.replace("\nlock: 1\n", "\nlock: 2\n"),
        ),
        lock("lock-of-another-spec", "cpu-ssh", "4:7", BUILTIN_LOCK),
        run("gpus-minus-1", "`--gpus", &["--gpus", "-1"]),
        run("gpus-minus-2", "`--gpus", &["--gpus", "-2"]),
        run("gpus-fraction", "`--gpus", &["--gpus", "1.5"]),
        run("gpus-index-twice", "`--gpus", &["--gpus", "0,0"]),
        run("gpus-empty-item", "`--gpus", &["--gpus", "0,,1"]),
        run("gpus-all-and-index", "`--gpus", &["--gpus", "all,0"]),
        run("gpus-empty", "`--gpus", &["--gpus", ""]),
        run("gpus-uuid-prefix-only", "`--gpus", &["--gpus", "GPU-"]),
        run(
            "gpus-10000-digits",
            "`--gpus",
            &["--gpus", &"7".repeat(10_000)],
        ),
        run("port-0", "`-p", &["-p", "0"]),
        run("port-70000", "`-p", &["-p", "70000"]),
        run("port-minus-1", "`-p", &["-p", "-1"]),
        run("port-container-0", "`-p", &["-p", "8888:0"]),
        run("port-letters", "`-p", &["-p", "abc"]),
        run("port-with-address", "`-p", &["-p", "127.0.0.1:99999:80"]),
        run("port-udp", "`-p", &["-p", "8888/udp"]),
        run("mount-empty", "`--mount", &["--mount", ""]),
        run("mount-no-source", "`--mount", &["--mount", ":/x"]),
        run(
            "mount-relative-destination",
            "`--mount",
            &["--mount", "./a:relative"],
        ),
        run(
            "mount-extra-part",
            "`--mount",
            &["--mount", "./a:/x:rw:extra"],
        ),
        run(
            "mount-unknown-option",
            "`--mount",
            &["--mount", "./a:/x:bogus"],
        ),
        run(
            "mount-destination-with-dot-dot",
            "`--mount",
            &["--mount", "./a:/x/../etc"],
        ),
        run("mount-onto-usr", "`--mount", &["--mount", "./a:/usr"]),
        run(
            "mount-above-the-home",
            "`--mount",
            &["--mount", "./a:/home"],
        ),
        run("mount-onto-root", "`--mount", &["--mount", "./a:/"]),
        run(
            "mount-second-one-bad",
            "`--mount",
            &["--mount", "./made", "--mount", "./b:relative"],
        ),
        Case {
            name: "mount-checked-before-the-engine",
            names: "`--mount".into(),
            input: Input::Run {
                flags: vec!["--mount".into(), ":/x".into()],
                no_daemon: true,
            },
        },
        run("sync-missing-source", "`--sync", &["--sync", "./nothere"]),
        run(
            "sync-relative-destination",
            "`--sync",
            &["--sync", ".:relative"],
        ),
        run("sync-onto-etc", "`--sync", &["--sync", ".:/etc"]),
        run("sync-extra-part", "`--sync", &["--sync", ".:/a:/b"]),
        run("sync-back-without-sync", "`--sync-back", &["--sync-back"]),
        run(
            "sync-back-detached",
            "`--sync-back",
            &["-d", "--sync", ".", "--sync-back"],
        ),
        run(
            "sync-into-a-mount",
            "`--sync .:/tf/data/more`",
            &["--mount", "./data", "--sync", ".:/tf/data/more"],
        ),
        Case {
            name: "sync-checked-before-the-engine",
            names: "`--sync".into(),
            input: Input::Run {
                flags: vec!["--sync".into(), "./nothere".into()],
                no_daemon: true,
            },
        },
        run("volume-path", "`--volume", &["--volume", "./data:/tf/data"]),
        run("volume-name-too-short", "`--volume", &["--volume", "d:/x"]),
        run("volume-onto-usr", "`--volume", &["--volume", "data:/usr"]),
        run(
            "volume-above-the-home",
            "`--volume",
            &["--volume", "data:/home"],
        ),
        run(
            "volume-over-a-sync",
            "`--volume data:/tf/project`",
            &["--sync", ".:/tf/project", "--volume", "data:/tf/project"],
        ),
        run("memory-negative", "`--memory", &["--memory", "-1g"]),
        run(
            "memory-huge",
            "`--memory",
            &["--memory", "99999999999999999999g"],
        ),
        run("cpus-0", "`--cpus", &["--cpus", "0"]),
        run("cpus-negative", "`--cpus", &["--cpus", "-3"]),
        run("cpus-rounding-to-no-limit", "`--cpus", &["--cpus", "1e-10"]),
        run(
            "cpus-below-the-smallest-share",
            "`--cpus",
            &["--cpus", "0.009"],
        ),
        run("shm-size-words", "`--shm-size", &["--shm-size", "huge"]),
        run(
            "restart-unknown",
            "`--restart",
            &["-d", "--restart", "sometimes"],
        ),
        run("env-no-name", "`-e", &["--env", "=x"]),
        run("env-name-with-space", "`-e", &["--env", "A B=1"]),
        run("name-with-space", "`--name", &["--name", "bad name"]),
        run("uid-negative", "'--uid <UID>'", &["--uid", "-5"]),
        run("uid-huge", "'--uid <UID>'", &["--uid", "99999999999"]),
        run(
            "uid-unchanged-means-root",
            "'--uid <UID>'",
            &["--uid", "4294967295"],
        ),
        run(
            "uid-above-signed-range",
            "'--uid <UID>'",
            &["--uid", "2147483648"],
        ),
        run(
            "gid-unchanged-means-root",
            "'--gid <GID>'",
            &["--gid", "4294967295"],
        ),
        // The day support windows are judged on.
        today("today-no-such-day", "2026-02-29", &["list"]),
        today("today-day-first", "22.11.2026", &["list"]),
        today("today-empty", "", &["show", "gpu-jupyter"]),
        today("today-with-a-time", "2026-11-22T00:00:00Z", &["doctor", "gpu-jupyter"]),
        today("today-a-word", "tomorrow", &["list", "--json"]),
        // The engine: flags, variables and Docker contexts, refused before any daemon.
        engine(
            "forward-on-a-local-engine",
            "`forward`",
            &["forward", "some-container"],
            &[("DOCKER_HOST", "unix:///var/run/docker.sock")],
            None,
        ),
        engine(
            "engine-host-and-context",
            "`--host` and `--context`",
            &["ps", "--host", "ssh://gpu-box", "--context", "gpu"],
            &[],
            None,
        ),
        engine(
            "engine-host-password",
            "`--host ssh://me:***@gpu-box`",
            &["ps", "--host", "ssh://me:hunter2@gpu-box"],
            &[],
            None,
        ),
        engine(
            "engine-host-npipe",
            "`--host",
            &["build", "cpu-headless", "--host", "npipe:////./pipe/docker_engine"],
            &[],
            None,
        ),
        engine(
            "engine-host-query",
            "`--host",
            &["ps", "-H", "ssh://gpu-box?socket=/x"],
            &[],
            None,
        ),
        engine(
            "engine-docker-host-without-host",
            "`DOCKER_HOST=",
            &["ps"],
            &[("DOCKER_HOST", "ssh://")],
            None,
        ),
        engine(
            "engine-context-missing",
            "(`--context`)",
            &["logs", "x", "--context", "gpu"],
            &[("DOCKER_CONFIG", "[DIR]/docker")],
            None,
        ),
        engine(
            "engine-docker-context-missing",
            "(`DOCKER_CONTEXT`)",
            &["ps"],
            &[
                ("DOCKER_HOST", ""),
                ("DOCKER_CONTEXT", "gpu"),
                ("DOCKER_CONFIG", "[DIR]/docker"),
            ],
            None,
        ),
        engine(
            "engine-current-context-missing",
            "`[DIR]/docker/config.json`",
            &["ps"],
            &[
                ("DOCKER_HOST", ""),
                ("DOCKER_CONTEXT", ""),
                ("DOCKER_CONFIG", "[DIR]/docker"),
            ],
            Some(("docker/config.json", r#"{"auths":{},"currentContext":"gone"}"#)),
        ),
        engine(
            "engine-context-with-a-bad-url",
            "the Docker context `odd`",
            &["ps", "--context", "odd"],
            &[("DOCKER_CONFIG", "[DIR]/docker")],
            Some((
                "docker/contexts/meta/990cb8ebd0afb7150da453a213036a92f2c05e091df0d803e62d257ea7796c27/meta.json",
                r#"{"Name":"odd","Metadata":{},"Endpoints":{"docker":{"Host":"npipe:////./pipe/docker_engine","SkipTLSVerify":false}}}"#,
            )),
        ),
        engine(
            "engine-ssh-command-forwarding",
            "`TFIMG_SSH_COMMAND=",
            &["ps"],
            &[
                ("DOCKER_HOST", "ssh://gpu-box"),
                ("TFIMG_SSH_COMMAND", "ssh -L 8888:localhost:8888"),
            ],
            None,
        ),
        // Issue 44: an `-o` in any spelling ssh reads, and combined flags.
        engine(
            "engine-ssh-command-fork-after-authentication-with-equals",
            "`TFIMG_SSH_COMMAND=",
            &["ps"],
            &[
                ("DOCKER_HOST", "ssh://gpu-box"),
                ("TFIMG_SSH_COMMAND", "ssh -i key -o=ForkAfterAuthentication=yes"),
            ],
            None,
        ),
        engine(
            "engine-ssh-command-stdin-null-with-equals",
            "`TFIMG_SSH_COMMAND=",
            &["ps"],
            &[
                ("DOCKER_HOST", "ssh://gpu-box"),
                ("TFIMG_SSH_COMMAND", "ssh -o=StdinNull=yes"),
            ],
            None,
        ),
        engine(
            "engine-ssh-command-quoted-control-master",
            "`TFIMG_SSH_COMMAND=",
            &["ps"],
            &[
                ("DOCKER_HOST", "ssh://gpu-box"),
                ("TFIMG_SSH_COMMAND", "ssh -o '\"controlmaster\" auto'"),
            ],
            None,
        ),
        engine(
            "engine-ssh-command-combined-master-flag",
            "`TFIMG_SSH_COMMAND=",
            &["ps"],
            &[
                ("DOCKER_HOST", "ssh://gpu-box"),
                ("TFIMG_SSH_COMMAND", "ssh -4vM"),
            ],
            None,
        ),
        engine(
            "engine-ssh-command-unclosed-quote",
            "`TFIMG_SSH_COMMAND=",
            &["ps"],
            &[
                ("DOCKER_HOST", "ssh://gpu-box"),
                ("TFIMG_SSH_COMMAND", "ssh -i 'my key"),
            ],
            None,
        ),
        run(
            "engine-run-host-password",
            "`--host",
            &["--host", "ssh://me:pw@gpu-box"],
        ),
    ]
}

/// What a terminal would not show, made visible (see the module comment).
fn visible(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut index = 0;
    while index < chars.len() {
        if let Some((unit, times)) = repetition(&chars[index..]) {
            let shown = match unit {
                ['\t'] => "tab".to_string(),
                [c] if invisible(*c) => format!("U+{:04X}", *c as u32),
                unit => format!("'{}'", unit.iter().collect::<String>()),
            };
            out += &format!("⟨{shown} × {times}⟩");
            index += unit.len() * times;
            continue;
        }
        match chars[index] {
            '\t' => out += "⟨tab⟩",
            c if invisible(c) => out += &format!("⟨U+{:04X}⟩", c as u32),
            c => out.push(c),
        }
        index += 1;
    }
    out
}

/// The shortest unit of 1 to 8 characters (no newline) that `chars` starts with 16 or
/// more times in a row, and how many times.
fn repetition(chars: &[char]) -> Option<(&[char], usize)> {
    (1..=8.min(chars.len())).find_map(|length| {
        let unit = &chars[..length];
        if unit.contains(&'\n') {
            return None;
        }
        let times = chars
            .chunks_exact(length)
            .take_while(|chunk| *chunk == unit)
            .count();
        (times >= 16).then_some((unit, times))
    })
}

/// Control characters (but the newline) and the format characters that render as
/// nothing or reorder text: zero-width spaces and joiners, bidi controls, BOM.
fn invisible(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c as u32, 0xAD | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2069 | 0xFEFF)
}

fn visible_bytes(bytes: &[u8]) -> String {
    bytes
        .utf8_chunks()
        .map(|chunk| {
            let bad: String = chunk
                .invalid()
                .iter()
                .map(|byte| format!("⟨byte 0x{byte:02X}⟩"))
                .collect();
            visible(chunk.valid()) + &bad
        })
        .collect()
}

/// `text` indented as a YAML block, at most `limit` lines.
fn block(text: &str, limit: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: String = lines
        .iter()
        .take(limit)
        .map(|line| {
            // Trailing spaces are made visible: editors strip them from snapshot files.
            let kept = line.trim_end_matches(' ');
            match line.len() - kept.len() {
                0 if line.is_empty() => "\n".to_string(),
                0 => format!("    {line}\n"),
                spaces => format!("    {kept}⟨' ' × {spaces}⟩\n"),
            }
        })
        .collect();
    if lines.len() > limit {
        out += &format!("    ⟨… {} more lines⟩\n", lines.len() - limit);
    }
    if lines.is_empty() {
        out = "    ⟨nothing⟩\n".into();
    }
    out
}

/// The command line as a shell would take it back.
fn command_line(args: &[String]) -> String {
    args.iter()
        .map(|arg| match arg.is_empty() || arg.contains(' ') {
            true => format!("'{arg}'"),
            false => arg.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every path under `folder`, relative to it.
fn listing(folder: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            found.insert(path.strip_prefix(folder).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                pending.push(path);
            }
        }
    }
    found
}

fn containers_named(name: &str) -> String {
    let output = Command::new("docker")
        .args(["ps", "-aq", "--filter", &format!("name=^/{name}$")])
        .output()
        .expect("the docker CLI runs");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// What depends on the machine, not the input: the stale-image note of `run --no-build`
/// (its cache), and the warning that the base image here is not the one a built-in's lock
/// was made on (a fresh `base bootstrap` takes Debian's packages of the day).
fn without_machine_notes(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| !(line.starts_with("note: `") && line.contains("is older than the spec")))
        .filter(|line| {
            !(line.starts_with("warning: the base image `")
                && line.contains("is not the one `builtin:"))
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The committed snapshot's entry of each case, so a run names every case whose output
/// changed (insta shows the diff).
fn committed_entries() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("bad_inputs__{SNAPSHOT}.snap"));
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let body = text.split_once("\n---\n").map_or("", |(_, body)| body);
    format!("\n{body}")
        .split("\n- case: ")
        .skip(1)
        .map(|entry| {
            let name = entry.lines().next().unwrap_or_default().to_string();
            (name, format!("- case: {}", entry.trim_end()))
        })
        .collect()
}

#[tokio::test]
async fn bad_inputs_exit_1_with_a_clear_message_and_create_nothing() {
    let engine = common::engine().await.is_some();
    let cases = cases();
    let data = tempfile::tempdir().unwrap();
    let data_home = data.path().to_str().unwrap();
    let names: Vec<String> = cases.iter().map(|_| unique("t-bad")).collect();
    let _guard = DockerGuard::containers(&names.iter().map(String::as_str).collect::<Vec<_>>());

    let committed = committed_entries();
    let mut report = String::new();
    let mut failures: Vec<String> = Vec::new();
    let mut tried = 0;
    for (case, container) in cases.iter().zip(&names) {
        if matches!(
            case.input,
            Input::Run {
                no_daemon: false,
                ..
            }
        ) && !engine
        {
            continue;
        }
        tried += 1;
        let folder = scratch(&[]);
        let mut chosen: Vec<(&str, String)> = Vec::new();
        let mut env = vec![("XDG_DATA_HOME", data_home)];
        let (args, shown_input, container_checked) = match &case.input {
            Input::File { args, file } => {
                let mut shown = format!("  argv: tfimg {}\n", command_line(args));
                if let Some((path, bytes)) = file {
                    let path = folder.path().join(path);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(&path, bytes).unwrap();
                    shown += &format!("  file: |\n{}", block(&visible_bytes(bytes), 12));
                }
                env.push(NO_DAEMON);
                (args.clone(), shown, None)
            }
            Input::Variable {
                args,
                variable,
                value,
            } => {
                env.push((variable, value));
                env.push(NO_DAEMON);
                let shown = format!(
                    "  argv: tfimg {}\n  env: {variable}={}\n",
                    command_line(args),
                    visible(value)
                );
                (args.clone(), shown, None)
            }
            Input::Environment {
                args,
                env: variables,
                file,
            } => {
                let mut shown = format!("  argv: tfimg {}\n", command_line(args));
                for (key, value) in variables {
                    shown += &format!("  env: {key}={}\n", visible(value));
                    let value = value.replace("[DIR]", &folder.path().display().to_string());
                    chosen.push((*key, value));
                }
                if let Some((name, bytes)) = file {
                    let path = folder.path().join(name);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(&path, bytes).unwrap();
                    shown += &format!("  file ./{name}: |\n{}", block(&visible_bytes(bytes), 12));
                }
                (args.clone(), shown, None)
            }
            Input::Run { flags, no_daemon } => {
                let mut args: Vec<String> = ["run", "cpu-headless", "--no-start", "--no-build"]
                    .map(String::from)
                    .to_vec();
                // `--name` in the flags is the case itself; otherwise a unique one.
                let checked = match flags.iter().position(|flag| flag == "--name") {
                    Some(index) => flags[index + 1].clone(),
                    None => {
                        args.extend(["--name".to_string(), container.clone()]);
                        container.clone()
                    }
                };
                args.extend(["--ca-cert".to_string(), HOST_CA.to_string()]);
                args.extend(flags.iter().cloned());
                if *no_daemon {
                    env.push(NO_DAEMON);
                }
                let shown = visible(&command_line(&args)).replace(container.as_str(), "[NAME]");
                let daemon = if *no_daemon {
                    format!("  env: {}={}\n", NO_DAEMON.0, NO_DAEMON.1)
                } else {
                    String::new()
                };
                (
                    args,
                    format!("  argv: tfimg {shown}\n{daemon}"),
                    Some(checked),
                )
            }
        };
        env.extend(chosen.iter().map(|(key, value)| (*key, value.as_str())));
        let before = listing(folder.path());
        let started = Instant::now();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let outcome = tfimg_with_env(folder.path(), &argv, &env);
        let elapsed = started.elapsed();

        let folder_text = folder.path().display().to_string();
        let redact = |text: &str| {
            text.replace(&folder_text, "[DIR]")
                .replace(data_home, "[DIR]")
                .replace(container.as_str(), "[NAME]")
        };
        let stdout = redact(&outcome.stdout);
        let stderr = redact(&without_machine_notes(&outcome.stderr));
        let mut problems = Vec::new();
        if outcome.code != 1 {
            problems.push(format!("exit code {} instead of 1", outcome.code));
        }
        if !stdout.is_empty() {
            problems.push(format!("{} bytes on stdout", stdout.len()));
        }
        if !stderr.starts_with("error: ") {
            problems.push("stderr does not start with `error: `".to_string());
        }
        if !stderr.contains(&case.names) {
            problems.push(format!("the message does not name {}", case.names));
        }
        if stderr.chars().any(invisible) {
            problems.push("the message holds invisible characters".to_string());
        }
        if elapsed > TIME_LIMIT {
            problems.push(format!("took {elapsed:.1?}"));
        }
        let mut created: Vec<String> = listing(folder.path())
            .difference(&before)
            .map(|path| format!("./{path}"))
            .collect();
        if let Some(name) = &container_checked {
            if !containers_named(name).is_empty() {
                created.push(format!("container `{}`", redact(name)));
            }
        }
        if !created.is_empty() {
            problems.push(format!("created {}", created.join(", ")));
        }
        let mut entry = format!(
            "- case: {}\n{shown_input}  exit: {}\n",
            case.name, outcome.code
        );
        if !stdout.is_empty() {
            entry += &format!("  stdout: |\n{}", block(&visible(&stdout), 12));
        }
        entry += &format!("  stderr: |\n{}", block(&visible(&stderr), 40));
        if !created.is_empty() {
            entry += &format!("  created: {}\n", created.join(", "));
        }
        if committed.get(case.name).map(|text| text.as_str()) != Some(entry.trim_end()) {
            problems.push("its exit code or stderr differs from the snapshot".to_string());
        }
        report += &entry;

        if !problems.is_empty() {
            let first_line = visible(stderr.lines().next().unwrap_or(""));
            failures.push(format!(
                "{}: {}\n    {first_line}",
                case.name,
                problems.join("; ")
            ));
        }
    }
    eprintln!("{tried} bad inputs tried");

    if tried == cases.len() {
        let snapshot = std::panic::catch_unwind(|| insta::assert_snapshot!(SNAPSHOT, report));
        if snapshot.is_err() && failures.is_empty() {
            failures.push("the snapshot differs (diff above)".to_string());
        }
    } else {
        eprintln!("the Docker Engine is unreachable: `run` cases skipped, snapshot not compared");
    }
    assert!(
        failures.is_empty(),
        "{} of {tried} bad inputs diverge:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
