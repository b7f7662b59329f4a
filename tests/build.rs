//! `tfimg build` and `tfimg base bootstrap` against the real Docker Engine. Every test uses
//! its own spec name (so its own `tfimg/<name>` images) and removes them when it ends,
//! failed or not. Specs extend the built-ins, so the heavy layers come from the cache that
//! `scripts/test` warms.

mod common;

use tfimg_testing::engine::prelude::*;

use common::{assert_contains, scratch, tfimg_with_env, unique, DockerGuard, HOST_CA};

/// pip goes direct to these, so a build with a bogus proxy still succeeds.
const NO_PROXY_HOSTS: &str = "pypi.org,files.pythonhosted.org,deb.debian.org";

fn spec_file(name: &str, body: &str) -> String {
    format!("name: {name}\n{body}")
}

/// A scratch project whose `images/x.yaml` is spec `name` with `body`.
fn spec_project(name: &str, body: &str) -> tempfile::TempDir {
    scratch(&[("images/x.yaml", &spec_file(name, body))])
}

fn build(folder: &std::path::Path, spec: &str, extra: &[&str]) -> common::Run {
    let mut args = vec!["build", spec, "--ca-cert", HOST_CA, "--progress", "plain"];
    args.extend_from_slice(extra);
    tfimg_with_env(folder, &args, &[])
}

