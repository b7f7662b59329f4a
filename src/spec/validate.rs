//! From an `extends` chain to a `ResolvedSpec`: merge, apply defaults, check every value
//! against the compatibility table, and point each problem at the file, line and column
//! that set the offending value. Pure: no I/O.

use std::collections::BTreeMap;

use super::compat::{self, PipCuda, TensorflowRow, Version};
use std::path::Path;

use super::load::{Origin, SpecDocument};
use super::model::{CudaProvider, Service, SpecFile};
use super::resolved::{
    site_packages, CopiedFiles, GpuStack, ResolvedPackages, ResolvedSpec, TENSORBOARD_PORT,
};
use super::syntax::{requirement_name, valid_apt_package, valid_identifier, valid_image_reference};
use crate::input::{Location, SpecError};

const DEFAULT_BASE: &str = "debian:bullseye-slim";
const DEFAULT_USER: &str = "tf";
const DEFAULT_WORKDIR: &str = "/tf";

/// apt packages every image needs: the entrypoint runs under tini, and pip needs a venv
/// and CA certificates.
const REQUIRED_APT: &[&str] = &["ca-certificates", "python3", "python3-venv", "tini"];

/// Container ports each service listens on unless the spec says otherwise.
fn service_port(service: Service) -> Option<(&'static str, u16)> {
    match service {
        Service::Jupyter => Some(("jupyter", 8888)),
        Service::Ssh => Some(("ssh", 22)),
        Service::None => None,
    }
}

/// Resolves a chain (root first, as `Catalog::chain` returns it).
pub fn resolve(chain: &[SpecDocument], current_dir: &Path) -> Result<ResolvedSpec, SpecError> {
    let leaf = chain.last().expect("a chain holds at least its leaf");
    let merged = chain.iter().fold(SpecFile::default(), |merged, document| {
        merged.merged_with(&document.file)
    });
    let resolver = Resolver {
        chain,
        merged: &merged,
        current_dir,
    };
    resolver.resolve(leaf)
}

struct Resolver<'a> {
    chain: &'a [SpecDocument],
    merged: &'a SpecFile,
    /// The folder tfimg runs in (absolute): relative spec paths start there.
    current_dir: &'a Path,
}

