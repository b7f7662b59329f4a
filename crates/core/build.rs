//! Lists the model server's Python package for `render::files` (`serving_modules.rs`:
//! every `.py` file of `src/render/templates/tfimg_serving/`, sorted, each with its text),
//! and builds the model server's compiled front (`crates/serving-front`) for the serving images:
//! release, glibc linked statically (a static-pie that runs on the 2.9 line's Debian 11,
//! glibc 2.31, as on newer ones), in `target/serving-front`, and puts it in OUT_DIR for
//! `render::files` to carry (`include_bytes!`). Source paths are remapped, so the bytes do
//! not depend on where the repository is checked out (they are part of an image's key).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    list_serving_modules(&manifest);
    let root = manifest
        .join("../..")
        .canonicalize()
        .expect("the workspace's root");
    let front = root.join("crates/serving-front");
    for watched in ["src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", front.join(watched).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        root.join("Cargo.lock").display()
    );
    let host = std::env::var("HOST").expect("cargo sets it");
    // The images are Linux on this machine's architecture; the front is built for it.
    let target = if host.ends_with("-linux-gnu") {
        host
    } else {
        panic!("the model server's front is built on Linux with glibc; this is {host}")
    };
    let target_dir = root.join("target/serving-front");
    let flags = format!(
        "-C target-feature=+crt-static --remap-path-prefix={}=/tfimg --remap-path-prefix={}=/cargo",
        root.display(),
        home_cargo().display()
    );
    let variable = format!(
        "CARGO_TARGET_{}_RUSTFLAGS",
        target.to_uppercase().replace('-', "_")
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--release",
            "--package",
            "tfimg-serving-front",
            "--target",
            &target,
        ])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .env(variable, flags)
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols");
    // What the outer build sets for its own crates is not the front's (clippy, coverage,
    // another target's flags).
    for variable in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
        "CARGO_BUILD_TARGET",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        command.env_remove(variable);
    }
    let status = command.status().expect("cargo runs");
    assert!(status.success(), "building the model server's front failed");
    let built = target_dir.join(&target).join("release/tfimg-serving-front");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::copy(&built, out.join("tfimg-serving-front")).expect("the front's binary");
}

fn list_serving_modules(manifest: &std::path::Path) {
    let folder = manifest.join("src/render/templates/tfimg_serving");
    println!("cargo:rerun-if-changed={}", folder.display());
    let mut modules: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("the serving package's folder")
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "py"))
        .collect();
    modules.sort();
    let mut listed = String::from("&[\n");
    for path in modules {
        let name = path.file_name().expect("a file name").to_string_lossy();
        listed.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    listed.push_str("]\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("serving_modules.rs"), listed).expect("serving_modules.rs");
}

fn home_cargo() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from("/root/.cargo"))
}
