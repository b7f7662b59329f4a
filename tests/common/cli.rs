//! Command lines the tests hand tfimg: a run of the warm built-in images, and a free port
//! for a `-p LOCAL:CONTAINER` mapping.

use super::HOST_CA;

/// `run SPEC OPTIONS... --no-build --name NAME --ca-cert HOST_CA [-- COMMAND...]`: a run of
/// the image the warm cache holds (the machine's CA keeps the spec's build key the cache's).
/// No `--` when `command` is empty: the image's own command runs.
pub fn run_args<'a>(
    spec: &'a str,
    options: &[&'a str],
    name: &'a str,
    command: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["run", spec];
    args.extend(options);
    args.extend(["--no-build", "--name", name, "--ca-cert", HOST_CA]);
    if !command.is_empty() {
        args.push("--");
        args.extend(command);
    }
    args
}

/// A port nothing listens on at the moment, picked at random below the kernel's ephemeral
/// range: the kernel's choice for port 0 comes from that range, and so does Docker's for a
/// published port 0, so a port from it could be handed to another test's container
/// between this call and the test's use of it (`hub.rs` lost its hub's port that way once,
/// "port is already allocated"). Where the range leaves no room below it, the kernel's
/// choice.
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    const LOWEST: u16 = 10_000;
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    if ephemeral > LOWEST + 1_000 {
        for _ in 0..200 {
            let mut random = std::collections::hash_map::RandomState::new().build_hasher();
            random.write_u32(std::process::id());
            let port = LOWEST + (random.finish() % u64::from(ephemeral - LOWEST)) as u16;
            if std::net::TcpListener::bind(("0.0.0.0", port)).is_ok() {
                return port;
            }
        }
    }
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
