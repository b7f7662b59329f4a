//! A team with `hub:` on Kubernetes: Helm values for Zero to JupyterHub (the `jupyterhub`
//! chart, 4.x: JupyterHub 5.5 with KubeSpawner 7 and NativeAuthenticator in its hub
//! image). The same front door as `tfimg up`'s hub: the file's members only, nobody
//! signing up, its admins, and a KubeSpawner profile per member (her server image, GPU,
//! memory and CPU limits, environment) that only she is offered; her folder is her own
//! claim; the idle culler with the file's `idle: containers`. Pure: launch plans in, YAML
//! out.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{Hub, NOT_IN_HUB};
use crate::plan::gpus::GpuPlan;
use crate::plan::LaunchPlan;

/// The chart these values are written for (and validated against, in the tests).
pub const CHART_VERSION: &str = "4.4.0";

/// One server a member the hub serves may start: her name, the spec's name and her launch
/// plan on it (its image is the server image, `tfimg/hub-member:<spec>-<tensorflow>`). A
/// member with `choices:` has one per spec, her `spec` first.
pub struct HubMember<'a> {
    pub name: &'a str,
    pub spec: &'a str,
    pub plan: &'a LaunchPlan,
}

/// What `tfimg k8s` was told.
pub struct ValuesOptions<'a> {
    pub team: &'a str,
    pub file: &'a str,
    /// Prefix for image references (`registry.example:5000`).
    pub registry: Option<&'a str>,
    pub uid: u32,
    pub gid: u32,
    /// Size of each member's claim.
    pub volume_size: &'a str,
    /// Where a member's folder is mounted in her server (her spec's workdir + `/work`).
    pub work: &'a str,
    pub idle_servers: Option<u64>,
}

/// Where the values mount tfimg's password setter in the hub's pod.
pub const PASSWD_PATH: &str = "/usr/local/etc/tfimg/passwd.py";

/// The extra configuration the values carry (Python run by the chart's hub after its own).
const TEMPLATES: &str = "import os\nimport nativeauthenticator\n\n# NativeAuthenticator's own login and password pages.\nc.JupyterHub.template_paths = [os.path.join(os.path.dirname(nativeauthenticator.__file__), \"templates\")]\n";
const OWN_PROFILES: &str = "# Each member is offered her own servers' profiles only (their slugs are `NAME.SPEC`; member\n# names have no dot), her spec first.\ntfimg_profiles = list(c.KubeSpawner.profile_list)\n\n\ndef tfimg_own_profiles(spawner):\n    return [profile for profile in tfimg_profiles if profile[\"slug\"].split(\".\", 1)[0] == spawner.user.name]\n\n\nc.KubeSpawner.profile_list = tfimg_own_profiles\n";