#[tokio::test]
async fn build_verifies_labels_tags_and_a_second_build_is_up_to_date() {
    let Some((engine, name, _guard)) = common::image_test("t-build").await else { return };
    let folder = spec_project(&name, "extends: cpu-headless\n");

    let first = build(folder.path(), &name, &[]);
    assert_eq!(first.code, 0, "{}", first.tail());
    assert_eq!(first.stdout, format!("tfimg/{name}:2.9.3\n"));
    assert_contains(&first.stderr, "ok    tensorflow version: 2.9.3");
    assert_contains(&first.stderr, "ok    pin numpy<1.24: numpy 1.");
    // Every image proves XLA works: a jit_compile=True function, computed on the CPU.
    assert!(
        first.stderr.contains(
            "ok    jit_compile=True function computed on the CPU: 1540.0 (expected 1540.0), compiled by XLA"
        ),
        "{}",
        first.stderr
    );

    let image = engine
        .image(&format!("tfimg/{name}:2.9.3"))
        .await
        .unwrap()
        .expect("tagged");
    let key = image.labels["io.tfimg.build-key"].clone();
    assert_eq!(key.len(), 64);
    for (label, value) in [
        ("io.tfimg.spec", name.as_str()),
        ("io.tfimg.tensorflow", "2.9.3"),
        ("io.tfimg.python", "3.9"),
        ("io.tfimg.service", "none"),
        ("io.tfimg.version", env!("CARGO_PKG_VERSION")),
    ] {
        assert_eq!(
            image.labels.get(label).map(String::as_str),
            Some(value),
            "{label}"
        );
    }
    let keyed = format!("tfimg/{name}:2.9.3-{}", &key[..12]);
    assert!(image.tags.contains(&keyed), "{:?}", image.tags);

    let second = build(folder.path(), &name, &[]);
    assert_eq!(second.code, 0, "{}", second.tail());
    assert_contains(&second.stderr, "is up to date");
    assert!(!second.stderr.contains("Step "), "{}", second.tail());
    let again = engine
        .image(&format!("tfimg/{name}:2.9.3"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.id, image.id);

    // The same answer as JSON events, the last one being the result.
    let json = tfimg_with_env(
        folder.path(),
        &["build", &name, "--ca-cert", HOST_CA, "--progress", "json"],
        &[],
    );
    assert_eq!(json.code, 0, "{}", json.tail());
    let events: Vec<serde_json::Value> = json
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON event per line"))
        .collect();
    let result = events.last().unwrap();
    assert_eq!(result["event"], "result");
    assert_eq!(result["up_to_date"], true);
    assert_eq!(result["key"], key.as_str());
}

#[tokio::test]
async fn changing_one_pip_package_changes_the_key_and_rebuilds() {
    let Some((engine, name, _guard)) = common::image_test("t-pip").await else { return };
    let write = |pin: &str| {
        spec_project(
            &name,
            &format!("extends: cpu-headless\npackages:\n  pip: [\"six=={pin}\"]\n"),
        )
    };
    let folder = write("1.16.0");
    let first = build(folder.path(), &name, &[]);
    assert_eq!(first.code, 0, "{}", first.tail());
    let before = engine
        .image(&format!("tfimg/{name}:2.9.3"))
        .await
        .unwrap()
        .unwrap();

    let folder = write("1.17.0");
    let second = build(folder.path(), &name, &[]);
    assert_eq!(second.code, 0, "{}", second.tail());
    assert!(
        !second.stderr.contains("is up to date"),
        "{}",
        second.stderr
    );
    let after = engine
        .image(&format!("tfimg/{name}:2.9.3"))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(
        before.labels["io.tfimg.build-key"],
        after.labels["io.tfimg.build-key"]
    );
    assert_ne!(before.id, after.id);
    // The superseded build goes with its keyed tag (removed in the background).
    let old_key = &before.labels["io.tfimg.build-key"];
    let old_tag = format!("tfimg/{name}:2.9.3-{}", &old_key[..12]);
    // The prune waits until no build runs on the machine (they hold the images lock
    // shared); other tests build in parallel, so this only catches a hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while engine.image(&before.id).await.unwrap().is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "the superseded build was never removed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(engine.image(&old_tag).await.unwrap().is_none());

    let finished = common::run_in(
        &engine,
        &after.id,
        &["python", "-c", "import six; print(six.__version__)"],
        false,
    )
    .await;
    assert_eq!(finished.exit_code, Some(0), "{}", finished.output);
    assert_eq!(finished.output.trim(), "1.17.0");
}

#[tokio::test]
async fn a_failing_step_exits_1_with_its_output_and_leaves_no_tag() {
    let Some((engine, name, _guard)) = common::image_test("t-fail").await else { return };
    let body = "extends: cpu-headless\npackages:\n  apt: [tfimg-no-such-package]\n";
    let run = failed_build(&engine, &name, body).await;
    assert_contains(&run.stderr, "error: building `");
    assert_contains(&run.stderr, "failed at step ");
    assert_contains(&run.stderr, " `RUN apt-get update ");
    assert_contains(
        &run.stderr,
        "  | E: Unable to locate package tfimg-no-such-package",
    );
    assert_contains(&run.stderr, "returned a non-zero code: 100");
    assert_contains(&run.stderr, "\nhint: ");
}

#[tokio::test]
async fn a_failed_verification_exits_1_and_leaves_no_image() {
    let Some((engine, name, _guard)) = common::image_test("t-verify").await else { return };
    // Python cannot start with a bogus PYTHONHOME: the image builds, verification fails.
    let body = "extends: cpu-headless\nenv:\n  PYTHONHOME: /nonexistent\n";
    let run = failed_build(&engine, &name, body).await;
    assert_contains(&run.stderr, "error: verification of `");
    assert_contains(&run.stderr, "the image was not tagged");
}

#[tokio::test]
async fn proxy_credentials_never_reach_the_image_or_its_history() {
    let Some((engine, name, _guard)) = common::image_test("t-proxy").await else { return };
    // A requirement unique to this test forces a pip step to run with the proxy variables
    // set; NO_PROXY lets pip go direct, so the build still succeeds here.
    let marker: u64 = name.bytes().fold(7u64, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(byte as u64)
    }) % 1_000_000_007;
    let folder = spec_project(
        &name,
        &format!("extends: cpu-headless\npackages:\n  pip: [\"six>=1.0,!=0.0.{marker}\"]\n"),
    );
    let secret = "s3cr3t-proxy-password";
    let proxy = format!("http://tfimg:{secret}@proxy.invalid:3128");
    let run = tfimg_with_env(
        folder.path(),
        &["build", &name, "--ca-cert", HOST_CA, "--progress", "plain"],
        &[
            ("HTTPS_PROXY", &proxy),
            ("https_proxy", &proxy),
            ("NO_PROXY", NO_PROXY_HOSTS),
            ("no_proxy", NO_PROXY_HOSTS),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.tail());
    let reference = format!("tfimg/{name}:2.9.3");
    let history = engine.history(&reference).await.unwrap();
    assert!(history.len() > 5);
    for layer in &history {
        assert!(
            !layer.contains(secret),
            "history leaks the proxy password: {layer}"
        );
        assert!(
            !layer.contains("proxy.invalid"),
            "history names the proxy: {layer}"
        );
    }
    let finished = common::run_in(
        &engine,
        &reference,
        &[
            "sh",
            "-c",
            "env; cat /etc/apt/apt.conf.d/* 2>/dev/null; true",
        ],
        false,
    )
    .await;
    assert!(!finished.output.contains(secret), "{}", finished.output);
    // Nor in the labels, nor in any byte of any layer.
    let labels = common::docker(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config}}",
        &reference,
    ]);
    assert!(!labels.contains(secret), "{labels}");
    assert_eq!(
        common::secrets_in_layers(&reference, &[secret, "proxy.invalid"]),
        Vec::<String>::new(),
        "the proxy reached a layer"
    );
    assert_contains(&finished.output, "PIP_CONSTRAINT=");
}

