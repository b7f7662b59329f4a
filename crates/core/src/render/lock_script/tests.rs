//! Unit tests of the resolution script: what it carries of the spec, and the layers a
//! shared lock installs instead of resolving them. What reads its result back is tested
//! in `lock::tests`.
use super::script;
use crate::lock::tests::{sample, spec};
use crate::render::NetworkOptions;

#[test]
fn the_resolution_script_carries_the_spec() {
    let spec = spec("packages: {pip: [requests], apt: [git]}\n");
    let script = script(&spec, &NetworkOptions::default(), None);
    assert!(script
        .contains("simulate ca-certificates python3 python3-venv tini > /tmp/tfimg-apt-system"));
    assert!(script.contains("simulate git > /tmp/tfimg-apt-variant"));
    assert!(script.contains("printf '%s\\n' tensorflow-cpu==2.9.3 'numpy<1.24' 'protobuf<3.20'"));
    assert!(script.contains("tensorflow-cpu==2.9.3 requests\n"));
    assert!(!script.contains("@NAME@") && !script.contains("@PACKAGES@"));
}

#[test]
fn a_shared_lock_installs_its_layers_instead_of_resolving_them() {
    let headless = sample(&spec(""));
    let jupyter = spec("packages: {pip: [rich], apt: [git]}\n");
    let script = script(&jupyter, &NetworkOptions::default(), Some(&headless));
    assert!(
        script.contains("apt-get install -y -q --no-install-recommends python3=3.9.2-3\n"),
        "{script}"
    );
    assert!(script.contains("printf '%s\\n' setuptools==75.3.0 tensorflow-cpu==2.9.3 > /tmp/tfimg-tensorflow-pins.txt"), "{script}");
    assert!(
        !script.contains("report /tmp/tfimg-tensorflow.json"),
        "{script}"
    );
}
