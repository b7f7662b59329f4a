use super::*;

#[test]
fn urls_refuse_credentials_and_odd_characters() {
    assert_eq!(
        check_url("http://m.example/debian/", "--apt-mirror").unwrap(),
        "http://m.example/debian"
    );
    assert!(check_url("ftp://m", "--apt-mirror").is_err());
    let error = check_url("https://user:secret@nexus/simple", "--pip-index-url").unwrap_err();
    assert!(error.message.contains("credentials"), "{}", error.message);
    assert!(check_url("http://m/de|bian", "--apt-mirror").is_err());
    assert!(check_url("http://m/$(x)", "--apt-mirror").is_err());
}

#[test]
fn proxies_come_from_the_environment_before_the_config_and_in_both_spellings() {
    let config = Proxy {
        http: Some("http://config:3128".into()),
        https: None,
        no: Some("localhost".into()),
    };
    let env = |name: &str| match name {
        "https_proxy" => Some("http://user:pw@env:3128".to_string()),
        "NO_PROXY" => Some("*".to_string()),
        _ => None,
    };
    let args = proxy_build_args(&config, env);
    assert_eq!(args["HTTP_PROXY"], "http://config:3128");
    assert_eq!(args["http_proxy"], "http://config:3128");
    assert_eq!(args["HTTPS_PROXY"], "http://user:pw@env:3128");
    assert_eq!(args["no_proxy"], "*");
    assert!(!args.contains_key("ALL_PROXY"));
}
