//! Whether a spec and its lock agree: the spec's inputs now against those the lock was
//! made from, each difference as a sentence. Pure comparison.

use crate::spec::locked::{Inherited, Inputs, LockFile, Locked};
use crate::spec::validate::REQUIRED_APT;
use crate::spec::{CudaProvider, ResolvedSpec};

/// The inputs of `spec` as a lock records them.
pub fn inputs_of(spec: &ResolvedSpec) -> Inputs {
    let mut requirements = vec![spec.tensorflow_requirement.clone()];
    if let Some(gpu) = &spec.gpu {
        requirements.extend(gpu.cuda_requirements.iter().cloned());
    }
    Inputs {
        base: spec.base.clone(),
        tensorflow: spec.tensorflow.clone(),
        python: spec.python.clone(),
        cuda: spec.gpu.as_ref().map(|gpu| {
            let provider = match gpu.provider {
                CudaProvider::Pip => "pip",
                CudaProvider::Image => "image",
            };
            format!("{} ({provider})", gpu.cuda)
        }),
        requirements,
        constraints: spec.constraints.clone(),
        pip: spec.packages.pip.clone(),
        pip_no_deps: spec.packages.pip_no_deps.clone(),
        apt: spec.packages.apt.clone(),
    }
}

/// Whether a lock made from `other` may give a lock of `inputs` its shared layers (the
/// system packages, the venv and pip, TensorFlow): they are made from the same inputs.
pub fn shares_layers(inputs: &Inputs, other: &Inputs) -> bool {
    let system = |inputs: &Inputs| -> Vec<String> {
        inputs
            .apt
            .iter()
            .filter(|package| is_system_apt(package))
            .cloned()
            .collect()
    };
    inputs.base == other.base
        && inputs.tensorflow == other.tensorflow
        && inputs.python == other.python
        && inputs.cuda == other.cuda
        && inputs.requirements == other.requirements
        && inputs.constraints == other.constraints
        && system(inputs) == system(other)
}

/// What a spec of `inputs` without a lock of its own takes from `locked`: `None` when
/// they do not share the layers up to TensorFlow's; the variant's apt layer too when the
/// spec asks for the same apt packages, and its pip layer when also for the same pip ones.
pub fn inherit(inputs: &Inputs, locked: Locked) -> Option<Inherited> {
    if !shares_layers(inputs, &locked.file.inputs) {
        return None;
    }
    let same = |now: &[String], then: &[String]| {
        let mut now = now.to_vec();
        let mut then = then.to_vec();
        now.sort();
        now.dedup();
        then.sort();
        then.dedup();
        now == then
    };
    let variant = same(&inputs.apt, &locked.file.inputs.apt);
    let packages = variant
        && same(&inputs.pip, &locked.file.inputs.pip)
        && same(&inputs.pip_no_deps, &locked.file.inputs.pip_no_deps);
    Some(Inherited {
        locked,
        variant,
        packages,
    })
}

/// Whether the shared first layer installs `package` (else the variant's layer does).
pub fn is_system_apt(package: &str) -> bool {
    REQUIRED_APT.contains(&package)
}

/// Every way `spec` differs from what `lock` was made from; empty when they agree.
pub fn differences(spec: &ResolvedSpec, lock: &LockFile) -> Vec<String> {
    let mut found = Vec::new();
    if lock.spec != spec.name {
        found.push(format!(
            "the lock is for spec `{}`, not `{}`",
            lock.spec, spec.name
        ));
    }
    let now = inputs_of(spec);
    let then = &lock.inputs;
    let mut field = |what: &str, now: &str, then: &str| {
        if now != then {
            found.push(format!(
                "the spec's {what} is `{now}`; the lock was made for `{then}`"
            ));
        }
    };
    field("base image", &now.base, &then.base);
    field("TensorFlow", &now.tensorflow, &then.tensorflow);
    field("Python", &now.python, &then.python);
    field(
        "CUDA",
        now.cuda.as_deref().unwrap_or("none (CPU)"),
        then.cuda.as_deref().unwrap_or("none (CPU)"),
    );
    list(
        &mut found,
        "TensorFlow requirement",
        &now.requirements,
        &then.requirements,
    );
    list(&mut found, "pin", &now.constraints, &then.constraints);
    list(&mut found, "pip package", &now.pip, &then.pip);
    list(
        &mut found,
        "pip package without dependencies",
        &now.pip_no_deps,
        &then.pip_no_deps,
    );
    list(&mut found, "apt package", &now.apt, &then.apt);
    found
}

/// Items added to or dropped from a list, one sentence each.
fn list(found: &mut Vec<String>, what: &str, now: &[String], then: &[String]) {
    for item in now.iter().filter(|item| !then.contains(item)) {
        found.push(format!(
            "the spec adds {what} `{item}`; the lock was made without it"
        ));
    }
    for item in then.iter().filter(|item| !now.contains(item)) {
        found.push(format!(
            "the spec no longer has {what} `{item}`; the lock was made with it"
        ));
    }
}
