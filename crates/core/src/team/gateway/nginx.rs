//! The gateway's nginx configuration, rendered from the team: TLS on one port, each
//! member's Jupyter (WebSockets included) and TensorBoard behind its host name or path.
//! Pure and deterministic: the same team gives byte-identical text.
//!
//! Trust boundary, member → member. The members of a team are different people; each
//! controls their own container and whatever listens in it (Jupyter's files, a page on
//! TensorBoard's port). This configuration is the one place that holds the boundary for
//! requests (the member networks of `app::gateway` hold it for connections: the gateway is
//! the only container on more than one). It:
//! - gives each member a browser origin of their own with host routing (the default), so
//!   `frame-ancestors 'self'` keeps one member's page from framing another's Jupyter;
//!   requests a page of another origin makes here (fetches, frames, sockets, form posts:
//!   `Sec-Fetch-*`) are refused, links still work. Path routing shares one origin and
//!   cannot hold this part;
//! - passes a member's servers only their own Jupyter's cookies (host routing): the two
//!   `__Host-` cookies it sets, which no page of a sibling host can set, so cookies another
//!   member's page sets for the team's whole domain (cookie tossing) reach no one;
//! - lets TensorBoard, which has no login, answer only when the member's Jupyter accepts
//!   the request's cookie, `Authorization` header or `?token=` (`auth_request`), and
//!   hands on the login cookie that Jupyter sets when it accepts a token, so the token
//!   link opens TensorBoard from a fresh browser (a cookie of the member's own host or
//!   path, which the member's own servers can set anyway);
//! - reads no request body before the member's Jupyter has accepted the request, never
//!   writes one to disk, and takes at most Jupyter's own limit;
//! - logs no request line, query or referrer (a `?token=` would be in them).
//!
//! Upstreams are named through variables and Docker's embedded DNS (127.0.0.11), so a
//! member that is down answers 502 instead of making the whole configuration fail to load
//! or reload.

use std::fmt::Write;

use super::{Gateway, Route, LISTEN_PORT};
// The image's side of the contract (its user, folder and command) is its Dockerfile's.
pub use crate::render::dockerfile::gateway::{CONFIG, FOLDER, GATEWAY_UID};
// Jupyter's side: the names its own cookies have behind a gateway routing by host.
use crate::labels::{JUPYTER_LOGIN_COOKIE, JUPYTER_XSRF_COOKIE};

/// The certificate's and the key's names in `FOLDER`, beside the configuration.
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

/// The largest request body passed to a member: Jupyter's own `max_body_size` (512 MiB),
/// above which it refuses the request anyway. JupyterLab uploads large files in chunks of
/// 1 MiB; a notebook is saved whole, so this is the largest notebook that can be saved.
pub const MAX_BODY: &str = "512m";

/// A member's pages are framed by their own origin only (the `http` block says it; a
/// location with an `add_header` of its own says it again, as nginx inherits none then).
const FRAME_ANCESTORS: &str =
    "add_header Content-Security-Policy \"frame-ancestors 'self'\" always;";

/// The largest body of Jupyter's login form, posted before there is a cookie (a token).
const LOGIN_BODY: &str = "16k";

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
    let mut text = head(team, gateway.route);
    match gateway.route {
        Route::Path => {
            text.push_str(&server_start("_", Some(&index(team, gateway, backends))));
            for (index, backend) in backends.iter().enumerate() {
                let prefix = format!("/{}/", backend.member);
                let _ = writeln!(
                    text,
                    "        location = /{0} {{ return 301 /{0}/; }}",
                    backend.member
                );
                text.push_str(&locations(backend, index, &prefix));
            }
            text.push_str("    }\n");
        }
        Route::Host => {
            let domain = gateway.domain.as_deref().unwrap_or("localhost");
            text.push_str(&server_start("_", Some(&index(team, gateway, backends))));
            text.push_str("    }\n");
            for (index, backend) in backends.iter().enumerate() {
                let name = format!("{}.{domain}", backend.member);
                text.push_str(&server_start(&name, None));
                text.push_str(&locations(backend, index, "/"));
                text.push_str("    }\n");
            }
        }
    }
    text.push_str("}\n");
    text
}

