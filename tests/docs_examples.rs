//! Every console example in README.md and docs/ runs here, so an example that drifts from
//! what the binary prints fails the build.
//!
//! A page's fenced blocks, by info string:
//! - ```` ```console ````: each `$ COMMAND` line (a trailing `\` continues it on the next
//!   line) runs in bash in the page's scratch folder, with this build's `tfimg` first on
//!   PATH and no Docker daemon reachable; the lines up to the next `$ ` are what it prints
//!   (stdout and stderr together). `[..]` matches any text within a line, a line `...` any
//!   number of lines, `[TOKEN]` a Jupyter token, `[ROOT]` the scratch
//!   folder; a last line `[exit N]` is the exit status (else it must be 0).
//! - ```` ```console engine ````: the same on the real Docker Engine, in the integration
//!   test below; containers and networks the examples leave behind are removed.
//! - ```` ```console not-run: REASON ````: shown, not run (a cold GPU build, real-GPU
//!   output); the reason is required.
//! - any block with `file=PATH` in its info string: written to PATH in the page's scratch
//!   folder before the page's commands run.
//!
//! Support windows are judged on the tests' fixed day (`TFIMG_TODAY`), so `list` and
//! `show` print the same on any day. HOME is the scratch folder, and builds get the
//! machine's CA (`TFIMG_CA_CERT`), as the README's set-up asks on this network.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    NoDaemon,
    Engine,
}

#[derive(Debug)]
struct Step {
    line: usize,
    command: String,
    expected: String,
    status: i32,
}

#[derive(Debug, Default)]
struct Page {
    path: PathBuf,
    files: Vec<(String, String)>,
    steps: Vec<(Mode, Step)>,
    not_run: usize,
    /// A `console engine ssh-server` block: the page reaches this machine's Docker through
    /// the test's OpenSSH server, as host `gpu-box` of `./lab_ssh_config`.
    ssh_server: bool,
}

/// The pages: README.md and every Markdown file under docs/.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn parse(path: &Path, text: &str) -> Result<Page, String> {
    let mut page = Page {
        path: path.to_path_buf(),
        ..Page::default()
    };
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut open: Option<(String, usize, String)> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                open = Some((info.to_string(), line_of(range.start), String::new()));
            }
            Event::Text(body) => {
                if let Some((_, _, text)) = open.as_mut() {
                    text.push_str(&body);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((info, line, body)) = open.take() {
                    block(&mut page, &info, line, &body)
                        .map_err(|error| format!("{}:{line}: {error}", path.display()))?;
                }
            }
            _ => {}
        }
    }
    Ok(page)
}

fn block(page: &mut Page, info: &str, line: usize, body: &str) -> Result<(), String> {
    let mut words = info.split_whitespace();
    let language = words.next().unwrap_or("");
    let rest: Vec<&str> = words.collect();
    if let Some(file) = rest.iter().find_map(|word| word.strip_prefix("file=")) {
        page.files.push((file.to_string(), body.to_string()));
        return Ok(());
    }
    if language != "console" {
        return Ok(());
    }
    let mode = match rest.first().copied() {
        None => Mode::NoDaemon,
        Some("engine") if rest[1..].iter().all(|word| *word == "ssh-server") => {
            page.ssh_server |= rest.len() > 1;
            Mode::Engine
        }
        Some("not-run:") if rest.len() > 1 => {
            page.not_run += 1;
            return Ok(());
        }
        _ => {
            return Err(format!(
                "```{info}: a console block is `console`, `console engine [ssh-server]` or `console not-run: REASON`"
            ))
        }
    };
    for step in steps(body, line + 1)? {
        page.steps.push((mode, step));
    }
    Ok(())
}

/// A console block's commands with what each prints; `first` is the block's first line.
fn steps(body: &str, first: usize) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    let mut continued = false;
    for (index, line) in body.lines().enumerate() {
        if continued {
            let step = steps.last_mut().unwrap();
            step.command.push('\n');
            step.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            continued = command.ends_with('\\');
            steps.push(Step {
                line: first + index,
                command: command.to_string(),
                expected: String::new(),
                status: 0,
            });
        } else if let Some(step) = steps.last_mut() {
            step.expected.push_str(line);
            step.expected.push('\n');
        } else {
            return Err(format!(
                "line {}: output before any `$ ` command",
                first + index
            ));
        }
    }
    for step in &mut steps {
        let lines: Vec<&str> = step.expected.lines().collect();
        if let Some(last) = lines.last() {
            if let Some(code) = last
                .strip_prefix("[exit ")
                .and_then(|rest| rest.strip_suffix(']'))
            {
                step.status = code
                    .parse()
                    .map_err(|_| format!("line {}: `{last}` is not [exit N]", step.line))?;
                let kept = lines[..lines.len() - 1].join("\n");
                step.expected = if kept.is_empty() { kept } else { kept + "\n" };
            }
        }
    }
    Ok(steps)
}

