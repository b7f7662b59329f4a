//! The layers as a ratchet (issue 29), for what the compiler does not check. The layers
//! below the binary are crates (crates/core, crates/host, crates/engine), so none can
//! import one above it, and `each_crate_depends_only_on_what_its_layer_may` reads their
//! `cargo tree`; within each crate, the imports between folders are read from the text (no
//! daemon, no build of anything), against the layer order of docs/architecture.md's
//! section, from the ground up:
//!
//! input and labels; spec, lock, render, plan, team, sweep, bundle (the pure core,
//! crates/core/src); host; engine; output, doctor; app; commands and cli (src/).
//!
//! An import that runs up that order is allowed only while it is listed in `UPWARD` with
//! the reason it is still there; a listed one that no longer exists fails too, so the
//! list only shrinks. Likewise for what `commands/` may still import (`engine::docker`,
//! `host::Machine`, `std::fs`, `tokio::fs`), the statics that hold state, and the lines
//! of `commands/`. Beside the order, the shape issue 47 asked for: no circle of imports
//! between files; notes and warnings worded only in `output/`; no host or engine trait over
//! 12 methods; no story taking the engine and the host apart; no `too_many_arguments`; a
//! binary that exports only its entry point. Tests (`tests.rs`, `*_tests.rs`, and what
//! follows `#[cfg(test)]`) are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each folder (or top-level file) of src/ and its place in the order.
const LAYERS: &[(&str, u8)] = &[
    ("input", 0),
    ("labels", 0),
    ("notice", 0),
    ("spec", 1),
    ("lock", 2),
    ("render", 3),
    ("plan", 4),
    ("team", 5),
    ("sweep", 6),
    ("bundle", 7),
    ("host", 8),
    ("engine", 9),
    ("output", 10),
    ("doctor", 11),
    ("app", 12),
    ("commands", 13),
    ("cli", 13),
    ("lib", 14),
    ("fuzzing", 14),
    ("main", 14),
];

/// Imports that run up the order today, each with why it has not moved yet (issue 29's
/// plan moved them all; a new one needs its row and its reason here).
const UPWARD: &[(&str, &str, &str)] = &[];

/// What `commands/` may still import, and how many lines do today (only fewer from now).
const COMMANDS_IMPORTS: &[(&str, usize)] = &[
    ("engine::docker", 0),
    ("Machine", 0),
    ("std::fs", 0),
    ("tokio::fs", 0),
];

/// Statics that hold state, and why each stays: the process's signal state, whether a
/// reader of its stdout or stderr went away (the SIGPIPE it stands for), and the fuzz
/// targets' lazily parsed built-in catalog (a constant). The engine flags are a settings
/// value passed down (`app::settings`).
const STATICS: &[&str] = &[
    "fuzzing.rs: CATALOG",
    "host/machine.rs: INTERRUPTS",
    "output/streams.rs: READER_GONE",
];

/// The lines of `commands/` today: only fewer from now (issue 29's goal is 1 600). Each
/// command builds its story's whole session, its words' sinks with it
/// (`commands::session`, `commands::reported`); `logs`, `exec`, `stop` and `rm` ask the
/// engine through their stories only.
const COMMANDS_LINES: usize = 1_474;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The pure core's sources (the `tfimg-core` crate).
fn core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src")
}

/// Each crate's sources and the folder its files are read as: the binary's and the core's
/// top-level folders are apart, so their paths stay as they are; the host and the engine
/// crates are each one folder of the order (`host/`, `engine/`).
fn roots() -> Vec<(PathBuf, &'static str)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    vec![
        (src(), ""),
        (core_src(), ""),
        (crates.join("host/src"), "host/"),
        (crates.join("engine/src"), "engine/"),
    ]
}

/// Every non-test source file of every crate, each path relative to its crate's src/
/// (under its folder's name for the host and the engine; each crate's `lib.rs` is its
/// root), and its text up to its first `#[cfg(test)]`.
fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for (root, folder) in roots() {
        for (relative, code) in sources_of(&root) {
            files.push((format!("{folder}{relative}"), code));
        }
    }
    files.sort();
    files
}

