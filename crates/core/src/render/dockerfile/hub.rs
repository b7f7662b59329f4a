//! A team hub's images. The hub: JupyterHub, NativeAuthenticator, DockerSpawner and
//! jupyterhub-idle-culler from PyPI in a venv, configurable-http-proxy from npm, on the
//! registry-free Debian 12 base (its Node.js 18 is what configurable-http-proxy 5.1
//! needs), fetched through the same apt mirror, pip index and CA as spec builds. A
//! member's server: her spec's image with `jupyterhub-singleuser` and jupyter-server-proxy
//! added, which her Jupyter configuration turns on when the hub spawns it. Secrets are
//! never in either: the hub makes its own in its state volume.

use super::syntax::line;
use super::{extra_ca, pip_network_env, CA_PATH};
use crate::render::files::{ca_file, ContextFile};
use crate::render::{NetworkOptions, Rendered};

/// The base the hub's image starts from.
pub const HUB_BASE: &str = "debian:bookworm-slim";

/// What the hub runs, pinned: the newest that install on the hub's base and work with the
/// members' images (JupyterHub 5.5 still supports their Python 3.9, which 6 does not; Zero
/// to JupyterHub 4.x ships 5.5 too), and configurable-http-proxy's last release for
/// Node.js 18.
pub const JUPYTERHUB: &str = "jupyterhub==5.5.1";
pub const HUB_PACKAGES: [&str; 4] = [
    JUPYTERHUB,
    "jupyterhub-nativeauthenticator==1.3.0",
    "dockerspawner==14.0.0",
    "jupyterhub-idle-culler==2.0.0",
];
pub const PROXY: &str = "configurable-http-proxy@5.1.0";
/// Added to a member's image: the hub's single-user server (the hub's own version) and
/// TensorBoard behind it.
pub const MEMBER_PACKAGES: [&str; 2] = [JUPYTERHUB, "jupyter-server-proxy==4.4.0"];

/// Where the team's settings, certificate and key are put in the hub's container before it
/// starts (private to the hub), and where it keeps its state (a named volume).
pub const FOLDER: &str = "/etc/tfimg-hub";
pub const STATE: &str = "/srv/jupyterhub";
/// The hub's configuration and the password setter, in the image.
pub const SHARE: &str = "/usr/local/share/tfimg-hub";
pub const CONFIG: &str = "jupyterhub_config.py";
pub const PASSWD: &str = "passwd.py";
/// The file `tfimg hub passwd` copies the password into, which passwd.py removes.
pub const PASSWORD_FILE: &str = "password";
/// The hub's venv.
pub const VENV: &str = "/opt/jupyterhub";
/// Where the hub finds the tfimg that runs it (mounted read-only by `up`), which chooses
/// members' GPUs (`tfimg hub gpus`).
pub const TFIMG_IN_HUB: &str = "/usr/local/bin/tfimg";
/// NativeAuthenticator's minimum for a password a member chooses (the admin's too).
pub const MIN_PASSWORD: usize = 8;

const CONFIG_TEMPLATE: &str = include_str!("../templates/hub_config.py");
const PASSWD_TEMPLATE: &str = include_str!("../templates/hub_passwd.py");

/// The password setter, as the hub runs it (`tfimg k8s` mounts it into Zero to
/// JupyterHub's hub, whose database is at the same path).
pub fn passwd_script() -> String {
    fill(PASSWD_TEMPLATE)
}

fn fill(template: &str) -> String {
    template
        .replace("@FOLDER@", FOLDER)
        .replace("@STATE@", STATE)
        .replace("@PASSWORD@", &format!("{FOLDER}/{PASSWORD_FILE}"))
        .replace("@MIN_PASSWORD@", &MIN_PASSWORD.to_string())
        .replace("@TFIMG@", TFIMG_IN_HUB)
}

