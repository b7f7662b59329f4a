//! Unit tests of `gateway`: the checks of `gateway:` and the rendered nginx.conf.
use std::path::PathBuf;

use super::nginx::{self, Backend};
use super::*;
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
fn defaults_are_a_self_signed_path_gateway_on_loopback() {
    let parsed = with_gateway("  public: false\n").unwrap();
    assert_eq!(
        parsed.gateway,
        Some(Gateway {
            port: DEFAULT_PORT,
            public: false,
            tls: Tls::SelfSigned,
            route: Route::Path,
            domain: None,
        })
    );
    let gateway = parsed.gateway.unwrap();
    assert_eq!(gateway.base_url("alice"), "/alice/");
    assert_eq!(
        gateway.url("alice", "jupyter"),
        "https://127.0.0.1:8443/alice/lab"
    );
    assert_eq!(
        gateway.url("alice", "tensorboard"),
        "https://127.0.0.1:8443/alice/tensorboard/"
    );
    let no_gateway = team(&format!(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\n{MEMBERS}"
    ));
    assert_eq!(no_gateway.unwrap().gateway, None);
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
        ("  route: host\n", "`team.yaml`:9:10: `route: host` needs a `domain`"),
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
    let gateway = with_gateway("  port: 8443\n").unwrap().gateway.unwrap();
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
