//! A team's gateway on Kubernetes: an Ingress routing each member's path (`/alice/`) or
//! host name (`alice.DOMAIN`) to the member's Service, with TLS from a `kubernetes.io/tls`
//! Secret holding the team's certificate. The cluster's ingress controller is the proxy;
//! each Jupyter still checks its own token under its base URL. TensorBoard has no login
//! and stays out of the Services, so it stays out of the Ingress too. Pure.
//!
//! Trust boundary, member → member, on a cluster: members are different people, each in
//! control of their own pod and its ports. Where `up` gives each member a network of its
//! own, here each member gets a NetworkPolicy (`member_policy`): its pods take
//! connections from its own pods (a multi-worker member's workers) and from pods that are
//! not the team's (the ingress controller's), never from another member's. It needs a
//! network plugin that enforces NetworkPolicies, and an ingress controller that runs as a
//! pod (not on the host's network). The controller streams bodies (no request buffering)
//! up to Jupyter's own limit; it does not ask Jupyter before passing one on.

use serde_json::{json, Value};

use super::nginx::Backend;
use super::{Gateway, Route};

/// What the Ingress needs beyond the team's name: the gateway, its members, the PEMs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngressPlan {
    pub gateway: Gateway,
    pub backends: Vec<Backend>,
    pub cert_pem: String,
    pub key_pem: String,
}

/// The TLS Secret and the Ingress of `team`.
pub fn documents(team: &str, plan: &IngressPlan) -> Vec<Value> {
    let secret = format!("{team}-gateway-tls");
    let labels =
        json!({"app.kubernetes.io/part-of": team, "app.kubernetes.io/managed-by": "tfimg"});
    let path = |backend: &Backend, path: String| {
        json!({
            "path": path,
            "pathType": "Prefix",
            "backend": {"service": {
                "name": backend.container,
                "port": {"number": backend.jupyter.unwrap_or(8888)},
            }},
        })
    };
    let served = plan
        .backends
        .iter()
        .filter(|backend| backend.jupyter.is_some());
    let (rules, hosts): (Vec<Value>, Vec<String>) = match plan.gateway.route {
        Route::Path => {
            let paths: Vec<Value> = served
                .map(|backend| path(backend, format!("/{}/", backend.member)))
                .collect();
            let mut rule = json!({"http": {"paths": paths}});
            if let Some(domain) = &plan.gateway.domain {
                rule["host"] = json!(domain);
            }
            (vec![rule], plan.gateway.domain.iter().cloned().collect())
        }
        Route::Host => {
            let domain = plan.gateway.domain.as_deref().unwrap_or("localhost");
            served
                .map(|backend| {
                    let host = format!("{}.{domain}", backend.member);
                    let rule =
                        json!({"host": host, "http": {"paths": [path(backend, "/".to_string())]}});
                    (rule, host)
                })
                .unzip()
        }
    };
    let mut tls = json!({"secretName": secret});
    if !hosts.is_empty() {
        tls["hosts"] = json!(hosts);
    }
    vec![
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": secret, "labels": labels},
            "type": "kubernetes.io/tls",
            "stringData": {"tls.crt": plan.cert_pem, "tls.key": plan.key_pem},
        }),
        json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {
                "name": format!("{team}-gateway"),
                "labels": labels,
                // ingress-nginx: kernels' WebSockets stay open a day; bodies are streamed,
                // never buffered to the controller's disk, up to Jupyter's own limit.
                "annotations": {
                    "nginx.ingress.kubernetes.io/proxy-read-timeout": "86400",
                    "nginx.ingress.kubernetes.io/proxy-send-timeout": "86400",
                    "nginx.ingress.kubernetes.io/proxy-body-size": super::nginx::MAX_BODY,
                    "nginx.ingress.kubernetes.io/proxy-request-buffering": "off",
                },
            },
            "spec": {"tls": [tls], "rules": rules},
        }),
    ]
}

/// The NetworkPolicy of the member whose objects are called `name` (`<team>-<member>`):
/// connections to its pods come from its own pods, or from pods (in any namespace) that
/// are not part of `team`, never from another member's.
pub fn member_policy(team: &str, name: &str) -> Value {
    let labels =
        json!({"app.kubernetes.io/part-of": team, "app.kubernetes.io/managed-by": "tfimg"});
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [
                {"podSelector": {"matchLabels": {"app.kubernetes.io/name": name}}},
                {
                    "namespaceSelector": {},
                    "podSelector": {"matchExpressions": [{
                        "key": "app.kubernetes.io/part-of",
                        "operator": "NotIn",
                        "values": [team],
                    }]},
                },
            ]}],
        },
    })
}
