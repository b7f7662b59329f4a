//! What the tests of launch plans and of their exporters (compose, k8s) share: one
//! request and what the launcher chose for it, which each test changes where it needs to.

use std::collections::BTreeMap;

use super::gpus::{GpuPlan, GpuSelection};
use super::ports::PortPlan;
use super::{Chosen, LaunchRequest, Target};
use crate::spec::Service;

/// A Jupyter launch of `tfimg/cpu-jupyter:2.9.3` as uid/gid 1234/2345, `A=1` in its
/// environment, nothing else.
pub fn request() -> LaunchRequest {
    let target = Target {
        spec_name: "cpu-jupyter".into(),
        image: "tfimg/cpu-jupyter:2.9.3".into(),
        service: Service::Jupyter,
        image_user: "tf".into(),
        workdir: "/tf".into(),
        ports: BTreeMap::from([("jupyter".to_string(), 8888)]),
        gpu_image: false,
        gpu: None,
        tfimg_image: true,
        cuda_cache: None,
    };
    LaunchRequest {
        env: vec![("A".into(), "1".into())],
        ..LaunchRequest::new(target, "cpu-jupyter-1a2b3c".into(), Some((1234, 2345)))
    }
}

/// What the launcher chose for [`request`]: its port 8888 published on 127.0.0.1:8890,
/// token `t0k3n`, no GPU.
pub fn chosen() -> Chosen {
    Chosen {
        name: "cpu-jupyter-1a2b3c".into(),
        ports: vec![PortPlan {
            name: "jupyter".into(),
            container: 8888,
            host_ip: "127.0.0.1".into(),
            host: 8890,
            tunneled: false,
        }],
        gpus: GpuSelection::None,
        gpu: GpuPlan::None,
        jupyter_token: Some("t0k3n".into()),
        ssh_public_key: None,
        ssh_identity: None,
        ssh_known_hosts: None,
    }
}