/// Everything before the servers: a process without root, logs without tokens, bodies
/// bounded and never buffered, the browser rules, the cookies a member is given, and the
/// proxy settings every location shares.
fn head(team: &str, route: Route) -> String {
    let cookies = cookies(route);
    format!(
        "# The gateway of team `{team}`, rendered by tfimg from the team file: edit that, not this.
# It holds the member -> member boundary: members are different people, and each controls
# what their own container serves. See tfimg's crates/core/src/team/gateway/nginx.rs.
worker_processes 2;
pid /tmp/nginx.pid;
# Start, reload and configuration errors. Requests are logged in `http` below.
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
    server_tokens off;
    absolute_redirect off;

    # No log holds a request line, a query or a referrer: a `?token=` would be in them.
    # nginx's per-request errors quote the request line, so only critical ones are
    # logged; a failed request (5xx) is logged as its path, status and upstream instead.
    error_log stderr crit;
    # The path as the client asked it, without the query ($uri changes when an error page
    # takes over).
    map $request_uri $tfimg_path {{
        \"~^(?<path>[^?]*)\" $path;
    }}
    log_format tfimg '$time_iso8601 $host \"$request_method $tfimg_path\" $status upstream=$upstream_addr status=$upstream_status';
    map $status $tfimg_failed {{
        ~^5 1;
        default 0;
    }}
    access_log /dev/stderr tfimg if=$tfimg_failed;

    # Bodies: none is read before the member's Jupyter accepts the request (see the
    # `tfimg-body-auth-*` locations), none is written to a file here (streamed to the
    # member as it comes), and none is larger than Jupyter itself takes.
    client_max_body_size {MAX_BODY};
    proxy_request_buffering off;
    map \"$http_content_length$http_transfer_encoding\" $tfimg_bodyless {{
        \"\" 1;
        0 1;
        default 0;
    }}

    # A member's pages are framed by their own origin only, and what a page of another
    # origin asks here (fetches, frames, sockets, form posts; browsers say so in
    # Sec-Fetch-*) is refused: with host routing another member's page is such a page.
    # Following a link (a GET navigation) still works.
    {FRAME_ANCESTORS}
    map \"$request_method $http_sec_fetch_site $http_sec_fetch_mode $http_sec_fetch_dest\" $tfimg_foreign {{
        default 0;
        \"~^(GET|HEAD) [a-z-]+ navigate document$\" 0;
        \"~^[A-Z]+ (same-site|cross-site) \" 1;
    }}

    # The credentials Jupyter is asked about for a request: its `?token=` (kept in
    # $tfimg_token by the location), else its own `Authorization` header, with the
    # member's cookies ($tfimg_cookies).
    map $tfimg_token $tfimg_authorization {{
        \"\" $http_authorization;
        default \"token $tfimg_token\";
    }}

{cookies}
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
    proxy_set_header Cookie $tfimg_cookies;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection $connection_upgrade;
    proxy_set_header X-Real-IP $remote_addr;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_read_timeout 1d;
    proxy_send_timeout 1d;
    # A member whose container just stopped keeps its address in the resolver's cache for
    # a few seconds: its requests fail (504) after 5 s instead of nginx's 60.
    proxy_connect_timeout 5s;
    proxy_buffering off;

    ssl_certificate {FOLDER}/{CERT};
    ssl_certificate_key {FOLDER}/{KEY};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:tls:1m;
"
    )
}

