//! Unit tests of `archive`.
use super::*;
use std::path::PathBuf;

fn sample() -> BuildContext {
    let mut context = BuildContext::default();
    context.add_bytes("b.txt", 0o644, b"second".to_vec());
    context.add_bytes("Dockerfile", 0o644, b"FROM scratch\n".to_vec());
    context.add_bytes("a/run.sh", 0o755, b"#!/bin/sh\n".to_vec());
    context
}

#[test]
fn tar_is_sorted_fixed_and_identical_every_time() {
    let mut first = Vec::new();
    sample().write_tar(&mut first).unwrap();
    let mut second = Vec::new();
    sample().write_tar(&mut second).unwrap();
    assert_eq!(first, second);
    let mut archive = tar::Archive::new(first.as_slice());
    let entries: Vec<(String, u32, u64, u64)> = archive
        .entries()
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let header = entry.header();
            (
                entry.path().unwrap().display().to_string(),
                header.mode().unwrap(),
                header.mtime().unwrap(),
                header.uid().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("Dockerfile".to_string(), 0o644, FIXED_MTIME, 0),
            ("a/run.sh".to_string(), 0o755, FIXED_MTIME, 0),
            ("b.txt".to_string(), 0o644, FIXED_MTIME, 0),
        ]
    );
    assert_eq!(sample().digest().unwrap(), sample().digest().unwrap());
}

#[test]
fn copied_folders_keep_order_modes_and_drop_ignored_files() {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempfile::tempdir().unwrap();
    let code = folder.path().join("code");
    for (path, text) in [
        ("train.py", "print(1)\n"),
        ("run.sh", "#!/bin/sh\n"),
        ("data/big.ckpt", "weights"),
        ("data/labels.txt", "a\n"),
        (".git/HEAD", "ref"),
        ("model.ckpt", "weights"),
    ] {
        let path = code.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    std::fs::set_permissions(code.join("run.sh"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let copied = CopiedFiles {
        source: code.clone(),
        context_path: "files/0".to_string(),
        destination: "/tf/code".to_string(),
        ignore: vec!["*.ckpt".to_string()],
        location: None,
        roots: vec![folder.path().to_path_buf()],
    };
    let mut context = BuildContext::default();
    context.add_copied(&copied).unwrap();
    let paths: Vec<(&str, u32)> = context
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e.mode))
        .collect();
    assert_eq!(
        paths,
        [
            ("files/0/data/labels.txt", 0o644),
            ("files/0/run.sh", 0o755),
            ("files/0/train.py", 0o644),
        ]
    );
    let single = CopiedFiles {
        source: code.join("train.py"),
        context_path: "files/1".to_string(),
        ..copied.clone()
    };
    context.add_copied(&single).unwrap();
    assert!(context.entries.iter().any(|e| e.path == "files/1"));
    let missing = CopiedFiles {
        source: folder.path().join("nope"),
        ..copied
    };
    let error = context.add_copied(&missing).unwrap_err();
    assert!(
        error.message.contains("does not exist"),
        "{}",
        error.message
    );
}

/// A project with `code/train.py`, `code/lib.py` linking to `shared/lib.py`, and a
/// secret outside it.
struct Project {
    _folder: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

impl Project {
    fn new() -> Project {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path().join("project");
        let outside = folder.path().join("outside");
        std::fs::create_dir_all(root.join("code")).unwrap();
        std::fs::create_dir_all(root.join("shared")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("code/train.py"), "print(1)\n").unwrap();
        std::fs::write(root.join("shared/lib.py"), "x = 1\n").unwrap();
        std::fs::write(outside.join("id_rsa"), "SECRET").unwrap();
        std::os::unix::fs::symlink("../shared/lib.py", root.join("code/lib.py")).unwrap();
        Project {
            _folder: folder,
            root,
            outside,
        }
    }

    fn copied(&self, source: &str, ignore: &[&str]) -> CopiedFiles {
        CopiedFiles {
            source: self.root.join(source),
            context_path: "files/0".to_string(),
            destination: "/tf/code".to_string(),
            ignore: ignore.iter().map(|p| p.to_string()).collect(),
            location: None,
            roots: vec![self.root.clone()],
        }
    }

    fn paths(&self, source: &str, ignore: &[&str]) -> Vec<String> {
        let mut context = BuildContext::default();
        context.add_copied(&self.copied(source, ignore)).unwrap();
        context.entries.iter().map(|e| e.path.clone()).collect()
    }
}

#[test]
fn links_inside_the_project_are_copied_as_their_files() {
    let project = Project::new();
    assert_eq!(
        project.paths("code", &[]),
        ["files/0/lib.py", "files/0/train.py"]
    );
}

#[test]
fn links_out_of_the_project_or_to_nothing_are_refused_unless_ignored() {
    let project = Project::new();
    let (root, outside) = (&project.root, &project.outside);
    // A link (in a folder, or as the source itself) out of the project is refused.
    std::os::unix::fs::symlink(outside.join("id_rsa"), root.join("code/key")).unwrap();
    std::os::unix::fs::symlink(outside, root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(outside.join("id_rsa"), root.join("key")).unwrap();
    let real = outside.canonicalize().unwrap();
    for (source, shown, target) in [
        (
            "code",
            format!("`key` in `{}`", root.join("code").display()),
            real.join("id_rsa"),
        ),
        (
            "elsewhere",
            format!("`{}`", root.join("elsewhere").display()),
            real.clone(),
        ),
        (
            "key",
            format!("`{}`", root.join("key").display()),
            real.join("id_rsa"),
        ),
    ] {
        let error = BuildContext::default()
            .add_copied(&project.copied(source, &[]))
            .unwrap_err();
        assert_eq!(
            error.message,
            format!(
                "`files`: {shown} leads outside the project, to `{}`",
                target.display()
            )
        );
        assert_eq!(
            error.hint,
            "copy the file into the project, or leave the link out with the entry's `ignore`"
        );
    }
    // Leaving the link out with `ignore` copies the rest.
    assert_eq!(
        project.paths("code", &["key"]),
        ["files/0/lib.py", "files/0/train.py"]
    );
    // A link that leads nowhere is named.
    std::os::unix::fs::symlink("missing.py", root.join("code/gone.py")).unwrap();
    let error = BuildContext::default()
        .add_copied(&project.copied("code", &["key"]))
        .unwrap_err();
    assert!(
        error.message.starts_with(&format!(
            "`files`: the link `gone.py` in `{}` leads nowhere",
            root.join("code").display()
        )),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn the_stream_carries_the_same_bytes_in_bounded_chunks() {
    use futures_util::StreamExt;
    let mut context = sample();
    context.add_bytes("big.bin", 0o644, vec![7u8; 3 * CHUNK + 17]);
    let mut expected = Vec::new();
    context.write_tar(&mut expected).unwrap();
    let mut streamed = Vec::new();
    let mut stream = Box::pin(context.into_stream());
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.unwrap();
        assert!(chunk.len() <= CHUNK);
        streamed.extend_from_slice(&chunk);
    }
    assert_eq!(streamed, expected);
}
