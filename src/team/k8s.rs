//! A team as Kubernetes manifests for a cluster with the NVIDIA device plugin: per
//! member a Secret (token or authorized key), PersistentVolumeClaims for its folders, a
//! Deployment (a Job for batch members) running as a non-root uid/gid with every
//! capability dropped, and a ClusterIP Service for its ports. A member with `workers: N`
//! becomes multi-worker training: an indexed Job of N pods behind a headless Service, each
//! with the TF_CONFIG MultiWorkerMirroredStrategy expects; optionally also as a Kubeflow
//! TFJob. Pure: launch plans in, YAML out.

use serde_json::{json, Value};

use crate::labels;
use crate::plan::gpus::GpuPlan;
use crate::plan::LaunchPlan;
use crate::spec::resolved::TENSORBOARD_PORT;

/// Port the training workers talk to each other on.
pub const WORKER_PORT: u16 = 2222;

/// Port sshd listens on inside an SSH member's pod: a non-root process with every
/// capability dropped cannot bind 22 there (Docker lowers `ip_unprivileged_port_start`,
/// Kubernetes does not). The member's Service still answers on the spec's port (22).
pub const POD_SSH_PORT: u16 = 2022;

/// What one member needs beyond its launch plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K8sMember {
    pub name: String,
    pub plan: LaunchPlan,
    /// `Some(n)`: multi-worker training with n workers.
    pub workers: Option<u32>,
    /// Size of each folder's claim.
    pub volume_size: String,
}

pub struct K8sOptions {
    pub team: String,
    /// Prefix for image references (`registry.example:5000`), so the cluster can pull.
    pub registry: Option<String>,
    pub uid: u32,
    pub gid: u32,
    pub tfjob: bool,
}