#[tokio::test]
async fn the_ca_lands_where_apt_pip_and_curl_look() {
    let Some((engine, name, _guard)) = common::image_test("t-ca").await else { return };
    let folder = spec_project(&name, "extends: cpu-headless\n");
    let run = build(folder.path(), &name, &[]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let script = "set -e; \
        test -s /usr/local/share/ca-certificates/tfimg-ca.crt; \
        echo \"PIP_CERT=$PIP_CERT REQUESTS_CA_BUNDLE=$REQUESTS_CA_BUNDLE SSL_CERT_FILE=$SSL_CERT_FILE\"; \
        python - <<'EOF'\n\
import ssl, urllib.request\n\
bundle = open('/etc/ssl/certs/ca-certificates.crt').read()\n\
extra = open('/usr/local/share/ca-certificates/tfimg-ca.crt').read()\n\
blocks = [b for b in extra.split('-----END CERTIFICATE-----') if 'BEGIN CERTIFICATE' in b]\n\
missing = [b for b in blocks if b.split('-----BEGIN CERTIFICATE-----')[1].strip() not in bundle]\n\
print('certificates', len(blocks), 'missing', len(missing))\n\
urllib.request.urlopen('https://pypi.org/simple/six/', timeout=30).read(100)\n\
print('pypi over https: trusted')\n\
EOF";
    let finished = common::run_in(
        &engine,
        &format!("tfimg/{name}:2.9.3"),
        &["sh", "-c", script],
        true,
    )
    .await;
    assert_eq!(finished.exit_code, Some(0), "{}", finished.output);
    let bundle = "/etc/ssl/certs/ca-certificates.crt";
    assert!(
        finished.output.contains(&format!(
            "PIP_CERT={bundle} REQUESTS_CA_BUNDLE={bundle} SSL_CERT_FILE={bundle}"
        )),
        "{}",
        finished.output
    );
    assert_contains(&finished.output, " missing 0\n");
    assert_contains(&finished.output, "pypi over https: trusted");
}

#[test]
fn an_unreachable_daemon_exits_2_naming_the_socket_and_the_fix() {
    let folder = scratch(&[]);
    let run = tfimg_with_env(
        folder.path(),
        &["build", "cpu-headless"],
        &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")],
    );
    assert_eq!(run.code, 2, "{}", run.tail());
    assert_eq!(
        run.stderr,
        "error: cannot reach the Docker daemon at `unix:///nonexistent/docker.sock`: the socket does not exist (is the daemon running?)\n\
         hint: start the daemon (`sudo systemctl start docker`, or `sudo dockerd &` where there is no systemd), or point DOCKER_HOST at a running one\n"
    );
}

#[test]
fn network_flags_are_checked_before_anything_is_created() {
    let folder = scratch(&[("not-a-cert.pem", "hello\n")]);
    let run = tfimg_with_env(
        folder.path(),
        &["build", "cpu-headless", "--ca-cert", "not-a-cert.pem"],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.tail());
    assert!(
        run.stderr
            .starts_with("error: `not-a-cert.pem` holds no PEM certificate\nhint: "),
        "{}",
        run.stderr
    );
    let run = tfimg_with_env(
        folder.path(),
        &[
            "build",
            "cpu-headless",
            "--pip-index-url",
            "https://me:token@nexus.example/simple",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.tail());
    assert_contains(&run.stderr, "carries credentials");
    let rendered = tfimg_with_env(
        folder.path(),
        &[
            "render",
            "cpu-headless",
            "--ca-cert",
            HOST_CA,
            "--apt-mirror",
            "http://mirror.example/debian",
            "--pip-index-url",
            "http://pypi.example/simple",
        ],
        &[],
    );
    assert_eq!(rendered.code, 0, "{}", rendered.tail());
    insta::assert_snapshot!(rendered.stdout);
}

#[tokio::test]
async fn a_missing_base_names_the_command_that_makes_it_and_bootstrap_makes_it() {
    let Some(engine) = common::engine().await else { return };
    let repository = unique("tfimg-test-base") + "/debian";
    let reference = format!("{repository}:bullseye-slim");
    let _guard = DockerGuard::images(&[&repository]);
    let folder = scratch(&[(
        "images/x.yaml",
        &format!(
            "name: {}\nextends: cpu-headless\nbase: {reference}\n",
            unique("t-base")
        ),
    )]);
    let spec = std::fs::read_to_string(folder.path().join("images/x.yaml")).unwrap();
    let name = spec
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("name: ")
        .to_string();
    let run = tfimg_with_env(folder.path(), &["build", &name], &[]);
    assert_eq!(run.code, 1, "{}", run.tail());
    assert!(
        run.stderr.contains(&format!(
            "\nerror: base image `{reference}` is not on this machine and could not be pulled: "
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "hint: make it without a registry: `tfimg base bootstrap {reference}`"
        )),
        "{}",
        run.stderr
    );

    let made = tfimg_with_env(folder.path(), &["base", "bootstrap", &reference], &[]);
    assert_eq!(made.code, 0, "{}", made.tail());
    assert_eq!(made.stdout, format!("{reference}\n"));
    let image = engine.image(&reference).await.unwrap().expect("imported");
    assert_eq!(
        image.labels.get("io.tfimg.bootstrap").map(String::as_str),
        Some("debian bullseye from http://deb.debian.org/debian")
    );
    let finished = common::run_in(&engine, &reference, &["sh",
                    "-c",
                    "cat /etc/debian_version; ls /usr/share/man | wc -l; cat /etc/dpkg/dpkg.cfg.d/tfimg-slim | head -1"], false).await;
    let lines: Vec<&str> = finished.output.lines().collect();
    assert!(lines[0].starts_with("11."), "{}", finished.output);
    assert_eq!(lines[1], "0", "a -slim base has no man pages");
    assert_eq!(lines[2], "path-exclude /usr/share/doc/*");

    let again = tfimg_with_env(folder.path(), &["base", "bootstrap", &reference], &[]);
    assert_eq!(again.code, 0);
    assert_contains(&again.stderr, "already exists");
}

#[tokio::test]
async fn a_gpu_image_verifies_every_cuda_library_but_the_driver_and_xla_s_tools() {
    let Some(engine) = common::engine().await else { return };
    let name = unique("t-gpu");
    let container = unique("t-gpu-xla");
    let mut guard = DockerGuard::images(&[&format!("tfimg/{name}")]);
    guard.containers = vec![container.clone()];
    let folder = spec_project(&name, "extends: gpu-headless\n");
    let run = build(folder.path(), &name, &[]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let nvcc = "/opt/venv/lib/python3.9/site-packages/nvidia/cuda_nvcc";
    for line in [
        "ok    built with CUDA: True",
        "ok    built against CUDA 11.2: 11.2",
        "ok    built against cuDNN 8: 8",
        "ok    loads libcudart.so.11.0: resolved",
        "ok    loads libcublasLt.so.11: resolved",
        "ok    loads libcudnn.so.8: resolved",
        "ok    loads libcudnn_cnn_infer.so.8: resolved",
        "ok    loads libcusolver.so.11: resolved",
        "ok    loads libcupti.so: resolved",
        // XLA's tools, from the nvcc wheel of the runtime's CUDA 11.8.
        &format!("ok    XLA_FLAGS names the CUDA data folder: --xla_gpu_cuda_data_dir={nvcc}"),
        &format!("ok    libdevice for XLA: {nvcc}/nvvm/libdevice/libdevice.10.bc"),
        &format!("ok    ptxas --version reports CUDA 11.8: {nvcc}/bin/ptxas: release 11.8, V11.8.89"),
        "ok    jit_compile=True function computed on the CPU: 1540.0 (expected 1540.0), compiled by XLA",
        // Every CUDA wheel holds its exact pin; cuDNN alone would take any cuBLAS.
        "ok    pin nvidia-cublas-cu11==11.11.3.6: nvidia-cublas-cu11 11.11.3.6",
        "ok    pin nvidia-cuda-nvcc-cu11==11.8.89: nvidia-cuda-nvcc-cu11 11.8.89",
        "ok    pin nvidia-cuda-cupti-cu11==11.8.87: nvidia-cuda-cupti-cu11 11.8.87",
        "ok    pin nvidia-cudnn-cu11==8.6.0.163: nvidia-cudnn-cu11 8.6.0.163",
    ] {
        assert!(
            run.stderr.contains(line),
            "missing `{line}` in:\n{}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains("libcuda.so.1"), "{}", run.tail());
    let image = engine
        .image(&format!("tfimg/{name}:2.9.3"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        image.labels.get("io.tfimg.cuda").map(String::as_str),
        Some("11.8")
    );
    assert_eq!(
        image.labels.get("io.tfimg.cudnn").map(String::as_str),
        Some("8.6")
    );

    // What a user's session sees, as another uid in a login shell (what SSH and Jupyter
    // terminals start): ptxas on PATH assembles a kernel, XLA_FLAGS is set, and an
    // XLA-compiled function runs under those flags on a machine without a GPU.
    let session = r#"set -e
command -v ptxas
echo "XLA_FLAGS=$XLA_FLAGS"
cd "$(mktemp -d)"
printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry noop()\n{\n\tret;\n}\n' >noop.ptx
ptxas -arch=sm_70 noop.ptx -o noop.cubin
echo "cubin $(head -c 4 noop.cubin | tail -c 3)"
python -c 'import tensorflow as tf
f = tf.function(lambda x: tf.reduce_sum(x * x), jit_compile=True)
print("xla", float(f(tf.range(10.0))))' 2>/dev/null"#;
    let reference = format!("tfimg/{name}:2.9.3");
    let user = tfimg_with_env(
        folder.path(),
        &[
            "run", &reference, "--name", &container, "--uid", "4321", "--gid", "4322", "--",
            "bash", "-lc", session,
        ],
        &[],
    );
    assert_eq!(user.code, 0, "{}", user.tail());
    assert_eq!(
        user.stdout,
        format!(
            "{nvcc}/bin/ptxas\nXLA_FLAGS=--xla_gpu_cuda_data_dir={nvcc}\ncubin ELF\nxla 285.0\n"
        ),
        "{}",
        user.stderr
    );
}

#[tokio::test]
async fn files_of_a_spec_are_copied_minus_their_ignore_patterns() {
    let Some((engine, name, _guard)) = common::image_test("t-files").await else { return };
    let folder = scratch(&[
        (
            "images/x.yaml",
            &spec_file(
                &name,
                "extends: cpu-headless\nfiles:\n  - src: ../code\n    ignore: [\"*.ckpt\", \"data/\"]\n  - ../README.md:/opt/readme.md\n",
            ),
        ),
        ("code/train.py", "print('trained')\n"),
        ("code/model.ckpt", "weights"),
        ("code/data/big.bin", "data"),
        ("README.md", "hello\n"),
    ]);
    let run = build(folder.path(), &name, &[]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let finished = common::run_in(&engine, &format!("tfimg/{name}:2.9.3"), &["sh",
                    "-c",
                    "cd /tf/code && find . -type f | sort && python train.py && cat /opt/readme.md && stat -c %u train.py"], false).await;
    assert_eq!(finished.exit_code, Some(0), "{}", finished.output);
    assert_eq!(finished.output, "./train.py\ntrained\nhello\n1000\n");

    // The rendered context holds the same files, so `docker build` of it is identical.
    let rendered = tfimg_with_env(folder.path(), &["render", &name, "-o", "out"], &[]);
    assert_eq!(rendered.code, 0, "{}", rendered.tail());
    assert!(folder.path().join("out/files/0/train.py").is_file());
    assert!(!folder.path().join("out/files/0/model.ckpt").exists());
    assert_eq!(
        std::fs::read_to_string(folder.path().join("out/files/1")).unwrap(),
        "hello\n"
    );
}

/// A build of spec `name` with `body` that fails: exit 1, nothing on stdout, and no
/// image of it left; what it printed on stderr.
async fn failed_build(
    engine: &tfimg_testing::engine::Docker,
    name: &str,
    body: &str,
) -> common::Run {
    let folder = spec_project(name, body);
    let run = build(folder.path(), name, &[]);
    assert_eq!(run.code, 1, "{}", run.tail());
    assert_eq!(run.stdout, "");
    assert_no_image_of(engine, name).await;
    run
}

/// Neither the tag of spec `name` nor any image labelled with it (an untagged one a
/// failed build left behind) is on the engine.
async fn assert_no_image_of(engine: &tfimg_testing::engine::Docker, name: &str) {
    let tag = format!("tfimg/{name}:2.9.3");
    assert!(engine.image(&tag).await.unwrap().is_none(), "{tag} is left");
    let labelled = engine
        .images_with_label(&format!("io.tfimg.spec={name}"))
        .await
        .unwrap();
    assert!(labelled.is_empty(), "images labelled {name} are left");
}
