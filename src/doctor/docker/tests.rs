use super::*;

#[test]
fn docker_down_is_one_failing_check_with_the_fix() {
    let checks = docker_checks(&Err((
        "cannot reach the Docker daemon".into(),
        "start it".into(),
    )));
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].verdict, Verdict::Fail);
    assert_eq!(checks[0].fix.as_deref(), Some("start it"));
}
