//! The resolved spec: every default applied, every version decided, every pin chosen.
//! It is what `tfimg show` prints and the only input of rendering, so two machines that
//! resolve the same spec render the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::{CudaProvider, Service};

/// Where the Python environment lives inside every image.
pub const VENV: &str = "/opt/venv";

/// The port name that runs TensorBoard beside the service (the entrypoint starts it) and
/// that `tfimg run` keeps on 127.0.0.1 even with `--public` (TensorBoard has no login).
pub const TENSORBOARD_PORT: &str = "tensorboard";

/// The serving service's port: TensorFlow Serving's REST port, under its usual name.
pub const SERVING_PORT_NAME: &str = "rest";
pub const SERVING_PORT: u16 = 8501;
/// And its gRPC port, TensorFlow Serving's too.
pub const SERVING_GRPC_PORT_NAME: &str = "grpc";
pub const SERVING_GRPC_PORT: u16 = 8500;

/// Where a serving image looks for models: `/models/NAME/VERSION/saved_model.pb`, as
/// TensorFlow Serving's image does.
pub const MODELS_FOLDER: &str = "/models";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedSpec {
    pub name: String,
    pub description: String,
    /// `built-in`, or the spec file's path.
    pub source: String,
    /// Names of the specs this one extends, root first.
    pub extends: Vec<String>,
    pub base: String,
    pub tensorflow: String,
    /// The pip requirement that installs TensorFlow (`tensorflow-cpu==2.9.3`).
    pub tensorflow_requirement: String,
    pub python: String,
    /// CUDA/cuDNN details; absent for CPU images.
    pub gpu: Option<GpuStack>,
    pub service: Service,
    pub packages: ResolvedPackages,
    /// pip constraints applied to every install: the TensorFlow pin and the known-good
    /// pins of this TensorFlow release.
    pub constraints: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub ports: BTreeMap<String, u16>,
    pub user: String,
    pub workdir: String,
    /// The folder the managed TensorBoard serves: set exactly when the spec has a
    /// `tensorboard` port (`tensorboard_logdir:`, else the workdir).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensorboard_logdir: Option<String>,
    /// Local files and folders copied into the image.
    pub files: Vec<CopiedFiles>,
    /// The spec's lock (`SPEC.lock` beside its file, or the built-in's embedded one):
    /// attached by `app::catalog`, so every build of the spec installs from it.
    #[serde(skip)]
    pub lock: Option<super::locked::Locked>,
    /// Without a lock of its own: the lock whose layers it shares (`lock::check::inherit`),
    /// attached by `app::catalog` too.
    #[serde(skip)]
    pub inherited: Option<super::locked::Inherited>,
}

/// One `files:` entry, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CopiedFiles {
    /// Absolute path on this machine.
    pub source: std::path::PathBuf,
    /// Where it sits in the build context (`files/0`): the same on every machine.
    pub context_path: String,
    pub destination: String,
    pub ignore: Vec<String>,
    /// Where the entry was written, for errors found when the files are read.
    #[serde(skip)]
    pub location: Option<crate::input::Location>,
    /// The project's folders (the spec's folder and the current folder, absolute): every
    /// file copied, links resolved, must lie inside one of them.
    #[serde(skip)]
    pub roots: Vec<std::path::PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuStack {
    pub provider: CudaProvider,
    /// CUDA runtime and cuDNN inside the image.
    pub cuda: String,
    pub cudnn: String,
    /// What the TensorFlow release was built against.
    pub tensorflow_built_with_cuda: String,
    pub tensorflow_built_with_cudnn: String,
    /// Host NVIDIA driver: full support at or above `driver_min`, minor-version
    /// compatibility at or above `driver_compat_min`.
    pub driver_min: String,
    pub driver_compat_min: String,
    /// pip requirements that carry the CUDA/cuDNN libraries (empty for `image`).
    pub cuda_requirements: Vec<String>,
    /// Folders the loader must search for those libraries.
    pub library_path: Vec<String>,
    /// The nvcc wheel's folder, holding `bin/ptxas` and `nvvm/libdevice/libdevice.10.bc`:
    /// XLA's `--xla_gpu_cuda_data_dir` (absent for `image`, whose runtime has neither).
    pub cuda_data_dir: Option<String>,
    /// The CUPTI library of the wheels (for the profiler), which the image also links as
    /// plain `libcupti.so`, the name TensorFlow falls back to.
    pub cupti_library: Option<String>,
    /// The shared objects TensorFlow loads, checked after every build.
    pub cuda_libraries: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedPackages {
    pub apt: Vec<String>,
    pub pip: Vec<String>,
    /// Installed after `pip`, without their dependencies: what the image needs but whose
    /// declared dependencies it has under another name (`serving_api`, `text_ops`).
    pub pip_no_deps: Vec<String>,
}

impl ResolvedSpec {
    pub fn is_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// `3.9` → `/opt/venv/lib/python3.9/site-packages`.
    pub fn site_packages(&self) -> String {
        site_packages(&self.python)
    }

    /// The user's home folder in the image (`useradd --create-home`).
    pub fn home(&self) -> String {
        home_folder(&self.user)
    }

    /// The image reference tfimg tags builds with: `tfimg/<name>:<tensorflow>`.
    pub fn image_reference(&self) -> String {
        format!("tfimg/{}:{}", self.name, self.tensorflow)
    }
}

/// `/home/<user>`, where `useradd --create-home` puts an image user's home.
pub fn home_folder(user: &str) -> String {
    format!("/home/{user}")
}

pub fn site_packages(python: &str) -> String {
    format!("{VENV}/lib/python{python}/site-packages")
}
