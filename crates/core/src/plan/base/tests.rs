use super::*;

#[test]
fn references_map_to_suites() {
    let target = BootstrapTarget::parse("debian:bullseye-slim").unwrap();
    assert_eq!(
        (target.distribution, target.suite, target.slim),
        ("debian", "bullseye", true)
    );
    assert_eq!(
        BootstrapTarget::parse("debian:11").unwrap().suite,
        "bullseye"
    );
    assert_eq!(
        BootstrapTarget::parse("debian:12.5-slim").unwrap().suite,
        "bookworm"
    );
    assert_eq!(
        BootstrapTarget::parse("docker.io/library/debian:bookworm")
            .unwrap()
            .suite,
        "bookworm"
    );
    let ubuntu = BootstrapTarget::parse("ubuntu:22.04").unwrap();
    assert_eq!(
        (ubuntu.suite, ubuntu.default_mirror),
        ("jammy", "http://archive.ubuntu.com/ubuntu")
    );
    assert_eq!(
        BootstrapTarget::parse("lab/debian:11").unwrap().suite,
        "bullseye"
    );
    assert!(BootstrapTarget::parse("alpine:3.19").is_err());
    assert!(BootstrapTarget::parse("debian").is_err());
    assert!(BootstrapTarget::parse("debian:sid").is_err());
}
