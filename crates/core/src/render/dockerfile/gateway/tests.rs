use super::*;
use crate::render::files::CA_CERTIFICATES;

#[test]
fn the_gateway_image_uses_the_builds_mirror_and_ca() {
    let plain = gateway(&NetworkOptions::default());
    assert!(plain.files.is_empty());
    insta::assert_snapshot!("gateway_dockerfile", plain.dockerfile);
    let restricted = gateway(&NetworkOptions {
        ca_certificates: Some(b"-----BEGIN CERTIFICATE-----\n".to_vec()),
        apt_mirror: Some("https://mirror.example/debian".to_string()),
        pip_index_url: None,
    });
    assert_eq!(
        restricted.files.keys().collect::<Vec<_>>(),
        [CA_CERTIFICATES]
    );
    insta::assert_snapshot!("gateway_dockerfile_mirror_ca", restricted.dockerfile);
}
