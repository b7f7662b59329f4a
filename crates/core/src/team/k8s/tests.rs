use super::*;
use crate::plan::ports::PortPlan;
use crate::plan::{launch, testing, Chosen, LaunchRequest};
use crate::spec::Service;

fn member(name: &str, service: Service, command: &[&str], workers: Option<u32>) -> K8sMember {
    let port = |name: &str, container: u16| PortPlan {
        name: name.into(),
        container,
        host_ip: "127.0.0.1".into(),
        host: container,
        tunneled: false,
    };
    let mut request = LaunchRequest {
        command: command.iter().map(|part| part.to_string()).collect(),
        env: vec![("NOTE".into(), "on".into()), ("YES".into(), "1_000".into())],
        ids: Some((1000, 1000)),
        ..testing::request()
    };
    request.target.image = "tfimg/cpu-ssh:2.9.3-0123456789ab".into();
    request.target.spec_name = "cpu-ssh".into();
    request.target.service = service;
    let chosen = Chosen {
        name: format!("lab-{name}"),
        ports: match service {
            Service::Ssh => vec![port("ssh", 22), port("tensorboard", 6006)],
            Service::Jupyter => vec![port("jupyter", 8888)],
            Service::Serving => vec![port("rest", 8501)],
            Service::None => Vec::new(),
        },
        jupyter_token: (service == Service::Jupyter).then(|| "t0k3n".into()),
        ssh_public_key: (service == Service::Ssh && command.is_empty())
            .then(|| "ssh-ed25519 AAAA x".into()),
        ..testing::chosen()
    };
    let plan = launch(&request, &chosen);
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
        ingress: None,
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
        ingress: None,
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

#[test]
fn a_model_server_is_probed_on_its_model_and_reads_it_from_its_own_claim() {
    let mut fraud = member("fraud", Service::Serving, &[], None);
    fraud
        .plan
        .labels
        .insert(labels::MODEL.into(), "fraud".into());
    fraud.plan.mounts.push(crate::plan::mounts::MountPlan {
        source: "/lab/export/fraud".into(),
        target: "/models/fraud".into(),
        read_only: true,
    });
    let documents = exported(&[fraud]);
    let find = |kind: &str| {
        documents
            .iter()
            .find(|document| document["kind"] == kind)
            .unwrap()
    };
    let pod = &find("Deployment")["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
        assert_eq!(
            container[probe]["httpGet"]["path"], "/v1/models/fraud",
            "{probe}"
        );
        assert_eq!(container[probe]["httpGet"]["port"], 8501, "{probe}");
    }
    assert_eq!(container["ports"][0]["containerPort"], 8501);
    assert_eq!(find("Service")["spec"]["ports"][0]["port"], 8501);
    let claim = find("PersistentVolumeClaim");
    assert_eq!(claim["metadata"]["name"], "lab-fraud-model");
    assert_eq!(
        claim["metadata"]["annotations"]["tfimg.io/host-source"],
        "/lab/export/fraud"
    );
    let mount = &container["volumeMounts"][1];
    assert_eq!(mount["mountPath"], "/models/fraud");
    assert_eq!(mount["readOnly"], true);
    assert_eq!(
        pod["volumes"][1]["persistentVolumeClaim"]["claimName"],
        "lab-fraud-model"
    );
    // Without a model (or with a command in its place) nothing is probed.
    let plain = exported(&[member("srv", Service::Serving, &[], None)]);
    assert!(!serde_yaml::to_string(&plain).unwrap().contains("Probe"));
}

/// With a gateway, each member's pods take connections from its own pods and from pods
/// that are not the team's (the ingress controller), never from another member's.
#[test]
fn behind_a_gateway_each_member_has_a_network_policy() {
    let members = [
        member("alice", Service::Jupyter, &[], None),
        member("dist", Service::None, &["python", "train.py"], Some(2)),
    ];
    let gateway = crate::team::parse(
        "team: lab\nmembers:\n  - name: alice\n    spec: cpu-jupyter\ngateway: {domain: lab.example}\n",
        "team.yaml",
        std::path::PathBuf::from("/lab"),
    )
    .unwrap()
    .gateway
    .unwrap();
    let options = K8sOptions {
        team: "lab".into(),
        registry: None,
        uid: 1000,
        gid: 1000,
        tfjob: false,
        ingress: Some(crate::team::gateway::ingress::IngressPlan {
            gateway,
            backends: Vec::new(),
            cert_pem: "CERT".into(),
            key_pem: "KEY".into(),
        }),
    };
    let (main, _) = manifests(&members, &options);
    let documents: Vec<serde_yaml::Value> = main
        .split("---\n")
        .skip(1)
        .map(|document| serde_yaml::from_str(document).unwrap())
        .collect();
    for name in ["lab-alice", "lab-dist"] {
        let policy = documents
            .iter()
            .find(|d| d["kind"] == "NetworkPolicy" && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no policy for {name}: {main}"));
        let expected: serde_yaml::Value = serde_yaml::from_str(&format!(
            "podSelector: {{matchLabels: {{app.kubernetes.io/name: {name}}}}}
policyTypes: [Ingress]
ingress:
  - from:
      - podSelector: {{matchLabels: {{app.kubernetes.io/name: {name}}}}}
      - namespaceSelector: {{}}
        podSelector:
          matchExpressions:
            - {{key: app.kubernetes.io/part-of, operator: NotIn, values: [lab]}}
"
        ))
        .unwrap();
        assert_eq!(policy["spec"], expected, "{name}");
    }
    // Every pod of the team carries the label the policies leave out.
    let pods = documents
        .iter()
        .filter(|d| d["kind"] == "Deployment" || d["kind"] == "Job")
        .map(|d| &d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/part-of"]);
    assert!(pods.clone().count() >= 2);
    assert!(pods.into_iter().all(|label| label == "lab"));
    let ingress = documents.iter().find(|d| d["kind"] == "Ingress").unwrap();
    let annotations = &ingress["metadata"]["annotations"];
    assert_eq!(
        annotations["nginx.ingress.kubernetes.io/proxy-body-size"],
        "512m"
    );
    assert_eq!(
        annotations["nginx.ingress.kubernetes.io/proxy-request-buffering"],
        "off"
    );
}
