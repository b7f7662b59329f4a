//! The Dockerfile for a resolved spec. Layers are ordered from what changes least to what
//! changes most (system packages, TensorFlow with its CUDA wheels, the spec's own pip
//! packages, then the small generated files), so editing one pip package reuses the
//! TensorFlow layer. Pure and deterministic; works with the classic builder (no BuildKit).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::files::{
    ContextFile, CA_CERTIFICATES, ENTRYPOINT, JUPYTER_CONFIG, PIP_PIN, PROFILE, SSHD_CONFIG, VERIFY,
};
use super::NetworkOptions;
use crate::labels;
use crate::spec::compat::CUPTI_FALLBACK;
use crate::spec::resolved::{TENSORBOARD_PORT, VENV};
use crate::spec::{CudaProvider, ResolvedSpec, Service};

/// In-image uid/gid of the spec's user; the entrypoint moves it to the host's at run time.
pub const IMAGE_UID: u32 = 1000;

/// Where the generated files live inside the image.
pub const TFIMG_DIR: &str = "/opt/tfimg";

/// Where an extra CA certificate goes: update-ca-certificates adds it to the system bundle.
pub const CA_PATH: &str = "/usr/local/share/ca-certificates/tfimg-ca.crt";

/// The system bundle apt, curl and OpenSSL read; pip and requests are pointed at it.
pub const SYSTEM_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Official archive URLs (without scheme) that `--apt-mirror` replaces.
const APT_OFFICIAL_MIRRORS: &[&str] = &[
    "deb.debian.org/debian",
    "archive.ubuntu.com/ubuntu",
    "security.ubuntu.com/ubuntu",
];

/// XLA's flags variable, and the flag naming the folder of ptxas and libdevice.
const XLA_FLAGS: &str = "XLA_FLAGS";
const XLA_DATA_DIR_FLAG: &str = "--xla_gpu_cuda_data_dir";

/// The pip constraints file: the TensorFlow pin and its release's known-good pins.
pub const CONSTRAINTS_PATH: &str = "/opt/tfimg/constraints.txt";