/// The manifests as one multi-document YAML text, and the TFJobs (when asked) apart.
/// No pod gets a service account token (`automountServiceAccountToken: false`): none
/// talks to the Kubernetes API, and a Jupyter or SSH user could read it.
pub fn manifests(members: &[K8sMember], options: &K8sOptions) -> (String, Option<String>) {
    let mut documents: Vec<Value> = Vec::new();
    let mut tfjobs: Vec<Value> = Vec::new();
    for member in members {
        let name = format!("{}-{}", options.team, member.name);
        let labels = json!({
            "app.kubernetes.io/name": name,
            "app.kubernetes.io/part-of": options.team,
            "app.kubernetes.io/managed-by": "tfimg",
        });
        let plan = &member.plan;
        // sshd runs as the service (no command): it moves to a port it may bind.
        let ssh = plan.command.is_empty()
            && plan.labels.get(labels::SERVICE).map(String::as_str) == Some("ssh");
        let target_port = |port: &crate::plan::ports::PortPlan| match port.name.as_str() {
            "ssh" if ssh => POD_SSH_PORT,
            _ => port.container,
        };
        let image = match &options.registry {
            Some(registry) => format!("{}/{}", registry.trim_end_matches('/'), plan.image),
            None => plan.image.clone(),
        };
        // Secrets: the token or the authorized key, never in the Deployment itself.
        let mut secret_data = serde_json::Map::new();
        let mut env = Vec::new();
        for entry in &plan.env {
            let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
            match key {
                key if labels::is_secret_variable(key) => {
                    secret_data.insert(key.to_string(), Value::from(value));
                }
                // The pod starts as the user already: no remapping at run time.
                key if key == labels::UID_VARIABLE || key == labels::GID_VARIABLE => {}
                _ => env.push(json!({"name": key, "value": value})),
            }
        }
        if ssh {
            env.push(json!({"name": labels::SSH_PORT_VARIABLE, "value": POD_SSH_PORT.to_string()}));
        }
        if !secret_data.is_empty() {
            documents.push(json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "labels": labels},
                "type": "Opaque",
                "stringData": secret_data,
            }));
        }
        let mut volumes = vec![json!({
            "name": "shm",
            "emptyDir": {"medium": "Memory", "sizeLimit": format!("{}Mi", plan.shm_size / (1024 * 1024))},
        })];
        let mut mounts = vec![json!({"name": "shm", "mountPath": "/dev/shm"})];
        for (index, mount) in plan.mounts.iter().enumerate() {
            let claim = format!("{name}-data-{index}");
            documents.push(json!({
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "labels": labels, "annotations": {"tfimg.io/host-source": mount.source.display().to_string()}},
                "spec": {
                    "accessModes": [if member.workers.is_some() { "ReadWriteMany" } else { "ReadWriteOnce" }],
                    "resources": {"requests": {"storage": member.volume_size}},
                },
            }));
            volumes.push(json!({"name": format!("data-{index}"), "persistentVolumeClaim": {"claimName": claim, "readOnly": mount.read_only}}));
            mounts.push(json!({"name": format!("data-{index}"), "mountPath": mount.target, "readOnly": mount.read_only}));
        }
        let mut limits = serde_json::Map::new();
        if let GpuPlan::Request(request) = &plan.gpu {
            // The device plugin hands out counts; named devices become their number, `all` one.
            let count = match request.count {
                Some(count) if count > 0 => count,
                Some(_) => 1,
                None => request.device_ids.len().max(1) as i64,
            };
            limits.insert("nvidia.com/gpu".to_string(), Value::from(count));
        }
        if let Some(memory) = plan.memory {
            limits.insert(
                "memory".to_string(),
                Value::from(format!("{}Mi", memory / (1024 * 1024))),
            );
        }
        if let Some(nano) = plan.nano_cpus {
            limits.insert(
                "cpu".to_string(),
                Value::from(format!("{}m", nano / 1_000_000)),
            );
        }
        let ports: Vec<Value> = plan
            .ports
            .iter()
            .map(|port| json!({"name": port_name(&port.name), "containerPort": target_port(port), "protocol": "TCP"}))
            .collect();
        let mut container = json!({
            "name": "main",
            "image": image,
            "env": env,
            "volumeMounts": mounts,
            "securityContext": {
                "allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]},
                "runAsNonRoot": true,
            },
        });
        if !secret_data.is_empty() {
            container["envFrom"] = json!([{"secretRef": {"name": name}}]);
        }
        if !limits.is_empty() {
            container["resources"] = json!({"limits": limits});
        }
        let pod_security = json!({
            "runAsUser": options.uid,
            "runAsGroup": options.gid,
            "fsGroup": options.gid,
            "runAsNonRoot": true,
            "seccompProfile": {"type": "RuntimeDefault"},
        });

        if let Some(workers) = member.workers {
            let service = format!("{name}-workers");
            let hosts: Vec<String> = (0..workers)
                .map(|index| format!("{name}-{index}.{service}:{WORKER_PORT}"))
                .collect();
            container["command"] = json!(["sh", "-c", tf_config_script(&hosts), "tfimg-worker"]);
            container["args"] = json!(plan.command);
            container["ports"] =
                json!([{"name": "worker", "containerPort": WORKER_PORT, "protocol": "TCP"}]);
            documents.push(json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": service, "labels": labels},
                "spec": {
                    "clusterIP": "None",
                    "selector": {"app.kubernetes.io/name": name},
                    "ports": [{"name": "worker", "port": WORKER_PORT, "targetPort": WORKER_PORT}],
                },
            }));
            documents.push(json!({
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "completions": workers,
                    "parallelism": workers,
                    "completionMode": "Indexed",
                    "backoffLimit": 0,
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "subdomain": service,
                            "restartPolicy": "Never",
                            "automountServiceAccountToken": false,
                            "securityContext": pod_security,
                            "containers": [container.clone()],
                            "volumes": volumes.clone(),
                        },
                    },
                },
            }));
            if options.tfjob {
                let mut tf_container = container.clone();
                tf_container["name"] = json!("tensorflow");
                tf_container["command"] = json!(plan.command);
                tf_container
                    .as_object_mut()
                    .expect("an object")
                    .remove("args");
                tfjobs.push(json!({
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "TFJob",
                    "metadata": {"name": name, "labels": labels},
                    "spec": {"tfReplicaSpecs": {"Worker": {
                        "replicas": workers,
                        "restartPolicy": "Never",
                        "template": {"spec": {"automountServiceAccountToken": false, "securityContext": pod_security, "containers": [tf_container], "volumes": volumes}},
                    }}},
                }));
            }
            continue;
        }

        // TensorBoard has no login: its port stays in the pod (`kubectl port-forward`
        // reaches it) but out of the Service, which anything in the cluster could reach.
        let served: Vec<&crate::plan::ports::PortPlan> = plan
            .ports
            .iter()
            .filter(|port| port.name != TENSORBOARD_PORT)
            .collect();
        if !ports.is_empty() {
            container["ports"] = json!(ports);
        }
        if !served.is_empty() {
            documents.push(json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "type": "ClusterIP",
                    "selector": {"app.kubernetes.io/name": name},
                    "ports": served.iter().map(|port| json!({
                        "name": port_name(&port.name),
                        "port": port.container,
                        "targetPort": target_port(port),
                    })).collect::<Vec<_>>(),
                },
            }));
        }
        if !plan.command.is_empty() {
            container["args"] = json!(plan.command);
            documents.push(json!({
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "backoffLimit": 0,
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"restartPolicy": "Never", "automountServiceAccountToken": false, "securityContext": pod_security, "containers": [container], "volumes": volumes},
                    },
                },
            }));
        } else {
            documents.push(json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                    // One pod at a time: its volumes are ReadWriteOnce.
                    "strategy": {"type": "Recreate"},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"automountServiceAccountToken": false, "securityContext": pod_security, "containers": [container], "volumes": volumes},
                    },
                },
            }));
        }
    }
    let header = format!(
        "# Generated by tfimg from team `{}`: Kubernetes manifests for a cluster with the NVIDIA device plugin.\n",
        options.team
    );
    (
        render(&header, &documents),
        (!tfjobs.is_empty()).then(|| render(&header, &tfjobs)),
    )
}

