//! The files a build context carries besides the Dockerfile: the entrypoint, the login
//! profile and the service configuration. Pure: text in, bytes
//! out, identical on every machine.

use std::collections::BTreeMap;

use super::NetworkOptions;
use crate::lock;
use crate::spec::resolved::{
    MODELS_FOLDER, SERVING_GRPC_PORT_NAME, SERVING_PORT_NAME, TENSORBOARD_PORT, VENV,
};
use crate::spec::{ResolvedSpec, Service};

/// The context file of a pip group's requirements (`lock-tensorflow.txt`).
pub fn requirements_file(group: &str) -> String {
    format!("lock-{group}.txt")
}

/// Where the generated files live inside the image.
pub const TFIMG_DIR: &str = "/opt/tfimg";

/// One file of the build context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub contents: Vec<u8>,
    /// Unix permission bits; the Dockerfile's COPY keeps them.
    pub mode: u32,
}

impl ContextFile {
    fn text(text: String, mode: u32) -> ContextFile {
        ContextFile {
            contents: text.into_bytes(),
            mode,
        }
    }
}

pub const ENTRYPOINT: &str = "entrypoint.sh";
pub const JUPYTER_CONFIG: &str = "jupyter_server_config.py";
/// JupyterLab's page settings: the news plugin (its "get notified about official Jupyter
/// news?" pop-up on every first start, and its calls to jupyter.org) is off, as
/// `jupyter labextension disable` would write it.
pub const JUPYTER_PAGE_CONFIG: &str = "page_config.json";
pub const SSHD_CONFIG: &str = "sshd_config";
pub const PROFILE: &str = "profile.sh";
pub const VERIFY: &str = "verify.py";
/// The idle watch the entrypoint starts the service under (`templates/idle.py`): every
/// image with a service that is someone's session (Jupyter, SSH, headless).
pub const IDLE_WATCH: &str = "idle.py";
/// The serving service's model server: the `tfimg_serving` package
/// (`templates/tfimg_serving/`), and `serving.py`, which starts it.
pub const SERVING_SERVER: &str = "serving.py";
pub const SERVING_PACKAGE: &str = "tfimg_serving";
/// The model server's compiled front (`crates/serving-front`, built by this crate's build
/// script): it holds the REST port and starts `serving.py` behind it.
pub const SERVING_FRONT: &str = "tfimg-serving-front";
const SERVING_FRONT_BINARY: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/tfimg-serving-front"));
pub const CA_CERTIFICATES: &str = "tfimg-ca.crt";

/// pip itself, pinned: the distributions' pip is too old for some wheels' metadata, and
/// 24.0 is the newest that still runs on Python 3.7.
pub const PIP_PIN: &str = "pip==24.0";

const ENTRYPOINT_TEMPLATE: &str = include_str!("templates/entrypoint.sh");
const JUPYTER_TEMPLATE: &str = include_str!("templates/jupyter_server_config.py");
const JUPYTER_PAGE_TEMPLATE: &str = include_str!("templates/page_config.json");
const SSHD_TEMPLATE: &str = include_str!("templates/sshd_config");
const PROFILE_TEMPLATE: &str = include_str!("templates/profile.sh");
const VERIFY_TEMPLATE: &str = include_str!("templates/verify.py");
const IDLE_TEMPLATE: &str = include_str!("templates/idle.py");
/// verify.py's check of a locked image: the installed distributions equal the lock's.
const VERIFY_LOCK_TEMPLATE: &str = include_str!("templates/verify_lock.py");
/// The entrypoint's TensorBoard stanza, for specs with a `tensorboard` port only (the
/// entrypoint of every other spec stays as it was).
const TENSORBOARD_TEMPLATE: &str = include_str!("templates/tensorboard.sh");
/// The model server, and the entrypoint's stanza that starts it (serving specs only: every
/// other entrypoint stays as it was).
const SERVING_TEMPLATE: &str = include_str!("templates/serving.py");
/// The package's modules, as they are: the spec reaches them through the environment the
/// entrypoint sets, so every serving image carries the same bytes.
/// (Every `.py` file of `templates/tfimg_serving/`, listed by this crate's build script:
/// a module added to the folder is carried without naming it here.)
const SERVING_MODULES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/serving_modules.rs"));
const SERVING_STANZA: &str = include_str!("templates/serving.sh");

