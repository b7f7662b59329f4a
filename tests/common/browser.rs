//! Headless Chromium driven over the DevTools protocol, for tests that act in a page as
//! the page's own scripts would (set a cookie, call `fetch`) and read what it holds.
//!
//! The protocol runs over `--remote-debugging-pipe`: Chromium reads JSON commands from its
//! file descriptor 3 and writes replies and events to 4, each message ending in a NUL byte.
//! No port is opened and no WebSocket client is needed. Each browser has a fresh profile
//! (cookies and all) of its own, removed with it.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The longest a command may wait for its reply (a hang catcher).
const REPLY_LIMIT: Duration = Duration::from_secs(60);

pub struct Browser {
    child: Child,
    commands: std::io::PipeWriter,
    messages: Receiver<Value>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

/// One tab, attached to its DevTools session.
pub struct Tab {
    session: String,
}

impl Browser {
    /// Chromium with the flags that work here, a fresh profile, and `extra` flags (such as
    /// `--ignore-certificate-errors-spki-list=...`).
    pub fn launch(extra: &[String]) -> Browser {
        let profile = tempfile::tempdir().expect("a profile folder");
        let (to_browser, commands) = std::io::pipe().expect("a pipe");
        let (replies, from_browser) = std::io::pipe().expect("a pipe");
        let (read_fd, write_fd) = (to_browser.as_raw_fd(), from_browser.as_raw_fd());
        let mut command = Command::new("chromium");
        command
            .env("HOME", profile.path())
            .env("XDG_CONFIG_HOME", profile.path().join("config"))
            .env("XDG_CACHE_HOME", profile.path().join("cache"))
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
                &format!("--user-data-dir={}", profile.path().join("data").display()),
            ])
            .args(extra)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: between fork and exec only dup and dup2 run (async-signal-safe). The
        // pipes are first copied above 9, so that neither end already sits on 3 or 4 (a
        // dup2 onto itself would keep close-on-exec).
        unsafe {
            command.pre_exec(move || {
                let read = libc::fcntl(read_fd, libc::F_DUPFD, 10);
                let write = libc::fcntl(write_fd, libc::F_DUPFD, 10);
                if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("chromium starts");
        drop((to_browser, from_browser));
        let (sender, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut replies = replies;
            let mut pending = Vec::new();
            let mut chunk = [0u8; 65536];
            while let Ok(read) = replies.read(&mut chunk) {
                if read == 0 {
                    break;
                }
                pending.extend_from_slice(&chunk[..read]);
                while let Some(end) = pending.iter().position(|byte| *byte == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    let parsed = serde_json::from_slice(&message[..end]).expect("a JSON message");
                    if sender.send(parsed).is_err() {
                        return;
                    }
                }
            }
        });
        Browser {
            child,
            commands,
            messages,
            next_id: 0,
            _profile: profile,
        }
    }

    /// Sends `method` (in `tab`'s session, or to the browser) and waits for its result.
    pub fn call(&mut self, tab: Option<&Tab>, method: &str, params: Value) -> Value {
        self.request(tab, method, params)
            .unwrap_or_else(|error| panic!("{method} failed: {error}"))
    }

    /// `call`, with the protocol's error as an `Err`.
    fn request(&mut self, tab: Option<&Tab>, method: &str, params: Value) -> Result<Value, Value> {
        self.request_within(tab, method, params, REPLY_LIMIT)
            .unwrap_or_else(|| panic!("no reply to {method} in {REPLY_LIMIT:?}"))
    }

    /// `request`, with `None` when no reply came within `limit` (a later reply to it is
    /// passed over as any other's is).
    fn request_within(
        &mut self,
        tab: Option<&Tab>,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Option<Result<Value, Value>> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(tab) = tab {
            message["sessionId"] = json!(tab.session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .unwrap_or_else(|error| panic!("chromium takes {method}: {error}"));
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(reply) if reply["id"] == id => {
                    return Some(match reply.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(reply["result"].clone()),
                    });
                }
                // An event, or the reply to an earlier command: not this one's.
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("chromium ended before {method}"),
            }
        }
    }

    /// A new tab on about:blank.
    pub fn tab(&mut self) -> Tab {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        Tab {
            session: attached["sessionId"].as_str().unwrap().to_string(),
        }
    }

