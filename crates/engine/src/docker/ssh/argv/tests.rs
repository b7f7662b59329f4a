use std::path::Path;

use super::*;

fn target(user: Option<&str>, port: Option<u16>, socket: Option<&str>) -> SshTarget {
    SshTarget {
        user: user.map(str::to_string),
        host: "gpu-box".to_string(),
        port,
        socket: socket.map(str::to_string),
    }
}

#[test]
fn the_master_puts_tfimg_s_options_first_the_user_s_next_and_defaults_last() {
    let command = SshCommand::parse(Some("ssh -F '/home/me/my config' -i ~/.ssh/lab")).unwrap();
    let args = master_args(
        &command,
        &target(Some("me"), Some(2222), None),
        Path::new("/run/user/1000/tfimg/s-42-0"),
    );
    assert_eq!(
        args.join(" "),
        "-M -S /run/user/1000/tfimg/s-42-0 -N -o ControlPersist=no -o ExitOnForwardFailure=no \
         -T -o ForwardAgent=no -o ForwardX11=no -o PermitLocalCommand=no \
         -F /home/me/my config -i ~/.ssh/lab \
         -o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=15 -o ServerAliveCountMax=3 \
         -l me -p 2222 -- gpu-box"
    );
    assert_eq!(command.program, "ssh");
    assert_eq!(
        args[16], "/home/me/my config",
        "one word, as the shell split it"
    );
}

#[test]
fn a_dial_runs_dial_stdio_through_the_master() {
    let command = SshCommand::default();
    let args = dial_args(&command, &target(None, None, None), Path::new("/tmp/c"));
    assert_eq!(
        args.join(" "),
        "-S /tmp/c -o ControlMaster=no -T -o ForwardAgent=no -o ForwardX11=no -o PermitLocalCommand=no \
         -o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=15 -o ServerAliveCountMax=3 \
         -- gpu-box docker system dial-stdio"
    );
}

#[test]
fn a_program_of_tfimg_s_own_runs_through_the_master_each_word_quoted() {
    let args = program_args(
        &SshCommand::default(),
        &target(Some("me"), Some(2222), None),
        Path::new("/tmp/c"),
        &[
            "nvidia-smi",
            "--query-gpu=index,name",
            "--format=csv,noheader,nounits",
        ],
    );
    assert_eq!(
        args.join(" "),
        "-S /tmp/c -o ControlMaster=no -T -o ForwardAgent=no -o ForwardX11=no -o PermitLocalCommand=no \
         -o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=15 -o ServerAliveCountMax=3 \
         -l me -p 2222 -- gpu-box nvidia-smi '--query-gpu=index,name' '--format=csv,noheader,nounits'"
    );
    let quoted = program_args(
        &SshCommand::default(),
        &target(None, None, None),
        Path::new("/tmp/c"),
        &["nvidia-smi", "$(reboot)"],
    );
    assert_eq!(quoted.last().unwrap(), "nvidia-smi '$(reboot)'");
}

#[test]
fn a_socket_in_the_url_is_quoted_for_the_remote_shell() {
    assert_eq!(
        remote_command(&target(None, None, Some("/run/user/1000/docker.sock"))),
        "docker '--host=unix:///run/user/1000/docker.sock' system dial-stdio"
    );
    assert_eq!(
        remote_command(&target(None, None, Some("/srv/my docker/$(id).sock"))),
        "docker '--host=unix:///srv/my docker/$(id).sock' system dial-stdio"
    );
}

#[test]
fn control_questions_name_the_socket_and_the_target() {
    let command = SshCommand::parse(Some("ssh -F cfg")).unwrap();
    let args = control_args(
        &command,
        &target(Some("me"), None, None),
        Path::new("/tmp/c"),
        ControlOp::Check,
    );
    assert_eq!(args.join(" "), "-S /tmp/c -O check -F cfg -l me -- gpu-box");
    let forward = tfimg_core::plan::tunnels::Forward {
        name: "jupyter".into(),
        local: 8888,
        remote: 49153,
    };
    for (op, word) in [
        (ControlOp::Forward(&forward), "forward"),
        (ControlOp::Cancel(&forward), "cancel"),
    ] {
        let args = control_args(&command, &target(None, Some(22), None), Path::new("/c"), op);
        assert_eq!(
            args.join(" "),
            format!("-S /c -O {word} -L 127.0.0.1:8888:127.0.0.1:49153 -F cfg -p 22 -- gpu-box")
        );
    }
    assert_eq!(parse_check_pid("Master running (pid=4242)\r\n"), Some(4242));
    assert_eq!(
        parse_check_pid("Control socket connect(/tmp/c): No such file"),
        None
    );
}

