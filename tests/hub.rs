//! A team's JupyterHub front door (`hub:`) on the real Engine: JupyterHub from PyPI with
//! its configurable-http-proxy from npm, NativeAuthenticator and DockerSpawner, in an
//! image tfimg builds, creating each member's server from the container tfimg's launcher
//! planned for her. Driven as members would: in headless Chromium through the hub's own
//! pages and URLs (`/hub/login`, `/hub/api/...`, `/user/NAME/...`), and with curl for
//! what a browser does not show (state across `down` and `up`, the idle culler, what
//! reaches the hub's logs and files).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::browser::{Browser, Tab};
use common::cli::free_port;
use common::{docker, scratch, tfimg_with_env, unique, Run, HOST_CA, TODAY};

/// Removes, when dropped (also when the test fails), the team's containers (the hub's
/// and the servers it spawned), its networks and the hub's state volume.
struct TeamGuard(String);

impl Drop for TeamGuard {
    fn drop(&mut self) {
        let label = format!("label=io.tfimg.team={}", self.0);
        for id in docker(&["ps", "-aq", "--filter", &label]).split_whitespace() {
            docker(&["rm", "-f", id]);
        }
        for network in docker(&["network", "ls", "-q", "--filter", &label]).split_whitespace() {
            docker(&["network", "rm", network]);
        }
        docker(&["network", "rm", &format!("tfimg-{}", self.0)]);
        docker(&["volume", "rm", &format!("tfimg-hub-{}", self.0)]);
    }
}

/// A team of cpu-jupyter members (one folder each under ./work) with `hub:` on `port`,
/// `admins` and the file's `extra` lines.
struct Lab {
    folder: tempfile::TempDir,
    data: PathBuf,
    team: String,
    port: u16,
    _guard: TeamGuard,
}

impl Lab {
    fn new(prefix: &str, members: &[&str], admins: &[&str], extra: &str) -> Lab {
        let suffix = unique(prefix).replace(|c: char| !c.is_ascii_alphanumeric(), "-");
        let id = suffix[suffix.len() - 10..]
            .trim_start_matches('-')
            .to_lowercase();
        let team = format!("{prefix}{id}");
        let port = free_port();
        let mut text = format!(
            "team: {team}\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n"
        );
        for member in members {
            text.push_str(&format!("  - name: {member}\n"));
        }
        text.push_str(&format!(
            "hub:\n  auth: native\n  admins: [{}]\n  port: {port}\n{extra}",
            admins.join(", ")
        ));
        let folder = scratch(&[("team.yaml", &text)]);
        let data = folder.path().join(".tfimg-data");
        Lab {
            _guard: TeamGuard(team.clone()),
            folder,
            data,
            team,
            port,
        }
    }

    fn tfimg(&self, args: &[&str]) -> Run {
        let data = self.data.to_str().unwrap();
        tfimg_with_env(self.folder.path(), args, &[("XDG_DATA_HOME", data)])
    }

    fn up(&self) -> Run {
        let up = self.tfimg(&["up", "team.yaml", "--ca-cert", HOST_CA]);
        assert_eq!(up.code, 0, "{}{}", up.stdout, up.tail());
        up
    }

    /// `tfimg hub passwd team.yaml MEMBER` with `password` on stdin.
    fn passwd(&self, member: &str, password: &str) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tfimg"))
            .args(["hub", "passwd", "team.yaml", member])
            .current_dir(self.folder.path())
            .env("XDG_DATA_HOME", &self.data)
            .env("NO_COLOR", "1")
            .env("TFIMG_CONFIG", "/dev/null")
            .env("TFIMG_TODAY", TODAY)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tfimg starts");
        writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
        let output = child.wait_with_output().unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    fn base(&self) -> String {
        format!("https://127.0.0.1:{}/", self.port)
    }

    fn cert(&self) -> PathBuf {
        self.data
            .join(format!("tfimg/teams/{}/hub/cert.pem", self.team))
    }

    fn work(&self, member: &str) -> PathBuf {
        self.folder.path().join("work").join(member)
    }
}