/// The extra CA as the one file of a context, when there is one.
pub fn ca_file(network: &NetworkOptions) -> BTreeMap<String, ContextFile> {
    let mut files = BTreeMap::new();
    if let Some(pem) = &network.ca_certificates {
        files.insert(
            CA_CERTIFICATES.to_string(),
            ContextFile {
                contents: pem.clone(),
                mode: 0o644,
            },
        );
    }
    files
}

/// Every context file for `spec`, keyed by its path in the context.
pub fn context_files(
    spec: &ResolvedSpec,
    network: &NetworkOptions,
) -> BTreeMap<String, ContextFile> {
    let mut files = ca_file(network);
    let mut insert = |name: &str, text: String, mode: u32| {
        files.insert(name.to_string(), ContextFile::text(text, mode));
    };
    let substitute = |template: &str| fill(template, spec);
    insert(ENTRYPOINT, substitute(ENTRYPOINT_TEMPLATE), 0o755);
    insert(PROFILE, substitute(PROFILE_TEMPLATE), 0o644);
    insert(
        VERIFY,
        substitute(VERIFY_TEMPLATE)
            .replace("@LOCK_CHECK@\n", &lock_check(spec))
            .replace("@EXPECTED@", &verify_expectations(spec)),
        0o644,
    );
    if let Some(pins) = lock::pins(spec) {
        for (group, distributions) in pins.locked.file.pip.in_order() {
            let pinned = match group {
                "venv" => false,
                "packages" => pins.packages,
                _ => true,
            };
            if pinned && !distributions.is_empty() {
                insert(
                    &requirements_file(group),
                    lock::requirements(distributions),
                    0o644,
                );
            }
        }
    }
    match spec.service {
        Service::Jupyter => {
            insert(JUPYTER_CONFIG, substitute(JUPYTER_TEMPLATE), 0o644);
            insert(
                JUPYTER_PAGE_CONFIG,
                JUPYTER_PAGE_TEMPLATE.to_string(),
                0o644,
            );
        }
        Service::Ssh => insert(SSHD_CONFIG, substitute(SSHD_TEMPLATE), 0o644),
        Service::Serving => {
            insert(SERVING_SERVER, SERVING_TEMPLATE.to_string(), 0o644);
            for (module, text) in SERVING_MODULES {
                insert(
                    &format!("{SERVING_PACKAGE}/{module}"),
                    text.to_string(),
                    0o644,
                );
            }
        }
        Service::None => {}
    }
    if spec.service != Service::Serving {
        insert(IDLE_WATCH, substitute(IDLE_TEMPLATE), 0o644);
    } else {
        let front = ContextFile {
            contents: SERVING_FRONT_BINARY.to_vec(),
            mode: 0o755,
        };
        files.insert(SERVING_FRONT.to_string(), front);
    }
    files
}

/// What verify.py checks, as JSON (keys sorted, so the bytes never vary).
fn verify_expectations(spec: &ResolvedSpec) -> String {
    let gpu = spec.gpu.as_ref();
    let value = serde_json::json!({
        "tensorflow": spec.tensorflow,
        "constraints": spec.constraints,
        "cuda_libraries": gpu.map(|gpu| gpu.cuda_libraries.clone()).unwrap_or_default(),
        "built_cuda": gpu.map(|gpu| gpu.tensorflow_built_with_cuda.clone()).unwrap_or_default(),
        "built_cudnn_major": gpu
            .map(|gpu| gpu.tensorflow_built_with_cudnn.split('.').next().unwrap_or("").to_string())
            .unwrap_or_default(),
        "cuda_data_dir": gpu.and_then(|gpu| gpu.cuda_data_dir.clone()).unwrap_or_default(),
        "cuda_release": gpu.map(|gpu| gpu.cuda.clone()).unwrap_or_default(),
    });
    serde_json::to_string(&value).expect("plain JSON values serialise")
}

