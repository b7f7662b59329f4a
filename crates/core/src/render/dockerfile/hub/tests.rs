use super::*;
use crate::render::files::CA_CERTIFICATES;

fn restricted() -> NetworkOptions {
    NetworkOptions {
        ca_certificates: Some(b"-----BEGIN CERTIFICATE-----\n".to_vec()),
        apt_mirror: Some("https://mirror.example/debian".to_string()),
        pip_index_url: Some("http://pypi.lab.example/simple".to_string()),
    }
}

#[test]
fn the_hub_image_pins_its_servers_and_uses_the_builds_mirror_index_and_ca() {
    let plain = hub(&NetworkOptions::default());
    assert_eq!(plain.files.keys().collect::<Vec<_>>(), [CONFIG, PASSWD]);
    insta::assert_snapshot!("hub_dockerfile", plain.dockerfile);
    let restricted = hub(&restricted());
    assert_eq!(
        restricted.files.keys().collect::<Vec<_>>(),
        [CONFIG, PASSWD, CA_CERTIFICATES]
    );
    insta::assert_snapshot!("hub_dockerfile_mirror_ca", restricted.dockerfile);
    // The network's settings are for the build only: no ENV keeps them.
    assert!(!restricted
        .dockerfile
        .lines()
        .any(|line| line.starts_with("ENV") && line.contains("PIP_")));
}

#[test]
fn the_hub_configuration_names_the_folders_it_is_given() {
    let rendered = hub(&NetworkOptions::default());
    let config = String::from_utf8(rendered.files[CONFIG].contents.clone()).unwrap();
    let passwd = String::from_utf8(rendered.files[PASSWD].contents.clone()).unwrap();
    for text in [&config, &passwd] {
        for mark in ["@FOLDER@", "@STATE@", "@PASSWORD@", "@MIN_PASSWORD@"] {
            assert!(!text.contains(mark), "{mark} left in:\n{text}");
        }
    }
    assert!(config.contains("open(\"/etc/tfimg-hub/team.json\""));
    assert!(config.contains("sqlite:////srv/jupyterhub/jupyterhub.sqlite"));
    assert!(config.contains("minimum_password_length = 8"));
    assert!(passwd.contains("path = \"/etc/tfimg-hub/password\""));
}

#[test]
fn a_members_hub_image_adds_the_single_user_server_to_her_spec_image() {
    let plain = member(
        "tfimg/cpu-jupyter:2.9.3-abc",
        "tf",
        &NetworkOptions::default(),
    );
    assert!(plain.files.is_empty());
    insta::assert_snapshot!("hub_member_dockerfile", plain.dockerfile);
    let restricted = member("tfimg/cpu-jupyter:2.9.3-abc", "tf", &restricted());
    insta::assert_snapshot!("hub_member_dockerfile_mirror_ca", restricted.dockerfile);
}
