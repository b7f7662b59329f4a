//! Kubernetes manifests a test exported, checked by `kubernetes-validate --strict`.

use std::path::Path;

/// Asserts that `kubernetes-validate --strict` accepts every document of `manifests`.
pub fn assert_valid(manifests: &Path) {
    let validated = std::process::Command::new("kubernetes-validate")
        .arg("--strict")
        .arg(manifests)
        .output()
        .expect("kubernetes-validate is installed (scripts/setup-machine)");
    assert!(
        validated.status.success(),
        "{}{}",
        String::from_utf8_lossy(&validated.stdout),
        String::from_utf8_lossy(&validated.stderr)
    );
}
