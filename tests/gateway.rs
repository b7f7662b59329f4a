//! A team behind its gateway, on the real Engine: three Jupyter members reached through
//! one TLS port (nginx from Debian's packages, built by tfimg), each with its own token, a
//! kernel run over its WebSocket through the proxy by a real client, and nothing left
//! after `down`.

mod common;

use common::cli::free_port;
use common::compose::ComposeGuard;
use common::{docker, scratch, tfimg_with_env, unique, DockerGuard, HOST_CA};

/// The token in a member's row of `up`'s table.
fn token_of(table: &str, member: &str) -> String {
    let line = table
        .lines()
        .find(|line| line.split_whitespace().next() == Some(member))
        .unwrap_or_else(|| panic!("no `{member}` row in:\n{table}"));
    let url = line.split_whitespace().last().unwrap();
    url.split("token=").nth(1).unwrap().to_string()
}

fn team_file(team: &str, spec: &str, port: u16, members: &[&str]) -> String {
    let mut text = format!("team: {team}\ndefaults:\n  spec: {spec}\nmembers:\n");
    for member in members {
        text.push_str(&format!("  - name: {member}\n"));
    }
    text.push_str(&format!("gateway:\n  port: {port}\n"));
    text
}

/// The Python client (`fixtures/gateway/client.py`) in containers of the members' image
/// on the host's network, named `<team>-<name>`.
struct Client<'a> {
    team: &'a str,
    spec: &'a str,
    port: u16,
    check: &'a std::path::Path,
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
            let logs = docker(&["logs", &container]);
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

/// Removes the team network when dropped (after the containers' guard).
struct NetworkGuard(String);

impl Drop for NetworkGuard {
    fn drop(&mut self) {
        docker(&["network", "rm", &self.0]);
    }
}

#[tokio::test]
async fn three_members_behind_one_tls_port_each_with_their_own_token() {
    if common::engine().await.is_none() {
        return;
    }
    let suffix = unique("g").replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let id = suffix[suffix.len() - 10..]
        .trim_start_matches('-')
        .to_lowercase();
    let (team, spec) = (format!("gw{id}"), format!("gwspec{id}"));
    let _network = NetworkGuard(format!("tfimg-{team}"));
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
        assert!(
            up.stdout
                .contains(&format!("https://127.0.0.1:{port}/{member}/lab?token=")),
            "{}",
            up.stdout
        );
        // No member publishes a host port of its own.
        let ports = docker(&["port", &format!("{team}-{member}")]);
        assert_eq!(ports.trim(), "", "{member} publishes {ports}");
    }
    assert!(
        up.stderr
            .contains(&format!("gateway: https://127.0.0.1:{port}/ (created)")),
        "{}",
        up.stderr
    );
    let ps = tfimg_with_env(folder.path(), &["ps", "--team", &team], &env);
    let gateway_row = ps
        .stdout
        .lines()
        .find(|line| line.starts_with(&format!("{team}-gateway")));
    assert!(
        gateway_row.is_some_and(|row| row.ends_with(&format!("https://127.0.0.1:{port}/"))),
        "{}",
        ps.stdout
    );
    assert!(
        ps.stdout
            .contains(&format!("https://127.0.0.1:{port}/bob/lab\n")),
        "{}",
        ps.stdout
    );
    let published = docker(&["port", &format!("{team}-gateway")]);
    assert_eq!(published.trim(), format!("8443/tcp -> 127.0.0.1:{port}"));

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
    assert_eq!(down.code, 0, "{}", down.stderr);
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
    assert_eq!(networks.trim(), "", "the team network is gone");
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
        assert_eq!(made.code, 0, "{}", made.stderr);
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
    }
}

/// `curl`'s status for `path` through the gateway on `port`, trusting only `cert`.
fn status_through(port: u16, cert: &std::path::Path, path: &str) -> String {
    let output = std::process::Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
        .arg(cert)
        .arg(format!("https://127.0.0.1:{port}{path}"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `compose` of a team with a gateway: docker-compose accepts it, the members publish
/// nothing, the gateway's key stays its owner's, and once up each member answers through
/// the gateway's one port to their own token only, with the team's certificate.
#[tokio::test]
async fn compose_exports_the_gateway_and_it_serves_each_member_behind_it() {
    if common::engine().await.is_none() {
        return;
    }
    let id = unique("c").replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let team = format!("gc{}", &id[id.len() - 10..]).to_lowercase();
    let port = free_port();
    let file = team_file(&team, "cpu-jupyter", port, &["alice", "bob"]);
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
    assert_eq!(made.code, 0, "{}", made.stderr);
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
        let own = format!("/{member}/api/status?token={}", token(member));
        common::wait_for(
            &format!("{member}'s Jupyter through the gateway"),
            std::time::Duration::from_secs(120),
            || status_through(port, &cert, &own) == "200",
        );
        let others = format!("/{member}/api/status?token={}", token(other));
        assert_eq!(status_through(port, &cert, &others), "403", "{member}");
        let none = format!("/{member}/api/status");
        assert_eq!(status_through(port, &cert, &none), "403", "{member}");
    }
    drop(guard);
}
