//! Unit tests of `gateway`: the checks of `gateway:` and the rendered nginx.conf.
use std::path::PathBuf;

use super::nginx::{self, Backend};
use super::*;
use crate::input::source::Location;
use crate::team::{parse, Team};

fn team(text: &str) -> Result<Team, String> {
    parse(text, "team.yaml", PathBuf::from("/lab")).map_err(|error| error.to_string())
}

const MEMBERS: &str = "members:\n  - name: alice\n  - name: bob\n    spec: cpu-ssh\n";

fn with_gateway(gateway: &str) -> Result<Team, String> {
    team(&format!(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\n{MEMBERS}gateway:\n{gateway}"
    ))
}

#[test]
fn defaults_are_a_self_signed_gateway_on_loopback_routing_by_host_under_localhost() {
    let parsed = with_gateway("  public: false\n").unwrap();
    assert_eq!(
        parsed.gateway,
        Some(Gateway {
            port: DEFAULT_PORT,
            public: false,
            tls: Tls::SelfSigned,
            route: Route::Host,
            domain: Some("lab.localhost".to_string()),
            default_domain: Some(Location {
                file: "team.yaml".to_string(),
                line: 8,
                column: 1,
            }),
        })
    );
    let gateway = parsed.gateway.unwrap();
    assert_eq!(gateway.base_url("alice"), "/");
    assert_eq!(
        gateway.url("alice", "jupyter"),
        "https://alice.lab.localhost:8443/lab"
    );
    assert_eq!(
        gateway.url("alice", "tensorboard"),
        "https://alice.lab.localhost:8443/tensorboard/"
    );
    assert_eq!(gateway.address(), "https://lab.localhost:8443/");
    assert_eq!(
        nginx::certificate_names(&gateway),
        ["localhost", "127.0.0.1", "lab.localhost", "*.lab.localhost"]
    );
    let no_gateway = team(&format!(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\n{MEMBERS}"
    ));
    assert_eq!(no_gateway.unwrap().gateway, None);
}

#[test]
fn path_routing_is_one_origin_for_the_team_when_asked_for() {
    let gateway = with_gateway("  route: path\n").unwrap().gateway.unwrap();
    assert_eq!(
        (gateway.route, gateway.domain.as_deref()),
        (Route::Path, None)
    );
    assert_eq!(gateway.default_domain, None);
    assert_eq!(gateway.base_url("alice"), "/alice/");
    assert_eq!(
        gateway.url("alice", "jupyter"),
        "https://127.0.0.1:8443/alice/lab"
    );
    assert_eq!(
        gateway.url("alice", "tensorboard"),
        "https://127.0.0.1:8443/alice/tensorboard/"
    );
    assert_eq!(gateway.address(), "https://127.0.0.1:8443/");
    assert!(gateway.check_exported("compose").is_ok());
}

/// `compose` and `k8s` take host routing only with a domain written in the file: the
/// error points at `route:` when it is written, else at `gateway`.
#[test]
fn exports_need_a_written_domain_to_route_by_host() {
    let cases = [
        ("  port: 9443\n", Some("`team.yaml`:8:1: `tfimg compose` needs the gateway's `domain`: members are reached by host name (`route: host`, the default)")),
        ("  route: host\n", Some("`team.yaml`:9:10: `tfimg compose` needs the gateway's `domain`")),
        ("  route: host\n  domain: lab.example\n", None),
        ("  domain: lab.example\n", None),
        ("  route: path\n", None),
    ];
    for (gateway, expected) in cases {
        let parsed = with_gateway(gateway).unwrap().gateway.unwrap();
        match (parsed.check_exported("compose"), expected) {
            (Ok(()), None) => {}
            (Err(error), Some(expected)) => {
                let error_hint = error.hint.clone();
                let error = error.to_string();
                assert!(error.starts_with(expected), "{gateway:?}: {error}");
                assert!(
                    error_hint.starts_with("add `domain: lab.example`"),
                    "{error_hint}"
                );
            }
            (outcome, _) => panic!("{gateway:?}: {outcome:?}"),
        }
    }
}

#[test]
fn host_routing_with_own_certificate() {
    let team = with_gateway(
        "  port: 443\n  public: true\n  route: host\n  domain: lab.example\n  tls: {cert: tls/c.pem, key: /keys/k.pem}\n",
    )
    .unwrap();
    let gateway = team.gateway.unwrap();
    assert_eq!(
        gateway.tls,
        Tls::Files {
            cert: PathBuf::from("/lab/tls/c.pem"),
            key: PathBuf::from("/keys/k.pem"),
        }
    );
    assert_eq!(gateway.default_domain, None);
    assert!(gateway.check_exported("k8s").is_ok());
    assert_eq!(gateway.base_url("alice"), "/");
    assert_eq!(
        gateway.url("alice", "jupyter"),
        "https://alice.lab.example:443/lab"
    );
}

#[test]
fn bad_gateways_are_refused_at_their_place() {
    let cases = [
        ("  route: subdomain\n", "`team.yaml`:9:10: gateway route `subdomain` is not `path` or `host`"),
        ("  public: true\n", "`team.yaml`:9:11: a public gateway needs a `domain`: members are reached by host name (`route: host`, the default)"),
        ("  public: true\n  route: host\n", "`team.yaml`:9:11: a public gateway needs a `domain`"),
        ("  domain: Lab.Example\n", "`team.yaml`:9:11: gateway domain `Lab.Example` is not a host name"),
        ("  domain: a..b\n", "`team.yaml`:9:11: gateway domain `a..b` is not a host name"),
        ("  port: 0\n", "`team.yaml`:9:9: gateway port 0 is out of range"),
        ("  tls: none\n", "`team.yaml`:9:8: gateway `tls: none` is not `self-signed`"),
        ("  tls: {cert: ' ', key: k.pem}\n", "`team.yaml`:9:15: gateway `tls.cert` is not a file path"),
        ("  colour: red\n", "`team.yaml`:9:3: gateway: unknown field `colour`, expected one of `port`, `public`, `tls`, `route`, `domain`"),
    ];
    for (gateway, expected) in cases {
        let error = with_gateway(gateway).unwrap_err();
        assert!(
            error.starts_with(expected),
            "{gateway:?}: {error}\nexpected: {expected}"
        );
    }
}