    /// Opens `url` in `tab`, as typing it in the address bar does; returns once the new
    /// document is there (Chromium's error text when it could not be loaded).
    pub fn open(&mut self, tab: &Tab, url: &str) {
        // Chromium drops a navigation under way when the machine's network interfaces
        // change (`net::ERR_NETWORK_CHANGED`), as they do whenever a test beside this one
        // makes or removes a Docker network: that navigation is made again. A navigation
        // can also stall with no reply at all (seen once in a fresh-clone CI, a lab page
        // through the gateway, for 60 s): after 20 s it is stopped and made again.
        let mut navigated = self.navigate(tab, url);
        for _ in 0..5 {
            if navigated["errorText"] != "net::ERR_NETWORK_CHANGED" {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
            navigated = self.navigate(tab, url);
        }
        assert!(
            navigated.get("errorText").is_none(),
            "{url}: {}",
            navigated["errorText"]
        );
        self.wait_until(
            tab,
            "document.readyState === 'complete'",
            Duration::from_secs(60),
        );
    }

    /// `Page.navigate` to `url`, stopped and made again while no reply comes in 20 s (at
    /// most 4 tries); its result.
    fn navigate(&mut self, tab: &Tab, url: &str) -> Value {
        for _ in 0..3 {
            let limit = Duration::from_secs(20);
            match self.request_within(Some(tab), "Page.navigate", json!({"url": url}), limit) {
                Some(reply) => {
                    return reply.unwrap_or_else(|error| panic!("Page.navigate failed: {error}"))
                }
                None => {
                    eprintln!("no reply to Page.navigate of {url} in {limit:?}: stopping it");
                    self.call(Some(tab), "Page.stopLoading", json!({}));
                }
            }
        }
        self.call(Some(tab), "Page.navigate", json!({"url": url}))
    }

    /// The value of `expression` run in `tab`'s page, as its own scripts run (a promise is
    /// awaited); the page's exception fails the test.
    pub fn evaluate(&mut self, tab: &Tab, expression: &str) -> Value {
        self.try_evaluate(tab, expression)
            .unwrap_or_else(|error| panic!("{error}\nin: {expression}"))
    }

    /// `evaluate`, with the page's exception (or a context gone with its document) as an
    /// `Err`.
    fn try_evaluate(&mut self, tab: &Tab, expression: &str) -> Result<Value, String> {
        let result = self
            .request(
                Some(tab),
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .map_err(|error| format!("chromium refused the evaluation: {error}"))?;
        match result.get("exceptionDetails") {
            Some(thrown) => Err(format!("the page threw: {thrown}")),
            None => Ok(result["result"]["value"].clone()),
        }
    }

    /// Clicks the middle of the first element `selector` finds, as a mouse does (pressed,
    /// then released: JupyterLab's toolbar buttons act on the press).
    pub fn click(&mut self, tab: &Tab, selector: &str) {
        let selector_text = serde_json::to_string(selector).unwrap();
        let point = self.evaluate(
            tab,
            &format!(
                "(() => {{ const box = document.querySelector({selector_text}).getBoundingClientRect(); return [box.x + box.width / 2, box.y + box.height / 2]; }})()"
            ),
        );
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                Some(tab),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": point[0], "y": point[1], "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Types `text` where the page's focus is, as a keyboard would.
    pub fn type_text(&mut self, tab: &Tab, text: &str) {
        self.call(Some(tab), "Input.insertText", json!({"text": text}));
    }

    /// Evaluates `expression` until it is truthy (a hang catcher of `limit`); its value.
    pub fn wait_until(&mut self, tab: &Tab, expression: &str, limit: Duration) -> Value {
        self.poll(tab, expression, limit)
            .unwrap_or_else(|failure| panic!("{failure}"))
    }

    /// `wait_until` for a page that loads an application (JupyterLab fetches dozens of
    /// files after its page): when a test beside this one makes or removes a Docker
    /// network, Chromium drops the fetches under way (`net::ERR_NETWORK_CHANGED`) and the
    /// application never starts, so a page not ready after 45 s is loaded again, until
    /// `limit` passes.
    pub fn wait_until_started(&mut self, tab: &Tab, expression: &str, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.poll(tab, expression, left.min(Duration::from_secs(45))) {
                Ok(value) => return value,
                Err(failure) if left <= Duration::from_secs(45) => panic!("{failure}"),
                Err(failure) => {
                    eprintln!("loading the page again: {failure}");
                    self.call(Some(tab), "Page.reload", json!({}));
                }
            }
        }
    }

    /// `wait_until`, with what the page showed last as an `Err` when `limit` passes.
    pub fn poll(&mut self, tab: &Tab, expression: &str, limit: Duration) -> Result<Value, String> {
        let deadline = Instant::now() + limit;
        loop {
            // A document that is replaced meanwhile (a redirect) answers with an error: the
            // next try runs in the new one.
            let tried = self.try_evaluate(tab, &format!("(async () => {expression})()"));
            let value = tried.clone().unwrap_or(Value::Null);
            let truthy = !matches!(value, Value::Null | Value::Bool(false))
                && value != json!("")
                && value != json!(0);
            if truthy {
                return Ok(value);
            }
            if Instant::now() > deadline {
                let location = self.try_evaluate(tab, "location.href");
                return Err(format!(
                    "gave up waiting for `{expression}` at {location:?} (last: {tried:?})"
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
