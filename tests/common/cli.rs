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

/// A port nothing listens on at the moment (the kernel's choice for 127.0.0.1:0).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
