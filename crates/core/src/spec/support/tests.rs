use super::*;

fn judged(name: &str, today: &str) -> SpecSupport {
    let catalog = Catalog::builtin("/".into());
    let resolved = super::super::resolve(&catalog, name).unwrap();
    spec_support(&catalog, &resolved, Date::parse(today).unwrap())
}

#[test]
fn each_2_9_built_in_moves_to_its_current_line_twin() {
    for variant in [
        "cpu-headless",
        "cpu-jupyter",
        "cpu-ssh",
        "gpu-headless",
        "gpu-jupyter",
        "gpu-ssh",
    ] {
        let support = judged(variant, "2026-11-22");
        assert_eq!(support.past().count(), 3, "{variant}: {support:#?}");
        assert_eq!(
            support.move_to_spec,
            Some(format!("tf218-{variant}")),
            "{variant}"
        );
        let current = judged(&format!("tf218-{variant}"), "2026-11-22");
        assert!(!current.is_past(), "{current:#?}");
        assert_eq!(current.move_to_spec, None);
    }
}

#[test]
fn advice_names_the_end_the_target_and_the_spec() {
    let support = judged("gpu-jupyter", "2026-11-22");
    let lines: Vec<String> = support.past().map(|part| support.advice(part)).collect();
    assert_eq!(
            lines,
            [
                "Debian 11 (bullseye): long-term support ended 2026-08-31 → move to Debian 12 (bookworm): `tf218-gpu-jupyter`",
                "Python 3.9: end of life 2025-10-31; Debian 11 (bullseye)'s python3 got fixes until 2026-08-31 → move to Python 3.11 to 3.12: `tf218-gpu-jupyter`",
                "TensorFlow 2.9: no more releases: the last is 2.9.3 → move to TensorFlow 2.18: `tf218-gpu-jupyter`",
            ]
        );
}

#[test]
fn before_debian_11_and_python_3_9_ended_only_tensorflow_is_flagged() {
    let support = judged("cpu-ssh", "2025-06-01");
    let past: Vec<&str> = support.past().map(|part| part.name.as_str()).collect();
    assert_eq!(past, ["TensorFlow 2.9"]);
    assert_eq!(support.move_to_spec.as_deref(), Some("tf218-cpu-ssh"));
}
