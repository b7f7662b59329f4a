use super::*;
use crate::notice::Notice;

const LOCAL: Publishing = Publishing {
    public: false,
    remote: false,
};
const PUBLIC: Publishing = Publishing {
    public: true,
    remote: false,
};

fn ports() -> BTreeMap<String, u16> {
    BTreeMap::from([
        ("jupyter".to_string(), 8888),
        ("tensorboard".to_string(), 6006),
    ])
}

#[test]
fn a_port_moved_off_its_own_number_is_said_one_the_user_named_is_not() {
    let plan = |name: &str, container: u16, host: u16| PortPlan {
        name: name.to_string(),
        container,
        host_ip: "127.0.0.1".to_string(),
        host,
        tunneled: false,
    };
    let plans = [
        plan("jupyter", 8888, 8889),
        plan("tensorboard", 6006, 6006),
        plan("port-9000", 9000, 9100),
    ];
    let named = [PortRequest {
        host: Some(9100),
        container: 9000,
    }];
    assert_eq!(
        moved(&plans, &named),
        [Notice::note(
            "port 8888 (jupyter) is in use, so it is on 8889 instead (`-p HOST:8888` chooses)"
        )]
    );
}

#[test]
fn same_port_when_free_else_another_and_explicit_ones_must_be_free() {
    let mut next = 40000;
    let mut any = |_: &str| {
        next += 1;
        Some(next)
    };
    let mut free = |_: &str, port: u16| port != 8888 && port != 9999;
    let plans = assign(&ports(), &[], LOCAL, &mut free, &mut any).unwrap();
    let found: Vec<(&str, u16, &str, u16)> = plans
        .iter()
        .map(|p| (p.name.as_str(), p.container, p.host_ip.as_str(), p.host))
        .collect();
    assert_eq!(
        found,
        [
            ("jupyter", 8888, "127.0.0.1", 40001),
            ("tensorboard", 6006, "127.0.0.1", 6006)
        ]
    );

    let requests = [
        PortRequest::parse("8890:8888").unwrap(),
        PortRequest::parse("5000").unwrap(),
    ];
    let plans = assign(&ports(), &requests, PUBLIC, &mut free, &mut any).unwrap();
    assert_eq!(plans[0].host, 8890);
    assert_eq!(plans[0].host_ip, "0.0.0.0");
    // `--public` opens Jupyter and the extra port, never TensorBoard (no login).
    let ips: Vec<(&str, &str)> = plans
        .iter()
        .map(|p| (p.name.as_str(), p.host_ip.as_str()))
        .collect();
    assert_eq!(
        ips,
        [
            ("jupyter", "0.0.0.0"),
            ("tensorboard", "127.0.0.1"),
            ("port-5000", "0.0.0.0")
        ]
    );
    assert_eq!((plans[2].name.as_str(), plans[2].host), ("port-5000", 5000));

    let error = assign(
        &ports(),
        &[PortRequest::parse("9999:8888").unwrap()],
        LOCAL,
        &mut free,
        &mut any,
    )
    .unwrap_err();
    assert_eq!(
        error.message,
        "host port 9999 (for `jupyter`, container port 8888) is already in use"
    );
}

#[test]
fn a_remote_engine_tunnels_every_port_from_this_machine_s_loopback() {
    let mut probed = Vec::new();
    let mut free = |ip: &str, port: u16| {
        probed.push((ip.to_string(), port));
        port != 8888
    };
    let mut any = |ip: &str| {
        assert_eq!(ip, "127.0.0.1", "a local end is on loopback");
        Some(41000)
    };
    let remote = |public| Publishing {
        public,
        remote: true,
    };
    let plans = assign(&ports(), &[], remote(false), &mut free, &mut any).unwrap();
    let found: Vec<(&str, &str, u16, bool)> = plans
        .iter()
        .map(|p| (p.name.as_str(), p.host_ip.as_str(), p.host, p.tunneled))
        .collect();
    assert_eq!(
        found,
        [
            ("jupyter", "127.0.0.1", 41000, true),
            ("tensorboard", "127.0.0.1", 6006, true)
        ]
    );
    // `--public` opens Jupyter on the remote's interfaces, still tunneled to here;
    // free ports are asked of this machine's loopback only.
    let plans = assign(&ports(), &[], remote(true), &mut free, &mut any).unwrap();
    assert_eq!(
        (plans[0].host_ip.as_str(), plans[1].host_ip.as_str()),
        ("0.0.0.0", "127.0.0.1")
    );
    assert!(plans.iter().all(|plan| plan.tunneled));
    assert!(probed.iter().all(|(ip, _)| ip == "127.0.0.1"), "{probed:?}");
}

#[test]
fn an_explicit_port_wins_over_an_automatic_one() {
    let mut free = |_: &str, _: u16| true;
    let mut any = |_: &str| Some(45000);
    let requests = [PortRequest::parse("8888:6006").unwrap()];
    let plans = assign(&ports(), &requests, LOCAL, &mut free, &mut any).unwrap();
    let tensorboard = plans.iter().find(|p| p.name == "tensorboard").unwrap();
    let jupyter = plans.iter().find(|p| p.name == "jupyter").unwrap();
    assert_eq!((tensorboard.host, jupyter.host), (8888, 45000));
}

#[test]
fn port_requests_parse() {
    assert_eq!(
        PortRequest::parse("8888").unwrap(),
        PortRequest {
            host: None,
            container: 8888
        }
    );
    assert_eq!(
        PortRequest::parse("1:2/tcp").unwrap(),
        PortRequest {
            host: Some(1),
            container: 2
        }
    );
    for bad in ["", "0", "70000", "a:1", "1:2:3", "-1"] {
        assert!(PortRequest::parse(bad).is_err(), "{bad}");
    }
    let error = PortRequest::parse("8888/udp").unwrap_err();
    assert_eq!(
        error.message,
        "`-p 8888/udp`: tfimg publishes TCP ports only, not `udp`"
    );
    assert_eq!(
        PortRequest::parse("8889:8888/tcp").unwrap(),
        PortRequest {
            host: Some(8889),
            container: 8888
        }
    );
    let error = PortRequest::parse("80\u{1b}[2J").unwrap_err();
    assert_eq!(error.message, "`-p 80\\u{1b}[2J` is not a port mapping");
}

/// Issue 45: without `-p`, SSH's service port 22 was published on host port 22 whenever
/// it was free there: the host's own sshd's port on most servers. A service port below
/// 1024 goes to a port the kernel chooses, said by its line, not by a "moved" note; `-p
/// 22:22` still asks for 22.
#[test]
fn a_service_port_below_1024_never_takes_its_own_number_unless_named() {
    let mut next = 40000;
    let mut any = |_: &str| {
        next += 1;
        Some(next)
    };
    let mut free = |_: &str, _: u16| true;
    let ssh = BTreeMap::from([("ssh".to_string(), 22)]);
    let plans = assign(&ssh, &[], LOCAL, &mut free, &mut any).unwrap();
    assert_eq!(plans[0].host, 40001);
    assert!(moved(&plans, &[]).is_empty());
    let named = [PortRequest {
        host: Some(22),
        container: 22,
    }];
    let plans = assign(&ssh, &named, LOCAL, &mut free, &mut any).unwrap();
    assert_eq!(plans[0].host, 22);
}
