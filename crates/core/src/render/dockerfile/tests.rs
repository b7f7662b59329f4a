use super::quote;
use crate::render::{render, NetworkOptions};
use crate::spec::{self, compat, Catalog};

/// `body` as a spec file, resolved and rendered.
fn rendered(body: &str) -> (spec::ResolvedSpec, crate::render::Rendered) {
    let text = format!("name: x\n{body}").into_bytes();
    let catalog = Catalog::builtin(std::path::PathBuf::from("/project"));
    let document = spec::load::file_document("./x.yaml", Ok(text)).unwrap();
    let resolved = spec::resolve_document(&catalog, document).unwrap();
    let rendered = render(&resolved, &NetworkOptions::default());
    (resolved, rendered)
}

#[test]
fn every_pip_gpu_release_pins_each_nvidia_wheel_and_sets_up_xla() {
    for row in compat::TENSORFLOW {
        if row.pip_cuda == compat::PipCuda::Unavailable {
            continue;
        }
        let (resolved, rendered) = rendered(&format!(
            "extends: gpu-headless\ntensorflow: \"{}\"\n",
            row.minor
        ));
        let gpu = resolved.gpu.as_ref().unwrap();
        let nvidia: Vec<&String> = resolved
            .constraints
            .iter()
            .filter(|line| line.starts_with("nvidia-"))
            .collect();
        for pin in &nvidia {
            let (name, version) = pin.split_once("==").expect("exact pin");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{pin}"
            );
            assert!(compat::Version::parse(version).is_some(), "{pin}");
        }
        let major = gpu.cuda.split('.').next().unwrap();
        for wheel in ["cublas", "cuda-cupti", "cuda-nvcc", "cuda-runtime", "cudnn"] {
            assert!(
                nvidia
                    .iter()
                    .any(|pin| pin.starts_with(&format!("nvidia-{wheel}-cu{major}=="))),
                "{}: no {wheel} pin in {nvidia:?}",
                row.minor
            );
        }
        // ptxas and libdevice come from the nvcc of the runtime's own CUDA release.
        let nvcc = format!("nvidia-cuda-nvcc-cu{major}=={}.", gpu.cuda);
        assert!(nvidia.iter().any(|pin| pin.starts_with(&nvcc)), "{nvcc}");
        let site = resolved.site_packages();
        let data_dir = format!("{site}/nvidia/cuda_nvcc");
        assert_eq!(gpu.cuda_data_dir.as_deref(), Some(data_dir.as_str()));
        let dockerfile = &rendered.dockerfile;
        for expected in [
            format!("    XLA_FLAGS=\"--xla_gpu_cuda_data_dir={data_dir}\"\n"),
            format!("    PATH={data_dir}/bin:$PATH \\\n"),
            format!(" && ln -s libcupti.so.{major}"),
        ] {
            assert!(dockerfile.contains(&expected), "{expected}\n{dockerfile}");
        }
        let verify = String::from_utf8(rendered.files["verify.py"].contents.clone()).unwrap();
        assert!(
            verify.contains(&format!("\"cuda_data_dir\":\"{data_dir}\"")),
            "{verify}"
        );
    }
}

#[test]
fn cpu_images_and_nvidia_cuda_bases_get_no_xla_flags() {
    let (_, cpu) = rendered("extends: cpu-headless\n");
    assert!(!cpu.dockerfile.contains("XLA_FLAGS"));
    assert!(!cpu.dockerfile.contains("cuda_nvcc"));
    let (_, image) = rendered("extends: gpu-headless\ncuda_provider: image\nbase: ubuntu:20.04\n");
    assert!(!image.dockerfile.contains("XLA_FLAGS"));
    // A spec's own XLA_FLAGS stay as written where tfimg has nothing to add.
    let (_, own) = rendered("extends: cpu-headless\nenv:\n  XLA_FLAGS: --xla_dump_to=/tmp/x\n");
    assert!(own
        .dockerfile
        .contains("    XLA_FLAGS=\"--xla_dump_to=/tmp/x\""));
}

#[test]
fn a_spec_s_own_xla_flags_follow_the_data_folder_or_replace_it() {
    let nvcc = "/opt/venv/lib/python3.9/site-packages/nvidia/cuda_nvcc";
    let (_, added) =
        rendered("extends: gpu-headless\nenv:\n  XLA_FLAGS: --xla_gpu_autotune_level=0\n");
    assert!(
        added.dockerfile.contains(&format!(
            "    XLA_FLAGS=\"--xla_gpu_cuda_data_dir={nvcc} --xla_gpu_autotune_level=0\""
        )),
        "{}",
        added.dockerfile
    );
    assert_eq!(added.dockerfile.matches("XLA_FLAGS=").count(), 1);
    let (_, replaced) = rendered(
        "extends: gpu-headless\nenv:\n  XLA_FLAGS: --xla_gpu_cuda_data_dir=/usr/local/cuda\n",
    );
    assert!(
        replaced
            .dockerfile
            .contains("    XLA_FLAGS=\"--xla_gpu_cuda_data_dir=/usr/local/cuda\""),
        "{}",
        replaced.dockerfile
    );
}

