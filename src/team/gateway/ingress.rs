//! A team's gateway on Kubernetes: an Ingress routing each member's path (`/alice/`) or
//! host name (`alice.DOMAIN`) to the member's Service, with TLS from a `kubernetes.io/tls`
//! Secret holding the team's certificate. The cluster's ingress controller is the proxy;
//! each Jupyter still checks its own token under its base URL. TensorBoard has no login
//! and stays out of the Services, so it stays out of the Ingress too. Pure.

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
                // ingress-nginx: kernels' WebSockets stay open a day, uploads of any size.
                "annotations": {
                    "nginx.ingress.kubernetes.io/proxy-read-timeout": "86400",
                    "nginx.ingress.kubernetes.io/proxy-send-timeout": "86400",
                    "nginx.ingress.kubernetes.io/proxy-body-size": "0",
                },
            },
            "spec": {"tls": [tls], "rules": rules},
        }),
    ]
}