pub fn dockerfile(
    spec: &ResolvedSpec,
    network: &NetworkOptions,
    files: &BTreeMap<String, ContextFile>,
) -> String {
    let mut out = String::new();
    let w = &mut out;
    header(w, spec);
    line(w, &format!("FROM {}", spec.base));
    line(w, "");
    line(w, "SHELL [\"/bin/sh\", \"-eu\", \"-c\"]");
    env_block(
        w,
        &[
            ("DEBIAN_FRONTEND", "noninteractive".to_string()),
            ("LANG", "C.UTF-8".to_string()),
            ("PIP_DISABLE_PIP_VERSION_CHECK", "1".to_string()),
            ("PIP_NO_CACHE_DIR", "1".to_string()),
            ("PYTHONUNBUFFERED", "1".to_string()),
        ],
    );
    line(w, "");

    let has_ca = files.contains_key(CA_CERTIFICATES);
    if has_ca {
        line(
            w,
            "# The extra CA joins the system bundle when ca-certificates installs or updates it.",
        );
        line(w, &format!("COPY {CA_CERTIFICATES} {CA_PATH}"));
        line(w, "");
    }
    line(w, "# System packages.");
    let apt_options = match &network.apt_mirror {
        Some(mirror) if has_ca && mirror.starts_with("https://") => {
            format!(" -o Acquire::https::CAInfo={CA_PATH}")
        }
        _ => String::new(),
    };
    match &network.apt_mirror {
        Some(mirror) => {
            line(
                w,
                "RUN for list in /etc/apt/sources.list /etc/apt/sources.list.d/*; do \\",
            );
            line(w, "      if [ -f \"$list\" ]; then sed -i \\");
            for official in APT_OFFICIAL_MIRRORS {
                line(
                    w,
                    // Anchored, so `debian-security` is left alone (`#`: URLs never hold one).
                    &format!("        -e 's#https\\?://{official}\\([ /]\\|$\\)#{mirror}\\1#g' \\"),
                );
            }
            line(w, "        \"$list\"; fi; \\");
            line(w, "    done \\");
            line(w, &format!(" && apt-get{apt_options} update \\"));
        }
        None => line(w, &format!("RUN apt-get{apt_options} update \\")),
    }
    line(
        w,
        &format!(" && apt-get{apt_options} install -y --no-install-recommends \\"),
    );
    for package in &spec.packages.apt {
        line(w, &format!("      {package} \\"));
    }
    if has_ca {
        line(w, " && update-ca-certificates \\");
    }
    if spec
        .packages
        .apt
        .iter()
        .any(|package| package == "openssh-server")
    {
        // The package's install makes host keys: private keys in a layer anyone who pulls
        // the image can read. Each container makes its own at start instead.
        line(
            w,
            " && rm -f /etc/ssh/ssh_host_*_key /etc/ssh/ssh_host_*_key.pub \\",
        );
    }
    line(w, " && rm -rf /var/lib/apt/lists/*");
    let mut pip_env = Vec::new();
    if has_ca {
        for key in ["PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"] {
            pip_env.push((key, SYSTEM_BUNDLE.to_string()));
        }
    }
    if let Some(index) = &network.pip_index_url {
        pip_env.push(("PIP_INDEX_URL", index.clone()));
        if let Some(host) = index.strip_prefix("http://") {
            let host = host.split(['/', ':']).next().unwrap_or(host);
            pip_env.push(("PIP_TRUSTED_HOST", host.to_string()));
        }
    }
    if !pip_env.is_empty() {
        pip_env.sort();
        env_block(w, &pip_env);
    }
    line(w, "");

    line(
        w,
        &format!(
            "# Python {} in a virtual environment, with a pinned pip.",
            spec.python
        ),
    );
    line(w, &format!("RUN python3 -m venv {VENV} \\"));
    line(w, &format!(" && {VENV}/bin/pip install {PIP_PIN}"));
    line(w, &format!("ENV PATH={VENV}/bin:$PATH \\"));
    line(w, &format!("    VIRTUAL_ENV={VENV}"));
    line(w, "");

    match &spec.gpu {
        Some(gpu) if gpu.provider == CudaProvider::Pip => line(
            w,
            &format!(
                "# TensorFlow {} with CUDA {} / cuDNN {} from NVIDIA's wheels, CUPTI and nvcc's ptxas and libdevice for XLA (the driver comes from the host).",
                spec.tensorflow, gpu.cuda, gpu.cudnn
            ),
        ),
        Some(gpu) => line(
            w,
            &format!(
                "# TensorFlow {}; CUDA {} / cuDNN {} come from the base image.",
                spec.tensorflow, gpu.cuda, gpu.cudnn
            ),
        ),
        None => line(w, &format!("# TensorFlow {} for CPU.", spec.tensorflow)),
    }
    line(
        w,
        "# Its known-good pins hold every install, at build time and in the container (PIP_CONSTRAINT).",
    );
    line(w, &format!("RUN mkdir -p {TFIMG_DIR} \\"));
    line(w, " && printf '%s\\n' \\");
    for constraint in &spec.constraints {
        line(w, &format!("      {} \\", shell_word(constraint)));
    }
    line(w, &format!("      > {CONSTRAINTS_PATH} \\"));
    let mut tensorflow = vec![spec.tensorflow_requirement.clone()];
    if let Some(gpu) = &spec.gpu {
        tensorflow.extend(gpu.cuda_requirements.iter().cloned());
    }
    let cupti = spec
        .gpu
        .as_ref()
        .and_then(|gpu| gpu.cupti_library.as_deref());
    pip_install(w, " && ", &tensorflow, cupti.is_some());
    if let Some(library) = cupti.and_then(|library| library.rsplit_once('/')) {
        // The unversioned name TensorFlow falls back to when the CUPTI of the CUDA it was
        // built with (libcupti.so.11.2 for 2.9) is missing, as in a CUDA toolkit.
        let (folder, soname) = library;
        line(w, &format!(" && ln -s {soname} {folder}/{CUPTI_FALLBACK}"));
    }
    line(w, "");

    if !spec.packages.pip.is_empty() {
        line(w, "# The spec's pip packages, under the same pins.");
        pip_install(w, "RUN ", &spec.packages.pip, false);
        line(w, "");
    }

    line(
        w,
        &format!(
            "# The user `{}`; `tfimg run` gives it the host user's uid/gid. No password (`*`, not a locked `!`, which sshd would refuse keys for).",
            spec.user
        ),
    );
    line(
        w,
        &format!(
            "RUN useradd --create-home --non-unique --uid {IMAGE_UID} --user-group --shell /bin/bash --password '*' {user} \\",
            user = spec.user
        ),
    );
    let mut folders = vec![spec.workdir.clone()];
    if spec.service == Service::Ssh {
        folders.push("/run/sshd".to_string());
    }
    line(w, &format!(" && mkdir -p {} \\", folders.join(" ")));
    line(
        w,
        &format!(" && chown {user}:{user} {}", spec.workdir, user = spec.user),
    );
    line(w, "");

    // PATH is pushed as the Dockerfile must read it (it extends the `$PATH` before it);
    // every other value is quoted below.
    let mut env: Vec<(&str, String)> = Vec::new();
    if let Some(gpu) = &spec.gpu {
        // `void`: no GPU unless the run asks for one, even where `nvidia` is the default
        // runtime; --gpus sets the devices explicitly.
        env.push(("NVIDIA_VISIBLE_DEVICES", "void".to_string()));
        env.push(("NVIDIA_DRIVER_CAPABILITIES", "compute,utility".to_string()));
        let major = gpu.cuda.split('.').next().unwrap_or("0");
        // Minor-version compatibility: any driver of this CUDA major can start it;
        // `tfimg doctor` warns below the toolkit's own driver.
        env.push(("NVIDIA_REQUIRE_CUDA", format!("cuda>={major}.0")));
        if !gpu.library_path.is_empty() {
            env.push(("LD_LIBRARY_PATH", gpu.library_path.join(":")));
        }
        if let Some(data_dir) = &gpu.cuda_data_dir {
            // XLA finds libdevice under the data folder, ptxas there or on PATH; shells
            // and Jupyter find ptxas on PATH (profile.sh keeps it for login shells).
            env.push((
                "PATH",
                format!("{}:$PATH", quote(&format!("{data_dir}/bin"))),
            ));
        }
    }
    env.push(("PIP_CONSTRAINT", CONSTRAINTS_PATH.to_string()));
    for (key, value) in &spec.env {
        if key != XLA_FLAGS {
            env.push((key, value.clone()));
        }
    }
    if let Some(flags) = xla_flags(spec) {
        env.push((XLA_FLAGS, flags));
    }
    let mut env: Vec<(&str, String)> = env
        .into_iter()
        .map(|(key, value)| match key {
            "PATH" => (key, value),
            _ => (key, quote(&value)),
        })
        .collect();
    env.sort();
    env_block_quoted(w, &env);
    line(w, "");

    line(
        w,
        "# Generated files: entrypoint, login profile and service configuration.",
    );
    line(w, &format!("COPY {ENTRYPOINT} {TFIMG_DIR}/{ENTRYPOINT}"));
    line(w, &format!("COPY {PROFILE} /etc/profile.d/tfimg.sh"));
    line(w, &format!("COPY {VERIFY} {TFIMG_DIR}/{VERIFY}"));
    if files.contains_key(JUPYTER_CONFIG) {
        line(
            w,
            &format!("COPY {JUPYTER_CONFIG} /etc/jupyter/{JUPYTER_CONFIG}"),
        );
    }
    if files.contains_key(SSHD_CONFIG) {
        line(w, &format!("COPY {SSHD_CONFIG} {TFIMG_DIR}/{SSHD_CONFIG}"));
    }
    line(w, "");

    if !spec.files.is_empty() {
        line(w, "# The spec's own files, owned by its user.");
        for copied in &spec.files {
            line(
                w,
                &format!(
                    "COPY --chown={IMAGE_UID}:{IMAGE_UID} {} {}",
                    copied.context_path, copied.destination
                ),
            );
        }
        line(w, "");
    }

    let tensorboard = spec
        .tensorboard_logdir
        .as_ref()
        .and_then(|_| spec.ports.get(TENSORBOARD_PORT).copied());
    let labels = labels::image_labels(
        &spec.name,
        &spec.tensorflow,
        &spec.python,
        spec.service.as_str(),
        &spec.user,
        spec.gpu
            .as_ref()
            .map(|gpu| (gpu.cuda.as_str(), gpu.cudnn.as_str())),
        tensorboard,
    );
    // The build key hashes this very file, so it comes in as a build argument; in the same
    // LABEL instruction it costs no extra build step.
    line(w, &format!("ARG {}", labels::BUILD_KEY_ARG));
    line(w, "LABEL \\");
    line(
        w,
        &format!("    {}=${} \\", labels::BUILD_KEY, labels::BUILD_KEY_ARG),
    );
    let count = labels.len();
    for (index, (key, value)) in labels.iter().enumerate() {
        let tail = if index + 1 < count { " \\" } else { "" };
        line(w, &format!("    {key}={}{tail}", quote(value)));
    }
    line(w, &format!("USER {}", spec.user));
    line(w, &format!("WORKDIR {}", spec.workdir));
    if !spec.ports.is_empty() {
        let mut ports: Vec<u16> = spec.ports.values().copied().collect();
        ports.sort_unstable();
        let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
        line(w, &format!("EXPOSE {}", ports.join(" ")));
    }
    line(w, &format!("ENTRYPOINT [\"{TFIMG_DIR}/{ENTRYPOINT}\"]"));
    out
}