/// The `$tfimg_cookies` a member's servers are given. Routing by host, every member has a
/// host of their own, but their hosts are siblings under the team's domain, and a page on
/// one may set cookies for the whole domain (cookie tossing), which the browser then
/// sends to every member. So a member's servers get only their Jupyter's own two cookies,
/// which it names `__Host-...`: a browser takes such a cookie only from the very host it
/// is sent to (over HTTPS, for `/`, never with a `Domain`), so no other member's page can
/// have set it. Routing by path, the team shares one origin, where no cookie is anyone's
/// own: they pass as they are.
fn cookies(route: Route) -> String {
    match route {
        Route::Path => {
            "    # Cookies: the whole team shares one origin, where a path is no boundary; they
    # pass as they are.
    map $http_cookie $tfimg_cookies {
        default $http_cookie;
    }
"
            .to_string()
        }
        Route::Host => format!(
            "    # Cookies: a member's servers get only the two cookies their Jupyter sets, both
    # `__Host-` cookies, which a browser takes only from the member's own host. Cookies a
    # page on another member's host sets for the whole team's domain never reach them.
    map $http_cookie $tfimg_login_cookie {{
        default \"\";
        \"~(?:^|;) *(?<tfimg_login>{JUPYTER_LOGIN_COOKIE}=[^;]*)\" $tfimg_login;
    }}
    map $http_cookie $tfimg_xsrf_cookie {{
        default \"\";
        \"~(?:^|;) *(?<tfimg_xsrf>{JUPYTER_XSRF_COOKIE}=[^;]*)\" $tfimg_xsrf;
    }}
    map \"$tfimg_login_cookie;$tfimg_xsrf_cookie\" $tfimg_cookies {{
        \";\" \"\";
        \"~^;(?<tfimg_one>.+)$\" $tfimg_one;
        \"~^(?<tfimg_one>.+);$\" $tfimg_one;
        default \"$tfimg_login_cookie; $tfimg_xsrf_cookie\";
    }}
"
        ),
    }
}

/// A server on the one port. The default one (`index` is its page) shows the index at
/// `/` and answers 404 to what no member's name (or, with path routing, no member's
/// path) matches.
fn server_start(name: &str, index: Option<&str>) -> String {
    let flag = if index.is_some() {
        " default_server"
    } else {
        ""
    };
    let mut text = format!(
        "\n    server {{\n        listen {LISTEN_PORT} ssl{flag};\n        server_name {name};\n        if ($tfimg_foreign) {{ return 403; }}\n"
    );
    if let Some(index) = index {
        // `$tfimg_token` is named here too, so the configuration loads with no Jupyter
        // member at all.
        text.push_str("        set $tfimg_token \"\";\n        location / { return 404; }\n");
        let _ = writeln!(
            text,
            "        location = / {{\n            default_type text/html;\n            return 200 \"{index}\";\n        }}"
        );
    }
    text
}

/// The index page's look: readable, no script, nothing fetched.
const INDEX_STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#1f2328}h1{font-size:1.6rem}ul{padding:0;list-style:none}li{padding:.6rem .8rem;margin:.4rem 0;border:1px solid #d0d7de;border-radius:6px}code{background:#f6f8fa;padding:.1rem .3rem;border-radius:4px}a{color:#0969da}";

/// The gateway's own page: the team's members and where each one's Jupyter and
/// TensorBoard are, and no token (each member signs in with the one `tfimg up` printed
/// for them). Team and member names are DNS labels (checked with the team file), so they
/// need no escaping in HTML or in nginx's double-quoted string.
fn index(team: &str, gateway: &Gateway, backends: &[Backend]) -> String {
    let link = |member: &str, service: &str| match gateway.route {
        Route::Path => format!(
            "{}{}",
            gateway.base_url(member),
            if service == "tensorboard" {
                "tensorboard/"
            } else {
                "lab"
            }
        ),
        Route::Host => gateway.url(member, service),
    };
    let mut items = String::new();
    for backend in backends.iter().filter(|backend| backend.jupyter.is_some()) {
        let member = &backend.member;
        let jupyter = link(member, "jupyter");
        let _ = write!(
            items,
            "<li><b>{member}</b>: Jupyter <a href='{jupyter}'>{jupyter}</a>"
        );
        if backend.tensorboard.is_some() {
            let tensorboard = link(member, "tensorboard");
            let _ = write!(
                items,
                ", TensorBoard <a href='{tensorboard}'>{tensorboard}</a>"
            );
        }
        items.push_str("</li>");
    }
    if items.is_empty() {
        items.push_str("<li>no member serves Jupyter</li>");
    }
    format!(
        "<!doctype html><html><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'><title>{team}</title><style>{INDEX_STYLE}</style></head><body><h1>Team {team}</h1><p><b>How to sign in:</b> open the Jupyter or TensorBoard link <code>tfimg up</code> printed for you: it carries your token, and once it opened, these links work in the same browser. Lost it? Whoever runs the team sees it again with <code>tfimg up</code> on the server. This page holds no token.</p><ul>{items}</ul><p>A TensorBoard answers a few seconds after its member starts.</p></body></html>"
    )
}

