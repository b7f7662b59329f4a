//! What pip and apt install: the spec's packages on top of those every image needs, the
//! TensorFlow requirement, and the constraints that pin TensorFlow, its known-good
//! companions and its CUDA wheels so no later install can move them.

use super::Resolver;
use crate::input::SpecError;
use crate::spec::compat::{PipCuda, TensorflowRow, Version};
use crate::spec::model::{CudaProvider, Service};
use crate::spec::resolved::{GpuStack, ResolvedPackages};
use crate::spec::syntax::{requirement_name, valid_apt_package};

/// apt packages every image needs: the entrypoint runs under tini, and pip needs a venv
/// and CA certificates. They are the first layer, shared by every variant of a base.
pub const REQUIRED_APT: &[&str] = &["ca-certificates", "python3", "python3-venv", "tini"];

/// What a person at a shell expects on an SSH image: a multiplexer to keep long jobs alive
/// after logging out (tmux, screen), git, an editor, a pager, curl and a process viewer.
pub const SSH_TOOLS: &[&str] = &[
    "curl",
    "git",
    "htop",
    "less",
    "nano",
    "openssh-server",
    "procps",
    "screen",
    "tmux",
    "vim-tiny",
];

/// Jupyter images get git (JupyterLab's terminal, cloning notebooks).
pub const JUPYTER_TOOLS: &[&str] = &["git"];

/// The HTTP server under the serving image's model server: uvicorn on uvloop's event loop
/// with httptools' parser (docs/serving.md says why this one), Prometheus'
/// client for its metrics, and orjson for its JSON (a batch-32 body parsed in a tenth of
/// the json module's time, numpy outputs written without Python lists). A spec that
/// declares one of them by name keeps its own.
pub const SERVING_SERVER: &[&str] = &[
    "uvicorn==0.39.0",
    "uvloop==0.23.0",
    "httptools==0.9.0",
    "prometheus-client==0.21.1",
    "orjson==3.11.5",
];

/// TensorFlow Serving's own gRPC API (its protos, generated for grpcio) at the image's
/// TensorFlow line: the serving image's model server speaks it on 8500. It requires
/// `tensorflow`, and CPU images hold `tensorflow-cpu`, so it is installed without its
/// dependencies (grpcio and protobuf come with TensorFlow) and the image keeps one
/// TensorFlow.
pub fn serving_api(tensorflow: &Version) -> String {
    let (major, minor) = tensorflow.major_minor();
    format!("tensorflow-serving-api~={major}.{minor}.0")
}

/// TensorFlow Text at the image's TensorFlow line, whose ops TensorFlow Serving's build
/// links in (a SavedModel that tokenizes with them loads only where they are registered;
/// the model server imports it before it loads a model). Its wheel's kernels are built
/// against that line's TensorFlow. Like `serving_api` it requires `tensorflow`, so it is
/// installed without its dependencies; before 2.16 it imports `tensorflow_hub` when it is
/// imported, so that comes too, older than 0.16 (which needs tf-keras). None where the
/// line has no wheel for the image's Python (`TEXT_NEWEST_PYTHON`): the image goes
/// without, and its server says so.
pub fn text_ops(tensorflow: &Version, python: &str) -> Vec<String> {
    let (major, minor) = tensorflow.major_minor();
    let line = format!("{major}.{minor}");
    let newest = TEXT_NEWEST_PYTHON
        .iter()
        .find(|(text_line, _)| *text_line == line)
        .and_then(|(_, newest)| Version::parse(newest));
    if let (Some(newest), Some(python)) = (newest, Version::parse(python)) {
        if python > newest {
            return Vec::new();
        }
    }
    let mut requirements = vec![format!("tensorflow-text~={line}.0")];
    if (major, minor) < (2, 16) {
        requirements.push("tensorflow-hub<0.16".to_string());
    }
    requirements
}

/// The lines whose `tensorflow-text` has Linux x86-64 wheels for fewer Pythons than their
/// TensorFlow (the compat table's range), and the newest Python it has one for (PyPI's
/// files of every 2.x release). Every other line has wheels for all of TensorFlow's.
const TEXT_NEWEST_PYTHON: &[(&str, &str)] = &[("2.13", "3.10"), ("2.16", "3.11"), ("2.17", "3.11")];