#[test]
fn members_publish_no_routed_port_and_never_the_gateway_port() {
    let text = "team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: alice\n    ports: {jupyter: 8890}\ngateway: {port: 9000}\n";
    let error = team(text).unwrap_err();
    assert!(
        error.starts_with("`team.yaml`:6:5: member `alice`: `jupyter` is reached through the gateway, so it has no host port of its own"),
        "{error}"
    );
    let text = "team: lab\ndefaults:\n  spec: cpu-ssh\nmembers:\n  - name: carol\n    ports: {ssh: 9000}\ngateway: {port: 9000}\n";
    let error = team(text).unwrap_err();
    assert!(
        error.starts_with(
            "`team.yaml`:6:5: host port 9000 is given to both the gateway and `carol` (ssh)"
        ),
        "{error}"
    );
}

fn backends() -> Vec<Backend> {
    vec![
        Backend {
            member: "alice".into(),
            container: "lab-alice".into(),
            jupyter: Some(8888),
            tensorboard: Some(6006),
        },
        Backend {
            member: "bob".into(),
            container: "lab-bob".into(),
            jupyter: Some(8888),
            tensorboard: None,
        },
    ]
}

#[test]
fn path_routing_config() {
    let gateway = with_gateway("  route: path\n").unwrap().gateway.unwrap();
    let config = nginx::config("lab", &gateway, &backends());
    assert_eq!(config, nginx::config("lab", &gateway, &backends()));
    insta::assert_snapshot!("gateway_path_routing", config);
}

#[test]
fn host_routing_config() {
    let gateway = with_gateway("  route: host\n  domain: lab.example\n")
        .unwrap()
        .gateway
        .unwrap();
    insta::assert_snapshot!(
        "gateway_host_routing",
        nginx::config("lab", &gateway, &backends())
    );
}

/// What the configuration must hold for the member → member boundary, whichever routing:
/// checked here by name, and in full in the snapshots.
#[test]
fn the_config_holds_the_member_boundary() {
    for gateway in [
        "  route: path\n",
        "  route: host\n  domain: lab.example\n",
        "  port: 9443\n",
    ] {
        let gateway = with_gateway(gateway).unwrap().gateway.unwrap();
        let config = nginx::config("lab", &gateway, &backends());
        let prefix = gateway.base_url("alice");
        for line in [
            // Pages are framed by their own origin only; other origins' requests refused.
            "add_header Content-Security-Policy \"frame-ancestors 'self'\" always;".to_string(),
            "if ($tfimg_foreign) { return 403; }".to_string(),
            // Bodies: asked about first, streamed, bounded.
            "client_max_body_size 512m;".to_string(),
            "proxy_request_buffering off;".to_string(),
            "auth_request /tfimg-body-auth-0;".to_string(),
            "auth_request /tfimg-body-auth-1;".to_string(),
            "if ($tfimg_bodyless) { return 204; }".to_string(),
            format!("location = {prefix}login {{"),
            "client_max_body_size 16k;".to_string(),
            // TensorBoard: every request asked about.
            "auth_request /tfimg-auth-0;".to_string(),
            format!("proxy_pass http://$status_0{prefix}api/me;"),
            // No token in any log.
            "error_log stderr crit;".to_string(),
            "access_log /dev/stderr tfimg if=$tfimg_failed;".to_string(),
        ] {
            assert!(config.contains(&line), "{line}\n{config}");
        }
        let log_format = config
            .lines()
            .find(|line| line.trim_start().starts_with("log_format"))
            .unwrap();
        for leak in [
            "$request ",
            "$request_uri",
            "$args",
            "$query_string",
            "$http_referer",
            "$arg_",
        ] {
            assert!(!log_format.contains(leak), "{log_format}");
        }
        assert!(!config.contains("client_max_body_size 0"), "{config}");
        assert!(!config.contains("access_log off"), "{config}");
        // Cookies: every proxied request (the auth checks too) carries `$tfimg_cookies`.
        let proxied = config.matches("proxy_pass ").count();
        let own_headers = config.matches("proxy_set_header Authorization").count();
        assert!(proxied > own_headers, "{config}");
        assert_eq!(
            config
                .matches("proxy_set_header Cookie $tfimg_cookies;")
                .count(),
            1 + own_headers,
            "{config}"
        );
        // Routing by host, only Jupyter's own `__Host-` cookies; by path, all of them.
        let own_cookies = [
            format!(
                "(?<tfimg_login>{}=[^;]*)",
                crate::labels::JUPYTER_LOGIN_COOKIE
            ),
            format!(
                "(?<tfimg_xsrf>{}=[^;]*)",
                crate::labels::JUPYTER_XSRF_COOKIE
            ),
        ];
        let passes_all =
            config.contains("map $http_cookie $tfimg_cookies {\n        default $http_cookie;");
        match gateway.route {
            Route::Host => {
                assert!(!passes_all, "{config}");
                for cookie in &own_cookies {
                    assert!(config.contains(cookie.as_str()), "{cookie}\n{config}");
                }
            }
            Route::Path => assert!(passes_all, "{config}"),
        }
    }
}