/// The unit tests of the stories (`app/**/tests.rs`, `*_tests.rs`), whole: their helpers
/// take a session as the stories do.
fn app_tests() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut folders = vec![root.join("app")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == "tests.rs" || name.ends_with("_tests.rs") {
                let relative = path.strip_prefix(&root).unwrap().display().to_string();
                files.push((relative, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    assert!(
        files.len() > 20,
        "the stories' tests are read: {}",
        files.len()
    );
    files
}

fn sources_of(root: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|name| name != "snapshots") {
                    folders.push(path);
                }
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = match text.find("\n#[cfg(test)]") {
                Some(end) => text[..end].to_string(),
                None => text,
            };
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            files.push((relative, code));
        }
    }
    files
}

/// The folder (or top-level file, without `.rs`) a path of src/ belongs to.
fn folder_of(relative: &str) -> &str {
    let first = relative.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The top-level names `crate::` reaches in `code`: `crate::spec::X` and each item of
/// `crate::{spec::X, plan}`.
fn crate_imports(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The items of the group, at its own depth only.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.insert(first_name(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            names.insert(first_name(&item));
        } else {
            names.insert(first_name(rest));
        }
    }
    names.remove("");
    names
}

fn first_name(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn imports_run_down_the_layers_but_for_the_listed_ones() {
    let order: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut upward: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (file, code) in sources() {
        let from = folder_of(&file);
        let Some(&level) = order.get(from) else {
            panic!("src/{file}: its folder `{from}` has no place in LAYERS");
        };
        for to in crate_imports(&code) {
            let Some(&target) = order.get(to.as_str()) else {
                continue;
            };
            if target > level {
                upward
                    .entry((from.to_string(), to))
                    .or_default()
                    .push(file.clone());
            }
        }
    }
    let allowed: BTreeSet<(String, String)> = UPWARD
        .iter()
        .map(|(from, to, _)| (from.to_string(), to.to_string()))
        .collect();
    let new: Vec<String> = upward
        .iter()
        .filter(|(edge, _)| !allowed.contains(*edge))
        .map(|((from, to), files)| format!("{from} → {to} ({})", files.join(", ")))
        .collect();
    let gone: Vec<String> = allowed
        .iter()
        .filter(|edge| !upward.contains_key(*edge))
        .map(|(from, to)| format!("{from} → {to}"))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "imports up the layers not in UPWARD: {new:#?}\nUPWARD rows whose import is gone (remove them): {gone:#?}"
    );
}

#[test]
fn commands_import_no_more_of_the_engine_host_and_files_than_today() {
    let mut counts: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (file, code) in sources()
        .into_iter()
        .filter(|(file, _)| file.starts_with("commands/"))
    {
        for (line_number, line) in code.lines().enumerate() {
            for (import, _) in COMMANDS_IMPORTS {
                if line.contains(import) && !line.trim_start().starts_with("//") {
                    counts
                        .entry(import)
                        .or_default()
                        .push(format!("{file}:{}", line_number + 1));
                }
            }
        }
    }
    for (import, most) in COMMANDS_IMPORTS {
        let found = counts.get(import).cloned().unwrap_or_default();
        assert!(
            found.len() == *most,
            "commands/ names `{import}` on {} lines, not {most} (fewer: lower the number in COMMANDS_IMPORTS): {found:#?}",
            found.len()
        );
    }
    let lines: usize = sources()
        .iter()
        .filter(|(file, _)| file.starts_with("commands/"))
        .map(|(file, _)| {
            std::fs::read_to_string(src().join(file))
                .unwrap()
                .lines()
                .count()
        })
        .sum();
    eprintln!("commands/: {lines} lines");
    assert!(
        lines <= COMMANDS_LINES,
        "commands/ has {lines} lines, more than {COMMANDS_LINES}"
    );
}

#[test]
fn no_static_holds_state_but_the_listed_ones() {
    let mut found = Vec::new();
    for (file, code) in sources() {
        for line in code.lines() {
            let line = line.trim_start();
            let holds_state = line.starts_with("static ")
                || line.starts_with("pub static ")
                || line.starts_with("pub(crate) static ")
                || line.contains("static mut ");
            let state = [
                "OnceLock",
                "Lazy",
                "Atomic",
                "Mutex",
                "RefCell",
                "static mut",
            ]
            .iter()
            .any(|kind| line.contains(kind));
            if holds_state && state {
                let name = line
                    .split("static ")
                    .nth(1)
                    .map(|rest| first_name(rest.trim_start_matches("mut ")))
                    .unwrap_or_default();
                found.push(format!("{file}: {name}"));
            }
        }
    }
    let listed: Vec<String> = STATICS.iter().map(|entry| entry.to_string()).collect();
    found.sort();
    let mut expected = listed.clone();
    expected.sort();
    assert_eq!(
        found, expected,
        "statics holding state (STATICS lists the ones allowed)"
    );
}

/// stdout and stderr are written through `output/streams.rs` only, where a reader that
/// went away ends tfimg as a pipe expects: std's `println!` and its kin panic on a closed
/// stream (issue 44: `tfimg ps 2>&1 | true` exited 101).
#[test]
fn only_output_streams_writes_to_stdout_and_stderr() {
    let mut found = Vec::new();
    for (file, code) in sources() {
        if file == "output/streams.rs" {
            continue;
        }
        for (number, line) in code.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let prints = ["println!", "print!(", "dbg!("]
                .iter()
                .any(|name| code.contains(name))
                || ["io::stdout()", "io::stderr()"]
                    .iter()
                    .any(|name| code.contains(name) && !code.contains("is_terminal"));
            if prints {
                found.push(format!("{file}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "write through `outln!`/`errln!` or `output::streams` instead: {found:#?}"
    );
}

/// The folder import graph (tests left out), from folder to the folders it imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let order: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, code) in sources() {
        let from = folder_of(&file).to_string();
        for to in crate_imports(&code) {
            if order.contains_key(to.as_str()) && to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// Each crate's module files: the module path (`["app", "launch"]`; the crate root is
/// `[]`) of every non-test file, with its code up to its first `#[cfg(test)]`.
fn modules_of(root: &Path) -> BTreeMap<Vec<String>, String> {
    sources_of(root)
        .into_iter()
        .map(|(relative, code)| {
            let path = relative.trim_end_matches(".rs");
            let mut parts: Vec<String> = path.split('/').map(str::to_string).collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (parts, code)
        })
        .collect()
}

/// The paths `code` names through `crate::`, `super::`, `self::` or another crate of the
/// workspace (`tfimg_core::`), a braced list read as its items; comments left out.
fn named_paths(code: &str) -> Vec<(String, Vec<String>)> {
    let start = regex::Regex::new(r"\b(crate|super|self|tfimg_core|tfimg_host|tfimg_engine)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{)?").unwrap();
    let mut paths = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        for found in start.captures_iter(line) {
            let head = found[1].to_string();
            let rest: Vec<String> = found[2]
                .split("::")
                .filter(|part| !part.is_empty())
                .map(str::to_string)
                .collect();
            if found.get(3).is_none() {
                paths.push((head, rest));
                continue;
            }
            // `a::{b::C, d}`: each item's first names (the list may span lines: its first
            // line's items are enough to place the file's imports).
            let list = &line[found.get(0).unwrap().end()..];
            let list = list.split('}').next().unwrap_or_default();
            let mut any = false;
            for item in list.split(',') {
                let names: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(first_name)
                    .filter(|name| !name.is_empty())
                    .collect();
                if names.is_empty() || names[0] == "self" {
                    continue;
                }
                any = true;
                let mut path = rest.clone();
                path.extend(names);
                paths.push((head.clone(), path));
            }
            if !any {
                paths.push((head, rest));
            }
        }
    }
    paths
}

/// The file import graph of the workspace: which file each file imports from (the
/// longest module path that is a file), tests left out. The binary reaches the engine,
/// the host and the core under their folders' names (`crate::engine`, `crate::spec`).
fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
    let crates: Vec<(&str, BTreeMap<Vec<String>, String>)> = roots()
        .into_iter()
        .zip(["tfimg", "core", "host", "engine"])
        .map(|((root, _), name)| (name, modules_of(&root)))
        .collect();
    let modules = |name: &str| {
        &crates
            .iter()
            .find(|(crate_name, _)| *crate_name == name)
            .unwrap()
            .1
    };
    let core_names: BTreeSet<String> = modules("core")
        .keys()
        .filter_map(|path| path.first().cloned())
        .collect();
    let resolve = |mut name: &str, mut path: Vec<String>| -> Option<String> {
        if name == "tfimg" {
            match path.first().map(String::as_str) {
                Some("engine") => (name, path) = ("engine", path[1..].to_vec()),
                Some("host") => (name, path) = ("host", path[1..].to_vec()),
                Some(first)
                    if core_names.contains(first) && !modules("tfimg").contains_key(&path[..1]) =>
                {
                    name = "core"
                }
                _ => {}
            }
        }
        let files = modules(name);
        (0..=path.len()).rev().find_map(|length| {
            files
                .contains_key(&path[..length])
                .then(|| format!("{name}:{}", path[..length].join("/")))
        })
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, files) in &crates {
        for (module, code) in files {
            let here = format!("{name}:{}", module.join("/"));
            for (head, rest) in named_paths(code) {
                let (crate_name, base): (&str, Vec<String>) = match head.as_str() {
                    "crate" => (name, Vec::new()),
                    "tfimg_core" => ("core", Vec::new()),
                    "tfimg_host" => ("host", Vec::new()),
                    "tfimg_engine" => ("engine", Vec::new()),
                    "self" => (name, module.clone()),
                    _ => (name, module[..module.len().saturating_sub(1)].to_vec()),
                };
                let mut rest = rest;
                let mut base = base;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest.remove(0);
                }
                base.extend(rest);
                if let Some(target) = resolve(crate_name, base) {
                    if target != here {
                        edges.entry(here.clone()).or_default().insert(target);
                    }
                }
            }
        }
    }
    edges
}

/// No two files import each other, however far round (issue 47 counted seven such
/// circles, each over one or two names in the wrong file). A module's own `mod` and
/// `pub use` of its children are not imports.
#[test]
fn no_files_import_each_other_in_a_circle() {
    let edges = file_graph();
    assert!(
        edges
            .get("tfimg:app/tunnels")
            .is_some_and(|to| to.contains("tfimg:app/containers/find")),
        "the file graph is read: {:?}",
        edges.get("tfimg:app/tunnels")
    );
    let mut circles: BTreeSet<Vec<String>> = BTreeSet::new();
    for start in edges.keys() {
        // The shortest way back to `start`, if any.
        let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
        let mut queue: std::collections::VecDeque<&String> = edges[start].iter().collect();
        for next in &edges[start] {
            came_from.insert(next, start);
        }
        while let Some(file) = queue.pop_front() {
            if file == start {
                let mut circle = vec![start.clone()];
                let mut at = came_from[start];
                while at != start {
                    circle.push(at.clone());
                    at = came_from[at];
                }
                circle.sort();
                circles.insert(circle);
                break;
            }
            for next in edges.get(file).into_iter().flatten() {
                if !came_from.contains_key(next) {
                    came_from.insert(next, file);
                    queue.push_back(next);
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "{} import circles between files: {circles:#?}",
        circles.len()
    );
}

#[test]
fn no_folders_import_each_other_in_a_circle() {
    let edges = graph();
    // A folder in a circle reaches itself.
    let mut circles = Vec::new();
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = edges[start].iter().collect();
        while let Some(folder) = stack.pop() {
            if folder == start {
                circles.push(start.clone());
                break;
            }
            if seen.insert(folder.clone()) {
                stack.extend(edges.get(folder).into_iter().flatten());
            }
        }
    }
    assert!(
        circles.is_empty(),
        "folders in an import circle: {circles:?}"
    );
}

#[test]
fn the_architecture_page_places_every_folder_of_src() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let start = readme.find("# Architecture").expect("an Architecture page");
    let block = &readme[start..];
    let block = &block[block.find("```").unwrap() + 3..];
    let block = &block[..block.find("```").unwrap()];
    let mut missing = Vec::new();
    for (root, folder) in roots() {
        if !folder.is_empty() {
            if !block.contains(folder) {
                missing.push(folder.to_string());
            }
            continue;
        }
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // A folder beside a file of its name (`labels/` for `labels.rs`) is that file's;
            // the core's `lib.rs` is the crate, drawn as crates/core.
            if path.is_dir() && root.join(format!("{name}.rs")).exists()
                || (root == core_src() && name == "lib.rs")
            {
                continue;
            }
            let shown = match path.is_dir() {
                true => format!("{name}/"),
                false => name,
            };
            if !block.contains(&shown) {
                missing.push(shown);
            }
        }
    }
    for name in [
        "crates/core",
        "crates/host",
        "crates/engine",
        "crates/testing",
    ] {
        if !block.contains(name) {
            missing.push(name.into());
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "docs/architecture.md places no {missing:?}"
    );
}

/// The binary's library exports its entry point alone: a test or bench reaches the crates
/// through crates/testing, never through `tfimg::` (the compiler then holds every other
/// item of src/ private to the binary).
#[test]
fn the_binary_exports_nothing_but_its_entry_point() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let exported: Vec<&str> = lib
        .lines()
        .filter(|line| line.starts_with("pub ") || line.starts_with("pub\t"))
        .collect();
    assert_eq!(
        exported,
        ["pub fn main() -> ExitCode {"],
        "src/lib.rs exports more than main"
    );
}

/// The methods each trait of `code` declares (`fn` lines one level inside its body).
fn trait_sizes(code: &str) -> Vec<(String, usize)> {
    let mut sizes = Vec::new();
    let mut current: Option<(String, usize)> = None;
    let mut depth = 0usize;
    for line in code.lines() {
        let trimmed = line.trim_start();
        if current.is_none() && trimmed.starts_with("pub trait ") && line.trim_end().ends_with('{')
        {
            let name = first_name(&trimmed["pub trait ".len()..]);
            current = Some((name, 0));
            depth = 0;
        }
        if let Some((_, methods)) = current.as_mut() {
            let declares = trimmed.starts_with("fn ") || trimmed.starts_with("async fn ");
            if depth == 1 && declares {
                *methods += 1;
            }
            depth += line.matches('{').count();
            depth -= line.matches('}').count().min(depth);
            if depth == 0 && line.contains('}') {
                sizes.extend(current.take());
            }
        }
    }
    sizes
}

/// Narrow roles: a trait of the host or the engine has at most 12 methods (`Host` and
/// `Engine` are the sums of their roles and declare none).
#[test]
fn no_trait_of_the_host_or_the_engine_has_more_than_12_methods() {
    let sizes: Vec<(String, usize)> = sources()
        .into_iter()
        .filter(|(path, _)| path.starts_with("host/") || path.starts_with("engine/"))
        .flat_map(|(path, code)| {
            trait_sizes(&code)
                .into_iter()
                .map(move |(name, methods)| (format!("{path}: {name}"), methods))
        })
        .collect();
    assert!(
        sizes.iter().any(|(name, _)| name.ends_with(": Files")),
        "the host's roles are read: {sizes:?}"
    );
    let wide: Vec<_> = sizes.iter().filter(|(_, methods)| *methods > 12).collect();
    assert!(
        wide.is_empty(),
        "traits with more than 12 methods: {wide:?}"
    );
}

/// Each `fn` of `code`: its name and its parameter list (the text between its parentheses).
fn signatures(code: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("fn ") {
        let after = &rest[at + 3..];
        let name = first_name(after);
        let word_start =
            at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let Some(open) = after.find('(') else { break };
        let mut depth = 0;
        let mut close = None;
        for (index, c) in after[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + index);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        if word_start
            && !name.is_empty()
            && after[name.len()..].trim_start().starts_with(['(', '<'])
        {
            found.push((name, after[open + 1..close].to_string()));
        }
        rest = &after[open..];
    }
    found
}

/// `params` split at its commas outside `<>`, `()` and `[]`.
fn top_level(params: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let mut previous = ' ';
    for (index, c) in params.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if previous != '-' => depth -= 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&params[start..index]);
                start = index + 1;
            }
            _ => {}
        }
        previous = c;
    }
    parts.push(&params[start..]);
    parts
}

