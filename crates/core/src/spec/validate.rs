//! From an `extends` chain to a `ResolvedSpec`: merge, apply defaults, check every value
//! against the compatibility table, and point each problem at the file, line and column
//! that set the offending value. Pure: no I/O.
//!
//! This file tells the story and owns the error locations; each part is checked in its
//! own file: the TensorFlow and Python versions (`versions`), the CUDA stack (`gpu`), the
//! packages and pins (`packages`), the container's ports, user, folders and environment
//! (`container`), and the files copied in (`files`).

mod container;
mod files;
mod gpu;
mod packages;
pub use packages::REQUIRED_APT;
mod versions;

use std::path::Path;

use super::compat::{TensorflowRow, Version};
use super::load::{Origin, SpecDocument};
use super::model::{CudaProvider, Service, SpecFile};
use super::resolved::{GpuStack, ResolvedSpec};
use super::syntax::valid_image_reference;
use crate::input::{Location, SpecError};

const DEFAULT_BASE: &str = "debian:bullseye-slim";

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

    /// The description: the leaf's, else the nearest one up the chain among specs of the
    /// leaf's own kind. A spec of yours never takes a built-in's: `mylab` extending
    /// `cpu-headless` is not "for batch jobs" because `cpu-headless` is (issue 45); the
    /// built-ins' twins (`tf218-*`) take their parents' templates.
    fn own_description(&self, leaf: &SpecDocument) -> String {
        let builtin = |document: &SpecDocument| matches!(document.origin, Origin::Builtin);
        self.chain
            .iter()
            .rev()
            .take_while(|document| builtin(document) == builtin(leaf))
            .find_map(|document| document.file.description.clone())
            .unwrap_or_default()
    }

    /// Each part is checked in this order, so a spec with several problems is told about
    /// the same one first every time.
    fn resolve(&self, leaf: &SpecDocument) -> Result<ResolvedSpec, SpecError> {
        let merged = self.merged;
        refuse_abstract(leaf)?;
        let (tensorflow, row) = self.tensorflow()?;
        let gpu = self.gpu(&tensorflow, row)?;
        let base = self.base(row, gpu.as_ref())?;
        let python = self.python(&tensorflow, row, &base)?;
        self.refuse_old_python(&python)?;
        let service = merged.service.unwrap_or(Service::None);
        let ports = self.ports(service)?;
        let user = self.user()?;
        let workdir = self.workdir()?;
        let env = self.env()?;
        let packages = self.packages(service, &tensorflow, &python)?;
        let files = self.files(&workdir)?;
        let tensorboard_logdir = self.tensorboard_logdir(&ports, &workdir)?;
        let constraints = packages::constraints(&tensorflow, row, gpu.as_ref());
        let tensorflow_requirement =
            packages::tensorflow_requirement(&tensorflow, row, gpu.as_ref());
        let gpu = gpu.map(|stack| gpu::with_wheel_paths(stack, row, &python));

        Ok(ResolvedSpec {
            name: leaf.name.clone(),
            description: describe(
                &self.own_description(leaf),
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
            lock: None,
            inherited: None,
        })
    }

    /// The base image: the spec's, else an nvidia/cuda one for a CUDA stack from the
    /// image, else Debian.
    fn base(&self, row: &TensorflowRow, gpu: Option<&GpuStack>) -> Result<String, SpecError> {
        let base = match (&self.merged.base, gpu) {
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
        Ok(base)
    }
}

/// An abstract spec exists only to be extended.
fn refuse_abstract(leaf: &SpecDocument) -> Result<(), SpecError> {
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
    Ok(())
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