/// Port names must be IANA-style: lowercase, at most 15 characters.
fn port_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    cleaned.to_ascii_lowercase().chars().take(15).collect()
}

/// The shell that sets TF_CONFIG for the worker whose index Kubernetes gives an indexed
/// Job's pod in JOB_COMPLETION_INDEX, then runs the training command.
pub fn tf_config_script(hosts: &[String]) -> String {
    let cluster = hosts
        .iter()
        .map(|host| format!("\"{host}\""))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "TF_CONFIG=$(printf '{{\"cluster\": {{\"worker\": [{cluster}]}}, \"task\": {{\"type\": \"worker\", \"index\": %d}}}}' \"$JOB_COMPLETION_INDEX\"); export TF_CONFIG; exec \"$@\""
    )
}

fn render(header: &str, documents: &[Value]) -> String {
    let mut text = header.to_string();
    for document in documents {
        text.push_str("---\n");
        let value = serde_yaml::to_value(document).expect("JSON values convert to YAML values");
        text.push_str(&super::emit::to_yaml(&value));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::plan::gpus::GpuSelection;
    use crate::plan::ports::PortPlan;
    use crate::plan::{launch, LaunchInput, DEFAULT_SHM};
    use crate::spec::Service;

    fn member(name: &str, service: Service, command: &[&str], workers: Option<u32>) -> K8sMember {
        let port = |name: &str, container: u16| PortPlan {
            name: name.into(),
            container,
            host_ip: "127.0.0.1".into(),
            host: container,
        };
        let plan = launch(&LaunchInput {
            image: "tfimg/cpu-ssh:2.9.3-0123456789ab".into(),
            spec_name: "cpu-ssh".into(),
            service,
            image_user: "tf".into(),
            tfimg_image: true,
            name: format!("lab-{name}"),
            command: command.iter().map(|part| part.to_string()).collect(),
            env: vec![("NOTE".into(), "on".into()), ("YES".into(), "1_000".into())],
            mounts: Vec::new(),
            ports: match service {
                Service::Ssh => vec![port("ssh", 22), port("tensorboard", 6006)],
                Service::Jupyter => vec![port("jupyter", 8888)],
                Service::None => Vec::new(),
            },
            gpus: GpuSelection::None,
            gpu: GpuPlan::None,
            ids: Some((1000, 1000)),
            jupyter_token: (service == Service::Jupyter).then(|| "t0k3n".into()),
            ssh_public_key: (service == Service::Ssh && command.is_empty())
                .then(|| "ssh-ed25519 AAAA x".into()),
            ssh_identity: None,
            ssh_known_hosts: None,
            memory: None,
            nano_cpus: None,
            shm_size: DEFAULT_SHM,
            restart: None,
            extra_labels: BTreeMap::new(),
        });
        K8sMember {
            name: name.into(),
            plan,
            workers,
            volume_size: "10Gi".into(),
        }
    }

    fn exported(members: &[K8sMember]) -> Vec<serde_yaml::Value> {
        let options = K8sOptions {
            team: "lab".into(),
            registry: None,
            uid: 1000,
            gid: 1000,
            tfjob: true,
        };
        let (main, tfjobs) = manifests(members, &options);
        let mut all = main;
        all.push_str(&tfjobs.unwrap_or_default());
        all.split("---\n")
            .skip(1)
            .map(|document| serde_yaml::from_str(document).unwrap())
            .collect()
    }

    #[test]
    fn no_pod_mounts_a_service_account_token() {
        let documents = exported(&[
            member("alice", Service::Jupyter, &[], None),
            member("carol", Service::Ssh, &[], None),
            member("batch", Service::None, &["python", "train.py"], None),
            member("dist", Service::None, &["python", "train.py"], Some(2)),
        ]);
        let mut pods = 0;
        for document in &documents {
            let template = match document["kind"].as_str().unwrap() {
                "Deployment" | "Job" => &document["spec"]["template"]["spec"],
                "TFJob" => &document["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"],
                _ => continue,
            };
            assert_eq!(
                template["automountServiceAccountToken"], false,
                "{document:?}"
            );
            pods += 1;
        }
        assert_eq!(
            pods, 5,
            "a Deployment, two Jobs, an indexed Job and a TFJob"
        );
    }

    #[test]
    fn sshd_listens_on_an_unprivileged_port_that_the_service_maps_to_22() {
        let documents = exported(&[member("carol", Service::Ssh, &[], None)]);
        let find = |kind: &str| {
            documents
                .iter()
                .find(|document| document["kind"] == kind)
                .unwrap()
        };
        let ports = &find("Service")["spec"]["ports"];
        assert_eq!(ports[0]["name"], "ssh");
        assert_eq!(ports[0]["port"], 22);
        assert_eq!(ports[0]["targetPort"], POD_SSH_PORT);
        // TensorBoard (no login) is in the pod for `kubectl port-forward`, not the Service.
        assert_eq!(ports.as_sequence().unwrap().len(), 1);
        let container = &find("Deployment")["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["ports"][0]["containerPort"], POD_SSH_PORT);
        assert_eq!(container["ports"][1]["containerPort"], 6006);
        let env = container["env"].as_sequence().unwrap();
        assert!(env.contains(
            &serde_yaml::from_str(&format!(
                "{{name: {}, value: '2022'}}",
                labels::SSH_PORT_VARIABLE
            ))
            .unwrap()
        ));
        assert_ne!(POD_SSH_PORT, WORKER_PORT);
        // A command replaces sshd: nothing moves.
        let batch = exported(&[member("job", Service::Ssh, &["python", "x.py"], None)]);
        assert!(!serde_yaml::to_string(&batch)
            .unwrap()
            .contains(labels::SSH_PORT_VARIABLE));
    }

    #[test]
    fn yaml_1_1_words_are_quoted_in_the_manifests() {
        let options = K8sOptions {
            team: "lab".into(),
            registry: None,
            uid: 1000,
            gid: 1000,
            tfjob: false,
        };
        let (text, _) = manifests(&[member("alice", Service::Jupyter, &[], None)], &options);
        for line in [
            "- name: NOTE\n",
            "  value: \"on\"\n",
            "- name: \"YES\"\n",
            "  value: \"1_000\"\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
