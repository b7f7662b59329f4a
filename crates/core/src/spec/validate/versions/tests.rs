use super::*;

#[test]
fn python_release_hints() {
    assert_eq!(releases_for_python("3.11").as_deref(), Some("2.12 to 2.18"));
    assert_eq!(releases_for_python("3.12").as_deref(), Some("2.16 to 2.18"));
    assert_eq!(releases_for_python("3.13"), None);
    assert_eq!(ubuntu_for_python("3.10").as_deref(), Some("ubuntu:22.04"));
}
