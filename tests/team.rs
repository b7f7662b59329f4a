//! Team files against the real Engine: `up` brings a team of four up (two notebooks, an
//! SSH box, a batch job), a second `up` changes nothing, an edited member alone is
//! recreated, `down` removes every container and keeps the mounted folders.

mod common;

use tfimg_testing::engine::prelude::*;

use std::os::unix::fs::PermissionsExt;

use common::cli::free_port;
use common::compose::ComposeGuard;
use common::{docker, http, scratch, tfimg_with_env, unique, DockerGuard, HOST_CA};

fn team_file(team: &str, ports: &[u16; 3], alice_env: &str) -> String {
    format!(
        "team: {team}\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n\
         \x20 - name: alice\n    ports: {{jupyter: {}}}\n    env: {{NOTE: \"{alice_env}\"}}\n\
         \x20 - name: bob\n    ports: {{jupyter: {}}}\n\
         \x20 - name: carol\n    spec: cpu-ssh\n    ports: {{ssh: {}}}\n\
         \x20 - name: train\n    spec: cpu-headless\n    command: [\"python\", \"-c\", \"import tensorflow as tf; print('trained', tf.__version__)\"]\n",
        ports[0], ports[1], ports[2]
    )
}

fn column(table: &str, member: &str, index: usize) -> String {
    table
        .lines()
        .find(|line| line.split_whitespace().next() == Some(member))
        .and_then(|line| line.split_whitespace().nth(index).map(str::to_string))
        .unwrap_or_else(|| panic!("no `{member}` row in:\n{table}"))
}

