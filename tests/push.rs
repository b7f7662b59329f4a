//! `tfimg push` to a real registry (Debian's docker-registry, started by the test on a
//! free loopback port with its storage in a scratch folder), then pulled back by digest.

mod common;

use tfimg_testing::engine::prelude::*;

use common::{scratch, tfimg_with_env, DockerGuard};

struct Registry(std::process::Child);

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_pushed_image_can_be_pulled_back_by_digest() {
    let Some(engine) = common::engine().await else { return };
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let folder = scratch(&[]);
    let storage = folder.path().join("storage");
    let config = folder.path().join("registry.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            storage.display()
        ),
    )
    .unwrap();
    let child = std::process::Command::new("docker-registry")
        .arg("serve")
        .arg(&config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("docker-registry is installed (scripts/setup-machine)");
    let _registry = Registry(child);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while tfimg_testing::host::Probes::http_status(&tfimg_testing::host::Machine, port, "/v2/")
        .await
        != Some(200)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the registry never answered"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let registry = format!("127.0.0.1:{port}");
    let _guard = DockerGuard::images(&[&format!("{registry}/debian")]);

    // The registry-free base image: small, and made by tfimg itself.
    let pushed = tfimg_with_env(
        folder.path(),
        &[
            "push",
            "debian:bullseye-slim",
            "--registry",
            &registry,
            "--progress",
            "plain",
        ],
        &[],
    );
    assert_eq!(pushed.code, 0, "{}", pushed.tail());
    let reference = pushed.stdout.trim().to_string();
    assert!(
        reference.starts_with(&format!("{registry}/debian@sha256:")),
        "{reference}"
    );
    assert_eq!(
        reference.split('@').nth(1).unwrap().len(),
        "sha256:".len() + 64
    );

    // Forget the local copy under that name, then pull it back by digest.
    engine
        .remove_image(&format!("{registry}/debian:bullseye-slim"), false)
        .await
        .unwrap();
    engine
        .pull(&reference, |_| {})
        .await
        .expect("pull by digest");
    let pulled = engine.image(&reference).await.unwrap().expect("pulled");
    let original = engine.image("debian:bullseye-slim").await.unwrap().unwrap();
    assert_eq!(pulled.id, original.id);

    let missing = tfimg_with_env(
        folder.path(),
        &["push", "tfimg/no-such-image:1", "--registry", &registry],
        &[],
    );
    assert_eq!(missing.code, 1);
    assert!(missing
        .stderr
        .starts_with("error: no image named `tfimg/no-such-image:1` on this machine"));
}
