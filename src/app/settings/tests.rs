use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::host::fake::FakeHost;

const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn settings(variables: &[(&str, &str)]) -> Settings {
    let environment: BTreeMap<String, String> = variables
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    Settings::new(
        None,
        None,
        environment,
        Ok(PathBuf::from("/work")),
        vec!["tfimg".into()],
    )
    .unwrap()
}

#[test]
fn host_and_context_flags_together_are_refused_on_capture() {
    let error = Settings::new(
        Some("tcp://a:2375".into()),
        Some("b".into()),
        BTreeMap::new(),
        Ok(PathBuf::from("/")),
        Vec::new(),
    )
    .unwrap_err();
    assert!(
        error.message.contains("`--host` and `--context`"),
        "{error:?}"
    );
}

#[test]
fn an_empty_variable_counts_as_unset_but_is_passed_on_as_it_is() {
    let settings = settings(&[("DOCKER_HOST", ""), ("KEY", "")]);
    assert_eq!(settings.variable("DOCKER_HOST"), None);
    assert_eq!(settings.environment("KEY").as_deref(), Some(""));
    assert_eq!(settings.environment("MISSING"), None);
}

#[test]
fn an_unreadable_current_folder_is_bad_input_only_when_asked_for() {
    let settings = Settings::new(
        None,
        None,
        BTreeMap::new(),
        Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        Vec::new(),
    )
    .unwrap();
    let error = settings.current_dir().unwrap_err();
    assert!(
        error.message.starts_with("cannot read the current folder"),
        "{error:?}"
    );
}

#[test]
fn the_config_file_is_found_through_the_variables_and_a_missing_one_is_empty() {
    let host = FakeHost::new();
    let settings = settings(&[("HOME", "/home/u")]);
    assert_eq!(settings.config(&host).unwrap(), network::Config::default());
    host.files.borrow_mut().insert(
        PathBuf::from("/home/u/.config/tfimg/config.yaml"),
        b"apt_mirror: http://m.example/debian\n".to_vec(),
    );
    let config = settings.config(&host).unwrap();
    assert_eq!(
        config.apt_mirror.as_deref(),
        Some("http://m.example/debian")
    );
    // TFIMG_CONFIG wins over HOME; a bad file names its place.
    let settings = settings_with_config("/etc/tfimg.yaml", &host, "proxy: {htp: x}\n");
    let error = settings.config(&host).unwrap_err();
    assert!(
        error.message.starts_with("`/etc/tfimg.yaml`:1:"),
        "{error:?}"
    );
    // A file TFIMG_CONFIG names must be there: a typo is said, not read as no settings.
    let named = self::settings(&[
        ("HOME", "/home/u"),
        (labels::CONFIG_VARIABLE, "/etc/tfimg.yml"),
    ]);
    let error = named.config(&host).unwrap_err();
    assert_eq!(
        error.message,
        "TFIMG_CONFIG names `/etc/tfimg.yml`, which does not exist"
    );
}

fn settings_with_config(path: &str, host: &FakeHost, text: &str) -> Settings {
    host.files
        .borrow_mut()
        .insert(PathBuf::from(path), text.as_bytes().to_vec());
    settings(&[("HOME", "/home/u"), (labels::CONFIG_VARIABLE, path)])
}

#[test]
fn the_network_takes_the_flags_over_the_config_and_reads_the_ca_through_the_host() {
    let host = FakeHost::new();
    host.files
        .borrow_mut()
        .insert(PathBuf::from("/ca.pem"), CA.as_bytes().to_vec());
    let settings = settings_with_config(
        "/c.yaml",
        &host,
        "ca_cert: /ca.pem\napt_mirror: http://config/debian\nproxy: {http: http://p:3128}\n",
    );
    let choices = NetworkChoices {
        apt_mirror: Some("http://flag/debian/".into()),
        ..NetworkChoices::default()
    };
    let network = settings.network(&choices, &host).unwrap();
    assert_eq!(
        network.render.apt_mirror.as_deref(),
        Some("http://flag/debian")
    );
    assert_eq!(
        network.render.ca_certificates.as_deref(),
        Some(CA.as_bytes())
    );
    assert_eq!(network.proxy_build_args["http_proxy"], "http://p:3128");
    // A CA file that is missing is named with its flag.
    let choices = NetworkChoices {
        ca_cert: Some(Path::new("/missing.pem").to_path_buf()),
        ..NetworkChoices::default()
    };
    let error = settings.network(&choices, &host).unwrap_err();
    assert!(
        error.message.contains("`--ca-cert` file `/missing.pem`"),
        "{error:?}"
    );
}