fn redactions(root: &Path) -> snapbox::Redactions {
    let mut redactions = snapbox::Redactions::new();
    redactions
        .insert("[TOKEN]", regex::Regex::new(r"\b[0-9a-f]{48}\b").unwrap())
        .unwrap();
    let root = root.to_string_lossy().into_owned();
    redactions
        .insert("[ROOT]", std::path::PathBuf::from(root))
        .unwrap();
    redactions
}

/// Runs the page's steps of `mode` in `folder`; the failures, each with the page's line.
fn run_page(page: &Page, mode: Mode, folder: &Path, env: &[(String, String)]) -> Vec<String> {
    // The pages' commands start where a clone's would: `examples/` is there.
    copy_folder(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        &folder.join("examples"),
    );
    for (path, body) in &page.files {
        let path = folder.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_tfimg")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let assert = snapbox::Assert::new()
        .action_env("TFIMG_DOCS_SKIP")
        .normalize_paths(false)
        .redact_with(redactions(folder));
    // One shell session per page, as in a terminal: variables set (or exported) and the
    // folder changed to by one command are there for the next.
    let session = tempfile::tempdir().unwrap();
    let state = session.path().join("state");
    let ca = std::env::var("TFIMG_TEST_CA").unwrap_or_else(|_| common::HOST_CA.to_string());
    let mut failures = Vec::new();
    for (step_mode, step) in &page.steps {
        if *step_mode != mode {
            continue;
        }
        let mut command = Command::new("bash");
        command
            .args(["-o", "pipefail", "-c", &session_script(&step.command)])
            .env("TFIMG_DOCS_STATE", &state)
            .current_dir(folder)
            .env("PATH", &path)
            .env("TFIMG_TODAY", common::TODAY)
            // A user's own home: keys, team secrets and the config file stay in the
            // scratch folder, and go with it.
            .env("HOME", folder)
            // This network inspects TLS: as README.md's set-up says, builds get its CA,
            // which is part of what the suite's warm images were built with.
            .env("TFIMG_CA_CERT", &ca)
            .env("NO_COLOR", "1")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("TFIMG_CONFIG")
            .env_remove("RUST_LOG")
            .envs(env.iter().map(|(key, value)| (key, value)));
        if mode == Mode::NoDaemon {
            command.env(
                "DOCKER_HOST",
                "unix:///nonexistent/tfimg-docs-no-daemon.sock",
            );
        }
        // stdout and stderr through one pipe, as a terminal shows them.
        let (reader, writer) = std::io::pipe().unwrap();
        command.stdout(writer.try_clone().unwrap()).stderr(writer);
        let mut child = command.spawn().unwrap();
        drop(command);
        let mut output = String::new();
        std::io::Read::read_to_string(&mut { reader }, &mut output).unwrap();
        let status = child.wait().unwrap().code().unwrap_or(-1);
        let name = format!("{}:{} `$ {}`", page.path.display(), step.line, step.command);
        let matched = assert.try_eq(
            Some(&name),
            output.clone().into(),
            step.expected.clone().into(),
        );
        if let Err(error) = matched {
            failures.push(format!("{name}: the output differs:\n{error}"));
        } else if status != step.status {
            failures.push(format!(
                "{name}: exited {status}, the page says {}:\n{output}",
                step.status
            ));
        }
    }
    failures
}

/// The bash script that runs `command` in the page's session: the variables and folder the
/// earlier commands left are restored first, and this one's are kept for the next.
fn session_script(command: &str) -> String {
    format!(
        "set -a\n\
         if [ -f \"$TFIMG_DOCS_STATE\" ]; then . \"$TFIMG_DOCS_STATE\"; cd \"$(cat \"$TFIMG_DOCS_STATE.cwd\")\"; fi\n\
         {command}\n\
         tfimg_docs_status=$?\n\
         export -p | grep -v '^declare -x TFIMG_DOCS_STATE=' > \"$TFIMG_DOCS_STATE\"\n\
         pwd > \"$TFIMG_DOCS_STATE.cwd\"\n\
         exit $tfimg_docs_status\n"
    )
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn read_pages() -> Vec<Page> {
    pages()
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            parse(path, &text).unwrap_or_else(|error| panic!("{error}"))
        })
        .collect()
}

