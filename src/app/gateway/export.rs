//! The gateway in the exports: an Ingress for Kubernetes, a service for Compose.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{backends, gateway_certificate, request};
use crate::app::launch;
use crate::host::prelude::{FileWrites, Files, Ports, Secrets};
use crate::labels;
use crate::plan::mounts::MountPlan;
use crate::plan::ports::PortPlan;
use crate::plan::LaunchPlan;
use crate::spec::ResolvedSpec;
use crate::team::gateway::ingress::IngressPlan;
use crate::team::gateway::nginx::{self, GATEWAY_UID};
use crate::team::gateway::{Route, LISTEN_PORT};
use crate::team::Team;

/// The gateway on Kubernetes: each Jupyter member serves under its base URL, and the
/// Ingress routes to the members' Services with the team's certificate.
pub fn k8s_export(
    host: &(impl Files + Secrets + FileWrites),
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    plans: &mut crate::app::team::MemberPlans,
) -> anyhow::Result<Option<IngressPlan>> {
    let Some(gateway) = &team.gateway else {
        return Ok(None);
    };
    let backends = backends(team, specs);
    for (member, plan) in plans.iter_mut() {
        if backends.iter().any(|backend| backend.member == *member) {
            plan.env.push(format!(
                "{}={}",
                labels::JUPYTER_BASE_URL_VARIABLE,
                gateway.base_url(member)
            ));
            if gateway.route == Route::Host {
                plan.env
                    .push(format!("{}=1", labels::JUPYTER_HOST_COOKIES_VARIABLE));
            }
            plan.env.sort();
        }
    }
    let (cert, key) = gateway_certificate(host, team, gateway)?;
    Ok(Some(IngressPlan {
        gateway: gateway.clone(),
        backends,
        cert_pem: String::from_utf8_lossy(&cert).into_owned(),
        key_pem: String::from_utf8_lossy(&key).into_owned(),
    }))
}

/// The gateway in a Compose export: its service's plan and the files it reads.
#[derive(Debug)]
pub struct ComposeGateway {
    pub plan: LaunchPlan,
    /// The folder beside the Compose file the service mounts read-only.
    pub folder: PathBuf,
    /// nginx.conf, the certificate and its key (name, bytes, private).
    pub files: Vec<(&'static str, Vec<u8>, bool)>,
    /// Who owns the folder and its files: the user the service runs as.
    pub owner: (u32, u32),
}

/// The gateway as a Compose service beside the members' (`export_plans` with
/// `behind_gateway`): nginx as the user who runs Compose (`ids`), so it reads the key
/// that only they may read, from `folder` mounted read-only; its one port as the file
/// says, even when `up`'s gateway holds it now. `ids` of root become the image's user.
pub fn compose_export(
    host: &(impl Secrets + Ports + Files + FileWrites),
    team: &Team,
    specs: &BTreeMap<String, ResolvedSpec>,
    image: &str,
    ids: (u32, u32),
    folder: &Path,
) -> anyhow::Result<Option<ComposeGateway>> {
    let Some(gateway) = &team.gateway else {
        return Ok(None);
    };
    // nginx never runs as root (its workers would switch to `nobody`): root's export runs
    // it as the image's user, who is then given the files.
    let ids = if ids.0 == 0 {
        (GATEWAY_UID, GATEWAY_UID)
    } else {
        ids
    };
    let mut request = request(team, gateway, image, "");
    request.ids = Some(ids);
    request.port_requests.clear();
    request.network = None;
    let reserved = RefCell::new(BTreeSet::new());
    let mut plan = launch::plan_without_engine(host, request, &reserved)?;
    plan.labels.remove(labels::MEMBER_HASH);
    let host_ip = if gateway.public {
        "0.0.0.0"
    } else {
        "127.0.0.1"
    };
    plan.ports = vec![PortPlan {
        name: "gateway".to_string(),
        container: LISTEN_PORT,
        host_ip: host_ip.to_string(),
        host: gateway.port,
        tunneled: false,
    }];
    let published = labels::PublishedPort {
        name: "gateway".to_string(),
        host_ip: host_ip.to_string(),
        host: gateway.port,
        container: LISTEN_PORT,
    };
    plan.labels.insert(
        labels::PORTS.to_string(),
        labels::encode_ports(&[published]),
    );
    let folder = folder.join(format!("{}.gateway", team.name));
    plan.mounts = vec![MountPlan {
        source: folder.clone(),
        target: nginx::FOLDER.to_string(),
        read_only: true,
    }];
    let config = nginx::config(&team.name, gateway, &backends(team, specs));
    let (cert, key) = gateway_certificate(host, team, gateway)?;
    Ok(Some(ComposeGateway {
        plan,
        folder,
        owner: ids,
        files: vec![
            (nginx::CONFIG, config.into_bytes(), false),
            (nginx::CERT, cert, false),
            (nginx::KEY, key, true),
        ],
    }))
}