#[test]
fn quoting() {
    assert_eq!(quote("true"), "true");
    assert_eq!(quote("cuda>=11.0"), "\"cuda>=11.0\"");
    assert_eq!(quote("a b"), "\"a b\"");
    assert_eq!(quote("$HOME \"x\" \\"), "\"\\$HOME \\\"x\\\" \\\\\"");
    assert_eq!(quote(""), "\"\"");
}

#[test]
fn a_locked_spec_installs_from_its_lock_by_hash() {
    let (mut resolved, unlocked) = rendered("extends: cpu-ssh\npackages: {pip: [rich]}\n");
    let mut lock = crate::lock::tests::sample(&resolved);
    lock.apt.variant = vec![crate::spec::locked::AptPackage {
        name: "openssh-server".to_string(),
        version: "1:8.4p1-5+deb11u3".to_string(),
    }];
    let text = crate::lock::to_text(&lock);
    resolved.lock = Some(crate::lock::load(text.into_bytes(), "x.lock", "x").unwrap());
    let locked = render(&resolved, &NetworkOptions::default());
    insta::assert_snapshot!("locked_cpu_ssh", locked.dockerfile);
    assert_eq!(
        String::from_utf8(locked.files["lock-packages.txt"].contents.clone()).unwrap(),
        crate::lock::requirements(&lock.pip.packages)
    );
    assert!(!locked.files.contains_key("lock-venv.txt"));
    let verify = String::from_utf8(locked.files["verify.py"].contents.clone()).unwrap();
    assert!(verify.contains("installed distributions equal the lock"));
    assert!(
        verify.contains(
            r#"{"pip":"24.0","requests":"2.32.3","setuptools":"75.3.0","tensorflow-cpu":"2.9.3"}"#
        ),
        "{verify}"
    );
    // Without the lock, verify.py is the one every unlocked image has.
    let plain = String::from_utf8(unlocked.files["verify.py"].contents.clone()).unwrap();
    assert!(!plain.contains("lock"), "{plain}");
}

#[test]
fn a_spec_without_a_lock_renders_the_inherited_layers_as_its_ancestor_does() {
    let catalog = Catalog::builtin(std::path::PathBuf::from("/project"));
    let mut ancestor = spec::resolve(&catalog, "cpu-jupyter").unwrap();
    let locked = crate::lock::builtin("cpu-jupyter").unwrap().unwrap();
    ancestor.lock = Some(locked.clone());
    let ancestor = render(&ancestor, &NetworkOptions::default());
    let up_to_tensorflow = |dockerfile: &str| -> String {
        let end = dockerfile.find("# The variant's").unwrap();
        // The first line names the spec: a comment, not a step.
        dockerfile[dockerfile.find('\n').unwrap()..end].to_string()
    };

    for (body, variant_pinned) in [
        ("packages: {pip: [rich]}\n", true),
        ("packages: {apt: [htop], pip: [rich]}\n", false),
    ] {
        let (mut resolved, _) = rendered(&format!("extends: cpu-jupyter\n{body}"));
        let inputs = crate::lock::check::inputs_of(&resolved);
        resolved.inherited = crate::lock::check::inherit(&inputs, locked.clone());
        let derived = render(&resolved, &NetworkOptions::default());
        let dockerfile = &derived.dockerfile;
        assert_eq!(
            up_to_tensorflow(dockerfile),
            up_to_tensorflow(&ancestor.dockerfile),
            "{body}"
        );
        for group in ["lock-pip.txt", "lock-tensorflow.txt"] {
            assert_eq!(
                derived.files[group], ancestor.files[group],
                "{body} {group}"
            );
        }
        assert_eq!(
            dockerfile.contains("      git=1:"),
            variant_pinned,
            "{body}"
        );
        assert_eq!(
            dockerfile.contains("      htop \\\n"),
            !variant_pinned,
            "{body}"
        );
        // Its own pip packages are not the lock's: installed by name, under the pins.
        let own = &dockerfile[dockerfile.find("# The spec's pip packages").unwrap()..];
        assert!(
            own.contains("\nRUN pip install --constraint /opt/tfimg/constraints.txt \\\n")
                && own.contains("      rich\n"),
            "{dockerfile}"
        );
        assert!(!derived.files.contains_key("lock-packages.txt"));
        assert!(!dockerfile.contains("io.tfimg.lock="), "{dockerfile}");
        let verify = String::from_utf8(derived.files["verify.py"].contents.clone()).unwrap();
        assert!(verify.contains("    whole = False\n"), "{verify}");
        assert!(verify.contains("\"tensorflow-cpu\":\"2.9.3\""), "{verify}");
        // The built-in's own pip packages (Jupyter's) are not expected of it.
        assert!(!verify.contains("\"jupyter-server\""), "{verify}");
    }
}