fn header(w: &mut String, spec: &ResolvedSpec) {
    line(
        w,
        &format!(
            "# Generated by tfimg from spec `{}`: edit the spec, not this file.",
            spec.name
        ),
    );
    let mut summary = format!("# TensorFlow {} · Python {}", spec.tensorflow, spec.python);
    match &spec.gpu {
        Some(gpu) => {
            let _ = write!(
                summary,
                " · CUDA {} · cuDNN {} ({}) · driver >= {} (>= {} with minor-version compatibility)",
                gpu.cuda,
                gpu.cudnn,
                match gpu.provider {
                    CudaProvider::Pip => "NVIDIA pip wheels",
                    CudaProvider::Image => "nvidia/cuda base",
                },
                gpu.driver_min,
                gpu.driver_compat_min
            );
        }
        None => summary.push_str(" · CPU only"),
    }
    let _ = write!(summary, " · service: {}", spec.service.as_str());
    line(w, &summary);
}

/// XLA's flags: the CUDA data folder of a pip GPU stack, then the spec's own `XLA_FLAGS`
/// (which win when they name a data folder themselves).
fn xla_flags(spec: &ResolvedSpec) -> Option<String> {
    let own = spec
        .env
        .get(XLA_FLAGS)
        .filter(|flags| !flags.trim().is_empty());
    let data_dir = spec.gpu.as_ref().and_then(|gpu| gpu.cuda_data_dir.as_ref());
    match (data_dir, own) {
        (Some(_), Some(own)) if own.contains(&format!("{XLA_DATA_DIR_FLAG}=")) => Some(own.clone()),
        (Some(data_dir), Some(own)) => Some(format!("{XLA_DATA_DIR_FLAG}={data_dir} {own}")),
        (Some(data_dir), None) => Some(format!("{XLA_DATA_DIR_FLAG}={data_dir}")),
        (None, own) => own.cloned(),
    }
}

