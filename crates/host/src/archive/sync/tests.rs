//! Unit tests of `sync`, on folders in a temporary directory.
use super::*;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
}

fn plan(source: PathBuf, target: &str) -> SyncPlan {
    SyncPlan {
        text: "./code".to_string(),
        source,
        target: target.to_string(),
        whole: false,
    }
}

/// `path uid:gid mode` of every entry, in order.
fn entries(archive: &SyncArchive) -> Vec<String> {
    let bytes = archive.to_bytes().unwrap();
    let mut tar = tar::Archive::new(bytes.as_slice());
    tar.entries()
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let header = entry.header();
            let kind = if header.entry_type().is_dir() {
                "/"
            } else {
                ""
            };
            format!(
                "{}{kind} {}:{} {:o}",
                entry.path().unwrap().display(),
                header.uid().unwrap(),
                header.gid().unwrap(),
                header.mode().unwrap()
            )
        })
        .collect()
}

#[test]
fn ignored_files_and_git_stay_behind_and_entries_belong_to_the_run_s_user() {
    let folder = tempfile::tempdir().unwrap();
    let code = folder.path().join("code");
    write(
        &code,
        &[
            ("train.py", "print(1)\n"),
            ("data.txt", "1 2 3\n"),
            ("big.bin", "weights"),
            ("sub/big.bin", "weights"),
            (".gitignore", "*.bin\n"),
            (
                ".dockerignore",
                "# Docker's patterns start at the root\nsecret.txt\n*.log\n!keep.log\n",
            ),
            ("secret.txt", "s3cret"),
            ("sub/secret.txt", "not a root secret"),
            ("a.log", "x"),
            ("keep.log", "x"),
            ("sub/b.log", "x"),
            (".git/HEAD", "ref: refs/heads/main\n"),
            (".env.example", "A=1\n"),
            ("sub/run.sh", "#!/bin/sh\n"),
        ],
    );
    std::fs::set_permissions(
        code.join("sub/run.sh"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    let archive = sync_archive(&plan(code.clone(), "/tf/code"), (1234, 2345)).unwrap();
    assert_eq!(
        entries(&archive),
        [
            "code/ 1234:2345 755",
            "code/.dockerignore 1234:2345 644",
            "code/.env.example 1234:2345 644",
            "code/.gitignore 1234:2345 644",
            "code/data.txt 1234:2345 644",
            "code/keep.log 1234:2345 644",
            "code/sub/ 1234:2345 755",
            "code/sub/b.log 1234:2345 644",
            "code/sub/run.sh 1234:2345 755",
            "code/sub/secret.txt 1234:2345 644",
            "code/train.py 1234:2345 644",
        ]
    );
    assert_eq!((archive.files, archive.entries()), (9, 11));
    assert_eq!(archive.bytes, 119);
    // The same files give the same bytes.
    let again = sync_archive(&plan(code.clone(), "/tf/code"), (1234, 2345)).unwrap();
    assert_eq!(archive.to_bytes().unwrap(), again.to_bytes().unwrap());
    // Under another name, as root's.
    let renamed = sync_archive(&plan(code, "/srv/project"), (0, 0)).unwrap();
    assert_eq!(entries(&renamed)[0], "project/ 0:0 755");
}

#[test]
fn a_file_source_is_one_entry_named_after_the_destination() {
    let folder = tempfile::tempdir().unwrap();
    write(folder.path(), &[("train.csv", "a,b\n")]);
    let archive = sync_archive(
        &plan(folder.path().join("train.csv"), "/tf/data.csv"),
        (7, 8),
    )
    .unwrap();
    assert_eq!(entries(&archive), ["data.csv 7:8 644"]);
    assert_eq!((archive.files, archive.bytes), (1, 4));
}

#[test]
fn links_inside_are_copied_and_links_outside_or_nowhere_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let code = folder.path().join("code");
    write(&code, &[("data/train.txt", "1\n")]);
    write(folder.path(), &[("outside/key", "secret")]);
    std::os::unix::fs::symlink("data/train.txt", code.join("latest.txt")).unwrap();
    std::os::unix::fs::symlink("data", code.join("current")).unwrap();
    let archive = sync_archive(&plan(code.clone(), "/tf/code"), (1, 1)).unwrap();
    assert_eq!(
        entries(&archive),
        [
            "code/ 1:1 755",
            "code/current/ 1:1 755",
            "code/current/train.txt 1:1 644",
            "code/data/ 1:1 755",
            "code/data/train.txt 1:1 644",
            "code/latest.txt 1:1 644",
        ]
    );
    std::os::unix::fs::symlink("../outside", code.join("keys")).unwrap();
    let error = sync_archive(&plan(code.clone(), "/tf/code"), (1, 1)).unwrap_err();
    assert_eq!(
        error.message,
        format!(
            "`--sync ./code`: the link `keys` leads outside `{}`, to `{}`",
            code.display(),
            folder
                .path()
                .canonicalize()
                .unwrap()
                .join("outside")
                .display()
        )
    );
    assert!(error.hint.contains("`.dockerignore`"), "{}", error.hint);
    std::fs::remove_file(code.join("keys")).unwrap();
    std::os::unix::fs::symlink("gone", code.join("dangling")).unwrap();
    let error = sync_archive(&plan(code, "/tf/code"), (1, 1)).unwrap_err();
    assert!(
        error
            .message
            .starts_with("`--sync ./code`: the link `dangling` leads nowhere"),
        "{}",
        error.message
    );
}

#[test]
fn a_missing_source_is_named() {
    let folder = tempfile::tempdir().unwrap();
    let error = sync_archive(&plan(folder.path().join("nope"), "/tf/nope"), (1, 1)).unwrap_err();
    assert_eq!(
        error.message,
        format!(
            "`--sync ./code`: `{}` does not exist",
            folder.path().join("nope").display()
        )
    );
}

#[test]
fn a_volume_root_is_one_folder_entry() {
    assert_eq!(
        entries(&SyncArchive::folder("data", (4321, 4322))),
        ["data/ 4321:4322 755"]
    );
}

#[test]
fn a_whole_sync_ignores_no_ignore_file_but_still_leaves_git_behind() {
    let folder = tempfile::tempdir().unwrap();
    // A project that ignores JSON and logs, with a sweep's trial folder below it.
    write(folder.path(), &[(".gitignore", "*.json\n*.log\n")]);
    let trial = folder.path().join("runs/lab/t001");
    write(
        &trial,
        &[
            ("params.json", "{}\n"),
            ("stdout.log", ""),
            (".dockerignore", "params.json\n"),
            (".git/HEAD", "x"),
        ],
    );
    let mut sync = plan(trial.clone(), "/tfimg/trial");
    assert_eq!(
        entries(&sync_archive(&sync, (7, 8)).unwrap()),
        ["trial/ 7:8 755", "trial/.dockerignore 7:8 644"]
    );
    sync.whole = true;
    assert_eq!(
        entries(&sync_archive(&sync, (7, 8)).unwrap()),
        [
            "trial/ 7:8 755",
            "trial/.dockerignore 7:8 644",
            "trial/params.json 7:8 644",
            "trial/stdout.log 7:8 644",
        ]
    );
}
