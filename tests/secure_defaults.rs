//! Secure defaults, each asserted on the real Engine: Jupyter refuses requests without
//! its token; ports bind 127.0.0.1 unless `--public`; sshd takes keys only and never
//! root; containers run as the host user, unprivileged, without added capabilities; no
//! secret (token, private key) in labels, `tfimg ps`, or image layers; the SSH key tfimg
//! makes is private to the user.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use common::{
    docker, field, http, scratch, secrets_in_layers, tfimg_with_env, unique, DockerGuard,
};

#[tokio::test]
async fn jupyter_is_token_only_loopback_only_unprivileged_and_the_token_stays_out_of_sight() {
    let Some(engine) = common::engine().await else { return };
    let name = unique("t-secure-lab");
    let public = unique("t-secure-public");
    let _guard = DockerGuard::containers(&[&name, &public]);
    let folder = scratch(&[]);
    let data = folder.path().join("data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let tfimg = |args: &[&str]| tfimg_with_env(folder.path(), args, &env);

    let started = tfimg(&[
        "run",
        "cpu-jupyter",
        "-d",
        "--no-build",
        "--name",
        &name,
        "--uid",
        "4321",
        "--gid",
        "4322",
    ]);
    assert_eq!(started.code, 0, "{}", started.tail());
    let url = field(&started.stdout, "jupyter").expect("a jupyter line");
    let common::JupyterUrl {
        address,
        port,
        token,
    } = common::jupyter_url(&url);
    let (address, token) = (address.as_str(), token.as_str());

    // The token is required, and only the right one works.
    assert_eq!(http("GET", port, "/api/status", &[], "").0, 403);
    assert_eq!(http("GET", port, "/api/status?token=0000", &[], "").0, 403);
    assert_eq!(http("GET", port, "/api/contents", &[], "").0, 403);
    let status = format!("/api/status?token={token}");
    assert_eq!(http("GET", port, &status, &[], "").0, 200);

    // Loopback only, unprivileged, nothing added, no new privileges.
    let host = |format: &str| {
        docker(&["inspect", "--format", format, &name])
            .trim()
            .to_string()
    };
    let bindings = host("{{json .HostConfig.PortBindings}}");
    assert!(
        bindings.matches("\"HostIp\":\"127.0.0.1\"").count() >= 1
            && bindings.matches("\"HostIp\":").count()
                == bindings.matches("\"HostIp\":\"127.0.0.1\"").count(),
        "{bindings}"
    );
    assert_eq!(host("{{.HostConfig.Privileged}}"), "false");
    assert_eq!(host("{{json .HostConfig.CapAdd}}"), "null");
    assert_eq!(
        host("{{json .HostConfig.SecurityOpt}}"),
        "[\"no-new-privileges\"]"
    );
    // Every process runs as the host ids, with no capability left.
    let processes = docker(&["top", &name, "-o", "pid,uid,gid,comm"]);
    let rows: Vec<&str> = processes.lines().skip(1).collect();
    assert!(rows.len() >= 2, "{processes}");
    for row in &rows {
        let columns: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&columns[1..3], ["4321", "4322"], "{processes}");
    }
    let status = tfimg(&["exec", &name, "--", "grep", "^Cap[EP]", "/proc/1/status"]);
    assert_eq!(
        status.stdout, "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n",
        "{}",
        status.stderr
    );

    // The token is in no label and not in `ps` unless asked for.
    let labels = docker(&["inspect", "--format", "{{json .Config.Labels}}", &name]);
    assert!(!labels.contains(token), "{labels}");
    assert!(
        labels.contains(&format!("\"io.tfimg.url.jupyter\":\"{address}\"")),
        "{labels}"
    );
    let image_labels = docker(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config.Labels}}",
        "tfimg/cpu-jupyter:2.9.3",
    ]);
    assert!(!image_labels.contains(token));
    let ps = tfimg(&["ps"]);
    assert_eq!(ps.code, 0, "{}", ps.tail());
    assert!(!ps.stdout.contains(token), "{}", ps.stdout);
    assert!(ps.stdout.contains(address), "{}", ps.stdout);
    assert!(
        ps.stderr.contains(
            "note: Jupyter tokens are hidden; `tfimg ps --show-tokens` prints the full URLs"
        ),
        "{}",
        ps.stderr
    );
    let json = tfimg(&["ps", "--json"]);
    assert!(!json.stdout.contains(token));
    let shown = tfimg(&["ps", "--show-tokens"]);
    assert!(shown.stdout.contains(&url), "{}", shown.stdout);
    let shown = tfimg(&["ps", "--json", "--show-tokens"]);
    assert!(shown.stdout.contains(&url), "{}", shown.stdout);

    // `--public` is the only way to every interface.
    let created = tfimg(&[
        "run",
        "cpu-jupyter",
        "--no-start",
        "--no-build",
        "--public",
        "--name",
        &public,
    ]);
    assert_eq!(created.code, 0, "{}", created.tail());
    assert!(created.stderr.contains(
        "warning: --public publishes the ports on every interface (0.0.0.0): anyone who can reach this host can connect; TensorBoard, which has no login, stays on 127.0.0.1 (reach it from elsewhere through `ssh -L`)\n"
    ), "{}", created.tail());
    // Jupyter (behind its token) on every interface; TensorBoard, which has no login,
    // never: `--public` does not open it to the network.
    let binding = |port: &str| {
        docker(&[
            "inspect",
            "--format",
            &format!("{{{{json (index .HostConfig.PortBindings \"{port}/tcp\")}}}}"),
            &public,
        ])
    };
    let jupyter = binding("8888");
    assert!(jupyter.contains("\"HostIp\":\"0.0.0.0\""), "{jupyter}");
    let tensorboard = binding("6006");
    assert!(
        tensorboard.contains("\"HostIp\":\"127.0.0.1\"") && !tensorboard.contains("0.0.0.0"),
        "{tensorboard}"
    );
    drop(engine);
}

