//! The gateway's nginx configuration, rendered from the team: TLS on one port, each
//! member's Jupyter (WebSockets included) and TensorBoard behind its path or host name.
//! Pure and deterministic: the same team gives byte-identical text.
//!
//! Upstreams are named through variables and Docker's embedded DNS (127.0.0.11), so a
//! member that is down answers 502 instead of making the whole configuration fail to load
//! or reload. TensorBoard has no login of its own: its requests pass only when the member's
//! Jupyter accepts the same cookie, `Authorization` header or `?token=` (`auth_request`).

use std::fmt::Write;

use super::{Gateway, Route, LISTEN_PORT};

/// Debian's `www-data`: nginx runs as this user, without root or any capability.
pub const GATEWAY_UID: u32 = 33;

/// Where the configuration, certificate and key are put in the gateway's container.
pub const FOLDER: &str = "/etc/tfimg-gateway";
pub const CONFIG: &str = "nginx.conf";
pub const CERT: &str = "cert.pem";
pub const KEY: &str = "key.pem";

/// One member behind the gateway: its container's name on the team network and the
/// container ports of what it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backend {
    pub member: String,
    pub container: String,
    pub jupyter: Option<u16>,
    pub tensorboard: Option<u16>,
}

/// The command the gateway's container runs (nginx in the foreground, as its own user).
pub fn command() -> Vec<String> {
    [
        "nginx",
        "-c",
        &format!("{FOLDER}/{CONFIG}"),
        "-g",
        "daemon off;",
    ]
    .map(String::from)
    .to_vec()
}

/// What reloads the configuration: new workers take it, old ones finish their open
/// connections (a kernel's WebSocket stays up).
pub fn reload_command() -> Vec<String> {
    ["nginx", "-c", &format!("{FOLDER}/{CONFIG}"), "-s", "reload"]
        .map(String::from)
        .to_vec()
}

/// The gateway image's repository; its tag is the build key's first 12 hex digits
/// (`render::dockerfile::gateway` is its Dockerfile).
pub const GATEWAY_IMAGE: &str = "tfimg/gateway";

/// The names a self-signed certificate is made for: this machine, and the domain (with
/// every member's name under it when routing by host).
pub fn certificate_names(gateway: &Gateway) -> Vec<String> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    if let Some(domain) = &gateway.domain {
        names.push(domain.clone());
        if gateway.route == Route::Host {
            names.push(format!("*.{domain}"));
        }
    }
    names
}

/// The whole nginx.conf of `team`'s gateway.
pub fn config(team: &str, gateway: &Gateway, backends: &[Backend]) -> String {
    let mut text = head(team);
    match gateway.route {
        Route::Path => {
            text.push_str(&server_start("_", true));
            for (index, backend) in backends.iter().enumerate() {
                let prefix = format!("/{}/", backend.member);
                let _ = writeln!(
                    text,
                    "        location = /{0} {{ return 301 /{0}/; }}",
                    backend.member
                );
                text.push_str(&locations(backend, index, &prefix, gateway));
            }
            text.push_str("    }\n");
        }
        Route::Host => {
            let domain = gateway.domain.as_deref().unwrap_or("localhost");
            text.push_str(&server_start("_", true));
            text.push_str("    }\n");
            for (index, backend) in backends.iter().enumerate() {
                let name = format!("{}.{domain}", backend.member);
                text.push_str(&server_start(&name, false));
                text.push_str(&locations(backend, index, "/", gateway));
                text.push_str("    }\n");
            }
        }
    }
    text.push_str("}\n");
    text
}

/// Everything before the servers: a process without root, logs to the container's
/// stderr, and the proxy settings every location shares.
fn head(team: &str) -> String {
    format!(
        "# The gateway of team `{team}`, rendered by tfimg from the team file: edit that, not this.
worker_processes 2;
pid /tmp/nginx.pid;
error_log stderr notice;

events {{
    worker_connections 1024;
}}

http {{
    # Runs as an unprivileged user: every file nginx writes is under /tmp.
    client_body_temp_path /tmp/client_body;
    proxy_temp_path /tmp/proxy;
    fastcgi_temp_path /tmp/fastcgi;
    uwsgi_temp_path /tmp/uwsgi;
    scgi_temp_path /tmp/scgi;
    access_log off;
    server_tokens off;
    absolute_redirect off;
    # Notebook uploads of any size.
    client_max_body_size 0;
    # Docker's embedded DNS: members are found by container name when a request comes.
    resolver 127.0.0.11 valid=10s ipv6=off;

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        '' close;
    }}

    # WebSockets (kernels, terminals) pass through; the browser's Host reaches Jupyter,
    # whose WebSocket origin check compares it with the Origin header.
    proxy_http_version 1.1;
    proxy_set_header Host $http_host;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection $connection_upgrade;
    proxy_set_header X-Real-IP $remote_addr;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_read_timeout 1d;
    proxy_send_timeout 1d;
    proxy_buffering off;

    ssl_certificate {FOLDER}/{CERT};
    ssl_certificate_key {FOLDER}/{KEY};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:tls:1m;
"
    )
}

fn server_start(name: &str, default: bool) -> String {
    let flag = if default { " default_server" } else { "" };
    let mut text = format!(
        "\n    server {{\n        listen {LISTEN_PORT} ssl{flag};\n        server_name {name};\n"
    );
    if default {
        text.push_str("        location = / { return 404; }\n");
    }
    text
}

/// A member's Jupyter at `prefix`, its TensorBoard at `prefix`tensorboard/ (guarded by
/// its Jupyter's login), and the internal location that asks Jupyter.
fn locations(backend: &Backend, index: usize, prefix: &str, gateway: &Gateway) -> String {
    let mut text = String::new();
    let container = &backend.container;
    let Some(jupyter) = backend.jupyter else {
        return text;
    };
    let _ = writeln!(
        text,
        "        # `{member}`: Jupyter serves under {base}",
        member = backend.member,
        base = gateway.base_url(&backend.member)
    );
    let _ = write!(
        text,
        "        location {prefix} {{
            set $jupyter_{index} {container}:{jupyter};
            proxy_pass http://$jupyter_{index};
        }}
"
    );
    let Some(tensorboard) = backend.tensorboard else {
        return text;
    };
    let base = gateway.base_url(&backend.member);
    let _ = write!(
        text,
        "        location {prefix}tensorboard/ {{
            set $token_{index} $arg_token;
            auth_request /tfimg-auth-{index};
            set $tensorboard_{index} {container}:{tensorboard};
            rewrite ^{prefix}tensorboard/(.*)$ /$1 break;
            proxy_pass http://$tensorboard_{index};
        }}
        location = /tfimg-auth-{index} {{
            internal;
            proxy_pass_request_body off;
            proxy_set_header Content-Length \"\";
            set $status_{index} {container}:{jupyter};
            proxy_pass http://$status_{index}{base}api/status?token=$token_{index};
        }}
"
    );
    text
}