/// A member's Jupyter at `prefix` (bodies only once Jupyter accepts the request), its
/// login form, its TensorBoard at `prefix`tensorboard/ (every request only once Jupyter
/// accepts it), and the internal locations that ask Jupyter (`api/me`, which answers 403
/// without a login).
fn locations(backend: &Backend, index: usize, prefix: &str) -> String {
    let mut text = String::new();
    let container = &backend.container;
    let Some(jupyter) = backend.jupyter else {
        return text;
    };
    let upstream = format!("{container}:{jupyter}");
    let _ = write!(
        text,
        "        # `{member}`: Jupyter serves under {prefix}
        location {prefix} {{
            set $tfimg_token $arg_token;
            auth_request /tfimg-body-auth-{index};
            set $jupyter_{index} {upstream};
            proxy_pass http://$jupyter_{index};
            error_page 502 504 = /tfimg-down-{index};
        }}
        location = /tfimg-down-{index} {{
            internal;
            default_type text/plain;
            return 503 \"The Jupyter of `{member}` does not answer: it is starting (a few seconds after `tfimg up`) or its container stopped (`tfimg ps`). Reload in a few seconds.\\n\";
        }}
        location = {prefix}login {{
            client_max_body_size {LOGIN_BODY};
            set $jupyter_{index} {upstream};
            proxy_pass http://$jupyter_{index};
        }}
        location = /tfimg-body-auth-{index} {{
            internal;
            if ($tfimg_bodyless) {{ return 204; }}
{ask}        }}
",
        member = backend.member,
        ask = ask_jupyter(index, &upstream, prefix),
    );
    let Some(tensorboard) = backend.tensorboard else {
        return text;
    };
    let _ = write!(
        text,
        "        location {prefix}tensorboard/ {{
            set $tfimg_token $arg_token;
            auth_request /tfimg-auth-{index};
            # Jupyter's login cookie, which it sets when it accepts a `?token=`: TensorBoard's
            # own requests carry no token, so a fresh browser opening the token link is
            # signed in for them (and for Jupyter) as if it had opened Jupyter. An
            # `add_header` here replaces the server's: the frame rule is said again.
            auth_request_set $tfimg_signed_in_{index} $upstream_http_set_cookie;
            add_header Set-Cookie $tfimg_signed_in_{index};
            {FRAME_ANCESTORS}
            set $tensorboard_{index} {container}:{tensorboard};
            rewrite ^{prefix}tensorboard/(.*)$ /$1 break;
            proxy_cookie_path / {prefix}tensorboard/;
            proxy_pass http://$tensorboard_{index};
            error_page 502 504 = /tfimg-tensorboard-down-{index};
        }}
        location = /tfimg-tensorboard-down-{index} {{
            internal;
            default_type text/plain;
            return 503 \"The TensorBoard of `{member}` does not answer yet: it starts a few seconds after its container (or it stopped: `tfimg logs {container}`). Reload in a few seconds.\\n\";
        }}
        location = /tfimg-auth-{index} {{
            internal;
{ask}        }}
",
        member = backend.member,
        ask = ask_jupyter(index, &upstream, prefix),
    );
    text
}

/// The lines of an internal location that ask the member's Jupyter whether the request's
/// credentials are its member's, without the body.
fn ask_jupyter(index: usize, upstream: &str, base: &str) -> String {
    format!(
        "            proxy_pass_request_body off;
            proxy_set_header Content-Length \"\";
            proxy_set_header Host $http_host;
            proxy_set_header Cookie $tfimg_cookies;
            proxy_set_header Authorization $tfimg_authorization;
            set $status_{index} {upstream};
            proxy_pass http://$status_{index}{base}api/me;
"
    )
}