#[tokio::test]
async fn a_team_comes_up_stays_up_changes_one_member_and_goes_down_keeping_data() {
    let Some(engine) = common::engine().await else { return };
    let team = unique("team").replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let team = format!("t{}", &team[team.len() - 12..]).to_lowercase();
    let members = ["alice", "bob", "carol", "train"].map(|m| format!("{team}-{m}"));
    let _guard = DockerGuard::containers(&members.iter().map(String::as_str).collect::<Vec<_>>());
    let ports = [free_port(), free_port(), free_port()];
    let folder = scratch(&[("team.yaml", &team_file(&team, &ports, "one"))]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let up = |args: &[&str]| {
        let mut all = vec!["up", "team.yaml", "--ca-cert", HOST_CA];
        all.extend_from_slice(args);
        tfimg_with_env(folder.path(), &all, &env)
    };

    let first = up(&[]);
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    // Each member's folder under `mounts_root` is made, and said, naming its member.
    let created: Vec<&str> = first
        .stderr
        .lines()
        .filter(|line| line.contains("created"))
        .collect();
    let mut created = created.clone();
    created.sort();
    assert_eq!(
        created,
        [
            "note: `alice`: created ./work/alice (empty)",
            "note: `bob`: created ./work/bob (empty)",
            "note: `carol`: created ./work/carol (empty)",
            "note: `train`: created ./work/train (empty)",
        ],
        "{}",
        first.stderr
    );
    for member in ["alice", "bob", "carol", "train"] {
        assert_eq!(
            column(&first.stdout, member, 2),
            "created",
            "{}",
            first.stdout
        );
    }
    for (member, port) in [("alice", ports[0]), ("bob", ports[1])] {
        let url = column(&first.stdout, member, 4);
        assert!(
            url.starts_with(&format!("http://127.0.0.1:{port}/lab?token=")),
            "{url}"
        );
        let token = url.split("token=").nth(1).unwrap();
        assert_eq!(
            http("GET", port, &format!("/api/status?token={token}"), &[], "").0,
            200,
            "{member}"
        );
        assert_eq!(http("GET", port, "/api/status", &[], "").0, 403, "{member}");
    }
    let alice_token = column(&first.stdout, "alice", 4);
    let bob_token = column(&first.stdout, "bob", 4);
    assert_ne!(
        alice_token.split("token=").nth(1),
        bob_token.split("token=").nth(1),
        "each member has a token"
    );

    // carol's ssh line works as printed.
    let line = first
        .stdout
        .lines()
        .find(|l| l.starts_with("carol "))
        .unwrap();
    // The ACCESS column, up to the TENSORBOARD one.
    let ssh: Vec<&str> = line[line.find("ssh -p").unwrap()..]
        .split_whitespace()
        .take_while(|field| !field.starts_with("http://"))
        .collect();
    let output = std::process::Command::new(ssh[0])
        .args(&ssh[1..])
        .args([
            "-o",
            "BatchMode=yes",
            "python -c 'import tensorflow as tf; print(tf.__version__)'",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "2.9.3",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The batch job ran once, with its output in its log.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let train = engine.container(&members[3]).await.unwrap().unwrap();
        if train.state == "exited" {
            assert_eq!(train.exit_code, Some(0));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the batch job never finished"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(engine
        .output(&members[3])
        .await
        .unwrap()
        .contains("trained 2.9.3"));

    // A file in alice's mounted folder, written through Jupyter.
    let token = alice_token.split("token=").nth(1).unwrap().to_string();
    let authorization = format!("token {token}");
    let written = http(
        "PUT",
        ports[0],
        "/api/contents/work/kept.txt",
        &[
            ("Authorization", &authorization),
            ("Content-Type", "application/json"),
        ],
        r#"{"type": "file", "format": "text", "content": "kept"}"#,
    );
    assert_eq!(written.0, 201, "{}", written.1);

    let second = up(&[]);
    assert_eq!(second.code, 0, "{}", second.tail());
    assert!(
        second.stderr.contains(&format!(
            "no change: the 4 member(s) of `{team}` are up to date"
        )),
        "{}",
        second.stderr
    );
    for member in ["alice", "bob", "carol", "train"] {
        assert_eq!(column(&second.stdout, member, 2), "unchanged");
    }

    std::fs::write(
        folder.path().join("team.yaml"),
        team_file(&team, &ports, "two"),
    )
    .unwrap();
    let bob_id = engine.container(&members[1]).await.unwrap().unwrap().id;
    let third = up(&[]);
    assert_eq!(third.code, 0, "{}", third.tail());
    assert_eq!(column(&third.stdout, "alice", 2), "recreated");
    for member in ["bob", "carol", "train"] {
        assert_eq!(
            column(&third.stdout, member, 2),
            "unchanged",
            "{}",
            third.stdout
        );
    }
    assert_eq!(
        engine.container(&members[1]).await.unwrap().unwrap().id,
        bob_id
    );

    let down = tfimg_with_env(folder.path(), &["down", "team.yaml"], &env);
    assert_eq!(down.code, 0, "{}", down.tail());
    for name in &members {
        assert!(
            engine.container(name).await.unwrap().is_none(),
            "{name} left behind"
        );
    }
    assert_eq!(
        std::fs::read_to_string(folder.path().join("work/alice/kept.txt")).unwrap(),
        "kept"
    );
}

#[test]
fn clashing_gpus_and_ports_exit_1_naming_both_members_and_the_line() {
    let folder = scratch(&[
        (
            "gpus.yaml",
            "team: lab\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    gpus: [0, 1]\n  - name: bob\n    gpus: [1]\n",
        ),
        (
            "ports.yaml",
            "team: lab\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    ports: {jupyter: 8890}\n  - name: bob\n    ports: {jupyter: 8890}\n",
        ),
    ]);
    let gpus = tfimg_with_env(folder.path(), &["up", "gpus.yaml"], &[]);
    assert_eq!(gpus.code, 1);
    assert_eq!(
        gpus.stderr,
        "error: `gpus.yaml`:7:5: GPU 1 is given to both `alice` and `bob`\n\
         hint: give each member its own GPUs, or set `shared: true` on both to share on purpose\n"
    );
    let ports = tfimg_with_env(folder.path(), &["up", "ports.yaml"], &[]);
    assert_eq!(ports.code, 1);
    assert_eq!(
        ports.stderr,
        "error: `ports.yaml`:7:5: host port 8890 is given to both `alice` (jupyter) and `bob` (jupyter)\n\
         hint: give each member its own host ports, or leave `ports` out and tfimg picks free ones\n"
    );
}

/// A time limit that only catches a hang.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// A scalar of docker-compose's YAML output without its quotes.
fn unquoted(text: &str) -> &str {
    text.trim_matches(|c| c == '\'' || c == '"')
}

#[tokio::test]
async fn the_compose_export_validates_and_starts_the_cpu_members_with_working_urls() {
    let Some(_engine) = common::engine().await else { return };
    let ports = [free_port(), free_port()];
    let team = format!(
        "c{}",
        &unique("x").replace(|c: char| !c.is_ascii_alphanumeric(), "")[..]
    )
    .to_lowercase();
    let team = team[..team.len().min(20)].to_string();
    let file = format!(
        "team: {team}\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n\
         \x20 - name: alice\n    ports: {{jupyter: {}}}\n{}\
         \x20 - name: bob\n    ports: {{jupyter: {}}}\n\
         \x20 - name: gpu\n    spec: gpu-headless\n    gpus: [0, 1]\n\
         \x20 - name: echo\n    spec: cpu-headless\n    mounts: [\"./data$x:/data\"]\n\
         \x20   command: [\"sh\", \"-c\", \"echo home=$HOME; cat /data/marker\"]\n",
        ports[0],
        alice_env(),
        ports[1]
    );
    let folder = scratch(&[("team.yaml", &file), ("data$x/marker", "mounted\n")]);
    // `echo`'s writable `./data$x` must be out of other accounts' reach (a member's setuid
    // file there would run as the members' uid): the project folder is private.
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let output = folder.path().join("out/team.compose.yaml");
    let guard = ComposeGuard {
        file: output.clone(),
        project: team.clone(),
    };
    // An env file that was there, world-readable and with a second name: the new token
    // never goes into it.
    let env_file = folder.path().join(format!("out/{team}.alice.env"));
    std::fs::create_dir_all(env_file.parent().unwrap()).unwrap();
    std::fs::write(&env_file, "# an older export\n").unwrap();
    std::fs::set_permissions(&env_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let kept = folder.path().join("out/kept.env");
    std::fs::hard_link(&env_file, &kept).unwrap();
    let made = tfimg_with_env(
        folder.path(),
        &[
            "compose",
            "--build",
            "team.yaml",
            "-o",
            "out/team.compose.yaml",
            "--ca-cert",
            HOST_CA,
        ],
        &[],
    );
    assert_eq!(made.code, 0, "{}", made.tail());
    assert!(
        made.stderr.contains("reach the members once `docker compose -f out/team.compose.yaml up -d` started them (the tokens are this export's own, kept in its env files; the containers `tfimg up` started keep theirs):\nMEMBER "),
        "{}",
        made.stderr
    );
    for member in ["alice", "bob"] {
        let path = folder.path().join(format!("out/{team}.{member}.env"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", path.display());
    }
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "# an older export\n"
    );
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(
        !text.contains("TFIMG_JUPYTER_TOKEN"),
        "tokens stay out of the Compose file"
    );
    assert!(
        text.contains(&format!("127.0.0.1:{}:8888", ports[0])),
        "{text}"
    );

    // `$x` would be the host's variable if Compose were left to interpolate it.
    let compose = |args: &[&str]| guard.run(args, &[("x", "WRONG")]);
    let config = compose(&["config"]);
    assert!(
        config.status.success(),
        "{}",
        String::from_utf8_lossy(&config.stderr)
    );
    let resolved = String::from_utf8_lossy(&config.stdout);
    // docker-compose (YAML 1.1) read every value as the string it is.
    for (key, value) in ALICE_ENV_VALUES {
        let found = resolved.lines().any(|line| {
            line.trim()
                .split_once(": ")
                .is_some_and(|(k, v)| unquoted(k) == *key && unquoted(v) == *value)
        });
        assert!(found, "`{key}: {value}` missing from:\n{resolved}");
    }
    let data = format!("{}/data$x:/data", folder.path().display());
    assert!(
        resolved.contains(&data),
        "`{data}` missing from:\n{resolved}"
    );
    assert!(!resolved.contains("WRONG"), "{resolved}");
    for expected in ["driver: nvidia", "device_ids:", "- '0'", "- '1'", "- gpu"] {
        assert!(
            resolved.contains(expected),
            "`{expected}` missing from:\n{resolved}"
        );
    }

    let up = compose(&["up", "-d", "alice", "bob", "echo"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    // The command's `$HOME` is the container's, and the folder with `$` in its name is
    // the one mounted.
    let echo = String::from_utf8_lossy(&compose(&["ps", "-q", "echo"]).stdout)
        .trim()
        .to_string();
    common::wait_for("the echo member to finish", LIMIT, || {
        common::container_state(&echo).as_deref() == Some("exited")
    });
    assert_eq!(common::docker(&["logs", &echo]), "home=/home/tf\nmounted\n");
    for (member, port) in [("alice", ports[0]), ("bob", ports[1])] {
        let env = std::fs::read_to_string(folder.path().join(format!("out/{team}.{member}.env")))
            .unwrap();
        let token = env
            .lines()
            .find_map(|line| line.strip_prefix("TFIMG_JUPYTER_TOKEN="))
            .expect("a token in the env file");
        // `compose` said where the member is, with the export's own token.
        let row = made
            .stderr
            .lines()
            .find(|line| line.starts_with(&format!("{member} ")))
            .unwrap_or_else(|| panic!("no row for {member}: {}", made.stderr));
        assert_eq!(
            row.split_whitespace().nth(1),
            Some(format!("http://127.0.0.1:{port}/lab?token={token}").as_str()),
            "{}",
            made.stderr
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let answered = tfimg_testing::host::Probes::http_status(
                &tfimg_testing::host::Machine,
                port,
                &format!("/api/status?token={token}"),
            )
            .await;
            if answered == Some(200) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{member}'s Jupyter never answered"
            );
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(http("GET", port, "/api/status", &[], "").0, 403);
    }
    drop(guard);
}

/// Environment values (and names) that YAML 1.1 reads as booleans, null, numbers or dates.
const ALICE_ENV_VALUES: &[(&str, &str)] = &[
    ("NOTE", "on"),
    ("YES", "no"),
    ("Y", "y"),
    ("NOTHING", "~"),
    ("HEX", "0x1F"),
    ("BIG", "1_000"),
    ("LUNCH", "12:30"),
    ("DAY", "2001-12-14"),
    ("E", "1e3"),
    ("OCTAL", "012"),
    ("INFINITE", ".inf"),
];

/// ALICE_ENV_VALUES as the `env:` of a member in a team file.
fn alice_env() -> String {
    let mut text = "    env:\n".to_string();
    for (key, value) in ALICE_ENV_VALUES {
        text.push_str(&format!("      {key}: \"{value}\"\n"));
    }
    text
}

#[tokio::test]
async fn kubernetes_manifests_validate_strictly_and_every_worker_gets_its_tf_config() {
    let Some(_engine) = common::engine().await else { return };
    let team_file = format!(
        "team: vision-lab\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n\
         \x20 - name: alice\n    gpus: [0]\n{}\
         \x20 - name: carol\n    spec: cpu-ssh\n\
         \x20 - name: batch\n    spec: cpu-headless\n    command: [\"python\", \"train.py\"]\n\
         \x20 - name: dist\n    spec: gpu-headless\n    gpus: 1\n    workers: 3\n    command: [\"python\", \"train.py\"]\n",
        alice_env()
    );
    let folder = scratch(&[("team.yaml", &team_file)]);
    let data = folder.path().join(".tfimg-data");
    // A manifest file that was there, world-readable and with a second name: the new
    // Secrets never go into it.
    let manifests = folder.path().join("out/vision-lab.yaml");
    std::fs::create_dir_all(manifests.parent().unwrap()).unwrap();
    std::fs::write(&manifests, "# an older export\n").unwrap();
    std::fs::set_permissions(&manifests, std::fs::Permissions::from_mode(0o644)).unwrap();
    let kept = folder.path().join("out/kept.yaml");
    std::fs::hard_link(&manifests, &kept).unwrap();
    let made = tfimg_with_env(
        folder.path(),
        &[
            "k8s",
            "--build",
            "team.yaml",
            "-o",
            "out",
            "--registry",
            "registry.example.com:5000",
            "--tfjob",
            "--ca-cert",
            HOST_CA,
        ],
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    assert_eq!(made.code, 0, "{}", made.tail());
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(
        mode(&manifests) & 0o777,
        0o600,
        "the file holding the Secrets"
    );
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "# an older export\n"
    );
    common::k8s::assert_valid(&manifests);

    let text = std::fs::read_to_string(&manifests).unwrap();
    let documents = documents_of(&text);
    let kinds: Vec<String> = documents
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["kind"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    for expected in [
        "Secret/vision-lab-alice",
        "Deployment/vision-lab-alice",
        "Service/vision-lab-alice",
        "PersistentVolumeClaim/vision-lab-alice-data-0",
        "Secret/vision-lab-carol",
        "Job/vision-lab-batch",
        "Service/vision-lab-dist-workers",
        "Job/vision-lab-dist",
    ] {
        assert!(
            kinds.contains(&expected.to_string()),
            "{expected} missing from {kinds:?}"
        );
    }
    let alice = documents
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap();
    let pod = &alice["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsUser"], 1000);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let container = &pod["containers"][0];
    // The values YAML 1.1 would turn into booleans, numbers and dates stay strings
    // (kubernetes-validate, which reads YAML 1.1, accepted them above).
    for (key, value) in ALICE_ENV_VALUES {
        let variable = container["env"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|variable| variable["name"] == *key)
            .unwrap_or_else(|| panic!("no {key} in {container:?}"));
        assert_eq!(variable["value"], *value);
    }
    // No pod gets a service account token.
    let mut pods = 0;
    for document in documents.iter().chain(&documents_of(&format!(
        "\n---\n{}",
        std::fs::read_to_string(folder.path().join("out/vision-lab.tfjob.yaml")).unwrap()
    ))) {
        let pod = match document["kind"].as_str() {
            Some("Deployment" | "Job") => &document["spec"]["template"]["spec"],
            Some("TFJob") => &document["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"],
            _ => continue,
        };
        assert_eq!(pod["automountServiceAccountToken"], false, "{document:?}");
        pods += 1;
    }
    assert_eq!(pods, 5);
    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], 1);
    assert!(container["image"]
        .as_str()
        .unwrap()
        .starts_with("registry.example.com:5000/tfimg/cpu-jupyter:2.9.3-"));
    assert!(
        !text.contains("TFIMG_JUPYTER_TOKEN=")
            && !serde_yaml::to_string(container)
                .unwrap()
                .contains("TFIMG_JUPYTER_TOKEN")
    );

    // Each worker's TF_CONFIG: run the pod's own shell with its index, print what it exports.
    let job = documents
        .iter()
        .find(|d| d["kind"] == "Job" && d["metadata"]["name"] == "vision-lab-dist")
        .unwrap();
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(job["spec"]["completions"], 3);
    assert_eq!(
        job["spec"]["template"]["spec"]["subdomain"],
        "vision-lab-dist-workers"
    );
    let command = &job["spec"]["template"]["spec"]["containers"][0]["command"];
    let script = command[2].as_str().unwrap();
    for index in 0..3 {
        let output = std::process::Command::new("sh")
            .args([
                "-c",
                script,
                "tfimg-worker",
                "sh",
                "-c",
                "printf %s \"$TF_CONFIG\"",
            ])
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .output()
            .unwrap();
        let config: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("TF_CONFIG is JSON");
        assert_eq!(config["task"]["type"], "worker");
        assert_eq!(config["task"]["index"], index);
        let workers: Vec<&str> = config["cluster"]["worker"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(
            workers,
            [
                "vision-lab-dist-0.vision-lab-dist-workers:2222",
                "vision-lab-dist-1.vision-lab-dist-workers:2222",
                "vision-lab-dist-2.vision-lab-dist-workers:2222"
            ]
        );
    }
    let tfjob = std::fs::read_to_string(folder.path().join("out/vision-lab.tfjob.yaml")).unwrap();
    assert!(
        tfjob.contains("kind: TFJob") && tfjob.contains("replicas: 3"),
        "{tfjob}"
    );
}

/// The documents of a multi-document manifest file.
fn documents_of(text: &str) -> Vec<serde_yaml::Value> {
    text.split("\n---\n")
        .skip(1)
        .map(|document| serde_yaml::from_str(document).unwrap())
        .collect()
}

fn document<'a>(
    documents: &'a [serde_yaml::Value],
    kind: &str,
    name: &str,
) -> &'a serde_yaml::Value {
    documents
        .iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name}"))
}

/// What Kubernetes gives a pod that Docker does not: the kernel's own floor for
/// unprivileged ports (Docker lowers it to 0 in every container; containerd and CRI-O
/// leave it at 1024), so the pod's command is tried against it.
const KUBERNETES_PORT_FLOOR: &str = "net.ipv4.ip_unprivileged_port_start=1024";

#[tokio::test]
async fn an_ssh_member_exported_to_kubernetes_serves_ssh_as_its_uid_with_no_capability() {
    let Some(_engine) = common::engine().await else { return };
    let team = format!(
        "k{}",
        unique("x").replace(|c: char| !c.is_ascii_alphanumeric(), "")
    )
    .to_lowercase();
    let team = team[..team.len().min(20)].to_string();
    let folder = scratch(&[(
        "team.yaml",
        &format!("team: {team}\nmembers:\n  - name: carol\n    spec: cpu-ssh\n"),
    )]);
    let data = folder.path().join(".tfimg-data");
    let made = tfimg_with_env(
        folder.path(),
        &[
            "k8s",
            "--build",
            "team.yaml",
            "-o",
            "out",
            "--ca-cert",
            HOST_CA,
        ],
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    );
    assert_eq!(made.code, 0, "{}", made.tail());
    let text = std::fs::read_to_string(folder.path().join(format!("out/{team}.yaml"))).unwrap();
    let documents = documents_of(&text);
    let name = format!("{team}-carol");

    // The Service answers on 22 and sends it to the pod's own port.
    let service = document(&documents, "Service", &name);
    let ssh_port = service["spec"]["ports"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|port| port["name"] == "ssh")
        .expect("an ssh port");
    assert_eq!(ssh_port["port"], 22);
    let target = ssh_port["targetPort"].as_u64().unwrap();
    assert!(target >= 1024, "sshd must listen on an unprivileged port");

    let pod = &document(&documents, "Deployment", &name)["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    let container = &pod["containers"][0];
    assert_eq!(
        container["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|port| port["name"] == "ssh")
            .unwrap()["containerPort"],
        target
    );
    assert_eq!(
        container["securityContext"]["capabilities"]["drop"][0],
        "ALL"
    );
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    let uid = pod["securityContext"]["runAsUser"].as_u64().unwrap();
    let gid = pod["securityContext"]["runAsGroup"].as_u64().unwrap();
    assert_ne!(uid, 0);

    // The pod as Kubernetes would start it: its image, entrypoint, command, environment
    // and Secret, as its uid:gid, no capability, no privilege escalation.
    let container_name = unique("t-k8s-ssh");
    let _guard = DockerGuard::containers(&[&container_name]);
    let user = format!("{uid}:{gid}");
    let mut run: Vec<String> = [
        "run",
        "-d",
        "--name",
        &container_name,
        "--user",
        &user,
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--sysctl",
        KUBERNETES_PORT_FLOOR,
        "-p",
        &format!("127.0.0.1::{target}"),
    ]
    .map(String::from)
    .to_vec();
    for variable in container["env"].as_sequence().unwrap() {
        let (key, value) = (
            variable["name"].as_str().unwrap(),
            variable["value"].as_str().unwrap(),
        );
        run.extend(["-e".to_string(), format!("{key}={value}")]);
    }
    let secret = document(&documents, "Secret", &name);
    assert_eq!(container["envFrom"][0]["secretRef"]["name"], name.as_str());
    for (key, value) in secret["stringData"].as_mapping().unwrap() {
        let (key, value) = (key.as_str().unwrap(), value.as_str().unwrap());
        run.extend(["-e".to_string(), format!("{key}={value}")]);
    }
    if let Some(command) = container["command"].as_sequence() {
        run.extend([
            "--entrypoint".to_string(),
            command[0].as_str().unwrap().into(),
        ]);
        assert_eq!(
            command.len(),
            1,
            "an entrypoint with arguments: {command:?}"
        );
    }
    run.push(container["image"].as_str().unwrap().to_string());
    for argument in container["args"].as_sequence().into_iter().flatten() {
        run.push(argument.as_str().unwrap().to_string());
    }
    let started = std::process::Command::new("docker")
        .args(&run)
        .output()
        .unwrap();
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let published = common::docker(&["port", &container_name, &target.to_string()]);
    let host_port = published
        .lines()
        .next()
        .and_then(|line| line.rsplit(':').next())
        .unwrap_or_else(|| panic!("port {target} is not published: {published}"))
        .trim()
        .to_string();

    let key = data.join(format!("tfimg/teams/{team}/carol/id_ed25519"));
    let login = || {
        std::process::Command::new("ssh")
            .args(["-p", &host_port, "-i"])
            .arg(&key)
            .args([
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=no",
                "-o",
                "UserKnownHostsFile=/dev/null",
                "-o",
                "ConnectTimeout=5",
                "tf@127.0.0.1",
                "id -u; grep CapEff /proc/1/status",
            ])
            .output()
            .unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let output = loop {
        let output = login();
        if output.status.success() {
            break output;
        }
        let logs = std::process::Command::new("docker")
            .args(["logs", &container_name])
            .output()
            .unwrap();
        assert!(
            std::time::Instant::now() < deadline
                && common::container_state(&container_name).as_deref() == Some("running"),
            "no ssh login: {}\ncontainer log:\n{}{}",
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&logs.stdout),
            String::from_utf8_lossy(&logs.stderr)
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(uid.to_string().as_str()), "{stdout}");
    assert_eq!(
        lines
            .next()
            .map(|line| line.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["CapEff:", "0000000000000000"]),
        "{stdout}"
    );
}

/// Two teams brought up at the same moment all want Jupyter's 8888 and TensorBoard's 6006:
/// `up` goes through the same launcher as `run`, so a port lost to the other team is
/// chosen again, and both teams come up with four different ports, each answering.
#[tokio::test]
async fn two_teams_racing_for_the_same_free_ports_both_come_up() {
    let Some(engine) = common::engine().await else { return };
    let names: Vec<String> = (0..2)
        .map(|i| {
            let unique = unique("race").replace(|c: char| !c.is_ascii_alphanumeric(), "");
            format!("r{i}{}", &unique[unique.len() - 10..]).to_lowercase()
        })
        .collect();
    let members: Vec<String> = names
        .iter()
        .flat_map(|team| [format!("{team}-alice"), format!("{team}-bob")])
        .collect();
    let _guard = DockerGuard::containers(&members.iter().map(String::as_str).collect::<Vec<_>>());
    let file = |team: &str| {
        format!("team: {team}\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: alice\n  - name: bob\n")
    };
    let folder = scratch(&[("a.yaml", &file(&names[0])), ("b.yaml", &file(&names[1]))]);
    let data = folder.path().join(".tfimg-data");
    let ups: Vec<std::process::Child> = ["a.yaml", "b.yaml"]
        .iter()
        .map(|team| {
            std::process::Command::new(env!("CARGO_BIN_EXE_tfimg"))
                .args(["up", team, "--ca-cert", HOST_CA, "--progress", "plain"])
                .current_dir(folder.path())
                .env("XDG_DATA_HOME", &data)
                .env("TFIMG_CONFIG", "/dev/null")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for up in ups {
        let output = up.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut jupyter_ports = std::collections::BTreeSet::new();
    for member in &members {
        let container = engine.container(member).await.unwrap().expect(member);
        assert_eq!(container.state, "running", "{member}");
        let url = container.labels["io.tfimg.url.jupyter"].clone();
        let port: u16 = url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/lab")
            .parse()
            .unwrap_or_else(|_| panic!("{member}: {url}"));
        jupyter_ports.insert(port);
        let token = container
            .env
            .iter()
            .find_map(|entry| entry.strip_prefix("TFIMG_JUPYTER_TOKEN="))
            .unwrap()
            .to_string();
        let (status, _) = http("GET", port, &format!("/api/status?token={token}"), &[], "");
        assert_eq!(status, 200, "{member} on {port}");
    }
    assert_eq!(jupyter_ports.len(), 4, "{jupyter_ports:?}");
    for team in ["a.yaml", "b.yaml"] {
        let down = tfimg_with_env(folder.path(), &["down", team], &[]);
        assert_eq!(down.code, 0, "{}", down.tail());
    }
}

/// The exports render from the team file alone: with no daemon to ask, `compose` and
/// `k8s` still write their files, naming each image by its moving tag.
#[test]
fn compose_and_k8s_need_no_daemon() {
    let file = "team: nodaemon\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: alice\n  - name: train\n    spec: cpu-headless\n    command: [\"python\", \"train.py\"]\n";
    let folder = scratch(&[("team.yaml", file)]);
    let no_daemon = [("DOCKER_HOST", "unix:///nonexistent/tfimg-no-daemon.sock")];
    let compose = tfimg_with_env(
        folder.path(),
        &["compose", "team.yaml", "-o", "out/team.compose.yaml"],
        &no_daemon,
    );
    assert_eq!(compose.code, 0, "{}", compose.tail());
    let text = std::fs::read_to_string(folder.path().join("out/team.compose.yaml")).unwrap();
    assert!(text.contains("image: tfimg/cpu-jupyter:2.9.3\n"), "{text}");
    assert!(text.contains("image: tfimg/cpu-headless:2.9.3\n"), "{text}");
    assert!(
        compose.stderr.contains("referenced by their moving tags"),
        "{}",
        compose.stderr
    );
    let k8s = tfimg_with_env(
        folder.path(),
        &["k8s", "team.yaml", "-o", "manifests"],
        &no_daemon,
    );
    assert_eq!(k8s.code, 0, "{}", k8s.tail());
    let manifests = std::fs::read_to_string(folder.path().join("manifests/nodaemon.yaml")).unwrap();
    assert!(
        manifests.contains("image: tfimg/cpu-jupyter:2.9.3\n"),
        "{manifests}"
    );
    // `--build` needs the daemon, and says so.
    let build = tfimg_with_env(folder.path(), &["k8s", "team.yaml", "--build"], &no_daemon);
    assert_eq!(build.code, 2, "{}", build.tail());
    assert!(
        build.stderr.contains("cannot reach the Docker daemon"),
        "{}",
        build.stderr
    );
}

/// A serving member in both exports, with no daemon: Compose gets the model folder as a
/// read-only bind mount, the REST port on 127.0.0.1, the default memory limit (8 GiB) and
/// a healthcheck that docker-compose accepts; Kubernetes gets the model's own claim, the
/// same limit and probes on the status endpoint, and `kubernetes-validate --strict`
/// accepts the manifests.
#[test]
fn a_serving_member_exports_to_compose_and_kubernetes() {
    let file = "team: models\nmembers:\n  - name: fraud\n    spec: cpu-serving\n    model: ./export/fraud\n  - name: spam\n    spec: cpu-serving\n    model: ./export/spam-2\n    model_name: spam\n    ports: {rest: 8601}\n    batching: ./batching.config\n";
    let folder = scratch(&[
        ("team.yaml", file),
        (
            "batching.config",
            "max_batch_size { value: 16 }\nallowed_batch_sizes: 8\nallowed_batch_sizes: 16\n",
        ),
        // Only the layout is read: a numbered folder holding `saved_model.pb`.
        ("export/fraud/1/saved_model.pb", "not read"),
        ("export/spam-2/3/saved_model.pb", "not read"),
    ]);
    let no_daemon = [("DOCKER_HOST", "unix:///nonexistent/tfimg-no-daemon.sock")];
    let compose = tfimg_with_env(
        folder.path(),
        &["compose", "team.yaml", "-o", "team.compose.yaml"],
        &no_daemon,
    );
    assert_eq!(compose.code, 0, "{}", compose.tail());
    let config = std::process::Command::new("docker-compose")
        .args(["-f", "team.compose.yaml", "config"])
        .current_dir(folder.path())
        .env("DOCKER_HOST", "unix:///nonexistent/tfimg-no-daemon.sock")
        .output()
        .expect("docker-compose is installed (scripts/setup-machine)");
    let config_text = String::from_utf8_lossy(&config.stdout).into_owned();
    assert!(
        config.status.success(),
        "{config_text}{}",
        String::from_utf8_lossy(&config.stderr)
    );
    // docker-compose's own reading of the file (1.29 writes the short syntax back, with
    // the source made absolute): the bind mount read-only at /models/NAME, the REST and
    // gRPC ports on 127.0.0.1, the healthcheck.
    let read: serde_yaml::Value = serde_yaml::from_str(&config_text).unwrap();
    let text = |value: &serde_yaml::Value| value.as_str().unwrap_or_default().to_string();
    let fraud = &read["services"]["fraud"];
    assert_eq!(
        text(&fraud["volumes"][0]),
        format!(
            "{}:/models/fraud:ro",
            folder.path().join("export/fraud").display()
        ),
        "{config_text}"
    );
    let ports = |service: &serde_yaml::Value| -> Vec<String> {
        (service["ports"].as_sequence().into_iter().flatten())
            .map(text)
            .collect()
    };
    for container in [":8501/tcp", ":8500/tcp"] {
        assert!(
            (ports(fraud).iter())
                .any(|port| port.starts_with("127.0.0.1:") && port.ends_with(container)),
            "{container}: {config_text}"
        );
    }
    // A model server takes hostile request bytes: it has a memory limit by default.
    assert_eq!(text(&fraud["mem_limit"]), "8589934592", "{config_text}");
    let spam = &read["services"]["spam"];
    assert!(
        ports(spam).contains(&"127.0.0.1:8601:8501/tcp".to_string()),
        "{config_text}"
    );
    assert_eq!(
        text(&spam["volumes"][0]),
        format!(
            "{}:/models/spam:ro",
            folder.path().join("export/spam-2").display()
        )
    );
    // Its `batching:` file, read as `tfimg serve --batching-parameters` reads it, reaches
    // its server; the other member keeps the server's own merging.
    let batching = text(&spam["environment"]["TFIMG_SERVING_BATCHING"]);
    let batching: serde_json::Value = serde_json::from_str(&batching).expect(&config_text);
    assert_eq!(batching["max_batch_size"], 16, "{config_text}");
    assert_eq!(
        batching["allowed_batch_sizes"],
        serde_json::json!([8, 16]),
        "{config_text}"
    );
    assert!(
        fraud["environment"]["TFIMG_SERVING_BATCHING"].is_null(),
        "{config_text}"
    );
    let check = spam["healthcheck"]["test"].as_sequence().unwrap();
    assert_eq!(
        check[..2],
        ["CMD".into(), "python3".into()] as [serde_yaml::Value; 2]
    );
    assert!(
        check[3]
            .as_str()
            .unwrap()
            .contains("'http://127.0.0.1:8501/v1/models/spam'"),
        "{check:?}"
    );

    let k8s = tfimg_with_env(
        folder.path(),
        &["k8s", "team.yaml", "-o", "manifests"],
        &no_daemon,
    );
    assert_eq!(k8s.code, 0, "{}", k8s.tail());
    let manifests = folder.path().join("manifests/models.yaml");
    common::k8s::assert_valid(&manifests);
    let text = std::fs::read_to_string(&manifests).unwrap();
    let documents = documents_of(&text);
    let deployment = document(&documents, "Deployment", "models-spam");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["resources"]["limits"]["memory"].as_str(),
        Some("8192Mi"),
        "{text}"
    );
    for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
        assert_eq!(
            container[probe]["httpGet"]["path"].as_str(),
            Some("/v1/models/spam"),
            "{probe}: {text}"
        );
        assert_eq!(container[probe]["httpGet"]["port"].as_u64(), Some(8501));
    }
    let claim = document(&documents, "PersistentVolumeClaim", "models-spam-model");
    assert_eq!(
        claim["metadata"]["annotations"]["tfimg.io/host-source"].as_str(),
        folder.path().join("export/spam-2").to_str()
    );
    let service = document(&documents, "Service", "models-spam");
    assert_eq!(service["spec"]["ports"][0]["port"].as_u64(), Some(8501));
}

/// Issue 32: `idle: {containers: 10s}`. A member with a Jupyter kernel, then with a `docker
/// exec` session, stays up past the idle time; with neither it stops itself (exit 0, so
/// the `on-failure` policy leaves it stopped), `ps` says `stopped (idle 10s)`, and the next
/// `up` starts it again (`restarted`) with what it wrote on its mount.
#[tokio::test]
async fn an_idle_member_stops_itself_and_up_starts_it_again_with_its_data() {
    let Some(_engine) = common::engine().await else { return };
    let team = unique("idle").replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let team = format!("i{}", &team[team.len() - 12..]).to_lowercase();
    let name = format!("{team}-nb");
    let _guard = DockerGuard::containers(&[&name]);
    let port = free_port();
    let file = format!(
        "team: {team}\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\n\
         idle: {{containers: 10s}}\nmembers:\n  - name: nb\n    ports: {{jupyter: {port}}}\n"
    );
    let folder = scratch(&[("team.yaml", &file)]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let tfimg = |args: &[&str]| tfimg_with_env(folder.path(), args, &env);
    let up = || tfimg(&["up", "team.yaml", "--ca-cert", HOST_CA]);
    let state = || common::container_state(&name).unwrap_or_default();

    let first = up();
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    assert!(
        first.stderr.contains("nobody used for 10s"),
        "up says the idle time is on: {}",
        first.stderr
    );
    let url = column(&first.stdout, "nb", 4);
    let token = url.split("token=").nth(1).unwrap().to_string();
    // What the member writes on its mount.
    let wrote = tfimg(&[
        "exec",
        &name,
        "--",
        "sh",
        "-c",
        "echo notes > work/kept.txt",
    ]);
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    assert_eq!(
        std::fs::read_to_string(folder.path().join("work/nb/kept.txt")).unwrap(),
        "notes\n"
    );

    // A kernel is use: it stays up past the idle time.
    let kernel = common::start_kernel(port, &token);
    std::thread::sleep(std::time::Duration::from_secs(15));
    assert_eq!(state(), "running", "a kernel keeps the member up");

    // So is a `docker exec` session, once the kernel is gone.
    common::docker(&["exec", "-d", &name, "sleep", "15"]);
    let (status, body) = http(
        "DELETE",
        port,
        &format!("/api/kernels/{kernel}?token={token}"),
        &[],
        "",
    );
    assert_eq!(status, 204, "{body}");
    std::thread::sleep(std::time::Duration::from_secs(12));
    assert_eq!(state(), "running", "an exec session keeps the member up");

    // With neither, it stops itself and stays stopped.
    common::wait_for(
        "the idle member to stop itself",
        std::time::Duration::from_secs(90),
        || state() == "exited",
    );
    assert_eq!(
        common::docker(&[
            "inspect",
            "--format",
            "{{.State.ExitCode}} {{.HostConfig.RestartPolicy.Name}}",
            &name
        ])
        .trim(),
        "0 on-failure"
    );
    let ps = tfimg(&["ps", "--team", &team]);
    assert_eq!(ps.code, 0, "{}", ps.stderr);
    let row = ps
        .stdout
        .lines()
        .find(|line| line.starts_with(&name))
        .unwrap_or_else(|| panic!("no row for {name}: {}", ps.stdout));
    assert!(row.contains("stopped (idle 10s)"), "{}", ps.stdout);

    // `up` starts it again, with its data.
    let again = up();
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(
        column(&again.stdout, "nb", 2),
        "restarted",
        "{}",
        again.stdout
    );
    assert_eq!(state(), "running");
    let read = tfimg(&["exec", &name, "--", "cat", "work/kept.txt"]);
    assert_eq!(read.stdout.trim(), "notes", "{}", read.stderr);
    let down = tfimg(&["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.stderr);
}

/// Removes every network carrying the team's label (each by its id: twins too) when
/// dropped, after the containers' guard declared before it.
struct TeamNetworks(String);

impl Drop for TeamNetworks {
    fn drop(&mut self) {
        let label = format!("label=io.tfimg.team={}", self.0);
        for id in common::docker(&["network", "ls", "-q", "--filter", &label]).split_whitespace() {
            common::docker(&["network", "rm", id]);
        }
    }
}

/// The names of the networks carrying the team's label, sorted (a name made twice shows
/// twice).
fn team_networks(team: &str) -> Vec<String> {
    let label = format!("label=io.tfimg.team={team}");
    let mut names: Vec<String> =
        common::docker(&["network", "ls", "--filter", &label, "--format", "{{.Name}}"])
            .split_whitespace()
            .map(str::to_string)
            .collect();
    names.sort();
    names
}

/// Makes a network named `name` with the team's labels through the Engine API, as an
/// older tfimg did: Docker lets a second one of the same name be made (the docker CLI
/// asks it not to). Its id.
fn twin_network(name: &str, labels: &str) -> String {
    let body = format!("{{\"Name\":\"{name}\",\"Driver\":\"bridge\",\"Labels\":{labels}}}");
    let answer = std::process::Command::new("curl")
        .args([
            "-sf",
            "--unix-socket",
            "/var/run/docker.sock",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "-d",
            &body,
            "http://localhost/v1.41/networks/create",
        ])
        .output()
        .unwrap();
    let made: serde_json::Value = serde_json::from_slice(&answer.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&answer.stderr)));
    made["Id"].as_str().unwrap().to_string()
}

/// A team of two headless members behind a gateway (the members' and the gateway's
/// networks are what two `up` at once made twice).
fn gateway_team(team: &str) -> String {
    format!(
        "team: {team}\ndefaults:\n  spec: cpu-headless\nmembers:\n\
         \x20 - name: alice\n    command: [sleep, \"600\"]\n\
         \x20 - name: bob\n    command: [sleep, \"600\"]\n\
         gateway:\n  port: {}\n",
        free_port()
    )
}

/// Issue 44: two `tfimg up` of one team file at once both failed, one with
/// `Engine(Failed {… ambiguous …})`, and left two networks of each name, after which
/// `up` and `down` failed with "ambiguous". Now one waits for the other: both exit 0, each
/// network is made once, and a third `up` and a `down` work.
#[tokio::test]
async fn two_ups_of_one_team_at_once_take_turns_and_a_third_up_and_down_work() {
    let Some(_engine) = common::engine().await else { return };
    let team = unique("ups").replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let team = format!("u{}", &team[team.len() - 10..]).to_lowercase();
    let _networks = TeamNetworks(team.clone());
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    let folder = scratch(&[("team.yaml", &gateway_team(&team))]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let up = |progress: &str| {
        common::spawn_tfimg(
            folder.path(),
            &[
                "up",
                "team.yaml",
                "--ca-cert",
                HOST_CA,
                "--progress",
                progress,
            ],
            &env,
        )
    };
    let (first, second) = (up("plain"), up("plain"));
    let limit = std::time::Duration::from_secs(300);
    let runs = [first.finish(limit), second.finish(limit)];
    for run in &runs {
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(!run.stderr.contains("Engine("), "{}", run.stderr);
    }
    // One of them waited, then found the team up.
    let waited: Vec<&common::Run> = runs
        .iter()
        .filter(|run| {
            run.stderr.contains(&format!(
                "waiting for another `tfimg up` or `tfimg down` of team `{team}` to finish"
            ))
        })
        .collect();
    assert_eq!(
        waited.len(),
        1,
        "{}\n----\n{}",
        runs[0].stderr,
        runs[1].stderr
    );
    assert!(
        waited[0].stderr.contains(&format!(
            "no change: the 2 member(s) of `{team}` are up to date"
        )),
        "{}",
        waited[0].stderr
    );
    let once = [
        format!("tfimg-{team}"),
        format!("tfimg-{team}.alice"),
        format!("tfimg-{team}.bob"),
    ];
    assert_eq!(team_networks(&team), once);

    let third = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert!(third.stderr.contains("no change"), "{}", third.stderr);
    let down = tfimg_with_env(folder.path(), &["down", "team.yaml"], &env);
    assert_eq!(down.code, 0, "{}", down.stderr);
    assert_eq!(team_networks(&team), Vec::<String>::new());
    assert_eq!(
        common::docker(&[
            "ps",
            "-aq",
            "--filter",
            &format!("label=io.tfimg.team={team}")
        ])
        .trim(),
        ""
    );
}

/// Networks an older tfimg made twice: `up` removes the empty twins it made and keeps
/// the one in use; twins that both have containers on them are refused, naming them, with
/// the exact command that clears them; `down` removes every network of the team's names.
#[tokio::test]
async fn networks_made_twice_are_settled_by_up_or_refused_and_down_removes_them() {
    let Some(_engine) = common::engine().await else { return };
    let team = unique("twins").replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let team = format!("w{}", &team[team.len() - 10..]).to_lowercase();
    let squatter = format!("{team}-squatter");
    let _networks = TeamNetworks(team.clone());
    let mut guard = DockerGuard::containers(&[&squatter]);
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    let folder = scratch(&[("team.yaml", &gateway_team(&team))]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let team_label = format!("{{\"io.tfimg.team\":\"{team}\"}}");
    let bob_labels = format!("{{\"io.tfimg.team\":\"{team}\",\"io.tfimg.member\":\"bob\"}}");
    for _ in 0..2 {
        twin_network(&format!("tfimg-{team}"), &team_label);
        twin_network(&format!("tfimg-{team}.bob"), &bob_labels);
    }
    assert_eq!(team_networks(&team).len(), 4);
    let up = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(up.code, 0, "{}", up.stderr);
    let once = [
        format!("tfimg-{team}"),
        format!("tfimg-{team}.alice"),
        format!("tfimg-{team}.bob"),
    ];
    assert_eq!(team_networks(&team), once);

    // A twin of bob's network with a container on it: which one is bob's is not tfimg's
    // to guess.
    let twin = twin_network(&format!("tfimg-{team}.bob"), &bob_labels);
    let started = common::docker(&[
        "run",
        "-d",
        "--name",
        &squatter,
        "tfimg/cpu-headless:2.9.3",
        "sleep",
        "600",
    ]);
    assert!(!started.trim().is_empty());
    common::docker(&["network", "connect", &twin, &squatter]);
    let refused = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    let first_line = refused.stderr.lines().next().unwrap_or_default();
    assert!(
        first_line.starts_with(&format!("error: 2 networks are named `tfimg-{team}.bob` ("))
            && first_line.ends_with("): containers are on more than one of them"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains(
            "hint: run `tfimg down team.yaml` (it removes the team's containers and networks, never the data on their mounts), then `tfimg up team.yaml`"
        ),
        "{}",
        refused.stderr
    );
    assert!(!refused.stderr.contains("Engine("), "{}", refused.stderr);

    let down = tfimg_with_env(folder.path(), &["down", "team.yaml"], &env);
    assert_eq!(down.code, 0, "{}", down.stderr);
    assert_eq!(team_networks(&team), Vec::<String>::new());
    let up = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(up.code, 0, "{}", up.stderr);
    assert_eq!(team_networks(&team), once);
    let down = tfimg_with_env(folder.path(), &["down", "team.yaml"], &env);
    assert_eq!(down.code, 0, "{}", down.stderr);
}

/// What the daemon made of team `team` since `since` (Unix seconds): `container create
/// NAME` and `network create NAME` for every container and network whose name has the
/// team's in it, in order. Read from the daemon's own event log, so a member created and
/// then removed again still shows.
fn made_since(team: &str, since: u64) -> Vec<String> {
    let until = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 1;
    common::docker(&[
        "events",
        "--since",
        &since.to_string(),
        "--until",
        &until.to_string(),
        "--filter",
        "event=create",
        "--format",
        "{{.Type}} {{.Action}} {{.Actor.Attributes.name}}",
    ])
    .lines()
    .filter(|line| line.contains(team))
    .map(str::to_string)
    .collect()
}

fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A team name no other test uses: `<prefix><10 characters>`.
fn unique_team(prefix: &str) -> String {
    let id = unique(prefix).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    format!("{prefix}{}", &id[id.len() - 10..]).to_lowercase()
}

/// `curl`'s HTTP status for `url` (the gateway's certificate `cert` trusted), `000` and
/// curl's error when nothing answered.
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

/// What tfimg itself said on stderr: its `error:`, `hint:` and `note:` lines (not a
/// build's output).
fn said(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| {
            ["error:", "hint:", "note:"]
                .iter()
                .any(|start| line.starts_with(start))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every address `tfimg ps --json` shows for team `team`.
fn ps_urls(folder: &std::path::Path, env: &[(&str, &str)], team: &str) -> Vec<String> {
    let ps = tfimg_with_env(folder, &["ps", "--json"], env);
    assert_eq!(ps.code, 0, "{}", ps.stderr);
    let rows: serde_json::Value = serde_json::from_str(&ps.stdout).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .filter(|row| row["team"] == team)
        .flat_map(|row| {
            row["urls"]
                .as_object()
                .unwrap()
                .values()
                .map(|url| url.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Issue 45: a second team whose gateway asked for the port the first team's gateway
/// publishes had its member `erin` created and left running, then failed with a hint
/// naming `-p OTHER:PORT` (a flag `up` does not have), and `ps` showed erin at
/// `https://erin.<team>.localhost:PORT/lab`: the first team's gateway. Now the second `up`
/// exits 1 before the daemon creates any container or network of its team, naming the
/// key `gateway.port`; the same when any other process holds the port. And `ps` shows a
/// member's address through the gateway only while its team's gateway runs: every
/// address it shows answers.
#[tokio::test]
async fn a_second_team_on_a_taken_gateway_port_creates_nothing_and_ps_shows_only_live_addresses() {
    let Some(_engine) = common::engine().await else { return };
    let (first, second) = (unique_team("ga"), unique_team("gb"));
    let (_first_networks, _second_networks) =
        (TeamNetworks(first.clone()), TeamNetworks(second.clone()));
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.team={first}"));
    let mut second_guard = DockerGuard::default();
    second_guard.container_label = Some(format!("io.tfimg.team={second}"));
    let port = free_port();
    let jupyter_team = |team: &str, member: &str, port: u16| {
        format!(
            "team: {team}\ndefaults:\n  spec: cpu-jupyter\nmembers:\n  - name: {member}\ngateway:\n  port: {port}\n"
        )
    };
    let folder = scratch(&[
        ("first.yaml", &jupyter_team(&first, "dave", port)),
        ("second.yaml", &jupyter_team(&second, "erin", port)),
    ]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let up = |file: &str| tfimg_with_env(folder.path(), &["up", file, "--ca-cert", HOST_CA], &env);

    let one = up("first.yaml");
    assert_eq!(one.code, 0, "{}{}", one.stdout, one.stderr);
    let since = now_seconds();
    let two = up("second.yaml");
    assert_eq!(two.code, 1, "{}{}", two.stdout, two.stderr);
    assert!(
        two.stderr.contains(&format!("port {port}")) && two.stderr.contains("`gateway.port`"),
        "the refusal names the port and the file's key: {}",
        two.stderr
    );
    assert!(
        !said(&two.stderr).contains("-p "),
        "no flag `up` lacks: {}",
        two.stderr
    );
    assert_eq!(
        made_since(&second, since),
        Vec::<String>::new(),
        "nothing of the second team was created: {}",
        two.stderr
    );

    // Any other process on the port: the same refusal, nothing made.
    docker(&["stop", &format!("{first}-gateway")]);
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let since = now_seconds();
    let three = up("second.yaml");
    assert_eq!(three.code, 1, "{}{}", three.stdout, three.stderr);
    assert!(three.stderr.contains("`gateway.port`"), "{}", three.stderr);
    assert_eq!(
        made_since(&second, since),
        Vec::<String>::new(),
        "{}",
        three.stderr
    );
    drop(listener);

    // The first team's gateway stopped: `ps` shows no address through it.
    let urls = ps_urls(folder.path(), &env, &first);
    assert!(
        urls.iter().all(|url| !url.contains(&format!(":{port}/"))),
        "no address through a gateway that is not running: {urls:?}"
    );
    docker(&["start", &format!("{first}-gateway")]);
    let cert = data.join(format!("tfimg/teams/{first}/gateway/cert.pem"));
    let urls = ps_urls(folder.path(), &env, &first);
    assert!(
        urls.iter()
            .any(|url| url.contains(&format!("dave.{first}.localhost:{port}"))),
        "dave through his team's running gateway: {urls:?}"
    );
    let mut answers = Vec::new();
    common::wait_for(
        "every address ps shows answers",
        std::time::Duration::from_secs(60),
        || {
            answers = urls
                .iter()
                .map(|url| (url.clone(), status_of(url, &cert)))
                .collect();
            answers.iter().all(|(_, status)| !status.starts_with("000"))
        },
    );
    assert!(ps_urls(folder.path(), &env, &second).is_empty());
}

/// Issue 45: a member's fixed host port (`ports:` in the team file) that another process
/// holds was found only when that member was created, after the others were: `up` exits
/// 1 naming the member's key, and the daemon never created a container or network of the
/// team.
#[tokio::test]
async fn a_member_s_taken_port_is_refused_before_anything_is_created() {
    let Some(_engine) = common::engine().await else { return };
    let team = unique_team("mp");
    let _networks = TeamNetworks(team.clone());
    let mut guard = DockerGuard::default();
    guard.container_label = Some(format!("io.tfimg.team={team}"));
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let file = format!(
        "team: {team}\ndefaults:\n  spec: cpu-headless\nmembers:\n\
         \x20 - name: alice\n    command: [sleep, \"600\"]\n\
         \x20 - name: bob\n    spec: cpu-jupyter\n    ports: {{jupyter: {port}}}\n"
    );
    let folder = scratch(&[("team.yaml", &file)]);
    let data = folder.path().join(".tfimg-data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let since = now_seconds();
    let up = tfimg_with_env(
        folder.path(),
        &["up", "team.yaml", "--ca-cert", HOST_CA],
        &env,
    );
    assert_eq!(up.code, 1, "{}{}", up.stdout, up.stderr);
    assert!(
        up.stderr.contains("`bob`")
            && up.stderr.contains(&format!("{port}"))
            && up.stderr.contains("`ports:`"),
        "{}",
        up.stderr
    );
    assert!(
        !said(&up.stderr).contains("-p "),
        "no flag `up` lacks: {}",
        up.stderr
    );
    assert_eq!(
        made_since(&team, since),
        Vec::<String>::new(),
        "{}",
        up.stderr
    );
    drop(listener);
}
