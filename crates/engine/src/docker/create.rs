//! The body of a container create request: the launch plan as Docker's config.

use std::collections::HashMap;

use bollard::models::ContainerCreateBody;

/// The GPU plan as Docker's DeviceRequests, or the `nvidia` runtime.
pub(super) fn gpu_fields(
    gpu: &tfimg_core::plan::gpus::GpuPlan,
) -> (Option<Vec<bollard::models::DeviceRequest>>, Option<String>) {
    use tfimg_core::plan::gpus::GpuPlan;
    match gpu {
        GpuPlan::None => (None, None),
        GpuPlan::Request(request) => (
            Some(vec![bollard::models::DeviceRequest {
                driver: Some(request.driver.clone()),
                count: request.count,
                device_ids: (!request.device_ids.is_empty()).then(|| request.device_ids.clone()),
                capabilities: (!request.capabilities.is_empty())
                    .then(|| request.capabilities.clone()),
                options: None,
            }]),
            None,
        ),
        GpuPlan::Runtime { .. } => (None, Some("nvidia".to_string())),
    }
}

fn restart_policy(policy: tfimg_core::plan::RestartPolicy) -> bollard::models::RestartPolicy {
    use bollard::models::RestartPolicyNameEnum;
    use tfimg_core::plan::RestartPolicy as Policy;
    let (name, retries) = match policy {
        Policy::No => (RestartPolicyNameEnum::NO, None),
        Policy::Always => (RestartPolicyNameEnum::ALWAYS, None),
        Policy::UnlessStopped => (RestartPolicyNameEnum::UNLESS_STOPPED, None),
        Policy::OnFailure(retries) => (RestartPolicyNameEnum::ON_FAILURE, retries),
    };
    bollard::models::RestartPolicy {
        name: Some(name),
        maximum_retry_count: retries.map(i64::from),
    }
}

pub(super) fn to_create_body(plan: &tfimg_core::plan::LaunchPlan) -> ContainerCreateBody {
    use bollard::models::{HostConfig, Mount, MountType, MountVolumeOptions, PortBinding};
    let mut port_bindings = HashMap::new();
    let mut exposed = Vec::new();
    for port in &plan.ports {
        let key = format!("{}/tcp", port.container);
        exposed.push(key.clone());
        port_bindings.insert(
            key,
            Some(vec![PortBinding {
                host_ip: Some(port.host_ip.clone()),
                // A tunneled port: the remote daemon chooses (`-p 127.0.0.1::8888`).
                host_port: Some(if port.tunneled {
                    String::new()
                } else {
                    port.host.to_string()
                }),
            }]),
        );
    }
    let (device_requests, runtime) = gpu_fields(&plan.gpu);
    let restart_policy = plan.restart.map(restart_policy);
    let binds = plan.mounts.iter().map(|mount| Mount {
        target: Some(mount.target.clone()),
        source: Some(mount.source.display().to_string()),
        typ: Some(MountType::BIND),
        read_only: Some(mount.read_only),
        ..Default::default()
    });
    // Named volumes: Docker creates a missing one with these labels and, while it is
    // empty, copies the image's folder into it (contents, owner and mode).
    let volumes = plan.volumes.iter().map(|volume| Mount {
        target: Some(volume.target.clone()),
        source: Some(volume.name.clone()),
        typ: Some(MountType::VOLUME),
        read_only: Some(volume.read_only),
        volume_options: Some(MountVolumeOptions {
            labels: Some(volume.labels.clone().into_iter().collect()),
            ..Default::default()
        }),
        ..Default::default()
    });
    let host_config = HostConfig {
        mounts: Some(binds.chain(volumes).collect()),
        port_bindings: Some(port_bindings),
        device_requests,
        runtime,
        memory: plan.memory,
        nano_cpus: plan.nano_cpus,
        shm_size: Some(plan.shm_size),
        restart_policy,
        cap_drop: Some(plan.cap_drop.clone()),
        security_opt: Some(plan.security_opt.clone()),
        init: Some(false),
        // A team's network: its containers reach each other by name.
        network_mode: plan.network.clone(),
        ..Default::default()
    };
    ContainerCreateBody {
        image: Some(plan.image.clone()),
        cmd: (!plan.command.is_empty()).then(|| plan.command.clone()),
        env: Some(plan.env.clone()),
        labels: Some(plan.labels.clone().into_iter().collect()),
        user: plan.user.clone(),
        exposed_ports: Some(exposed),
        host_config: Some(host_config),
        ..Default::default()
    }
}
