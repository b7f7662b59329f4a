use super::*;
use crate::plan::mounts::MountRequest;
use crate::plan::{launch, testing, Chosen, LaunchRequest};
use crate::spec::Service;

fn plan() -> LaunchPlan {
    let mut request = LaunchRequest {
        command: vec!["sh".into(), "-c".into(), "echo $HOME ${USER}".into()],
        env: vec![
            ("NOTE".into(), "on".into()),
            ("YES".into(), "no".into()),
            ("PRICE".into(), "$5".into()),
        ],
        mounts: vec![MountRequest {
            text: "/lab/data$x:/tf/$dollar:ro".into(),
            source: "/lab/data$x".into(),
            target: Some("/tf/$dollar".into()),
            read_only: true,
        }],
        extra_labels: BTreeMap::from([(labels::MEMBER.into(), "a$b".into())]),
        ..testing::request()
    };
    request.target.image = "tfimg/cpu-headless:2.9.3-0123456789ab".into();
    request.target.spec_name = "cpu-headless".into();
    request.target.service = Service::None;
    let chosen = Chosen {
        name: "lab-alice".into(),
        ports: Vec::new(),
        jupyter_token: None,
        ..testing::chosen()
    };
    launch(&request, &chosen)
}

#[test]
fn every_dollar_is_doubled_but_the_uid_defaults_and_yaml_words_are_quoted() {
    let output = compose(
        "lab",
        "team.yaml",
        &[("alice".into(), plan())],
        Path::new("/lab"),
    );
    let file: Value = serde_yaml::from_str(&output.compose).unwrap();
    let service = &file["services"]["alice"];
    assert_eq!(
        service["command"],
        serde_yaml::from_str::<Value>("[sh, -c, 'echo $$HOME $${USER}']").unwrap()
    );
    assert_eq!(
        service["volumes"][0],
        Value::from("./data$$x:/tf/$$dollar:ro")
    );
    assert_eq!(service["labels"][labels::MEMBER], Value::from("a$$b"));
    assert_eq!(service["environment"]["PRICE"], Value::from("$$5"));
    assert_eq!(
        service["environment"][labels::UID_VARIABLE],
        Value::from(format!("${{{}:-1234}}", labels::UID_VARIABLE))
    );
    assert_eq!(
        service["environment"][labels::GID_VARIABLE],
        Value::from(format!("${{{}:-2345}}", labels::GID_VARIABLE))
    );
    // YAML 1.1 readers (docker-compose's PyYAML) would take these for booleans.
    assert!(
        output.compose.contains("      NOTE: \"on\"\n"),
        "{}",
        output.compose
    );
    assert!(
        output.compose.contains("      \"YES\": \"no\"\n"),
        "{}",
        output.compose
    );
    assert!(output.compose.contains("version: \"3.8\"\n"));
}

#[test]
fn a_model_server_is_healthy_once_its_model_is_available() {
    let mut serving = plan();
    serving.command.clear();
    serving
        .labels
        .insert(labels::SERVICE.into(), "serving".into());
    serving.labels.insert(labels::MODEL.into(), "fraud".into());
    let output = compose(
        "lab",
        "team.yaml",
        &[("fraud".into(), serving)],
        Path::new("/lab"),
    );
    let file: Value = serde_yaml::from_str(&output.compose).unwrap();
    let healthcheck = &file["services"]["fraud"]["healthcheck"];
    assert_eq!(healthcheck["test"][0], Value::from("CMD"));
    assert_eq!(healthcheck["test"][1], Value::from("python3"));
    let script = healthcheck["test"][3].as_str().unwrap();
    assert!(
        script.contains("'http://127.0.0.1:8501/v1/models/fraud'") && script.contains("AVAILABLE"),
        "{script}"
    );
    assert_eq!(healthcheck["start_period"], Value::from("180s"));
    // Without the model server (a command in its place) there is nothing to check.
    let output = compose(
        "lab",
        "team.yaml",
        &[("alice".into(), plan())],
        Path::new("/lab"),
    );
    assert!(
        !output.compose.contains("healthcheck"),
        "{}",
        output.compose
    );
}

/// Behind a gateway each member is alone with it on its own network, and the gateway
/// is on every member's: as `up` puts them.
#[test]
fn each_member_is_alone_with_the_gateway_on_a_network_of_its_own() {
    let member = |name: &str| {
        let mut plan = plan();
        plan.name = format!("lab-{name}");
        plan.network = Some(format!("tfimg-lab.{name}"));
        (name.to_string(), plan)
    };
    let mut gateway = plan();
    gateway.name = "lab-gateway".into();
    gateway.labels.insert(labels::GATEWAY.into(), "lab".into());
    let plans = [member("alice"), member("bob"), ("gateway".into(), gateway)];
    let output = compose("lab", "team.yaml", &plans, Path::new("/lab"));
    let file: Value = serde_yaml::from_str(&output.compose).unwrap();
    let expected: Value =
        serde_yaml::from_str("{tfimg-lab.alice: {aliases: [lab-alice]}}").unwrap();
    assert_eq!(file["services"]["alice"]["networks"], expected);
    let expected: Value = serde_yaml::from_str("{tfimg-lab.bob: {aliases: [lab-bob]}}").unwrap();
    assert_eq!(file["services"]["bob"]["networks"], expected);
    let expected: Value = serde_yaml::from_str("[tfimg-lab.alice, tfimg-lab.bob]").unwrap();
    assert_eq!(file["services"]["gateway"]["networks"], expected);
    let expected: Value = serde_yaml::from_str("{tfimg-lab.alice: {}, tfimg-lab.bob: {}}").unwrap();
    assert_eq!(file["networks"], expected);
}
