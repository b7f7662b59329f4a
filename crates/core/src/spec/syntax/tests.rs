use super::*;

#[test]
fn image_references() {
    for good in [
        "debian:bullseye-slim",
        "nvidia/cuda:11.2.2-cudnn8-runtime-ubuntu20.04",
        "localhost:5000/team/base:1",
        "registry.example.com/a/b",
        "ubuntu@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ] {
        assert!(valid_image_reference(good), "{good}");
    }
    for bad in [
        "",
        "Debian:11",
        "debian:",
        "a b",
        "debian:bull$eye",
        "-x",
        "x:y:z/w",
        "debian@x\nRUN touch /pwned\n#:0123456789abcdef0123456789abcdef",
    ] {
        assert!(!valid_image_reference(bad), "{bad}");
    }
}

#[test]
fn docker_names_start_with_a_letter_or_digit_and_keep_to_the_charset() {
    for good in ["a", "lab-1", "x_y.z", "0train"] {
        assert!(valid_docker_name(good), "{good}");
    }
    for bad in ["", "-a", ".a", "_a", "a b", "a/b", "a:b", "é"] {
        assert!(!valid_docker_name(bad), "{bad}");
    }
}

#[test]
fn requirements_and_apt_names() {
    assert_eq!(
        requirement_name("Pandas_Foo[x]>=2").as_deref(),
        Some("pandas-foo")
    );
    assert_eq!(
        requirement_name("jupyterlab>=4,<5").as_deref(),
        Some("jupyterlab")
    );
    assert_eq!(
        requirement_name("numpy; python_version<\"3.10\"").as_deref(),
        Some("numpy")
    );
    assert_eq!(requirement_name("x'; rm -rf /"), None);
    assert_eq!(requirement_name("--index-url=x"), None);
    assert_eq!(requirement_name("pkg @ https://x/y.whl"), None);
    assert!(valid_apt_package("git"));
    assert!(valid_apt_package("libstdc++6=10.2.1-6"));
    assert!(!valid_apt_package("git; curl x"));
    assert!(!valid_apt_package("Git"));
}

#[test]
fn references_split_at_the_tag_not_the_registry_port() {
    assert_eq!(
        split_reference("debian:bullseye-slim"),
        ("debian", "bullseye-slim")
    );
    assert_eq!(
        split_reference("localhost:5000/x"),
        ("localhost:5000/x", "latest")
    );
    assert_eq!(
        split_reference("localhost:5000/x:1"),
        ("localhost:5000/x", "1")
    );
    assert_eq!(split_reference("ubuntu"), ("ubuntu", "latest"));
}

#[test]
fn registry_mirror_rewrites_only_docker_hub() {
    assert_eq!(
        through_registry_mirror("debian:11", "m:5000"),
        "m:5000/library/debian:11"
    );
    assert_eq!(
        through_registry_mirror("nvidia/cuda:11.2.2-runtime", "m:5000"),
        "m:5000/nvidia/cuda:11.2.2-runtime"
    );
    assert_eq!(
        through_registry_mirror("docker.io/library/debian", "m"),
        "m/library/debian"
    );
    assert_eq!(
        through_registry_mirror("ghcr.io/a/b:1", "m"),
        "ghcr.io/a/b:1"
    );
    assert_eq!(
        through_registry_mirror("localhost:5000/x", "m"),
        "localhost:5000/x"
    );
}
