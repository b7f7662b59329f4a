//! Offline bundles through the real binary and two real daemons. A small spec (the
//! built-in cpu-headless plus a variable of its own, so its image is new) is built on the
//! machine's daemon and saved with its lock; the stand-in daemon (a second dockerd with
//! its own data-root: the offline server, where the image is not) then gets a copy with
//! one byte flipped inside an image layer and a copy cut short, both refused naming the
//! part with nothing imported, then the bundle itself, which loads, lands its spec where
//! `tfimg list` finds it, and runs. The stand-in proves the "save, `docker system prune
//! -af`, load" story without pruning the machine's daemon that other work shares.

mod common;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;

use common::gpu::gpu_engine_with;
use common::{docker, scratch, tfimg, tfimg_with_env, unique, DockerGuard, HOST_CA};

/// The offset of the data of the part `name` in a tar, and its size.
fn entry_at(archive: &Path, start: u64, length: u64, name: &str) -> Option<(u64, u64)> {
    largest_or_named(archive, start, length, Some(name))
}

/// Where, in the file, the data of the entry `name` (or the largest entry) of the tar
/// that starts at `start` lies: its offset in the file and its size.
fn largest_or_named(
    archive: &Path,
    start: u64,
    length: u64,
    name: Option<&str>,
) -> Option<(u64, u64)> {
    let mut file = File::open(archive).unwrap();
    file.seek(SeekFrom::Start(start)).unwrap();
    let mut tar = tar::Archive::new(file.take(length));
    let mut best: Option<(u64, u64, String)> = None;
    for entry in tar.entries().unwrap() {
        let entry = entry.unwrap();
        let path = entry.path().unwrap().display().to_string();
        let found = (
            start + entry.raw_file_position(),
            entry.size(),
            path.clone(),
        );
        match name {
            Some(name) if path == name => return Some((found.0, found.1)),
            Some(_) => {}
            None if best.as_ref().is_none_or(|best| found.1 > best.1) => best = Some(found),
            None => {}
        }
    }
    best.map(|(offset, size, path)| {
        eprintln!("the largest entry of the image tarball: `{path}` ({size} bytes)");
        (offset, size)
    })
}

fn repository_tag(repository: &str) -> String {
    format!("{repository}:2.9.3")
}

fn flip(path: &Path, position: u64) {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut byte = [0u8];
    file.seek(SeekFrom::Start(position)).unwrap();
    file.read_exact(&mut byte).unwrap();
    byte[0] ^= 0x01;
    file.seek(SeekFrom::Start(position)).unwrap();
    file.write_all(&byte).unwrap();
}

