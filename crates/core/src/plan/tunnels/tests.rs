use super::*;

fn port(name: &str, container: u16, host: u16, tunneled: bool) -> PortPlan {
    PortPlan {
        name: name.into(),
        container,
        host_ip: "127.0.0.1".into(),
        host,
        tunneled,
    }
}

fn binding(container: u16, host_port: u16) -> Published {
    Published {
        container,
        host_ip: "127.0.0.1".into(),
        host_port,
    }
}

#[test]
fn each_tunneled_port_goes_to_where_the_daemon_published_it() {
    let ports = [
        port("jupyter", 8888, 8888, true),
        port("tensorboard", 6006, 6006, true),
    ];
    let published = [binding(6006, 49154), binding(8888, 49153)];
    let found = forwards(&ports, &published).unwrap();
    assert_eq!(
        found,
        [
            Forward {
                name: "jupyter".into(),
                local: 8888,
                remote: 49153
            },
            Forward {
                name: "tensorboard".into(),
                local: 6006,
                remote: 49154
            }
        ]
    );
    assert_eq!(forwards(&ports, &published[..1]), Err("jupyter".into()));
    assert!(forwards(&[port("jupyter", 8888, 8888, false)], &[])
        .unwrap()
        .is_empty());
}

#[test]
fn a_moved_local_port_moves_every_address_but_nothing_else() {
    assert_eq!(
        moved_address("http://127.0.0.1:8888/lab?token=t", 8888, 40001),
        "http://127.0.0.1:40001/lab?token=t"
    );
    assert_eq!(
        moved_address("ssh -p 2222 -i /k tf@127.0.0.1", 2222, 40002),
        "ssh -p 40002 -i /k tf@127.0.0.1"
    );
    assert_eq!(
        moved_address("http://127.0.0.1:88880/", 8888, 1),
        "http://127.0.0.1:88880/"
    );
}

#[test]
fn a_container_s_addresses_come_from_its_labels_with_today_s_local_ports() {
    let container_labels: HashMap<String, String> = [
        (
            labels::PORTS.to_string(),
            "jupyter=127.0.0.1:8888->8888,tensorboard=127.0.0.1:6006->6006".to_string(),
        ),
        (
            labels::url_label("jupyter"),
            "http://127.0.0.1:8888/lab".to_string(),
        ),
        (
            labels::url_label("tensorboard"),
            "http://127.0.0.1:6006/".to_string(),
        ),
    ]
    .into();
    let published = [binding(8888, 49153), binding(6006, 49154)];
    let mut found = forwards_of_container(&container_labels, &published);
    assert_eq!(
        found
            .iter()
            .map(|f| (f.local, f.remote))
            .collect::<Vec<_>>(),
        [(8888, 49153), (6006, 49154)]
    );
    found[0].local = 40001;
    assert_eq!(
        container_endpoints(&container_labels, Some("t0k"), &found),
        [
            (
                "jupyter".to_string(),
                "http://127.0.0.1:40001/lab?token=t0k".to_string()
            ),
            (
                "tensorboard".to_string(),
                "http://127.0.0.1:6006/".to_string()
            )
        ]
    );
}

#[test]
fn behind_a_gateway_the_tensorboard_link_carries_the_token_and_a_published_one_does_not() {
    let member: HashMap<String, String> = [
        (
            labels::url_label("jupyter"),
            "https://alice.lab.localhost:8443/lab".to_string(),
        ),
        (
            labels::url_label("tensorboard"),
            "https://alice.lab.localhost:8443/tensorboard/".to_string(),
        ),
    ]
    .into();
    assert_eq!(
        container_endpoints(&member, Some("t0k"), &[]),
        [
            (
                "jupyter".to_string(),
                "https://alice.lab.localhost:8443/lab?token=t0k".to_string()
            ),
            (
                "tensorboard".to_string(),
                "https://alice.lab.localhost:8443/tensorboard/?token=t0k".to_string()
            )
        ]
    );
    assert!(crate::plan::tensorboard_behind_gateway(
        "https://127.0.0.1:8443/alice/tensorboard/?token=t0k"
    ));
    assert!(!crate::plan::tensorboard_behind_gateway(
        "http://127.0.0.1:6006/"
    ));
    // Without a token (a container not started by tfimg), the address as it is.
    assert_eq!(
        container_endpoints(&member, None, &[])[1].1,
        "https://alice.lab.localhost:8443/tensorboard/"
    );
}