/// The base64 SHA-256 of the public key in the PEM certificate at `cert` (what
/// `--ignore-certificate-errors-spki-list` takes).
fn spki_of(cert: &Path) -> String {
    let output = Command::new("sh")
        .arg("-c")
        .arg("openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
        .arg("sh")
        .arg(cert)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A person's own browser: a fresh profile that trusts exactly the hub's key.
fn browser(lab: &Lab) -> (Browser, Tab) {
    let mut browser = Browser::launch(&[format!(
        "--ignore-certificate-errors-spki-list={}",
        spki_of(&lab.cert())
    )]);
    let tab = browser.tab();
    (browser, tab)
}

/// A `fetch` option carrying the page's XSRF token, as Jupyter's own pages send it: a
/// server behind the hub refuses a cookie-authenticated API request without one.
const XSRF: &str =
    "{headers: {'X-XSRFToken': (document.cookie.match('\\\\b_xsrf=([^;]*)') || [])[1]}}";

const LAB_READY: &str = "document.querySelector('.jp-LauncherCard') !== null";

/// Types `name` and `password` into the hub's login form at `url` and presses its button,
/// as a person does; the path the browser lands on once the next page loaded.
fn sign_in(browser: &mut Browser, tab: &Tab, url: &str, name: &str, password: &str) -> String {
    browser.open(tab, url);
    browser.click(tab, "#username_input");
    browser.type_text(tab, name);
    browser.click(tab, "#password_input");
    browser.type_text(tab, password);
    browser.evaluate(tab, "window.__signing_in = true");
    browser.click(tab, "#login_submit");
    // The form's document is replaced by the answer's.
    browser
        .wait_until(
            tab,
            "window.__signing_in === undefined && document.readyState === 'complete' ? location.pathname : null",
            Duration::from_secs(60),
        )
        .as_str()
        .unwrap()
        .to_string()
}

/// `fetch(path)`'s status from the page's own origin (its cookies, no redirect followed).
fn status_in_page(browser: &mut Browser, tab: &Tab, path: &str) -> u64 {
    browser
        .evaluate(
            tab,
            &format!("fetch({path:?}, {{redirect: 'manual'}}).then((answer) => answer.type === 'opaqueredirect' ? 302 : answer.status)"),
        )
        .as_u64()
        .unwrap()
}

/// Runs `code` in a new notebook of the Lab open in `tab` (the server at path `server`,
/// `/user/alice/`); the cell's output.
fn run_cell(browser: &mut Browser, tab: &Tab, server: &str, code: &str) -> String {
    let limit = Duration::from_secs(180);
    browser.click(tab, ".jp-LauncherCard[data-category='Notebook']");
    browser.wait_until(
        tab,
        "document.querySelector('.jp-Notebook .jp-Cell .cm-content') !== null && document.querySelector(\".jp-NotebookPanel-toolbar [data-command='notebook:run-cell-and-select-next']\") !== null",
        limit,
    );
    // Its kernel is up once the tab's WebSocket to it is connected (Jupyter counts it).
    browser.wait_until(
        tab,
        &format!("fetch('{server}api/sessions', {XSRF}).then((answer) => answer.json()).then((sessions) => sessions.some((session) => session.kernel.connections > 0 && session.kernel.execution_state === 'idle'))"),
        limit,
    );
    browser.click(tab, ".jp-Notebook .jp-Cell .cm-content");
    browser.type_text(tab, code);
    browser.click(
        tab,
        ".jp-NotebookPanel-toolbar [data-command='notebook:run-cell-and-select-next']",
    );
    browser
        .wait_until(
            tab,
            "[...document.querySelectorAll('.jp-OutputArea-output')].map((output) => output.textContent).join('')",
            limit,
        )
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Three members and an admin, in three browsers: Alice signs in through the hub's form,
/// her server starts, a Keras cell trains and logs, and her TensorBoard (behind the same
/// sign-in) shows the run. Bob, signed in as himself, gets nothing of Alice's server. An
/// unknown name cannot sign in, nobody can sign up (not even as Carol, a member who has
/// no password yet), and Carol, once the admin set her password, is an admin who sees both
/// servers. Every promise is collected and asserted at the end.
#[tokio::test]
async fn members_sign_in_at_the_hub_and_reach_their_own_server_only() {
    let Some(_engine) = common::engine().await else { return };
    if !common::chromium_available() {
        return;
    }
    let lab = Lab::new("hb", &["alice", "bob", "carol"], &["carol"], "");
    let up = lab.up();
    assert!(
        up.stdout.contains(&format!("{}user/alice/lab", lab.base())),
        "alice's row leads to her server at the hub:\n{}",
        up.stdout
    );
    assert!(
        up.stderr
            .contains(&format!("hub: {}hub/login (created)", lab.base())),
        "{}",
        up.stderr
    );
    for (member, password) in [("alice", "alice-first-pass"), ("bob", "bob-first-pass")] {
        let set = lab.passwd(member, password);
        assert_eq!(set.code, 0, "{}{}", set.stdout, set.stderr);
    }
    let base = lab.base();
    let mut broken: Vec<String> = Vec::new();
    let mut expect = |kept: bool, promise: String| {
        if !kept {
            broken.push(promise);
        }
    };
    let lab_limit = Duration::from_secs(240);

    // Alice signs in; the hub starts her server and opens her Lab.
    let (mut alice, alice_tab) = browser(&lab);
    let landed = sign_in(
        &mut alice,
        &alice_tab,
        &format!("{base}hub/login"),
        "alice",
        "alice-first-pass",
    );
    expect(
        landed.starts_with("/hub/spawn") || landed.starts_with("/user/alice"),
        format!("alice's sign-in starts her server: landed on {landed}"),
    );
    alice.wait_until_started(&alice_tab, LAB_READY, lab_limit);
    let path = alice.evaluate(&alice_tab, "location.pathname");
    expect(
        path == "/user/alice/lab",
        format!("alice's Lab is at /user/alice/lab: {path}"),
    );
    let output = run_cell(
        &mut alice,
        &alice_tab,
        "/user/alice/",
        "import numpy as np, tensorflow as tf; x = np.random.rand(256, 4).astype('float32'); model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation='relu'), tf.keras.layers.Dense(1)]); model.compile('adam', 'mse'); fitted = model.fit(x, x.sum(axis=1), epochs=3, verbose=0, callbacks=[tf.keras.callbacks.TensorBoard('/tf/work/logs/keras-run')]); print('trained', len(fitted.history['loss']), 'epochs')",
    );
    expect(
        output.contains("trained 3 epochs"),
        format!("alice's Keras cell trains: {output}"),
    );
    expect(
        lab.work("alice").join("logs/keras-run/train").is_dir(),
        "her run is written to her folder on the host".to_string(),
    );

    // Her TensorBoard, behind the same sign-in, shows her run (in a tab of its own: the
    // Lab's holds an unsaved notebook, whose page asks before it is left).
    let board = alice.tab();
    alice.open(&board, &format!("{base}user/alice/tensorboard/"));
    let runs = alice.poll(
        &board,
        "document.querySelector('tb-webapp') !== null && fetch('data/runs').then((answer) => answer.json()).then((runs) => runs.includes('work/logs/keras-run/train') ? runs : null)",
        Duration::from_secs(120),
    );
    expect(
        runs.is_ok(),
        format!("alice's TensorBoard renders with her run: {runs:?}"),
    );

    // From the hub's home page she stops her server (its container goes) and starts it
    // again: her Lab comes back, her run where it was.
    let home = alice.tab();
    alice.open(&home, &format!("{base}hub/home"));
    let stop_shown = "document.readyState === 'complete' && (() => { const stop = document.querySelector('#stop'); return stop !== null && stop.offsetParent !== null; })()";
    alice.wait_until(&home, stop_shown, Duration::from_secs(30));
    alice.click(&home, "#stop");
    let alice_box = format!("{}-alice", lab.team);
    // The page binds its buttons once its scripts have run, and a click before that does
    // nothing (a fresh-clone CI run saw it): while her server is there and the button is
    // still shown 20 s later, she clicks again, as anyone would. A page whose button
    // stays greyed out (its stop request failed, or never came back: seen once in a
    // fresh-clone CI, 120 s) she loads again, and clicks the fresh page's button.
    let enabled = "(() => { const stop = document.querySelector('#stop'); return stop !== null && stop.offsetParent !== null && !stop.disabled; })()";
    let (deadline, mut clicked) = (Instant::now() + Duration::from_secs(150), Instant::now());
    let mut tries = 1;
    while common::container_state(&alice_box).is_some() {
        if Instant::now() >= deadline {
            let page = alice.evaluate(&home, "document.body.innerText.slice(0, 2000)");
            let hub_log = Command::new("docker")
                .args(["logs", "--tail", "60", &format!("{}-hub", lab.team)])
                .output()
                .map(|out| String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned())
                .unwrap_or_default();
            panic!(
                "gave up waiting for alice's server to stop after {tries} clicks: container {:?}\nthe page: {page}\nthe hub's log:\n{hub_log}",
                common::container_state(&alice_box)
            );
        }
        if clicked.elapsed() > Duration::from_secs(20) {
            if alice.evaluate(&home, enabled) != serde_json::json!(true) {
                eprintln!("alice's stop button is not there to click: loading her home page again");
                alice.open(&home, &format!("{base}hub/home"));
                let _ = alice.poll(&home, enabled, Duration::from_secs(15));
            }
            if common::container_state(&alice_box).is_some()
                && alice.evaluate(&home, enabled) == serde_json::json!(true)
            {
                alice.click(&home, "#stop");
                tries += 1;
            }
            clicked = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let start = alice.poll(
        &home,
        "(() => { const start = document.querySelector('#start'); return start !== null && start.offsetParent !== null; })()",
        Duration::from_secs(30),
    );
    expect(
        start.is_ok(),
        format!("the home page offers to start her stopped server: {start:?}"),
    );
    if start.is_ok() {
        alice.click(&home, "#start");
        alice.wait_until_started(&home, LAB_READY, lab_limit);
        let path = alice.evaluate(&home, "location.pathname");
        // (Lab may open a workspace of its own: `/user/alice/lab/workspaces/auto-n`.)
        expect(
            path.as_str()
                .is_some_and(|path| path.starts_with("/user/alice/lab")),
            format!("her restarted server's Lab: {path}"),
        );
    }
    expect(
        lab.work("alice").join("logs/keras-run/train").is_dir(),
        "her run outlives her server".to_string(),
    );

    // Bob signs in as himself and starts his own server.
    let (mut bob, bob_tab) = browser(&lab);
    sign_in(
        &mut bob,
        &bob_tab,
        &format!("{base}hub/login"),
        "bob",
        "bob-first-pass",
    );
    bob.wait_until_started(&bob_tab, LAB_READY, lab_limit);
    // Alice's server refuses him: her Lab sends him to the hub's OAuth, which answers 403.
    bob.open(&bob_tab, &format!("{base}user/alice/lab"));
    let refused = bob.wait_until(
        &bob_tab,
        "document.readyState === 'complete' ? [location.pathname, document.body.innerText.slice(0, 200)] : null",
        Duration::from_secs(60),
    );
    expect(
        refused[0]
            .as_str()
            .is_some_and(|path| !path.starts_with("/user/alice"))
            && refused[1].as_str().is_some_and(|text| text.contains("403")),
        format!("bob's browser gets no page of alice's server: {refused}"),
    );
    for path in [
        "/user/alice/api/contents",
        "/user/alice/api/kernels",
        "/user/alice/tensorboard/data/runs",
    ] {
        let status = status_in_page(&mut bob, &bob_tab, path);
        expect(
            status == 403 || status == 302,
            format!("bob's session reads nothing at {path}: {status}"),
        );
    }

    // Nobody signs up, and no unknown name signs in; Carol, who has no password yet,
    // cannot be claimed.
    let (mut stranger, stranger_tab) = browser(&lab);
    // A fresh browser opening Alice's TensorBoard is sent to the hub's sign-in first.
    stranger.open(&stranger_tab, &format!("{base}user/alice/tensorboard/"));
    let landed = stranger.wait_until(
        &stranger_tab,
        "document.readyState === 'complete' && document.querySelector('tb-webapp') === null ? location.pathname : null",
        Duration::from_secs(60),
    );
    expect(
        landed == "/hub/login",
        format!("a fresh browser at alice's TensorBoard lands on the sign-in page: {landed}"),
    );
    for (name, password) in [("dave", "dave-password-1"), ("carol", "claimed-before-her")] {
        let landed = sign_in(
            &mut stranger,
            &stranger_tab,
            &format!("{base}hub/login"),
            name,
            password,
        );
        expect(
            landed == "/hub/login",
            format!("`{name}` does not sign in: landed on {landed}"),
        );
    }
    let signup = status_in_page(&mut stranger, &stranger_tab, "/hub/signup");
    expect(signup == 404, format!("there is no sign-up page: {signup}"));
    let posted = stranger.evaluate(
        &stranger_tab,
        "fetch('/hub/signup', {method: 'POST', body: new URLSearchParams({username: 'carol', signup_password: 'claimed-before-her', signup_password_confirmation: 'claimed-before-her', _xsrf: (document.cookie.match('\\\\b_xsrf=([^;]*)') || [])[1] || ''})}).then((answer) => answer.status)",
    );
    expect(
        posted == 404 || posted == 403,
        format!("nobody signs up as carol: {posted}"),
    );
    let users = status_in_page(&mut stranger, &stranger_tab, "/hub/api/users");
    expect(
        users == 403,
        format!("a stranger reads no user list: {users}"),
    );

    // The admin sets Carol's password; she signs in to the admin page and sees both
    // servers running.
    let set = lab.passwd("carol", "carol-first-pass");
    assert_eq!(set.code, 0, "{}", set.stderr);
    let (mut carol, carol_tab) = browser(&lab);
    let landed = sign_in(
        &mut carol,
        &carol_tab,
        &format!("{base}hub/login?next=%2Fhub%2Fadmin"),
        "carol",
        "carol-first-pass",
    );
    expect(
        landed.starts_with("/hub/admin"),
        format!("carol lands on the admin page: {landed}"),
    );
    let servers = carol.poll(
        &carol_tab,
        &format!("fetch('/hub/api/users', {XSRF}).then((answer) => answer.json()).then((users) => users.filter((user) => user.servers[''] && user.servers[''].ready).map((user) => user.name).sort().join(','))"),
        Duration::from_secs(30),
    );
    expect(
        servers.as_ref().is_ok_and(|names| names == "alice,bob"),
        format!("the admin sees alice's and bob's servers running: {servers:?}"),
    );
    let listed = carol.poll(
        &carol_tab,
        "document.body.innerText.includes('alice') && document.body.innerText.includes('bob') ? document.body.innerText.length : null",
        Duration::from_secs(30),
    );
    expect(
        listed.is_ok(),
        format!("the admin page lists them: {listed:?}"),
    );

    assert!(broken.is_empty(), "broken promises:\n{}", broken.join("\n"));
}

/// Alice may start her server from two specs (`choices:`): the hub's spawn page asks which,
/// in her browser, and creates the one she picked; a spec that is not hers, or an image of
/// her own, is refused through the API. Then the file changes the hub's settings: `up`
/// restarts the hub, and her server, its kernel and her sign-in outlive the restart.
#[tokio::test]
async fn a_member_picks_one_of_her_specs_and_her_server_outlives_the_hub_s_restart() {
    let Some(_engine) = common::engine().await else { return };
    if !common::chromium_available() {
        return;
    }
    let lab = Lab::new("hc", &["alice\n    choices: [lab-b]", "bob"], &[], "");
    std::fs::create_dir(lab.folder.path().join("images")).unwrap();
    std::fs::write(
        lab.folder.path().join("images/lab-b.yaml"),
        "name: lab-b\nextends: cpu-jupyter\ndescription: the lab's second environment\nenv:\n  LAB_FLAVOUR: second\n",
    )
    .unwrap();
    let up = lab.up();
    assert!(up.stdout.contains("cpu-jupyter, lab-b"), "{}", up.stdout);
    let set = lab.passwd("alice", "alice-first-pass");
    assert_eq!(set.code, 0, "{}", set.stderr);
    let base = lab.base();
    let alice_box = format!("{}-alice", lab.team);
    let mut broken: Vec<String> = Vec::new();
    let mut expect = |kept: bool, promise: String| {
        if !kept {
            broken.push(promise);
        }
    };

    // Through the hub's API, her server starts from her specs only, and from no image
    // she names.
    let api = Session::new(&lab, "alice-api");
    assert_eq!(api.sign_in("alice", "alice-first-pass").0, 302);
    let hub_image = docker(&[
        "inspect",
        "-f",
        "{{.Config.Image}}",
        &format!("{}-hub", lab.team),
    ]);
    for body in [
        r#"{"spec": "cpu-ssh"}"#.to_string(),
        format!(r#"{{"image": "{}"}}"#, hub_image.trim()),
    ] {
        let (status, _, answer) = api.curl(
            &[
                "-X",
                "POST",
                "-H",
                &format!("X-XSRFToken: {}", api.xsrf("/hub/")),
                "-H",
                "Content-Type: application/json",
                "--data",
                &body,
            ],
            "hub/api/users/alice/server",
        );
        expect(
            status == 400,
            format!("the hub refuses to start her server with {body}: {status} {answer}"),
        );
        expect(
            common::container_state(&alice_box).is_none(),
            format!("no server was created for {body}"),
        );
    }

    // In her browser, the hub asks which of her specs to start, her `spec` first.
    let (mut alice, tab) = browser(&lab);
    let landed = sign_in(
        &mut alice,
        &tab,
        &format!("{base}hub/login"),
        "alice",
        "alice-first-pass",
    );
    expect(
        landed.starts_with("/hub/spawn"),
        format!("her sign-in leads to the spawn page: {landed}"),
    );
    let offered = alice.wait_until(
        &tab,
        "(() => { const select = document.querySelector('#spawn_form select#tfimg-spec'); return select ? [...select.options].map((option) => option.value + (option.selected ? '*' : '') + ' ' + option.textContent) : null; })()",
        Duration::from_secs(60),
    );
    expect(
        offered
            == serde_json::json!([
                "cpu-jupyter* cpu-jupyter: TensorFlow 2.9 (CPU) with JupyterLab",
                "lab-b lab-b: the lab's second environment"
            ]),
        format!("the spawn page offers her two specs, her own first: {offered}"),
    );
    alice.evaluate(
        &tab,
        "document.querySelector('#tfimg-spec').value = 'lab-b'",
    );
    alice.click(&tab, "#spawn_form button[type=submit]");
    alice.wait_until_started(&tab, LAB_READY, Duration::from_secs(240));
    let spec = docker(&[
        "inspect",
        "-f",
        "{{index .Config.Labels \"io.tfimg.spec\"}} {{range .Config.Env}}{{.}} {{end}}",
        &alice_box,
    ]);
    expect(
        spec.starts_with("lab-b ") && spec.contains("LAB_FLAVOUR=second"),
        format!("her server runs the spec she picked: {spec}"),
    );
    let kernels = format!("fetch('/user/alice/api/kernels', {XSRF}).then((answer) => answer.ok ? answer.json() : null).then((kernels) => kernels && kernels.map((kernel) => kernel.id).join(','))");
    alice.evaluate(
        &tab,
        &format!("fetch('/user/alice/api/kernels', Object.assign({XSRF}, {{method: 'POST'}})).then((answer) => answer.status)"),
    );
    let before = alice.wait_until(&tab, &kernels, Duration::from_secs(60));
    let server_id = docker(&["inspect", "-f", "{{.Id}}", &alice_box]);

    // The file names an admin: `up` restarts the hub with it, and leaves her server be.
    let file = lab.folder.path().join("team.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("admins: []", "admins: [bob]")).unwrap();
    let again = lab.up();
    expect(
        again
            .stderr
            .contains("(restarted with the file's settings)"),
        format!("`up` restarts the hub: {}", again.stderr),
    );
    expect(
        again.stdout.contains("lab-b") && !again.stdout.contains("cpu-jupyter, lab-b"),
        format!("`up` shows the spec her server runs: {}", again.stdout),
    );
    expect(
        docker(&["inspect", "-f", "{{.Id}} {{.State.Status}}", &alice_box]).trim()
            == format!("{} running", server_id.trim()),
        "her server's container outlives the hub's restart".to_string(),
    );
    let after = alice.poll(
        &tab,
        &format!("{kernels}.then((ids) => ids === {before} ? ids : null).catch(() => null)"),
        Duration::from_secs(120),
    );
    expect(
        after.is_ok() && before.as_str().is_some_and(|ids| !ids.is_empty()),
        format!("her kernel answers through the restarted hub, in her browser still signed in: {before} then {after:?}"),
    );

    assert!(broken.is_empty(), "broken promises:\n{}", broken.join("\n"));
}

/// A member's HTTP session with the hub through curl: a cookie jar of her own, the hub's
/// certificate trusted.
struct Session<'a> {
    lab: &'a Lab,
    jar: PathBuf,
}

impl<'a> Session<'a> {
    fn new(lab: &'a Lab, name: &str) -> Session<'a> {
        Session {
            lab,
            jar: lab.folder.path().join(format!("{name}.cookies")),
        }
    }

    /// `curl` with the session's cookies; its status, where it redirects to, and the body.
    fn curl(&self, args: &[&str], path: &str) -> (u16, String, String) {
        let url = format!("{}{}", self.lab.base(), path.trim_start_matches('/'));
        let output = Command::new("curl")
            .args(["-s", "--max-time", "30", "--cacert"])
            .arg(self.lab.cert())
            .arg("-b")
            .arg(&self.jar)
            .arg("-c")
            .arg(&self.jar)
            .args(["-w", "\n%{http_code} %{redirect_url}"])
            .args(args)
            .arg(&url)
            .output()
            .expect("curl runs");
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let (body, last) = text.rsplit_once('\n').unwrap_or(("", &text));
        let (status, location) = last.split_once(' ').unwrap_or((last, ""));
        (
            status.parse().unwrap_or(0),
            location.to_string(),
            body.to_string(),
        )
    }

    fn get(&self, path: &str) -> (u16, String, String) {
        self.curl(&[], path)
    }

    /// The XSRF token the hub (or a server, for its `path`) set in this session.
    fn xsrf(&self, path: &str) -> String {
        std::fs::read_to_string(&self.jar)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains("\t_xsrf\t"))
            .filter(|line| {
                line.split('\t').nth(2).is_some_and(|cookie_path| {
                    cookie_path.trim_end_matches('/') == path.trim_end_matches('/')
                })
            })
            .filter_map(|line| line.rsplit('\t').next())
            .next_back()
            .unwrap_or_default()
            .to_string()
    }

    /// Posts the login form as a browser does; the status and where it leads.
    fn sign_in(&self, name: &str, password: &str) -> (u16, String) {
        let (_, _, page) = self.get("hub/login");
        let xsrf = page
            .split("name=\"_xsrf\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default()
            .to_string();
        let (status, location, _) = self.curl(
            &[
                "--data-urlencode",
                &format!("_xsrf={xsrf}"),
                "--data-urlencode",
                &format!("username={name}"),
                "--data-urlencode",
                &format!("password={password}"),
            ],
            "hub/login",
        );
        (status, location)
    }

    /// Starts her server as the home page's button does, and waits until her Lab answers
    /// (following the hub's OAuth, as a browser does: then her server's API takes the
    /// session's cookie).
    fn start_server(&self, name: &str) {
        let (status, location, _) = self.get(&format!("hub/spawn/{name}"));
        assert!(
            status == 302 || status == 200,
            "the hub starts {name}'s server: {status} {location}"
        );
        common::wait_for(
            &format!("{name}'s server"),
            Duration::from_secs(180),
            || {
                // The hub answers for a server still starting: only her Lab's own page
                // carries Jupyter's settings.
                let (status, _, page) = self.curl(&["-L"], &format!("user/{name}/lab"));
                status == 200 && page.contains("jupyter-config-data")
            },
        );
    }
}

/// The hub's state and boundaries, with curl: a member's file written through her own
/// server; her server not reachable from another member's; the hub's secrets and the
/// passwords nowhere but its private files; her idle server stopped by the idle culler
/// and started again from the hub with its data; and `down` then `up` keeping the users,
/// their passwords and their sign-in.
#[tokio::test]
async fn the_hub_keeps_its_users_across_down_and_up_and_culls_idle_servers() {
    let Some(_engine) = common::engine().await else { return };
    let lab = Lab::new("hi", &["alice", "bob"], &[], "idle:\n  containers: 30s\n");
    let up = lab.up();
    assert!(
        up.stderr
            .contains("the hub stops a member's server nobody used for 30s"),
        "{}",
        up.stderr
    );
    for (member, password) in [("alice", "alice-first-pass"), ("bob", "bob-first-pass")] {
        let set = lab.passwd(member, password);
        assert_eq!(set.code, 0, "{}", set.stderr);
    }
    let refused = lab.passwd("alice", "short");
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("a password is 8 to 72 bytes"));
    let stranger = lab.passwd("dave", "dave-password-1");
    assert_eq!(stranger.code, 1);
    assert!(
        stranger.stderr.contains("`dave` is not a member of team"),
        "{}",
        stranger.stderr
    );

    let alice = Session::new(&lab, "alice");
    let bob = Session::new(&lab, "bob");
    assert_eq!(alice.sign_in("alice", "wrong-password-1").0, 200);
    let (status, location) = alice.sign_in("alice", "alice-first-pass");
    assert_eq!(status, 302, "alice signs in: {location}");
    assert_eq!(bob.sign_in("bob", "bob-first-pass").0, 302);
    alice.start_server("alice");
    bob.start_server("bob");

    // Alice writes a file through her own server's API.
    let xsrf = alice.xsrf("/user/alice/");
    let (status, _, body) = alice.curl(
        &[
            "-X",
            "PUT",
            "-H",
            &format!("X-XSRFToken: {xsrf}"),
            "-H",
            "Content-Type: application/json",
            "--data",
            r#"{"type": "file", "format": "text", "content": "kept across restarts"}"#,
        ],
        "user/alice/api/contents/work/kept.txt",
    );
    assert!(
        status == 200 || status == 201,
        "{status} {body}\n{}",
        std::fs::read_to_string(&alice.jar).unwrap_or_default()
    );
    assert_eq!(
        std::fs::read_to_string(lab.work("alice").join("kept.txt")).unwrap(),
        "kept across restarts"
    );

    // Her server is on her own network: Bob's is neither named nor reachable from it.
    let (alice_box, bob_box) = (format!("{}-alice", lab.team), format!("{}-bob", lab.team));
    let bob_ip = docker(&[
        "inspect",
        "-f",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
        &bob_box,
    ]);
    let reach = format!(
        "import socket\nfor host in ['{bob_box}'] + '{}'.split():\n    try:\n        socket.create_connection((host, 8888), timeout=3)\n        print('reached', host)\n    except OSError as error:\n        print('refused', host, error)\n",
        bob_ip.trim()
    );
    let reached = Command::new("docker")
        .args(["exec", &alice_box, "python3", "-c", &reach])
        .output()
        .unwrap();
    let reached = String::from_utf8_lossy(&reached.stdout).into_owned()
        + &String::from_utf8_lossy(&reached.stderr);
    assert!(
        !reached.contains("reached") && reached.contains("refused"),
        "{reached}"
    );
    // No member's server holds the engine's socket; the hub holds it, read-only mounted.
    for name in [&alice_box, &bob_box] {
        let mounts = docker(&["inspect", "-f", "{{json .Mounts}}", name]);
        assert!(!mounts.contains("docker.sock"), "{name}: {mounts}");
    }
    let hub_box = format!("{}-hub", lab.team);
    let hub_mounts = docker(&["inspect", "-f", "{{json .Mounts}}", &hub_box]);
    assert!(hub_mounts.contains("docker.sock"), "{hub_mounts}");
    assert_eq!(
        docker(&["inspect", "-f", "{{json .HostConfig.CapDrop}}", &hub_box]).trim(),
        "[\"ALL\"]"
    );
    // The hub's secrets and database are private to it; the passwords are nowhere else.
    let modes = docker(&[
        "exec",
        &hub_box,
        "stat",
        "-c",
        "%a %n",
        "/srv/jupyterhub/jupyterhub.sqlite",
        "/srv/jupyterhub/jupyterhub_cookie_secret",
        "/etc/tfimg-hub/team.json",
        "/etc/tfimg-hub/key.pem",
    ]);
    assert_eq!(
        modes
            .lines()
            .filter(|line| line.starts_with("600 "))
            .count(),
        4,
        "{modes}"
    );
    assert_eq!(
        docker(&["exec", &hub_box, "ls", "/etc/tfimg-hub"])
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["cert.pem", "key.pem", "team.json"],
        "no password file is left behind"
    );
    let secret = docker(&[
        "exec",
        &hub_box,
        "cat",
        "/srv/jupyterhub/jupyterhub_cookie_secret",
    ]);
    let secret = secret.trim();
    assert!(secret.len() >= 32, "{secret}");
    let mut hub_log = String::new();
    for args in [
        vec!["logs", hub_box.as_str()],
        vec!["inspect", hub_box.as_str()],
        vec!["inspect", alice_box.as_str()],
    ] {
        let output = Command::new("docker").args(&args).output().unwrap();
        hub_log.push_str(&String::from_utf8_lossy(&output.stdout));
        hub_log.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    for needle in ["alice-first-pass", "bob-first-pass", secret] {
        assert!(
            !hub_log.contains(needle),
            "`{needle}` in the hub's log or labels"
        );
    }
    let hub_image = docker(&["inspect", "-f", "{{.Config.Image}}", &hub_box]);
    let found = common::secrets_in_layers(hub_image.trim(), &[secret, "alice-first-pass"]);
    assert!(
        found.is_empty(),
        "a secret in a layer of {hub_image}: {found:?}"
    );
    let leaked = Command::new("grep")
        .args(["-rl", "alice-first-pass"])
        .arg(lab.folder.path())
        .output()
        .unwrap();
    assert!(
        leaked.stdout.is_empty(),
        "a password in tfimg's files: {}",
        String::from_utf8_lossy(&leaked.stdout)
    );

    // Idle past `idle:`: the culler stops her server (its container goes) ...
    common::wait_for(
        "the idle culler to stop alice's server",
        Duration::from_secs(180),
        || common::container_state(&alice_box).is_none(),
    );
    // ... and she starts it again from the hub, her file where it was.
    let (status, _, home) = alice.get("hub/home");
    assert_eq!(status, 200);
    assert!(home.contains("/hub/spawn/alice"), "{home}");
    alice.start_server("alice");
    let (status, _, kept) = alice.curl(&["-L"], "user/alice/api/contents/work/kept.txt");
    assert_eq!(status, 200, "{kept}");
    assert!(kept.contains("kept across restarts"), "{kept}");

    // `down` then `up`: the users, their passwords and their sign-in are kept.
    let down = lab.tfimg(&["down", "team.yaml"]);
    assert_eq!(down.code, 0, "{}", down.stderr);
    assert!(common::container_state(&hub_box).is_none());
    lab.up();
    let (status, _, _) = alice.get("hub/home");
    assert_eq!(status, 200, "alice's sign-in outlives `down` and `up`");
    let again = Session::new(&lab, "bob-again");
    let (status, location) = again.sign_in("bob", "bob-first-pass");
    assert_eq!(
        status, 302,
        "bob's password outlives `down` and `up`: {location}"
    );
    let wrong = Session::new(&lab, "bob-wrong");
    assert_eq!(wrong.sign_in("bob", "alice-first-pass").0, 200);
}

/// On the stand-in NVIDIA host (a second dockerd whose `--gpus` containers start here),
/// with GPU 0 held by another tfimg container: Alice and Bob, each with `gpus: 1`, start
/// their servers from the hub at the same instant and get two different free GPUs, never
/// the held one, each labelled as `tfimg ps --gpus` reads it, with its member.
#[tokio::test]
async fn members_starting_at_once_get_different_free_gpus_and_never_a_held_one() {
    let Some(_engine) = common::engine().await else { return };
    // The hub's images, made on the machine's daemon by a team without GPUs, are copied to
    // the stand-in (which reaches no network to build them).
    let made = Lab::new("hm", &["alice"], &[], "");
    made.up();
    let hub_box = format!("{}-hub", made.team);
    let hub_image = docker(&["inspect", "-f", "{{.Config.Image}}", &hub_box]);
    let settings = docker(&["exec", &hub_box, "cat", "/etc/tfimg-hub/team.json"]);
    let settings: serde_json::Value = serde_json::from_str(&settings).unwrap();
    let member_image = settings["members"]["alice"][0]["image"]
        .as_str()
        .unwrap()
        .to_string();
    drop(made);
    let spec_image = docker(&[
        "images",
        "tfimg/cpu-jupyter",
        "--filter",
        "label=io.tfimg.spec=cpu-jupyter",
        "--format",
        "{{.Repository}}:{{.Tag}}",
    ]);
    let mut images = vec![
        "debian:bullseye-slim",
        "debian:bookworm-slim",
        "tfimg/cpu-headless:2.9.3",
        hub_image.trim(),
        member_image.as_str(),
    ];
    images.extend(spec_image.split_whitespace());
    let Some(gpu) = common::gpu::gpu_engine_with(&images) else {
        return;
    };
    let _turn = common::gpu::gpu_turn();
    let mut lab = Lab::new("hg", &["alice", "bob"], &[], "");
    let text = std::fs::read_to_string(lab.folder.path().join("team.yaml"))
        .unwrap()
        .replace("  - name: alice\n", "  - name: alice\n    gpus: 1\n")
        .replace("  - name: bob\n", "  - name: bob\n    gpus: 1\n");
    std::fs::write(lab.folder.path().join("team.yaml"), text).unwrap();
    lab._guard = TeamGuard(lab.team.clone());
    let on_standin = |args: &[&str]| {
        let data = lab.data.to_str().unwrap();
        let mut env = gpu.env();
        env.push(("XDG_DATA_HOME", data));
        tfimg_with_env(lab.folder.path(), args, &env)
    };
    let held = unique("hg-held");
    let _held_guard = common::DockerGuard::containers(&[&held]).on(&gpu.host);
    let _team_guard = StandinTeamGuard(&gpu, lab.team.clone());
    let run = on_standin(&[
        "run",
        "cpu-headless",
        "-d",
        "--no-build",
        "--gpus",
        "device=0",
        "--name",
        &held,
        "--",
        "sleep",
        "600",
    ]);
    assert_eq!(run.code, 0, "{}", run.tail());

    let up = on_standin(&["up", "team.yaml", "--ca-cert", HOST_CA]);
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.tail());
    for (member, password) in [("alice", "alice-first-pass"), ("bob", "bob-first-pass")] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tfimg"))
            .args(["hub", "passwd", "team.yaml", member])
            .current_dir(lab.folder.path())
            .env("XDG_DATA_HOME", &lab.data)
            .env("DOCKER_HOST", &gpu.host)
            .env("TFIMG_CONFIG", "/dev/null")
            .env("TFIMG_TODAY", TODAY)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
        let set = child.wait_with_output().unwrap();
        assert!(
            set.status.success(),
            "{}",
            String::from_utf8_lossy(&set.stderr)
        );
    }
    let sessions = [
        (Session::new(&lab, "alice"), "alice", "alice-first-pass"),
        (Session::new(&lab, "bob"), "bob", "bob-first-pass"),
    ];
    for (session, name, password) in &sessions {
        assert_eq!(session.sign_in(name, password).0, 302, "{name} signs in");
    }
    // Both press "Start My Server" in the same instant. (The stand-in's bridges forward
    // nothing between containers, its iptables being off, so a server there never
    // answers the hub: what is proven is the container each start creates, with its GPUs.)
    let start = std::sync::Barrier::new(2);
    std::thread::scope(|scope| {
        for (session, name, _) in &sessions {
            let start = &start;
            scope.spawn(move || {
                start.wait();
                let (status, location, _) = session.get(&format!("hub/spawn/{name}"));
                assert_eq!(status, 302, "{name}'s start: {location}");
            });
        }
    });
    common::wait_for(
        "both servers' containers on the stand-in",
        Duration::from_secs(60),
        || {
            ["alice", "bob"].iter().all(|member| {
                !gpu.docker(&[
                    "ps",
                    "-q",
                    "--filter",
                    &format!("name=^{}-{member}$", lab.team),
                ])
                .trim()
                .is_empty()
            })
        },
    );
    let given = |member: &str| {
        let inspected = gpu.inspect(&format!("{}-{member}", lab.team));
        let ids: Vec<String> = serde_json::from_value(
            inspected["HostConfig"]["DeviceRequests"][0]["DeviceIDs"].clone(),
        )
        .unwrap_or_default();
        (ids, inspected["Config"]["Labels"].clone())
    };
    let (alice_ids, alice_labels) = given("alice");
    let (bob_ids, bob_labels) = given("bob");
    assert_eq!(alice_ids.len(), 1, "{alice_ids:?}");
    assert_eq!(bob_ids.len(), 1, "{bob_ids:?}");
    assert_ne!(alice_ids, bob_ids, "two members, two GPUs");
    for ids in [&alice_ids, &bob_ids] {
        assert_ne!(ids[0], "0", "GPU 0 is held: never given");
    }
    assert_eq!(
        alice_labels["io.tfimg.gpus"],
        format!("device={}", alice_ids[0])
    );
    assert_eq!(alice_labels["io.tfimg.member"], "alice");
    assert_eq!(bob_labels["io.tfimg.hub"], lab.team.as_str());
    // `ps --gpus` shows each server with its member.
    let mut env = gpu.env();
    let data = lab.data.to_str().unwrap().to_string();
    env.push(("XDG_DATA_HOME", &data));
    let shown = tfimg_with_env(lab.folder.path(), &["ps", "--gpus", "--json"], &env);
    assert_eq!(shown.code, 0, "{}", shown.tail());
    let view: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    for (member, ids) in [("alice", &alice_ids), ("bob", &bob_ids)] {
        let row = view["containers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["member"] == member)
            .unwrap_or_else(|| panic!("no {member} in {view}"));
        assert_eq!(
            row["gpus"],
            serde_json::json!([ids[0].parse::<u32>().unwrap()]),
            "{row}"
        );
    }
}

/// Removes the team's containers, networks and hub volume on the stand-in.
struct StandinTeamGuard<'a>(&'a common::gpu::GpuEngine, String);

impl Drop for StandinTeamGuard<'_> {
    fn drop(&mut self) {
        let gpu = self.0;
        let label = format!("label=io.tfimg.team={}", self.1);
        for id in gpu
            .docker(&["ps", "-aq", "--filter", &label])
            .split_whitespace()
        {
            gpu.docker(&["rm", "-f", id]);
        }
        for network in gpu
            .docker(&["network", "ls", "-q", "--filter", &label])
            .split_whitespace()
        {
            gpu.docker(&["network", "rm", network]);
        }
        gpu.docker(&["network", "rm", &format!("tfimg-{}", self.1)]);
        gpu.docker(&["volume", "rm", &format!("tfimg-hub-{}", self.1)]);
    }
}

/// `tfimg k8s` of a team with `hub:` and an SSH member beside: Zero to JupyterHub's Helm
/// values (a profile per Jupyter member with her server image and GPU limit, the file's
/// users and admins, nobody signing up, the idle culler) pass the chart's own values
/// schema (4.4.0, merged over its values.yaml as Helm does), and the SSH member's plain
/// manifests pass `kubernetes-validate --strict`. A value the chart does not take is
/// refused by the same check, so it can fail.
/// Runs tfimg's own-profiles `extraConfig` of the Helm values (argv[1], JSON) as the chart's
/// hub does, on
/// KubeSpawner's `profile_list` from `singleuser.profileList`; prints the profiles offered
/// to each of a few users.
const OFFERED: &str = r#"
import json, sys, types
values = json.loads(sys.argv[1])
c = types.SimpleNamespace(KubeSpawner=types.SimpleNamespace(profile_list=values["singleuser"]["profileList"]))
exec(values["hub"]["extraConfig"]["tfimg-own-profiles"], {"c": c})
for name in ["alice", "bob", "carol", "alice-b"]:
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name))
    print(" ".join([name] + [profile["slug"] for profile in c.KubeSpawner.profile_list(spawner)]))
"#;

#[test]
fn the_k8s_export_of_a_hub_team_passes_zero_to_jupyterhub_s_values_schema() {
    let folder = scratch(&[(
        "team.yaml",
        "team: lab\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\nmembers:\n  - name: alice\n    gpus: 1\n    memory: 8g\n    choices: [tf218-cpu-jupyter]\n  - name: bob\n  - name: carol\n    spec: cpu-ssh\nhub:\n  admins: [bob]\nidle:\n  containers: 2h\n",
    )]);
    let out = folder.path().join("out");
    let exported = common::tfimg(
        folder.path(),
        &[
            "k8s",
            "team.yaml",
            "-o",
            "out",
            "--registry",
            "registry.example:5000",
        ],
    );
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    assert!(
        exported
            .stderr
            .contains("lab.hub-values.yaml (Zero to JupyterHub's Helm values"),
        "{}",
        exported.stderr
    );
    let values_path = out.join("lab.hub-values.yaml");
    let values: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&values_path).unwrap()).unwrap();
    let profiles = values["singleuser"]["profileList"].as_array().unwrap();
    assert_eq!(
        profiles
            .iter()
            .map(|p| p["slug"].clone())
            .collect::<Vec<_>>(),
        [
            "alice.cpu-jupyter",
            "alice.tf218-cpu-jupyter",
            "bob.cpu-jupyter"
        ],
        "a profile per spec a member may pick, and carol (SSH) is no hub member"
    );
    assert_eq!(
        profiles[1]["kubespawner_override"]["image"],
        "registry.example:5000/tfimg/hub-member:tf218-cpu-jupyter-2.18.1"
    );
    assert_eq!(
        profiles[1]["kubespawner_override"]["extra_resource_limits"]["nvidia.com/gpu"],
        "1"
    );
    // The chart's hub runs the values' extra configuration after setting the profile list
    // from them: each member is then offered her own profiles only, her spec first.
    let offered = Command::new("python3")
        .arg("-c")
        .arg(OFFERED)
        .arg(serde_json::to_string(&values).unwrap())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&offered.stdout),
        "alice alice.cpu-jupyter alice.tf218-cpu-jupyter\nbob bob.cpu-jupyter\ncarol\nalice-b\n",
        "{}",
        String::from_utf8_lossy(&offered.stderr)
    );
    let alice = &profiles[0]["kubespawner_override"];
    assert_eq!(alice["extra_resource_limits"]["nvidia.com/gpu"], "1");
    assert_eq!(alice["mem_limit"], 8_u64 << 30);
    assert_eq!(
        alice["image"],
        "registry.example:5000/tfimg/hub-member:cpu-jupyter-2.9.3"
    );
    assert_eq!(values["cull"]["timeout"], 7200);

    let validator = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/z2jh/validate.py");
    let validate = |path: &Path| {
        let output = Command::new("python3")
            .arg(&validator)
            .arg(path)
            .output()
            .expect("python3 with jsonschema and PyYAML (scripts/setup-machine)");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr),
        )
    };
    let (valid, said) = validate(&values_path);
    assert!(valid, "{said}");
    // The same check refuses what the chart does not take.
    let broken = folder.path().join("broken.yaml");
    let mut wrong = values.clone();
    wrong["cull"]["timeout"] = serde_json::json!("2h");
    wrong["singleuser"]["storage"]["homeMountPath"] = serde_json::json!(7);
    std::fs::write(&broken, serde_yaml::to_string(&wrong).unwrap()).unwrap();
    let (valid, said) = validate(&broken);
    assert!(!valid, "{said}");
    assert!(
        said.contains("cull.timeout") && said.contains("homeMountPath"),
        "{said}"
    );

    // Carol's plain manifests, beside them.
    let manifests = out.join("lab.yaml");
    let text = std::fs::read_to_string(&manifests).unwrap();
    assert!(
        text.contains("lab-carol") && !text.contains("lab-alice"),
        "{text}"
    );
    common::k8s::assert_valid(&manifests);
}