/// One session value: no story of app/ takes the engine and the host as two parameters
/// (`app::Session` pairs them). A connection attempt that may have failed
/// (`Result<impl Engine, EngineError>`, doctor's and the exports' image names, which work
/// without a daemon) is not an engine.
#[test]
fn no_story_takes_the_engine_and_the_host_apart() {
    let apart: Vec<String> = sources()
        .into_iter()
        .chain(app_tests())
        .filter(|(path, _)| path.starts_with("app/"))
        .flat_map(|(path, code)| {
            signatures(&code)
                .into_iter()
                .filter(|(_, params)| {
                    let types: Vec<&str> = top_level(params)
                        .into_iter()
                        .filter_map(|param| param.split_once(':').map(|(_, kind)| kind.trim()))
                        .collect();
                    let engine = types.iter().any(|kind| {
                        (kind.contains("Engine") || kind.contains("Docker"))
                            && !kind.contains("Result<")
                            && !kind.contains("Session")
                            && !kind.starts_with("EngineError")
                    });
                    let host = types
                        .iter()
                        .any(|kind| kind.contains("Host") && !kind.contains("Session"));
                    engine && host
                })
                .map(|(name, _)| format!("{path}: {name}"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        sources()
            .iter()
            .any(|(_, code)| signatures(code).iter().any(|(name, _)| name == "bring_up")),
        "the signatures are read"
    );
    assert!(
        apart.is_empty(),
        "stories taking the engine and the host apart: {apart:#?}"
    );
}

/// No function hides a long parameter list from clippy: what travels together is a value.
#[test]
fn no_function_is_allowed_too_many_arguments() {
    let allowed: Vec<String> = sources()
        .into_iter()
        .filter(|(_, code)| code.contains("too_many_arguments"))
        .map(|(path, _)| path)
        .collect();
    assert!(
        allowed.is_empty(),
        "allow(clippy::too_many_arguments) in {allowed:?}"
    );
}

/// A note or a warning is a `notice::Notice` (its words only) wherever it is made; only
/// `output/` writes `note: ` and `warning: ` in front (`output::notice_line`).
#[test]
fn notes_and_warnings_are_prefixed_only_in_output() {
    let prefixed: Vec<String> = sources()
        .into_iter()
        .filter(|(path, _)| !path.starts_with("output/"))
        .flat_map(|(path, code)| {
            code.lines()
                .enumerate()
                .filter(|(_, line)| {
                    ["\"note: ", "\"warning: "]
                        .iter()
                        .any(|start| line.contains(start))
                })
                .map(|(number, line)| format!("{path}:{}: {}", number + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        prefixed.is_empty(),
        "notes and warnings worded outside output/: {prefixed:#?}"
    );
}

/// The stories reach the file system, the environment and this machine only through the
/// `Host` trait (so their unit tests run on the fake host).
#[test]
fn app_bypasses_no_host() {
    let mut found = Vec::new();
    for (file, code) in sources()
        .into_iter()
        .filter(|(file, _)| file.starts_with("app/"))
    {
        for (line_number, line) in code.lines().enumerate() {
            let bypass = ["std::fs", "std::env", "Machine"]
                .iter()
                .any(|name| line.contains(name));
            if bypass && !line.trim_start().starts_with("//") {
                found.push(format!("src/{file}:{}: {}", line_number + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "app/ goes around the host: {found:#?}");
}

/// One place for unit tests (tests/README.md): `m/tests.rs` or `m/<topic>_tests.rs`, never
/// an inline module and never one found through `#[path]`.
#[test]
fn unit_tests_live_in_their_own_files() {
    let mut found = Vec::new();
    let mut folders: Vec<PathBuf> = roots().into_iter().map(|(root, _)| root).collect();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (number, line) in text.lines().enumerate() {
                let inline =
                    line.starts_with("mod ") && line.ends_with('{') && line.contains("tests");
                if inline || line.trim_start().starts_with("#[path") {
                    found.push(format!("{}:{}: {line}", path.display(), number + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "test modules out of place: {found:#?}");
}

/// The names of the packages `cargo tree` lists for `package` (its tests' own aside),
/// `depth` levels down (all with `None`).
fn tree(package: &str, depth: Option<u32>) -> BTreeSet<String> {
    let mut command = std::process::Command::new(env!("CARGO"));
    command
        .args(["tree", "--package", package, "--edges", "normal,build"])
        .args([
            "--prefix",
            "none",
            "--format",
            "{p}",
            "--locked",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(depth) = depth {
        command.args(["--depth", &depth.to_string()]);
    }
    let output = command.output().expect("cargo tree runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && text.contains(package),
        "cargo tree --package {package} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    text.lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_string)
        .collect()
}

/// What each crate builds with, as `cargo tree` lists it: the pure core no async
/// runtime, HTTP stack, Docker client or process spawning (anywhere below it); the host
/// no Docker client or HTTP stack; the engine is the only crate that names bollard. The
/// compiler keeps each crate from importing the crates above it; this keeps them from
/// importing what those crates are for.
#[test]
fn each_crate_depends_only_on_what_its_layer_may() {
    let forbidden: [(&str, Option<u32>, &[&str]); 3] = [
        (
            "tfimg-core",
            None,
            &[
                "tokio",
                "bollard",
                "hyper",
                "hyper-util",
                "reqwest",
                "mio",
                "futures-util",
                "tfimg-host",
                "tfimg-engine",
                "tfimg",
            ],
        ),
        (
            "tfimg-host",
            None,
            &[
                "bollard",
                "hyper",
                "hyper-util",
                "reqwest",
                "tfimg-engine",
                "tfimg",
            ],
        ),
        (
            "tfimg",
            Some(1),
            &["bollard", "hyper", "hyper-util", "reqwest", "tfimg-testing"],
        ),
    ];
    let mut found = Vec::new();
    for (package, depth, names) in forbidden {
        let tree = tree(package, depth);
        for name in names {
            if tree.contains(*name) {
                found.push(format!("{package} depends on {name}"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The stories that still ask for the whole engine (`impl Engine`, `E: Engine`) or the
/// whole host (`impl Host`, `H: Host`) instead of the roles they use (`impl Containers +
/// ContainerIo`, `impl State + Files`): only fewer from now. On the engine's side only
/// the sweep's runner (it uses every role) and `up` still ask for all of it; on the
/// host's, the stories that reach the launcher or the sweep's runner.
const WHOLE_ENGINE_BOUNDS: usize = 9;
const WHOLE_HOST_BOUNDS: usize = 28;

#[test]
fn stories_ask_for_no_more_of_the_whole_engine_and_host_than_today() {
    let count = |pattern: &[&str]| -> usize {
        sources()
            .iter()
            .filter(|(path, _)| path.starts_with("app/"))
            .map(|(_, code)| {
                pattern
                    .iter()
                    .map(|bound| {
                        code.match_indices(bound)
                            .filter(|(at, _)| {
                                !code[at + bound.len()..].starts_with(|c: char| c.is_alphanumeric())
                            })
                            .count()
                    })
                    .sum::<usize>()
            })
            .sum()
    };
    let engine = count(&["impl Engine", "E: Engine"]);
    let host = count(&["impl Host", "H: Host"]);
    assert!(engine > 0 && host > 0, "the bounds are read");
    assert!(
        engine <= WHOLE_ENGINE_BOUNDS && host <= WHOLE_HOST_BOUNDS,
        "stories asking for the whole engine: {engine} (at most {WHOLE_ENGINE_BOUNDS}), the whole host: {host} (at most {WHOLE_HOST_BOUNDS}); ask for the roles the story uses"
    );
}
