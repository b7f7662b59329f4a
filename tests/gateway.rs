//! A team behind its gateway, on the real Engine: three Jupyter members reached through
//! one TLS port (nginx from Debian's packages, built by tfimg), each on a host name of its
//! own under `<team>.localhost` and with its own token, a kernel run over its WebSocket
//! through the proxy by a real client, and nothing left after `down`. Then the
//! member → member boundary, with two members: Bob in headless Chromium opening a page
//! Alice serves from her own container, Alice's container trying Bob's ports, bodies
//! sent without a token, and a token that must not reach the gateway's logs.

mod common;

use common::browser::Browser;
use common::cli::free_port;
use common::compose::ComposeGuard;
use common::{docker, scratch, tfimg_with_env, unique, DockerGuard, HOST_CA};

/// The token in a member's row of `up`'s table.
fn token_of(table: &str, member: &str) -> String {
    let line = table
        .lines()
        .find(|line| line.split_whitespace().next() == Some(member))
        .unwrap_or_else(|| panic!("no `{member}` row in:\n{table}"));
    let url = access_of(line);
    url.split("token=").nth(1).unwrap().to_string()
}

/// The ACCESS column of a row of `up`'s table: the URL with the token.
fn access_of(line: &str) -> &str {
    line.split_whitespace()
        .find(|field| field.contains("?token="))
        .unwrap_or_else(|| panic!("no URL with a token in: {line}"))
}

fn team_file(team: &str, spec: &str, port: u16, members: &[&str]) -> String {
    team_file_with(team, spec, &format!("  port: {port}\n"), members)
}

/// A team of `spec` members under `gateway:` with `gateway` (its indented lines).
fn team_file_with(team: &str, spec: &str, gateway: &str, members: &[&str]) -> String {
    let mut text = format!("team: {team}\ndefaults:\n  spec: {spec}\nmembers:\n");
    for member in members {
        text.push_str(&format!("  - name: {member}\n"));
    }
    text.push_str(&format!("gateway:\n{gateway}"));
    text
}

/// A member's Jupyter address through the gateway, from its row of `up`'s table (its URL
/// without `lab?token=...`), ending in `/`.
fn base_of(table: &str, member: &str) -> String {
    let line = table
        .lines()
        .find(|line| line.split_whitespace().next() == Some(member))
        .unwrap_or_else(|| panic!("no `{member}` row in:\n{table}"));
    access_of(line)
        .split("lab?token=")
        .next()
        .unwrap()
        .to_string()
}

/// The Python client (`fixtures/gateway/client.py`) in containers of the members' image
/// on the host's network, named `<team>-<name>`.
struct Client<'a> {
    team: &'a str,
    spec: &'a str,
    port: u16,
    check: &'a std::path::Path,
    /// A member's address with `{member}` in it.
    base: String,
}