impl Resolver<'_> {
    /// The place that set `path`: the nearest spec in the chain that mentions it.
    fn locate(&self, path: &str) -> Option<Location> {
        self.chain
            .iter()
            .rev()
            .find_map(|document| document.locate(path))
    }

    fn error(&self, path: &str, message: impl Into<String>, hint: impl Into<String>) -> SpecError {
        let location = self
            .locate(path)
            .or_else(|| self.chain.last().map(SpecDocument::start));
        SpecError::new(location, message, hint)
    }

    fn resolve(&self, leaf: &SpecDocument) -> Result<ResolvedSpec, SpecError> {
        let merged = self.merged;
        if leaf.file.is_abstract == Some(true) {
            return Err(SpecError::new(
                Some(leaf.locate_key("abstract").unwrap_or_else(|| leaf.start())),
                format!("spec `{}` is abstract: it exists to be extended", leaf.name),
                format!(
                    "write a spec with `extends: {}`, or use one of the specs from `tfimg list`",
                    leaf.name
                ),
            ));
        }

        let (tensorflow, row) = self.tensorflow()?;
        let gpu_wanted = merged.gpu.unwrap_or(false);
        if !gpu_wanted {
            for field in ["cuda", "cudnn"] {
                let set = match field {
                    "cuda" => merged.cuda.is_some(),
                    _ => merged.cudnn.is_some(),
                };
                if set {
                    return Err(self.error(
                        field,
                        format!("`{field}` is set but `gpu` is false"),
                        "set `gpu: true` for a CUDA image, or remove `cuda`/`cudnn`",
                    ));
                }
            }
        }
        let provider = merged.cuda_provider.unwrap_or(CudaProvider::Pip);
        let gpu = if gpu_wanted {
            Some(self.gpu_stack(&tensorflow, row, provider)?)
        } else {
            None
        };

        let base = match (&merged.base, &gpu) {
            (Some(base), _) => base.clone(),
            (None, Some(stack)) if stack.provider == CudaProvider::Image => {
                self.nvidia_base(row, stack)
            }
            (None, _) => DEFAULT_BASE.to_string(),
        };
        if !valid_image_reference(&base) {
            return Err(self.error(
                "base",
                format!("`{}` is not a valid image reference", base.escape_debug()),
                "write a reference such as `debian:bullseye-slim` or `registry.example:5000/team/base:1`",
            ));
        }
        let python = self.python(&tensorflow, row, &base)?;
        if Version::parse(&python)
            .is_some_and(|version| version < Version::parse("3.8").expect("literal"))
        {
            let field = if merged.python.is_some() {
                "python"
            } else {
                "base"
            };
            return Err(self.error(
                field,
                format!("Python {python} is too old for tfimg's images (their verification and JupyterLab 4 need 3.8 or later)"),
                "use a base that ships Python 3.8 or later, such as `debian:bullseye-slim` (3.9) or `ubuntu:20.04` (3.8)",
            ));
        }
        let service = merged.service.unwrap_or(Service::None);
        let ports = self.ports(service)?;
        let user = self.user()?;
        let workdir = self.workdir()?;
        let env = self.env()?;
        let packages = self.packages(service, &tensorflow)?;
        let files = self.files(&workdir)?;
        let tensorboard_logdir = self.tensorboard_logdir(&ports, &workdir)?;

        let mut constraints = vec![format!(
            "{}=={tensorflow}",
            tensorflow_package_name(gpu.as_ref())
        )];
        constraints.extend(row.pins.iter().map(|pin| pin.to_string()));
        let pip_cuda = gpu
            .as_ref()
            .is_some_and(|stack| stack.provider == CudaProvider::Pip);
        if pip_cuda {
            // The CUDA stack is pinned like TensorFlow: a later install cannot move it.
            constraints.extend(row.pip_cuda.pins().iter().map(|pin| pin.to_string()));
        }
        let tensorflow_requirement = match &gpu {
            Some(stack)
                if stack.provider == CudaProvider::Pip
                    && matches!(row.pip_cuda, PipCuda::AndCudaExtra { .. }) =>
            {
                format!("tensorflow[and-cuda]=={tensorflow}")
            }
            _ => format!("{}=={tensorflow}", tensorflow_package_name(gpu.as_ref())),
        };
        let gpu = gpu.map(|mut stack| {
            if stack.provider == CudaProvider::Pip {
                let site = site_packages(&python);
                stack.library_path = library_folders(row)
                    .iter()
                    .map(|folder| format!("{site}/nvidia/{folder}/lib"))
                    .collect();
                stack.cuda_data_dir = Some(format!("{site}/nvidia/{}", compat::NVCC_FOLDER));
                if let Some(soname) = row.pip_cuda.cupti_soname() {
                    stack.cupti_library = Some(format!("{site}/nvidia/cuda_cupti/lib/{soname}"));
                    stack
                        .cuda_libraries
                        .push(compat::CUPTI_FALLBACK.to_string());
                }
            }
            stack
        });

        Ok(ResolvedSpec {
            name: leaf.name.clone(),
            description: describe(
                merged.description.as_deref().unwrap_or_default(),
                &tensorflow,
                &python,
                gpu.as_ref(),
            ),
            source: match &leaf.origin {
                Origin::Builtin => "built-in".to_string(),
                _ => leaf.display_path.clone(),
            },
            extends: self.chain[..self.chain.len() - 1]
                .iter()
                .map(|document| document.name.clone())
                .collect(),
            base,
            tensorflow: tensorflow.to_string(),
            tensorflow_requirement,
            python,
            gpu,
            service,
            packages,
            constraints,
            env,
            ports,
            user,
            workdir,
            tensorboard_logdir,
            files,
        })
    }

    fn files(&self, workdir: &str) -> Result<Vec<CopiedFiles>, SpecError> {
        let Some(entries) = &self.merged.files else {
            return Ok(Vec::new());
        };
        // `files` never merge, so the nearest spec that names them owns every entry.
        let owner = self
            .chain
            .iter()
            .rev()
            .find(|document| document.file.files.is_some())
            .expect("merged files come from some spec");
        let folder = match &owner.origin {
            Origin::Local(path) | Origin::File(path) => {
                // `lab.yaml` has the parent `""`: the current folder, made absolute, so
                // the comparison below never sees a relative (match-everything) root.
                let parent = path.parent().unwrap_or(Path::new(""));
                lexical(&self.current_dir.join(parent))
            }
            Origin::Builtin => {
                return Err(self.error(
                    "files",
                    "built-in specs cannot copy files",
                    "copy files from a local spec",
                ))
            }
        };
        let location = owner.locate_key("files");
        // Sources stay in the project: under the spec's folder, or under the current
        // folder (`../code` from `images/`).
        let current = lexical(self.current_dir);
        let roots: Vec<&Path> = vec![folder.as_path(), current.as_path()];
        let mut resolved = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let (source, destination, ignore) = entry.parts();
            let bad = |message: String, hint: &str| SpecError::new(location.clone(), message, hint);
            if source.is_empty() || Path::new(&source).is_absolute() {
                return Err(bad(
                    format!("`files` source `{source}` must be a path relative to the spec file"),
                    "write it relative to the folder of the spec file, such as `../code`",
                ));
            }
            let full = lexical(&folder.join(&source));
            if !inside_any(&full, &roots) {
                return Err(bad(
                    format!(
                        "`files` source `{source}` is outside the project (it is `{}`)",
                        full.display()
                    ),
                    "copy files from the spec's folder or the current folder, such as `../code` from `images/`",
                ));
            }
            let name = Path::new(&source)
                .components()
                .filter_map(|part| match part {
                    std::path::Component::Normal(name) => name.to_str(),
                    _ => None,
                })
                .next_back()
                .unwrap_or("files")
                .to_string();
            let destination = destination.unwrap_or_else(|| format!("{workdir}/{name}"));
            let safe = destination.starts_with('/')
                && destination
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c))
                && !destination.split('/').any(|part| part == "..");
            if !safe {
                return Err(bad(
                    format!("`files` destination `{destination}` must be an absolute path of letters, digits, `-`, `_`, `.`"),
                    "write it like `/tf/code`",
                ));
            }
            if let Some(pattern) = ignore.iter().find(|p| p.is_empty() || p.contains('\n')) {
                return Err(bad(
                    format!("`files` ignore pattern `{pattern}` is not valid"),
                    "write gitignore-style patterns such as `*.ckpt` or `data/`",
                ));
            }
            resolved.push(CopiedFiles {
                source: folder.join(&source),
                context_path: format!("files/{index}"),
                destination,
                ignore,
                location: location.clone(),
                roots: roots.iter().map(|root| root.to_path_buf()).collect(),
            });
        }
        Ok(resolved)
    }

    fn tensorflow(&self) -> Result<(Version, &'static TensorflowRow), SpecError> {
        let Some(text) = &self.merged.tensorflow else {
            return Err(self.error(
                "tensorflow",
                "no TensorFlow version is set",
                format!(
                    "add `tensorflow: \"2.9.3\"` (known releases: {}) or `extends: gpu-jupyter`",
                    compat::known_tensorflow_minors()
                ),
            ));
        };
        let unknown = || {
            self.error(
                "tensorflow",
                format!("unknown TensorFlow version `{}`", text.0),
                format!(
                    "tfimg knows TensorFlow {}; write a release such as \"2.9\" or \"2.9.3\"",
                    compat::known_tensorflow_minors()
                ),
            )
        };
        let version = Version::parse(&text.0).ok_or_else(unknown)?;
        if version.precision() > 3 {
            return Err(unknown());
        }
        let row = compat::tensorflow_row(&version).ok_or_else(unknown)?;
        let full = if version.precision() == 2 {
            Version::parse(row.latest_patch).expect("table versions parse")
        } else {
            version
        };
        Ok((full, row))
    }

    fn gpu_stack(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
        provider: CudaProvider,
    ) -> Result<GpuStack, SpecError> {
        let merged = self.merged;
        let requested = |field: &str, text: &Option<super::model::VersionText>| {
            text.as_ref()
                .map(|text| {
                    Version::parse(&text.0).ok_or_else(|| {
                        self.error(
                            field,
                            format!("`{}` is not a version", text.0),
                            format!("write `{field}: \"11.2\"` style versions"),
                        )
                    })
                })
                .transpose()
        };
        let cuda_requested = requested("cuda", &merged.cuda)?;
        let cudnn_requested = requested("cudnn", &merged.cudnn)?;
        let (offered_cuda, offered_cudnn, cuda_requirements) = match provider {
            CudaProvider::Pip => match row.pip_cuda {
                PipCuda::Wheels {
                    cuda,
                    cudnn,
                    requirements,
                    ..
                } => (
                    cuda.to_string(),
                    cudnn.to_string(),
                    requirements.iter().map(|r| r.to_string()).collect(),
                ),
                PipCuda::AndCudaExtra { .. } => (row.cuda.to_string(), row.cudnn.to_string(), Vec::new()),
                PipCuda::Unavailable => {
                    return Err(self.error(
                        "tensorflow",
                        format!(
                            "NVIDIA's pip wheels do not carry the CUDA {} libraries TensorFlow {tensorflow} loads",
                            row.cuda
                        ),
                        "set `cuda_provider: image` to build on an nvidia/cuda base image, or use TensorFlow 2.5 or later",
                    ))
                }
            },
            CudaProvider::Image => (
                cuda_requested
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| row.cuda.to_string()),
                cudnn_requested
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| row.cudnn.to_string()),
                Vec::new(),
            ),
        };
        let cuda = cuda_requested
            .clone()
            .unwrap_or_else(|| Version::parse(&offered_cuda).expect("table"));
        let cudnn = cudnn_requested
            .clone()
            .unwrap_or_else(|| Version::parse(&offered_cudnn).expect("table"));
        if !row.accepts(&cuda, &cudnn) {
            let field = if cuda_requested.is_some()
                && cuda.major() != Version::parse(row.cuda).expect("table").major()
            {
                "cuda"
            } else if cudnn_requested.is_some() {
                "cudnn"
            } else {
                "cuda"
            };
            let built_cudnn = Version::parse(row.cudnn).expect("table");
            return Err(self.error(
                field,
                format!(
                    "CUDA {cuda} with cuDNN {cudnn} does not fit TensorFlow {tensorflow}, which was built against CUDA {} and cuDNN {}",
                    row.cuda, row.cudnn
                ),
                format!(
                    "use CUDA {}.x with cuDNN {}.x at or above {}, or remove `cuda`/`cudnn` to take the tested pair",
                    Version::parse(row.cuda).expect("table").major(),
                    built_cudnn.major(),
                    row.cudnn
                ),
            ));
        }
        if provider == CudaProvider::Pip {
            let offered = (
                Version::parse(&offered_cuda).expect("table"),
                Version::parse(&offered_cudnn).expect("table"),
            );
            let mismatch = cuda_requested
                .as_ref()
                .filter(|wanted| wanted.major_minor() != offered.0.major_minor())
                .map(|_| "cuda")
                .or(cudnn_requested
                    .as_ref()
                    .filter(|wanted| wanted.major_minor() != offered.1.major_minor())
                    .map(|_| "cudnn"));
            if let Some(field) = mismatch {
                return Err(self.error(
                    field,
                    format!(
                        "NVIDIA's pip wheels for TensorFlow {tensorflow} carry CUDA {offered_cuda} and cuDNN {offered_cudnn}, not CUDA {cuda} with cuDNN {cudnn}"
                    ),
                    "remove `cuda`/`cudnn` to use the wheels, or set `cuda_provider: image` for an nvidia/cuda base with that pair",
                ));
            }
        }
        let Some(driver) = compat::cuda_row_for(&cuda) else {
            return Err(self.error(
                "cuda",
                format!("tfimg has no driver table for CUDA {cuda}"),
                format!(
                    "use one of CUDA {}",
                    compat::CUDA
                        .iter()
                        .map(|row| row.cuda)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        Ok(GpuStack {
            provider,
            cuda: format!("{}.{}", cuda.major(), cuda.minor().unwrap_or(0)),
            cudnn: format!("{}.{}", cudnn.major(), cudnn.minor().unwrap_or(0)),
            tensorflow_built_with_cuda: row.cuda.to_string(),
            tensorflow_built_with_cudnn: row.cudnn.to_string(),
            driver_min: driver.driver_min.to_string(),
            driver_compat_min: driver.driver_compat_min.to_string(),
            cuda_requirements,
            library_path: Vec::new(),
            cuda_data_dir: None,
            cupti_library: None,
            cuda_libraries: compat::cuda_sonames(row)
                .iter()
                .map(|soname| soname.to_string())
                .collect(),
        })
    }

    /// The nvidia/cuda runtime image for the stack, on the newest Ubuntu whose Python
    /// the TensorFlow release supports.
    fn nvidia_base(&self, row: &TensorflowRow, stack: &GpuStack) -> String {
        let cuda = Version::parse(&stack.cuda).expect("resolved");
        let cudnn = Version::parse(&stack.cudnn).expect("resolved");
        let cuda_row = compat::cuda_row_for(&cuda).expect("checked in gpu_stack");
        let ubuntu = ["22.04", "20.04", "18.04"]
            .into_iter()
            .find(|release| {
                compat::distribution_python(&format!("ubuntu:{release}"))
                    .and_then(Version::parse)
                    .is_some_and(|python| row.supports_python(&python))
            })
            .unwrap_or("20.04");
        compat::nvidia_cuda_image(cuda_row, cudnn.major(), ubuntu)
    }

    fn python(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
        base: &str,
    ) -> Result<String, SpecError> {
        let (low, high) = (row.python_min, row.python_max);
        let shipped = compat::distribution_python(base);
        match &self.merged.python {
            Some(text) => {
                let python = Version::parse(&text.0)
                    .filter(|version| version.precision() <= 3 && version.major() == 3)
                    .ok_or_else(|| {
                        self.error(
                            "python",
                            format!("`{}` is not a Python 3 version", text.0),
                            format!("write `python: \"{high}\"` or remove `python` to use the base image's"),
                        )
                    })?;
                let python_minor = format!("{}.{}", python.major(), python.minor().unwrap_or(0));
                if !row.supports_python(&python) {
                    return Err(self.error(
                        "python",
                        format!(
                            "Python {python_minor} is outside the range TensorFlow {tensorflow} supports ({low} to {high})"
                        ),
                        format!(
                            "set `python` between {low} and {high}{}",
                            releases_for_python(&python_minor)
                                .map(|releases| format!(", or use TensorFlow {releases} for Python {python_minor}"))
                                .unwrap_or_default()
                        ),
                    ));
                }
                if let Some(shipped) = shipped {
                    if shipped != python_minor {
                        return Err(self.error(
                            "python",
                            format!("`{base}` ships Python {shipped}, not {python_minor}"),
                            format!(
                                "remove `python` to use {shipped}, or set `base` to an image that ships Python {python_minor}{}",
                                ubuntu_for_python(&python_minor)
                                    .map(|image| format!(" (such as `{image}`)"))
                                    .unwrap_or_default()
                            ),
                        ));
                    }
                }
                Ok(python_minor)
            }
            None => {
                let Some(shipped) = shipped else {
                    return Err(self.error(
                        "base",
                        format!("tfimg does not know which Python `{base}` ships"),
                        format!("set `python:` to the version its `python3` package installs (TensorFlow {tensorflow} supports {low} to {high})"),
                    ));
                };
                let version = Version::parse(shipped).expect("table");
                if !row.supports_python(&version) {
                    return Err(self.error(
                        "base",
                        format!(
                            "`{base}` ships Python {shipped}, outside the range TensorFlow {tensorflow} supports ({low} to {high})"
                        ),
                        format!(
                            "use a base that ships Python {low} to {high} (such as `debian:bullseye-slim`){}",
                            releases_for_python(shipped)
                                .map(|releases| format!(", or TensorFlow {releases}"))
                                .unwrap_or_default()
                        ),
                    ));
                }
                Ok(shipped.to_string())
            }
        }
    }

    fn ports(&self, service: Service) -> Result<BTreeMap<String, u16>, SpecError> {
        let mut ports = BTreeMap::new();
        for (name, number) in self.merged.ports.clone().unwrap_or_default() {
            let path = format!("ports.{name}");
            if !valid_identifier(&name, false) {
                return Err(self.error(
                    &path,
                    format!("port name `{name}` is not valid"),
                    "use lowercase letters, digits and `-`, such as `jupyter` or `tensorboard`",
                ));
            }
            let Some(port) = number.port() else {
                // As written: YAML reads `1e10` as the float 10000000000.
                let written = self
                    .chain
                    .iter()
                    .rev()
                    .find_map(|document| document.positions.scalar(&path))
                    .map_or_else(|| number.to_string(), str::to_string);
                return Err(self.error(
                    &path,
                    format!("port {written} for `{name}` is out of range"),
                    "container ports go from 1 to 65535",
                ));
            };
            if let Some((other, _)) = ports.iter().find(|(_, existing)| **existing == port) {
                return Err(self.error(
                    &path,
                    format!("port {port} is given to both `{other}` and `{name}`"),
                    "give each service its own container port",
                ));
            }
            ports.insert(name, port);
        }
        if let Some((name, port)) = service_port(service) {
            if !ports.contains_key(name) {
                if let Some((other, _)) = ports.iter().find(|(_, existing)| **existing == port) {
                    return Err(self.error(
                        &format!("ports.{other}"),
                        format!("port {port} of `{other}` is the {name} service's own port"),
                        format!("give `{other}` another port, or set `ports.{name}` to move the service"),
                    ));
                }
                ports.insert(name.to_string(), port);
            }
        }
        Ok(ports)
    }

    fn user(&self) -> Result<String, SpecError> {
        let user = self
            .merged
            .user
            .clone()
            .unwrap_or_else(|| DEFAULT_USER.to_string());
        if user == "root" {
            return Err(self.error(
                "user",
                "`user: root` is not allowed: containers run as the host user",
                "remove `user` (the default `tf` takes the host uid/gid at run time); `tfimg run --user root` opts out per run",
            ));
        }
        let valid = user.len() <= 32
            && user.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && user
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !valid {
            return Err(self.error(
                "user",
                format!("user name `{user}` is not valid"),
                "use lowercase letters, digits, `_` and `-`, starting with a letter (at most 32)",
            ));
        }
        Ok(user)
    }

    fn workdir(&self) -> Result<String, SpecError> {
        let workdir = self
            .merged
            .workdir
            .clone()
            .unwrap_or_else(|| DEFAULT_WORKDIR.to_string());
        let parts: Vec<&str> = workdir.split('/').filter(|part| !part.is_empty()).collect();
        let normalized = format!("/{}", parts.join("/"));
        let syntax_ok = workdir.starts_with('/')
            && !parts.is_empty()
            && workdir
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
            && !parts.iter().any(|part| *part == ".." || *part == ".");
        if !syntax_ok {
            return Err(self.error(
                "workdir",
                format!("workdir `{workdir}` is not valid"),
                "use an absolute path of its own, such as `/tf` or `/workspace` (not a system folder, no `.` or `..`)",
            ));
        }
        // The workdir is handed to the user at build and at every start: under a system
        // folder that would be a user-writable folder among the system's programs (first
        // on PATH for `/opt/venv/bin`), read by the entrypoint's root phase.
        if let Some(system) = system_folder(&parts) {
            return Err(self.error(
                "workdir",
                format!("workdir `{workdir}` is {system}"),
                "use a folder of its own, such as `/tf` or `/workspace` (the user gets to own it)",
            ));
        }
        Ok(normalized)
    }

    fn env(&self) -> Result<BTreeMap<String, String>, SpecError> {
        let mut env = BTreeMap::new();
        for (key, value) in self.merged.env.clone().unwrap_or_default() {
            let path = format!("env.{key}");
            if !valid_identifier(&key, true) {
                return Err(self.error(
                    &path,
                    format!("environment variable name `{key}` is not valid"),
                    "use letters, digits and `_`, not starting with a digit",
                ));
            }
            if key.starts_with("TFIMG_") {
                return Err(self.error(
                    &path,
                    format!("`{key}` is reserved: tfimg sets `TFIMG_*` variables at run time"),
                    "choose another name",
                ));
            }
            // tfimg sets these itself; a second value would silently win or lose.
            const MANAGED: &[&str] = &[
                "LD_LIBRARY_PATH",
                "PATH",
                "PIP_CONSTRAINT",
                "VIRTUAL_ENV",
                "PIP_CERT",
                "PIP_INDEX_URL",
                "REQUESTS_CA_BUNDLE",
                "SSL_CERT_FILE",
            ];
            if MANAGED.contains(&key.as_str()) || key.starts_with("NVIDIA_") {
                return Err(self.error(
                    &path,
                    format!("`{key}` is set by tfimg in every image"),
                    "leave it out: library paths, the venv, pins and certificates are managed from the spec and the build options; GPU visibility is chosen with `tfimg run --gpus`",
                ));
            }
            if value.0.contains(['\n', '\r', '\0']) {
                return Err(self.error(
                    &path,
                    format!("the value of `{key}` spans several lines"),
                    "environment values baked into an image must fit on one line",
                ));
            }
            env.insert(key, value.0);
        }
        Ok(env)
    }

    fn packages(
        &self,
        service: Service,
        tensorflow: &Version,
    ) -> Result<ResolvedPackages, SpecError> {
        let declared = self.merged.packages.clone().unwrap_or_default();
        let mut apt: Vec<String> = REQUIRED_APT.iter().map(|name| name.to_string()).collect();
        if service == Service::Ssh {
            apt.push("openssh-server".to_string());
        }
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
        Ok(ResolvedPackages { apt, pip })
    }

    /// The folder the managed TensorBoard serves: `tensorboard_logdir:`, else the workdir,
    /// for specs with a `tensorboard` port; none without one (nothing would serve it).
    fn tensorboard_logdir(
        &self,
        ports: &BTreeMap<String, u16>,
        workdir: &str,
    ) -> Result<Option<String>, SpecError> {
        let Some(logdir) = &self.merged.tensorboard_logdir else {
            return Ok(ports
                .contains_key(TENSORBOARD_PORT)
                .then(|| workdir.to_string()));
        };
        let parts: Vec<&str> = logdir.split('/').filter(|part| !part.is_empty()).collect();
        // The entrypoint passes it to TensorBoard as one shell word: the same characters
        // as a workdir.
        let valid = logdir.starts_with('/')
            && logdir
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
            && !parts.iter().any(|part| *part == ".." || *part == ".");
        if !valid {
            return Err(self.error(
                "tensorboard_logdir",
                format!(
                    "tensorboard_logdir `{}` is not valid",
                    crate::input::printable(logdir)
                ),
                format!("use an absolute path of letters, digits, `-`, `_`, `.` and `/`, without `.` or `..` parts, such as `{workdir}/logs`"),
            ));
        }
        if !ports.contains_key(TENSORBOARD_PORT) {
            return Err(self.error(
                "tensorboard_logdir",
                "`tensorboard_logdir` is set but the spec has no `tensorboard` port, so no TensorBoard runs",
                "add `ports: {tensorboard: 6006}` to run TensorBoard, or remove `tensorboard_logdir`",
            ));
        }
        Ok(Some(format!("/{}", parts.join("/"))))
    }
}

/// `path` with `.` and `..` resolved by reading it, not the file system (a source may
/// not exist yet when its spec is shown).
fn lexical(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A description with its placeholders filled from the resolved stack, so a spec that
/// inherits a description and changes the TensorFlow version (or turns the GPU off) never
/// lists the parent's versions: `{stack}` (`TensorFlow 2.9 (CPU)` or `TensorFlow 2.9 +
/// CUDA 11.8 + cuDNN 8.6`), `{tensorflow}` (`2.9.3`), `{tensorflow_minor}` (`2.9`) and
/// `{python}`. Other braces are left as written.
fn describe(template: &str, tensorflow: &Version, python: &str, gpu: Option<&GpuStack>) -> String {
    let (major, minor) = tensorflow.major_minor();
    let minor = format!("{major}.{minor}");
    let stack = match gpu {
        Some(gpu) => format!(
            "TensorFlow {minor} + CUDA {} + cuDNN {}",
            gpu.cuda, gpu.cudnn
        ),
        None => format!("TensorFlow {minor} (CPU)"),
    };
    template
        .replace("{stack}", &stack)
        .replace("{tensorflow_minor}", &minor)
        .replace("{tensorflow}", &tensorflow.to_string())
        .replace("{python}", python)
}

/// What makes a workdir/// What makes a workdir (its parts, `/opt/venv/bin` → `["opt", "venv", "bin"]`) a system
/// folder, if anything: a top-level folder of the system itself, anything under the
/// system's programs, libraries, state and kernel file systems, tfimg's venv and scripts,
/// or a hidden folder (`/home/tf/.ssh`).
fn system_folder(parts: &[&str]) -> Option<&'static str> {
    const TOP_ONLY: &[&str] = &["home", "media", "mnt", "opt", "srv", "tmp"];
    const WHOLE: &[&str] = &[
        "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root", "run",
        "sbin", "sys", "usr", "var",
    ];
    match parts {
        [] => Some("the root folder"),
        [top] if TOP_ONLY.contains(top) => Some("a system folder"),
        [top, ..] if WHOLE.contains(top) => Some("a system folder or inside one"),
        ["opt", "venv" | "tfimg", ..] => {
            Some("tfimg's Python environment or scripts, or inside them")
        }
        _ if parts.iter().any(|part| part.starts_with('.')) => {
            Some("a hidden folder or inside one")
        }
        _ => None,
    }
}

/// Whether the absolute, lexical `path` is one of `roots` or inside one./// Whether the absolute, lexical `path` is one of `roots` or inside one. A relative root
/// is no root: every relative path would "start with" an empty one.
fn inside_any(path: &Path, roots: &[&Path]) -> bool {
    path.is_absolute()
        && roots
            .iter()
            .any(|root| root.is_absolute() && path.starts_with(lexical(root)))
}

fn tensorflow_package_name(gpu: Option<&GpuStack>) -> &'static str {
    if gpu.is_some() {
        "tensorflow"
    } else {
        "tensorflow-cpu"
    }
}

fn library_folders(row: &TensorflowRow) -> &'static [&'static str] {
    match row.pip_cuda {
        PipCuda::Wheels {
            library_folders, ..
        }
        | PipCuda::AndCudaExtra {
            library_folders, ..
        } => library_folders,
        PipCuda::Unavailable => &[],
    }
}

