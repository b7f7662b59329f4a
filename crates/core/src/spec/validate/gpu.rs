//! The CUDA stack of a GPU spec: the CUDA and cuDNN versions (the spec's, else what the
//! provider offers for the TensorFlow release), checked against what TensorFlow loads,
//! what NVIDIA's wheels carry and the driver table; the nvidia/cuda base image; and where
//! the wheels put their libraries.

use super::Resolver;
use crate::input::SpecError;
use crate::spec::compat::{self, PipCuda, TensorflowRow, Version};
use crate::spec::model::{CudaProvider, VersionText};
use crate::spec::resolved::{site_packages, GpuStack};

/// The CUDA and cuDNN versions a spec asks for, if it does.
struct Requested {
    cuda: Option<Version>,
    cudnn: Option<Version>,
}

/// What the CUDA provider offers for a TensorFlow release: the CUDA and cuDNN versions,
/// and the wheels pip installs for them (none when the base image or TensorFlow's own
/// extra brings them).
struct Offered {
    cuda: String,
    cudnn: String,
    requirements: Vec<String>,
}

impl Resolver<'_> {
    /// The CUDA stack for a spec with `gpu: true`; none without, where `cuda`/`cudnn`
    /// would be ignored, so setting them is an error.
    pub(super) fn gpu(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
    ) -> Result<Option<GpuStack>, SpecError> {
        let merged = self.merged;
        if !merged.gpu.unwrap_or(false) {
            for (field, set) in [
                ("cuda", merged.cuda.is_some()),
                ("cudnn", merged.cudnn.is_some()),
            ] {
                if set {
                    return Err(self.error(
                        field,
                        format!("`{field}` is set but `gpu` is false"),
                        "set `gpu: true` for a CUDA image, or remove `cuda`/`cudnn`",
                    ));
                }
            }
            return Ok(None);
        }
        let provider = merged.cuda_provider.unwrap_or(CudaProvider::Pip);
        self.gpu_stack(tensorflow, row, provider).map(Some)
    }

    fn gpu_stack(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
        provider: CudaProvider,
    ) -> Result<GpuStack, SpecError> {
        let requested = Requested {
            cuda: self.requested_version("cuda", self.merged.cuda.as_ref())?,
            cudnn: self.requested_version("cudnn", self.merged.cudnn.as_ref())?,
        };
        let offered = self.offered(tensorflow, row, provider, &requested)?;
        let cuda = requested
            .cuda
            .clone()
            .unwrap_or_else(|| Version::parse(&offered.cuda).expect("table"));
        let cudnn = requested
            .cudnn
            .clone()
            .unwrap_or_else(|| Version::parse(&offered.cudnn).expect("table"));
        self.check_tensorflow_accepts(tensorflow, row, &requested, &cuda, &cudnn)?;
        if provider == CudaProvider::Pip {
            self.check_wheels_carry(tensorflow, &offered, &requested, &cuda, &cudnn)?;
        }
        let driver = self.driver_row(&cuda)?;
        Ok(GpuStack {
            provider,
            cuda: format!("{}.{}", cuda.major(), cuda.minor().unwrap_or(0)),
            cudnn: format!("{}.{}", cudnn.major(), cudnn.minor().unwrap_or(0)),
            tensorflow_built_with_cuda: row.cuda.to_string(),
            tensorflow_built_with_cudnn: row.cudnn.to_string(),
            driver_min: driver.driver_min.to_string(),
            driver_compat_min: driver.driver_compat_min.to_string(),
            cuda_requirements: offered.requirements,
            library_path: Vec::new(),
            cuda_data_dir: None,
            cupti_library: None,
            cuda_libraries: compat::cuda_sonames(row)
                .iter()
                .map(|soname| soname.to_string())
                .collect(),
        })
    }

    /// `cuda:` or `cudnn:` as a version, if the spec sets it.
    fn requested_version(
        &self,
        field: &str,
        text: Option<&VersionText>,
    ) -> Result<Option<Version>, SpecError> {
        text.map(|text| {
            Version::parse(&text.0).ok_or_else(|| {
                self.error(
                    field,
                    format!("`{}` is not a version", text.0),
                    format!("write `{field}: \"11.2\"` style versions"),
                )
            })
        })
        .transpose()
    }

    /// What `provider` offers for the release: the wheels' pair, TensorFlow's own pair for
    /// its `and-cuda` extra, or (from the base image) the requested pair, else the tested one.
    fn offered(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
        provider: CudaProvider,
        requested: &Requested,
    ) -> Result<Offered, SpecError> {
        let offered = match provider {
            CudaProvider::Pip => match row.pip_cuda {
                PipCuda::Wheels {
                    cuda,
                    cudnn,
                    requirements,
                    ..
                } => Offered {
                    cuda: cuda.to_string(),
                    cudnn: cudnn.to_string(),
                    requirements: requirements.iter().map(|r| r.to_string()).collect(),
                },
                PipCuda::AndCudaExtra { .. } => Offered {
                    cuda: row.cuda.to_string(),
                    cudnn: row.cudnn.to_string(),
                    requirements: Vec::new(),
                },
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
            CudaProvider::Image => Offered {
                cuda: requested
                    .cuda
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| row.cuda.to_string()),
                cudnn: requested
                    .cudnn
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| row.cudnn.to_string()),
                requirements: Vec::new(),
            },
        };
        Ok(offered)
    }

    /// TensorFlow loads the CUDA major it was built with and a cuDNN of its major at or
    /// above its minor; the error blames the field that broke that.
    fn check_tensorflow_accepts(
        &self,
        tensorflow: &Version,
        row: &TensorflowRow,
        requested: &Requested,
        cuda: &Version,
        cudnn: &Version,
    ) -> Result<(), SpecError> {
        if row.accepts(cuda, cudnn) {
            return Ok(());
        }
        let field = if requested.cuda.is_some()
            && cuda.major() != Version::parse(row.cuda).expect("table").major()
        {
            "cuda"
        } else if requested.cudnn.is_some() {
            "cudnn"
        } else {
            "cuda"
        };
        let built_cudnn = Version::parse(row.cudnn).expect("table");
        Err(self.error(
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
        ))
    }

    /// NVIDIA's wheels carry one pair per release: a requested pair of another minor
    /// needs the base image to bring it.
    fn check_wheels_carry(
        &self,
        tensorflow: &Version,
        offered: &Offered,
        requested: &Requested,
        cuda: &Version,
        cudnn: &Version,
    ) -> Result<(), SpecError> {
        let offered_pair = (
            Version::parse(&offered.cuda).expect("table"),
            Version::parse(&offered.cudnn).expect("table"),
        );
        let mismatch = requested
            .cuda
            .as_ref()
            .filter(|wanted| wanted.major_minor() != offered_pair.0.major_minor())
            .map(|_| "cuda")
            .or(requested
                .cudnn
                .as_ref()
                .filter(|wanted| wanted.major_minor() != offered_pair.1.major_minor())
                .map(|_| "cudnn"));
        if let Some(field) = mismatch {
            return Err(self.error(
                field,
                format!(
                    "NVIDIA's pip wheels for TensorFlow {tensorflow} carry CUDA {} and cuDNN {}, not CUDA {cuda} with cuDNN {cudnn}",
                    offered.cuda, offered.cudnn
                ),
                "remove `cuda`/`cudnn` to use the wheels, or set `cuda_provider: image` for an nvidia/cuda base with that pair",
            ));
        }
        Ok(())
    }

    /// The driver minimums of the CUDA version.
    fn driver_row(&self, cuda: &Version) -> Result<&'static compat::CudaRow, SpecError> {
        compat::cuda_row_for(cuda).ok_or_else(|| {
            self.error(
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
            )
        })
    }

    /// The nvidia/cuda runtime image for the stack, on the newest Ubuntu whose Python
    /// the TensorFlow release supports.
    pub(super) fn nvidia_base(&self, row: &TensorflowRow, stack: &GpuStack) -> String {
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
}

/// A stack with CUDA from pip learns where the wheels put their libraries under the
/// venv of `python`: the library path, XLA's CUDA data folder and the CUPTI to link.
pub(super) fn with_wheel_paths(mut stack: GpuStack, row: &TensorflowRow, python: &str) -> GpuStack {
    if stack.provider == CudaProvider::Pip {
        let site = site_packages(python);
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