fn env_block(w: &mut String, pairs: &[(&str, String)]) {
    let quoted: Vec<(&str, String)> = pairs
        .iter()
        .map(|(key, value)| (*key, quote(value)))
        .collect();
    env_block_quoted(w, &quoted);
}

/// One ENV instruction; the values are already as the Dockerfile must read them.
fn env_block_quoted(w: &mut String, pairs: &[(&str, String)]) {
    let count = pairs.len();
    for (index, (key, value)) in pairs.iter().enumerate() {
        let lead = if index == 0 { "ENV " } else { "    " };
        let tail = if index + 1 < count { " \\" } else { "" };
        line(w, &format!("{lead}{key}={value}{tail}"));
    }
}

/// Dockerfile value quoting: plain when safe, else double quotes with `\`, `"` and `$`
/// escaped so the builder takes the text literally.
fn quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | ',' | '+' | '@')
        });
    if plain {
        return value.to_string();
    }
    let mut quoted = String::from("\"");
    for c in value.chars() {
        if matches!(c, '\\' | '"' | '$') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// `RUN pip install` (or a continuation) of `requirements`, one per line; `more`: another
/// command of the same RUN follows.
fn pip_install(w: &mut String, lead: &str, requirements: &[String], more: bool) {
    line(
        w,
        &format!("{lead}pip install --constraint {CONSTRAINTS_PATH} \\"),
    );
    let count = requirements.len();
    for (index, requirement) in requirements.iter().enumerate() {
        let tail = if index + 1 < count || more { " \\" } else { "" };
        line(w, &format!("      {}{tail}", shell_word(requirement)));
    }
}

/// A requirement as one shell word: bare when it has nothing the shell reads, else in
/// single quotes (validation refuses requirements containing `'`, `$`, `\\` or newlines).
fn shell_word(word: &str) -> String {
    if word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '=' | ',' | '[' | ']'))
    {
        word.to_string()
    } else {
        format!("'{word}'")
    }
}

fn line(w: &mut String, text: &str) {
    w.push_str(text);
    w.push('\n');
}

#[cfg(test)]
mod tests {
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
        let (_, image) =
            rendered("extends: gpu-headless\ncuda_provider: image\nbase: ubuntu:20.04\n");
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
}