fn tar_listing(bundle: &Path) -> Vec<String> {
    let listed = Command::new("tar").arg("-tf").arg(bundle).output().unwrap();
    assert!(listed.status.success(), "tar -tf: {listed:?}");
    String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn tar_member(bundle: &Path, member: &str) -> Vec<u8> {
    let read = Command::new("tar")
        .arg("-xOf")
        .arg(bundle)
        .arg(member)
        .output()
        .unwrap();
    assert!(read.status.success(), "tar -xOf {member}: {read:?}");
    read.stdout
}

#[test]
fn a_saved_spec_loads_and_runs_on_a_daemon_without_it_and_damaged_copies_are_refused() {
    let Some(standin) = gpu_engine_with(&["debian:bullseye-slim"]) else {
        return;
    };
    let name = unique("t-bundle").to_lowercase();
    let repository = format!("tfimg/{name}");
    let _machine = DockerGuard::images(&[&repository]);
    let mut on_standin = DockerGuard::images(&[&repository]).on(&standin.host);
    on_standin.containers.push(name.clone());
    let mark = unique("mark");
    let spec = format!("name: {name}\nextends: cpu-headless\nenv:\n  BUNDLE_MARK: \"{mark}\"\n");
    // Its lock: the built-in's, whose resolution it shares (it only adds a variable).
    let lock = common::builtin_lock_for("cpu-headless", &name, None);
    let lock = lock.as_str();
    let project = scratch(&[
        (&format!("{name}.yaml"), &spec),
        (&format!("{name}.lock"), lock),
    ]);
    let spec_file = format!("./{name}.yaml");
    let checked = tfimg(project.path(), &["lock", &spec_file, "--check"]);
    assert_eq!(
        checked.code, 0,
        "the lock fits the spec: {}",
        checked.stderr
    );
    let built = tfimg(project.path(), &["build", &spec_file, "--ca-cert", HOST_CA]);
    assert_eq!(built.code, 0, "{}", built.tail());
    let image_id = docker(&[
        "image",
        "inspect",
        "--format",
        "{{.Id}}",
        &format!("{repository}:2.9.3"),
    ]);
    let image_id = image_id.trim().to_string();
    assert!(image_id.starts_with("sha256:"), "{image_id}");

    let saved = tfimg(
        project.path(),
        &["save", &spec_file, "-o", "lab.tar", "--ca-cert", HOST_CA],
    );
    assert_eq!(saved.code, 0, "{}", saved.tail());
    eprintln!("{}", saved.tail());
    let bundle = project.path().join("lab.tar");
    assert!(
        saved
            .stdout
            .contains(&format!("image  {repository}:2.9.3 {repository}:2.9.3-")),
        "{}",
        saved.stdout
    );
    assert!(
        saved
            .stdout
            .contains(&format!("specs/{name}.yaml, specs/{name}.lock")),
        "{}",
        saved.stdout
    );
    let leftovers: Vec<_> = std::fs::read_dir(project.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        3,
        "the spec, its lock, the bundle: {leftovers:?}"
    );

    // What `tar` itself reads: the manifest first, the checksum that covers it last.
    assert_eq!(
        tar_listing(&bundle),
        [
            "manifest.json".to_string(),
            format!("specs/{name}.yaml"),
            format!("specs/{name}.lock"),
            "images.tar".into(),
            "manifest.sha256".into()
        ]
    );
    let manifest_bytes = tar_member(&bundle, "manifest.json");
    let manifest: serde_json::Value = serde_json::from_slice(&manifest_bytes).unwrap();
    let checksum = String::from_utf8(tar_member(&bundle, "manifest.sha256")).unwrap();
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(&manifest_bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(checksum, format!("{digest}  manifest.json\n"));
    assert_eq!(manifest["images"][0]["id"], image_id.as_str());
    assert_eq!(
        manifest["images"][0]["labels"]["io.tfimg.spec"],
        name.as_str()
    );
    assert_eq!(manifest["specs"][0]["lock"], format!("specs/{name}.lock"));
    assert_eq!(
        tar_member(&bundle, &format!("specs/{name}.yaml")),
        spec.as_bytes()
    );
    assert_eq!(
        tar_member(&bundle, &format!("specs/{name}.lock")),
        lock.as_bytes()
    );

    // The offline server: the image is not there.
    let inspect_there = || standin.docker(&["image", "inspect", "--format", "{{.Id}}", &image_id]);
    assert_eq!(
        inspect_there().trim(),
        "",
        "the stand-in must not have the image yet"
    );
    let offline = scratch(&[]);
    let nothing_imported = |what: &str| {
        assert_eq!(inspect_there().trim(), "", "{what}: the image was imported");
        assert_eq!(
            standin.docker(&["images", "-q", &repository]).trim(),
            "",
            "{what}"
        );
        let files: Vec<_> = std::fs::read_dir(offline.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            files
                .iter()
                .all(|file| file.to_string_lossy().ends_with(".tar")),
            "{what}: wrote {files:?}"
        );
    };

    // One byte flipped inside an image layer (the largest entry of Docker's tarball).
    let total = std::fs::metadata(&bundle).unwrap().len();
    let (images_at, images_size) = entry_at(&bundle, 0, total, "images.tar").unwrap();
    let (layer_at, layer_size) = largest_or_named(&bundle, images_at, images_size, None).unwrap();
    let position = layer_at + layer_size / 2;
    flip(&bundle, position);
    let refused = tfimg_with_env(
        offline.path(),
        &["load", bundle.to_str().unwrap()],
        &standin.env(),
    );
    flip(&bundle, position);
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(refused.stdout.is_empty(), "{}", refused.stdout);
    let expected = format!(
        "error: `{}` is refused, nothing was loaded: part `images.tar` does not match its sha256 in the manifest (expected `{}`, found `",
        bundle.display(),
        manifest["parts"][2]["sha256"].as_str().unwrap()
    );
    assert!(refused.stderr.starts_with(&expected), "{}", refused.tail());
    assert!(
        refused
            .stderr
            .contains("\nhint: the bundle was altered or damaged after `tfimg save`"),
        "{}",
        refused.stderr
    );
    nothing_imported("a flipped byte");

    // A copy cut short inside the image part.
    let cut = offline.path().join("cut.tar");
    std::io::copy(
        &mut File::open(&bundle).unwrap().take(position),
        &mut File::create(&cut).unwrap(),
    )
    .unwrap();
    let refused = tfimg_with_env(offline.path(), &["load", "cut.tar"], &standin.env());
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert!(
        refused.stderr.starts_with("error: `cut.tar` is refused, nothing was loaded: it is truncated: it ends inside part `images.tar`, "),
        "{}",
        refused.stderr
    );
    std::fs::remove_file(&cut).unwrap();
    nothing_imported("a truncated copy");

    // The bundle itself: the image with both tags, the spec and its lock where `list` looks.
    let loaded = tfimg_with_env(
        offline.path(),
        &["load", bundle.to_str().unwrap()],
        &standin.env(),
    );
    assert_eq!(loaded.code, 0, "{}", loaded.tail());
    eprintln!("{}", loaded.tail());
    assert!(
        loaded
            .stdout
            .contains(&format!("images/{name}.yaml, images/{name}.lock")),
        "{}",
        loaded.stdout
    );
    for tag in [
        "2.9.3".to_string(),
        format!(
            "2.9.3-{}",
            &manifest["images"][0]["labels"]["io.tfimg.build-key"]
                .as_str()
                .unwrap()[..12]
        ),
    ] {
        let id = standin.docker(&[
            "image",
            "inspect",
            "--format",
            "{{.Id}}",
            &format!("{repository}:{tag}"),
        ]);
        assert_eq!(id.trim(), image_id, "{repository}:{tag}");
    }
    let images = offline.path().join("images");
    assert_eq!(
        std::fs::read(images.join(format!("{name}.yaml"))).unwrap(),
        spec.as_bytes()
    );
    assert_eq!(
        std::fs::read(images.join(format!("{name}.lock"))).unwrap(),
        lock.as_bytes()
    );
    let listed = tfimg(offline.path(), &["list"]);
    assert!(
        listed
            .stdout
            .lines()
            .any(|line| line.starts_with(&name) && line.contains(&format!("images/{name}.yaml"))),
        "{}",
        listed.stdout
    );

    // And it runs there, by its spec's name, without building.
    let run = tfimg_with_env(
        offline.path(),
        &[
            "run",
            &name,
            "--no-build",
            "--ca-cert",
            HOST_CA,
            "--name",
            &name,
            "--",
            "sh",
            "-c",
            "echo mark=$BUNDLE_MARK",
        ],
        &standin.env(),
    );
    assert_eq!(run.code, 0, "{}", run.tail());
    assert_eq!(run.stdout.trim(), format!("mark={mark}"), "{}", run.tail());

    // As after `docker system prune -af` there: exactly this image's tags removed (the
    // image goes with them), then the bundle loaded again brings it back, the same id;
    // the spec files already there are left as they are, and said so.
    let tags = standin.docker(&[
        "images",
        "--format",
        "{{.Repository}}:{{.Tag}}",
        &repository,
    ]);
    let tags: Vec<&str> = tags.split_whitespace().collect();
    assert_eq!(tags.len(), 2, "{tags:?}");
    standin.docker(&[&["rmi"][..], &tags].concat());
    assert_eq!(
        inspect_there().trim(),
        "",
        "the image is gone from the stand-in"
    );
    let again = tfimg_with_env(
        offline.path(),
        &["load", bundle.to_str().unwrap()],
        &standin.env(),
    );
    assert_eq!(again.code, 0, "{}", again.tail());
    assert!(
        again
            .stdout
            .contains(&format!("images/{name}.yaml (unchanged)")),
        "{}",
        again.stdout
    );
    assert_eq!(inspect_there().trim(), image_id);
    let run = tfimg_with_env(
        offline.path(),
        &[
            "run",
            &repository_tag(&repository),
            "--name",
            &name,
            "--",
            "sh",
            "-c",
            "echo mark=$BUNDLE_MARK",
        ],
        &standin.env(),
    );
    assert_eq!(run.stdout.trim(), format!("mark={mark}"), "{}", run.tail());
}

#[tokio::test]
async fn save_refuses_what_is_not_there_before_writing_anything() {
    let Some(_engine) = common::engine().await else { return };
    let name = unique("t-unbuilt").to_lowercase();
    let project = scratch(&[(
        &format!("{name}.yaml"),
        &format!("name: {name}\nextends: cpu-headless\nenv: {{A: \"1\"}}\n"),
    )]);
    let spec_file = format!("./{name}.yaml");
    let refused = tfimg(project.path(), &["save", &spec_file, "-o", "x.tar"]);
    assert_eq!(refused.code, 1, "{}", refused.tail());
    assert_eq!(
        refused.stderr,
        format!(
            "error: `{name}` has no image for its current build key\nhint: build it first (`tfimg build {spec_file}`, with the same `--ca-cert` and mirror options): `tfimg save` carries built images only\n"
        )
    );
    let missing = tfimg(
        project.path(),
        &["save", "tfimg/none-such:1", "cpu-headless", "-o", "x.tar"],
    );
    assert_eq!(missing.code, 1, "{}", missing.tail());
    assert!(
        missing
            .stderr
            .starts_with("error: no spec or image named `tfimg/none-such:1`\n"),
        "{}",
        missing.stderr
    );
    let files: Vec<_> = std::fs::read_dir(project.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 1, "only the spec: {files:?}");
}
