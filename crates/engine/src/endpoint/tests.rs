use super::*;

/// The contexts the table's lookups know: `gpu` (ssh), `lab` (tcp), `secure` (TLS),
/// `empty` (no docker endpoint), `broken` (unreadable), `odd` (a bad URL).
fn lookup(name: &str) -> ContextLookup {
    match name {
        "gpu" => ContextLookup::Host("ssh://me@gpu-box".to_string()),
        "lab" => ContextLookup::Host("tcp://lab:2375".to_string()),
        "secure" => ContextLookup::Tls,
        "empty" => ContextLookup::NoDockerEndpoint,
        "broken" => ContextLookup::Unreadable("`meta.json`: EOF".to_string()),
        "odd" => ContextLookup::Host("npipe:////./pipe/docker".to_string()),
        _ => ContextLookup::Missing,
    }
}

fn inputs<'a>(
    host_flag: Option<&'a str>,
    context_flag: Option<&'a str>,
    docker_host: Option<&'a str>,
    docker_context: Option<&'a str>,
    current_context: Option<&'a str>,
) -> EndpointInputs<'a> {
    EndpointInputs {
        host_flag,
        context_flag,
        docker_host,
        docker_context,
        current_context,
        config_file: "~/.docker/config.json",
    }
}

/// (flags and variables) → the URL chosen and what chose it, or the error's first line.
#[test]
fn the_endpoint_is_chosen_as_the_docker_cli_chooses_it() {
    let table: &[(EndpointInputs, &str)] = &[
        (inputs(None, None, None, None, None), "unix:///var/run/docker.sock by Default"),
        (inputs(None, None, Some(""), Some(""), Some("")), "unix:///var/run/docker.sock by Default"),
        (inputs(Some("ssh://h"), None, Some("tcp://x:1"), Some("lab"), Some("lab")), "ssh://h by HostFlag"),
        (inputs(None, Some("gpu"), Some("tcp://x:1"), Some("lab"), Some("lab")), "ssh://me@gpu-box by ContextFlag(\"gpu\")"),
        (inputs(None, None, Some("tcp://x:1"), Some("gpu"), Some("gpu")), "tcp://x:1 by DockerHost"),
        (inputs(None, None, None, Some("gpu"), Some("lab")), "ssh://me@gpu-box by DockerContext(\"gpu\")"),
        (inputs(None, None, None, None, Some("lab")), "tcp://lab:2375 by CurrentContext(\"lab\")"),
        // `default` is DOCKER_HOST or the local socket, never looked up.
        (inputs(None, Some("default"), Some("tcp://x:1"), None, None), "tcp://x:1 by DockerHost"),
        (inputs(None, None, None, Some("default"), Some("gpu")), "unix:///var/run/docker.sock by Default"),
        (inputs(None, None, None, None, Some("default")), "unix:///var/run/docker.sock by Default"),
        (inputs(Some("ssh://h"), Some("gpu"), None, None, None), "`--host` and `--context` were both given"),
        (inputs(None, Some("nope"), None, None, None), "no Docker context named `nope` (`--context`)"),
        (inputs(None, None, None, Some("nope"), None), "no Docker context named `nope` (`DOCKER_CONTEXT`)"),
        (inputs(None, None, None, None, Some("nope")), "the current Docker context `nope` (in `~/.docker/config.json`) does not exist"),
        (inputs(None, Some("secure"), None, None, None), "the Docker context `secure` (`--context`) uses TLS, which tfimg does not support yet"),
        (inputs(None, Some("empty"), None, None, None), "the Docker context `empty` (`--context`) has no Docker endpoint"),
        (inputs(None, None, None, Some("broken"), None), "the Docker context `broken` (`DOCKER_CONTEXT`) cannot be read: `meta.json`: EOF"),
        (inputs(None, Some("odd"), None, None, None), "the Docker context `odd` (`npipe:////./pipe/docker`): tfimg speaks unix://, tcp:// and ssh://"),
        // A missing context that would not be read is no error.
        (inputs(None, None, Some("unix:///s"), Some("nope"), Some("nope")), "unix:///s by DockerHost"),
    ];
    for (given, expected) in table {
        let found = match resolve(given, &mut lookup) {
            Ok(resolved) => format!("{} by {:?}", resolved.url, resolved.origin),
            Err(error) => error.message,
        };
        assert_eq!(&found, expected, "{given:?}");
    }
}

#[test]
fn urls_are_parsed_into_endpoints() {
    let ssh = |user: Option<&str>, host: &str, port: Option<u16>, socket: Option<&str>| {
        Endpoint::Ssh(SshTarget {
            user: user.map(str::to_string),
            host: host.to_string(),
            port,
            socket: socket.map(str::to_string),
        })
    };
    let table = [
        (
            "unix:///var/run/docker.sock",
            Endpoint::Unix("/var/run/docker.sock".into()),
        ),
        (
            "tcp://10.0.0.2:2375",
            Endpoint::Tcp("tcp://10.0.0.2:2375".into()),
        ),
        (
            "http://localhost:2375",
            Endpoint::Tcp("http://localhost:2375".into()),
        ),
        ("ssh://gpu-box", ssh(None, "gpu-box", None, None)),
        (
            "ssh://root@127.0.0.1:2222",
            ssh(Some("root"), "127.0.0.1", Some(2222), None),
        ),
        ("ssh://me@[::1]:22/", ssh(Some("me"), "::1", Some(22), None)),
        (
            "ssh://a%40b@h/run/user/1000/docker.sock",
            ssh(Some("a@b"), "h", None, Some("/run/user/1000/docker.sock")),
        ),
    ];
    for (text, expected) in table {
        assert_eq!(
            parse_endpoint(text, Source::HostFlag).unwrap(),
            expected,
            "{text}"
        );
    }
}

