//! `tfimg list`, `show` and `render` as a user runs them: whole outputs and whole error
//! messages, from a scratch folder so only the built-ins (and the test's own specs) exist.

mod common;

use common::{scratch, tfimg, BUILTINS};

#[test]
fn list_prints_the_builtins_with_their_stack() {
    let folder = scratch(&[]);
    let run = tfimg(folder.path(), &["list"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn list_json_carries_the_same_entries() {
    let folder = scratch(&[]);
    let run = tfimg(folder.path(), &["list", "--json"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let entries: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, BUILTINS);
    let gpu = entries.iter().find(|e| e["name"] == "gpu-jupyter").unwrap();
    assert_eq!(gpu["tensorflow"], "2.9.3");
    assert_eq!(gpu["python"], "3.9");
    assert_eq!(gpu["cuda"], "11.8");
    assert_eq!(gpu["cudnn"], "8.6");
    assert_eq!(gpu["service"], "jupyter");
    let cpu = entries
        .iter()
        .find(|e| e["name"] == "cpu-headless")
        .unwrap();
    assert_eq!(cpu["cuda"], serde_json::Value::Null);
    assert_eq!(cpu["service"], "none");
}

#[test]
fn every_builtin_renders_to_its_snapshot_and_identically_twice() {
    let folder = scratch(&[]);
    for name in BUILTINS {
        let first = tfimg(folder.path(), &["render", name]);
        assert_eq!(first.code, 0, "{name}: {}", first.stderr);
        let second = tfimg(folder.path(), &["render", name]);
        assert_eq!(first.stdout.as_bytes(), second.stdout.as_bytes(), "{name}");
        insta::assert_snapshot!(format!("dockerfile_{name}"), first.stdout);
    }
}

#[test]
fn gpu_jupyter_pins_tensorflow_installs_cuda_wheels_exposes_8888_and_runs_unprivileged() {
    let folder = scratch(&[]);
    let run = tfimg(folder.path(), &["render", "gpu-jupyter", "-o", "context"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let output = folder.path().join("context");
    let dockerfile = std::fs::read_to_string(output.join("Dockerfile")).unwrap();
    let lines: Vec<&str> = dockerfile.lines().map(str::trim).collect();
    // The constraints file pins TensorFlow, its known-good numpy/protobuf, and every
    // nvidia-* wheel pip installs for it, exactly (cuDNN itself asks for any cuBLAS)...
    let constraints = &lines[lines
        .iter()
        .position(|l| l.starts_with("&& printf"))
        .unwrap()..];
    let constraints_end = constraints
        .iter()
        .position(|l| l.starts_with("> /opt/tfimg/constraints.txt"))
        .unwrap();
    let cuda_pins = [
        "nvidia-cublas-cu11==11.11.3.6 \\",
        "nvidia-cuda-cupti-cu11==11.8.87 \\",
        "nvidia-cuda-nvcc-cu11==11.8.89 \\",
        "nvidia-cuda-nvrtc-cu11==11.8.89 \\",
        "nvidia-cuda-runtime-cu11==11.8.89 \\",
        "nvidia-cudnn-cu11==8.6.0.163 \\",
        "nvidia-cufft-cu11==10.9.0.58 \\",
        "nvidia-curand-cu11==10.3.0.86 \\",
        "nvidia-cusolver-cu11==11.4.1.48 \\",
        "nvidia-cusparse-cu11==11.7.5.86 \\",
    ];
    let mut pinned = vec![
        "tensorflow==2.9.3 \\",
        "'numpy<1.24' \\",
        "'protobuf<3.20' \\",
    ];
    pinned.extend(cuda_pins);
    assert_eq!(&constraints[1..constraints_end], pinned);
    // ...and the install under it brings TensorFlow with the CUDA 11 / cuDNN 8 wheels,
    // CUPTI for the profiler and nvcc's ptxas and libdevice for XLA, in the same layer:
    // from the built-in's lock, each file by its sha256, at the pinned versions.
    let install = &constraints[constraints_end + 1..];
    assert_eq!(
        install[0],
        "&& pip install --require-hashes --no-deps -r /opt/tfimg/lock/tensorflow.txt \\"
    );
    assert_eq!(
        install[1],
        "&& ln -s libcupti.so.11.8 /opt/venv/lib/python3.9/site-packages/nvidia/cuda_cupti/lib/libcupti.so"
    );
    let locked = std::fs::read_to_string(output.join("lock-tensorflow.txt")).unwrap();
    for pin in std::iter::once("tensorflow==2.9.3 \\").chain(cuda_pins) {
        let pin = pin.trim_end_matches(" \\");
        assert!(
            locked
                .lines()
                .any(|line| line.starts_with(&format!("{pin} --hash=sha256:"))),
            "{pin}: {locked}"
        );
    }
    // XLA finds libdevice through XLA_FLAGS, and ptxas in the same folder and on PATH.
    let nvcc = "/opt/venv/lib/python3.9/site-packages/nvidia/cuda_nvcc";
    assert!(
        lines.contains(&format!("XLA_FLAGS=\"--xla_gpu_cuda_data_dir={nvcc}\"").as_str()),
        "{dockerfile}"
    );
    assert!(
        lines.contains(&format!("PATH={nvcc}/bin:$PATH \\").as_str()),
        "{dockerfile}"
    );
    assert!(lines
        .iter()
        .any(|l| l.starts_with("EXPOSE") && l.split(' ').any(|p| p == "8888")));
    assert!(lines.contains(&"USER tf"));
    assert!(lines.contains(&"NVIDIA_REQUIRE_CUDA=\"cuda>=11.0\" \\"));
    assert!(lines.iter().any(
        |l| l.trim_start_matches("ENV ").starts_with("LD_LIBRARY_PATH=")
            && l.contains("/site-packages/nvidia/cudnn/lib")
    ));
    // The CUDA compute cache: where CUDA looks, as large as CUDA allows, writable by any
    // uid (the volume `tfimg run` mounts there copies the folder's mode), and labelled.
    assert!(lines.contains(&"ENV CUDA_CACHE_MAXSIZE=4294967296 \\"));
    assert!(lines.contains(&"CUDA_CACHE_PATH=/var/cache/tfimg/cuda \\"));
    assert!(lines.contains(&"&& mkdir -p -m 1777 /var/cache/tfimg/cuda \\"));
    assert!(lines.contains(&"io.tfimg.cuda-cache=/var/cache/tfimg/cuda \\"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(output.join("entrypoint.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    let mut written: Vec<String> = std::fs::read_dir(&output)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "Dockerfile",
            "entrypoint.sh",
            "idle.py",
            "jupyter_server_config.py",
            "lock-packages.txt",
            "lock-pip.txt",
            "lock-tensorflow.txt",
            "page_config.json",
            "profile.sh",
            "verify.py"
        ]
    );
    // Login shells (SSH, Jupyter terminals) reset PATH: the profile puts ptxas back too.
    let profile = std::fs::read_to_string(output.join("profile.sh")).unwrap();
    assert!(
        profile.contains(&format!("for folder in /opt/venv/bin {nvcc}/bin; do")),
        "{profile}"
    );
    // What -o writes is exactly what stdout shows.
    let printed = tfimg(folder.path(), &["render", "gpu-jupyter"]);
    assert_eq!(printed.stdout, dockerfile);
}

/// The Dockerfile of `spec` up to and including its TensorFlow layer (comments aside),
/// then the lock's requirement files those layers copy in (the built-ins are locked).
fn up_to_tensorflow(spec: &str) -> Vec<String> {
    up_to_tensorflow_in(&scratch(&[]), spec)
}

fn up_to_tensorflow_in(folder: &tempfile::TempDir, spec: &str) -> Vec<String> {
    let run = tfimg(folder.path(), &["render", spec, "-o", "ctx"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let dockerfile = std::fs::read_to_string(folder.path().join("ctx/Dockerfile")).unwrap();
    let mut copied = Vec::new();
    for group in ["pip", "tensorflow"] {
        let file = folder.path().join(format!("ctx/lock-{group}.txt"));
        copied.push(std::fs::read_to_string(file).unwrap_or_default());
    }
    let lines: Vec<String> = dockerfile.lines().map(str::to_string).collect();
    let variant = lines
        .iter()
        .position(|line| {
            line.starts_with("# The variant's")
                || line.starts_with("# The spec's pip")
                || line.starts_with("# The user")
        })
        .expect("a layer above TensorFlow");
    lines[..variant]
        .iter()
        .filter(|line| !line.starts_with('#'))
        .cloned()
        .chain(copied)
        .collect()
}

#[test]
fn a_spec_without_a_lock_renders_its_built_in_s_locked_layers_so_it_shares_them() {
    let builtins = BUILTINS;
    let specs: Vec<(String, String)> = builtins
        .iter()
        .map(|builtin| {
            (
                format!("images/my-{builtin}.yaml"),
                format!("name: my-{builtin}\nextends: {builtin}\npackages: {{apt: [htop], pip: [rich]}}\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = specs
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    let folder = scratch(&files);
    for &builtin in builtins {
        let derived = up_to_tensorflow_in(&folder, &format!("my-{builtin}"));
        assert!(
            derived.iter().any(|line| line.contains("--require-hashes")),
            "{builtin}"
        );
        assert_eq!(
            derived,
            up_to_tensorflow(builtin),
            "my-{builtin} vs {builtin}"
        );
    }
}

/// Whether the variant's apt layer installs `tool` (by name, or pinned by a lock).
fn installs(variant: &str, tool: &str) -> bool {
    variant.contains(&format!("      {tool} \\")) || variant.contains(&format!("      {tool}="))
}

#[test]
fn the_variants_of_one_tensorflow_share_every_layer_up_to_tensorflow_and_carry_their_tools() {
    for family in [
        ["cpu-headless", "cpu-jupyter", "cpu-ssh"],
        ["gpu-headless", "gpu-jupyter", "gpu-ssh"],
        ["tf218-cpu-headless", "tf218-cpu-jupyter", "tf218-cpu-ssh"],
        ["tf218-gpu-headless", "tf218-gpu-jupyter", "tf218-gpu-ssh"],
    ] {
        let shared = up_to_tensorflow(family[0]);
        assert!(shared.iter().any(|line| line.contains("tensorflow")));
        for spec in &family[1..] {
            assert_eq!(up_to_tensorflow(spec), shared, "{spec} vs {}", family[0]);
        }
    }
    // What a person at an SSH shell expects, and git in Jupyter, above TensorFlow.
    let folder = scratch(&[]);
    let ssh = tfimg(folder.path(), &["render", "gpu-ssh"]).stdout;
    let variant = &ssh[ssh.find("# The variant's system packages").unwrap()..];
    for tool in [
        "tmux", "screen", "git", "nano", "vim-tiny", "less", "curl", "htop",
    ] {
        assert!(installs(variant, tool), "{tool}");
    }
    let jupyter = tfimg(folder.path(), &["render", "cpu-jupyter"]).stdout;
    let variant = &jupyter[jupyter.find("# The variant's system packages").unwrap()..];
    assert!(installs(variant, "git"));
}

#[test]
fn cpu_headless_installs_tensorflow_cpu_and_no_cuda() {
    let folder = scratch(&[]);
    let run = tfimg(folder.path(), &["render", "cpu-headless"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    // From its embedded lock, by hash: tensorflow-cpu and what it pulls, no CUDA wheel.
    assert!(run.stdout.contains(
        "\n && pip install --require-hashes --no-deps -r /opt/tfimg/lock/tensorflow.txt\n"
    ));
    let context = tfimg(folder.path(), &["render", "cpu-headless", "-o", "ctx"]);
    assert_eq!(context.code, 0, "{}", context.tail());
    let locked = std::fs::read_to_string(folder.path().join("ctx/lock-tensorflow.txt")).unwrap();
    assert!(
        locked
            .lines()
            .any(|line| line.starts_with("tensorflow-cpu==2.9.3 --hash=sha256:")),
        "{locked}"
    );
    assert!(!locked.contains("nvidia"), "{locked}");
    assert!(!run.stdout.to_lowercase().contains("cuda"));
    assert!(!run.stdout.contains("NVIDIA_"));
    assert!(!run.stdout.contains("nvidia-"));
}

#[test]
fn show_prints_the_resolved_spec() {
    let folder = scratch(&[]);
    let run = tfimg(folder.path(), &["show", "cpu-jupyter"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn a_local_spec_overrides_and_extends_builtins() {
    let folder = scratch(&[(
        "images/gpu-jupyter.yaml",
        "name: gpu-jupyter\nextends: builtin:gpu-jupyter\ndescription: ours\npackages:\n  pip: [scikit-learn]\n",
    )]);
    let run = tfimg(folder.path(), &["show", "gpu-jupyter"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    assert!(
        run.stdout.contains("source: images/gpu-jupyter.yaml"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("- scikit-learn"));
    assert!(run.stdout.contains("- jupyterlab>=4,<5"));
    assert!(run.stdout.contains("description: ours"));
}

#[test]
fn tensorboard_serves_the_workdir_or_the_spec_s_logdir_and_only_with_its_port() {
    let folder = scratch(&[(
        "runs.yaml",
        "name: runs\nextends: cpu-ssh\ntensorboard_logdir: /tf//logs/\n",
    )]);
    let shown = |spec: &str| {
        let run = tfimg(folder.path(), &["show", spec]);
        assert_eq!(run.code, 0, "{}", run.tail());
        run.stdout
            .lines()
            .find_map(|line| line.strip_prefix("tensorboard_logdir: "))
            .map(str::to_string)
    };
    assert_eq!(shown("cpu-jupyter").as_deref(), Some("/tf"));
    assert_eq!(shown("runs.yaml").as_deref(), Some("/tf/logs"));
    assert_eq!(shown("cpu-headless"), None, "no port, no TensorBoard");

    // The entrypoint runs it (restarted when it dies) only where the port is published;
    // every other entrypoint is byte for byte what it was.
    let entrypoint = |spec: &str| {
        let out = folder.path().join(format!("ctx-{spec}"));
        let run = tfimg(
            folder.path(),
            &["render", spec, "-o", out.to_str().unwrap()],
        );
        assert_eq!(run.code, 0, "{}", run.tail());
        std::fs::read_to_string(out.join("entrypoint.sh")).unwrap()
    };
    let ssh = entrypoint("runs.yaml");
    assert!(
        ssh.contains(
            "CUDA_VISIBLE_DEVICES=-1 nice -n 10 tensorboard --logdir \"/tf/logs\" \\\n            --host 0.0.0.0 --port 6006 </dev/null || status=$?"
        ),
        "{ssh}"
    );
    assert!(
        ssh.contains("\ntensorboard_loop &\n\ncase \"$service\" in"),
        "{ssh}"
    );
    assert!(entrypoint("cpu-jupyter").contains("--logdir \"/tf\""));
    let headless = entrypoint("cpu-headless");
    assert!(!headless.contains("ensorboard"), "{headless}");
    assert!(
        !ssh.contains("@TENSORBOARD"),
        "every placeholder is filled: {ssh}"
    );
}

/// Runs `tfimg show` on a spec file and returns (exit code, stderr).
fn show_error(files: &[(&str, &str)], spec: &str) -> (i32, String, String) {
    let folder = scratch(files);
    let run = tfimg(folder.path(), &["show", spec]);
    (run.code, run.stdout, run.stderr)
}

#[test]
fn unknown_field_names_file_line_column_and_hints() {
    let (code, stdout, stderr) = show_error(
        &[(
            "mine.yaml",
            "name: mine\nextends: gpu-jupyter\ngpu_ids: [0]\n",
        )],
        "mine.yaml",
    );
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: `mine.yaml`:3:1: unknown field `gpu_ids`, expected one of `name`, `abstract`, `extends`, `description`, `base`, `tensorflow`, `python`, `gpu`, `cuda_provider`, `cuda`, `cudnn`, `service`, `packages`, `env`, `ports`, `user`, `workdir`, `tensorboard_logdir`, `files`\n\
         hint: did you mean `gpu`? check the spelling; every field is described in docs/reference/spec.md\n"
    );
}

#[test]
fn python_outside_the_tensorflow_range_is_refused() {
    let (code, _, stderr) = show_error(
        &[(
            "py.yaml",
            "name: py\nextends: cpu-headless\ntensorflow: \"2.9\"\npython: \"3.11\"\n",
        )],
        "py.yaml",
    );
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "error: `py.yaml`:4:9: Python 3.11 is outside the range TensorFlow 2.9.3 supports (3.7 to 3.10)\n\
         hint: set `python` between 3.7 and 3.10, or use TensorFlow 2.12 to 2.18 for Python 3.11\n"
    );
}

#[test]
fn extends_cycle_is_refused() {
    let (code, _, stderr) = show_error(
        &[
            ("images/a.yaml", "name: a\nextends: b\n"),
            (
                "images/b.yaml",
                "name: b\ntensorflow: \"2.9\"\nextends: a\n",
            ),
        ],
        "a",
    );
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "error: `images/b.yaml`:3:10: `extends` cycle: a → b → a\n\
         hint: remove `extends` from one of these specs so the chain ends at a spec without it\n"
    );
}

#[test]
fn other_spec_errors_point_at_the_value() {
    let cases: &[(&str, &str)] = &[
        ("unknown-tensorflow", "tensorflow: \"2.3\"\n"),
        ("unquoted-version", "tensorflow: 2.10\n"),
        (
            "cuda-does-not-fit",
            "extends: gpu-headless\ncuda: \"12.2\"\ncudnn: \"8.9\"\n",
        ),
        (
            "cudnn-too-old",
            "extends: gpu-headless\ncuda_provider: image\ncudnn: \"8.0\"\n",
        ),
        (
            "pip-cannot-give-11-2",
            "extends: gpu-headless\ncuda: \"11.2\"\n",
        ),
        (
            "port-out-of-range",
            "extends: cpu-jupyter\nports:\n  jupyter: 70000\n",
        ),
        ("bad-service", "extends: cpu-base\nservice: jupiter\n"),
        ("missing-parent", "extends: gpu-jupyterr\n"),
        ("wrong-type", "extends: cpu-headless\ngpu: [0, 1]\n"),
        ("root-user", "extends: cpu-headless\nuser: root\n"),
        (
            "base-python-too-new",
            "extends: cpu-headless\nbase: debian:bookworm-slim\n",
        ),
        (
            "python-not-in-base",
            "extends: cpu-headless\npython: \"3.10\"\n",
        ),
        ("abstract", "name: x\nabstract: true\ntensorflow: \"2.9\"\n"),
        (
            "tensorflow-in-pip",
            "extends: cpu-headless\npackages:\n  pip: [\"tensorflow==2.15\"]\n",
        ),
        (
            "shell-in-apt",
            "extends: cpu-headless\npackages:\n  apt: [\"git; rm -rf /\"]\n",
        ),
        (
            "reserved-env",
            "extends: cpu-headless\nenv:\n  TFIMG_UID: \"0\"\n",
        ),
        ("empty", ""),
        ("broken-yaml", "name: [x\n"),
        (
            "pip-provider-for-2-4",
            "extends: gpu-headless\ntensorflow: \"2.4\"\n",
        ),
        ("managed-env", "extends: gpu-headless\nenv:\n  LD_LIBRARY_PATH: /opt/mylib\n"),
        ("system-workdir", "extends: cpu-headless\nworkdir: /etc\n"),
        ("empty-workdir", "extends: cpu-headless\nworkdir: \"//\"\n"),
        ("python-3-7-base", "extends: cpu-headless\nbase: debian:buster-slim\n"),
        ("port-taken-from-service", "extends: cpu-base\nservice: jupyter\nports: {tensorboard: 8888}\n"),
        (
            "tensorboard-logdir-relative",
            "extends: cpu-jupyter\ntensorboard_logdir: logs\n",
        ),
        (
            "tensorboard-logdir-escapes",
            "extends: cpu-jupyter\ntensorboard_logdir: /tf/../etc\n",
        ),
        (
            "tensorboard-logdir-without-port",
            "extends: cpu-headless\ntensorboard_logdir: /tf/logs\n",
        ),
        (
            "base-digest-injection",
            "extends: cpu-headless\nbase: \"debian@x\\nRUN touch /pwned\\n#:0123456789abcdef0123456789abcdef\"\n",
        ),
    ];
    let mut report = String::new();
    for (name, text) in cases {
        let file = format!("{name}.yaml");
        let (code, stdout, stderr) = show_error(&[(&file, text)], &file);
        assert_eq!(code, 1, "{name}: {stdout}{stderr}");
        assert_eq!(stdout, "", "{name}");
        assert!(stderr.starts_with("error: "), "{name}: {stderr}");
        assert!(stderr.contains("\nhint: "), "{name}: {stderr}");
        report.push_str(&format!("## {name}\n{text}--\n{stderr}\n"));
    }
    insta::assert_snapshot!(report);
}

#[test]
fn unknown_spec_name_and_usage_errors_exit_1() {
    let folder = scratch(&[]);
    let run = tfimg(folder.path(), &["show", "gpu-jupyterr"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: no spec named `gpu-jupyterr`\n\
         hint: did you mean `gpu-jupyter`? known specs: cpu-headless, cpu-jupyter, cpu-serving, cpu-ssh, gpu-headless, gpu-jupyter, gpu-serving, gpu-ssh, tf218-cpu-headless, tf218-cpu-jupyter, tf218-cpu-serving, tf218-cpu-ssh, tf218-gpu-headless, tf218-gpu-jupyter, tf218-gpu-serving, tf218-gpu-ssh; or give the path of a spec file\n"
    );
    let run = tfimg(folder.path(), &["list", "--bogus"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("unexpected argument '--bogus'"),
        "{}",
        run.stderr
    );
    let run = tfimg(folder.path(), &["--help"]);
    assert_eq!(run.code, 0);
    for command in ["list", "show", "render"] {
        assert!(run.stdout.contains(command));
        let help = tfimg(folder.path(), &[command, "--help"]);
        assert_eq!(help.code, 0, "{command}");
        assert!(help.stdout.contains("Usage: tfimg"), "{command}");
    }
}

#[test]
fn list_reports_a_broken_local_spec_but_still_lists_the_rest() {
    let folder = scratch(&[("images/broken.yaml", "name: broken\ntensorflow: \"9.9\"\n")]);
    let run = tfimg(folder.path(), &["list"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("gpu-jupyter"));
    assert_eq!(
        run.stderr,
        "note: `ended`: a part of the spec (base release, Python or TensorFlow line) is past its support as of 2026-11-22; `tfimg show SPEC` says which and what to move to\n\
         error: `images/broken.yaml`:2:13: unknown TensorFlow version `9.9`\n\
         hint: tfimg knows TensorFlow 2.4, 2.5, 2.6, 2.7, 2.8, 2.9, 2.10, 2.11, 2.12, 2.13, 2.14, 2.15, 2.16, 2.17, 2.18; write a release such as \"2.9\" or \"2.9.3\"\n"
    );
}

/// Everything under a folder, as relative paths, for "what did the command write".
fn files_under(root: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// `files:` never copies what lies outside the project: not through `..` from a spec named
/// as a bare file name (its folder once compared as `""`, which every path starts with),
/// and not through links (issue 12, items 3 and 4).
#[test]
fn files_never_copy_what_lies_outside_the_project() {
    let spec = "name: lab\nextends: cpu-headless\nfiles:\n  - ../outside/id_rsa:/tf/x\n";
    let folder = scratch(&[
        ("top/proj/lab.yaml", spec),
        ("top/outside/id_rsa", "SECRET KEY\n"),
    ]);
    let project = folder.path().join("top/proj");
    for name in ["lab.yaml", "./lab.yaml"] {
        let outcome = tfimg(&project, &["render", name, "-o", "ctx"]);
        assert_eq!(outcome.code, 1, "{name}: {}", outcome.stderr);
        let outside = folder.path().join("top/outside/id_rsa");
        assert_eq!(
            outcome.stderr,
            format!(
                "error: `{name}`:3:1: `files` source `../outside/id_rsa` is outside the project (it is `{}`)\nhint: copy files from the spec's folder or the current folder, such as `../code` from `images/`\n",
                outside.display()
            ),
            "{name}"
        );
        assert!(!project.join("ctx").exists(), "{name} wrote a context");
    }

    // Links: one inside the project is copied as its file; one out of it is refused.
    let spec = "name: lab\nextends: cpu-headless\nfiles:\n  - code:/tf/code\n";
    std::fs::write(project.join("lab.yaml"), spec).unwrap();
    std::fs::create_dir_all(project.join("code")).unwrap();
    std::fs::create_dir_all(project.join("shared")).unwrap();
    std::fs::write(project.join("code/train.py"), "print(1)\n").unwrap();
    std::fs::write(project.join("shared/lib.py"), "x = 1\n").unwrap();
    std::os::unix::fs::symlink("../shared/lib.py", project.join("code/lib.py")).unwrap();
    let outcome = tfimg(&project, &["render", "lab.yaml", "-o", "ctx"]);
    assert_eq!(outcome.code, 0, "{}", outcome.tail());
    let copied: Vec<String> = files_under(&project.join("ctx"))
        .into_iter()
        .filter(|path| path.starts_with("files/"))
        .collect();
    assert_eq!(copied, ["files/0/lib.py", "files/0/train.py"]);
    assert_eq!(
        std::fs::read_to_string(project.join("ctx/files/0/lib.py")).unwrap(),
        "x = 1\n"
    );
    std::fs::remove_dir_all(project.join("ctx")).unwrap();

    std::os::unix::fs::symlink("../../outside/id_rsa", project.join("code/key")).unwrap();
    let real = folder
        .path()
        .canonicalize()
        .unwrap()
        .join("top/outside/id_rsa");
    let outcome = tfimg(&project, &["render", "lab.yaml", "-o", "ctx"]);
    assert_eq!(outcome.code, 1, "{}", outcome.tail());
    assert_eq!(
        outcome.stderr,
        format!(
            "error: `lab.yaml`:3:1: `files`: `key` in `{}` leads outside the project, to `{}`\nhint: copy the file into the project, or leave the link out with the entry's `ignore`\n",
            project.join("code").display(),
            real.display()
        )
    );
    assert!(!project.join("ctx").exists());

    // The source itself a link out of the project.
    std::fs::remove_file(project.join("code/key")).unwrap();
    std::fs::remove_dir_all(project.join("code")).unwrap();
    std::os::unix::fs::symlink("../outside", project.join("code")).unwrap();
    let outcome = tfimg(&project, &["render", "lab.yaml", "-o", "ctx"]);
    assert_eq!(outcome.code, 1, "{}", outcome.tail());
    assert!(
        outcome.stderr.contains("leads outside the project"),
        "{}",
        outcome.stderr
    );
    assert!(!project.join("ctx").exists());
}

/// A local spec that changes the TensorFlow version lists its own version, takes no
/// built-in's description (issue 45; issue 12 had it inherit the built-in's template,
/// filled with its own versions), fills `{stack}` in its own, and no description can forge
/// rows or reach the terminal raw (issue 12, items 12 and 18).
#[test]
fn list_descriptions_follow_the_spec_and_cannot_forge_rows() {
    let folder = scratch(&[
        (
            "images/newer.yaml",
            "name: newer\nextends: cpu-jupyter\ntensorflow: \"2.15\"\n",
        ),
        (
            "images/cpu-twin.yaml",
            "name: cpu-twin\nextends: gpu-headless\ngpu: false\n",
        ),
        (
            "images/forged.yaml",
            "name: forged\nextends: cpu-headless\ndescription: \"mine\\nevil  2.9.3  3.9  -  -  none  built-in  trusted\\e[2J\\t{stack}\"\n",
        ),
    ]);
    let outcome = tfimg(folder.path(), &["list"]);
    assert_eq!(outcome.code, 0, "{}", outcome.tail());
    let line = |name: &str| -> String {
        outcome
            .stdout
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no `{name}` row in\n{}", outcome.stdout))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        line("newer"),
        "newer 2.15.1 3.9 - - jupyter ended images/newer.yaml"
    );
    assert_eq!(
        line("cpu-twin"),
        "cpu-twin 2.9.3 3.9 - - none ended images/cpu-twin.yaml"
    );
    assert_eq!(
        line("forged"),
        "forged 2.9.3 3.9 - - none ended images/forged.yaml mine\\nevil 2.9.3 3.9 - - none built-in trusted\\u{1b}[2J\\tTensorFlow 2.9 (CPU)"
    );
    // One header and one row per spec: 16 built-ins and 3 local ones.
    assert_eq!(
        outcome.stdout.lines().count(),
        1 + 16 + 3,
        "{}",
        outcome.stdout
    );
    assert!(!outcome.stdout.contains('\u{1b}'));
}

/// The 2.9 line on 2026-11-22 (the tests' `TFIMG_TODAY`): `show` says once on stderr which
/// parts are past support and the built-in to move to (issue 45: it was three warnings),
/// and its YAML carries until when each was supported; the current line has nothing to say.
#[test]
fn show_says_which_parts_are_past_support_and_what_to_move_to() {
    let folder = scratch(&[]);
    let old = tfimg(folder.path(), &["show", "gpu-jupyter"]);
    assert_eq!(old.code, 0, "{}", old.tail());
    assert_eq!(
        old.stderr,
        "warning: `gpu-jupyter` is past its support (Debian 11 (bullseye), Python 3.9, TensorFlow 2.9; `support:` says since when) → move to `tf218-gpu-jupyter` (Debian 12 (bookworm), Python 3.11 to 3.12, TensorFlow 2.18)\n"
    );
    let yaml: serde_yaml::Value = serde_yaml::from_str(&old.stdout).unwrap();
    assert_eq!(yaml["support"]["checked_on"], "2026-11-22");
    assert_eq!(yaml["support"]["move_to_spec"], "tf218-gpu-jupyter");
    assert_eq!(yaml["support"]["parts"][0]["ends"], "2026-08-31");
    assert_eq!(yaml["support"]["parts"][0]["past_support"], true);

    let current = tfimg(folder.path(), &["show", "tf218-gpu-jupyter"]);
    assert_eq!(current.code, 0, "{}", current.tail());
    assert_eq!(current.stderr, "");
    assert!(
        current
            .stdout
            .contains("    status: long-term support until 2028-06-30 (regular security support ended 2026-06-10)\n"),
        "{}",
        current.stdout
    );

    // The day is the one given, not the machine's: before Debian 11's LTS ended (and
    // with it Debian's fixes to its Python 3.9), only the TensorFlow line is flagged, on
    // its last LTS day too; the day after, all three (in one line).
    for (day, flagged) in [
        ("2025-06-01", "TensorFlow 2.9"),
        ("2026-08-31", "TensorFlow 2.9"),
        (
            "2026-09-01",
            "Debian 11 (bullseye), Python 3.9, TensorFlow 2.9",
        ),
    ] {
        let run =
            common::tfimg_with_env(folder.path(), &["show", "cpu-ssh"], &[("TFIMG_TODAY", day)]);
        assert_eq!(run.code, 0, "{}", run.tail());
        assert_eq!(run.stderr.lines().count(), 1, "{day}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("past its support ({flagged}; ")),
            "{day}: {}",
            run.stderr
        );
    }
}

/// `list --json` carries the support facts `list` marks.
#[test]
fn list_marks_the_2_9_line_past_support_and_json_says_why() {
    let folder = scratch(&[]);
    let run = tfimg(folder.path(), &["list", "--json"]);
    assert_eq!(run.code, 0, "{}", run.tail());
    let entries: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    for entry in &entries {
        let name = entry["name"].as_str().unwrap();
        let current = name.starts_with("tf218-");
        assert_eq!(entry["past_support"], !current, "{name}");
        let parts = entry["support"]["parts"].as_array().unwrap();
        assert_eq!(parts.len(), 3, "{name}");
        if !current {
            assert_eq!(entry["support"]["move_to_spec"], format!("tf218-{name}"));
            assert_eq!(
                parts[1]["status"],
                "end of life 2025-10-31; Debian 11 (bullseye)'s python3 got fixes until 2026-08-31"
            );
        }
    }
    let table = tfimg(folder.path(), &["list"]);
    assert!(
        table
            .stderr
            .starts_with("note: `ended`: a part of the spec"),
        "{}",
        table.stderr
    );
}

/// Issue 33: the completion script `tfimg completions bash` prints, sourced by a real bash
/// and asked as bash asks it (COMP_WORDS, COMP_CWORD), completes commands and flags; the
/// man page of a command is roff that `man` renders. Issue 45: the script asks `tfimg`
/// (found on PATH) at each TAB (tests/help.rs presses TAB on a terminal).
#[test]
fn bash_completes_tfimg_from_its_script_and_man_renders_its_pages() {
    let folder = scratch(&[]);
    let script = tfimg(folder.path(), &["completions", "bash"]);
    assert_eq!(script.code, 0, "{}", script.tail());
    std::fs::write(folder.path().join("tfimg.bash"), &script.stdout).unwrap();
    let complete = |words: &[&str]| {
        let listed = words.join(" ");
        let current = words.len() - 1;
        let bin = std::path::Path::new(env!("CARGO_BIN_EXE_tfimg"))
            .parent()
            .unwrap()
            .display()
            .to_string();
        let output = std::process::Command::new("bash")
            .current_dir(folder.path())
            .env(
                "PATH",
                format!("{bin}:{}", std::env::var("PATH").unwrap_or_default()),
            )
            .args([
                "--norc",
                "-c",
                &format!(
                    "source ./tfimg.bash; COMP_WORDS=({listed}); COMP_CWORD={current}; COMP_TYPE=9; \
                     _clap_complete_tfimg tfimg \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; \
                     printf '%s\\n' \"${{COMPREPLY[@]}}\""
                ),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(complete(&["tfimg", "swe"]).trim(), "sweep");
    let flags = complete(&["tfimg", "ps", "--w"]);
    assert_eq!(flags.trim(), "--watch", "{flags}");
    let run_flags = complete(&["tfimg", "run", "--idle-c"]);
    assert_eq!(run_flags.trim(), "--idle-containers", "{run_flags}");

    let page = tfimg(folder.path(), &["man", "ps"]);
    assert_eq!(page.code, 0, "{}", page.tail());
    std::fs::write(folder.path().join("tfimg-ps.1"), &page.stdout).unwrap();
    let rendered = std::process::Command::new("man")
        .args(["-l", "tfimg-ps.1"])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .current_dir(folder.path())
        .output();
    // `man` is not on every machine; where it is, the page renders with its flags.
    if let Some(rendered) = rendered.ok().filter(|output| output.status.success()) {
        let text = String::from_utf8_lossy(&rendered.stdout);
        assert!(
            text.contains("tfimg-ps") && text.contains("--watch"),
            "{text}"
        );
    }
    let missing = tfimg(folder.path(), &["man", "nope"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.contains("tfimg has no such command"),
        "{}",
        missing.stderr
    );
}

/// Issue 45: a spec of yours that extends a built-in shows its own description, or none,
/// never the built-in's (`mylab` is not "for batch jobs" because `cpu-headless` is); a spec
/// extending yours still takes yours.
#[test]
fn a_derived_spec_shows_its_own_description_or_none() {
    let folder = scratch(&[
        ("images/mylab.yaml", "name: mylab\nextends: cpu-headless\n"),
        (
            "images/vision.yaml",
            "name: vision\nextends: cpu-jupyter\ndescription: image models for the lab\n",
        ),
        (
            "images/vision-big.yaml",
            "name: vision-big\nextends: vision\n",
        ),
    ]);
    let list = tfimg(folder.path(), &["list", "--json"]);
    assert_eq!(list.code, 0, "{}", list.tail());
    let entries: Vec<serde_json::Value> = serde_json::from_str(&list.stdout).unwrap();
    let description = |name: &str| {
        entries
            .iter()
            .find(|entry| entry["name"] == name)
            .unwrap_or_else(|| panic!("no `{name}` in {}", list.stdout))["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(description("mylab"), "");
    assert_eq!(description("vision"), "image models for the lab");
    assert_eq!(description("vision-big"), "image models for the lab");
    assert_eq!(
        description("cpu-headless"),
        "TensorFlow 2.9 (CPU) for batch jobs"
    );
    let shown = tfimg(folder.path(), &["show", "mylab"]);
    assert_eq!(shown.code, 0, "{}", shown.tail());
    assert!(!shown.stdout.contains("batch jobs"), "{}", shown.stdout);
    let table = tfimg(folder.path(), &["list"]);
    let row = table
        .stdout
        .lines()
        .find(|line| line.starts_with("mylab "))
        .unwrap();
    assert!(row.trim_end().ends_with("images/mylab.yaml"), "{row}");
}
