//! The team gateway's Dockerfile: nginx from Debian's packages on the registry-free base
//! `tfimg base bootstrap` makes, fetched through the same apt mirror and CA as spec
//! builds. Its configuration, certificate and key are copied into each team's container
//! before it starts, never into the image.

use super::syntax::line;
use super::{apt_mirror, apt_options, extra_ca};
use crate::render::files::ca_file;
use crate::render::{NetworkOptions, Rendered};

/// The base every gateway image starts from.
pub const GATEWAY_BASE: &str = "debian:bullseye-slim";

/// Debian's `www-data`: nginx runs as this user, without root or any capability.
pub const GATEWAY_UID: u32 = 33;

/// The port nginx listens on inside its container (unprivileged: it runs without root).
pub const LISTEN_PORT: u16 = 8443;

/// Where the configuration, certificate and key are put in the gateway's container (the
/// image makes it, private to `GATEWAY_UID`), and the configuration's name in it, which
/// the image's command reads. `team::gateway::nginx` writes what goes there.
pub const FOLDER: &str = "/etc/tfimg-gateway";
pub const CONFIG: &str = "nginx.conf";

/// One RUN installing Debian's `packages` (through the network's mirror and CA) with no
/// service started meanwhile (policy-rc.d) and none left enabled, the lists and the
/// policy removed with `also_remove`, then the RUN's further ` && ...` `steps`.
pub(super) fn debian_packages(
    w: &mut String,
    network: &NetworkOptions,
    has_ca: bool,
    packages: &str,
    also_remove: &str,
    steps: &[String],
) {
    line(
        w,
        "# No service starts during the build (policy-rc.d), and none is left enabled.",
    );
    let options = apt_options(network, has_ca);
    match &network.apt_mirror {
        Some(mirror) => {
            apt_mirror(w, mirror);
            line(
                w,
                " && printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d \\",
            );
        }
        None => line(
            w,
            "RUN printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d \\",
        ),
    }
    let last = if steps.is_empty() { "" } else { " \\" };
    for step in [
        " && chmod 755 /usr/sbin/policy-rc.d \\".to_string(),
        format!(" && apt-get{options} update \\"),
        format!(" && apt-get{options} install -y --no-install-recommends {packages} \\"),
        format!(" && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d{also_remove}{last}"),
    ]
    .iter()
    .chain(steps)
    {
        line(w, step);
    }
}

/// The gateway image's build: its Dockerfile, and the extra CA when there is one.
pub fn gateway(network: &NetworkOptions) -> Rendered {
    let files = ca_file(network);
    let has_ca = !files.is_empty();
    let mut w = String::new();
    line(
        &mut w,
        "# tfimg's team gateway: nginx from Debian's packages, configured per team at start.",
    );
    line(&mut w, &format!("FROM {GATEWAY_BASE}"));
    line(&mut w, "ENV DEBIAN_FRONTEND=noninteractive");
    if has_ca {
        extra_ca(&mut w);
    }
    let steps = [
        // nginx opens its built-in error log before it reads the configuration: as any
        // user (Compose runs it as the host's), that open reaches the container's stderr.
        " && ln -sf /dev/stderr /var/log/nginx/error.log \\".to_string(),
        format!(" && mkdir -p {FOLDER} \\"),
        format!(" && chown {GATEWAY_UID}:{GATEWAY_UID} {FOLDER} /var/log/nginx /var/lib/nginx \\"),
        format!(" && chmod 700 {FOLDER}"),
    ];
    debian_packages(
        &mut w,
        network,
        has_ca,
        "nginx-light",
        " /etc/nginx/sites-enabled/default",
        &steps,
    );
    for text in [
        "LABEL io.tfimg.gateway=image".to_string(),
        format!("EXPOSE {LISTEN_PORT}"),
        "# SIGQUIT: nginx finishes the requests it is serving before it stops.".to_string(),
        "STOPSIGNAL SIGQUIT".to_string(),
        format!("USER {GATEWAY_UID}:{GATEWAY_UID}"),
        format!("CMD [\"nginx\", \"-c\", \"{FOLDER}/{CONFIG}\", \"-g\", \"daemon off;\"]"),
    ] {
        line(&mut w, &text);
    }
    Rendered {
        dockerfile: w,
        files,
    }
}

#[cfg(test)]
mod tests;