/// Runs every page's `mode` steps, each page in a scratch folder of its own with the
/// environment `prepare` gives it (and keeps, such as a server, while the page runs;
/// `None` skips the page), then fails naming every example that differs.
fn check_pages<Kept>(
    mode: Mode,
    (what, where_): (&str, &str),
    mut prepare: impl FnMut(&Page, &Path) -> Option<(Vec<(String, String)>, Kept)>,
) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in read_pages() {
        let steps = page.steps.iter().filter(|(step, _)| *step == mode).count();
        if steps == 0 {
            continue;
        }
        // The page's folder is its user's home (`HOME`): private, as a home is (root's
        // `/root` is 0700), so nothing about other accounts is said there.
        let folder = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .unwrap();
        let Some((env, _kept)) = prepare(&page, folder.path()) else {
            continue;
        };
        failures.extend(run_page(&page, mode, folder.path(), &env));
        ran += steps;
    }
    eprintln!("ran {ran} commands from the pages {where_}");
    assert!(ran > 0, "no {what} example was found");
    assert!(
        failures.is_empty(),
        "{} example(s) differ from what tfimg prints:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn console_examples_that_need_no_daemon_print_what_the_pages_say() {
    check_pages(Mode::NoDaemon, ("console", "without a daemon"), |_, _| {
        Some((Vec::new(), ()))
    });
}

/// The engine examples run one page at a time (the only test in this binary that uses
/// Docker); what they leave is removed, also when one fails.
#[tokio::test]
async fn console_examples_on_the_engine_print_what_the_pages_say() {
    if common::engine().await.is_none() {
        return;
    }
    let _guard = Leftovers::now();
    check_pages(Mode::Engine, ("engine", "on the engine"), |page, folder| {
        if !page.ssh_server {
            return Some((Vec::new(), None));
        }
        let server = common::sshd::Sshd::start()?;
        Some((gpu_box(&server, folder), Some(server)))
    });
}

/// `./lab_ssh_config` in `folder`, naming `server` host `gpu-box` (its key and host key
/// are the test's), and the environment its ssh client needs (a short runtime folder for
/// the control sockets).
fn gpu_box(server: &common::sshd::Sshd, folder: &Path) -> Vec<(String, String)> {
    let dir = server.dir.path().display();
    let config = format!(
        "Host gpu-box\n    HostName 127.0.0.1\n    Port {}\n    User root\n    IdentityFile {dir}/client_key\n    IdentitiesOnly yes\n    IdentityAgent none\n    UserKnownHostsFile {dir}/known_hosts\n    StrictHostKeyChecking yes\n",
        server.port
    );
    std::fs::write(folder.join("lab_ssh_config"), config).unwrap();
    vec![(
        "XDG_RUNTIME_DIR".to_string(),
        server.runtime.path().display().to_string(),
    )]
}

/// What the engine holds of tfimg's (containers, networks, volumes) when the guard is
/// made; on drop, what tfimg made since is removed.
struct Leftovers {
    before: Vec<(&'static str, Vec<String>)>,
}

const KINDS: [&str; 3] = ["container", "network", "volume"];

fn tfimg_objects(kind: &str) -> Vec<String> {
    let listed = match kind {
        "container" => vec!["ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Labels}}"],
        "network" => vec![
            "network",
            "ls",
            "--no-trunc",
            "--format",
            "{{.ID}} {{.Labels}}",
        ],
        _ => vec!["volume", "ls", "--format", "{{.Name}} {{.Labels}}"],
    };
    let output = Command::new("docker").args(listed).output().unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains("io.tfimg."))
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect()
}

impl Leftovers {
    fn now() -> Leftovers {
        Leftovers {
            before: KINDS
                .iter()
                .map(|kind| (*kind, tfimg_objects(kind)))
                .collect(),
        }
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        for (kind, before) in &self.before {
            let new: Vec<String> = tfimg_objects(kind)
                .into_iter()
                .filter(|id| !before.contains(id))
                .collect();
            if new.is_empty() {
                continue;
            }
            let mut args = match *kind {
                "container" => vec!["rm", "-f", "-v"],
                "network" => vec!["network", "rm"],
                _ => vec!["volume", "rm", "-f"],
            };
            args.extend(new.iter().map(String::as_str));
            let _ = Command::new("docker").args(args).output();
        }
    }
}

/// GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` dropped, spaces
/// as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A page's links (with their lines) and its headings' anchors.
fn links_and_anchors(text: &str) -> (Vec<(usize, String)>, Vec<String>) {
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut links = Vec::new();
    let mut anchors = Vec::new();
    let mut heading: Option<String> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => {
                links.push((line_of(range.start), dest_url.to_string()))
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(heading) = heading.as_mut() {
                    heading.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => anchors.push(anchor(&heading.take().unwrap())),
            _ => {}
        }
    }
    (links, anchors)
}

/// Every link from README.md or docs/ to a file of the repository, or to a heading of
/// one of the pages, arrives: the sections the README once held are a click away.
#[test]
fn every_link_between_the_pages_arrives() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, link) in links_and_anchors(&text).0 {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, fragment) = match link.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (link.as_str(), None),
            };
            let target = match file {
                "" => page.clone(),
                file => page.parent().unwrap().join(file),
            };
            let at = format!(
                "{}:{line}: `{link}`",
                page.strip_prefix(root).unwrap().display()
            );
            if !target.exists() {
                broken.push(format!("{at}: no file {}", target.display()));
                continue;
            }
            if let Some(fragment) = fragment {
                let text = std::fs::read_to_string(&target).unwrap_or_default();
                if !links_and_anchors(&text).1.iter().any(|a| a == fragment) {
                    broken.push(format!("{at}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_s_blocks_are_well_formed_and_some_are_marked_not_run_with_a_reason() {
    let pages = read_pages();
    let not_run: usize = pages.iter().map(|page| page.not_run).sum();
    assert!(not_run > 0);
    let error = parse(
        Path::new("x.md"),
        "text\n\n```console not-run:\n$ tfimg build gpu-jupyter\n```\n",
    )
    .unwrap_err();
    assert!(error.contains("x.md:3: "), "{error}");
}

/// The harness itself: an example that drifts fails, and the patterns match what they say.
#[test]
fn a_drifted_example_fails_and_patterns_match_only_what_they_say() {
    let folder = tempfile::tempdir().unwrap();
    let text = "```console\n$ echo hello; echo token=0123456789abcdef0123456789abcdef0123456789abcdef\nhello\ntoken=[TOKEN]\n$ echo one; echo two; echo three\none\n...\nthree\n$ echo a b c; exit 3\na [..] c\n[exit 3]\n$ echo drifted\nas written\n$ true\n[exit 1]\n```\n";
    let page = parse(Path::new("t.md"), text).unwrap();
    assert_eq!(page.steps.len(), 5);
    let failures = run_page(&page, Mode::NoDaemon, folder.path(), &[]);
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(
        failures[0].contains("t.md:12 `$ echo drifted`"),
        "{failures:#?}"
    );
    assert!(failures[1].contains("t.md:14 `$ true`: exited 0, the page says 1"));
}

/// Issue 45: every file under `examples/` a page names is in the repository (a reader
/// follows the guide from a clone: docs/tuning.md ran `examples/sweep/quick.yaml`, which
/// only the test wrote), and a page's `file=examples/...` block is that file, byte for
/// byte. What a run writes there (`examples/sweep/runs/...`) is left out.
#[test]
fn every_example_file_a_page_names_is_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let named = regex::Regex::new(r"examples/[A-Za-z0-9_./-]*[A-Za-z0-9_]").unwrap();
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in pages() {
        let text = std::fs::read_to_string(&path).unwrap();
        let page = path.strip_prefix(root).unwrap().display().to_string();
        for (number, line) in text.lines().enumerate() {
            for found in named.find_iter(line) {
                let file = found.as_str();
                if file.split('/').any(|part| part == "runs") {
                    continue;
                }
                checked += 1;
                if !root.join(file).exists() {
                    problems.push(format!(
                        "{page}:{}: `{file}` is not in the repository",
                        number + 1
                    ));
                }
            }
        }
    }
    for page in read_pages() {
        for (file, body) in page
            .files
            .iter()
            .filter(|(file, _)| file.starts_with("examples/"))
        {
            let kept = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            if &kept != body {
                problems.push(format!(
                    "{}: the block `file={file}` is not the repository's `{file}`",
                    page.path.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(checked > 10, "only {checked} names found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
