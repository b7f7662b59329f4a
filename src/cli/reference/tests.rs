//! The generated reference against the copies in `docs/reference/`: a flag added, renamed
//! or documented differently fails here until they are made again
//! (`TFIMG_UPDATE_REFERENCE=1 cargo test --lib reference`, which writes them).

use std::path::{Path, PathBuf};

use super::*;

/// Every man page: `tfimg.1`, then one per command (`tfimg-run.1`,
/// `tfimg-base-bootstrap.1`), hidden and help commands left out; (file name, roff).
fn man_pages() -> Vec<(String, Vec<u8>)> {
    fn add(command: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) {
        pages.push(page(command));
        for sub in paged(command) {
            add(sub, pages);
        }
    }
    let mut pages = Vec::new();
    add(&built(), &mut pages);
    pages
}

fn reference() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference")
}

/// `path` holds `generated`, or (updating) is made to.
fn check(path: &Path, generated: &[u8]) {
    if std::env::var_os("TFIMG_UPDATE_REFERENCE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, generated).unwrap();
        return;
    }
    let kept = std::fs::read(path).unwrap_or_default();
    assert!(
        kept == generated,
        "{} is not what the command line generates now: run `TFIMG_UPDATE_REFERENCE=1 cargo test --lib reference` and commit the result",
        path.display()
    );
}

#[test]
fn the_completions_in_docs_match_the_command_line() {
    for (shell, file) in [
        (Shell::Bash, "tfimg.bash"),
        (Shell::Zsh, "_tfimg"),
        (Shell::Fish, "tfimg.fish"),
    ] {
        check(
            &reference().join("completions").join(file),
            &completions(shell),
        );
    }
}

#[test]
fn the_man_pages_in_docs_match_the_command_line_one_per_command() {
    let pages = man_pages();
    let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    for expected in [
        "tfimg.1",
        "tfimg-run.1",
        "tfimg-base-bootstrap.1",
        "tfimg-ps.1",
        "tfimg-sweep.1",
    ] {
        assert!(names.contains(&expected), "{expected}: {names:?}");
    }
    assert!(
        !names
            .iter()
            .any(|name| name.contains("prune-superseded") || name.ends_with("-help.1")),
        "{names:?}"
    );
    let folder = reference().join("man");
    for (name, roff) in &pages {
        check(&folder.join(name), roff);
    }
    // No page is left for a command that is gone.
    if std::env::var_os("TFIMG_UPDATE_REFERENCE").is_none() {
        let kept: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !names.contains(&name.as_str()))
            .collect();
        assert!(kept.is_empty(), "pages of no command: {kept:?}");
    }
    let run = man_page(&["run".to_string()]).unwrap();
    let run = String::from_utf8(run).unwrap();
    assert!(run.contains("idle\\-containers"), "{run}");
    assert!(man_page(&["nope".to_string()]).is_none());
}

/// The compatibility table's page is the table tfimg decides with.
#[test]
fn the_compatibility_page_is_the_table_tfimg_uses() {
    let page = format!(
        "# The compatibility table\n\n\
         Generated from tfimg's own table (`crates/core/src/spec/compat/table.rs`) by\n\
         `TFIMG_UPDATE_REFERENCE=1 cargo test --lib reference`; a test fails when they differ.\n\
         A spec's `tensorflow`, `python`, `cuda` and `cudnn` are checked against it, and\n\
         `tfimg doctor` checks the host's driver against the CUDA its image carries. The pins\n\
         go into every pip install of the image (`/opt/tfimg/constraints.txt`). TensorFlow's\n\
         \"tested build configurations\" and NVIDIA's CUDA release notes are the sources.\n\n{}",
        crate::spec::compat::table_markdown()
    );
    check(&reference().join("compatibility.md"), page.as_bytes());
}