/// `2.12 to 2.16` — the TensorFlow releases that support a Python minor.
fn releases_for_python(python: &str) -> Option<String> {
    let version = Version::parse(python)?;
    let rows: Vec<&str> = compat::TENSORFLOW
        .iter()
        .filter(|row| row.supports_python(&version))
        .map(|row| row.minor)
        .collect();
    match rows.as_slice() {
        [] => None,
        [only] => Some(only.to_string()),
        [first, .., last] => Some(format!("{first} to {last}")),
    }
}

fn ubuntu_for_python(python: &str) -> Option<String> {
    ["18.04", "20.04", "22.04", "24.04"]
        .into_iter()
        .map(|release| format!("ubuntu:{release}"))
        .find(|image| compat::distribution_python(image) == Some(python))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_sources_stay_in_the_project() {
        let images = Path::new("/home/ana/project/images");
        let project = Path::new("/home/ana/project");
        let source = |text: &str| lexical(&images.join(text));
        assert_eq!(source("../code"), Path::new("/home/ana/project/code"));
        assert!(inside_any(&source("../code"), &[images, project]));
        assert!(inside_any(&source("./data/../notebooks"), &[images]));
        assert!(inside_any(&source("."), &[images]));
        assert!(!inside_any(&source("../code"), &[images]));
        let escaping = format!("{}etc", "../".repeat(10));
        assert_eq!(source(&escaping), Path::new("/etc"));
        assert!(!inside_any(&source(&escaping), &[images, project]));
        // A sibling whose name starts like the project is outside it.
        assert!(!inside_any(
            &source("../../project-secrets"),
            &[images, project]
        ));
        assert!(inside_any(
            &source("../x"),
            &[images, Path::new("/home/ana/project/images/../")]
        ));
        // A spec named as a bare file name once had the folder `""`, which every path
        // "starts with".
        assert!(!inside_any(Path::new("/outside/id_rsa"), &[Path::new("")]));
        assert!(!inside_any(
            Path::new("../../outside/id_rsa"),
            &[Path::new("")]
        ));
    }

    #[test]
    fn workdirs_under_system_folders_are_refused() {
        let verdict = |path: &str| {
            let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
            system_folder(&parts)
        };
        for system in [
            "/opt/venv/bin",
            "/opt/tfimg",
            "/lib/x86_64-linux-gnu",
            "/proc/self",
            "/dev/shm",
            "/home/tf/.ssh",
            "/usr/local/bin",
            "/etc",
            "/var/lib/x",
            "/run/user",
            "/root/work",
            "/home",
            "/opt",
            "/tmp",
        ] {
            assert!(verdict(system).is_some(), "{system}");
        }
        for own in [
            "/tf",
            "/workspace",
            "/home/tf",
            "/home/tf/work",
            "/opt/project",
            "/mnt/tf",
            "/srv/lab",
            "/tmp/work",
            "/data/x",
        ] {
            assert_eq!(verdict(own), None, "{own}");
        }
    }

    #[test]
    fn python_release_hints() {
        assert_eq!(releases_for_python("3.11").as_deref(), Some("2.12 to 2.18"));
        assert_eq!(releases_for_python("3.12").as_deref(), Some("2.16 to 2.18"));
        assert_eq!(releases_for_python("3.13"), None);
        assert_eq!(ubuntu_for_python("3.10").as_deref(), Some("ubuntu:22.04"));
    }
}
