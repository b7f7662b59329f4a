//! The stand-in NVIDIA host (`scripts/gpu-standin`): a second dockerd, beside the machine's
//! own, on whose socket `--gpus` containers start although this machine has no GPU. No GPU
//! work happens: each container only sees the ids it was given in NVIDIA_VISIBLE_DEVICES,
//! and the toolkit's prestart hook is a stand-in that records the container's OCI state.
//! With `tests/fixtures/nvidia/standin/` first on tfimg's PATH, tfimg's host checks see
//! four H100s (driver 580) and the toolkit's hook.
//!
//! `gpu_engine()` gives tests the stand-in: started when it is missing (`scripts/test`
//! starts it once for the whole run), with the images tests need copied from the
//! machine's daemon once per machine (its data-root persists). While a test process uses
//! it, it holds a shared lease (flock); at exit, the last process out stops it if tests
//! started it. Needs root, as dockerd does.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Where the stand-in answers (the script's defaults).
pub const GPU_HOST: &str = "unix:///run/tfimg-gpu/docker.sock";
/// One JSON line per container start: the OCI state the stand-in hook received.
pub const HOOK_LOG: &str = "/run/tfimg-gpu/hook.log";
const LEASE: &str = "/run/tfimg-gpu.lease";

/// The images every stand-in test may run: the base (build keys need it) and the CPU
/// image that trains for real.
pub const STANDIN_IMAGES: &[&str] = &["debian:bullseye-slim", "tfimg/cpu-headless:2.9.3"];

/// The stand-in daemon and the environment that makes tfimg use it.
pub struct GpuEngine {
    /// `DOCKER_HOST` for tfimg and the docker CLI.
    pub host: String,
    /// PATH with the stand-in `nvidia-smi` and hook first.
    pub path: String,
}

impl GpuEngine {
    /// DOCKER_HOST and PATH for `tfimg_with_env`.
    pub fn env(&self) -> Vec<(&str, &str)> {
        vec![
            ("DOCKER_HOST", self.host.as_str()),
            ("PATH", self.path.as_str()),
        ]
    }

    /// The docker CLI's stdout against the stand-in (empty when it fails).
    pub fn docker(&self, args: &[&str]) -> String {
        super::docker_at(Some(&self.host), args)
    }

    /// `docker inspect NAME` on the stand-in: the container's facts (its GPU request,
    /// labels, mounts, id).
    pub fn inspect(&self, name: &str) -> serde_json::Value {
        let text = self.docker(&["inspect", name]);
        let parsed: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("inspect {name}: {text}"));
        parsed[0].clone()
    }

    /// Panics unless the running stand-in uses this checkout's programs (its dockerd
    /// found the hook on a PATH starting with this checkout's `standin_bin()`): tests that
    /// need what this hook does (nvidia-smi put into `--gpus` containers) say so instead
    /// of failing obscurely while another checkout's stand-in runs.
    pub fn assert_this_checkout_s_hook(&self) {
        let pid = std::fs::read_to_string("/run/tfimg-gpu/dockerd.pid").unwrap_or_default();
        let environ = std::fs::read(format!("/proc/{}/environ", pid.trim())).unwrap_or_default();
        let environ = String::from_utf8_lossy(&environ);
        let path = environ
            .split('\0')
            .find_map(|entry| entry.strip_prefix("PATH="))
            .unwrap_or_default();
        let ours = standin_bin().display().to_string();
        assert!(
            path.split(':').next() == Some(ours.as_str()),
            "the stand-in NVIDIA host runs another checkout's hook (its PATH starts `{}`, not `{ours}`); once no test uses it, `scripts/gpu-standin stop` and run again",
            path.split(':').next().unwrap_or_default()
        );
    }
}

/// Whether the stand-in daemon ran the toolkit's prestart hook for the container `id`
/// (a line of `HOOK_LOG` names it).
pub fn hook_ran_for(id: &str) -> bool {
    let hooks = std::fs::read_to_string(HOOK_LOG).unwrap_or_default();
    hooks
        .lines()
        .any(|line| line.contains(&format!("\"id\":\"{id}\"")))
}