impl Resolver<'_> {
    pub(super) fn packages(
        &self,
        service: Service,
        tensorflow: &Version,
        python: &str,
    ) -> Result<ResolvedPackages, SpecError> {
        let declared = self.merged.packages.clone().unwrap_or_default();
        let tools = match service {
            Service::Ssh => SSH_TOOLS,
            Service::Jupyter => JUPYTER_TOOLS,
            Service::Serving | Service::None => &[],
        };
        let mut apt: Vec<String> = REQUIRED_APT
            .iter()
            .chain(tools)
            .map(|name| name.to_string())
            .collect();
        for package in declared.apt {
            if !valid_apt_package(&package) {
                return Err(self.error(
                    &format!("packages.apt={package}"),
                    format!("`{package}` is not a Debian package name"),
                    "write a package name such as `git`, optionally with `=version`",
                ));
            }
            if !apt.contains(&package) {
                apt.push(package);
            }
        }
        apt.sort();

        let mut pip = Vec::new();
        for requirement in declared.pip {
            let path = format!("packages.pip={requirement}");
            let Some(name) = requirement_name(&requirement) else {
                return Err(self.error(
                    &path,
                    format!("`{requirement}` is not a pip requirement tfimg accepts"),
                    "write a requirement such as `pandas`, `pandas==2.0.3` or `pandas>=2,<3` (no quotes, URLs or options)",
                ));
            };
            if matches!(
                name.as_str(),
                "tensorflow"
                    | "tensorflow-cpu"
                    | "tensorflow-gpu"
                    | "tf-nightly"
                    | "tensorflow-intel"
            ) {
                return Err(self.error(
                    &path,
                    format!(
                        "`{requirement}` would replace the TensorFlow {tensorflow} the spec pins"
                    ),
                    "set the version with `tensorflow:` instead",
                ));
            }
            pip.push(requirement);
        }
        let names: Vec<String> = pip.iter().filter_map(|r| requirement_name(r)).collect();
        if service == Service::Jupyter && !names.iter().any(|name| name == "jupyterlab") {
            pip.push("jupyterlab>=4,<5".to_string());
        }
        let mut pip_no_deps = Vec::new();
        if service == Service::Serving {
            pip_no_deps.push(serving_api(tensorflow));
            // A spec that declares one of them by name keeps its own.
            pip_no_deps.extend(text_ops(tensorflow, python).into_iter().filter(|package| {
                let name = requirement_name(package);
                !names.iter().any(|declared| Some(declared) == name.as_ref())
            }));
            for package in SERVING_SERVER {
                let name = requirement_name(package);
                if !names.iter().any(|declared| Some(declared) == name.as_ref()) {
                    pip.push(package.to_string());
                }
            }
        }
        Ok(ResolvedPackages {
            apt,
            pip,
            pip_no_deps,
        })
    }
}

/// The constraints file: TensorFlow, the release's pins, and the CUDA wheels from pip.
pub(super) fn constraints(
    tensorflow: &Version,
    row: &TensorflowRow,
    gpu: Option<&GpuStack>,
) -> Vec<String> {
    let mut constraints = vec![format!("{}=={tensorflow}", tensorflow_package_name(gpu))];
    constraints.extend(row.pins.iter().map(|pin| pin.to_string()));
    let pip_cuda = gpu.is_some_and(|stack| stack.provider == CudaProvider::Pip);
    if pip_cuda {
        // The CUDA stack is pinned like TensorFlow: a later install cannot move it.
        constraints.extend(row.pip_cuda.pins().iter().map(|pin| pin.to_string()));
    }
    constraints
}

/// The requirement that installs TensorFlow: with its `and-cuda` extra where that brings
/// the CUDA wheels.
pub(super) fn tensorflow_requirement(
    tensorflow: &Version,
    row: &TensorflowRow,
    gpu: Option<&GpuStack>,
) -> String {
    match gpu {
        Some(stack)
            if stack.provider == CudaProvider::Pip
                && matches!(row.pip_cuda, PipCuda::AndCudaExtra { .. }) =>
        {
            format!("tensorflow[and-cuda]=={tensorflow}")
        }
        _ => format!("{}=={tensorflow}", tensorflow_package_name(gpu)),
    }
}

fn tensorflow_package_name(gpu: Option<&GpuStack>) -> &'static str {
    if gpu.is_some() {
        "tensorflow"
    } else {
        "tensorflow-cpu"
    }
}