impl Client<'_> {
    fn args(&self, name: &str, detach: bool, mode: &str, tokens: &[String]) -> Vec<String> {
        let mut args: Vec<String> = vec!["run".into()];
        if detach {
            args.push("-d".into());
        } else {
            args.push("--rm".into());
        }
        let image = format!("tfimg/{}:2.9.3", self.spec);
        args.extend(
            [
                "--name",
                &format!("{}-{name}", self.team),
                "--network",
                "host",
                "-v",
                &format!("{}:/check", self.check.display()),
                "--entrypoint",
                "python3",
                &image,
                "/check/client.py",
                mode,
                &self.port.to_string(),
                "/check/cert.pem",
                &self.base,
            ]
            .map(String::from),
        );
        args.extend(tokens.iter().cloned());
        args
    }

    /// Runs it to the end: its JSON lines.
    fn run(&self, name: &str, mode: &str, tokens: &[String]) -> Vec<serde_json::Value> {
        let args = self.args(name, false, mode, tokens);
        let output = docker(&args.iter().map(String::as_str).collect::<Vec<_>>());
        output
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("{output}")))
            .collect()
    }

    fn start(&self, name: &str, mode: &str, tokens: &[String]) {
        let args = self.args(name, true, mode, tokens);
        let id = docker(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(!id.trim().is_empty(), "the {name} client starts");
    }

    /// The first JSON line of a detached client's output with `key`.
    fn wait_for_line(&self, name: &str, key: &str) -> serde_json::Value {
        let container = format!("{}-{name}", self.team);
        let started = std::time::Instant::now();
        loop {
            // Its JSON lines on stdout; a traceback on stderr shows in the failure.
            let logs = logs_of(&container);
            let found = logs
                .lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .find(|line| line.get(key).is_some());
            if let Some(line) = found {
                return line;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(300),
                "no `{key}` from {container}: {logs}"
            );
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
}

/// Removes the team's networks (the gateway's and the members') when dropped, after the
/// containers' guard.
struct NetworkGuard(String);

impl Drop for NetworkGuard {
    fn drop(&mut self) {
        let label = format!("label=io.tfimg.team={}", self.0);
        for network in docker(&["network", "ls", "-q", "--filter", &label]).split_whitespace() {
            docker(&["network", "rm", network]);
        }
        docker(&["network", "rm", &format!("tfimg-{}", self.0)]);
    }
}

/// A unique team and spec name: `<prefix><id>`, `<prefix>spec<id>`.
fn unique_team(prefix: &str) -> (String, String) {
    let suffix = unique(prefix).replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let id = suffix[suffix.len() - 10..]
        .trim_start_matches('-')
        .to_lowercase();
    (format!("{prefix}{id}"), format!("{prefix}spec{id}"))
}

#[tokio::test]
async fn three_members_behind_one_tls_port_each_with_their_own_token() {
    let Some(_engine) = common::engine().await else { return };
    let (team, spec) = unique_team("gw");
    let _network = NetworkGuard(team.clone());
    let mut guard = DockerGuard::images(&[&format!("tfimg/{spec}")]);
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    guard.containers = ["check", "hold", "check-dave"]
        .map(|name| format!("{team}-{name}"))
        .to_vec();
    let port = free_port();
    let folder = scratch(&[
        (
            &format!("images/{spec}.yaml") as &str,
            &format!("name: {spec}\nextends: cpu-jupyter\n") as &str,
        ),
        (
            "team.yaml",
            &team_file(&team, &spec, port, &["alice", "bob", "carol"]),
        ),
    ]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];

    let up = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    let members = ["alice", "bob", "carol"];
    for member in members {
        // Each its own origin: `<member>.<team>.localhost`, which browsers and curl send to
        // this machine's loopback with no set-up.
        assert!(
            up.stdout.contains(&format!(
                "https://{member}.{team}.localhost:{port}/lab?token="
            )),
            "{}",
            up.stdout
        );
        // No member publishes a host port of its own.
        let ports = docker(&["port", &format!("{team}-{member}")]);
        assert_eq!(ports.trim(), "", "{member} publishes {ports}");
    }
    assert!(
        up.stderr.contains(&format!(
            "gateway: https://{team}.localhost:{port}/ (created)"
        )),
        "{}",
        up.stderr
    );
    let ps = tfimg_with_env(folder.path(), &["ps", "--team", &team], &env);
    let gateway_row = ps
        .stdout
        .lines()
        .find(|line| line.starts_with(&format!("{team}-gateway")));
    assert!(
        gateway_row.is_some_and(|row| row.ends_with(&format!("https://{team}.localhost:{port}/"))),
        "{}",
        ps.stdout
    );
    assert!(
        ps.stdout
            .contains(&format!("https://bob.{team}.localhost:{port}/lab\n")),
        "{}",
        ps.stdout
    );
    let published = docker(&["port", &format!("{team}-gateway")]);
    assert_eq!(published.trim(), format!("8443/tcp -> 127.0.0.1:{port}"));
    // Each member alone on its own network; the gateway on its own and on every member's.
    for member in members {
        assert_eq!(
            networks_of(&format!("{team}-{member}")),
            [format!("tfimg-{team}.{member}")]
        );
    }
    let mut expected: Vec<String> = members
        .iter()
        .map(|member| format!("tfimg-{team}.{member}"))
        .collect();
    expected.insert(0, format!("tfimg-{team}"));
    assert_eq!(networks_of(&format!("{team}-gateway")), expected);

    // A real client through the gateway's one port, from the host's network, trusting
    // only the team's certificate.
    let cert = data.join(format!("tfimg/teams/{team}/gateway/cert.pem"));
    let key = data.join(format!("tfimg/teams/{team}/gateway/key.pem"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let check = folder.path().join("check");
    std::fs::create_dir(&check).unwrap();
    std::fs::copy(&cert, check.join("cert.pem")).unwrap();
    std::fs::write(
        check.join("client.py"),
        include_str!("fixtures/gateway/client.py"),
    )
    .unwrap();
    let tokens: Vec<String> = members
        .iter()
        .map(|member| format!("{member}={}", token_of(&up.stdout, member)))
        .collect();
    let client = Client {
        team: &team,
        spec: &spec,
        port,
        check: &check,
        base: base_of(&up.stdout, "alice").replacen("alice", "{member}", 1),
    };
    // alice's kernel, held open over the gateway while the team changes. The checks wait
    // until it runs: while a kernel starts, Jupyter's /api/status can answer 500 (the
    // kernel has no `last_activity` yet), which is Jupyter's race, not the gateway's.
    client.start("hold", "hold", &tokens[..1]);
    let held = client.wait_for_line("hold", "first");
    assert_eq!(held["first"], "2", "{held}");

    // `up` waited for every Jupyter: they answer at once.
    let lines = client.run("check", "now", &tokens);
    for member in members {
        let row = lines
            .iter()
            .find(|line| line["member"] == member)
            .unwrap_or_else(|| panic!("{lines:?}"));
        assert_eq!(
            (&row["own"], &row["other"], &row["none"], &row["query"]),
            (&200.into(), &403.into(), &403.into(), &200.into()),
            "{member}: {lines:?}"
        );
    }
    let served = lines.iter().find_map(|line| line["certificate"].as_str());
    let kept = std::fs::read_to_string(&cert).unwrap();
    assert_eq!(
        served.map(|pem| pem.split_whitespace().collect::<String>()),
        Some(kept.split_whitespace().collect::<String>()),
        "the gateway serves the team's certificate"
    );
    let result = lines.iter().find(|line| line.get("result").is_some());
    assert_eq!(
        result.map(|line| &line["result"]),
        Some(&"2".into()),
        "{lines:?}"
    );

    // dave joins: the others stay as they are, the gateway reloads, and alice's open
    // kernel WebSocket still runs code afterwards.
    let gateway_id = docker(&["inspect", "-f", "{{.Id}}", &format!("{team}-gateway")]);
    std::fs::write(
        folder.path().join("team.yaml"),
        team_file(&team, &spec, port, &["alice", "bob", "carol", "dave"]),
    )
    .unwrap();
    let again = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert!(
        again.stderr.contains("(reloaded with the new members)"),
        "{}",
        again.stderr
    );
    for member in members {
        let row = again
            .stdout
            .lines()
            .find(|line| line.starts_with(member))
            .unwrap();
        assert!(row.contains(" unchanged "), "{}", again.stdout);
    }
    assert_eq!(
        docker(&["inspect", "-f", "{{.Id}}", &format!("{team}-gateway")]),
        gateway_id,
        "the same gateway container, reloaded"
    );
    std::fs::write(check.join("go"), "").unwrap();
    let second = client.wait_for_line("hold", "second");
    assert_eq!(second["second"], "4", "{second}");
    assert_eq!(second["kernel"], held["kernel"]);
    let dave = format!("dave={}", token_of(&again.stdout, "dave"));
    let lines = client.run("check-dave", "now", &[dave, tokens[0].clone()]);
    let row = lines.iter().find(|line| line["member"] == "dave").unwrap();
    assert_eq!(
        (&row["own"], &row["other"]),
        (&200.into(), &403.into()),
        "{lines:?}"
    );

    let down = tfimg_with_env(folder.path(), &["down", "team.yaml"], &env);
    assert_eq!(down.code, 0, "{}", down.tail());
    let left = docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=io.tfimg.team={team}"),
    ]);
    assert_eq!(left.trim(), "");
    let networks = docker(&[
        "network",
        "ls",
        "-q",
        "--filter",
        &format!("name=tfimg-{team}"),
    ]);
    assert_eq!(networks.trim(), "", "the team's networks are gone");
}

/// The networks a container is on, sorted.
fn networks_of(container: &str) -> Vec<String> {
    let listed = docker(&[
        "inspect",
        "-f",
        "{{range $name, $_ := .NetworkSettings.Networks}}{{$name}} {{end}}",
        container,
    ]);
    let mut names: Vec<String> = listed.split_whitespace().map(String::from).collect();
    names.sort();
    names
}

/// The bytes in files under /tmp that `container`'s processes hold open, deleted or not:
/// nginx unlinks a body's temporary file as soon as it makes it, so `du` never sees it.
fn bytes_in_tmp(container: &str) -> u64 {
    let script = "total=0; for fd in /proc/[0-9]*/fd/*; do \
        case \"$(readlink \"$fd\")\" in /tmp/*) \
        total=$((total + $(stat -L -c %s \"$fd\" 2>/dev/null || echo 0)));; esac; done; \
        echo $total";
    let output = docker(&["exec", "-u", "33:33", container, "sh", "-c", script]);
    output
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("open files in {container}'s /tmp: {output}"))
}

/// `docker logs` of a container: stdout and stderr together (nginx logs to stderr).
fn logs_of(container: &str) -> String {
    let output = std::process::Command::new("docker")
        .args(["logs", container])
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `curl`'s status for `url`, trusting only `cert` (curl sends `*.localhost` names to the
/// loopback itself).
/// The status and body of a GET of `url`.
fn get(url: &str, cert: &std::path::Path) -> (String, String) {
    let output = std::process::Command::new("curl")
        .args(["-sS", "-m", "30", "-w", "\n%{http_code}"])
        .arg("--cacert")
        .arg(cert)
        .arg(url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    (status.to_string(), body.to_string())
}

fn status_of(url: &str, cert: &std::path::Path) -> String {
    let output = std::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-m", "30", "-w", "%{http_code}"])
        .arg("--cacert")
        .arg(cert)
        .arg(url)
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&output.stdout).into_owned();
    match status.as_str() {
        "000" => format!("000 ({})", String::from_utf8_lossy(&output.stderr).trim()),
        _ => status,
    }
}

/// One person's headless Chromium: its profile (cookies) lives in `profile` from one run
/// to the next, and it trusts exactly the team's key (`spki`, the base64 SHA-256 of the
/// certificate's public key). The DOM of `url` once its scripts ran (at most `budget_ms`
/// of the page's virtual time).
fn chromium(profile: &std::path::Path, spki: &str, url: &str, budget_ms: u32) -> String {
    // Chromium drops a load under way when the machine's network interfaces change
    // (`ERR_NETWORK_CHANGED`), as they do whenever a test beside this one makes or removes
    // a Docker network, and on a busy machine it may end with no document at all (an
    // empty dump, not even an error page; seen once in CI, 2026-11-30): that load is
    // made again.
    for _ in 0..4 {
        let dom = chromium_once(profile, spki, url, budget_ms);
        if !dom.contains("ERR_NETWORK_CHANGED") && !dom.trim().is_empty() {
            return dom;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    chromium_once(profile, spki, url, budget_ms)
}

fn chromium_once(profile: &std::path::Path, spki: &str, url: &str, budget_ms: u32) -> String {
    let output = std::process::Command::new("timeout")
        .arg("120")
        .arg("chromium")
        .env("HOME", profile)
        .env("XDG_CONFIG_HOME", profile.join("config"))
        .env("XDG_CACHE_HOME", profile.join("cache"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.join("data").display()),
            &format!("--ignore-certificate-errors-spki-list={spki}"),
            &format!("--virtual-time-budget={budget_ms}"),
            "--dump-dom",
            url,
        ])
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed ({}) on {url}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The base64 SHA-256 of the public key in the PEM certificate at `cert` (what
/// `--ignore-certificate-errors-spki-list` takes).
fn spki_of(cert: &std::path::Path) -> String {
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg("openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
        .arg("sh")
        .arg(cert)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// The member → member boundary on the real Engine, with alice and bob behind the
/// gateway's defaults (host routing under `<team>.localhost`):
/// - Alice serves a page from her own container, where TensorBoard was; Bob, logged in to
///   his Jupyter in headless Chromium, opens it: it can neither frame his Jupyter, read
///   his `_xsrf` cookie, list his files nor write one (on one origin, as path routing
///   has it, it did all four);
/// - from Alice's container Bob's name does not resolve and his Jupyter and TensorBoard
///   ports do not answer (on one team network TensorBoard's data was open);
/// - bodies without a token are refused before the gateway reads them: 1 GiB announced is
///   413 at once, 30 MiB sent of 100 MiB leave nothing on the gateway's disk, chunked ones
///   are 403; with the token 20 MiB go through;
/// - with Bob's Jupyter down, a request with `?token=` answers 502 and leaves the failure,
///   but not the token, in the gateway's logs.
///
/// What the boundary promises is collected and asserted at the end, so one run lists
/// every promise broken (the tree before this boundary broke all four).
#[tokio::test]
async fn members_are_kept_apart_by_origin_network_and_gateway() {
    let Some(_engine) = common::engine().await else { return };
    let (team, spec) = unique_team("gk");
    let _network = NetworkGuard(team.clone());
    let mut guard = DockerGuard::images(&[&format!("tfimg/{spec}")]);
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    guard.containers = vec![format!("{team}-upload")];
    let port = free_port();
    let folder = scratch(&[
        (
            &format!("images/{spec}.yaml") as &str,
            &format!("name: {spec}\nextends: cpu-jupyter\n") as &str,
        ),
        (
            "team.yaml",
            &team_file(&team, &spec, port, &["alice", "bob"]),
        ),
    ]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let up = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    let (alice, bob) = (format!("{team}-alice"), format!("{team}-bob"));
    let (alice_token, bob_token) = (token_of(&up.stdout, "alice"), token_of(&up.stdout, "bob"));
    let (alice_base, bob_base) = (base_of(&up.stdout, "alice"), base_of(&up.stdout, "bob"));
    let cert = data.join(format!("tfimg/teams/{team}/gateway/cert.pem"));
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gateway");
    let mut broken: Vec<String> = Vec::new();
    let mut expect = |kept: bool, promise: String| {
        if !kept {
            broken.push(promise);
        }
    };

    // Bob's TensorBoard listens (it starts after his Jupyter): through the gateway with
    // his token.
    common::wait_for(
        "bob's TensorBoard through the gateway",
        std::time::Duration::from_secs(180),
        || status_of(&format!("{bob_base}tensorboard/?token={bob_token}"), &cert) == "200",
    );
    // Alice's container and Bob's ports: by name, then by each of his addresses.
    let addresses = docker(&[
        "inspect",
        "-f",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
        &bob,
    ]);
    docker(&[
        "cp",
        fixtures.join("neighbour.py").to_str().unwrap(),
        &format!("{alice}:/tmp/neighbour.py"),
    ]);
    let mut args = vec!["exec", &alice, "python3", "/tmp/neighbour.py", &bob];
    args.extend(addresses.split_whitespace());
    let reached = docker(&args);
    let reached: serde_json::Value =
        serde_json::from_str(reached.trim()).unwrap_or_else(|_| panic!("{reached}"));
    eprintln!("from alice's container: {reached}");
    expect(
        reached["resolves"].is_null(),
        format!("bob's name does not resolve in alice's container: {reached}"),
    );
    expect(
        !reached["logdir"].is_number(),
        format!("alice cannot read bob's TensorBoard data: {reached}"),
    );
    // What answered is read (`neighbour.py`): an HTTP answer names its server, so a
    // failure says whether Bob's Jupyter (TornadoServer) or TensorBoard (Werkzeug) did.
    for address in addresses.split_whitespace() {
        for service in [8888, 6006] {
            let outcome = reached[format!("{address}:{service}")]
                .as_str()
                .unwrap_or("connected, no answer");
            expect(
                !outcome.starts_with("http ") && outcome != "connected, no answer",
                format!("nothing of bob's answers alice at {address}:{service}: {outcome}"),
            );
        }
    }

    // Alice serves her page where her TensorBoard was, as any member may.
    docker(&[
        "cp",
        fixtures.join("take_port.py").to_str().unwrap(),
        &format!("{alice}:/tmp/take_port.py"),
    ]);
    docker(&[
        "cp",
        fixtures.join("alice_page").to_str().unwrap(),
        &format!("{alice}:/tmp/alice_page"),
    ]);
    let ids = docker(&["exec", &alice, "sh", "-c", "echo \"$TFIMG_UID:$TFIMG_GID\""]);
    docker(&[
        "exec",
        "-d",
        "-u",
        ids.trim(),
        &alice,
        "python3",
        "/tmp/take_port.py",
        "6006",
        "/tmp/alice_page",
    ]);
    let page = format!("{alice_base}tensorboard/evil.html?token={alice_token}");
    common::wait_for(
        "alice's page through the gateway",
        std::time::Duration::from_secs(60),
        || status_of(&page, &cert) == "200",
    );

    if common::chromium_available() {
        let profile = tempfile::tempdir().unwrap();
        let spki = spki_of(&cert);
        // Bob logs in with his link, and his browser then reaches his files with no token.
        chromium(
            profile.path(),
            &spki,
            &format!("{bob_base}lab?token={bob_token}"),
            10_000,
        );
        let own = chromium(
            profile.path(),
            &spki,
            &format!("{bob_base}api/contents"),
            5_000,
        );
        assert!(own.contains("\"directory\""), "bob is logged in: {own}");
        // Bob opens Alice's page.
        let dom = chromium(
            profile.path(),
            &spki,
            &format!("{page}&bob={bob_base}"),
            30_000,
        );
        let result = dom
            .split("<pre id=\"result\">")
            .nth(1)
            .and_then(|rest| rest.split("</pre>").next())
            .unwrap_or_else(|| panic!("{dom}"))
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
        let result: serde_json::Value =
            serde_json::from_str(&result).unwrap_or_else(|_| panic!("{result}"));
        eprintln!("alice's page, opened by bob: {result}");
        expect(
            result["cookie_error"].is_string()
                && !result["cookie"].as_str().unwrap_or("").contains("_xsrf"),
            format!("alice's page cannot frame bob's Jupyter or read his cookies: {result}"),
        );
        expect(
            result["list_error"].is_string() && result["list_status"] != 200,
            format!("alice's page cannot list bob's files: {result}"),
        );
        expect(
            result["write_status"]
                .as_u64()
                .is_none_or(|status| status >= 300),
            format!("alice's page cannot write into bob's folder: {result}"),
        );
        let written = status_of(
            &format!("{bob_base}api/contents/from-alice.txt?token={bob_token}"),
            &cert,
        );
        expect(
            written == "404",
            format!("no file from alice in bob's folder ({written})"),
        );
    }

    // Bodies without a token, from a client on the host's network.
    let check = folder.path().join("check");
    std::fs::create_dir(&check).unwrap();
    std::fs::copy(&cert, check.join("cert.pem")).unwrap();
    std::fs::write(
        check.join("client.py"),
        include_str!("fixtures/gateway/client.py"),
    )
    .unwrap();
    let client = Client {
        team: &team,
        spec: &spec,
        port,
        check: &check,
        base: bob_base.replacen("bob", "{member}", 1),
    };
    client.start("upload", "upload", &[format!("bob={bob_token}")]);
    let too_big = client.wait_for_line("upload", "too_big");
    expect(
        too_big["too_big"] == 413,
        format!("1 GiB announced is refused at once: {too_big}"),
    );
    let holding = client.wait_for_line("upload", "holding");
    let gateway = format!("{team}-gateway");
    let buffered = bytes_in_tmp(&gateway);
    expect(
        buffered < 1 << 20,
        format!("no unauthenticated body on the gateway's disk: {buffered} bytes in its /tmp while {holding} came"),
    );
    std::fs::write(check.join("go-upload"), "").unwrap();
    let held = client.wait_for_line("upload", "held");
    expect(
        held["held"].as_u64().is_none_or(|status| status >= 300),
        format!("an unauthenticated body is refused: {held}"),
    );
    let chunked = client.wait_for_line("upload", "chunked");
    expect(
        chunked["chunked"] == 403,
        format!("an unauthenticated chunked body is refused: {chunked}"),
    );
    let with_header = client.wait_for_line("upload", "with_header");
    assert_eq!(with_header["with_header"], 201, "{with_header}");
    let with_query = client.wait_for_line("upload", "with_query");
    assert_eq!(with_query["with_query"], 201, "{with_query}");
    let with_cookie = client.wait_for_line("upload", "with_cookie");
    assert_eq!(with_cookie["with_cookie"], 201, "{with_cookie}");

    // The gateway's own page lists the members and where they are, and no token.
    let gateway_address = bob_base.replacen("bob.", "", 1);
    let (status, index) = get(&gateway_address, &cert);
    let tensorboard_of = |member: &str| {
        let base = base_of(&up.stdout, member);
        format!(", TensorBoard <a href='{base}tensorboard/'>{base}tensorboard/</a>")
    };
    expect(
        status == "200"
            && index.contains(&format!(
                "<li><b>alice</b>: Jupyter <a href='{alice_base}lab'>{alice_base}lab</a>{}</li>",
                tensorboard_of("alice")
            ))
            && index.contains(&format!("<b>bob</b>: Jupyter <a href='{bob_base}lab'>"))
            && index.contains("How to sign in:</b> open the Jupyter or TensorBoard link <code>tfimg up</code> printed for you")
            && !index.contains(&alice_token)
            && !index.contains(&bob_token),
        format!("the gateway's page lists the members without tokens and says how to sign in ({status}): {index}"),
    );
    // `up`'s table names each member's TensorBoard, with the token that opens it.
    let row_of = |member: &str| {
        up.stdout
            .lines()
            .find(|line| line.starts_with(&format!("{member} ")))
            .unwrap()
            .to_string()
    };
    expect(
        row_of("alice").ends_with(&format!(" {alice_base}tensorboard/?token={alice_token}")),
        format!("up's table shows alice's TensorBoard link: {}", up.stdout),
    );
    // A fresh browser (no cookie of any kind) opens bob's TensorBoard with the link `up`
    // printed, and TensorBoard renders: its page's own requests (scripts, data), which
    // carry no token, pass because the gateway handed on the login cookie his Jupyter
    // set when it accepted the token.
    let bob_tensorboard = row_of("bob").rsplit(' ').next().unwrap().to_string();
    expect(
        bob_tensorboard == format!("{bob_base}tensorboard/?token={bob_token}"),
        format!("up's table shows bob's TensorBoard link: {}", up.stdout),
    );
    if common::chromium_available() {
        let fresh = tempfile::tempdir().unwrap();
        let dom = chromium(fresh.path(), &spki_of(&cert), &bob_tensorboard, 20_000);
        expect(
            dom.contains("ng-version=") && dom.contains("class=\"brand\">TensorBoard"),
            format!(
                "a fresh browser renders bob's TensorBoard from its token link: {}",
                &dom[..dom.len().min(600)]
            ),
        );
        // Without the token, a fresh browser gets nothing from it.
        let other = tempfile::tempdir().unwrap();
        let bare = chromium(
            other.path(),
            &spki_of(&cert),
            &format!("{bob_base}tensorboard/"),
            5_000,
        );
        expect(
            !bare.contains("ng-version="),
            format!(
                "no TensorBoard without the token: {}",
                &bare[..bare.len().min(600)]
            ),
        );
    }
    // A TensorBoard that does not answer (starting, or here stopped) is said, not a bare 502.
    let bob_ids = docker(&["exec", &bob, "sh", "-c", "echo \"$TFIMG_UID:$TFIMG_GID\""]);
    docker(&[
        "exec",
        "-u",
        bob_ids.trim(),
        &bob,
        "python3",
        "-c",
        "import os, signal\nfor p in filter(str.isdigit, os.listdir('/proc')):\n    try:\n        line = open(f'/proc/{p}/cmdline', 'rb').read()\n    except OSError:\n        continue\n    if b'tensorboard' in line and int(p) != os.getpid():\n        os.kill(int(p), signal.SIGKILL)\n",
    ]);
    let (status, said) = get(&format!("{bob_base}tensorboard/?token={bob_token}"), &cert);
    expect(
        status == "503"
            && said.starts_with("The TensorBoard of `bob` does not answer yet: it starts a few seconds after its container"),
        format!("a TensorBoard that does not answer is said ({status}): {said}"),
    );

    // A token in a request that fails (bob's Jupyter is down) stays out of the logs; the
    // failure is in them.
    docker(&["stop", &bob]);
    let secret = "0123456789abcdef0123456789abcdef0123456789abcdef";
    let (failed, said) = get(&format!("{bob_base}lab?token={secret}"), &cert);
    // Said, once the resolver no longer knows bob's name or while it still has his address.
    expect(
        failed == "503" && said.starts_with("The Jupyter of `bob` does not answer"),
        format!("bob's Jupyter down: 503 and why ({failed}): {said}"),
    );
    let failed_tensorboard = status_of(&format!("{bob_base}tensorboard/?token={secret}"), &cert);
    expect(
        failed_tensorboard.starts_with('5'),
        format!("bob's TensorBoard's check down: 5xx ({failed_tensorboard})"),
    );
    let logs = logs_of(&gateway);
    expect(
        !logs.contains(secret),
        format!("no token in the gateway's logs:\n{logs}"),
    );
    expect(
        logs.contains(&format!("\"GET /lab\" {failed}")),
        format!("the failure is in the gateway's logs:\n{logs}"),
    );

    let down = tfimg_with_env(folder.path(), &["down", "team.yaml"], &env);
    assert_eq!(down.code, 0, "{}", down.tail());
    assert!(
        broken.is_empty(),
        "broken promises:\n- {}",
        broken.join("\n- ")
    );
}

/// JupyterLab has started in the tab: its launcher lists what it can open (its API
/// answered with the browser's login).
const LAB_READY: &str = "document.querySelector('.jp-LauncherCard') !== null";

/// Cookie tossing (issue 44), on the real Engine in headless Chromium driven over the
/// DevTools protocol. Alice and Bob are behind the gateway's defaults, each on a host of
/// their own under `<team>.localhost`. Bob logs in with his link; then he opens Alice's
/// Lab, where her page's script (hers to write) sets cookies for the whole team's domain
/// under the names Bob's Jupyter reads (`_xsrf` and the login cookie, as named before and
/// after issue 44), on several paths, with Alice's own XSRF token and login cookie as
/// values. Back in his Lab, Bob must find what he had: still logged in without his link,
/// the same identity once he opens it again, a notebook made, run in its kernel (a
/// WebSocket) and saved through Lab's own buttons, a terminal (another WebSocket), his
/// TensorBoard; and none of Alice's values may reach his container (what reaches it is
/// read on his TensorBoard's port). Logging out still logs him out. Every promise is
/// collected and asserted at the end (main, 465f969, broke three: Bob was logged out, came
/// back as another identity, and his container got Alice's cookies).
#[tokio::test]
async fn a_members_page_sets_no_cookie_another_members_servers_read() {
    let Some(_engine) = common::engine().await else { return };
    if !common::chromium_available() {
        return;
    }
    let (team, spec) = unique_team("gt");
    let _network = NetworkGuard(team.clone());
    let mut guard = DockerGuard::images(&[&format!("tfimg/{spec}")]);
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    let port = free_port();
    let folder = scratch(&[
        (
            &format!("images/{spec}.yaml") as &str,
            &format!("name: {spec}\nextends: cpu-jupyter\n") as &str,
        ),
        (
            "team.yaml",
            &team_file(&team, &spec, port, &["alice", "bob"]),
        ),
    ]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let up = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    let bob = format!("{team}-bob");
    let (alice_token, bob_token) = (token_of(&up.stdout, "alice"), token_of(&up.stdout, "bob"));
    let (alice_base, bob_base) = (base_of(&up.stdout, "alice"), base_of(&up.stdout, "bob"));
    let cert = data.join(format!("tfimg/teams/{team}/gateway/cert.pem"));
    let mut broken: Vec<String> = Vec::new();
    let mut expect = |kept: bool, promise: String| {
        if !kept {
            broken.push(promise);
        }
    };
    common::wait_for(
        "bob's TensorBoard through the gateway",
        std::time::Duration::from_secs(180),
        || status_of(&format!("{bob_base}tensorboard/?token={bob_token}"), &cert) == "200",
    );
    // Alice's login cookie, as her own server gives it to her (its value is hers to use).
    let alice_login = login_cookie_of(&format!("{alice_base}lab?token={alice_token}"), &cert);

    let mut browser = Browser::launch(&[format!(
        "--ignore-certificate-errors-spki-list={}",
        spki_of(&cert)
    )]);
    let tab = browser.tab();
    let lab_limit = std::time::Duration::from_secs(120);
    let me = "fetch('/api/me').then(async (answer) => answer.status === 200 ? (await answer.json()).identity.username : 'status ' + answer.status)";

    // Bob logs in with his link.
    browser.open(&tab, &format!("{bob_base}lab?token={bob_token}"));
    browser.wait_until_started(&tab, LAB_READY, lab_limit);
    let identity = browser.evaluate(&tab, me);
    assert!(
        identity
            .as_str()
            .is_some_and(|name| !name.starts_with("status")),
        "bob is logged in: {identity}"
    );

    // He opens Alice's Lab; her page sets cookies for the team's domain.
    browser.open(&tab, &format!("{alice_base}lab?token={alice_token}"));
    browser.wait_until_started(&tab, LAB_READY, lab_limit);
    let bob_host = bob_base
        .trim_start_matches("https://")
        .trim_end_matches('/');
    let names = [
        "_xsrf".to_string(),
        "__Host-_xsrf".to_string(),
        format!("username-{}", bob_host.replace(['.', ':'], "-")),
        "__Host-jupyter-login".to_string(),
    ];
    let toss = format!(
        "(() => {{
            const domain = location.hostname.slice(location.hostname.indexOf('.') + 1);
            const xsrf = (document.cookie.match('\\\\b_xsrf=([^;]*)\\\\b') || [])[1];
            for (const name of {names}) {{
                const value = name.endsWith('_xsrf') ? xsrf : {login};
                for (const path of ['/', '/lab', '/api', '/tensorboard']) {{
                    document.cookie = `${{name}}=${{value}}; Domain=${{domain}}; Path=${{path}}; Secure; Max-Age=3600`;
                }}
            }}
            return {{xsrf, cookie: document.cookie}};
        }})()",
        names = serde_json::to_string(&names).unwrap(),
        login = serde_json::to_string(&alice_login).unwrap(),
    );
    let tossed = browser.evaluate(&tab, &toss);
    eprintln!("alice's page set: {tossed}");
    let alice_xsrf = tossed["xsrf"]
        .as_str()
        .expect("alice's XSRF token")
        .to_string();
    assert!(
        tossed["cookie"]
            .as_str()
            .is_some_and(|cookie| cookie.contains(&format!("_xsrf={alice_xsrf}; "))),
        "the browser took alice's cookies for the team's domain: {tossed}"
    );

    // Bob goes back to his Lab, as it was open in his tab (no token) ...
    browser.open(&tab, &format!("{bob_base}lab"));
    let reopened = browser.wait_until(
        &tab,
        &format!("{LAB_READY} ? 'his Lab' : location.pathname.startsWith('/login') ? 'the login page' : null"),
        lab_limit,
    );
    expect(
        reopened == "his Lab",
        format!("bob's Lab, reopened after alice's page, is still his: {reopened}"),
    );
    // ... then with his link.
    browser.open(&tab, &format!("{bob_base}lab?token={bob_token}"));
    browser.wait_until_started(&tab, LAB_READY, lab_limit);
    let again = browser.evaluate(&tab, me);
    expect(
        again == identity,
        format!("bob is still {identity} after alice's page: {again}"),
    );

    // A new notebook from the launcher, a cell run in its kernel, saved with Lab's button.
    // The notebook's page loads files too: loaded again if a network change dropped them.
    browser.click(&tab, ".jp-LauncherCard[data-category='Notebook']");
    browser.wait_until_started(
        &tab,
        "document.querySelector('.jp-Notebook .jp-Cell .cm-content') !== null && document.querySelector(\".jp-NotebookPanel-toolbar [data-command='notebook:run-cell-and-select-next']\") !== null",
        lab_limit,
    );
    // Its kernel is up once the tab's WebSocket to it is connected (Jupyter counts it).
    let connected = browser.poll(
        &tab,
        "fetch('/api/sessions').then((answer) => answer.json()).then((sessions) => sessions.some((session) => session.kernel.connections > 0 && session.kernel.execution_state === 'idle'))",
        lab_limit,
    );
    expect(
        connected.is_ok(),
        format!("bob's notebook connects to its kernel: {connected:?}"),
    );
    browser.click(&tab, ".jp-Notebook .jp-Cell .cm-content");
    browser.type_text(&tab, "print(6*7)");
    browser.click(
        &tab,
        ".jp-NotebookPanel-toolbar [data-command='notebook:run-cell-and-select-next']",
    );
    let output = browser.poll(
        &tab,
        "[...document.querySelectorAll('.jp-OutputArea-output')].map((output) => output.textContent).join('')",
        lab_limit,
    );
    let kernel = browser.evaluate(
        &tab,
        "document.querySelector('.jp-Notebook-ExecutionIndicator')?.getAttribute('data-status')",
    );
    expect(
        output
            .as_ref()
            .is_ok_and(|text| text.as_str().is_some_and(|text| text.trim() == "42")),
        format!("bob's kernel runs his cell: {output:?} (kernel {kernel})"),
    );
    let notebook = browser.evaluate(
        &tab,
        "document.querySelector('.jp-mod-current .lm-TabBar-tabLabel').textContent",
    );
    let notebook = notebook.as_str().unwrap().to_string();
    browser.click(
        &tab,
        ".jp-NotebookPanel-toolbar [data-command='docmanager:save']",
    );
    // Lab asks once whether to rename an untitled notebook; saving as it is answers it.
    let asked = browser.poll(
        &tab,
        "document.querySelector('.jp-Dialog .jp-mod-accept') ? 'asked' : document.querySelector('.jp-mod-current.jp-mod-dirty') ? null : 'saved'",
        lab_limit,
    );
    if asked.is_ok_and(|answer| answer == "asked") {
        browser.click(&tab, ".jp-Dialog .jp-mod-accept");
    }
    let saved = format!("{bob_base}api/contents/{notebook}?token={bob_token}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let content = loop {
        let (_, content) = get(&saved, &cert);
        if content.contains("print(6*7)") || std::time::Instant::now() > deadline {
            break content;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    expect(
        content.contains("print(6*7)") && content.contains("42\\n"),
        format!("bob's notebook is saved with its cell and output: {content}"),
    );

    // A terminal, as Lab opens one: made through the API, then its WebSocket.
    let terminal = browser.evaluate(
        &tab,
        "(async () => {
            const config = JSON.parse(document.getElementById('jupyter-config-data').textContent);
            const xsrf = (document.cookie.match('\\\\b_xsrf=([^;]*)\\\\b') || [])[1];
            const headers = {'Content-Type': 'application/json'};
            if (config.token) headers.Authorization = 'token ' + config.token;
            if (xsrf) headers['X-XSRFToken'] = xsrf;
            const made = await fetch('/api/terminals', {method: 'POST', headers, body: '{}'});
            if (made.status !== 200) return 'POST /api/terminals: ' + made.status;
            const name = (await made.json()).name;
            return await new Promise((resolve) => {
                const socket = new WebSocket(`wss://${location.host}/terminals/websocket/${name}`);
                let seen = '';
                const timer = setTimeout(() => resolve('no answer: ' + seen), 60000);
                socket.onopen = () => socket.send(JSON.stringify(['stdin', 'echo $((6*7))x\\r']));
                socket.onmessage = (event) => {
                    const [kind, text] = JSON.parse(event.data);
                    if (kind === 'stdout') seen += text;
                    if (seen.includes('42x')) { clearTimeout(timer); socket.close(); resolve('42'); }
                };
                socket.onclose = (event) => { clearTimeout(timer); resolve('closed ' + event.code + ': ' + seen); };
            });
        })()",
    );
    expect(
        terminal == "42",
        format!("bob's terminal runs his command: {terminal}"),
    );

    // His TensorBoard, through the gateway's check of his login.
    browser.open(&tab, &format!("{bob_base}tensorboard/"));
    let title = browser.poll(&tab, "document.title", lab_limit);
    expect(
        title.as_ref().is_ok_and(|title| title == "TensorBoard"),
        format!("bob's TensorBoard opens in his browser: {title:?}"),
    );

    // What reaches Bob's container: his TensorBoard's port answers with the cookies it got.
    docker(&[
        "cp",
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gateway/take_port.py")
            .to_str()
            .unwrap(),
        &format!("{bob}:/tmp/take_port.py"),
    ]);
    let ids = docker(&["exec", &bob, "sh", "-c", "echo \"$TFIMG_UID:$TFIMG_GID\""]);
    docker(&[
        "exec",
        "-d",
        "-u",
        ids.trim(),
        &bob,
        "python3",
        "/tmp/take_port.py",
        "6006",
        "--cookies",
    ]);
    let echo = format!("{bob_base}tensorboard/cookies");
    common::wait_for(
        "bob's cookie echo through the gateway",
        std::time::Duration::from_secs(60),
        || {
            get(&format!("{echo}?token={bob_token}"), &cert)
                .1
                .contains("\"cookie\"")
        },
    );
    browser.open(&tab, &echo);
    let reached = browser.evaluate(&tab, "document.body.innerText");
    let reached = reached.as_str().unwrap_or_default();
    eprintln!("what reached bob's container: {reached}");
    expect(
        reached.contains("\"cookie\"")
            && !reached.contains(&alice_xsrf)
            && !reached.contains(&alice_login),
        format!("none of alice's cookies reaches bob's container: {reached}"),
    );

    // Logging out (Lab's File > Log Out) ends his login.
    browser.open(&tab, &format!("{bob_base}logout"));
    let after = browser.evaluate(&tab, me);
    expect(
        after == "status 403",
        format!("bob is logged out after logging out: {after}"),
    );

    let down = tfimg_with_env(folder.path(), &["down", "team.yaml"], &env);
    assert_eq!(down.code, 0, "{}", down.tail());
    assert!(
        broken.is_empty(),
        "broken promises:\n- {}",
        broken.join("\n- ")
    );
}

/// The login cookie a member's Jupyter sets when its link is opened: its value.
fn login_cookie_of(url: &str, cert: &std::path::Path) -> String {
    let output = std::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-m", "30", "-D", "-"])
        .arg("--cacert")
        .arg(cert)
        .arg(url)
        .output()
        .unwrap();
    let headers = String::from_utf8_lossy(&output.stdout).into_owned();
    headers
        .lines()
        .filter_map(|line| line.strip_prefix("Set-Cookie: "))
        .map(|cookie| cookie.split(';').next().unwrap())
        .find(|pair| !pair.contains("_xsrf="))
        .and_then(|pair| pair.split_once('='))
        .map(|(_, value)| value.to_string())
        .unwrap_or_else(|| panic!("no login cookie from {url}:\n{headers}"))
}

/// `k8s` of a team with a gateway: the members' Services behind an Ingress (paths, then
/// host names) with a TLS Secret, each Jupyter under its base URL; kubernetes-validate
/// accepts every document.
#[test]
fn k8s_exports_the_gateway_as_an_ingress() {
    for (route, expected_host) in [("path", None), ("host", Some("alice.lab.example"))] {
        let file = format!(
            "team: lab\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: alice\n  - name: bob\ngateway:\n  route: {route}\n  domain: lab.example\n"
        );
        let folder = scratch(&[("team.yaml", &file)]);
        let data = folder.path().join(".tfimg-data");
        let made = tfimg_with_env(
            folder.path(),
            &["k8s", "team.yaml", "-o", "out"],
            &[("XDG_DATA_HOME", data.to_str().unwrap())],
        );
        assert_eq!(made.code, 0, "{}", made.tail());
        let manifests = folder.path().join("out/lab.yaml");
        common::k8s::assert_valid(&manifests);
        let text = std::fs::read_to_string(&manifests).unwrap();
        let documents: Vec<serde_yaml::Value> = text
            .split("\n---\n")
            .skip(1)
            .map(|document| serde_yaml::from_str(document).unwrap())
            .collect();
        let find = |kind: &str, name: &str| {
            documents
                .iter()
                .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
                .unwrap_or_else(|| panic!("no {kind} {name} in {text}"))
        };
        let secret = find("Secret", "lab-gateway-tls");
        assert_eq!(secret["type"], "kubernetes.io/tls");
        let cert = std::fs::read_to_string(data.join("tfimg/teams/lab/gateway/cert.pem")).unwrap();
        assert_eq!(
            secret["stringData"]["tls.crt"].as_str(),
            Some(cert.as_str())
        );
        // No member reaches another's pods.
        for member in ["lab-alice", "lab-bob"] {
            let policy = find("NetworkPolicy", member);
            assert_eq!(
                policy["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/name"],
                member
            );
        }
        let ingress = find("Ingress", "lab-gateway");
        let rule = &ingress["spec"]["rules"][0];
        assert_eq!(rule["host"].as_str(), expected_host.or(Some("lab.example")));
        let path = &rule["http"]["paths"][0];
        let alice_path = if route == "path" { "/alice/" } else { "/" };
        assert_eq!(path["path"], alice_path);
        assert_eq!(path["backend"]["service"]["name"], "lab-alice");
        assert_eq!(path["backend"]["service"]["port"]["number"], 8888);
        let deployment = find("Deployment", "lab-alice");
        let env = &deployment["spec"]["template"]["spec"]["containers"][0]["env"];
        let base = env
            .as_sequence()
            .unwrap()
            .iter()
            .find(|entry| entry["name"] == "TFIMG_JUPYTER_BASE_URL")
            .unwrap_or_else(|| panic!("{env:?}"));
        assert_eq!(base["value"], alice_path);
        // On a host of its own, Jupyter's cookies are `__Host-` ones (the Ingress has no
        // gateway of tfimg's to drop another member's).
        let host_cookies = env
            .as_sequence()
            .unwrap()
            .iter()
            .find(|entry| entry["name"] == "TFIMG_JUPYTER_HOST_COOKIES");
        assert_eq!(
            host_cookies.map(|entry| &entry["value"]),
            (route == "host").then_some(&serde_yaml::Value::from("1")),
            "{env:?}"
        );
    }
}

/// `compose` of a team with a gateway: docker-compose accepts it, the members publish
/// nothing, the gateway's key stays its owner's, and once up each member answers through
/// the gateway's one port to their own token only, with the team's certificate.
#[tokio::test]
async fn compose_exports_the_gateway_and_it_serves_each_member_behind_it() {
    let Some(_engine) = common::engine().await else { return };
    let id = unique("c").replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let team = format!("gc{}", &id[id.len() - 10..]).to_lowercase();
    let port = free_port();
    // Compose needs the domain written: `<team>.localhost` is what `up` would take.
    let gateway = format!("  port: {port}\n  domain: {team}.localhost\n");
    let file = team_file_with(&team, "cpu-jupyter", &gateway, &["alice", "bob"]);
    let folder = scratch(&[("team.yaml", &file)]);
    let data = folder.path().join(".tfimg-data");
    let output = folder.path().join("out/team.compose.yaml");
    let guard = ComposeGuard {
        file: output.clone(),
        project: team.clone(),
    };
    let made = tfimg_with_env(
        folder.path(),
        &[
            "compose",
            "team.yaml",
            "--build",
            "--ca-cert",
            HOST_CA,
            "-o",
            "out/team.compose.yaml",
        ],
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    assert_eq!(made.code, 0, "{}", made.tail());
    use std::os::unix::fs::PermissionsExt;
    let files = folder.path().join(format!("out/{team}.gateway"));
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&files), 0o700);
    assert_eq!(mode(&files.join("key.pem")), 0o600);
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(
        text.contains(&format!("\"127.0.0.1:{port}:8443\"")),
        "{text}"
    );
    assert!(
        !text.contains(":8888\""),
        "members publish no port:\n{text}"
    );

    let config = guard.run(&["config"], &[]);
    assert!(
        config.status.success(),
        "{}",
        String::from_utf8_lossy(&config.stderr)
    );
    let up = guard.run(&["up", "-d"], &[]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let token = |member: &str| {
        let env = std::fs::read_to_string(folder.path().join(format!("out/{team}.{member}.env")))
            .unwrap();
        env.lines()
            .find_map(|line| line.strip_prefix("TFIMG_JUPYTER_TOKEN="))
            .expect("a token in the env file")
            .to_string()
    };
    let cert = files.join("cert.pem");
    for (member, other) in [("alice", "bob"), ("bob", "alice")] {
        let base = format!("https://{member}.{team}.localhost:{port}/api/status");
        let own = format!("{base}?token={}", token(member));
        common::wait_for(
            &format!("{member}'s Jupyter through the gateway"),
            std::time::Duration::from_secs(120),
            || status_of(&own, &cert) == "200",
        );
        let others = format!("{base}?token={}", token(other));
        assert_eq!(status_of(&others, &cert), "403", "{member}");
        assert_eq!(status_of(&base, &cert), "403", "{member}");
    }
    // Each member alone with the gateway on its own network: bob's name does not resolve
    // in alice's container.
    let lookup = guard.run(
        &[
            "exec",
            "-T",
            "alice",
            "python3",
            "-c",
            &format!("import socket; socket.gethostbyname('{team}-bob')"),
        ],
        &[],
    );
    assert!(
        !lookup.status.success() && String::from_utf8_lossy(&lookup.stderr).contains("gaierror"),
        "{}",
        String::from_utf8_lossy(&lookup.stderr)
    );
    drop(guard);
}