#[test]
fn a_serving_spec_renders_its_model_server_and_the_entrypoint_stanza_that_starts_it() {
    let (resolved, serving) = rendered("extends: cpu-serving\n");
    for package in ["uvicorn==0.39.0", "uvloop==0.23.0", "httptools==0.9.0"] {
        assert!(
            resolved.packages.pip.contains(&package.to_string()),
            "{package}"
        );
    }
    assert_eq!(resolved.ports.get("rest"), Some(&8501));
    let text = |rendered: &crate::render::Rendered, name: &str| {
        String::from_utf8(rendered.files[name].contents.clone()).unwrap()
    };
    let entrypoint = text(&serving, "entrypoint.sh");
    let start = entrypoint.find("    serving)").expect("the serving stanza");
    let end = start + entrypoint[start..].find(";;").unwrap() + 2;
    insta::assert_snapshot!(&entrypoint[start..end]);
    assert!(entrypoint.contains(
        "export TFIMG_SERVING_MODELS=/models TFIMG_SERVING_PORT=8501 TFIMG_SERVING_GRPC_PORT=8500\n"
    ));
    // The package as tfimg carries it, the same for every spec, and the script that starts it.
    assert!(text(&serving, "serving.py").contains("from tfimg_serving.__main__ import main\n"));
    let settings = text(&serving, "tfimg_serving/settings.py");
    assert!(settings.contains("PORT = int(os.environ.get(\"TFIMG_SERVING_PORT\", \"8501\"))"));
    let dockerfile = &serving.dockerfile;
    assert!(
        dockerfile.contains("COPY tfimg_serving /opt/tfimg/tfimg_serving\n"),
        "{dockerfile}"
    );
    assert!(serving.files.contains_key("tfimg_serving/__main__.py"));
    // Every other entrypoint stays byte for byte as it was: no stanza, no placeholder.
    let (_, headless) = rendered("extends: cpu-headless\n");
    let entrypoint = text(&headless, "entrypoint.sh");
    assert!(!entrypoint.contains("serving") && !entrypoint.contains("@SERVING"));
    assert!(!headless.files.contains_key("serving.py"));
}

#[test]
fn a_serving_spec_installs_tensorflow_text_at_its_line_without_its_dependencies() {
    // TensorFlow Serving's build links TF Text's ops in; `tensorflow-text` requires
    // `tensorflow`, and a CPU image holds `tensorflow-cpu`. Before 2.16 it imports
    // `tensorflow_hub`.
    for (body, no_deps) in [
        (
            "extends: cpu-serving\n",
            &[
                "tensorflow-serving-api~=2.9.0",
                "tensorflow-text~=2.9.0",
                "tensorflow-hub<0.16",
            ][..],
        ),
        (
            "extends: tf218-gpu-serving\n",
            &["tensorflow-serving-api~=2.18.0", "tensorflow-text~=2.18.0"][..],
        ),
        // A spec that declares it keeps its own.
        (
            "extends: cpu-serving\npackages: {pip: [tensorflow_text==2.9.0]}\n",
            &["tensorflow-serving-api~=2.9.0", "tensorflow-hub<0.16"][..],
        ),
    ] {
        let (resolved, serving) = rendered(body);
        assert_eq!(resolved.packages.pip_no_deps, no_deps, "{body}");
        let dockerfile = &serving.dockerfile;
        let install = format!(
            " && pip install --no-deps \\\n{}\n",
            no_deps
                .iter()
                .map(|requirement| format!("      '{requirement}'"))
                .collect::<Vec<_>>()
                .join(" \\\n")
        );
        assert!(dockerfile.contains(&install), "{body}\n{dockerfile}");
    }
    let (headless, _) = rendered("extends: cpu-headless\n");
    assert!(headless.packages.pip_no_deps.is_empty());
    // Where the line's tensorflow-text has no wheel for the image's Python, the image goes
    // without it (its server says so) rather than failing to build.
    for (base, tensorflow, text) in [
        ("ubuntu:22.04", "2.13", true),
        ("debian:bookworm-slim", "2.13", false),
        ("debian:bookworm-slim", "2.17", true),
        ("ubuntu:24.04", "2.17", false),
        ("ubuntu:24.04", "2.18", true),
    ] {
        let body = format!("extends: cpu-serving\nbase: {base}\ntensorflow: \"{tensorflow}\"\n");
        let (resolved, _) = rendered(&body);
        let no_deps = &resolved.packages.pip_no_deps;
        assert_eq!(
            no_deps.contains(&format!("tensorflow-text~={tensorflow}.0")),
            text,
            "{body} ({}): {no_deps:?}",
            resolved.python
        );
        assert!(
            no_deps[0].starts_with("tensorflow-serving-api~="),
            "{no_deps:?}"
        );
    }
}