#[test]
fn bad_urls_name_who_gave_them_and_never_show_a_password() {
    let table = [
        (
            "ssh://me:hunter2@gpu",
            Source::HostFlag,
            "`--host ssh://me:***@gpu`: a password in the URL is not accepted",
        ),
        (
            "npipe:////./pipe/docker_engine",
            Source::DockerHost,
            "`DOCKER_HOST=npipe:////./pipe/docker_engine`: tfimg speaks unix://, tcp:// and ssh://",
        ),
        (
            "gpu-box",
            Source::HostFlag,
            "`--host gpu-box`: tfimg speaks unix://, tcp:// and ssh://",
        ),
        (
            "ssh://gpu?x=1",
            Source::HostFlag,
            "`--host ssh://gpu?x=1`: an ssh URL takes no query or fragment",
        ),
        (
            "ssh://gpu#top",
            Source::HostFlag,
            "`--host ssh://gpu#top`: an ssh URL takes no query or fragment",
        ),
        (
            "ssh://me%00x@gpu",
            Source::HostFlag,
            "`--host ssh://me%00x@gpu`: a user, host or path may not hold control characters (`%00`, `%0a`)",
        ),
        (
            "ssh://gpu/run/docker%0a.sock",
            Source::HostFlag,
            "`--host ssh://gpu/run/docker%0a.sock`: a user, host or path may not hold control characters (`%00`, `%0a`)",
        ),
        (
            "ssh://",
            Source::HostFlag,
            "`--host ssh://`: no host in the URL",
        ),
        (
            "ssh://gpu:99999",
            Source::DockerHost,
            "`DOCKER_HOST=ssh://gpu:99999`: not a URL (invalid port number)",
        ),
        (
            "ssh://-oProxyCommand=x",
            Source::HostFlag,
            "`--host ssh://-oProxyCommand=x`: a host or user may not start with `-`",
        ),
        (
            "unix://docker.sock",
            Source::HostFlag,
            "`--host unix://docker.sock`: the socket path must be absolute",
        ),
        (
            "tcp://",
            Source::Context("lab"),
            "the Docker context `lab` (`tcp://`): no host in the URL",
        ),
    ];
    for (text, source, expected) in table {
        let error = parse_endpoint(text, source).unwrap_err();
        assert_eq!(error.message, expected, "{text}");
        assert!(!error.hint.is_empty());
        assert!(!error.message.contains("hunter2") && !error.hint.contains("hunter2"));
    }
}

#[test]
fn a_context_s_folder_is_the_sha256_of_its_name() {
    // `docker context create gpu` writes contexts/meta/<this>/meta.json.
    assert_eq!(
        context_folder("gpu"),
        "e3c5ba51dba85ab0c990db5e309f4d7bdb282470fb02aee75b9022c1399e91c8"
    );
    assert_eq!(
        context_folder("default"),
        "37a8eec1ce19687d132fe29051dca629d164e2c4958ba141d5f4133a33f0688f"
    );
}

#[test]
fn meta_json_gives_the_docker_host_with_keys_in_any_case() {
    let meta = r#"{"Name":"gpu","Metadata":{},"Endpoints":{"docker":{"Host":"ssh://me@gpu","SkipTLSVerify":false}}}"#;
    assert_eq!(
        parse_context_meta(meta),
        ContextLookup::Host("ssh://me@gpu".into())
    );
    let lower = r#"{"endpoints":{"docker":{"host":"tcp://h:1"}}}"#;
    assert_eq!(
        parse_context_meta(lower),
        ContextLookup::Host("tcp://h:1".into())
    );
    let none = r#"{"Name":"k","Endpoints":{"kubernetes":{}}}"#;
    assert_eq!(parse_context_meta(none), ContextLookup::NoDockerEndpoint);
    assert!(matches!(
        parse_context_meta("{"),
        ContextLookup::Unreadable(_)
    ));
    assert_eq!(
        parse_current_context(r#"{"auths":{},"currentContext":"gpu"}"#),
        Ok(Some("gpu".into()))
    );
    assert_eq!(parse_current_context(r#"{"currentContext":""}"#), Ok(None));
    assert_eq!(parse_current_context("{}"), Ok(None));
    assert!(parse_current_context("not json").is_err());
}

#[test]
fn ssh_and_remote_tcp_endpoints_are_remote() {
    let parse = |text| parse_endpoint(text, Source::HostFlag).unwrap();
    assert!(parse("ssh://127.0.0.1").is_remote());
    assert!(parse("tcp://10.0.0.2:2375").is_remote());
    assert!(!parse("tcp://127.0.0.1:2375").is_remote());
    assert!(!parse("unix:///var/run/docker.sock").is_remote());
}