#[test]
fn a_detached_master_goes_to_the_background_and_ends_with_the_container() {
    let command = SshCommand::parse(Some("ssh -F cfg")).unwrap();
    let args = detached_args(
        &command,
        &target(Some("me"), None, Some("/run/docker.sock")),
        Path::new("/rt/t-1"),
        Path::new("/rt/t-1.log"),
        Some("0123abcd"),
    );
    assert_eq!(
        args.join(" "),
        "-f -E /rt/t-1.log -M -S /rt/t-1 -o ControlPersist=no -o ExitOnForwardFailure=no \
         -T -o ForwardAgent=no -o ForwardX11=no -o PermitLocalCommand=no -F cfg \
         -o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=15 -o ServerAliveCountMax=3 \
         -l me -- gpu-box docker '--host=unix:///run/docker.sock' wait 0123abcd"
    );
    // A container that restarts keeps its tunnel until it is closed.
    let held = detached_args(
        &command,
        &target(None, None, None),
        Path::new("/c"),
        Path::new("/l"),
        None,
    );
    assert_eq!(held[..7].join(" "), "-f -E /l -M -S /c -N");
    assert_eq!(held.last().map(String::as_str), Some("gpu-box"));
}

#[test]
fn the_user_s_words_may_not_take_over_what_tfimg_controls() {
    let table = [
        (
            "ssh -L 8888:localhost:8888",
            "`-L` may not be set: tfimg manages forwards and control sockets itself",
        ),
        (
            "ssh -fN",
            "`-f` may not be set: tfimg waits for its ssh processes itself",
        ),
        (
            "ssh -vN",
            "`-N` may not be set: tfimg runs its own commands on the host",
        ),
        (
            "ssh -S /tmp/x",
            "`-S` may not be set: tfimg manages control sockets itself",
        ),
        (
            "ssh -o ControlPath=/tmp/x",
            "`-o ControlPath` may not be set: tfimg manages control sockets itself",
        ),
        (
            "ssh -oControlMaster=auto",
            "`-o ControlMaster` may not be set: tfimg manages control sockets itself",
        ),
        (
            "ssh -o 'controlpersist 10m'",
            "`-o controlpersist` may not be set: tfimg manages control sockets itself",
        ),
        (
            "ssh -o LocalForward=1:h:2",
            "`-o LocalForward` may not be set: tfimg manages forwards and commands itself",
        ),
        (
            "ssh -t",
            "`-t` may not be set: the Docker API needs a connection without a terminal",
        ),
        (
            "ssh -oForkAfterAuthentication=yes",
            "`-o ForkAfterAuthentication` may not be set (it is `-f`): tfimg waits for its ssh processes itself",
        ),
        (
            "ssh -o 'SessionType none'",
            "`-o SessionType` may not be set (it is `-N`): tfimg runs its own commands on the host",
        ),
        (
            "ssh -n",
            "`-n` may not be set: the Docker API is spoken over ssh's standard input",
        ),
        (
            "ssh -o StdinNull=yes",
            "`-o StdinNull` may not be set (it is `-n`): the Docker API is spoken over ssh's standard input",
        ),
        (
            "ssh -o stdioforward=h:1",
            "`-o stdioforward` may not be set (it is `-W`): tfimg reaches the daemon through `docker system dial-stdio`",
        ),
        (
            "ssh -G",
            "`-G` may not be set: ssh would print its configuration instead of connecting",
        ),
        // Issue 44: every spelling ssh reads an `-o` in.
        (
            "ssh -o=ForkAfterAuthentication=yes",
            "`-o ForkAfterAuthentication` may not be set (it is `-f`): tfimg waits for its ssh processes itself",
        ),
        (
            "ssh -o=StdinNull=yes",
            "`-o StdinNull` may not be set (it is `-n`): the Docker API is spoken over ssh's standard input",
        ),
        (
            "ssh -o ' forkafterauthentication yes'",
            "`-o forkafterauthentication` may not be set (it is `-f`): tfimg waits for its ssh processes itself",
        ),
        (
            "ssh -o '\"StdinNull\" yes'",
            "`-o StdinNull` may not be set (it is `-n`): the Docker API is spoken over ssh's standard input",
        ),
        (
            "ssh -o 'Control\"Master\"=yes'",
            "`-o ControlMaster` may not be set: tfimg manages control sockets itself",
        ),
        (
            "ssh -o ' = ControlPersist 1h'",
            "`-o ControlPersist` may not be set: tfimg manages control sockets itself",
        ),
        (
            "ssh -4o=SessionType=none",
            "`-o SessionType` may not be set (it is `-N`): tfimg runs its own commands on the host",
        ),
        (
            "ssh -o FORKAFTERAUTHENTICATION",
            "`-o FORKAFTERAUTHENTICATION` may not be set (it is `-f`): tfimg waits for its ssh processes itself",
        ),
        (
            "ssh -o RemoteCommand=sh",
            "`-o RemoteCommand` may not be set: tfimg manages forwards and commands itself",
        ),
        (
            "ssh -o ClearAllForwardings=yes",
            "`-o ClearAllForwardings` may not be set: tfimg manages forwards and commands itself",
        ),
        (
            "ssh -nM",
            "`-n` may not be set: the Docker API is spoken over ssh's standard input",
        ),
        (
            "ssh -4Mv",
            "`-M` may not be set: tfimg runs its own master connection",
        ),
        (
            "ssh -vA",
            "`-A` may not be set: tfimg never forwards your agent to a Docker host",
        ),
        (
            "ssh -Y",
            "`-Y` may not be set: tfimg never forwards X11 to a Docker host",
        ),
        (
            "ssh -y",
            "`-y` may not be set: tfimg reads ssh's errors to say what went wrong",
        ),
        (
            "ssh gpu-box",
            "`gpu-box` is not an option: the host and command come from the endpoint",
        ),
        (
            "ssh -- gpu",
            "`--` ends ssh's options: the host comes from the endpoint",
        ),
        (
            "ssh -i 'unclosed",
            "cannot be split into words (an unclosed quote?)",
        ),
    ];
    for (text, expected) in table {
        let error = SshCommand::parse(Some(text)).unwrap_err();
        assert_eq!(
            error.message,
            format!("`TFIMG_SSH_COMMAND={text}`: {expected}"),
            "{text}"
        );
        assert!(!error.hint.is_empty());
    }
}