/// The hub's image build: its Dockerfile, configuration, password setter and the extra CA
/// when there is one.
pub fn hub(network: &NetworkOptions) -> Rendered {
    let mut files = ca_file(network);
    let has_ca = !files.is_empty();
    for (name, template) in [(CONFIG, CONFIG_TEMPLATE), (PASSWD, PASSWD_TEMPLATE)] {
        files.insert(
            name.to_string(),
            ContextFile {
                contents: fill(template).into_bytes(),
                mode: 0o644,
            },
        );
    }
    let mut w = String::new();
    line(
        &mut w,
        "# tfimg's team hub: JupyterHub with its proxy, configured per team at start.",
    );
    line(&mut w, &format!("FROM {HUB_BASE}"));
    line(&mut w, "ENV DEBIAN_FRONTEND=noninteractive");
    if has_ca {
        extra_ca(&mut w);
    }
    super::gateway::debian_packages(
        &mut w,
        network,
        has_ca,
        "ca-certificates python3 python3-venv nodejs npm",
        "",
        &[],
    );
    // The index and CA only for the installs: nothing of the build network stays in the
    // hub's environment.
    let pip_env: String = pip_network_env(network, has_ca)
        .into_iter()
        .map(|(key, value)| format!("{key}={value} "))
        .collect();
    line(
        &mut w,
        &format!(
            // Tornado's test suite ships a private key: no private key is in the hub's layers.
            "RUN env {pip_env}PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 sh -c 'python3 -m venv {VENV} && {VENV}/bin/pip install {} && find {VENV} -path \\*/test/\\* -name \\*.key -delete'",
            HUB_PACKAGES.join(" ")
        ),
    );
    let cafile = if has_ca {
        format!(" --cafile {}", super::SYSTEM_BUNDLE)
    } else {
        String::new()
    };
    line(
        &mut w,
        &format!(
            "RUN npm install -g{cafile} --no-fund --no-audit {PROXY} && npm cache clean --force"
        ),
    );
    line(&mut w, &format!("COPY {CONFIG} {PASSWD} {SHARE}/"));
    line(
        &mut w,
        &format!("RUN mkdir -p {FOLDER} {STATE} && chmod 700 {FOLDER} {STATE}"),
    );
    for text in [
        "LABEL io.tfimg.hub=image".to_string(),
        format!("ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
        format!("WORKDIR {STATE}"),
        format!("CMD [\"{VENV}/bin/jupyterhub\", \"-f\", \"{SHARE}/{CONFIG}\"]"),
    ] {
        line(&mut w, &text);
    }
    Rendered {
        dockerfile: w,
        files,
    }
}

/// A member's server image for the hub: `image` (her spec's, of in-image user `user`) with
/// the hub's single-user server and jupyter-server-proxy installed into its venv, under the
/// image's own pins (PIP_CONSTRAINT), through the same index and CA.
pub fn member(image: &str, user: &str, network: &NetworkOptions) -> Rendered {
    let files = ca_file(network);
    let has_ca = !files.is_empty();
    let mut w = String::new();
    line(
        &mut w,
        "# A member's server for a team hub: her spec's image and `jupyterhub-singleuser`.",
    );
    line(&mut w, &format!("FROM {image}"));
    line(&mut w, "USER root");
    let mut install = String::from("RUN ");
    if has_ca {
        line(
            &mut w,
            &format!("COPY {} {CA_PATH}", crate::render::files::CA_CERTIFICATES),
        );
        install.push_str("update-ca-certificates >/dev/null && ");
    }
    let pip_env: String = pip_network_env(network, has_ca)
        .into_iter()
        .map(|(key, value)| format!("{key}={value} "))
        .collect();
    install.push_str(&format!(
        "env {pip_env}pip install {}",
        MEMBER_PACKAGES
            .iter()
            .map(|package| format!("'{package}'"))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    line(&mut w, &install);
    line(&mut w, "LABEL io.tfimg.hub=member");
    line(&mut w, &format!("USER {user}"));
    Rendered {
        dockerfile: w,
        files,
    }
}

#[cfg(test)]
mod tests;
