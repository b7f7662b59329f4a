use super::*;

fn parse(text: &str) -> SpecFile {
    serde_yaml::from_str(text).unwrap()
}

#[test]
fn merge_scalars_override_lists_append_maps_merge() {
    let parent = parse(
        "name: base\nabstract: true\ntensorflow: \"2.9.3\"\ngpu: true\n\
             packages: {apt: [python3, tini], pip: [numpy]}\n\
             env: {A: \"1\", B: \"2\"}\nports: {jupyter: 8888}\n",
    );
    let child = parse(
        "name: child\nextends: base\ntensorflow: \"2.10\"\n\
             packages: {apt: [tini, git]}\nenv: {B: three}\nports: {tensorboard: 6006}\n",
    );
    let merged = parent.merged_with(&child);
    assert_eq!(merged.name.as_deref(), Some("child"));
    assert_eq!(merged.is_abstract, None);
    assert_eq!(merged.tensorflow, Some(VersionText("2.10".into())));
    assert_eq!(merged.gpu, Some(true));
    let packages = merged.packages.unwrap();
    assert_eq!(packages.apt, ["python3", "tini", "git"]);
    assert_eq!(packages.pip, ["numpy"]);
    let env = merged.env.unwrap();
    assert_eq!(env["A"], EnvValue("1".into()));
    assert_eq!(env["B"], EnvValue("three".into()));
    assert_eq!(merged.ports.unwrap().len(), 2);
}

#[test]
fn env_accepts_scalars_and_versions_refuse_numbers() {
    let spec = parse("env: {A: true, B: 2, C: x}\n");
    let env = spec.env.unwrap();
    assert_eq!(env["A"].0, "true");
    assert_eq!(env["B"].0, "2");
    for unquoted in ["2.10", "2", "99999999999999999999", "-99999999999999999999"] {
        let error =
            serde_yaml::from_str::<SpecFile>(&format!("tensorflow: {unquoted}\n")).unwrap_err();
        assert!(error.to_string().contains(UNQUOTED_VERSION), "{error}");
    }
}

#[test]
fn ports_take_any_number_for_the_range_check() {
    let ports = |text: &str| parse(&format!("ports: {{a: {text}}}\n")).ports.unwrap()["a"];
    assert_eq!(ports("8888").port(), Some(8888));
    assert_eq!(ports("8888.0").port(), Some(8888));
    for out in [
        "0",
        "-1",
        "65536",
        "1e10",
        "8888.5",
        "99999999999999999999",
        ".nan",
    ] {
        assert_eq!(ports(out).port(), None, "{out}");
    }
    assert_eq!(
        ports("99999999999999999999").to_string(),
        "99999999999999999999"
    );
    let error = serde_yaml::from_str::<SpecFile>("ports: {a: x}\n").unwrap_err();
    assert!(error
        .to_string()
        .contains("expected a port number from 1 to 65535"));
}
