//! The suite reaches the real Docker Engine through bollard. With CI=true an unreachable
//! daemon fails the run; elsewhere too, unless TFIMG_SKIP_ENGINE_TESTS=1 says otherwise.

mod common;

use tfimg_testing::engine::prelude::*;
use tfimg_testing::engine::{Docker, EngineError};
use tfimg_testing::Failure;

#[tokio::test]
async fn the_suite_reaches_the_real_engine_and_negotiates_its_api_version() {
    let Some(engine) = common::engine().await else { return };
    let version = engine
        .version()
        .await
        .expect("the daemon reports its version");
    assert!(!version.version.is_empty());
    assert_eq!(version.os, "linux");
    let number = |text: &str| -> (u32, u32) {
        let (major, minor) = text.split_once('.').expect("API versions look like 1.41");
        (major.parse().unwrap(), minor.parse().unwrap())
    };
    // Never ask a daemon for a newer API than it speaks (Engine 20.10 speaks 1.41).
    assert!(number(&version.negotiated_api) <= number(&version.api_version));
    assert!(number(&version.negotiated_api) >= (1, 41));
}

#[tokio::test]
async fn a_missing_socket_is_reported_with_the_path_and_the_start_command() {
    let error = Docker::connect_to("unix:///nonexistent/tfimg-test.sock".to_string())
        .await
        .expect_err("nothing listens there");
    assert!(
        matches!(error, EngineError::Unreachable { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "cannot reach the Docker daemon at `unix:///nonexistent/tfimg-test.sock`: the socket does not exist (is the daemon running?)"
    );
    assert!(error.hint().unwrap().contains("systemctl start docker"));
}

#[tokio::test]
async fn an_unsupported_docker_host_is_named() {
    let error = Docker::connect_to("ftp://example".to_string())
        .await
        .expect_err("not a Docker endpoint");
    assert_eq!(error.to_string(), "unsupported DOCKER_HOST `ftp://example`");
}

/// The first daemon on a new machine reported its bridge's subnet without a gateway;
/// the tests' host address must still be found (issue 12, item 15).
#[test]
fn the_bridge_gateway_is_found_when_the_daemon_reports_only_a_subnet() {
    let fresh = serde_json::json!({"Driver": "default", "Options": null,
        "Config": [{"Subnet": "172.17.0.0/16"}]});
    assert_eq!(
        common::gateway_from(&fresh, None).as_deref(),
        Some("172.17.0.1")
    );
    let interface = "172.18.0.1".parse().ok();
    assert_eq!(
        common::gateway_from(&fresh, interface).as_deref(),
        Some("172.18.0.1")
    );
    let reported =
        serde_json::json!({"Config": [{"Subnet": "10.9.0.0/24", "Gateway": "10.9.0.254"}]});
    assert_eq!(
        common::gateway_from(&reported, interface).as_deref(),
        Some("10.9.0.254")
    );
    assert_eq!(
        common::gateway_from(&serde_json::json!({"Config": []}), None),
        None
    );
}

#[tokio::test]
async fn the_bridge_gateway_of_this_daemon_is_an_address_of_this_machine() {
    let Some(_engine) = common::engine().await else { return };
    let gateway = common::bridge_gateway();
    // Containers reach the host there: the machine can listen on it.
    std::net::TcpListener::bind((gateway.as_str(), 0))
        .unwrap_or_else(|error| panic!("cannot listen on the bridge gateway {gateway}: {error}"));
}