/// The Helm values, as YAML with a header saying how to install them.
pub fn values(hub: &Hub, members: &[HubMember<'_>], options: &ValuesOptions<'_>) -> String {
    let image = |plan: &LaunchPlan| match options.registry {
        Some(registry) => format!("{}/{}", registry.trim_end_matches('/'), plan.image),
        None => plan.image.clone(),
    };
    let profiles: Vec<Value> = members
        .iter()
        .map(|member| profile(member, &image(member.plan)))
        .collect();
    let mut names: Vec<&str> = members.iter().map(|member| member.name).collect();
    names.dedup();
    let (default_name, default_tag) = members
        .first()
        .map(|member| {
            let reference = image(member.plan);
            match reference.rsplit_once(':') {
                Some((name, tag)) if !tag.contains('/') => (name.to_string(), tag.to_string()),
                _ => (reference, "latest".to_string()),
            }
        })
        .unwrap_or_else(|| ("tfimg/hub-member".to_string(), "latest".to_string()));
    let mut values = json!({
        "hub": {
            "config": {
                "JupyterHub": {"authenticator_class": "native"},
                "Authenticator": {
                    "allowed_users": names,
                    "admin_users": hub.admins,
                    "allow_existing_users": false,
                },
                "NativeAuthenticator": {
                    "enable_signup": false,
                    "open_signup": false,
                    "minimum_password_length": crate::render::dockerfile::hub::MIN_PASSWORD,
                    "check_common_password": true,
                },
            },
            "extraConfig": {
                "tfimg-native-templates": TEMPLATES,
                "tfimg-own-profiles": OWN_PROFILES,
            },
            "extraFiles": {
                "tfimg-passwd": {
                    "mountPath": PASSWD_PATH,
                    "stringData": crate::render::dockerfile::hub::passwd_script(),
                },
            },
        },
        "singleuser": {
            "image": {"name": default_name, "tag": default_tag},
            "cmd": "jupyterhub-singleuser",
            "defaultUrl": "/lab",
            "uid": options.uid,
            "fsGid": options.gid,
            "extraEnv": {super::HUB_MODE_ENV: "1"},
            "storage": {
                "type": "dynamic",
                "capacity": options.volume_size,
                "homeMountPath": options.work,
            },
            "profileList": profiles,
        },
        "cull": {"enabled": options.idle_servers.is_some()},
    });
    if let Some(seconds) = options.idle_servers {
        values["cull"]["timeout"] = json!(seconds);
        values["cull"]["every"] = json!((seconds / 4).clamp(10, 300));
    }
    let header = format!(
        "# Generated by tfimg from `{file}` (team `{team}`): Zero to JupyterHub values, for the\n# `jupyterhub` Helm chart {CHART_VERSION} on a cluster with the NVIDIA device plugin.\n#   helm upgrade --install {team} jupyterhub --repo https://hub.jupyter.org/helm-chart/ --version {CHART_VERSION} --values {team}.hub-values.yaml\n# Members sign in at the proxy's address (`/hub/login`), with a first password set by\n#   kubectl exec -i deploy/hub -- python3 {PASSWD_PATH} MEMBER - < first-password.txt\n# which she then changes at /hub/change-password.\n",
        file = options.file,
        team = options.team,
    );
    header + &serde_yaml::to_string(&values).expect("plain values serialise")
}

/// A member's KubeSpawner profile: her server image, limits and environment.
fn profile(member: &HubMember<'_>, image: &str) -> Value {
    let plan = member.plan;
    let mut overrides = serde_json::Map::new();
    overrides.insert("image".to_string(), json!(image));
    let environment: BTreeMap<&str, &str> = plan
        .env
        .iter()
        .filter_map(|pair| pair.split_once('='))
        // The pod's user is the chart's `uid`/`fsGid`: no ids to map.
        .filter(|(key, _)| !NOT_IN_HUB.contains(key) && !["TFIMG_UID", "TFIMG_GID"].contains(key))
        .collect();
    if !environment.is_empty() {
        overrides.insert("environment".to_string(), json!(environment));
    }
    if let Some(memory) = plan.memory {
        overrides.insert("mem_limit".to_string(), json!(memory));
    }
    if let Some(nano) = plan.nano_cpus {
        overrides.insert("cpu_limit".to_string(), json!(nano as f64 / 1e9));
    }
    if let GpuPlan::Request(request) = &plan.gpu {
        // The device plugin hands out counts; named devices become their number.
        let count = match request.count {
            Some(count) if count > 0 => count,
            Some(_) => 1,
            None => request.device_ids.len().max(1) as i64,
        };
        overrides.insert(
            "extra_resource_limits".to_string(),
            json!({"nvidia.com/gpu": count.to_string()}),
        );
    }
    json!({
        "display_name": format!("{} ({})", member.name, member.spec),
        "slug": format!("{}.{}", member.name, member.spec),
        "description": format!("{}'s server: {}", member.name, member.spec),
        "kubespawner_override": overrides,
    })
}

#[cfg(test)]
mod tests;