/// verify.py's lock check with the distributions the lock expects, or nothing (a spec
/// without a lock keeps the same verify.py).
fn lock_check(spec: &ResolvedSpec) -> String {
    let Some(pins) = lock::pins(spec) else {
        return String::new();
    };
    let expected = match pins.whole() {
        true => lock::expected(&pins.locked.file),
        false => lock::expected_below_packages(&pins.locked.file),
    };
    let expected = serde_json::to_string(&expected).expect("plain JSON values serialise");
    VERIFY_LOCK_TEMPLATE
        .replace("@LOCK_EXPECTED@", &expected)
        .replace("@LOCK_FILE@", &pins.locked.display)
        .replace("@LOCK_WHOLE@", if pins.whole() { "True" } else { "False" })
}

fn fill(template: &str, spec: &ResolvedSpec) -> String {
    let port = |name: &str| {
        spec.ports
            .get(name)
            .map(|port| port.to_string())
            .unwrap_or_default()
    };
    let tensorboard = match &spec.tensorboard_logdir {
        Some(_) => TENSORBOARD_TEMPLATE,
        None => "",
    };
    let serving = match spec.service {
        Service::Serving => SERVING_STANZA,
        _ => "",
    };
    template
        .replace("@TENSORBOARD@\n", tensorboard)
        .replace("@SERVING@\n", serving)
        .replace("@SERVING_SERVER@", SERVING_SERVER)
        .replace("@SERVING_PORT@", &port(SERVING_PORT_NAME))
        .replace("@GRPC_PORT@", &port(SERVING_GRPC_PORT_NAME))
        .replace("@MODELS@", MODELS_FOLDER)
        .replace("@TFIMG_DIR@", TFIMG_DIR)
        .replace("@IDLE_STOPPED@", crate::labels::IDLE_STOPPED)
        .replace("@IDLE_LAST_USED@", crate::labels::IDLE_LAST_USED)
        .replace("@LOGIN_COOKIE@", crate::labels::JUPYTER_LOGIN_COOKIE)
        .replace("@XSRF_COOKIE@", crate::labels::JUPYTER_XSRF_COOKIE)
        .replace("@TENSORBOARD_PORT@", &port(TENSORBOARD_PORT))
        .replace(
            "@TENSORBOARD_LOGDIR@",
            spec.tensorboard_logdir.as_deref().unwrap_or_default(),
        )
        .replace("@NAME@", &spec.name)
        .replace("@USER@", &spec.user)
        .replace("@WORKDIR@", &spec.workdir)
        .replace("@SERVICE@", spec.service.as_str())
        .replace("@LOGIN_PATH@", &login_path(spec))
        .replace("@VENV@", VENV)
        .replace("@JUPYTER_PORT@", &port("jupyter"))
        .replace("@SSH_PORT@", &port("ssh"))
        .replace(
            "@COPIED@",
            &spec
                .files
                .iter()
                .map(|copied| copied.destination.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        )
}

/// The folders login shells put back in front of PATH, each prepended in turn: the venv,
/// then (GPU images from the wheels) ptxas's folder, which so ends up first as in the image.
fn login_path(spec: &ResolvedSpec) -> String {
    let mut folders = vec![format!("{VENV}/bin")];
    if let Some(data_dir) = spec.gpu.as_ref().and_then(|gpu| gpu.cuda_data_dir.as_ref()) {
        folders.push(format!("{data_dir}/bin"));
    }
    folders.join(" ")
}