#[tokio::test]
async fn ssh_takes_only_the_users_key_never_root_and_the_key_tfimg_makes_is_private() {
    let Some((_, name, _guard)) = common::container_test("t-secure-ssh").await else { return };
    // A home without keys: tfimg makes its own pair.
    let folder = scratch(&[]);
    let home = folder.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let data = folder.path().join("data");
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("XDG_DATA_HOME", data.to_str().unwrap()),
    ];
    let started = tfimg_with_env(
        folder.path(),
        &[
            "run",
            "cpu-ssh",
            "-d",
            "--no-build",
            "--name",
            &name,
            "--uid",
            "4321",
            "--gid",
            "4321",
        ],
        &env,
    );
    assert_eq!(started.code, 0, "{}", started.tail());
    let private = data.join("tfimg/ssh/id_ed25519");
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&private), 0o600, "the private key");
    assert_eq!(mode(&data.join("tfimg/ssh")), 0o700, "its folder");
    assert!(std::fs::read_to_string(&private)
        .unwrap()
        .contains("OPENSSH PRIVATE KEY"));

    let line = field(&started.stdout, "ssh").expect("an ssh line");
    assert!(
        line.contains(&format!("-i {}", private.display())),
        "{line}"
    );
    let ssh = |login: &str, extra: &[&str]| {
        let parts: Vec<String> = line
            .split_whitespace()
            .map(|part| {
                if part == "tf@127.0.0.1" {
                    login.to_string()
                } else {
                    part.to_string()
                }
            })
            .collect();
        let output = Command::new(&parts[0])
            .args(&parts[1..])
            .args(["-o", "BatchMode=yes"])
            .args(extra)
            .args(["id", "-u"])
            .env("HOME", &home)
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).trim().to_string(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (ok, uid, stderr) = ssh("tf@127.0.0.1", &[]);
    assert!(ok, "{stderr}");
    assert_eq!(uid, "4321");
    // The right key, the wrong user: root (and anyone else) is refused.
    let (ok, _, stderr) = ssh("root@127.0.0.1", &[]);
    assert!(!ok);
    assert!(stderr.contains("Permission denied (publickey)"), "{stderr}");
    let (ok, _, stderr) = ssh("nobody@127.0.0.1", &[]);
    assert!(!ok);
    assert!(stderr.contains("Permission denied (publickey)"), "{stderr}");
    // No password or keyboard-interactive method is even offered.
    let (ok, _, stderr) = ssh(
        "tf@127.0.0.1",
        &[
            "-o",
            "PreferredAuthentications=password,keyboard-interactive",
        ],
    );
    assert!(!ok);
    assert!(stderr.contains("Permission denied (publickey)"), "{stderr}");
}

#[tokio::test]
async fn no_private_key_or_secret_is_in_any_layer_of_the_ssh_image() {
    let Some(_engine) = common::engine().await else { return };
    // openssh-server's install makes host keys; the image must not carry them, in no
    // layer (a key deleted by a later layer would still be in the one that added it).
    let found = secrets_in_layers("tfimg/cpu-ssh:2.9.3", &[]);
    assert_eq!(
        found,
        Vec::<String>::new(),
        "private keys in the layers of tfimg/cpu-ssh"
    );
    let history = docker(&[
        "history",
        "--no-trunc",
        "--format",
        "{{.CreatedBy}}",
        "tfimg/cpu-ssh:2.9.3",
    ]);
    assert!(history.contains("rm -f /etc/ssh/ssh_host_"), "{history}");
}
