//! What the tests of launch plans and of their exporters (compose, k8s) share: one
//! `LaunchInput` each test changes where it needs to.

use std::collections::BTreeMap;

use super::gpus::{GpuPlan, GpuSelection};
use super::ports::PortPlan;
use super::{LaunchInput, Resources};
use crate::spec::Service;

/// A Jupyter launch of `tfimg/cpu-jupyter:2.9.3` as uid/gid 1234/2345, its port 8888
/// published on 127.0.0.1:8890, token `t0k3n`, `A=1` in its environment, nothing else.
pub fn input() -> LaunchInput {
    LaunchInput {
        image: "tfimg/cpu-jupyter:2.9.3".into(),
        spec_name: "cpu-jupyter".into(),
        service: Service::Jupyter,
        image_user: "tf".into(),
        tfimg_image: true,
        name: "cpu-jupyter-1a2b3c".into(),
        command: Vec::new(),
        env: vec![("A".into(), "1".into())],
        mounts: Vec::new(),
        volumes: Vec::new(),
        ports: vec![PortPlan {
            name: "jupyter".into(),
            container: 8888,
            host_ip: "127.0.0.1".into(),
            host: 8890,
            tunneled: false,
        }],
        gpus: GpuSelection::None,
        gpu: GpuPlan::None,
        ids: Some((1234, 2345)),
        jupyter_token: Some("t0k3n".into()),
        ssh_public_key: None,
        ssh_identity: None,
        ssh_known_hosts: None,
        resources: Resources::default(),
        extra_labels: BTreeMap::new(),
        network: None,
    }
}