/// The folder of the stand-in programs (`nvidia-smi`, `nvidia-container-runtime-hook`).
pub fn standin_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nvidia/standin")
}

/// PATH with the stand-in programs first.
pub fn standin_path() -> String {
    format!(
        "{}:{}",
        standin_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-standin")
}

/// The stand-in with `STANDIN_IMAGES`; `None` only when a developer without root opted out
/// of engine tests (TFIMG_SKIP_ENGINE_TESTS=1, never under CI=true).
pub fn gpu_engine() -> Option<GpuEngine> {
    gpu_engine_with(STANDIN_IMAGES)
}

/// The stand-in with `images` copied from the machine's daemon where it lacks them.
pub fn gpu_engine_with(images: &[&str]) -> Option<GpuEngine> {
    if tfimg_testing::host::current_ids() != Some((0, 0)) {
        let ci = std::env::var("CI").is_ok_and(|value| value == "true");
        let opted_out = std::env::var("TFIMG_SKIP_ENGINE_TESTS").is_ok_and(|value| value == "1");
        assert!(
            opted_out && !ci,
            "the stand-in NVIDIA host is a second dockerd and needs root (or TFIMG_SKIP_ENGINE_TESTS=1)"
        );
        eprintln!("skipping: the stand-in NVIDIA host needs root");
        return None;
    }
    static STARTED: OnceLock<Result<(), String>> = OnceLock::new();
    STARTED
        .get_or_init(start_with_lease)
        .as_ref()
        .unwrap_or_else(|error| panic!("{error}"));
    // One copy at a time in this process (the script also locks across processes).
    static COPYING: Mutex<()> = Mutex::new(());
    let _copying = COPYING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let loaded = Command::new(script())
        .arg("load")
        .args(images)
        .output()
        .expect("scripts/gpu-standin runs");
    assert!(
        loaded.status.success(),
        "scripts/gpu-standin load {images:?}: {}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    Some(GpuEngine {
        host: GPU_HOST.to_string(),
        path: standin_path(),
    })
}

/// Takes this process's shared lease (waiting while another process stops the stand-in),
/// starts the stand-in unless it answers, and arranges the stop at exit.
fn start_with_lease() -> Result<(), String> {
    let lease = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(LEASE)
        .map_err(|error| format!("{LEASE}: {error}"))?;
    use std::os::fd::IntoRawFd;
    let fd = lease.into_raw_fd();
    // SAFETY: flock on a descriptor this process owns; it stays open until exit.
    if unsafe { libc::flock(fd, libc::LOCK_SH) } != 0 {
        return Err(format!(
            "flock {LEASE}: {}",
            std::io::Error::last_os_error()
        ));
    }
    LEASE_FD.store(fd, std::sync::atomic::Ordering::SeqCst);
    let started = Command::new(script())
        .args(["start", "--owner", "tests"])
        .output()
        .map_err(|error| format!("scripts/gpu-standin: {error}"))?;
    if !started.status.success() {
        return Err(format!(
            "scripts/gpu-standin start: {}",
            String::from_utf8_lossy(&started.stderr)
        ));
    }
    // SAFETY: registers a plain function; it runs once, at process exit.
    unsafe { libc::atexit(stop_at_exit) };
    Ok(())
}

static LEASE_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// At exit: gives up the lease, then stops the stand-in if tests started it and no other
/// process holds a lease (the script decides; `scripts/test`'s own start is left to it).
extern "C" fn stop_at_exit() {
    let fd = LEASE_FD.swap(-1, std::sync::atomic::Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: the descriptor opened in `start_with_lease`, closed once.
        unsafe { libc::close(fd) };
    }
    let _ = Command::new(script())
        .args(["stop", "--if-owner", "tests"])
        .stdout(std::process::Stdio::null())
        .status();
}

/// The stand-in's GPUs to this test alone among the tests of its binary that hold GPUs
/// there: tfimg refuses GPUs another of its containers holds, and a GPU image's default
/// takes only free ones, so such tests must not overlap (test binaries run one at a time).
pub fn gpu_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