#[test]
fn options_with_values_are_skipped_whole_and_a_connect_timeout_is_kept() {
    // `-F -N` names a file called `-N`; `-p22` and `-oX=y` carry their value.
    let command = SshCommand::parse(Some(
        "/usr/bin/ssh -4 -F -N -p22 -oConnectTimeout=30 -J jump",
    ))
    .unwrap();
    assert_eq!(command.program, "/usr/bin/ssh");
    assert_eq!(command.connect_timeout, Some(30));
    assert_eq!(command.connect_seconds(), 30);
    assert_eq!(SshCommand::parse(None).unwrap(), SshCommand::default());
    assert_eq!(
        SshCommand::parse(Some("  ")).unwrap(),
        SshCommand::default()
    );
    assert_eq!(SshCommand::default().connect_seconds(), 10);
}

#[test]
fn an_option_s_keyword_is_read_as_openssh_reads_it() {
    // OpenSSH's `process_config_line` on an `-o` value (strdelim in misc.c).
    let table: [(&str, Option<(&str, &str)>); 14] = [
        ("Key=value", Some(("Key", "value"))),
        ("Key value", Some(("Key", "value"))),
        ("Key = value", Some(("Key", "value"))),
        ("Key\t=\tvalue", Some(("Key", "value"))),
        ("Key==value", Some(("Key", "=value"))),
        ("=Key=value", Some(("Key", "value"))),
        ("  Key value  ", Some(("Key", "value"))),
        (" = Key value", Some(("Key", "value"))),
        ("\"Key\" value", Some(("Key", "value"))),
        // The quote is taken out and the keyword ends at the next one.
        ("K\"e\"y=value", Some(("Ke", "y=value"))),
        ("Key", Some(("Key", ""))),
        // ssh reads no keyword, and sets nothing.
        ("==Key=value", None),
        ("\"Key value", None),
        ("#Key value", None),
    ];
    for (line, expected) in table {
        let read = config_keyword(line);
        assert_eq!(
            read.as_ref().map(|(key, rest)| (key.as_str(), *rest)),
            expected,
            "{line}"
        );
    }
    assert_eq!(config_keyword(""), None);
    assert_eq!(config_keyword("   "), None);
}

#[test]
fn the_first_connect_timeout_counts_as_for_ssh() {
    let command = SshCommand::parse(Some(
        "ssh -o ConnectTimeout=30 -o=ConnectTimeout=5 -o 'connecttimeout 7'",
    ))
    .unwrap();
    assert_eq!(command.connect_timeout, Some(30));
    let command = SshCommand::parse(Some("ssh -o=ConnectTimeout=5")).unwrap();
    assert_eq!(command.connect_timeout, Some(5));
}
